"""Sparse per-class bucket counts: one count per (bucket, class) pair seen.

A lexicon over many classes cannot keep a dense ``2**n_bits`` row per class (20 classes at
``2**24`` buckets: 1.3 GB, almost all zeros). :class:`PairCounts` keeps one sorted array of
``bucket << 32 | code`` keys with their counts, sized by the pairs seen. Batches are
appended to a buffer of keys that is sorted, run-length counted and merged into the
sorted arrays when it holds as many keys as they do (or 4M), so each key is sorted
O(log n) times in all and the buffer never exceeds the counts' own size by more than 4M keys.

Counts are int32 until a batch comes with document weights (:meth:`PairCounts.add`): from
then on they are float64 sums of weights (a document of weight k counts k).
"""

from __future__ import annotations

import numpy as np
from numba import njit

FLUSH_KEYS = 1 << 22


@njit(cache=True, nogil=True)
def _batch_keys(ids, offsets, codes, out):
    """``out[j] = ids[j] << 32 | codes[d]`` for every id ``j`` of document ``d``."""
    for d in range(offsets.shape[0] - 1):
        c = np.int64(codes[d])
        for j in range(offsets[d], offsets[d + 1]):
            out[j] = (np.int64(ids[j]) << 32) | c


@njit(cache=True, nogil=True)
def _runs(keys):
    """Distinct keys of the sorted ``keys`` and how often each occurs (int32)."""
    n = keys.shape[0]
    uniq = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int32)
    m = 0
    for j in range(n):
        if m > 0 and uniq[m - 1] == keys[j]:
            counts[m - 1] += 1
        else:
            uniq[m] = keys[j]
            counts[m] = 1
            m += 1
    return uniq[:m].copy(), counts[:m].copy()


@njit(cache=True, nogil=True)
def _weighted_runs(keys, weights):
    """Distinct keys of the sorted ``keys`` and the sum of their ``weights`` (float64)."""
    n = keys.shape[0]
    uniq = np.empty(n, dtype=np.int64)
    sums = np.empty(n, dtype=np.float64)
    m = 0
    for j in range(n):
        if m > 0 and uniq[m - 1] == keys[j]:
            sums[m - 1] += weights[j]
        else:
            uniq[m] = keys[j]
            sums[m] = weights[j]
            m += 1
    return uniq[:m].copy(), sums[:m].copy()


@njit(cache=True, nogil=True)
def _merge(ka, ca, kb, cb):
    """Union of two sorted key arrays with their counts (of one dtype), equal keys' counts
    summed."""
    out_k = np.empty(ka.shape[0] + kb.shape[0], dtype=np.int64)
    out_c = np.empty(ka.shape[0] + kb.shape[0], dtype=ca.dtype)
    i = 0
    j = 0
    m = 0
    while i < ka.shape[0] or j < kb.shape[0]:
        if j >= kb.shape[0] or (i < ka.shape[0] and ka[i] < kb[j]):
            out_k[m] = ka[i]
            out_c[m] = ca[i]
            i += 1
        elif i >= ka.shape[0] or kb[j] < ka[i]:
            out_k[m] = kb[j]
            out_c[m] = cb[j]
            j += 1
        else:
            out_k[m] = ka[i]
            out_c[m] = ca[i] + cb[j]
            i += 1
            j += 1
        m += 1
    return out_k[:m].copy(), out_c[:m].copy()


@njit(cache=True, nogil=True)
def _to_rows(keys, counts, row_of_code, n_rows):
    """Buckets seen (sorted) and the count matrix ``(n_rows, n_buckets)``: code ``c``'s
    counts in row ``row_of_code[c]``."""
    n_buckets = 0
    last = -1
    for j in range(keys.shape[0]):
        b = keys[j] >> 32
        if b != last:
            n_buckets += 1
            last = b
    buckets = np.empty(n_buckets, dtype=np.int32)
    out = np.zeros((n_rows, n_buckets), dtype=counts.dtype)
    col = -1
    last = -1
    for j in range(keys.shape[0]):
        b = keys[j] >> 32
        if b != last:
            col += 1
            buckets[col] = b
            last = b
        code = keys[j] & 0xFFFFFFFF
        r = row_of_code[code] if code < row_of_code.shape[0] else -1
        if r >= 0:
            out[r, col] = counts[j]
    return buckets, out


