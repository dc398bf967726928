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
    if offsets[0] < 0 or offsets[offsets.shape[0] - 1] > ids.shape[0]:
        raise ValueError("offsets point outside the id array")
    out = np.empty(ids.shape[0], np.int32)
    new_offsets = np.empty(offsets.shape[0], np.int64)
    new_offsets[0] = 0
    pos = 0
    for d in range(offsets.shape[0] - 1):
        lo = offsets[d]
        hi = offsets[d + 1]
        if hi < lo or hi > ids.shape[0]:
            raise ValueError("offsets go backwards or point outside the id array")
        for j in range(lo, hi):
            if j + 32 < hi:  # the map is larger than the caches
                prefetch_row(remap, ids[j + 32])
            c = remap[ids[j]]
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
