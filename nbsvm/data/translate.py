"""Bucket ids -> model columns: the compiled map every reader of hashed rows goes through
(unknown buckets dropped), and the one-pass range check of ids read from outside."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from nbsvm._prefetch import prefetch_row
from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from nbsvm.data.batches import Batch


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


def translate(batch: Batch, remap: np.ndarray | None) -> Batch:
    """The batch with bucket ids replaced by model columns (unknown buckets dropped)."""
    if remap is None:
        return batch
    ids, offsets = translate_rows(batch.ids, batch.offsets, remap)
    return dataclasses.replace(batch, ids=ids, offsets=offsets)


def translate_rows(
    ids: np.ndarray, offsets: np.ndarray, remap: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """CSR rows of bucket ids as rows of model columns (unknown buckets dropped)."""
    bad = check_ids(ids, remap.shape[0])
    if bad >= 0:
        raise NBSVMError(f"bad batch: bucket id {int(ids[bad])} outside [0, {remap.shape[0]})")
    try:
        return _translate(ids, offsets, remap)
    except ValueError as e:
        raise NBSVMError(f"bad batch: {e}") from None


@njit(cache=True, nogil=True)
def check_ids(ids, limit):
    """Position of the first id outside ``[0, limit)``, or -1 (one pass)."""
    for i in range(ids.shape[0]):
        if ids[i] < 0 or ids[i] >= limit:
            return i
    return -1


def translate_in_range(
    ids: np.ndarray, offsets: np.ndarray, remap: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`translate_rows` for ids known to be in ``[0, len(remap))`` (the hasher's, or a
    cache block's once checked): no range pass. ValueError if the offsets do not fit."""
    return _translate(ids, offsets, remap)
