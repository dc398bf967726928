"""Samples and blocks of feature caches, for searches over held-out data (``--auto``,
``tune``): parts joined one after the other (a seeded sample when the parts are), buckets
folded to fewer bits, and a validation set cut into equal blocks (the groups over which a
gain's standard error is paired)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import cast

import numpy as np

from nbsvm.data.batches import Batch
from nbsvm.data.cache import CacheWriter, FeatureCache, corpus_of, length_histogram
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


def deal_parts(labels: list, parts: int, rng: np.random.Generator, queues: dict) -> np.ndarray:
    """The part (of ``parts``: tune's folds, ``--auto``'s parts) of each document, read in
    order: each class deals its documents to the parts in turns, each turn a fresh seeded
    permutation of them (``queues`` holds what is left of each class's turn, from one call
    to the next), so that every part holds a class's documents to within one and the parts'
    sizes differ by at most the number of classes. Drawn at random, 40 documents in 20 folds
    left one empty in almost every seed, and a class could fall in one fold."""
    out = np.empty(len(labels), dtype=np.int64)
    for i, label in enumerate(labels):
        left = queues.get(label)
        if not left:
            left = queues[label] = rng.permutation(parts).tolist()
        out[i] = left.pop()
    return out


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


class Splits:
    """The (training, validation) splits of one corpus, each document stored once: one
    training and one validation part, or ``k`` folds, where split ``s`` validates on fold
    ``s`` and trains on the other folds joined, a cache made when split ``s`` is first
    asked for and removed when another split's is (disk: the corpus about twice, where a
    training cache written per split took ``k`` times it: 10 GB for 10 folds of 1 GB)."""

    def __init__(
        self, parts: list[FeatureCache], folder: Path, assignment: Path | None = None
    ) -> None:
        """``assignment``: with folds, a file of int32, each document's fold in reading
        order (a split's training documents are joined in that order, as training on them
        by hand reads them); None: ``parts`` are a training and a validation part."""
        self.parts, self.folder, self.assignment = parts, Path(folder), assignment
        self.folds = assignment is not None
        self._built: tuple[int, FeatureCache] | None = None

    def __len__(self) -> int:
        return len(self.parts) if self.folds else 1

    def valid(self, s: int) -> FeatureCache:
        return self.parts[s] if self.folds else self.parts[1]

    def train_parts(self, s: int) -> list[FeatureCache]:
        return [p for i, p in enumerate(self.parts) if i != s] if self.folds else self.parts[:1]

    def train(self, s: int) -> FeatureCache:
        """Split ``s``'s training documents as one cache (the last one made is kept)."""
        if not self.folds:
            return self.parts[0]
        if self._built is not None and self._built[0] == s:
            return self._built[1]
        self.release()
        assignment = np.fromfile(cast(Path, self.assignment), dtype=np.int32)
        cache = join_in_order(self.parts, assignment, s, self.folder / f"train{s}")
        self._built = (s, cache)
        return cache

    def release(self) -> None:
        """Remove the training cache made last (the parts stay)."""
        if self._built is not None:
            s, cache = self._built
            self._built = None
            cache.close()
            shutil.rmtree(self.folder / f"train{s}", ignore_errors=True)

    def train_labels(self, s: int) -> list:
        """The labels split ``s`` trains on, without making its cache."""
        return sorted({label for p in self.train_parts(s) for label in p.labels})

    def train_docs(self, s: int) -> int:
        return sum(p.n_docs for p in self.train_parts(s))

    def train_corpus(self, s: int) -> dict:
        """:func:`~nbsvm.data.cache.corpus_stats` of split ``s``'s training documents,
        without making its cache."""
        parts = self.train_parts(s)
        histogram = np.sum([length_histogram(p) for p in parts], axis=0)
        return corpus_of(histogram, sum(p.n_ids for p in parts))


#: Documents a join in reading order takes at a time.
JOIN_CHUNK = 8192


def join_in_order(
    parts: list[FeatureCache], assignment: np.ndarray, leave_out: int, folder: Path
) -> FeatureCache:
    """The documents of every part but ``leave_out`` as one cache, in reading order:
    ``assignment[i]`` is the part that holds the ``i``-th document read, each part its
    documents in that order."""
    writer = CacheWriter(folder, parts[0].hasher)
    taken = [0] * len(parts)
    with writer:
        for start in range(0, assignment.size, JOIN_CHUNK):
            where = assignment[start : start + JOIN_CHUNK]
            pieces = []
            for k, part in enumerate(parts):
                at = np.flatnonzero(where == k)
                if k == leave_out or not at.size:
                    continue
                ids, offsets, codes = part.rows(taken[k], taken[k] + at.size)
                weights = part.weights(taken[k], taken[k] + at.size)
                taken[k] += at.size
                pieces.append((at, ids, offsets, [part.labels[c] for c in codes], weights))
            if pieces:
                writer.add(_interleaved(pieces))
        return writer.close()


def _interleaved(pieces: list) -> Batch:
    """One batch of the pieces' rows, each row at its position (``at``)."""
    at = np.concatenate([p[0] for p in pieces])
    order = np.argsort(at, kind="stable")
    lengths = np.concatenate([np.diff(p[2]) for p in pieces])
    starts = np.concatenate([p[2][:-1] for p in pieces]) + np.repeat(
        np.cumsum([0] + [p[2][-1] for p in pieces[:-1]]), [p[2].size - 1 for p in pieces]
    )
    ids = np.concatenate([p[1] for p in pieces])
    offsets = np.concatenate([[0], np.cumsum(lengths[order])]).astype(np.int64)
    gather = np.repeat(starts[order] - offsets[:-1], lengths[order]) + np.arange(offsets[-1])
    labels = [label for p in pieces for label in p[3]]
    weighted = any(p[4] is not None for p in pieces)
    weights = (
        np.concatenate([np.ones(p[0].size) if p[4] is None else p[4] for p in pieces])[order]
        if weighted
        else None
    )
    return Batch(ids[gather], offsets, [labels[j] for j in order], weights=weights)
