"""Documents -> CSR batches of bucket ids: a reader thread feeds the compiled hasher.

A batch is the distinct bucket ids of each document concatenated (``ids``, int32) with
``offsets`` (int64, one more than documents) and, per document, its label, source and line,
and its weight when any document of the batch weighs other than 1.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from nbsvm.config import BATCH_DOCS
from nbsvm.data.translate import Translator
from nbsvm.errors import NBSVMError
from nbsvm.io.document import WEIGHTS_ARE, Document
from nbsvm.io.frames import first_bad_weight
from nbsvm.memory import CHECKED_DOCUMENT_BYTES, check_document_bytes
from nbsvm.text.hashing import Hasher


@dataclass
class Batch:
    """CSR rows of binarized documents, with each document's label, source and line."""

    ids: np.ndarray  # int32, concatenated distinct buckets
    offsets: np.ndarray  # int64, len(labels) + 1
    labels: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    weights: np.ndarray | None = None  # float64 per document; None: every one weighs 1

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def where(self, i: int) -> dict:
        return {
            "path": self.sources[i] if self.sources else None,
            "line": self.lines[i] if self.lines else None,
        }


def hash_batch(docs: list[Document], hasher: Hasher) -> Batch:
    """Hash a list of documents in the calling thread."""
    ids, offsets = hasher.batch([d.text for d in docs])
    return Batch(
        ids,
        offsets,
        [d.label for d in docs],
        [d.source for d in docs],
        [d.line for d in docs],
        weights_of(docs),
    )


def weights_of(docs: list[Document]) -> np.ndarray | None:
    """The documents' weights (float64), or None when every one weighs 1."""
    if all(d.weight == 1.0 for d in docs):
        return None
    return np.array([d.weight for d in docs], dtype=np.float64)


def check_weights(weights: np.ndarray, batch: Batch | None = None) -> None:
    """Every weight from 0 to ``MAX_WEIGHT``, else an error naming the first bad document (its file
    and line when ``batch`` knows them)."""
    i = first_bad_weight(weights)
    if i is not None:
        where = batch.where(i) if batch is not None else {}
        raise NBSVMError(
            f"document weight {float(weights[i])!r}: {WEIGHTS_ARE}",
            path=where.get("path"),
            line=where.get("line"),
        )


DONE = object()

#: Hasher threads of :func:`hash_batches`: two where there are two cores.
HASHERS = min(2, os.cpu_count() or 1)


class Failure:
    """An exception of a producer thread, handed to the consumer and raised there."""

    def __init__(self, exc):
        self.exc = exc


def _reader(docs, hasher, batch_docs, out: queue.Queue, stop: threading.Event, max_memory=None):
    """Thread body: read documents, group them, prepare the UTF-8 buffers (refusing a
    document too long to hash within ``max_memory``: :func:`check_document_bytes`)."""

    def put(item):
        return put_until_stopped(out, item, stop)

    seq = 0  # batches are numbered: several hashers may finish them out of order
    try:

        def prepared(pending):  # the texts are dropped once encoded
            buf, starts = hasher.prepare([d.text for d in pending])
            if starts[-1] >= CHECKED_DOCUMENT_BYTES:  # else no document can be that long
                longest = int(np.diff(starts).argmax())
                why = check_document_bytes(int(starts[longest + 1] - starts[longest]), max_memory)
                if why:
                    doc = pending[longest]
                    raise NBSVMError(why, path=doc.source, line=doc.line)
            return (
                [d.label for d in pending],
                [d.source for d in pending],
                [d.line for d in pending],
                weights_of(pending),
                (buf, starts),
            )

        pending: list[Document] = []
        for doc in docs:
            pending.append(doc)
            if len(pending) == batch_docs:
                if not put((seq, prepared(pending))):
                    return
                pending, seq = [], seq + 1
            if stop.is_set():
                return
        if pending and not put((seq, prepared(pending))):
            return
        put(DONE)
    except BaseException as e:  # handed to the consumer, raised there after batch seq - 1
        put((seq, Failure(e)))


def put_until_stopped(out: queue.Queue, item: object, stop: threading.Event) -> bool:
    """Put ``item`` unless ``stop`` is set first (False then)."""
    while not stop.is_set():
        try:
            out.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


class _Window:
    """How far the hashers may run ahead of the consumer: batch ``seq`` is hashed only
    once ``seq < yielded + size``, so that one slow batch does not leave every later one
    hashed and waiting in memory for it (the oldest batch never waits: no deadlock)."""

    def __init__(self, size: int) -> None:
        self.size, self.yielded = size, 0
        self._moved = threading.Condition()

    def wait_for(self, seq: int, stop: threading.Event) -> bool:
        """Wait until batch ``seq`` may be hashed (False: stopped first)."""
        with self._moved:
            while seq >= self.yielded + self.size:
                if stop.is_set():
                    return False
                self._moved.wait(timeout=0.1)
        return True

    def advance(self) -> None:
        with self._moved:
            self.yielded += 1
            self._moved.notify_all()


