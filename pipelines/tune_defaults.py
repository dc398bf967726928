#!/usr/bin/env python
"""Choose NBSVM's default hyper-parameters on a validation split of IMDB *train* (never test).

The 25k training reviews are split deterministically (seeded permutation, ``--seed``) into
20k for fitting and 5k for validation. Each split is hashed once into a feature cache; the
lexicon comes from the 20k part; every candidate then trains from the cache and is scored on
the validation cache. Prints a ranked table and writes it to ``results/tune_defaults.csv``.

    python pipelines/tune_defaults.py --ngrams 3 --n-bits 24
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from nbsvm.features import CacheWriter, hash_batches, iter_epoch_order  # noqa: E402
from nbsvm.io.readers import read_aclimdb  # noqa: E402
from nbsvm.lexicon import NBLexicon  # noqa: E402
from nbsvm.online import _kernels  # noqa: E402
from nbsvm.online.sgd import LinearSGD  # noqa: E402
from nbsvm.text.hashing import Hasher  # noqa: E402


def build_caches(data: Path, hasher: Hasher, folder: Path, seed: int, n_val: int):
    docs = list(read_aclimdb(data / "train"))          # 25k short records: metadata only
    rng = np.random.default_rng(seed)
    val = set(rng.permutation(len(docs))[:n_val].tolist())
    fit_w, val_w = CacheWriter(folder / "fit", hasher), CacheWriter(folder / "val", hasher)
    for writer, keep in ((fit_w, lambda i: i not in val), (val_w, lambda i: i in val)):
        for c in ("neg", "pos"):
            writer.code_of(c)
        chosen = (d for i, d in enumerate(docs) if keep(i))
        for batch in hash_batches(chosen, hasher):
            writer.add(batch)
    return fit_w.close(), val_w.close()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--ngrams", type=int, default=3)
    ap.add_argument("--n-bits", type=int, default=24)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-val", type=int, default=5000)
    ap.add_argument("--losses", default="log,hinge")
    ap.add_argument("--optimizers", default="sgd,adagrad")
    ap.add_argument("--eta0s", default="0.01,0.05,0.2")
    ap.add_argument("--lambdas", default="0,1e-7,1e-6,1e-5,1e-4")
    ap.add_argument("--output", default=str(ROOT / "results" / "tune_defaults.csv"))
    args = ap.parse_args(argv)
    print("configuration:", vars(args))
    print("reproduce with:\n  python pipelines/tune_defaults.py " + " ".join(sys.argv[1:]))

    hasher = Hasher(ngrams=args.ngrams, n_bits=args.n_bits)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        fit, val = build_caches(Path(args.data), hasher, Path(tmp), args.seed, args.n_val)
        print(f"hashed {fit.n_docs} + {val.n_docs} documents in {time.perf_counter() - t0:.1f}s")
        lex = NBLexicon(hasher)
        lex._init_state()
        for c in fit.labels:
            lex.code_of(c)
        lex.add_batch(np.asarray(fit.ids), np.asarray(fit.offsets), np.asarray(fit.codes))
        r = lex.ratios()[0]
        n_pos, n_neg = lex.class_counts_[1], lex.class_counts_[0]
        yv = np.asarray(val.codes) == 1
        nb = np.empty(val.n_docs)
        _kernels._table_sums(np.asarray(val.ids), np.asarray(val.offsets), r, nb)
        nb += np.log(n_pos / n_neg)
        print(f"NB alone: validation accuracy {np.mean((nb > 0) == yv):.4f}")

        grid = dict(loss=args.losses.split(","), optimizer=args.optimizers.split(","),
                    eta0=[float(x) for x in args.eta0s.split(",")],
                    l2=[float(x) for x in args.lambdas.split(",")])
        rows = []
        for loss, opt, eta0, l2 in itertools.product(*grid.values()):
            if opt == "sgd" and l2 * eta0 >= 1:
                continue
            m = LinearSGD(1 << args.n_bits, loss=loss, optimizer=opt, eta0=eta0, l2=l2)
            rng = np.random.default_rng(args.seed)
            t1 = time.perf_counter()
            for _ in range(args.epochs):
                for order in iter_epoch_order(fit.n_docs, rng):
                    m.epoch(fit.ids, fit.offsets, fit.codes, order, [r], positive=[1])
            secs = time.perf_counter() - t1
            w, b = m.coef()[0], m.intercept()[0]
            svm = np.empty(val.n_docs)
            _kernels._scores(np.asarray(val.ids), np.asarray(val.offsets), r, w, svm)
            svm += b
            for beta in (1.0, 0.9, 0.75, 0.5):
                score = beta * svm + (1 - beta) * nb
                rows.append(dict(loss=loss, optimizer=opt, eta0=eta0, l2=l2, beta=beta,
                                 val_accuracy=float(np.mean((score > 0) == yv)), train_s=secs))
            best = max(rows[-4:], key=lambda x: x["val_accuracy"])
            print(f"{loss:6s} {opt:8s} eta0={eta0:<5} lambda={l2:<6g} best beta={best['beta']:<4} "
                  f"val={best['val_accuracy']:.4f} ({secs:.1f}s)", flush=True)
    table = pd.DataFrame(rows).sort_values("val_accuracy", ascending=False)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.output, index=False)
    print(table.head(15).to_string(index=False))


if __name__ == "__main__":
    main()
