#!/usr/bin/env python
"""NB smoothing on every shape of text ``make robustness`` builds: the evidence for the
default ``alpha`` (1 with two classes, 0.5 with more; ``results/smoothing.md``).

Each shape of ``pipelines/_shapes.py`` (the same seeded folds) is trained with
``NBSVMClassifier(alpha=A, calibrate=None)`` for every ``--alphas`` value, the other settings
at their defaults, and scored by accuracy on its test folds (mean over folds). The table
gives each value's accuracy minus alpha 1's. It scores test folds, so it can reject a
default, not tune one: a value is the default for a kind of task only if it holds on every
shape of that kind.

    python pipelines/smoothing.py [--shapes 20ng,subj] [--alphas 1,0.5,0.25,0.1] [--seed 0]
                                  [--quick] [--out results]
"""

from __future__ import annotations

import sys
import time

import _shapes
import numpy as np
import pandas as pd
from _harness import script_parser
from _report import start, write_results

from nbsvm import NBSVMClassifier


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--shapes", default=",".join(_shapes.SHAPES), help="comma list of shapes")
    ap.add_argument("--alphas", default="1,0.5,0.25,0.1", help="comma list of alpha values")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    ap.add_argument("--out", default=None, help="folder of smoothing.md/.csv (results/)")
    args = ap.parse_args(argv)
    args.shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in args.shapes if s not in _shapes.SHAPES]
    if unknown or not args.shapes:
        ap.error(f"unknown shapes {unknown}; allowed: {', '.join(_shapes.SHAPES)}")
    try:
        args.alphas = [float(a) for a in args.alphas.split(",") if a]
    except ValueError:
        ap.error(f"--alphas takes numbers, got {args.alphas!r}")
    if 1.0 not in args.alphas:
        args.alphas.insert(0, 1.0)  # the reference every other value is measured against
    return args


def shape_rows(name: str, alphas: list[float], seed: int, quick: bool) -> list[dict]:
    """Every alpha on one shape's folds: its accuracy (mean over folds) and seconds."""
    shape = _shapes.SHAPES[name]
    folds = shape.build(seed, quick)
    rows = []
    for alpha in alphas:
        t0, accs = time.perf_counter(), []
        for train_x, train_y, test_x, test_y in folds:
            clf = NBSVMClassifier(alpha=alpha, calibrate=None, seed=seed).fit(train_x, train_y)
            accs.append(100.0 * np.mean(np.asarray(clf.predict(test_x)) == np.asarray(test_y)))
        rows.append(
            {
                "shape": name,
                "kind": shape.kind,
                "classes": len(set(folds[0][1])),
                "alpha": alpha,
                "accuracy": float(np.mean(accs)),
                "folds": len(folds),
                "seconds": time.perf_counter() - t0,
            }
        )
        print(f"{name:16s} alpha {alpha:<5g} {rows[-1]['accuracy']:6.2f}", flush=True)
    return rows


def main(argv=None):
    args = parse_args(argv)
    config = start(
        "smoothing",
        {"shapes": args.shapes, "alphas": args.alphas, "seed": args.seed, "quick": args.quick},
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    frame = pd.DataFrame(
        [
            row
            for name in args.shapes
            for row in shape_rows(name, args.alphas, args.seed, args.quick)
        ]
    )
    base = frame[frame.alpha == 1.0].set_index("shape").accuracy
    frame["vs_alpha_1"] = frame.accuracy - frame["shape"].map(base)
    wide = frame.pivot(index="shape", columns="alpha", values="vs_alpha_1")
    wide = wide.loc[args.shapes, [a for a in args.alphas if a != 1.0]]
    wide.columns = [f"alpha {a:g}" for a in wide.columns]
    wide.insert(0, "alpha 1 accuracy", base.loc[args.shapes])
    wide.insert(0, "classes", frame.groupby("shape").classes.first().loc[args.shapes])
    wide.insert(0, "kind", frame.groupby("shape").kind.first().loc[args.shapes])
    print("\naccuracy minus alpha 1's (points)\n" + wide.round(2).to_string())
    write_results(
        "smoothing",
        frame,
        title="NB smoothing (alpha) on every shape of text, beside alpha 1",
        notes=[
            "Accuracy on the test folds of `make robustness`'s shapes with "
            "`NBSVMClassifier(alpha=A, calibrate=None)`, the other settings at their "
            "defaults; below, each value minus alpha 1 (points). It can reject a default, "
            "never tune one."
        ],
        extra_tables={"Minus alpha 1, by shape": wide.round(2).reset_index()},
        config=config,
        out=args.out,
    )


if __name__ == "__main__":
    main()