@njit(cache=True, nogil=True)
def _nonzero_keys(rows):
    """Keys and counts of the non-zero entries of dense rows (row ``c`` is code ``c``),
    sorted, without a temporary the size of the rows."""
    n = 0
    for i in range(rows.shape[1]):
        for c in range(rows.shape[0]):
            if rows[c, i] != 0:
                n += 1
    keys = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=rows.dtype)
    m = 0
    for i in range(rows.shape[1]):
        for c in range(rows.shape[0]):
            if rows[c, i] != 0:
                keys[m] = (np.int64(i) << 32) | c
                counts[m] = rows[c, i]
                m += 1
    return keys, counts


def _row_of_code(codes: np.ndarray) -> np.ndarray:
    """Code ``codes[r]``'s row ``r``, indexed by code (-1: a code not listed)."""
    row_of_code = np.full(int(codes.max(initial=0)) + 1, -1, dtype=np.int64)
    row_of_code[codes] = np.arange(len(codes))
    return row_of_code


#: Keys :meth:`PairCounts.pairs` orders at a time.
PAIRS_PART = 1 << 20


def _pairs_part(keys: np.ndarray, counts: np.ndarray, row_of_code: np.ndarray) -> tuple:
    """:meth:`PairCounts.pairs` of a run of whole buckets (columns from 0)."""
    code = keys & 0xFFFFFFFF
    listed = code < len(row_of_code)
    listed[listed] = row_of_code[code[listed]] >= 0
    bucket = keys[listed] >> 32
    rows = row_of_code[code[listed]]
    order = np.argsort((bucket << 32) | rows, kind="stable")  # rows may reorder codes
    bucket, rows, part_counts = bucket[order], rows[order], counts[listed][order]
    new = np.ones(len(bucket), dtype=bool)
    new[1:] = bucket[1:] != bucket[:-1]
    columns = np.cumsum(new) - 1
    return (
        bucket[new].astype(np.int32),
        columns.astype(np.int32),
        rows.astype(np.int32),
        part_counts,
    )


