"""A served model that keeps learning (``nbsvm serve --learn``).

``POST /models/NAME/learn`` takes labelled texts. Each request is appended to a journal
beside the model file (``MODEL.npz.journal.jsonl``), flushed and fsynced, before it is
acknowledged (202): what was acknowledged survives a crash. One writer thread takes the
queued examples in batches, copies the served model, trains the copy by ``partial_fit``
(the NB counts, ratios and weights together, as :mod:`nbsvm.models.partial` says) and swaps
it in (:meth:`~nbsvm.serve.registry.ModelRegistry.swap`): requests in flight finish on the
version they started with, none sees a half-updated model. Each applied batch is journalled
too (the sequence numbers it covers), so a replay groups the examples as the server did.

Every ``checkpoint_every`` examples or ``checkpoint_seconds`` the model file is written
(atomically: temporary name, rename), its history recording the journal's last sequence in
it. When the journal is started, the file as trained is kept as ``MODEL.npz.initial.npz``
(:mod:`nbsvm.serve.journal`).
On start the journal's batches after that sequence are applied again, in their groups, then
the acknowledged examples no batch took: the model equals the initial one trained by
``partial_fit`` on the journal's batches in order.
"""

from __future__ import annotations

import copy
import hmac
import logging
import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbsvm.errors import Diverged, NBSVMError, shown_some
from nbsvm.io.decoding import valid_unicode
from nbsvm.io.labels import label_set
from nbsvm.learners.epochs import NO_WEIGHTS
from nbsvm.models import history
from nbsvm.models.partial import check_learnable, partial_fit
from nbsvm.serve.journal import Journal, file_sha256, initial_path, journal_path
from nbsvm.serve.registry import hide_paths

if TYPE_CHECKING:
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.serve.registry import ModelRegistry

__all__ = ["LearnSettings", "OnlineModel", "initial_path", "journal_path", "learning_copy"]


@dataclass(frozen=True)
class LearnSettings:
    """``token``: what ``Authorization: Bearer`` must carry; a batch applies at most
    ``batch`` examples; the file is written every ``checkpoint_every`` examples or
    ``checkpoint_seconds``; more than ``max_pending`` examples or ``max_pending_chars``
    characters of text waiting: 503.
    ``validation``: labelled texts scored at every checkpoint (accuracy; for a multi-label
    model, the share of texts whose whole label set is right)."""

    token: str
    batch: int = 1000
    checkpoint_every: int = 1000
    checkpoint_seconds: float = 60.0
    max_pending: int = 100_000
    max_pending_chars: int = 64 << 20
    validation: tuple[list[str], list[str]] | None = None

    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries the token (compared in constant
        time)."""
        scheme, _, given = (header or "").strip().partition(" ")
        token = self.token.strip()
        return (
            scheme.lower() == "bearer"
            and bool(token)
            and hmac.compare_digest(given.strip().encode(), token.encode())
        )


#: what ``partial_fit`` changes in place (:mod:`nbsvm.models.partial`): copied for each
#: batch. The rest (the bucket -> column map, the hasher, the n-gram map: 64 MB and more at
#: 2**24 buckets) is shared with the served version, which never changes.
MUTABLE = ("linear_", "lexicon_", "backend_", "history_")


def learning_copy(model: NBSVMClassifier) -> NBSVMClassifier:
    """A copy of ``model`` that ``partial_fit`` may train without touching ``model``."""
    new = copy.copy(model)
    for name in MUTABLE:
        if name in model.__dict__:
            new.__dict__[name] = copy.deepcopy(model.__dict__[name])
    return new


def last_learned(model: NBSVMClassifier) -> dict | None:
    """The model's last ``learn`` event (None: it never learned over HTTP)."""
    for entry in reversed(model.__dict__.get("history_", [])):
        if entry.get("event") == "learn":
            return entry
    return None


def learned_through(model: NBSVMClassifier) -> int:
    """The journal's last sequence number the model holds (-1: none)."""
    entry = last_learned(model)
    return -1 if entry is None else int(entry.get("through", -1))


