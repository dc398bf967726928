#!/usr/bin/env python
"""IMDB trigram job on Dask: `nbsvm train --dask-local 1` and `--dask-local 2` against the
single-machine run, wall time (median of runs) and accuracy; the training set in 2 shards.

    .venv/bin/python pipelines/bench_dask.py [--runs 3]

Run by `make bench` after pipelines/bench.py (which writes the label<TAB>text files it uses).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pipelines._harness import positive  # noqa: E402
from pipelines._report import ROOT, start, write_results  # noqa: E402

BENCH = ROOT / "results" / "tmp" / "bench"
NBSVM = Path(sys.executable).parent / "nbsvm"


def shards(train: Path, n: int) -> list[Path]:
    # bytes split on \n only: str.splitlines would also split on \x0b, \x1c, U+2028, ...
    lines = [line + b"\n" for line in train.read_bytes().split(b"\n") if line]
    out = []
    for k in range(n):
        p = BENCH / f"shard{k}.txt"
        p.write_bytes(b"".join(lines[k::n]))
        out.append(p)
    return out


def run(args: list) -> tuple[float, float]:
    t0 = time.perf_counter()
    r = subprocess.run([str(NBSVM), *map(str, args)], capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"failed: {args}\n{r.stderr}")
    return seconds, float(re.search(r"accuracy: ([\d.]+)%", r.stdout).group(1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive, default=3)
    ap.add_argument("--shards", type=positive, default=2)
    args = ap.parse_args(argv)
    config = start("bench_dask", vars(args), [__file__, *(argv or sys.argv[1:])])
    train, test = BENCH / "train.txt", BENCH / "test.txt"
    if not train.is_file():
        raise SystemExit(f"{train} is missing: run `make bench` (pipelines/bench.py) first")
    parts = shards(train, args.shards)
    common = ["--test", test, "-o", BENCH / "dask.npz", "--n-bits", "24", "-q"]
    systems = {
        "single machine (no Dask)": ["train", train, *common],
        "--dask-local 1": ["train", *parts, "--dask-local", "1", *common],
        "--dask-local 2": ["train", *parts, "--dask-local", "2", *common],
    }
    times = {name: [] for name in systems}
    accs = {}
    for name, cmd in systems.items():  # warm-up: kernels compiled, files cached
        run(cmd)
    for r in range(args.runs):
        for name, cmd in systems.items():
            seconds, acc = run(cmd)
            times[name].append(seconds)
            accs[name] = acc
            print(f"   round {r + 1}: {name}: {seconds:.2f} s, accuracy {acc:.2f}%", flush=True)
    rows = [
        {
            "run": name,
            "accuracy %": accs[name],
            "seconds": round(statistics.median(t), 2),
            "min-max": f"{min(t):.2f}-{max(t):.2f}",
        }
        for name, t in times.items()
    ]
    frame = pd.DataFrame(rows)
    base = frame.loc[frame.run == "--dask-local 1", "seconds"].iloc[0]
    frame["time / 1 worker"] = (frame.seconds / base).round(2)
    write_results(
        "bench_dask",
        frame,
        title="IMDB trigrams on Dask: 1 and 2 local workers against one process",
        notes=[
            f"Median of {args.runs} runs after a warm-up, wall seconds of the "
            f"whole `nbsvm train ... --test` job including starting the "
            f"LocalCluster; training set in {args.shards} shards; 2-core machine."
        ],
        config=config,
    )


if __name__ == "__main__":
    main()