class PairCounts:
    """Counts of (bucket, code) pairs, sparse.

    Examples
    --------
    >>> pc = PairCounts()
    >>> pc.add(np.array([5, 7, 5], np.int32), np.array([0, 2, 3]), np.array([0, 2], np.int32))
    >>> buckets, rows = pc.rows(np.arange(3))
    >>> buckets.tolist(), rows.tolist()
    ([5, 7], [[1, 1], [0, 0], [1, 0]])
    """

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros(0, dtype=np.int32)
        self._pending: list[np.ndarray] = []
        self._pending_weights: list[np.ndarray] = []  # beside _pending once weighted
        self._n_pending = 0

    @property
    def weighted(self) -> bool:
        """Whether the counts are sums of document weights (float64)."""
        return self.counts.dtype == np.float64

    def to_weighted(self) -> None:
        """Counts as float64 sums of weights from now on (the documents so far weigh 1)."""
        if not self.weighted:
            self.flush()
            self.counts = self.counts.astype(np.float64)

    @classmethod
    def from_dense(cls, rows: np.ndarray) -> PairCounts:
        """From dense count rows over every bucket (row ``c`` is code ``c``'s)."""
        out = cls()
        out.keys, out.counts = _nonzero_keys(rows)
        return out

    def add(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        codes: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> None:
        """Count every id of every document under its document's code (``weights``: each
        document counts its weight instead of 1; the counts become weighted)."""
        if weights is not None:
            self.to_weighted()
        keys = np.empty(len(ids), dtype=np.int64)
        _batch_keys(ids, offsets, codes, keys)
        self._pending.append(keys)
        if self.weighted:
            per_doc = np.ones(len(offsets) - 1) if weights is None else weights
            self._pending_weights.append(np.repeat(per_doc, np.diff(offsets)))
        self._n_pending += len(keys)
        if self._n_pending >= max(FLUSH_KEYS, len(self.keys)):
            self.flush()

    def add_counts(self, buckets: np.ndarray, code: int, counts: np.ndarray) -> None:
        """Add ``counts`` (aligned with the sorted, distinct ``buckets``) to one code's."""
        if np.asarray(counts).dtype.kind == "f":
            self.to_weighted()
        nz = np.flatnonzero(counts)
        keys = (np.asarray(buckets, dtype=np.int64)[nz] << 32) | int(code)
        self.keys, self.counts = _merge(
            self.keys, self.counts, keys, np.asarray(counts, dtype=self.counts.dtype)[nz]
        )

    def flush(self) -> None:
        """Merge the buffered keys into the sorted counts."""
        if not self._pending:
            return
        keys = np.concatenate(self._pending)
        if self.weighted:
            weights = np.concatenate(self._pending_weights)
            order = np.argsort(keys, kind="stable")  # equal keys: weights in order
            uniq, counts = _weighted_runs(keys[order], weights[order])
            del order, weights
        else:
            keys.sort()
            uniq, counts = _runs(keys)
        self._pending, self._pending_weights, self._n_pending = [], [], 0
        del keys
        self.keys, self.counts = _merge(self.keys, self.counts, uniq, counts)

    def rows(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(buckets, counts)``: the buckets seen (sorted, int32; by any code) and one
        row (int32, float64 when weighted) per entry of ``codes`` (code ``codes[r]``'s counts in row ``r``; codes
        not listed are left out of the rows)."""
        self.flush()
        codes = np.asarray(codes, dtype=np.int64)
        row_of_code = _row_of_code(codes)
        return _to_rows(self.keys, self.counts, row_of_code, len(codes))

    def rows_over(self, codes: np.ndarray, buckets: np.ndarray) -> np.ndarray:
        """:meth:`rows` over the given ``buckets`` only (sorted, each seen): the counts
        ``(len(codes), len(buckets))``, never a column for the others."""
        self.flush()
        keep = np.isin(self.keys >> 32, np.asarray(buckets, dtype=np.int64))
        codes = np.asarray(codes, dtype=np.int64)
        row_of_code = _row_of_code(codes)
        seen, out = _to_rows(self.keys[keep], self.counts[keep], row_of_code, len(codes))
        if len(seen) != len(buckets):
            raise ValueError("rows_over: a bucket that was never seen")
        return out

    def pairs(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(buckets, columns, rows, counts)``: the buckets seen (sorted, int32) and, for
        each (bucket, code) pair of a listed code, the bucket's place in ``buckets``, the
        code's row (its place in ``codes``) and the count, ordered by bucket then row: the
        counts without a zero, what :meth:`rows` spreads over ``len(codes)`` rows. Done
        :data:`PAIRS_PART` keys at a time (whole buckets), so that the temporaries stay a
        few times that size, never the pairs' own."""
        self.flush()
        codes = np.asarray(codes, dtype=np.int64)
        row_of_code = _row_of_code(codes)
        parts: list[tuple] = []
        start, n, first_column = 0, len(self.keys), 0
        while start < n:
            end = min(start + PAIRS_PART, n)
            if end < n:  # to the end of the last bucket begun
                next_bucket = ((self.keys[end - 1] >> 32) + 1) << 32
                end = int(np.searchsorted(self.keys, next_bucket, side="left"))
            part = _pairs_part(self.keys[start:end], self.counts[start:end], row_of_code)
            parts.append((part[0], part[1] + first_column, part[2], part[3]))
            first_column += len(part[0])
            start = end
        if not parts:
            empty = np.zeros(0, dtype=np.int32)
            return empty, empty, empty, self.counts[:0].copy()
        return tuple(np.concatenate(a) for a in zip(*parts))  # type: ignore[return-value]

    def n_buckets(self) -> int:
        """Distinct buckets seen (by any code), without building the rows."""
        self.flush()
        if not len(self.keys):
            return 0
        return int(np.count_nonzero(np.diff(self.keys >> 32))) + 1

    def bucket_sums(self) -> PairCounts:
        """The counts summed over the codes of each bucket, as pairs under code 0 (from
        unweighted counts: the documents holding each bucket)."""
        self.flush()
        out = PairCounts()
        if len(self.keys):
            buckets = self.keys >> 32
            starts = np.flatnonzero(np.r_[True, buckets[1:] != buckets[:-1]])
            out.keys = buckets[starts] << 32
            out.counts = np.add.reduceat(self.counts, starts).astype(self.counts.dtype)
        else:
            out.counts = self.counts[:0].copy()
        return out

    @property
    def nbytes(self) -> int:
        per_key = 16 if self.weighted else 8
        return int(self.keys.nbytes + self.counts.nbytes + per_key * self._n_pending)