def check_journal(
    model: NBSVMClassifier,
    path: str,
    journal: Journal,
    requests: dict[int, dict],
    applied: list[tuple[int, int]],
) -> None:
    """Refuse a journal that is not this model's: one whose learned model names another
    journal, or, where the model never learned and the journal holds ``requests``, whose
    first model is not this file (trained again to the same path, say); and this model's
    journal when it ends before the requests the model learned with it."""
    used = bool(requests)
    entry = last_learned(model)
    # a journal that started from the file as it is now (a new one, after the journal the
    # file learned with was lost) replays onto it, whatever journal the file names
    if (
        entry is not None
        and entry.get("journal") != journal.id
        and journal.header.get("initial_sha256") != file_sha256(path)
    ):
        raise NBSVMError(
            f"{path} learned with journal {entry.get('journal')}, not with {journal.path} "
            f"({journal.id}): move that journal away, or serve the model it belongs to"
        )
    if entry is not None and entry.get("journal") == journal.id:
        held = max(max(requests, default=-1), max((b for _, b in applied), default=-1))
        if held < int(entry.get("through", -1)):  # (cut by hand, or restored from a backup)
            raise NBSVMError(
                f"{journal.path} ends at request {held}, but {path} learned through request "
                f"{entry['through']} with it: the journal lost requests, and the model could "
                f"not be rebuilt from {initial_path(path).name} and it; restore the journal, "
                "or move both away to learn afresh"
            )
    if entry is None and used and file_sha256(path) != journal.header.get("initial_sha256"):
        raise NBSVMError(
            f"{journal.path} started from another model than {path} (trained again?): move "
            f"the journal and {initial_path(path).name} away to learn afresh"
        )


