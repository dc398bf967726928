"""Bucket ids -> model columns: the map every reader of hashed rows goes through (unknown
buckets dropped), and the one-pass range check of ids read from outside. Compiled
(:mod:`._translate_kernels`), or numpy for a small job (:mod:`nbsvm._small_jobs`)."""

from __future__ import annotations

import dataclasses
import sys
import threading
from typing import TYPE_CHECKING

import numpy as np

from nbsvm import _small_jobs
from nbsvm._parallel import run_parts, two_ranges
from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from nbsvm.data.batches import Batch


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
        return translate_in_range(ids, offsets, remap)
    except ValueError as e:
        raise NBSVMError(f"bad batch: {e}") from None


def check_ids(ids: np.ndarray, limit: int) -> int:
    """Position of the first id outside ``[0, limit)``, or -1 (one pass)."""
    if _small_jobs.plain(ids.nbytes):
        bad = np.flatnonzero((ids < 0) | (ids >= limit))
        return int(bad[0]) if bad.size else -1
    from nbsvm.data._translate_kernels import check_ids as kernel

    return int(kernel(ids, limit))


def translate_in_range(
    ids: np.ndarray,
    offsets: np.ndarray,
    remap: np.ndarray,
    ranks: tuple[np.ndarray, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`translate_rows` for ids known to be in ``[0, len(remap))`` (the hasher's, or a
    cache block's once checked): no range pass. ValueError if the offsets do not fit.
    ``ranks``: ``remap``'s :func:`rank_map`, looked up in its place."""
    if _small_jobs.plain(ids.nbytes):
        return _plain_translate(ids, offsets, remap)
    from nbsvm.data import _translate_kernels as kernels

    if ranks is not None:
        return kernels._rank_translate(ids, offsets, *ranks)
    return kernels._translate(ids, offsets, remap)


def rank_map(remap: np.ndarray) -> tuple[np.ndarray, int] | None:
    """``remap`` as a rank table and its hot columns' count, where its columns are laid
    out as training and loading lay them (:func:`~nbsvm.models.columns.column_layout`:
    the hot buckets' in bucket order, then the others'; a loaded model's are all hot);
    None otherwise. Per 64 buckets three uint64: which of them are kept (bit ``b % 64``),
    which are hot, and the hot and other kept buckets before them (32 bits each). A
    bucket's column is then one row and a bit count away, in 6 MB for 2**24 buckets where
    the map takes 64 MB: most lookups stay in the caches, and IMDB's first epoch
    translates its 16 million n-grams in 0.12 s instead of 0.29 (made in about 30 ms: for
    corpora whose n-grams outnumber a quarter of the buckets, not per batch; one pass over
    the map that allocates nothing but the table)."""
    if remap.size % 64:
        return None
    from nbsvm.data._translate_kernels import _fill_rank_table

    table = np.empty((remap.size // 64, 3), dtype=np.uint64)
    n_hot = int(_fill_rank_table(remap, table))
    return (table, n_hot) if n_hot >= 0 else None


#: Maps smaller than this (1 MB of int32) stay in the caches: no rank table for them.
RANK_MIN_BUCKETS = 1 << 18


class Translator:
    """Rows through ``remap`` (:func:`translate_in_range`), by its :func:`rank_map` once the
    ids translated reach a quarter of the buckets (or at once where ``expected`` ids will):
    the table takes about 30 ms to make for 2**24 buckets, which a small job never pays.
    Safe to call from several threads (the hashers of one stream)."""

    def __init__(self, remap: np.ndarray, expected: int = 0):
        self.remap = remap
        self._seen = expected
        self._ranks: tuple[np.ndarray, int] | None = None
        self._decided = False
        self._lock = threading.Lock()

    def __call__(self, ids: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # (a map that fits the caches gains nothing; and a job still hashing without numba
        # must not load it for the table: small jobs run in plain numpy, _small_jobs)
        if not self._decided and self.remap.size >= RANK_MIN_BUCKETS and "numba" in sys.modules:
            with self._lock:
                self._seen += ids.shape[0]
                if not self._decided and self._seen >= self.remap.size // 4:
                    self._ranks = rank_map(self.remap)
                    self._decided = True
        return translate_in_range(ids, offsets, self.remap, self._ranks)


def mapped_buckets(remap: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The buckets ``remap`` maps to a column (int32, ascending), their columns (int32),
    and whether those columns are 0, 1, ..., n-1 in that order (as loading numbers them,
    and training where every kept column is hot: a saver then slices the state instead
    of gathering it). numpy scans each
    half of the map in a thread of its own (IMDB's 2**24 buckets: 17 ms, one thread 25-30;
    a compiled scan was no faster than one numpy thread)."""
    bounds = two_ranges(remap.size)
    halves: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * 2

    def scan(k):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        halves[k] = np.flatnonzero(remap[lo:hi] >= 0) + lo

    run_parts(scan, 2)
    buckets = np.concatenate(halves).astype(np.int32)
    columns = remap[buckets].astype(np.int32, copy=False)
    in_order = bool(np.array_equal(columns, np.arange(columns.size, dtype=np.int32)))
    return buckets, columns, in_order


def _plain_translate(
    ids: np.ndarray, offsets: np.ndarray, remap: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~._translate_kernels._translate` in numpy, with its checks."""
    if offsets[0] < 0 or offsets[-1] > ids.shape[0]:
        raise ValueError("offsets point outside the id array")
    if np.any(np.diff(offsets) < 0):
        raise ValueError("offsets go backwards or point outside the id array")
    columns = remap[ids[offsets[0] : offsets[-1]]]
    kept = columns >= 0
    before = np.zeros(columns.shape[0] + 1, dtype=np.int64)  # kept ids before each position
    np.cumsum(kept, out=before[1:])
    return columns[kept].astype(np.int32), before[offsets - offsets[0]]
