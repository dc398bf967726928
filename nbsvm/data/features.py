"""Documents -> CSR batches of bucket ids (a reader thread feeds the compiled hasher), and
the binary feature cache.

A batch is the distinct bucket ids of each document concatenated (``ids``, int32) with
``offsets`` (int64, one more than documents) and, per document, its label, source and line.
The cache is a folder of three raw arrays written while streaming (``ids.i32``,
``offsets.i64``, ``labels.i32``) plus ``meta.json``; it is built under a temporary name and
renamed when complete, so a partial cache is never mistaken for a finished one. It is read
in blocks into a buffer of fixed size (:meth:`FeatureCache.shuffled_groups`), so resident
memory does not grow with the corpus.
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
from numba import njit

from nbsvm.config import (BATCH_DOCS, BUCKET_DTYPE, LABEL_DTYPE, OFFSET_DTYPE, SHUFFLE_BLOCK_BYTES,
                     SHUFFLE_BUFFER_BYTES)
from nbsvm._parallel import run_parts
from nbsvm._prefetch import prefetch_row
from nbsvm.errors import NBSVMError
from nbsvm.data.shuffle import block_groups, group_order
from nbsvm.memory import releasable_int32  # noqa: F401  (re-exported for the trainer)
from nbsvm.io.readers import Document
from nbsvm.text.hashing import Hasher


@dataclass
class Batch:
    """CSR rows of binarized documents, with each document's label, source and line."""

    ids: np.ndarray        # int32, concatenated distinct buckets
    offsets: np.ndarray    # int64, len(labels) + 1
    labels: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    lines: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def where(self, i: int) -> dict:
        return {"path": self.sources[i] if self.sources else None,
                "line": self.lines[i] if self.lines else None}


def hash_batch(docs: list[Document], hasher: Hasher) -> Batch:
    """Hash a list of documents in the calling thread."""
    ids, offsets = hasher.batch([d.text for d in docs])
    return Batch(ids, offsets, [d.label for d in docs], [d.source for d in docs],
                 [d.line for d in docs])


_DONE = object()


class _Failure:
    def __init__(self, exc):
        self.exc = exc


def _reader(docs, hasher, batch_docs, out: queue.Queue, stop: threading.Event):
    """Thread body: read documents, group them, prepare the UTF-8 buffers."""
    def put(item):
        return _put(out, item, stop)

    try:
        def prepared(pending):     # the texts are dropped once encoded
            return ([d.label for d in pending], [d.source for d in pending],
                    [d.line for d in pending], hasher.prepare([d.text for d in pending]))

        pending: list[Document] = []
        for doc in docs:
            pending.append(doc)
            if len(pending) == batch_docs:
                if not put(prepared(pending)):
                    return
                pending = []
            if stop.is_set():
                return
        if pending and not put(prepared(pending)):
            return
        put(_DONE)
    except BaseException as e:   # handed to the consumer, raised there
        put(_Failure(e))


def _put(out: queue.Queue, item, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            out.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


def _hasher_stage(source: queue.Queue, out: queue.Queue, hasher: Hasher, remap,
                  stop: threading.Event):
    """Thread body: compiled hashing (GIL released) of the reader's prepared batches."""
    while not stop.is_set():
        try:
            item = source.get(timeout=0.1)
        except queue.Empty:
            continue
        if item is _DONE or isinstance(item, _Failure):
            _put(out, item, stop)
            return
        try:
            labels, sources, lines, (buf, starts) = item
            ids, offsets = hasher.hash_prepared(buf, starts)
            if remap is not None:
                ids, offsets = _translate(ids, offsets, remap)
            item = Batch(ids, offsets, labels, sources, lines)
        except BaseException as e:
            item = _Failure(e)
        if not _put(out, item, stop):
            return


def hash_batches(docs: Iterable[Document], hasher: Hasher, batch_docs: int = BATCH_DOCS,
                 prefetch: int = 2, remap=None) -> Iterator[Batch]:
    """Hashed CSR batches of ``batch_docs`` documents, produced by a two-stage pipeline.

    A reader thread iterates ``docs`` (file reading, decoding, lowercasing: Python work)
    and a hasher thread runs the compiled tokenizer/hasher (which releases the GIL) on the
    prepared batches, so reading, hashing and the caller's own work on earlier batches
    overlap; bounded queues of ``prefetch`` batches keep memory flat. Batches come out in
    input order. With ``remap``, bucket ids are translated to model columns (unknown
    buckets dropped). Errors raised while reading surface here, in the caller's thread.
    """
    prepared: queue.Queue = queue.Queue(maxsize=prefetch)
    hashed: queue.Queue = queue.Queue(maxsize=prefetch)
    stop = threading.Event()
    threads = [threading.Thread(target=_reader, args=(iter(docs), hasher, batch_docs, prepared,
                                                      stop), daemon=True, name="nbsvm-reader"),
               threading.Thread(target=_hasher_stage, args=(prepared, hashed, hasher, remap,
                                                            stop), daemon=True,
                                name="nbsvm-hasher")]
    for t in threads:
        t.start()
    try:
        while True:
            item = hashed.get()
            if item is _DONE:
                return
            if isinstance(item, _Failure):
                raise item.exc
            yield item
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)


