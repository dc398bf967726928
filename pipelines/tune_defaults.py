#!/usr/bin/env python
"""Choose NBSVM's default hyper-parameters on a validation split of IMDB *train* (never test).

The 25k training reviews are split deterministically (seeded permutation, ``--seed``) into
20k for fitting and 5k for validation. Every candidate is fitted on the 20k and scored on
the 5k (``beta`` is varied at scoring time, it needs no refit). Prints a ranked table and
writes it to ``results/tune_defaults.csv``.

    python pipelines/tune_defaults.py --ngrams 3 --n-bits 24
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _harness import positive  # noqa: E402

from nbsvm import NBSVMClassifier  # noqa: E402
from nbsvm.evaluation.evaluate import evaluate_documents  # noqa: E402
from nbsvm.io.folders import read_aclimdb  # noqa: E402


def parse_args(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--ngrams", type=int, default=3)
    ap.add_argument("--n-bits", type=int, default=24)
    ap.add_argument("--min-df", type=int, default=2)
    ap.add_argument("--epochs", type=positive, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-val", type=positive, default=5000)
    ap.add_argument("--losses", default="log,hinge")
    ap.add_argument("--optimizers", default="sgd,adagrad")
    ap.add_argument("--eta0s", default="0.01,0.05,0.2")
    ap.add_argument("--lambdas", default="0,1e-7,1e-6,1e-5,1e-4")
    ap.add_argument("--betas", default="1,0.9,0.75,0.5")
    ap.add_argument("--output", default=str(ROOT / "results" / "tune_defaults.csv"))
    args = ap.parse_args(argv)
    return args


def candidate_rows(args, loss, opt, eta0, l2, fit, held) -> list[dict]:
    """One candidate trained on ``fit``: a row for each beta, scored on ``held``."""
    rows = []
    clf = NBSVMClassifier(
        ngrams=args.ngrams,
        n_bits=args.n_bits,
        min_df=args.min_df,
        loss=loss,
        optimizer=opt,
        eta0=eta0,
        lam=l2,
        epochs=args.epochs,
        seed=args.seed,
    )
    t0 = time.perf_counter()
    clf.fit_documents(iter(fit))
    secs = time.perf_counter() - t0
    for beta in (float(b) for b in args.betas.split(",")):
        acc = evaluate_documents(clf.set_params(beta=beta), iter(held))["accuracy"]
        rows.append(
            dict(
                loss=loss,
                optimizer=opt,
                eta0=eta0,
                lam=l2,
                beta=beta,
                val_accuracy=acc,
                fit_s=secs,
            )
        )
    best = max(rows[-len(args.betas.split(",")) :], key=lambda x: x["val_accuracy"])
    print(
        f"{loss:6s} {opt:8s} eta0={eta0:<5} lambda={l2:<6g} best beta={best['beta']:<4} "
        f"val={best['val_accuracy']:.4f} ({secs:.1f}s)",
        flush=True,
    )
    return rows


def main(argv=None):
    args = parse_args(argv)
    print("configuration:", vars(args))
    print("reproduce with:\n  python pipelines/tune_defaults.py " + " ".join(sys.argv[1:]))

    docs = list(read_aclimdb(Path(args.data) / "train"))  # 25k records of a few KB
    val = set(np.random.default_rng(args.seed).permutation(len(docs))[: args.n_val].tolist())
    fit = [d for i, d in enumerate(docs) if i not in val]
    held = [d for i, d in enumerate(docs) if i in val]
    grid = dict(
        loss=args.losses.split(","),
        optimizer=args.optimizers.split(","),
        eta0=[float(x) for x in args.eta0s.split(",")],
        lam=[float(x) for x in args.lambdas.split(",")],
    )
    rows = []
    for loss, opt, eta0, l2 in itertools.product(*grid.values()):
        if opt == "sgd" and l2 * eta0 >= 1:
            continue
        rows += candidate_rows(args, loss, opt, eta0, l2, fit, held)
    table = pd.DataFrame(rows).sort_values("val_accuracy", ascending=False)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.output, index=False)
    print(table.head(15).to_string(index=False))


if __name__ == "__main__":
    main()
