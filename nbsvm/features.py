"""Documents -> CSR batches of bucket ids, and the binary feature cache.

A batch is the sorted distinct bucket ids of each document concatenated (``ids``, int32)
with ``offsets`` (int64, one more than documents). The cache is a folder of three raw
arrays written while streaming (``ids.i32``, ``offsets.i64``, ``labels.i32``) plus
``meta.json``; it is built under a temporary name and renamed when complete, so a partial
cache is never mistaken for a finished one. Later epochs read it memory-mapped.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from .config import BATCH_DOCS, BUCKET_DTYPE, LABEL_DTYPE, OFFSET_DTYPE
from .errors import NBSVMError
from .io.readers import Document
from .text.hashing import Hasher


@dataclass
class Batch:
    """CSR rows of binarized documents and the documents they came from."""

    ids: np.ndarray        # int32, concatenated sorted distinct buckets
    offsets: np.ndarray    # int64, len(docs) + 1
    docs: list[Document]

    def __len__(self) -> int:
        return len(self.docs)


def hash_batches(docs: Iterable[Document], hasher: Hasher,
                 batch_docs: int = BATCH_DOCS) -> Iterator[Batch]:
    """Group a document stream into hashed CSR batches of ``batch_docs`` documents."""
    pending: list[Document] = []
    for doc in docs:
        pending.append(doc)
        if len(pending) == batch_docs:
            yield hash_batch(pending, hasher)
            pending = []
    if pending:
        yield hash_batch(pending, hasher)


def hash_batch(docs: list[Document], hasher: Hasher) -> Batch:
    """The single text -> bucket-ids entry point for a batch of documents."""
    rows = [hasher.buckets(d.text) for d in docs]
    offsets = np.zeros(len(rows) + 1, dtype=OFFSET_DTYPE)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    ids = np.concatenate(rows).astype(BUCKET_DTYPE, copy=False) if rows else \
        np.zeros(0, BUCKET_DTYPE)
    return Batch(ids, offsets, docs)


class CacheWriter:
    """Append hashed batches to a new cache folder; :meth:`close` publishes it atomically.

    Labels are stored as codes in order of first appearance; ``meta.json`` maps them back.
    """

    def __init__(self, folder, hasher: Hasher):
        self.folder = Path(folder)
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix="." + self.folder.name + ".", suffix=".nbsvm-tmp",
                                         dir=self.folder.parent))
        self.hasher = hasher
        self.labels: list[str] = []
        self._ids = open(self.tmp / "ids.i32", "wb")
        self._offsets = open(self.tmp / "offsets.i64", "wb")
        self._codes = open(self.tmp / "labels.i32", "wb")
        self._offsets.write(np.zeros(1, OFFSET_DTYPE).tobytes())
        self.n_docs = 0
        self.n_ids = 0

    def code_of(self, label: str) -> int:
        try:
            return self.labels.index(label)
        except ValueError:
            self.labels.append(label)
            return len(self.labels) - 1

    def add(self, batch: Batch) -> np.ndarray:
        """Append ``batch``; return its label codes."""
        codes = np.asarray([self.code_of(d.label) for d in batch.docs], dtype=LABEL_DTYPE)
        self._ids.write(batch.ids.tobytes())
        self._offsets.write((batch.offsets[1:] + self.n_ids).astype(OFFSET_DTYPE).tobytes())
        self._codes.write(codes.tobytes())
        self.n_docs += len(batch)
        self.n_ids += int(batch.offsets[-1])
        return codes

    def close(self) -> "FeatureCache":
        for fh in (self._ids, self._offsets, self._codes):
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        meta = dict(n_docs=self.n_docs, n_ids=self.n_ids, labels=self.labels,
                    hasher=self.hasher.settings())
        (self.tmp / "meta.json").write_text(json.dumps(meta))
        if self.folder.exists():
            shutil.rmtree(self.folder)
        os.replace(self.tmp, self.folder)
        return FeatureCache(self.folder)

    def abort(self) -> None:
        for fh in (self._ids, self._offsets, self._codes):
            fh.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class FeatureCache:
    """A finished cache, memory-mapped read-only and checked against its metadata."""

    def __init__(self, folder):
        self.folder = Path(folder)
        try:
            meta = json.loads((self.folder / "meta.json").read_text())
            self.n_docs, self.n_ids = int(meta["n_docs"]), int(meta["n_ids"])
            self.labels = [str(x) for x in meta["labels"]]
            self.hasher = Hasher(**meta["hasher"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise NBSVMError(f"unusable feature cache ({e})", path=str(self.folder)) from None
        sizes = {"ids.i32": 4 * self.n_ids, "offsets.i64": 8 * (self.n_docs + 1),
                 "labels.i32": 4 * self.n_docs}
        for name, size in sizes.items():
            p = self.folder / name
            if not p.is_file() or p.stat().st_size != size:
                raise NBSVMError(f"truncated feature cache ({name})", path=str(self.folder))
        self.ids = self._map("ids.i32", BUCKET_DTYPE)
        self.offsets = self._map("offsets.i64", OFFSET_DTYPE)
        self.codes = self._map("labels.i32", LABEL_DTYPE)

    def _map(self, name, dtype):
        path = self.folder / name
        if path.stat().st_size == 0:
            return np.zeros(0, dtype=dtype)
        return np.memmap(path, dtype=dtype, mode="r")


def epoch_order(n: int, rng: np.random.Generator, window: int = 1 << 22) -> np.ndarray:
    """A shuffled visiting order of ``n`` documents.

    Up to ``window`` documents this is a full permutation. Beyond it, windows of consecutive
    documents are visited in random order and each is permuted inside, so the order array
    for one window is all that is materialized at a time (see :func:`iter_epoch_order`).
    """
    return np.concatenate(list(iter_epoch_order(n, rng, window))) if n else np.zeros(0, np.int64)


def iter_epoch_order(n: int, rng: np.random.Generator, window: int = 1 << 22) -> Iterator[np.ndarray]:
    if n <= window:
        yield rng.permutation(n).astype(np.int64)
        return
    starts = np.arange(0, n, window)
    for start in rng.permutation(starts):
        stop = min(int(start) + window, n)
        yield int(start) + rng.permutation(stop - int(start)).astype(np.int64)
