"""Compiled kernels of the lexicon: arrays in, results in place. Per-class bucket counts and
the two-class ratios (:mod:`nbsvm.lexicon.nblexicon`); for column building
(:mod:`nbsvm.models.columns`), which buckets are kept (document frequency >= ``min_df``), their column numbers,
the class counts by kept column, and the NB ratios written into the learner's value field
(binary, one-vs-rest, and per label against the documents without it)."""

import math

import numpy as np
from numba import njit

from nbsvm._prefetch import prefetch_row


@njit(cache=True, nogil=True)
def count_buckets(counts, doc_counts, ids, offsets, codes):
    """counts[codes[d], ids[offsets[d]:offsets[d+1]]] += 1 for every document d.

    The counters are prefetched a few ids ahead: 2**n_bits of them are far larger than
    the caches, so every increment would otherwise wait for memory on its own.
    """
    for d in range(offsets.shape[0] - 1):
        c = codes[d]
        row = counts[c]
        doc_counts[c] += 1
        lo = offsets[d]
        hi = offsets[d + 1]
        for j in range(lo, hi):
            if j + 32 < hi:
                prefetch_row(row, ids[j + 32])
            row[ids[j]] += 1


@njit(cache=True, nogil=True)
def two_class_ratios(pos, neg, alpha, out):
    """out[i] = log((p_i/|p|) / (q_i/|q|)) over seen buckets (p = pos + alpha, ...), else 0.

    Returns the number of seen buckets. ``out`` may share memory with neither input.
    """
    sp = 0.0
    sq = 0.0
    n_seen = 0
    for i in range(pos.shape[0]):
        if pos[i] > 0 or neg[i] > 0:
            sp += pos[i] + alpha
            sq += neg[i] + alpha
            n_seen += 1
    shift = math.log(sq) - math.log(sp) if sp > 0 else 0.0
    for i in range(pos.shape[0]):
        if pos[i] > 0 or neg[i] > 0:
            out[i] = math.log(pos[i] + alpha) - math.log(neg[i] + alpha) + shift
        else:
            out[i] = 0.0
    return n_seen


#: Histograms of the kept buckets by the bit length of their documents (0 to 63): they
#: choose which columns are hot (:func:`nbsvm.models.columns.column_layout`).
BIT_LENGTHS = 64


@njit(cache=True, nogil=True, inline="always")
def _bit_length(m):
    """The bit length of ``int(m)`` (``m`` >= 0; a sum of weights below 1: 0)."""
    v = np.int64(m)
    h = 0
    while v > 0:
        v >>= 1
        h += 1
    return h


@njit(cache=True, nogil=True)
def seen_sums(counts, df, min_df, lo, hi):
    """Over buckets ``lo..hi-1``: how many were seen in any class, each class's count
    summed over them, how many were seen in at least ``min_df`` documents (the ones a
    model keeps) per :func:`_bit_length` of their documents, and each class's count
    summed over those. ``df``: the documents per bucket when the counts are weighted
    (empty: the counts summed are)."""
    k_classes = counts.shape[0]
    sums = np.zeros(k_classes)
    kept_sums = np.zeros(k_classes)
    kept = np.zeros(BIT_LENGTHS, np.int64)
    n_seen = 0
    for i in range(lo, hi):
        tot = 0
        for k in range(k_classes):
            tot += counts[k, i]
        if tot > 0:
            n_seen += 1
            for k in range(k_classes):
                sums[k] += counts[k, i]
            m = df[i] if df.shape[0] > 0 else tot
            if m >= min_df:
                kept[_bit_length(m)] += 1
                for k in range(k_classes):
                    kept_sums[k] += counts[k, i]
    return n_seen, sums, kept, kept_sums


@njit(cache=True, nogil=True)
def compact_ratios(
    counts,
    rows,
    binary,
    alpha,
    n_seen,
    sums,
    min_df,
    df,
    S,
    remap,
    lo,
    hi,
    cursors,
    hot_bits,
    dense,
):
    """NB ratios of the kept buckets into ``S[:, c, 0]`` and ``remap[bucket] = c`` (else -1),
    for buckets ``lo..hi-1``: a hot one (documents of :func:`_bit_length` ``hot_bits`` or
    more) gets column ``cursors[0]``, another ``cursors[1]``, and that cursor moves on
    (:func:`nbsvm.models.columns.column_layout`: ranges run in parallel threads when each
    knows the columns the ranges before it take). ``dense``: every bucket is its own
    column (``c = bucket``, ``remap`` untouched; the others keep ratio 0).

    Kept: seen in at least ``min_df`` documents (``df[i]`` when the counts are weighted,
    else their sum); the ratios' norms still run over every seen bucket, as in the
    lexicon's definition. ``rows[j]`` is the counts row of class j (classes sorted);
    ``binary``: one output, ``classes[1]`` against ``classes[0]``; else one per class against
    the rest. ``remap`` may share memory with a row of ``counts``: each bucket's counts are
    read before its entry is written.
    """
    k_classes, d = counts.shape
    total_sum = 0.0
    for k in range(k_classes):
        total_sum += sums[k]
    shift = 0.0
    if binary:
        shift = math.log(sums[rows[0]] + alpha * n_seen) - math.log(sums[rows[1]] + alpha * n_seen)
    for i in range(lo, hi):
        tot = 0
        for k in range(k_classes):
            tot += counts[k, i]
        m = df[i] if df.shape[0] > 0 else tot
        if tot == 0 or m < min_df:
            if not dense:
                remap[i] = -1
            continue
        if dense:
            c = i
        else:
            t = 0 if _bit_length(m) >= hot_bits else 1
            c = cursors[t]
            cursors[t] += 1
        if binary:
            p = counts[rows[1], i] + alpha
            q = counts[rows[0], i] + alpha
            S[0, c, 0] = math.log(p / q) + shift
        else:
            for j in range(rows.shape[0]):
                own = counts[rows[j], i]
                p = own + alpha
                q = (tot - own) + alpha
                norm_p = sums[rows[j]] + alpha * n_seen
                norm_q = (total_sum - sums[rows[j]]) + alpha * n_seen
                S[j, c, 0] = math.log(p) - math.log(q) + math.log(norm_q) - math.log(norm_p)
        if not dense:
            remap[i] = c