class OnlineModel:
    """One served model that learns: the journal, the queue and the writer thread."""

    def __init__(self, registry: ModelRegistry, name: str, settings: LearnSettings):
        self.registry, self.name, self.settings = registry, name, settings
        self.path = registry.paths[name]
        check_learnable(registry.get(name).model)  # at start, not in the thread's first step
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()  # sequence numbers and journal order
        self._stop = threading.Event()
        self.pending = 0  # examples acknowledged, not yet in the served model
        self.pending_chars = 0
        self.failure: str | None = None
        self.refused = 0  # examples whose batch made the weights not finite (not learned)
        self.validation: dict | None = None
        served = registry.get(name)
        self._written = file_identity(self.path)  # the file as served: none else is written over
        if self._written is None or (self._written[3], self._written[2]) != served.stamp:
            raise NBSVMError(
                f"{self.path} changed since it was loaded to be served: serve it again to "
                "learn into it"
            )
        self.journal = Journal(self.path)
        try:
            requests, applied = self.journal.read()  # once: it holds every text ever posted
            check_journal(registry.get(name).model, self.path, self.journal, requests, applied)
            self.seq = self._replay(requests, applied)
        except BaseException:
            self.journal.close()
            raise
        self.checkpointed = learned_through(registry.get(name).model)
        self._validate(registry.get(name).model)
        self._since_checkpoint, self._checkpoint_at = 0, time.monotonic()
        self._thread = threading.Thread(target=self._run, name=f"learn-{name}", daemon=True)
        self._thread.start()

    # -- start: the journal's batches after the file's last sequence ------------------------
    def _replay(self, requests: dict[int, dict], applied: list[tuple[int, int]]) -> int:
        """Apply what the journal holds beyond the model file; return the last sequence."""
        model = self.registry.get(self.name).model
        done = learned_through(model)
        groups = [(a, b) for a, b in applied if b > done]
        covered = max([b for _, b in applied], default=-1)
        rest = sorted(s for s in requests if s > max(done, covered))
        if not groups and not rest:
            return max(max(requests, default=-1), done)
        for first, last in groups:
            model = self._replayed(model, [requests[s] for s in range(first, last + 1)])
        for part in _parts(rest, requests, self.settings.batch):  # acknowledged, never applied
            model = self._replayed(model, [requests[s] for s in part])
            self.journal.append({"applied": [part[0], part[-1]]})
        self._save(model)
        return max(requests)

    # -- requests ---------------------------------------------------------------------------
    def submit(
        self, texts: list[str], labels: list[Any], weights: list[float] | None = None
    ) -> dict:
        """Journal one request and queue it; its sequence number and what is waiting.
        Labels the model could not learn are refused (422) before anything is written.
        ``weights``: each text's (None: 1 each), as ``partial_fit``'s ``sample_weight``."""
        model = self.registry.get(self.name).model
        labels = learnable_labels(model, labels)
        if weights is not None and model.backend_learner is not None:
            # refused before it is journalled: the writer, and every replay, would fail on it
            raise NBSVMError(NO_WEIGHTS)
        texts = [valid_unicode(t) for t in texts]  # lone surrogates: U+FFFD, as predict
        chars = sum(map(len, texts))
        if self.failure is not None:  # (answered without the server's paths)
            raise RuntimeError(
                hide_paths(
                    self.failure,
                    {self.path: f"{self.name}'s file", str(self.journal.path): "its journal"},
                )
            )
        with self._lock:
            if (
                self.pending + len(texts) > self.settings.max_pending
                or self.pending_chars + chars > self.settings.max_pending_chars
            ):
                raise OverflowError(
                    f"{self.pending} examples ({self.pending_chars} characters) are waiting "
                    "to be learned"
                )
            record = {"seq": self.seq + 1, "texts": texts, "labels": labels}
            if weights is not None:
                record["weights"] = [float(w) for w in weights]
            try:
                self.journal.append(record)
            except OSError as e:  # a full disk: nothing acknowledged, nothing numbered
                raise RuntimeError(f"the journal could not be written: {e}") from None
            self.seq += 1
            self.pending += len(texts)
            self.pending_chars += chars
            self._queue.put((record, chars))
            return {
                "model": self.name,
                "accepted": len(texts),
                "sequence": self.seq,
                "pending": self.pending,
            }

    def state(self) -> dict:
        """What ``GET /models/NAME`` adds: examples learned, waiting, sequence numbers."""
        model = self.registry.get(self.name).model
        learned = sum(
            int(e.get("documents", 0))
            for e in model.__dict__.get("history_", [])
            if e.get("event") == "learn"
        )
        return {
            "learned": learned,
            "pending": self.pending,
            "last_sequence": self.seq,
            "checkpointed_sequence": self.checkpointed,
            "refused": self.refused,
            "stopped": self.failure is not None,
            "validation": self.validation,
        }

    def _validate(self, model: NBSVMClassifier) -> None:
        """Score the validation texts (if given) with ``model``; kept for :meth:`state`."""
        if self.settings.validation is None:
            return
        texts, labels = self.settings.validation
        self.validation = {
            "accuracy": model.score(texts, labels),
            "documents": len(texts),
            "sequence": learned_through(model),
        }

    # -- the writer -------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                try:
                    first = self._queue.get(timeout=0.2)
                except queue.Empty:
                    self._checkpoint_if_due()
                    continue
                batch, n = [first], len(first[0]["texts"])
                while n < self.settings.batch:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    batch.append(item)
                    n += len(item[0]["texts"])
                self._apply(batch)
                self._checkpoint_if_due()
            except Exception as e:  # noqa: BLE001 (kept: the server answers 503 from now)
                self.failure = f"learning stopped: {type(e).__name__}: {e}"
                _log().error("model %s: %s", self.name, self.failure)  # the server's log
                return

    def _apply(self, batch: list[tuple[dict, int]]) -> None:
        """Learn the queued ``(record, characters)`` in one batch and serve the result."""
        records = [record for record, _ in batch]
        model = self._learn(self.registry.get(self.name).model, records)
        self.journal.append({"applied": [records[0]["seq"], records[-1]["seq"]]})
        self.registry.swap(self.name, model)
        n = sum(len(r["texts"]) for r in records)
        with self._lock:
            self.pending -= n
            self.pending_chars -= sum(c for _, c in batch)
        self._since_checkpoint += n

    def _replayed(self, model: NBSVMClassifier, records: list[dict]) -> NBSVMClassifier:
        """:meth:`_learn` of journalled records; what the model cannot learn (a label an
        edited journal gave it) said naming the journal and the requests."""
        try:
            return self._learn(model, records)
        except NBSVMError as e:
            first, last = records[0]["seq"], records[-1]["seq"]
            raise NBSVMError(
                f"the journal's requests {first}-{last} cannot be learned: {e.message}",
                path=str(self.journal.path),
            ) from None

    def _learn(self, served: NBSVMClassifier, records: list[dict]) -> NBSVMClassifier:
        """A copy of ``served`` trained on the records' examples, in order, as one batch."""
        texts = [t for r in records for t in r["texts"]]
        labels = [y for r in records for y in r["labels"]]
        weights = [w for r in records for w in r.get("weights") or [1.0] * len(r["texts"])]
        model = learning_copy(served)
        try:
            partial_fit(model, texts, labels, sample_weight=weights)
            blown = not model.linear_.finite()
        except Diverged:  # (a backend learner's)
            blown = True
        if blown:  # refused, as its replay will refuse it: the served model stays
            first, last = records[0]["seq"], records[-1]["seq"]
            self.refused += len(texts)
            _log().warning(
                "model %s: requests %d-%d (%d examples) not learned: they made its weights "
                "not finite (weights or values too large for its steps)",
                self.name, first, last, len(texts),
            )  # fmt: skip
            return served
        history.record(
            model,
            "learn",
            len(texts),
            journal=self.journal.id,
            through=int(records[-1]["seq"]),
        )
        return model

    def _checkpoint_if_due(self) -> None:
        due = self._since_checkpoint >= self.settings.checkpoint_every or (
            self._since_checkpoint
            and time.monotonic() - self._checkpoint_at >= self.settings.checkpoint_seconds
        )
        if due:
            self.checkpoint()

    def checkpoint(self) -> None:
        """Write the served model to its file (atomically) and note what it holds."""
        model = self.registry.get(self.name).model
        self._save(model)
        self._validate(model)  # (before the sequence says so: a reader of the state saw
        self.checkpointed = learned_through(model)  # the new sequence, the old validation)
        self._since_checkpoint, self._checkpoint_at = 0, time.monotonic()

    def _save(self, model: NBSVMClassifier) -> None:
        """Write ``model`` over the file, unless the file is no longer the one served or
        last written here (trained again, copied over): that is refused, and learning
        stops, the acknowledged requests kept in the journal."""
        if file_identity(self.path) != self._written:
            raise NBSVMError(
                f"{self.path} was replaced on disk since it was served or last written: it "
                f"is not written over; what was learned is kept in {self.journal.path} "
                "(serve the model it belongs to, or move it away to learn afresh)"
            )
        model.save(self.path)
        self._written = file_identity(self.path)
        if self.registry.get(self.name).model is not model:  # the replay's: serve it
            self.registry.swap(self.name, model)

    def close(self) -> None:
        """Stop the writer after the batch in hand; write what it learned (unless the file
        was replaced: then said in the server's log, and nothing is written)."""
        self._stop.set()
        self._thread.join()
        if self.failure is None:
            try:
                self.checkpoint()
            except NBSVMError as e:
                self.failure = f"learning stopped: {e}"
                _log().error("model %s: %s", self.name, self.failure)  # the server's log
        self.journal.close()


