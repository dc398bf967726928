"""Thread scaling of the IMDB job: `nbsvm train --threads T` for T = 1, 2, 4, ... on the same
training and test files, whole process, medians of several rounds (every thread count once a
round, so that a drift of the machine touches them alike).

The epochs run Hogwild! AdaGrad on T threads; the hashing pass has its reader and hasher
threads whatever T is, and the test set is hashed beside the training. The table gives,
per T, the wall time of the process, the trainer's own stages (hashing pass, epochs), the
epochs' speed-up over one thread, peak RSS and test accuracy (T >= 2 varies in the last
digits: Hogwild! updates race).

    python pipelines/threads.py --train data/aclImdb/train --test data/aclImdb/test \\
        [--threads 1,2,4,8,16] [--runs 3]
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from pathlib import Path

import pandas as pd
from _harness import PY, positive, run_measured, script_parser
from _report import ROOT, start, write_results


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--train", default=str(ROOT / "data" / "aclImdb" / "train"))
    ap.add_argument("--test", default=str(ROOT / "data" / "aclImdb" / "test"))
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--runs", type=positive, default=3)
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / "threads"))
    ap.add_argument("--out", default=None, help="results folder (default results/)")
    ap.add_argument("--name", default="threads")
    return ap.parse_args(argv)


def train_command(args, threads: int) -> list[str]:
    model = Path(args.work) / f"imdb-t{threads}.npz"
    return [PY, "-m", "nbsvm", "train", args.train, "--test", args.test, "--threads",
            str(threads), "--seed", str(args.seed), "-o", str(model), "--json"]


def one_run(args, threads: int) -> dict:
    got = run_measured([train_command(args, threads)])
    report = json.loads(got["output"][got["output"].index("{"):])
    timings = report["timings"]  # with --test: the report, the training timings in it
    return dict(threads=threads, wall_s=got["seconds"], peak_mb=got["peak_mb"],
                hashing_s=timings["lexicon_s"], epochs_s=timings["train_s"],
                accuracy=100 * report["accuracy"])


def summary(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows).groupby("threads").median().reset_index()
    one = frame.loc[frame["threads"] == frame["threads"].min(), "epochs_s"].iloc[0]
    frame["epochs_speedup"] = one / frame["epochs_s"]
    return frame[["threads", "wall_s", "hashing_s", "epochs_s", "epochs_speedup", "peak_mb",
                  "accuracy"]]


def main(argv=None):
    args = parse_args(argv)
    counts = [int(t) for t in args.threads.split(",")]
    config = start(args.name, dict(vars(args), cpus=os.cpu_count(), machine=platform.node(),
                                   python=sys.version.split()[0]),
                   [__file__, *(argv if argv is not None else sys.argv[1:])])
    Path(args.work).mkdir(parents=True, exist_ok=True)
    run_measured([train_command(args, 1)[:-1]])  # warm-up: kernels compiled or loaded
    rows = []
    for r in range(args.runs):
        for threads in counts:
            rows.append(one_run(args, threads))
            print(f"round {r + 1}, {threads} threads: {rows[-1]}", flush=True)
    frame = summary(rows)
    print(frame.to_string(index=False))
    spread = {t: statistics.pstdev(x["wall_s"] for x in rows if x["threads"] == t)
              for t in counts}
    write_results(args.name, frame, f"Thread scaling of the IMDB job ({os.cpu_count()} CPUs)",
                  notes=[f"Medians of {args.runs} rounds; wall-time spread (pstdev) by threads: "
                         + ", ".join(f"{t}: {s:.2f} s" for t, s in spread.items())],
                  config=config, out=Path(args.out) if args.out else None)


if __name__ == "__main__":
    main()
