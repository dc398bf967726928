#!/usr/bin/env python
"""Speed and memory of the whole IMDB trigram job, nbsvm beside its peers, in one run.

Peers: Vowpal Wabbit, fastText (settings chosen on IMDB's training split by
``pipelines/tune_fasttext.py``), scikit-learn.

Every system reads the 25k training reviews, learns on trigrams for 10 epochs, and scores
the 25k test reviews, each run as its own process, timed from start to exit, with peak
RSS from the operating system (``os.wait4``). One warm-up run, then ``--runs`` measured
runs; the tables give medians and the spread (min-max). Results go to ``results/bench.md``
and ``results/bench.csv``.

Peers get the reviews already tokenized by nbsvm's tokenizer (lowercased, punctuation
split): that work is not in their timings; nbsvm's timings include its own tokenizing.

    python pipelines/bench.py                  # nbsvm, Vowpal Wabbit, scikit-learn 2^24/2^26
    python pipelines/bench.py --mesnil         # also Mesnil-style NBSVM (exact vocabulary)
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


sys.path.insert(0, str(ROOT))
from _harness import (  # noqa: E402
    PY,
    accuracy_of,
    positive,
    run_measured,
    spread,
    stage,
    wait_for_compile_ahead,
)
from _peers import nbsvm_train, prepare  # noqa: E402
from _settled import SETTLED  # noqa: E402  (settles the shared libraries first)
from bench_report import command_lines, report_lines  # noqa: E402
from bench_systems import systems  # noqa: E402

STAGES = (
    "lexicon+cache seconds",
    "training seconds",
    "test eval seconds",
    "save seconds",
    "vectorize seconds",
    "eval seconds",
)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--runs", type=positive, default=3)
    ap.add_argument("--mesnil", action="store_true")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / "bench"))
    return ap.parse_args(argv)


def show_configuration(args, argv) -> None:
    print("configuration:")
    for k, v in vars(args).items():
        print(f"  {k} = {v}")
    print("reproduce with:\n  " + shlex.join([PY, "pipelines/bench.py"] + (argv or sys.argv[1:])))


def measure(todo: list[dict], runs: int) -> dict:
    """A warm-up of every system, then ``runs`` measured rounds, every system once per
    round: a change in the machine's load (a shared virtual machine drifts) then touches
    every system alike, not one block."""
    results = {}
    for system in todo:
        print(f"\n== {system['name']}")
        for cmd in system["cmds"]:
            print("   $ " + shlex.join(cmd))
        run_measured(system["cmds"])  # warm-up
        print("   warm-up done", flush=True)
        results[system["name"]] = []
    for i in range(runs):
        print(f"\n== round {i + 1} of {runs}")
        for system in todo:
            r = run_measured(system["cmds"])
            r["accuracy"] = accuracy_of(system, r)
            results[system["name"]].append(r)
            print(
                f"   {system['name']}: {r['seconds']:.2f} s, {r['peak_mb']:.0f} MB, "
                f"accuracy {r['accuracy']:.2f}%",
                flush=True,
            )
    return results


def summary(todo: list[dict], results: dict):
    """A row a system (medians and ranges, nbsvm's stages), time and RSS relative to VW."""
    import pandas as pd

    rows = []
    for system in todo:
        runs = results[system["name"]]
        row = dict(
            system=system["name"],
            accuracy=statistics.median(r["accuracy"] for r in runs),
            seconds_median=statistics.median(r["seconds"] for r in runs),
            seconds_min=min(r["seconds"] for r in runs),
            seconds_max=max(r["seconds"] for r in runs),
            peak_mb_median=statistics.median(r["peak_mb"] for r in runs),
            peak_mb_min=min(r["peak_mb"] for r in runs),
            peak_mb_max=max(r["peak_mb"] for r in runs),
        )
        for label in STAGES:
            vals = [stage(r["output"], label) for r in runs]
            if all(v is not None for v in vals):
                row[label.replace(" seconds", "_s")] = statistics.median(vals)
        rows.append(row)
    table = pd.DataFrame(rows)
    vw = table[table.system.str.startswith("Vowpal")].iloc[0]
    table["time_vs_vw"] = table.seconds_median / vw.seconds_median
    table["rss_vs_vw"] = table.peak_mb_median / vw.peak_mb_median
    return table


def cold_runs(files, work: Path, runs: int) -> list[dict]:
    """The first run after installing (numba compiles the kernels), ``runs`` times."""
    cold = []
    for i in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            cold.append(run_measured(systems(files, work, False)[0]["cmds"], env=env))
            wait_for_compile_ahead()  # (it stops within a tiny model: its parent ended)
    return cold


def scaling_runs(files, work: Path, runs: int) -> list[dict]:
    """nbsvm (threads 1, min_df 1) on IMDB train given 1, 2 and 4 times."""
    scaling = []
    for factor in (1, 2, 4):
        options = ("--n-bits", "24", "--threads", "1", "--min-df", "1")
        train = [files["train"]["raw"]] * factor
        cmd = nbsvm_train(train, files["test"]["raw"], work / "scale.npz", *options)
        measured = [run_measured([cmd]) for _ in range(runs)]
        scaling.append(
            dict(
                train_docs=25000 * factor,
                seconds=statistics.median(r["seconds"] for r in measured),
                seconds_spread=spread([r["seconds"] for r in measured]),
                peak_mb=statistics.median(r["peak_mb"] for r in measured),
                peak_mb_spread=spread([r["peak_mb"] for r in measured], "{:.0f}"),
                accuracy=float(re.search(r"accuracy: ([0-9.]+)%", measured[0]["output"]).group(1)),
            )
        )
        print(f"scaling x{factor}: {scaling[-1]}", flush=True)
    return scaling


def main(argv=None):
    args = parse_args(argv)
    show_configuration(args, argv)
    import pandas as pd

    work = Path(args.work)
    files = prepare(Path(args.data), work)
    print(
        f"dropped the page-cache copies of {SETTLED} shared libraries (see settle_shared_libraries)"
    )
    todo = systems(files, work, args.mesnil)
    results = measure(todo, args.runs)
    table = summary(todo, results)
    cold = cold_runs(files, work, args.runs)
    scaling = [] if args.no_scaling else scaling_runs(files, work, args.runs)
    lines = report_lines(args.runs, table, results, cold, scaling)
    lines += command_lines(systems(files, work, args.mesnil))
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    (out / "bench.md").write_text("\n".join(lines))
    table.to_csv(out / "bench.csv", index=False)
    if scaling:
        pd.DataFrame(scaling).to_csv(out / "bench_scaling.csv", index=False)
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