class CacheWriter:
    """Append hashed batches to a new cache folder; :meth:`close` publishes it atomically.

    Labels are stored as codes in order of first appearance; ``meta.json`` maps them back
    and records where each label was first seen (for error messages later).
    """

    def __init__(self, folder, hasher: Hasher, extra_meta: dict | None = None):
        self.folder = Path(folder)
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        # the pid in the name lets a later run tell a dead writer's leftovers from a live one
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.folder.name}.{os.getpid()}.",
                                         suffix=".nbsvm-tmp", dir=self.folder.parent))
        self.hasher = hasher
        self.extra_meta = dict(extra_meta or {})
        self.before_publish = None      # called before the cache is renamed into place
        self.keep_existing = False      # a cache already published there wins (kept caches)
        self.attachments: dict = {}     # file name -> callable giving its bytes at close
        self.labels: list = []
        self.first_seen: list = []
        self._index: dict = {}
        self._ids = open(self.tmp / "ids.i32", "wb")
        self._offsets = open(self.tmp / "offsets.i64", "wb")
        self._codes = open(self.tmp / "labels.i32", "wb")
        self._offsets.write(np.zeros(1, OFFSET_DTYPE).tobytes())
        self.n_docs = 0
        self.n_ids = 0
        self.max_id = -1        # ids are checked against max_id + 1 when read back

    def code_of(self, label, where=None) -> int:
        code = self._index.get(label)
        if code is None:
            code = self._index[label] = len(self.labels)
            self.labels.append(label)
            self.first_seen.append(where or {})
        return code

    def add(self, batch: Batch) -> np.ndarray:
        """Append ``batch``; return its label codes."""
        codes = np.empty(len(batch), dtype=LABEL_DTYPE)
        index = self._index
        for i, label in enumerate(batch.labels):
            code = index.get(label)
            codes[i] = self.code_of(label, batch.where(i)) if code is None else code
        if len(batch.ids):
            self.max_id = max(self.max_id, int(batch.ids.max()))
        self._ids.write(memoryview(np.ascontiguousarray(batch.ids)))
        self._offsets.write(memoryview((batch.offsets[1:] + self.n_ids).astype(OFFSET_DTYPE)))
        self._codes.write(memoryview(codes))
        self.n_docs += len(batch)
        self.n_ids += int(batch.offsets[-1])
        return codes

    def close(self) -> "FeatureCache":
        for fh in (self._ids, self._offsets, self._codes):
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        if self.before_publish is not None:
            self.before_publish()
        for name, make in self.attachments.items():
            with open(self.tmp / name, "wb") as fh:
                fh.write(make())
                fh.flush()
                os.fsync(fh.fileno())
        meta = dict(self.extra_meta, n_docs=self.n_docs, n_ids=self.n_ids, labels=self.labels,
                    first_seen=self.first_seen, hasher=self.hasher.settings(),
                    id_limit=self.max_id + 1)
        with open(self.tmp / "meta.json", "w") as fh:
            fh.write(json.dumps(meta))
            fh.flush()
            os.fsync(fh.fileno())
        if self.folder.exists() and not self.keep_existing:
            shutil.rmtree(self.folder)
        try:
            os.replace(self.tmp, self.folder)
        except OSError:
            if not (self.keep_existing and self.folder.exists()):
                raise
            # another run published the same content first: use theirs
            shutil.rmtree(self.tmp, ignore_errors=True)
            return FeatureCache(self.folder)
        _fsync_folder(self.folder.parent)       # the rename itself survives a power cut
        return FeatureCache(self.folder)

    def abort(self) -> None:
        for fh in (self._ids, self._offsets, self._codes):
            fh.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> "CacheWriter":
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:       # an error or Ctrl-C: leave no partial cache behind
            self.abort()
        return False


