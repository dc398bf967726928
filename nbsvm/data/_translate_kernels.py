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
    return _rows(ids, offsets, remap, np.zeros((1, 2), np.uint64), False)


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
    """``remap``'s rank table into ``table`` (``len(remap) // 64`` rows) in one pass, with
    nothing else allocated; False (the table unfinished) as soon as a kept bucket's column
    is not the number of kept buckets before it."""
    column = 0
    for w in range(table.shape[0]):
        table[w, 1] = column
        word = np.uint64(0)
        bad = False
        for k in range(64):  # without branches: a third of the buckets kept at random
            c = remap[w * 64 + k]
            kept = c >= 0
            bad |= kept & (c != column)
            word |= np.uint64(kept) << np.uint64(k)
            column += kept
        if bad:
            return False
        table[w, 0] = word
    return True


@njit(cache=True, nogil=True)
def _rank_translate(ids, offsets, table):
    """:func:`_translate` through a rank table (:func:`~nbsvm.data.translate.rank_map`):
    bucket ``b`` is kept where bit ``b % 64`` of ``table[b // 64, 0]`` is set, and its
    column is ``table[b // 64, 1]`` plus the kept buckets below it in that word. The ids
    must be in ``[0, 64 * len(table))`` (not checked here, as in :func:`_translate`)."""
    return _rows(ids, offsets, np.zeros(1, np.int32), table, True)


@njit(cache=True, nogil=True, inline="always")
def _rows(ids, offsets, remap, table, ranked):
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
    for d in range(offsets.shape[0] - 1):
        lo = offsets[d]
        hi = offsets[d + 1]
        if hi < lo or hi > ids.shape[0]:
            raise ValueError("offsets go backwards or point outside the id array")
        for j in range(lo, hi):
            b = ids[j]
            if ranked:
                if j + 16 < hi:  # 4 MB for 2**24 buckets: mostly in the caches, not all
                    prefetch_row(table, ids[j + 16] >> 6)
                word = table[b >> 6, 0]
                bit = one << np.uint64(b & 63)
                c = np.int32(table[b >> 6, 1] + _popcount(word & (bit - one))) if word & bit else -1
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
