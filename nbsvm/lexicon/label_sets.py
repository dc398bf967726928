"""Multi-label NB ratios: a label's documents against the documents without it, from counts
by kept column, and a lexicon of label-set keys (``a,b``) read as per-label counts."""

from __future__ import annotations

import numpy as np

from nbsvm._parallel import run_parts, two_ranges
from nbsvm.io.labels import membership
from nbsvm.lexicon import _kernels as kernels
from nbsvm.lexicon.nblexicon import NBLexicon


def fill_label_ratios(S: np.ndarray, counts: np.ndarray, kept_df: np.ndarray, alpha: float) -> None:
    """Multi-label NB ratios into ``S[k, c, 0]``: label ``k``'s documents holding column
    ``c`` (``counts[k, c]``) against the others holding it (``kept_df[c] - counts[k, c]``),
    norms over the kept columns, as for one-vs-rest."""
    n_kept = S.shape[1]
    sums = counts.sum(axis=1, dtype=np.float64)  # integers: exact
    total = float(kept_df.sum(dtype=np.float64))  # (sums of weights when weighted)
    cuts = two_ranges(n_kept)

    def fill(k):
        kernels.label_ratios(
            counts, kept_df, float(alpha), n_kept, sums, total, S, int(cuts[k]), int(cuts[k + 1])
        )

    run_parts(fill, 2)


def label_set_counts(
    lexicon: NBLexicon, classes: list, min_df: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """A lexicon of label-set keys (``a,b``) as per-label counts: ``(buckets, counts,
    kept_df, docs, n_seen)``: the buckets seen in at least ``min_df`` documents, each
    label's documents holding them (the sum over the keys that hold the label), each
    bucket's documents, each label's documents, and how many buckets were seen at all.
    Integer sums: exact. A weighted lexicon's counts are sums of weights, and ``min_df``
    counts its documents of weight > 0."""
    keys = lexicon.classes_
    buckets, columns, rows, counts = lexicon.pairs()  # no row per key: keys are many
    dtype = counts.dtype
    df = np.bincount(columns, weights=counts, minlength=len(buckets)).astype(dtype)
    docs = lexicon.document_counts() if lexicon.weighted else df
    kept = docs >= max(int(min_df), 1)
    n_kept = int(kept.sum())
    keep = kept[columns]
    column = (np.cumsum(kept) - 1)[columns[keep]]
    rows, counts = rows[keep], counts[keep]
    member = membership(classes, keys).astype(np.int64)
    # each pair's count goes to every label of its key
    per_key = member.sum(axis=0)
    labels_of_key = np.flatnonzero(member.T.ravel()) % len(classes)  # key by key
    start = np.r_[0, np.cumsum(per_key)][rows]
    reps = per_key[rows]
    pair = np.repeat(np.arange(len(rows)), reps)
    within = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    label = labels_of_key[start[pair] + within]
    sums = np.bincount(
        label * n_kept + column[pair], weights=counts[pair], minlength=len(classes) * n_kept
    ).reshape(len(classes), n_kept)
    return (
        buckets[kept],
        sums if lexicon.weighted else sums.astype(np.int64),
        df[kept],
        member @ lexicon.class_counts_,
        len(buckets),
    )