# ---- counts by kept column (the trainer's path: memory by kept buckets x classes) --------
# The trainer counts, while it hashes, only how many documents contain each bucket (one
# int32 row of 2**n_bits). The buckets kept (seen in at least min_df documents) then get
# columns, and one pass over the feature cache counts each class's documents per kept
# column, and each class's total of distinct buckets per document (the sum of its counts
# over every seen bucket, which the ratios' norms need). The ratios are those of the dense
# per-class counts, bit for bit: every sum is of integers (exact in float64).


@njit(cache=True, nogil=True)
def count_df(df, ids):
    """df[b] += 1 for every id (each document's ids are distinct: df counts documents)."""
    n = ids.shape[0]
    for j in range(n):
        if j + 32 < n:
            prefetch_row(df, ids[j + 32])
        df[ids[j]] += 1


@njit(cache=True, nogil=True)
def df_stats(df, min_df, lo, hi):
    """Over buckets ``lo..hi-1``: how many were seen, and how many are kept (seen in at
    least ``min_df`` documents) per :func:`_bit_length` of their documents."""
    n_seen = 0
    kept = np.zeros(BIT_LENGTHS, np.int64)
    for i in range(lo, hi):
        if df[i] > 0:
            n_seen += 1
            if df[i] >= min_df:
                kept[_bit_length(df[i])] += 1
    return n_seen, kept


@njit(cache=True, nogil=True)
def df_to_columns(df, min_df, lo, hi, cursors, hot_bits):
    """Turn ``df`` into the bucket -> column map in place over ``lo..hi-1``: kept buckets
    get columns from ``cursors`` (hot ones, of :func:`_bit_length` ``hot_bits`` or more,
    from ``cursors[0]``, as in :func:`compact_ratios`), the others -1."""
    for i in range(lo, hi):
        if df[i] > 0 and df[i] >= min_df:
            t = 0 if _bit_length(df[i]) >= hot_bits else 1
            df[i] = cursors[t]
            cursors[t] += 1
        else:
            df[i] = -1


@njit(cache=True, nogil=True)
def count_columns(
    counts, docs, id_totals, kept_df, ids, offsets, codes, weights, set_ptr, set_rows, remap
):
    """For every document d, each row ``r`` its code lists (``set_rows[set_ptr[c]:
    set_ptr[c + 1]]`` for ``c = codes[d]``: the class's own row for one label per document,
    every label of the set for multi-label): its kept columns counted in ``counts[r]``,
    the document in ``docs[r]`` and its number of distinct buckets in ``id_totals[r]``
    (float64). A non-empty ``kept_df`` counts every document's kept columns (multi-label
    ratios need it: a document may count in several rows, or none). A non-empty
    ``weights``: document d counts ``weights[d]`` instead of 1 (``counts``, ``kept_df``,
    ``id_totals``, ``docs`` then float)."""
    with_df = kept_df.shape[0] > 0
    weighted = weights.shape[0] > 0
    for d in range(offsets.shape[0] - 1):
        c = codes[d]
        r0 = set_ptr[c]
        r1 = set_ptr[c + 1]
        lo = offsets[d]
        hi = offsets[d + 1]
        w = weights[d] if weighted else 1.0
        for r in range(r0, r1):
            if weighted:
                docs[set_rows[r]] += w
            else:
                docs[set_rows[r]] += 1
            id_totals[set_rows[r]] += w * (hi - lo)
        for j in range(lo, hi):
            if j + 32 < hi:
                prefetch_row(remap, ids[j + 32])
            col = remap[ids[j]]
            if col >= 0:
                if weighted:
                    for r in range(r0, r1):
                        counts[set_rows[r], col] += w
                    if with_df:
                        kept_df[col] += w
                else:
                    for r in range(r0, r1):
                        counts[set_rows[r], col] += 1
                    if with_df:
                        kept_df[col] += 1


@njit(cache=True, nogil=True)
def label_ratios(counts, kept_df, alpha, n_kept, sums, total, S, lo, hi):
    """Multi-label NB ratios of columns ``lo..hi-1`` into ``S[k, c, 0]``: label ``k``'s
    documents against the documents without it (``kept_df[c] - counts[k, c]``), norms over
    the kept columns as for one-vs-rest (``sums[k]``: label k's counts over them;
    ``total``: every document's)."""
    for c in range(lo, hi):
        tot = kept_df[c]
        for k in range(counts.shape[0]):
            own = counts[k, c]
            p = own + alpha
            q = (tot - own) + alpha
            norm_p = sums[k] + alpha * n_kept
            norm_q = (total - sums[k]) + alpha * n_kept
            S[k, c, 0] = math.log(p) - math.log(q) + math.log(norm_q) - math.log(norm_p)