def _fsync_folder(folder) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FeatureCache:
    """A finished cache, read with positioned reads into private buffers.

    Not memory-mapped on purpose: the kernel maps whole neighbourhoods of a file on each
    page fault, so random access through a map keeps most of the file resident. Reading
    blocks into a buffer of fixed size keeps resident memory independent of the corpus.
    """

    def __init__(self, folder):
        self.folder = Path(folder)
        try:
            meta = json.loads((self.folder / "meta.json").read_text())
            self.n_docs, self.n_ids = int(meta["n_docs"]), int(meta["n_ids"])
            if not isinstance(meta["labels"], list):
                raise TypeError("labels must be a list")
            self.labels = list(meta["labels"])
            self.meta = meta
            self.first_seen = list(meta.get("first_seen") or [{}] * len(self.labels))
            self.hasher = Hasher(**meta["hasher"])
            # ids are below id_limit (the writer's largest id + 1; 2**n_bits if unknown)
            self.id_limit = int(meta.get("id_limit", 1 << self.hasher.n_bits))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, NBSVMError) as e:
            raise NBSVMError(f"unusable feature cache ({e})", path=str(self.folder)) from None
        if self.n_docs < 0 or self.n_ids < 0 or \
                not 0 <= self.id_limit <= (1 << self.hasher.n_bits):
            raise NBSVMError("corrupted feature cache (meta.json)", path=str(self.folder))
        self._checked: set = set()      # blocks (doc ranges) whose ids and codes were checked
        sizes = {"ids.i32": 4 * self.n_ids, "offsets.i64": 8 * (self.n_docs + 1),
                 "labels.i32": 4 * self.n_docs}
        for name, size in sizes.items():
            p = self.folder / name
            if not p.is_file() or p.stat().st_size != size:
                raise NBSVMError(f"truncated feature cache ({name})", path=str(self.folder))
        self._files = {name: open(self.folder / name, "rb") for name in sizes}
        first = self._read("offsets.i64", OFFSET_DTYPE, 0, 1)[0]
        last = self._read("offsets.i64", OFFSET_DTYPE, self.n_docs, self.n_docs + 1)[0]
        if first != 0 or last != self.n_ids:       # O(1): never read the whole offsets file
            raise NBSVMError("corrupted feature cache (offsets)", path=str(self.folder))

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _read(self, name, dtype, start, stop, out=None) -> np.ndarray:
        itemsize = np.dtype(dtype).itemsize
        n = stop - start
        out = np.empty(n, dtype=dtype) if out is None else out[:n]
        if n:
            got = os.preadv(self._files[name].fileno(), [memoryview(out).cast("B")],
                            start * itemsize)
            if got != n * itemsize:
                raise NBSVMError(f"feature cache changed while in use ({name})",
                                 path=str(self.folder))
        return out

    def translated_groups(self, remap: np.ndarray, rng: np.random.Generator | None,
                          rewrite: bool = True, into=None, **shuffle_kw):
        """One epoch as :meth:`shuffled_groups` (``shuffle_kw`` are its buffer and block
        sizes; ``rng=None``: in stored order), with bucket ids mapped to model columns
        through ``remap`` (unmapped buckets dropped), rewriting the cache as columns on the
        way (unless ``rewrite`` is false: no later epoch needs it). With ``into`` (a new
        folder), the translated cache is written there and this object reads it afterwards,
        leaving the bucket cache as it was (a kept cache, reused by later runs).

        A thread reads, translates and writes each group while the caller trains on the
        previous one (both the translation and the training release the GIL). The
        translated cache is written in the order the groups were visited, to new files that
        replace the old ones once the epoch is complete; until then the cache is unchanged.
        Up to four groups are in memory at once during this epoch (the read buffer, the
        group being translated, one waiting, one training): 64 MB with the default buffer.
        Close the generator (``contextlib.closing``) to stop the thread early.
        """
        names = ("ids.i32", "offsets.i64", "labels.i32")
        if self.id_limit > remap.shape[0]:
            raise NBSVMError(f"the cache holds ids up to {self.id_limit - 1}, beyond the "
                             f"{remap.shape[0]} buckets of the map", path=str(self.folder))
        n_columns = int(remap.max()) + 1 if remap.shape[0] else 0
        target = self.folder if into is None else Path(into)
        if rewrite and into is not None:
            target.mkdir(parents=True, exist_ok=False)
        new = {name: target / (name + ".new") for name in names}
        out: queue.Queue = queue.Queue(maxsize=1)
        stop = threading.Event()
        written = []

        def produce():
            try:
                with contextlib.ExitStack() as files:
                    if rewrite:
                        f_ids, f_off, f_lab = (files.enter_context(open(new[name], "wb"))
                                               for name in names)
                        f_off.write(np.zeros(1, OFFSET_DTYPE).tobytes())
                    n_ids = 0
                    for ids, offsets, codes, order in self.shuffled_groups(rng, **shuffle_kw):
                        if stop.is_set():
                            return
                        try:
                            ids, offsets = _translate(ids, offsets, remap)   # new arrays
                        except ValueError as e:
                            raise NBSVMError(f"corrupted feature cache: {e}",
                                             path=str(self.folder)) from None
                        if rewrite:
                            f_ids.write(memoryview(ids).cast("B"))
                            f_off.write(memoryview(offsets[1:] + n_ids).cast("B"))
                            f_lab.write(memoryview(codes).cast("B"))
                        n_ids += int(offsets[-1])
                        if not _put(out, (ids, offsets, codes, order), stop):
                            return
                written.append(n_ids)
                _put(out, _DONE, stop)
            except BaseException as e:      # handed to the consumer, raised there
                _put(out, _Failure(e), stop)

        worker = threading.Thread(target=produce, daemon=True, name="nbsvm-translate")
        worker.start()
        try:
            while True:
                try:
                    item = out.get(timeout=0.1)
                except queue.Empty:
                    if not worker.is_alive() and out.empty():
                        raise NBSVMError("the cache translation thread stopped unexpectedly",
                                         path=str(self.folder)) from None
                    continue
                if item is _DONE:
                    break
                if isinstance(item, _Failure):
                    raise item.exc
                yield item
            worker.join()
            if rewrite:
                meta_path = self.folder / "meta.json"
                meta = json.loads(meta_path.read_text())
                meta["n_ids"] = written[0]
                meta["columns"] = True
                meta["id_limit"] = n_columns
                self.close()
                for name in names:
                    os.replace(new[name], target / name)
                (target / "meta.json").write_text(json.dumps(meta))
                self.__init__(target)
        finally:
            stop.set()
            worker.join(timeout=10)
            for path in new.values():
                path.unlink(missing_ok=True)

    def offsets_range(self, start, stop) -> np.ndarray:
        """``offsets[start:stop + 1]`` (absolute positions in the id file), checked to be
        non-decreasing within the id file (one comparison per document, every read: the
        kernels loop over ``ids[offsets[d]:offsets[d + 1]]`` without bounds checks)."""
        o = self._read("offsets.i64", OFFSET_DTYPE, start, stop + 1)
        if o.shape[0] and (o[0] < 0 or o[-1] > self.n_ids or np.any(o[1:] < o[:-1])):
            raise NBSVMError(f"corrupted feature cache: offsets of documents {start}..{stop} "
                             f"go backwards or beyond the id file", path=str(self.folder))
        return o

    def _check_block(self, start, stop, ids, codes) -> None:
        """Ids in ``[0, id_limit)`` and label codes in ``[0, len(labels))`` for documents
        ``start..stop-1``; each block is checked once per cache (one compiled pass over its
        ids), not on every epoch."""
        if (start, stop) in self._checked:
            return
        bad = check_ids(ids, self.id_limit)
        if bad >= 0:
            raise NBSVMError(f"corrupted feature cache: id {int(ids[bad])} outside "
                             f"[0, {self.id_limit}) in documents {start}..{stop - 1}",
                             path=str(self.folder))
        if check_ids(codes, len(self.labels)) >= 0:
            raise NBSVMError(f"corrupted feature cache: label code outside the "
                             f"{len(self.labels)} labels in documents {start}..{stop - 1}",
                             path=str(self.folder))
        self._checked.add((start, stop))

    def rows(self, start, stop, ids_out=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Documents ``start..stop-1``: (ids, offsets from 0, label codes)."""
        offsets = self.offsets_range(start, stop)
        ids = self._read("ids.i32", BUCKET_DTYPE, int(offsets[0]), int(offsets[-1]), ids_out)
        codes = self._read("labels.i32", LABEL_DTYPE, start, stop)
        self._check_block(start, stop, ids, codes)
        return ids, offsets - offsets[0], codes

    def batches(self, chunk: int = 8192) -> Iterator[Batch]:
        """The cached documents in order, as batches (labels as stored codes)."""
        for start in range(0, self.n_docs, chunk):
            ids, offsets, codes = self.rows(start, min(start + chunk, self.n_docs))
            yield Batch(ids, offsets, list(codes))

    def shuffled_groups(self, rng: np.random.Generator, buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
                        block_bytes: int = SHUFFLE_BLOCK_BYTES):
        """One epoch in shuffled order, within a fixed memory budget.

        Documents are cut into consecutive blocks of about ``block_bytes`` of ids; each
        epoch visits the blocks in a random order, gathers as many as fit in
        ``buffer_bytes`` into one group, and permutes the group's documents. When the whole
        cache fits the buffer this is a full random permutation of the documents. Yields
        ``(ids, offsets, codes, order)`` per group (the arrays are reused between groups).
        ``rng=None`` visits everything in stored order (the order it was written in).
        """
        buffer = np.empty(0, dtype=BUCKET_DTYPE)
        for bounds in block_groups(self.n_docs, 4 * self.n_ids, rng, buffer_bytes, block_bytes):
            spans = [self.offsets_range(a, z) for a, z in bounds]
            n_ids = sum(int(o[-1] - o[0]) for o in spans)
            if buffer.shape[0] < n_ids:
                buffer = np.empty(n_ids, dtype=BUCKET_DTYPE)
            n_docs = sum(z - a for a, z in bounds)
            offsets = np.empty(n_docs + 1, dtype=OFFSET_DTYPE)
            codes = np.empty(n_docs, dtype=LABEL_DTYPE)
            pos, d = 0, 0
            offsets[0] = 0
            for (a, z), o in zip(bounds, spans):
                k = int(o[-1] - o[0])
                self._read("ids.i32", BUCKET_DTYPE, int(o[0]), int(o[-1]), buffer[pos:pos + k])
                self._read("labels.i32", LABEL_DTYPE, a, z, codes[d:d + z - a])
                self._check_block(a, z, buffer[pos:pos + k], codes[d:d + z - a])
                offsets[d + 1:d + 1 + z - a] = o[1:] - o[0] + pos
                pos += k
                d += z - a
            yield buffer[:pos], offsets, codes, group_order(rng, n_docs)


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
            if j + 32 < hi:                 # the map is larger than the caches
                prefetch_row(remap, ids[j + 32])
            c = remap[ids[j]]
            if c >= 0:
                out[pos] = c
                pos += 1
        new_offsets[d + 1] = pos
    return out[:pos], new_offsets


def translate(batch: Batch, remap) -> Batch:
    """The batch with bucket ids replaced by model columns (unknown buckets dropped)."""
    if remap is None:
        return batch
    ids, offsets = translate_rows(batch.ids, batch.offsets, remap)
    return Batch(ids, offsets, batch.labels, batch.sources, batch.lines)


def translate_rows(ids, offsets, remap) -> tuple[np.ndarray, np.ndarray]:
    """CSR rows of bucket ids as rows of model columns (unknown buckets dropped)."""
    bad = check_ids(ids, remap.shape[0])
    if bad >= 0:
        raise NBSVMError(f"bad batch: bucket id {int(ids[bad])} outside "
                         f"[0, {remap.shape[0]})")
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
