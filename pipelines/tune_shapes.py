#!/usr/bin/env python
"""nbsvm tune's default grid on every shape of text: the setting it chooses (on the
training part only) beside the defaults, both trained on the whole training part and
scored on the test part (``results/tune_shapes.md``).

A default grid earns its place when its choice is not worse than the defaults on any shape:
the grid must hold the defaults (``default`` values), so that the one-standard-error rule
can keep them. The shapes are ``pipelines/_shapes.py``'s, first fold each (seeded).
"""

from __future__ import annotations

import json
import sys
import time

import _shapes
import numpy as np
import pandas as pd
from _harness import script_parser
from _report import ROOT, start, write_results

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from nbsvm import NBSVMClassifier  # noqa: E402
from nbsvm.config import DEFAULT_GRID  # noqa: E402
from nbsvm.workflows.tune import model_params, tune  # noqa: E402


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--shapes", default=",".join(_shapes.SHAPES), help="comma-separated")
    ap.add_argument("--quick", action="store_true", help="tiny folds (the smoke test)")
    ap.add_argument("--out", default=None, help="folder of the results (default: results/)")
    ap.add_argument("--grid", type=json.loads, default=DEFAULT_GRID, help="a grid as JSON")
    ap.add_argument("--name", default="tune_shapes", help="results/NAME.md and .csv")
    return ap.parse_args(argv)


def accuracy(params: dict, fold, seed: int) -> float:
    train_x, train_y, test_x, test_y = fold
    clf = NBSVMClassifier(**dict(params, seed=seed)).fit(train_x, train_y)
    return float(np.mean(clf.predict(test_x) == np.asarray(test_y, dtype=object)))


def shape_row(name: str, grid: dict, seed: int, quick: bool) -> dict:
    """The first fold of shape ``name``: tune's choice and the defaults, on its test part."""
    fold = _shapes.SHAPES[name].build(seed, quick)[0]
    t0 = time.perf_counter()
    result = tune(list(zip(fold[0], fold[1])), grid, {"seed": seed}, seed=seed)
    seconds = time.perf_counter() - t0
    defaults = accuracy({}, fold, seed)
    chosen = defaults if result.reason.startswith("the defaults") else None
    if chosen is None:
        chosen = accuracy(model_params(result.chosen), fold, seed)
    row = {
        "shape": name,
        "kind": _shapes.SHAPES[name].kind,
        "defaults %": round(100 * defaults, 2),
        "tune's choice %": round(100 * chosen, 2),
        "difference": round(100 * (chosen - defaults), 2),
        "chosen": ", ".join(f"{k} {v}" for k, v in result.chosen.items()),
        "why": result.reason.split(":")[0],
        "tune seconds": round(seconds, 1),
    }
    print(row, flush=True)
    return row


def main(argv=None):
    args = parse_args(argv)
    config = start(args.name, vars(args), [__file__, *(argv or sys.argv[1:])])
    rows = [shape_row(name, args.grid, args.seed, args.quick) for name in args.shapes.split(",")]
    table = pd.DataFrame(rows)
    worst = table.loc[table["difference"].idxmin()]
    write_results(
        args.name,
        table,
        title="nbsvm tune's default grid on every shape: its choice beside the defaults",
        notes=[
            f"Grid: {args.grid} ('default': what nbsvm train uses without the option); "
            f"a 20% validation split of each shape's first training fold, seed {args.seed}, "
            "the 1-SE rule. Test accuracy of the choice and of the defaults, each trained on "
            "the whole training fold.",
            f"Largest loss against the defaults: {worst['difference']} points "
            f"({worst['shape']}); mean difference {table['difference'].mean():+.2f} points "
            f"over {len(table)} shapes.",
        ],
        config=config,
        out=args.out,
    )
    return table


if __name__ == "__main__":
    main()
