#!/usr/bin/env python
"""Would log-count (tf) feature values beat binarized ones? Evidence for what ``--auto``
searches (``results/feature_values.md``).

nbsvm hashes each document to the set of its n-grams (binarized), as Wang & Manning do;
``--auto`` searches NB-weighted against plain binary values and unit rows against none, but
not counts. This script measures, with scikit-learn on the same corpora, folds and seed as
``pipelines/wang_manning.py``, the one question that would justify carrying counts through
hashing, the cache and every kernel: with everything else fixed, do ``log(1 + tf)`` values
score higher than 0/1 values? Word uni+bigrams (``CountVectorizer(ngram_range=(1, 2))``),
each row scaled to unit length, ``LinearSVC(C=1)`` (an L2-SVM, Wang & Manning's SVM-bi); for
two classes also NB-scaled (``r = log((p / |p|_1) / (q / |q|_1))`` with alpha 1, their
NBSVM features before interpolation). It scores test folds, so it can only say whether the
variant is worth adding to the search, never choose settings.

    python pipelines/feature_values.py [--datasets RT-2k,Subj,...] [--seed 0]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from _harness import script_parser
from _report import shared_datasets, start, write_results
from wang_manning import DATASETS, dataset_names, splits


def _features(train_texts, test_texts):
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b|[^\w\s]")
    return vec.fit_transform(train_texts).astype(np.float64), vec.transform(test_texts).astype(
        np.float64
    )


def _values(X, kind: str):
    X = X.copy()
    if kind == "binary":
        X.data[:] = 1.0
    else:  # log-count
        X.data = np.log1p(X.data)
    return X


def _nb_ratio(X, y, alpha: float = 1.0):
    """Wang & Manning's r over binarized counts of the two classes (y: 0/1)."""
    B = X.copy()
    B.data[:] = 1.0
    p = np.asarray(B[y == 1].sum(axis=0)).ravel() + alpha
    q = np.asarray(B[y == 0].sum(axis=0)).ravel() + alpha
    return np.log((p / p.sum()) / (q / q.sum()))


def score(train, test, kind: str, nb: bool) -> float:
    from scipy.sparse import diags
    from sklearn.preprocessing import normalize
    from sklearn.svm import LinearSVC

    Xtr, Xte = _features(train[0], test[0])
    Xtr, Xte = _values(Xtr, kind), _values(Xte, kind)
    ytr = np.asarray(train[1])
    if nb:
        classes = sorted(set(ytr))
        r = _nb_ratio(Xtr, (ytr == classes[1]).astype(int))
        Xtr, Xte = Xtr @ diags(r), Xte @ diags(r)
    Xtr, Xte = normalize(Xtr), normalize(Xte)
    model = LinearSVC(C=1.0).fit(Xtr, ytr)
    return 100.0 * float(np.mean(model.predict(Xte) == np.asarray(test[1])))


def main(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    args = ap.parse_args(argv)
    names = dataset_names(ap, args.datasets)
    root = shared_datasets()
    config = start(
        "feature_values",
        {"datasets": names, "seed": args.seed, "data": root},
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    rows = []
    for name in names:
        folds = splits(name, root, args.seed)
        two = len(set(folds[0][0][1])) == 2
        for nb in (False, True) if two else (False,):
            accs = {}
            for kind in ("binary", "log-count"):
                t0 = time.perf_counter()
                accs[kind] = [score(tr, te, kind, nb) for tr, te in folds]
                print(
                    f"{name:8s} {'NB ' if nb else ''}{kind:10s} {np.mean(accs[kind]):.2f} "
                    f"({time.perf_counter() - t0:.1f} s)",
                    flush=True,
                )
            gain = np.subtract(accs["log-count"], accs["binary"])
            # paired over the folds (the 10-fold corpora); one split or two halves: the gain
            se = float(np.std(gain, ddof=1) / np.sqrt(len(gain))) if len(gain) > 2 else np.nan
            rows.append(
                {
                    "dataset": name,
                    "features": "NB-scaled" if nb else "plain",
                    "binary": float(np.mean(accs["binary"])),
                    "log_count": float(np.mean(accs["log-count"])),
                    "gain": float(np.mean(gain)),
                    "gain_se": se,
                    "folds": len(folds),
                }
            )
    frame = pd.DataFrame(rows)
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    write_results(
        "feature_values",
        frame,
        "Binarized against log-count feature values (scikit-learn, same folds)",
        notes=[
            "Word uni+bigrams, unit rows, LinearSVC(C=1); NB-scaled: Wang & "
            "Manning's r (alpha 1) before the unit scaling. gain: log-count "
            "minus binary, points (gain_se: paired over the 10 folds)."
        ],
        config=config,
    )


if __name__ == "__main__":
    main()
