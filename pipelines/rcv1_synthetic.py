"""A seeded synthetic corpus of RCV1's shape (Zipf feature frequencies, a planted sparse
rule, flipped labels), for timing the learners at full scale."""

from __future__ import annotations

import numpy as np
from rcv1_objective import to_csr

from nbsvm.data.rows import SparseRows
from nbsvm.errors import NBSVMError


def zipf_probabilities(n_features: int, exponent: float) -> np.ndarray:
    p = 1.0 / np.arange(1, n_features + 1) ** exponent
    return p / p.sum()


def draws_for_distinct(p: np.ndarray, mean_nnz: float, length_factors: np.ndarray) -> float:
    """The mean number of Zipf draws per row whose expected number of *distinct* features,
    averaged over the row-length factors, is ``mean_nnz`` (bisection)."""
    log_miss = np.log1p(-p)

    def distinct(draws):
        return float(np.mean([np.sum(-np.expm1(draws * f * log_miss)) for f in length_factors]))

    lo, hi = mean_nnz, 50.0 * mean_nnz
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if distinct(mid) < mean_nnz else (lo, mid)
    return 0.5 * (lo + hi)


def synthetic_rows(
    rng,
    n_docs: int,
    p: np.ndarray,
    draws: float,
    idf: np.ndarray,
    shape: float,
    chunk: int = 50_000,
) -> SparseRows:
    """Rows of Zipf draws (row length Gamma-distributed around ``draws``), repeated draws
    merged into a term frequency, values ``(1 + log tf) idf`` scaled to unit length.
    Built ``chunk`` rows at a time so the sort's temporary memory stays small."""
    n_features = len(p)
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    ind_parts, val_parts, counts = [], [], np.zeros(n_docs, dtype=np.int64)
    for lo in range(0, n_docs, chunk):
        n = min(chunk, n_docs - lo)
        lengths = np.maximum(1, np.round(draws * rng.gamma(shape, 1.0 / shape, n))).astype(np.int64)
        feats = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
        row = np.repeat(np.arange(n, dtype=np.int64), lengths)
        keys, tf = np.unique(row * n_features + feats, return_counts=True)
        r, f = np.divmod(keys, n_features)
        v = (1.0 + np.log(tf)) * idf[f]
        norms = np.sqrt(np.bincount(r, weights=v * v, minlength=n))
        ind_parts.append(f)
        val_parts.append(v / norms[r])
        counts[lo : lo + n] = np.bincount(r, minlength=n)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return SparseRows(np.concatenate(ind_parts), np.concatenate(val_parts), offsets, n_features)


def synthetic_rcv1(
    n_docs: int,
    n_test: int,
    seed: int,
    n_features: int = 47152,
    mean_nnz: float = 77.0,
    exponent: float = 1.0,
    planted: float = 0.003,
    positive: float = 0.474,
    noise: float = 0.05,
    shape: float = 2.0,
) -> dict:
    """A seeded corpus of RCV1's shape: train and test rows, ``"1"``/``"-1"`` labels from a
    planted sparse rule ``sign(w*.x - threshold)`` (``planted`` x ``n_features`` features,
    141 by default, drawn among the 3,000 most frequent, get N(0, 1) weights: a denser
    rule needs a norm lambda 1e-4 does not allow, 40% test error with 10% of all features;
    threshold for a ``positive`` share) with a ``noise`` share of labels flipped.
    Features are ranked by a Zipf law of ``exponent``; idf is ``-log`` of the expected
    document frequency."""
    if n_docs < 1 or n_test < 1:
        raise NBSVMError(
            f"the synthetic corpus needs >= 1 train and test row, got {n_docs} / {n_test}"
        )
    rng = np.random.default_rng(seed)
    p = zipf_probabilities(n_features, exponent)
    from scipy.stats import gamma

    factors = gamma.ppf((np.arange(512) + 0.5) / 512, shape, scale=1.0 / shape)
    draws = draws_for_distinct(p, mean_nnz, factors)
    idf = -np.log(-np.expm1(draws * np.log1p(-p)))
    X = synthetic_rows(rng, n_docs + n_test, p, draws, idf, shape)
    w = np.zeros(n_features)
    # planted features among the 3,000 most frequent, so that most rows hold some
    head = min(n_features, 3000)
    support = rng.choice(head, size=min(head, max(1, int(planted * n_features))), replace=False)
    w[support] = rng.normal(size=len(support))
    score = to_csr(X) @ w
    # the top ``positive`` share by score is positive; ties (rows without a planted
    # feature score 0) broken at random
    ranked = np.lexsort((rng.random(len(score)), score))
    y = np.full(len(score), "-1")
    y[ranked[len(score) - int(round(positive * len(score))) :]] = "1"
    flip = rng.random(len(y)) < noise
    y[flip] = np.where(y[flip] == "1", "-1", "1")
    train, test = np.arange(n_docs), np.arange(n_docs, n_docs + n_test)
    return dict(
        X=X.take(train),
        y=y[train],
        Xt=X.take(test),
        yt=y[test],
        w=w,
        flipped=float(flip.mean()),
        draws=draws,
    )