def _log() -> logging.Logger:
    return logging.getLogger("uvicorn.error")  # the server's log


def file_identity(path: str) -> tuple[int, ...] | None:
    """What tells one file at ``path`` from another written there (an atomic rename makes a
    new inode; a copy over it changes its size or modification time); None when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _parts(seqs: list[int], requests: dict[int, dict], most: int) -> list[list[int]]:
    """``seqs`` in runs of at most ``most`` examples (a run holds one request at least)."""
    parts: list[list[int]] = []
    n = 0
    for s in seqs:
        size = len(requests[s]["texts"])
        if not parts or n + size > most:
            parts.append([])
            n = 0
        parts[-1].append(s)
        n += size
    return parts


def learnable_labels(model: NBSVMClassifier, labels: list[Any]) -> list[Any]:
    """The labels as the model names them (JSON numbers and bools: ``1.0`` is the class of
    ``1``; multi-label: a list of names per text), for the journal; refused as
    ``partial_fit`` would refuse them: a list for a single-label model, a class the model
    does not know."""
    if not model.multilabel and any(isinstance(y, list) for y in labels):
        raise NBSVMError("this model takes one label per text, not a list")
    if model.multilabel:
        labels = [
            label_set(key)
            for key in model.names_of(y if isinstance(y, list) else [y] for y in labels)
        ]
        flat = [v for y in labels for v in y]
    else:
        labels = flat = model.names_of(labels)
    known = {str(c) for c in model.class_names_}
    unknown = sorted(set(flat) - known)
    if unknown:
        raise NBSVMError(
            f"unknown label(s) {shown_some(unknown)}; the model's classes: "
            f"{', '.join(sorted(known))} (a served model learns no new class)"
        )
    return labels
