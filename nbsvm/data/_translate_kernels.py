"""The compiled halves of :mod:`nbsvm.data.translate` (loaded on first use: small jobs
never import numba, :mod:`nbsvm._small_jobs`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from nbsvm._prefetch import prefetch_row


@njit(cache=True, nogil=True)
def _translate(ids, offsets, remap):
    """Map bucket ids to columns through ``remap``, dropping buckets mapped to -1.

    The ids must be in ``[0, len(remap))``: not checked here (the hasher makes them so;
    :func:`translate` and the cache readers check other sources)."""
    return _rows(ids, offsets, remap, np.zeros((1, 3), np.uint64), 0, False)


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    """Set bits of a uint64 (the classic SWAR count; LLVM makes it one instruction where
    the CPU has one)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, nogil=True)
def _fill_rank_table(remap, table):
    """``remap``'s rank table into ``table`` (``len(remap) // 64`` rows of three words) in
    one pass, with nothing else allocated. Returns its hot columns' count, or -1 where its
    columns are not the two parts of :func:`~nbsvm.models.columns.column_layout` (the
    table then unfinished): read in bucket order, they must be 0, 1, 2, ... (hot) merged
    with ``h``, ``h + 1``, ... (the others; ``h``: the first column out of the first run)."""
    next_hot = 0
    first_other = -1  # h, once seen
    next_other = 0
    one = np.uint64(1)
    for w in range(table.shape[0]):
        others_before = next_other - first_other if first_other >= 0 else 0
        table[w, 2] = np.uint64(next_hot) | (np.uint64(others_before) << np.uint64(32))
        kept = np.uint64(0)
        hot = np.uint64(0)
        for k in range(64):
            c = remap[w * 64 + k]
            if c < 0:
                continue
            bit = one << np.uint64(k)
            kept |= bit
            if c == next_hot and (first_other < 0 or c < first_other):
                hot |= bit
                next_hot += 1
            elif first_other < 0 and c > next_hot:
                first_other = c
                next_other = c + 1
            elif first_other >= 0 and c == next_other:
                next_other += 1
            else:
                return -1
        table[w, 0] = kept
        table[w, 1] = hot
    if first_other >= 0 and next_hot != first_other:
        return -1  # a gap among the columns (quantize drops buckets)
    return next_hot


@njit(cache=True, nogil=True)
def _rank_translate(ids, offsets, table, n_hot):
    """:func:`_translate` through a rank table (:func:`~nbsvm.data.translate.rank_map`):
    bucket ``b`` is kept where bit ``b % 64`` of ``table[b // 64, 0]`` is set, and hot
    where it is set in ``table[b // 64, 1]``; its column is then the hot buckets before
    its word (the low half of ``table[b // 64, 2]``) plus the hot ones below it in the
    word, or else ``n_hot`` plus the others before its word (the high half) and below it.
    The ids must be in ``[0, 64 * len(table))`` (not checked here, as in
    :func:`_translate`)."""
    return _rows(ids, offsets, np.zeros(1, np.int32), table, n_hot, True)


@njit(cache=True, nogil=True, inline="always")
def _rows(ids, offsets, remap, table, n_hot, ranked):
    """The rows of :func:`_translate` (``ranked`` False: through ``remap``) or of
    :func:`_rank_translate` (through ``table``); ``ranked`` is a constant of each, so each
    compiles its own loop."""
    if offsets[0] < 0 or offsets[offsets.shape[0] - 1] > ids.shape[0]:
        raise ValueError("offsets point outside the id array")
    out = np.empty(ids.shape[0], np.int32)
    new_offsets = np.empty(offsets.shape[0], np.int64)
    new_offsets[0] = 0
    pos = 0
    one = np.uint64(1)
    low = np.uint64(0xFFFFFFFF)
    for d in range(offsets.shape[0] - 1):
        lo = offsets[d]
        hi = offsets[d + 1]
        if hi < lo or hi > ids.shape[0]:
            raise ValueError("offsets go backwards or point outside the id array")
        for j in range(lo, hi):
            b = ids[j]
            if ranked:
                if j + 16 < hi:  # 6 MB for 2**24 buckets: mostly in the caches, not all
                    prefetch_row(table, ids[j + 16] >> 6)
                w = b >> 6
                kept = table[w, 0]
                bit = one << np.uint64(b & 63)
                hot = table[w, 1]
                before = table[w, 2]
                below = bit - one
                # both candidates, then arithmetic: which part a bucket is in is a coin
                # toss to the branch predictor
                as_hot = np.int64((before & low) + _popcount(hot & below))
                others = n_hot + np.int64(
                    (before >> np.uint64(32)) + _popcount(kept & ~hot & below)
                )
                is_hot = np.int64((hot >> np.uint64(b & 63)) & one)
                # written whether kept or not, and kept only by moving on: no branch
                out[pos] = np.int32(others + is_hot * (as_hot - others))
                pos += np.int64((kept >> np.uint64(b & 63)) & one)
            else:
                if j + 32 < hi:  # the map is larger than the caches
                    prefetch_row(remap, ids[j + 32])
                c = remap[b]
                if c >= 0:
                    out[pos] = c
                    pos += 1
        new_offsets[d + 1] = pos
    return out[:pos], new_offsets


@njit(cache=True, nogil=True)
def check_ids(ids, limit):
    """Position of the first id outside ``[0, limit)``, or -1 (one pass)."""
    for i in range(ids.shape[0]):
        if ids[i] < 0 or ids[i] >= limit:
            return i
    return -1
