#!/usr/bin/env python
"""Fixed settings on Wang & Manning's small corpora, beside the defaults: would a setting
make a better default for small corpora? (``results/wang_manning_variants.md``)

Each variant is ``NBSVMClassifier(**variant)`` trained and scored with the protocols of
``pipelines/wang_manning.py`` (the same folds and seed), reporting the mean accuracy, its
standard error (over folds for the 10-fold corpora, binomial for the 2-fold pairs) and the
errors per fold. It scores test folds, so it can only reject a candidate default, never
choose one: a change is worth making only if it holds on every corpus.

    python pipelines/wang_manning_variants.py [--datasets AthR,XGraph,BbCrypt,Subj,MPQA]
        [--variants '{}' '{"alpha": 0.1, "beta": 0.5}'] [--seed 0] [--name NAME]
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pandas as pd
from _harness import script_parser
from _report import shared_datasets, start, write_results
from wang_manning import dataset_names, splits, std_error

from nbsvm import NBSVMClassifier

SMALL = "AthR,XGraph,BbCrypt,Subj,MPQA"  # under SMALL_CORPUS_NGRAMS n-grams per fold


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--datasets", default=SMALL)
    ap.add_argument(
        "--variants",
        nargs="+",
        default=["{}", '{"alpha": 0.1}', '{"beta": 0.5}', '{"alpha": 0.1, "beta": 0.5}'],
        help="JSON objects of NBSVMClassifier parameters ({}: the defaults)",
    )
    ap.add_argument(
        "--name", default="wang_manning_variants", help="results/NAME.md and .csv to write"
    )
    args = ap.parse_args(argv)
    names = dataset_names(ap, args.datasets)
    try:
        variants = [json.loads(v) for v in args.variants]
    except json.JSONDecodeError as e:
        ap.error(f"a variant is not JSON: {e}")
    return args, names, variants


def variant_row(name: str, variant: dict, folds, seed: int) -> dict:
    """One variant over a dataset's folds: its row (mean accuracy, standard error, the
    errors of each fold)."""
    n_test = sum(len(test[1]) for _, test in folds)
    t0 = time.perf_counter()
    accs, errors = [], []
    for train, test in folds:
        clf = NBSVMClassifier(seed=seed, **variant).fit(train[0], train[1])
        right = clf.predict(test[0]) == np.asarray(test[1])
        accs.append(100.0 * right.mean())
        errors.append(int((~right).sum()))
    acc = float(np.mean(accs))
    se = std_error(accs, acc, n_test)
    label = json.dumps(variant) if variant else "defaults"
    row = {
        "dataset": name,
        "settings": label,
        "accuracy": acc,
        "std_error": se,
        "errors_per_fold": " ".join(map(str, errors)),
        "seconds": time.perf_counter() - t0,
    }
    print(f"{name:8s} {label:34s} {acc:6.2f} +- {se:.2f}  errors {errors}", flush=True)
    return row


def main(argv=None):
    args, names, variants = parse_args(argv)
    root = shared_datasets()
    config = start(
        "wang_manning_variants",
        {"datasets": names, "variants": variants, "seed": args.seed, "data": root},
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    rows = []
    for name in names:
        folds = splits(name, root, args.seed)
        rows += [variant_row(name, variant, folds, args.seed) for variant in variants]
    frame = pd.DataFrame(rows)
    base = frame[frame.settings == "defaults"].set_index("dataset").accuracy
    if len(base):
        frame["vs_defaults"] = frame.accuracy - frame.dataset.map(base)
        wide = frame.pivot(index="settings", columns="dataset", values="vs_defaults")[names]
        print("\naccuracy minus the defaults' (points)\n" + wide.round(2).to_string())
    write_results(
        args.name,
        frame,
        title="Fixed settings on Wang & Manning's small corpora, beside the defaults",
        config=config,
        notes=[
            "Scored on the test folds of pipelines/wang_manning.py's protocols: "
            "a variant can be rejected as a default here, never chosen."
        ],
    )


if __name__ == "__main__":
    main()
