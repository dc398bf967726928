"""Samples and blocks of feature caches, for searches over held-out data (``--auto``,
``tune``): parts joined one after the other (a seeded sample when the parts are), buckets
folded to fewer bits, and a validation set cut into equal blocks (the groups over which a
gain's standard error is paired)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nbsvm.data.batches import Batch
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.text.hashing import Hasher


def join_caches(
    parts: list[FeatureCache],
    folder: Path,
    limit: int | None = None,
    n_bits: int | None = None,
    skip: int = 0,
) -> FeatureCache:
    """The documents of ``parts`` one after the other (``limit`` of them after the first
    ``skip``) as one cache: a random sample when the parts are. ``n_bits`` (fewer than the parts'): the
    buckets folded to that many bits, which is exactly what hashing with ``n_bits`` gives
    (a bucket is the hash's low bits), as a set per document."""
    hasher = parts[0].hasher
    if n_bits is not None and n_bits < hasher.n_bits:
        hasher = Hasher(**dict(hasher.settings(), n_bits=n_bits))
    writer = CacheWriter(folder, hasher)
    left = sum(p.n_docs for p in parts) - skip if limit is None else limit
    with writer:
        for part in parts:
            for batch in part.batches():
                if left <= 0:
                    break
                if skip >= len(batch):
                    skip -= len(batch)
                    continue
                start, n = skip, min(len(batch) - skip, left)  # n documents from start
                skip = 0
                lo, hi = batch.offsets[start], batch.offsets[start + n]
                ids, offsets = batch.ids[lo:hi], batch.offsets[start : start + n + 1] - lo
                if hasher.n_bits < part.hasher.n_bits:
                    ids, offsets = fold_buckets(ids, offsets, hasher.n_bits)
                weights = None if batch.weights is None else batch.weights[start : start + n]
                labels = [part.labels[c] for c in batch.labels[start : start + n]]
                writer.add(Batch(ids, offsets, labels, weights=weights))
                left -= n
        return writer.close()


def fold_buckets(
    ids: np.ndarray, offsets: np.ndarray, n_bits: int
) -> tuple[np.ndarray, np.ndarray]:
    """CSR rows of buckets kept to their low ``n_bits`` bits, each row's set sorted."""
    n = len(offsets) - 1
    doc = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    keys = np.sort((doc << n_bits) | (ids.astype(np.int64) & ((1 << n_bits) - 1)))
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if keys.size else keys
    new_offsets = np.searchsorted(keys >> n_bits, np.arange(n + 1)).astype(offsets.dtype)
    return (keys & ((1 << n_bits) - 1)).astype(ids.dtype), new_offsets


def split_blocks(
    parts: list[FeatureCache], folder: Path, n_blocks: int, n_bits: int | None = None
) -> list[FeatureCache]:
    """The documents of ``parts`` in ``n_blocks`` consecutive blocks of equal size (within
    one document), each a cache ``folder/block<k>`` (see :func:`join_caches`)."""
    total = sum(p.n_docs for p in parts)
    edges = [round(k * total / n_blocks) for k in range(n_blocks + 1)]
    return [
        join_caches(parts, Path(folder) / f"block{k}", b - a, n_bits, skip=a)
        for k, (a, b) in enumerate(zip(edges, edges[1:]))
    ]
