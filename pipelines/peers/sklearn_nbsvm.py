#!/usr/bin/env python
"""Peer for the benchmark: scikit-learn HashingVectorizer + NB weights + SGDClassifier.

Reads ``label<TAB>tokens`` files (tokens already normalized and space-separated, the same
tokens nbsvm's tokenizer produces) and prints accuracy and stage timings. With ``--exact``
it is the Mesnil-style NBSVM instead: exact vocabulary (CountVectorizer) and liblinear
logistic regression (C=1).
"""

import argparse
import time

import numpy as np


def read(path):
    labels, texts = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            label, _, text = line.rstrip("\n").partition("\t")
            labels.append(label)
            texts.append(text)
    return np.array(labels), texts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--bits", type=int, default=24)
    ap.add_argument("--alpha", type=float, default=3e-4, help="SGDClassifier L2 strength")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--exact", action="store_true", help="Mesnil-style NBSVM (liblinear)")
    args = ap.parse_args()
    from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
    from sklearn.linear_model import LogisticRegression, SGDClassifier

    t0 = time.perf_counter()
    y_train, x_train = read(args.train)
    y_test, x_test = read(args.test)
    t1 = time.perf_counter()
    if args.exact:
        vec = CountVectorizer(
            ngram_range=(1, 3), binary=True, token_pattern=r"\S+", lowercase=False, dtype=np.float32
        )
        X = vec.fit_transform(x_train)
        Xt = vec.transform(x_test)
    else:
        vec = HashingVectorizer(
            ngram_range=(1, 3),
            n_features=2**args.bits,
            binary=True,
            alternate_sign=False,
            norm=None,
            token_pattern=r"\S+",
            lowercase=False,
            dtype=np.float32,
        )
        X = vec.transform(x_train)
        Xt = vec.transform(x_test)
    t2 = time.perf_counter()
    pos = y_train == "pos"
    p = np.asarray(X[pos].sum(axis=0)).ravel() + 1.0
    q = np.asarray(X[~pos].sum(axis=0)).ravel() + 1.0
    seen = np.asarray(X.sum(axis=0)).ravel() > 0
    r = np.zeros_like(p)
    r[seen] = np.log((p[seen] / p[seen].sum()) / (q[seen] / q[seen].sum()))
    X = X.multiply(r.astype(np.float32)).tocsr()
    Xt = Xt.multiply(r.astype(np.float32)).tocsr()
    t3 = time.perf_counter()
    if args.exact:
        clf = LogisticRegression(solver="liblinear", C=1.0)
    else:
        clf = SGDClassifier(
            loss="log_loss", alpha=args.alpha, max_iter=args.epochs, tol=None, random_state=0
        )
    clf.fit(X, pos)
    t4 = time.perf_counter()
    acc = float(np.mean(clf.predict(Xt) == (y_test == "pos")))
    t5 = time.perf_counter()
    print(f"accuracy: {100 * acc:.2f}%")
    print(f"read seconds: {t1 - t0:.2f}")
    print(f"vectorize seconds: {t2 - t1:.2f}")
    print(f"nb weights seconds: {t3 - t2:.2f}")
    print(f"training seconds: {t4 - t3:.2f}")
    print(f"eval seconds: {t5 - t4:.2f}")


if __name__ == "__main__":
    main()
