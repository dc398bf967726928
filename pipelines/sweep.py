#!/usr/bin/env python
"""One setting on every shape of text ``make robustness`` builds, each value beside a
reference value: the evidence for a default (``results/<name>.md``).

Each shape of ``pipelines/_shapes.py`` (the same seeded folds) is trained with
``NBSVMClassifier(PARAM=V, calibrate=None, **set)`` for every ``--values`` V, the other
settings at their defaults, and scored by accuracy on its test folds (mean over folds). The
table gives each value's accuracy minus the reference value's. It scores test folds, so it
can reject a default, not tune one: a value is the default for a kind of task only if it
holds on every shape of that kind.

    python pipelines/sweep.py --param alpha --values 1,0.5,0.25,0.1 --name smoothing
    python pipelines/sweep.py --param lam --values 1e-4,3e-5,1e-5,3e-6 --set loss=softmax \\
        --shapes 20ng-subjects,blitzer-domain,20ng --name softmax_lambda
    [--reference V (default: the first value)] [--seed 0] [--quick] [--out results]
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


def _value(text: str):
    """``loss=softmax``'s right side: a number where it reads as one, None for ``None``,
    True and False for themselves."""
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return None if text == "None" else text


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


#: what each parameter's values are read as (a name not here is refused)
def _number(text: str):
    """A number, or None (the default: alpha and lambda follow the task)."""
    return None if text == "None" else float(text)


PARAMS = {
    "alpha": _number,
    "lam": _number,
    "eta0": float,
    "epochs": int,
    "ngrams": int,
    "min_df": int,
    "learner": _value,
    "loss": _value,
    "norm": _value,
}


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--param", default="alpha", help=f"the setting: {', '.join(PARAMS)}")
    ap.add_argument("--values", default="1,0.5,0.25,0.1", help="comma list of its values")
    ap.add_argument("--reference", default=None, help="the value compared against (first)")
    ap.add_argument("--set", action="append", default=[], help="another setting, NAME=VALUE")
    ap.add_argument("--shapes", default=",".join(_shapes.SHAPES), help="comma list of shapes")
    ap.add_argument("--name", default=None, help="results/<name>.md and .csv (sweep_PARAM)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    ap.add_argument("--out", default=None, help="folder of the results (results/)")
    args = ap.parse_args(argv)
    if args.param not in PARAMS:
        ap.error(f"unknown --param {args.param!r}; allowed: {', '.join(PARAMS)}")
    args.shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in args.shapes if s not in _shapes.SHAPES]
    if unknown or not args.shapes:
        ap.error(f"unknown shapes {unknown}; allowed: {', '.join(_shapes.SHAPES)}")
    try:
        args.values = [PARAMS[args.param](v) for v in args.values.split(",") if v]
        ref = args.values[0] if args.reference is None else PARAMS[args.param](args.reference)
    except (ValueError, IndexError):
        ap.error(f"--values and --reference take {PARAMS[args.param].__name__} values")
    args.values = list(dict.fromkeys(args.values))  # 1e-4 and 0.0001 are one value
    if ref not in args.values:
        args.values.insert(0, ref)  # the reference every other value is measured against
    args.reference = ref
    if any("=" not in s for s in args.set):
        ap.error(f"--set takes NAME=VALUE, got {args.set}")
    args.set = {k: _value(v) for k, v in (s.split("=", 1) for s in args.set)}
    mine = {"seed", "calibrate", args.param} & set(args.set)
    if mine:
        ap.error(
            f"--set cannot give {', '.join(sorted(mine))}: --seed, calibrate=None and "
            "--param are the script's own"
        )
    args.name = args.name or f"sweep_{args.param}"
    return args


def shape_rows(name: str, param: str, values: list, fixed: dict, seed: int, quick: bool):
    """Every value on one shape's folds: its accuracy (mean over folds) and seconds."""
    shape = _shapes.SHAPES[name]
    folds = shape.build(seed, quick)
    rows = []
    for value in values:
        t0, accs = time.perf_counter(), []
        for train_x, train_y, test_x, test_y in folds:
            settings = {**fixed, param: value}
            clf = NBSVMClassifier(calibrate=None, seed=seed, **settings).fit(train_x, train_y)
            accs.append(100.0 * np.mean(np.asarray(clf.predict(test_x)) == np.asarray(test_y)))
        rows.append(
            {
                "shape": name,
                "kind": shape.kind,
                "classes": len(set(folds[0][1])),
                param: _shown(value),  # as written: None (the default) is a value here
                "accuracy": float(np.mean(accs)),
                "folds": len(folds),
                "seconds": time.perf_counter() - t0,
            }
        )
        print(f"{name:16s} {param} {_shown(value):<7s} {rows[-1]['accuracy']:6.2f}", flush=True)
    return rows


def differences(frame: pd.DataFrame, args) -> pd.DataFrame:
    """By shape: the reference's accuracy and each other value's minus it (points)."""
    param, ref = args.param, args.reference
    base = frame[frame[param] == _shown(ref)].set_index("shape").accuracy
    frame[f"vs_{param}_{_shown(ref)}"] = frame.accuracy - frame["shape"].map(base)
    wide = frame.pivot(index="shape", columns=param, values=f"vs_{param}_{_shown(ref)}")
    wide = wide.loc[args.shapes, [_shown(v) for v in args.values if v != ref]]
    wide.columns = [f"{param} {v}" for v in wide.columns]
    wide.insert(0, f"{param} {_shown(ref)} accuracy", base.loc[args.shapes])
    by_shape = frame.groupby("shape")
    wide.insert(0, "classes", by_shape.classes.first().loc[args.shapes])
    wide.insert(0, "kind", by_shape.kind.first().loc[args.shapes])
    return wide


def main(argv=None):
    args = parse_args(argv)
    config = start(
        args.name,
        {k: getattr(args, k) for k in ("param", "values", "reference", "set", "shapes", "seed")}
        | {"quick": args.quick},
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    frame = pd.DataFrame(
        [
            row
            for name in args.shapes
            for row in shape_rows(name, args.param, args.values, args.set, args.seed, args.quick)
        ]
    )
    wide = differences(frame, args)
    what = f"{args.param} {_shown(args.reference)}"
    print(f"\naccuracy minus {what}'s (points)\n" + wide.round(2).to_string())
    fixed = "".join(f", {k}={v!r}" for k, v in args.set.items())
    write_results(
        args.name,
        frame,
        title=f"{args.param} on every shape of text, beside {what}",
        notes=[
            "Accuracy on the test folds of `make robustness`'s shapes with "
            f"`NBSVMClassifier({args.param}=V, calibrate=None{fixed})`, the other settings "
            f"at their defaults; below, each value minus {what} (points). It can reject a "
            "default, never tune one."
        ],
        extra_tables={f"Minus {what}, by shape": wide.round(2).reset_index()},
        config=config,
        out=args.out,
    )


if __name__ == "__main__":
    main()
