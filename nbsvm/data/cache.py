"""The text training cache: hashed documents as CSR rows of bucket ids (later model
columns) with class codes, on disk (:mod:`nbsvm.data.store`), replayed in block-shuffled
groups (:mod:`nbsvm.data.shuffle`).

The folder holds ``ids.i32``, ``offsets.i64``, ``labels.i32`` (codes in order of first
appearance) and ``weights.f64`` (each document's weight; read only when ``meta.json`` says
some document weighs other than 1) plus ``meta.json``, which maps the codes back to labels
and records where each was first seen (for error messages later). Epoch 1 translates buckets to columns on a thread
and rewrites the cache as columns (:meth:`FeatureCache.translated_groups`).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
from collections.abc import Callable, Generator, Hashable, Iterator
from pathlib import Path

import numpy as np

from nbsvm.config import (
    BUCKET_DTYPE,
    LABEL_DTYPE,
    OFFSET_DTYPE,
    SHUFFLE_BLOCK_BYTES,
    SHUFFLE_BUFFER_BYTES,
    WEIGHT_DTYPE,
)
from nbsvm.data.batches import DONE, Batch, Failure, check_weights, put_until_stopped
from nbsvm.data.shuffle import block_groups, group_order
from nbsvm.data.store import ArrayReader, ArrayWriter, cache_write_error
from nbsvm.data.translate import Translator, check_ids
from nbsvm.errors import NBSVMError
from nbsvm.text.hashing import Hasher

FILES = {
    "ids.i32": BUCKET_DTYPE,
    "offsets.i64": OFFSET_DTYPE,
    "labels.i32": LABEL_DTYPE,
    "weights.f64": WEIGHT_DTYPE,
}
#: What a group of an epoch is: ``(ids, offsets, codes, order, weights)``, weights None
#: when every document weighs 1.
Group = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


class CacheWriter:
    """Append hashed batches to a new cache folder; :meth:`close` publishes it atomically.

    ``before_publish`` (called once the rows are synced) and ``attachments`` (file name ->
    callable giving its bytes) let the kept-cache store check its inputs and add files;
    ``keep_existing``: a cache already published there wins (two runs filling one kept cache).
    ``durable``: synced to the disk (a kept cache; :class:`~nbsvm.data.store.ArrayWriter`).
    """

    def __init__(
        self, folder, hasher: Hasher, extra_meta: dict | None = None, durable: bool = False
    ):
        self._out = ArrayWriter(folder, FILES, durable)
        self.folder = self._out.folder
        self.hasher = hasher
        self.extra_meta = dict(extra_meta or {})
        self.before_publish: Callable[[], None] | None = None
        self.attachments: dict = {}
        self.labels: list = []
        self.first_seen: list = []
        self._index: dict = {}
        self._out.write("offsets.i64", np.zeros(1, OFFSET_DTYPE))
        self.n_docs = 0
        self.n_ids = 0
        self.max_id = -1  # ids are checked against max_id + 1 when read back
        self.weighted = False  # some document weighs other than 1
        self.weight_sum = 0.0  # the documents' weights summed (n_docs when unweighted)

    @property
    def keep_existing(self) -> bool:
        return self._out.keep_existing

    @keep_existing.setter
    def keep_existing(self, value: bool) -> None:
        self._out.keep_existing = value

    def code_of(self, label: Hashable, where: dict | None = None) -> int:
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
        self._out.write("ids.i32", batch.ids)
        self._out.write("offsets.i64", batch.offsets[1:] + self.n_ids)
        self._out.write("labels.i32", codes)
        if batch.weights is None:
            self._out.write("weights.f64", np.ones(len(batch)))
        else:
            check_weights(batch.weights, batch)
            self._out.write("weights.f64", batch.weights)
            self.weighted = self.weighted or bool(np.any(batch.weights != 1.0))
        self.weight_sum += len(batch) if batch.weights is None else float(batch.weights.sum())
        self.n_docs += len(batch)
        self.n_ids += int(batch.offsets[-1])
        return codes

    def close(self) -> FeatureCache:
        self._out.close_files()
        if self.before_publish is not None:
            self.before_publish()
        for name, make in self.attachments.items():
            self._out.attach(name, make())
        meta = dict(
            self.extra_meta,
            n_docs=self.n_docs,
            n_ids=self.n_ids,
            labels=self.labels,
            first_seen=self.first_seen,
            hasher=self.hasher.settings(),
            id_limit=self.max_id + 1,
            weighted=self.weighted,
            weight_sum=self.weight_sum,
        )
        self._out.publish(meta)  # False: another run's identical cache is used
        return FeatureCache(self.folder)

    def abort(self) -> None:
        self._out.abort()

    def __enter__(self) -> CacheWriter:
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:  # an error or Ctrl-C: leave no partial cache behind
            self.abort()
        return False


class FeatureCache:
    """A finished cache, read with positioned reads into private buffers."""

    def __init__(self, folder) -> None:
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
            self.weighted = bool(meta.get("weighted", False))  # else weights.f64 is unread
            self.weight_sum = float(meta.get("weight_sum", self.n_docs))
        except (
            OSError,
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            RecursionError,
            NBSVMError,
        ) as e:
            raise NBSVMError(f"unusable feature cache ({e})", path=str(self.folder)) from None
        if (
            self.n_docs < 0
            or self.n_ids < 0
            or not 0 <= self.id_limit <= (1 << self.hasher.n_bits)
            or not 0 <= self.weight_sum < float("inf")
        ):
            raise NBSVMError("corrupted feature cache (meta.json)", path=str(self.folder))
        self._checked: set = set()  # blocks (doc ranges) whose ids and codes were checked
        self._files = ArrayReader(
            self.folder,
            {
                "ids.i32": (BUCKET_DTYPE, self.n_ids),
                "offsets.i64": (OFFSET_DTYPE, self.n_docs + 1),
                "labels.i32": (LABEL_DTYPE, self.n_docs),
                **({"weights.f64": (WEIGHT_DTYPE, self.n_docs)} if self.weighted else {}),
            },
            "feature cache",
        )
        first = self._read("offsets.i64", 0, 1)[0]
        last = self._read("offsets.i64", self.n_docs, self.n_docs + 1)[0]
        if first != 0 or last != self.n_ids:  # O(1): never read the whole offsets file
            raise NBSVMError("corrupted feature cache (offsets)", path=str(self.folder))
        if self.weighted and "weight_sum" not in self.meta:  # a weighted cache kept before
            self.weight_sum = sum(  # the sum was recorded: summed from its weights
                float(np.sum(self._read("weights.f64", a, min(a + (1 << 20), self.n_docs))))
                for a in range(0, self.n_docs, 1 << 20)
            )

    @property
    def nbytes(self) -> int:
        """Bytes of its arrays on disk (ids, offsets, labels)."""
        return (
            self.n_ids * np.dtype(BUCKET_DTYPE).itemsize
            + (self.n_docs + 1) * np.dtype(OFFSET_DTYPE).itemsize
            + self.n_docs * np.dtype(LABEL_DTYPE).itemsize
        )

    def close(self) -> None:
        self._files.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _read(self, name, start, stop, out=None) -> np.ndarray:
        return self._files.read(name, start, stop, out)

    def translated_groups(
        self,
        remap: np.ndarray,
        rng: np.random.Generator | None,
        rewrite: bool = True,
        into: str | os.PathLike[str] | None = None,
        **shuffle_kw: int,
    ) -> Generator[Group, None, None]:
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
        names = ("ids.i32", "offsets.i64", "labels.i32") + (
            ("weights.f64",) if self.weighted else ()
        )
        if self.id_limit > remap.shape[0]:
            raise NBSVMError(
                f"the cache holds ids up to {self.id_limit - 1}, beyond the "
                f"{remap.shape[0]} buckets of the map",
                path=str(self.folder),
            )
        n_columns = int(remap.max()) + 1 if remap.shape[0] else 0
        target = self.folder if into is None else Path(into)
        if rewrite and into is not None:
            target.mkdir(parents=True, exist_ok=False)
        new = {name: target / (name + ".new") for name in names}
        out: queue.Queue = queue.Queue(maxsize=1)
        stop = threading.Event()
        written: list[int] = []
        worker = threading.Thread(
            target=self._translate_groups,
            args=(remap, rng, new if rewrite else None, out, stop, written, shuffle_kw),
            daemon=True,
            name="nbsvm-translate",
        )
        worker.start()
        try:
            while True:
                try:
                    item = out.get(timeout=0.1)
                except queue.Empty:
                    if not worker.is_alive() and out.empty():
                        raise NBSVMError(
                            "the cache translation thread stopped unexpectedly",
                            path=str(self.folder),
                        ) from None
                    continue
                if item is DONE:
                    break
                if isinstance(item, Failure):
                    if isinstance(item.exc, OSError):  # a full disk: name the cache
                        raise cache_write_error(item.exc, target) from None
                    raise item.exc
                yield item
            worker.join()
            if rewrite:
                self._replace_translated(target, new, written[0], n_columns)
        finally:
            stop.set()
            worker.join(timeout=10)
            for path in new.values():
                path.unlink(missing_ok=True)

    def _translate_groups(
        self,
        remap: np.ndarray,
        rng: np.random.Generator | None,
        new: dict[str, Path] | None,
        out: queue.Queue,
        stop: threading.Event,
        written: list[int],
        shuffle_kw: dict,
    ) -> None:
        """The thread of :meth:`translated_groups`: puts each group of :meth:`shuffled_groups`
        on ``out``, translated through ``remap``, writing it to the ``new`` files (ids,
        offsets, labels; None: not rewritten) on the way, then :data:`DONE` (the ids
        written appended to ``written``); an error is put as a :class:`Failure`. Returns
        early once ``stop`` is set."""
        try:
            with contextlib.ExitStack() as files:
                if new is not None:
                    f_ids, f_off, f_lab, *f_weight = (
                        files.enter_context(open(path, "wb")) for path in new.values()
                    )
                    f_off.write(np.zeros(1, OFFSET_DTYPE).tobytes())
                n_ids = 0
                translator = Translator(remap, expected=self.n_ids)
                for ids, offsets, codes, order, weights in self.shuffled_groups(rng, **shuffle_kw):
                    if stop.is_set():
                        return
                    try:
                        ids, offsets = translator(ids, offsets)  # new
                    except ValueError as e:
                        raise NBSVMError(
                            f"corrupted feature cache: {e}", path=str(self.folder)
                        ) from None
                    if new is not None:
                        f_ids.write(ids.data.cast("B"))  # a.data: memoryview(a)
                        f_off.write((offsets[1:] + n_ids).data.cast("B"))
                        f_lab.write(codes.data.cast("B"))
                        if weights is not None:
                            f_weight[0].write(weights.data.cast("B"))
                    n_ids += int(offsets[-1])
                    if not put_until_stopped(out, (ids, offsets, codes, order, weights), stop):
                        return
            written.append(n_ids)
            put_until_stopped(out, DONE, stop)
        except BaseException as e:  # handed to the consumer, raised there
            put_until_stopped(out, Failure(e), stop)

    def _replace_translated(
        self, target: Path, new: dict[str, Path], n_ids: int, n_columns: int
    ) -> None:
        """Once an epoch of :meth:`translated_groups` is complete: the ``new`` files (of
        ``n_ids`` ids in ``n_columns`` columns) replace the cache's in ``target``, which
        this object reads from then on."""
        meta_path = self.folder / "meta.json"
        meta = json.loads(meta_path.read_text())
        meta["n_ids"] = n_ids
        meta["columns"] = True
        meta["id_limit"] = n_columns
        self.close()
        for name, path in new.items():
            os.replace(path, target / name)
        (target / "meta.json").write_text(json.dumps(meta))
        FeatureCache.__init__(self, target)  # reopened on the translated files

    def offsets_range(self, start: int, stop: int) -> np.ndarray:
        """``offsets[start:stop + 1]`` (absolute positions in the id file), checked."""
        return self._files.offsets("offsets.i64", start, stop, self.n_ids, "documents")

    def _check_block(self, start, stop, ids, codes) -> None:
        """Ids in ``[0, id_limit)`` and label codes in ``[0, len(labels))`` for documents
        ``start..stop-1``; each block is checked once per cache (one compiled pass over its
        ids), not on every epoch."""
        if (start, stop) in self._checked:
            return
        bad = check_ids(ids, self.id_limit)
        if bad >= 0:
            raise self._files.corrupted(
                f"id {int(ids[bad])} outside [0, {self.id_limit}) in documents {start}..{stop - 1}"
            )
        if check_ids(codes, len(self.labels)) >= 0:
            raise self._files.corrupted(
                f"label code outside the {len(self.labels)} labels in documents {start}..{stop - 1}"
            )
        self._checked.add((start, stop))

    def rows(
        self, start: int, stop: int, ids_out: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Documents ``start..stop-1``: (ids, offsets from 0, label codes)."""
        offsets = self.offsets_range(start, stop)
        ids = self._read("ids.i32", int(offsets[0]), int(offsets[-1]), ids_out)
        codes = self._read("labels.i32", start, stop)
        self._check_block(start, stop, ids, codes)
        return ids, offsets - offsets[0], codes

    def weights(self, start: int, stop: int) -> np.ndarray | None:
        """Documents ``start..stop-1``'s weights (None: every document weighs 1)."""
        return self._read("weights.f64", start, stop) if self.weighted else None

    def batches(self, chunk: int = 8192) -> Iterator[Batch]:
        """The cached documents in order, as batches (labels as stored codes)."""
        for start in range(0, self.n_docs, chunk):
            stop = min(start + chunk, self.n_docs)
            ids, offsets, codes = self.rows(start, stop)
            yield Batch(ids, offsets, list(codes), weights=self.weights(start, stop))

    def shuffled_groups(
        self,
        rng: np.random.Generator | None,
        buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
        block_bytes: int = SHUFFLE_BLOCK_BYTES,
    ) -> Generator[Group, None, None]:
        """One epoch in shuffled order, within a fixed memory budget.

        Documents are cut into consecutive blocks of about ``block_bytes`` of ids; each
        epoch visits the blocks in a random order, gathers as many as fit in
        ``buffer_bytes`` into one group, and permutes the group's documents. When the whole
        cache fits the buffer this is a full random permutation of the documents. Yields
        ``(ids, offsets, codes, order, weights)`` per group (the arrays are reused between
        groups; weights None when every document weighs 1).
        ``rng=None`` visits everything in stored order (the order it was written in).
        """
        buffer = np.empty(0, dtype=BUCKET_DTYPE)
        for bounds in block_groups(self.n_docs, 4 * self.n_ids, rng, buffer_bytes, block_bytes):
            spans = [self.offsets_range(a, z) for a, z in bounds]
            n_ids = sum(int(o[-1] - o[0]) for o in spans)
            if buffer.shape[0] < n_ids:
                # with room to spare: a group larger than all before would otherwise take
                # a second buffer while the caller still holds the last one (pages never
                # written are not resident)
                buffer = np.empty(max(n_ids + n_ids // 2, buffer_bytes // 2), dtype=BUCKET_DTYPE)
            n_docs = sum(z - a for a, z in bounds)
            offsets = np.empty(n_docs + 1, dtype=OFFSET_DTYPE)
            codes = np.empty(n_docs, dtype=LABEL_DTYPE)
            weights = np.empty(n_docs, dtype=WEIGHT_DTYPE) if self.weighted else None
            pos, d = 0, 0
            offsets[0] = 0
            for (a, z), o in zip(bounds, spans):
                k = int(o[-1] - o[0])
                self._read("ids.i32", int(o[0]), int(o[-1]), buffer[pos : pos + k])
                self._read("labels.i32", a, z, codes[d : d + z - a])
                if weights is not None:
                    self._read("weights.f64", a, z, weights[d : d + z - a])
                self._check_block(a, z, buffer[pos : pos + k], codes[d : d + z - a])
                offsets[d + 1 : d + 1 + z - a] = o[1:] - o[0] + pos
                pos += k
                d += z - a
            yield buffer[:pos], offsets, codes, group_order(rng, n_docs), weights


def corpus_stats(cache: FeatureCache, chunk: int = 1 << 20) -> dict:
    """What the data-dependent defaults look at (:func:`nbsvm.config.data_defaults`): the
    documents, the distinct n-gram buckets they hold in all, and the median per document.
    One pass over the offsets in chunks; a histogram of lengths (capped at 65,535) keeps
    memory flat."""
    return corpus_of(length_histogram(cache, chunk), int(cache.n_ids))


def length_histogram(cache: FeatureCache, chunk: int = 1 << 20) -> np.ndarray:
    """How many documents hold each number of distinct buckets (capped at 65,535): what
    :func:`corpus_of` reads, summed over caches (Dask's shards) as it is."""
    counts = np.zeros(1 << 16, dtype=np.int64)
    for start in range(0, cache.n_docs, chunk):
        lengths = np.diff(cache.offsets_range(start, min(start + chunk, cache.n_docs)))
        counts += np.bincount(np.minimum(lengths, (1 << 16) - 1), minlength=1 << 16)
    return counts


def corpus_of(histogram: np.ndarray, n_ids: int) -> dict:
    """:func:`corpus_stats` from a :func:`length_histogram` and the n-gram occurrences."""
    n_docs = int(histogram.sum())
    median = int(np.searchsorted(np.cumsum(histogram), (n_docs + 1) // 2)) if n_docs else 0
    return {"documents": n_docs, "ngrams": int(n_ids), "median_ngrams": median}