def _hasher_stage(
    source: queue.Queue,
    out: queue.Queue,
    hasher: Hasher,
    translator: Translator | None,
    stop: threading.Event,
    window: _Window,
    gate: threading.Event | None = None,
):
    """Thread body: compiled hashing (GIL released) of the reader's prepared batches, as
    ``(number, batch)`` (buckets to columns by ``translator``), within ``window`` of the
    consumer; :data:`DONE` is handed on to the other hashers and to ``out``. With ``gate``,
    it starts once the gate is open."""
    while gate is not None and not gate.wait(timeout=0.1):
        if stop.is_set():
            return
    while not stop.is_set():
        try:
            item = source.get(timeout=0.1)
        except queue.Empty:
            continue
        if item is DONE:
            put_until_stopped(source, DONE, stop)  # the other hashers end too
        if item is DONE or isinstance(item[1], Failure):
            put_until_stopped(out, item, stop)
            return
        seq = item[0]
        if not window.wait_for(seq, stop):
            return
        try:
            labels, sources, lines, weights, (buf, starts) = item[1]
            ids, offsets = hasher.hash_prepared(buf, starts)
            if translator is not None:
                ids, offsets = translator(ids, offsets)
            item = (seq, Batch(ids, offsets, labels, sources, lines, weights))
        except BaseException as e:
            item = (seq, Failure(e))
        if not put_until_stopped(out, item, stop):
            return


def hash_batches(
    docs: Iterable[Document],
    hasher: Hasher,
    batch_docs: int = BATCH_DOCS,
    prefetch: int = 2,
    remap: np.ndarray | None = None,
    hashers: int = HASHERS,
    max_memory: int | str | None = None,
    gate: threading.Event | None = None,
) -> Iterator[Batch]:
    """Hashed CSR batches of ``batch_docs`` documents, produced by a two-stage pipeline.

    A reader thread iterates ``docs`` (file reading, decoding, lowercasing: Python work)
    and ``hashers`` threads run the compiled tokenizer/hasher (which releases the GIL) on
    the prepared batches, so reading, hashing and the caller's own work on earlier batches
    overlap: the reader is several times faster than one hasher, so a second one takes the
    time the reader leaves of its core. Bounded queues of ``prefetch`` batches keep memory
    flat. Batches come out in input order. With ``remap``, bucket ids are translated to
    model columns (unknown buckets dropped). Errors raised while reading surface here, in
    the caller's thread; a document too long to hash within ``max_memory`` (or the memory
    available) is one, naming its file and line. ``gate``: the hashers but the first
    start once it is open (work beside a thread that keeps a core: the test set hashed
    beside single-threaded epochs, whose first four ran 1.6x slower beside two hashers).
    """
    prepared: queue.Queue = queue.Queue(maxsize=prefetch)
    hashed: queue.Queue = queue.Queue(maxsize=prefetch + hashers)
    stop = threading.Event()
    window = _Window(prefetch + hashers)
    translator = None if remap is None else Translator(remap)  # shared by the hashers
    threads = [
        threading.Thread(
            target=_reader,
            args=(iter(docs), hasher, batch_docs, prepared, stop, max_memory),
            daemon=True,
            name="nbsvm-reader",
        ),
        *(
            threading.Thread(
                target=_hasher_stage,
                args=(prepared, hashed, hasher, translator, stop, window, gate if k else None),
                daemon=True,
                name=f"nbsvm-hasher-{k}",
            )
            for k in range(max(1, hashers))
        ),
    ]
    for t in threads:
        t.start()
    try:
        yield from _in_order(hashed, len(threads) - 1, window)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)


def _in_order(hashed: queue.Queue, hashers: int, window: _Window) -> Iterator[Batch]:
    """The batches of ``hashers`` hasher threads in their reader's order, until each has
    said :data:`DONE`; a failure is raised in its place in that order (after every batch
    before it). At most ``window.size`` batches wait here for an earlier one."""
    waiting: dict[int, Batch | Failure] = {}
    next_seq, done = 0, 0
    while done < hashers:
        item = hashed.get()
        if item is DONE:
            done += 1
            continue
        seq, batch = item
        waiting[seq] = batch
        while next_seq in waiting:
            found = waiting.pop(next_seq)
            if isinstance(found, Failure):
                raise found.exc
            window.advance()
            yield found
            next_seq += 1


def rows_of(batch: Batch, mask: np.ndarray) -> Batch:
    """The documents of ``batch`` where ``mask`` is true, in order."""
    lengths = np.diff(batch.offsets)
    offsets = np.zeros(int(mask.sum()) + 1, dtype=batch.offsets.dtype)
    np.cumsum(lengths[mask], out=offsets[1:])
    keep = np.flatnonzero(mask)
    return Batch(
        batch.ids[np.repeat(mask, lengths)],
        offsets,
        [batch.labels[i] for i in keep],
        [batch.sources[i] for i in keep],
        [batch.lines[i] for i in keep],
        None if batch.weights is None else batch.weights[keep],
    )
