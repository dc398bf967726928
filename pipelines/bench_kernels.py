#!/usr/bin/env python
"""What the software prefetch and the row width buy the AdaGrad epoch kernel, measured.

Builds an epoch shaped like IMDB trigrams after the lexicon (25,000 documents, about 525
distinct columns each, drawn with a Zipf-like law from 1.4 M columns), and one shaped like
a million generated reviews (every one of 2**24 buckets a column, 680 per document), and
times one epoch of the production kernel (``nbsvm.learners.kernels.table._adagrad_epoch``:
prefetch 32 non-zeros ahead, both ends of each row) on 12-byte rows (value, weight,
squared-gradient sum: what the learner allocates) and on rows padded to 16 bytes, beside
the same arithmetic without prefetch on 12-byte rows (the kernel before prefetching). Median
of ``--runs`` epochs each, after a warm-up.

    python pipelines/bench_kernels.py [--runs 5] [--seed 0] [--scale 1]
"""

from __future__ import annotations

import argparse
import math
import shlex
import statistics
import sys
import time

import numpy as np
from _harness import positive
from numba import njit

from nbsvm.learners.kernels.losses import loss_dloss as _loss_dloss
from nbsvm.learners.kernels.table import _adagrad_epoch


@njit(cache=True, nogil=True)
def _adagrad_epoch_plain(
    ids, offsets, y, weight, order, S, state, eta0, lam, bias_rate, loss_kind, eps, unit
):
    """The AdaGrad epoch without prefetching (reference for the timing only; the
    production kernel's signature, ``weight`` empty: every document weighs 1)."""
    b = state[0]
    gb = state[2]
    eta0f = np.float32(eta0)
    lamf = np.float32(lam)
    epsf = np.float32(eps)
    total = 0.0
    for k in range(order.shape[0]):
        d = order[k]
        lo = offsets[d]
        hi = offsets[d + 1]
        dot = 0.0
        for j in range(lo, hi):
            i = ids[j]
            dot += np.float64(S[i, 1]) * S[i, 0]
        loss, g = _loss_dloss(loss_kind, dot + b, y[d])
        total += loss
        gf = np.float32(g)
        for j in range(lo, hi):
            i = ids[j]
            gi = gf * S[i, 0] + lamf * S[i, 1]
            if gi != 0.0:
                G = S[i, 2] + gi * gi
                S[i, 2] = G
                S[i, 1] -= eta0f * gi / np.sqrt(G + epsf)
        if g != 0.0:
            gb += g * g
            b -= eta0 * bias_rate * g / math.sqrt(gb + eps)
    state[0] = b
    state[2] = gb
    return total


def imdb_like(rng, n_docs=25_000, n_columns=1_400_000, per_doc=525):
    """CSR rows of distinct columns with a Zipf-like popularity (random order in a row)."""
    cdf = np.cumsum(1.0 / np.arange(1, n_columns + 1) ** 0.9)
    cdf /= cdf[-1]
    popular = rng.permutation(n_columns).astype(np.int32)  # popular columns spread out
    offsets = np.arange(n_docs + 1, dtype=np.int64) * per_doc
    ids = np.empty(n_docs * per_doc, dtype=np.int32)
    for d in range(n_docs):
        row = np.unique(popular[np.searchsorted(cdf, rng.random(3 * per_doc))])
        while len(row) < per_doc:  # top up with random columns
            row = np.unique(
                np.concatenate([row, rng.integers(0, n_columns, per_doc, dtype=np.int32)])
            )
        ids[offsets[d] : offsets[d + 1]] = rng.choice(row, per_doc, replace=False)
    codes = rng.integers(0, 2, n_docs).astype(np.int32)
    return ids, offsets, codes, n_columns


def time_epochs(kernel, ids, offsets, codes, S, order, runs):
    """Seconds of ``runs`` epochs of ``kernel`` (the production AdaGrad epoch's signature)
    from ``S``, after a warm-up; every document weighs 1."""
    args = (ids, offsets, np.where(codes == 1, 1.0, -1.0), np.zeros(0), order)
    kernel(*args, S.copy(), np.zeros(3), 0.02, 1e-4, 1.0, 1, 1e-8, False)  # warm-up / JIT
    times = []
    for _ in range(runs):
        state = S.copy()
        t0 = time.perf_counter()
        kernel(*args, state, np.zeros(3), 0.02, 1e-4, 1.0, 1, 1e-8, False)
        times.append(time.perf_counter() - t0)
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=positive, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the shapes' documents and columns"
    )
    args = ap.parse_args(argv)
    print("config:", vars(args))
    print("command:", shlex.join([sys.executable, *sys.argv]))
    rng = np.random.default_rng(args.seed)
    shapes = (
        ("IMDB-like, 1.4 M columns", dict(n_docs=25_000, n_columns=1_400_000, per_doc=525)),
        ("1M-reviews-like, 2**24 columns", dict(n_docs=10_000, n_columns=1 << 24, per_doc=680)),
    )
    for title, shape in shapes:
        shape = dict(
            shape,
            n_docs=max(10, int(shape["n_docs"] * args.scale)),
            n_columns=max(4 * shape["per_doc"], int(shape["n_columns"] * args.scale)),
        )
        ids, offsets, codes, n_columns = imdb_like(rng, **shape)
        order = rng.permutation(len(codes)).astype(np.int64)
        ratios = rng.normal(0, 1, n_columns).astype(np.float32)
        S4 = np.zeros((n_columns, 4), np.float32)
        S4[:, 0] = ratios
        S3 = np.ascontiguousarray(S4[:, :3])
        rows = (
            ("no prefetch, 12-byte rows", _adagrad_epoch_plain, S3),
            ("prefetch, 12-byte rows (used)", _adagrad_epoch, S3),
            ("prefetch, 16-byte rows (padded)", _adagrad_epoch, S4),
        )
        print(f"{title}: {len(ids):,} non-zeros")
        medians = {}
        for name, kernel, S in rows:
            t = time_epochs(kernel, ids, offsets, codes, S, order, args.runs)
            medians[name] = statistics.median(t)
            print(
                f"  {name:32s} median {medians[name]:.3f} s ({min(t):.3f}-{max(t):.3f}), "
                f"{1e9 * medians[name] / len(ids):.1f} ns per non-zero"
            )
        used = medians[rows[1][0]]
        print(
            f"  prefetch speed-up {medians[rows[0][0]] / used:.2f}x; 12-byte rows take "
            f"{used / medians[rows[2][0]]:.2f}x the time of 16-byte ones for 0.75x the state"
        )
        del S3, S4, ids


if __name__ == "__main__":
    main()
