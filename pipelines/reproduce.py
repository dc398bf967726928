#!/usr/bin/env python
"""Every reproduction in one go (``make reproduce``), each part timed.

Runs, one after the other and each as its own process: ``imdb`` (lexicon, train, eval of
the main configuration), ``imdb_table``, ``blitzer``, ``rcv1`` and ``iris_ogd``. Their
output is shown as it comes; at the end a table of the wall time and exit status of each
part is printed and written to ``results/reproduce.md`` / ``.csv``. A part that fails does
not stop the others; the exit status is then 1.

    python pipelines/reproduce.py                      # all parts
    python pipelines/reproduce.py --only blitzer,iris_ogd
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from _report import ROOT, start, write_results

PARTS = {
    "imdb": ["pipelines/imdb.py"],
    "imdb_table": ["pipelines/imdb_table.py"],
    "blitzer": ["pipelines/blitzer.py"],
    "rcv1": ["pipelines/rcv1.py"],
    "iris_ogd": ["pipelines/iris_ogd.py"],
}


def run_part(name: str, args: list[str]) -> dict:
    """Run one part's script with this interpreter; its output goes straight through."""
    print(f"\n######## {name}: {' '.join(args)}", flush=True)
    t0 = time.perf_counter()
    code = subprocess.call([sys.executable, *args], cwd=ROOT)
    seconds = time.perf_counter() - t0
    print(f"######## {name}: exit status {code}, {seconds:.1f} s", flush=True)
    return dict(
        part=name, command=" ".join([".venv/bin/python", *args]), seconds=seconds, exit_status=code
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--only", default=",".join(PARTS), help=f"comma-separated parts among {', '.join(PARTS)}"
    )
    args = ap.parse_args(argv)
    chosen = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in PARTS]
    if unknown:
        ap.error(f"unknown part(s) {', '.join(unknown)}; allowed: {', '.join(PARTS)}")
    config = start("reproduce", dict(parts=chosen))
    import pandas as pd

    rows = [run_part(name, PARTS[name]) for name in chosen]
    frame = pd.DataFrame(rows)
    total = float(frame.seconds.sum())
    print("\n" + frame.to_string(index=False))
    print(f"total: {total:.1f} s ({total / 60:.1f} min)")
    write_results(
        "reproduce",
        frame,
        title="make reproduce: every reproduction, timed",
        notes=[
            f"Wall time of each part on this 2-core machine; total {total:.1f} s "
            f"({total / 60:.1f} min). Each part writes its own results/<part>.md."
        ],
        config=config,
    )
    return 0 if (frame.exit_status == 0).all() else 1


if __name__ == "__main__":
    sys.exit(main())
