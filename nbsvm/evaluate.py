"""Streaming evaluation and prediction with a fitted model (bounded memory), and training
with the test set hashed on the other core at the same time."""
from __future__ import annotations

import math
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from .errors import NBSVMError
from .features import Batch, CacheWriter, FeatureCache, hash_batches
from .io.readers import Document
from .metrics import confusion_matrix, report
from .nbsvm import NBSVMClassifier
from .online.losses import resolve_loss


class _Scorer:
    """Accumulates the confusion matrix and log loss batch by batch."""

    def __init__(self, model: NBSVMClassifier):
        self.model = model
        k = len(model.classes_)
        self.cm = np.zeros((k, k), dtype=np.int64)
        self.has_proba = resolve_loss(model.loss).has_proba
        self._partials: list[float] = []       # exact running sum (Shewchuk), see _add
        self.n = 0

    def _add(self, x: float):
        """Add ``x`` exactly, so the total does not depend on how documents were batched."""
        i = 0
        for y in self._partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                self._partials[i] = lo
                i += 1
            x = hi
        self._partials[i:] = [x]

    def add(self, batch: Batch, truth: np.ndarray, columns: bool = False):
        scores = self.model.decision_batch(batch, columns=columns)
        pred = self.model._codes_for(list(self.model.labels_of(scores)))
        self.cm += confusion_matrix(truth, pred, len(self.model.classes_))
        if self.has_proba:
            proba = self.model.proba_of(scores)
            p_true = np.clip(proba[np.arange(len(truth)), truth], 1e-15, 1.0)
            for term in (-np.log(p_true)).tolist():
                self._add(term)
        self.n += len(batch)

    def report(self) -> dict:
        if self.n == 0:
            raise NBSVMError("no documents to evaluate")
        ll_sum = math.fsum(self._partials)
        return report(self.cm, self.model.classes_, ll_sum if self.has_proba else None)


def evaluate_documents(model: NBSVMClassifier, docs: Iterable[Document],
                       callback: Callable[[dict], None] | None = None) -> dict:
    """Score labeled documents batch by batch; return :func:`nbsvm.metrics.report`."""
    scorer = _Scorer(model)
    # the hasher thread also maps buckets to model columns
    for batch in hash_batches(docs, model.hasher_, remap=model._remap):
        scorer.add(batch, model._codes_for(batch.labels, batch), columns=True)
        if callback:
            callback({"stage": "eval", "docs": scorer.n})
    return scorer.report()


def evaluate_cache(model: NBSVMClassifier, cache: FeatureCache,
                   callback: Callable[[dict], None] | None = None, columns: bool = False) -> dict:
    """Score the documents of a feature cache (hashed with the model's settings).

    ``columns``: the cache holds model columns already (translated when it was written).
    """
    if cache.hasher != model.hasher_:
        raise NBSVMError("the cache was hashed with other settings than the model's",
                         path=str(cache.folder))
    model.check_labels(cache.labels, cache.first_seen)
    to_class = np.array([model.classes_.index(label) for label in cache.labels] or [0],
                        dtype=np.int32)
    scorer = _Scorer(model)
    for batch in cache.batches(2048):
        scorer.add(batch, to_class[np.asarray(batch.labels, dtype=np.int64)], columns)
        if callback:
            callback({"stage": "eval", "docs": scorer.n})
    return scorer.report()


class _BackgroundCache(threading.Thread):
    """Hashes documents into a feature cache in a thread of its own."""

    def __init__(self, docs, hasher, folder: Path, callback=None):
        super().__init__(daemon=True, name="nbsvm-test-hasher")
        self.docs, self.hasher, self.folder, self.callback = docs, hasher, folder, callback
        self.remap = None
        self.cache: FeatureCache | None = None
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self):
        try:
            with CacheWriter(self.folder, self.hasher) as writer:
                n = 0
                for batch in hash_batches(self.docs, self.hasher, remap=self.remap):
                    if self.stop.is_set():
                        raise KeyboardInterrupt
                    writer.add(batch)
                    n += len(batch)
                    if self.callback:
                        self.callback({"stage": "hash test", "docs": n})
                self.cache = writer.close()
        except BaseException as e:      # re-raised by fit_and_evaluate in the main thread
            self.error = e


def fit_and_evaluate(model: NBSVMClassifier, train_docs: Iterable[Document],
                     test_docs: Iterable[Document], lexicon=None,
                     callback: Callable[[dict], None] | None = None,
                     max_memory=None, **fit_kw) -> dict:
    """Fit on ``train_docs`` and evaluate on ``test_docs`` in one run (``fit_kw``: more
    arguments of :meth:`~nbsvm.NBSVMClassifier.fit_documents`, e.g. ``kept``).

    The test documents are read and hashed into a cache by a background thread while the
    training epochs run (the compiled kernels release the GIL, so both cores work), then
    scored from that cache. Returns the report, with ``timings`` added.
    """
    hasher = model._validate()
    if model.cache_dir is not None:
        Path(model.cache_dir).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="nbsvm-test-", dir=model.cache_dir))
    worker = _BackgroundCache(test_docs, hasher, tmp / "test", callback)
    def on_event(event):
        # hash the test set from the second epoch on: the lexicon pass and the first epoch
        # (which translates the cache to columns in a thread) keep both cores busy, a later
        # epoch keeps only one
        if event["stage"] == "epoch" and event["epoch"] >= 2 and not worker.is_alive() \
                and worker.cache is None and worker.error is None:
            worker.remap = model._remap          # store model columns, not buckets
            worker.start()
        if callback and event["stage"] != "lexicon done":
            callback(event)

    try:
        t0 = time.perf_counter()
        model.fit_documents(train_docs, lexicon=lexicon, callback=on_event,
                            max_memory=max_memory, **fit_kw)
        if not worker.is_alive() and worker.cache is None and worker.error is None:
            worker.start()
        t1 = time.perf_counter()
        worker.join()
        if worker.error is not None:
            raise worker.error
        t2 = time.perf_counter()
        rep = evaluate_cache(model, worker.cache, callback,
                             columns=worker.remap is not None or model._remap is None)
        t3 = time.perf_counter()
    finally:
        worker.stop.set()
        if worker.is_alive():
            worker.join(timeout=10)
        worker.cache = None
        shutil.rmtree(tmp, ignore_errors=True)
    rep["timings"] = dict(model.timings_, fit_s=t1 - t0, wait_test_hash_s=t2 - t1, eval_s=t3 - t2)
    return rep


def predict_documents(model: NBSVMClassifier, docs: Iterable[Document]) -> Iterator["pd.DataFrame"]:
    """Yield one DataFrame per batch: ``source, line, [true_label,] label, score[, probability]``.

    For two classes ``score`` is the decision value for ``classes_[1]`` and ``probability``
    that class's probability; for more classes both are those of the predicted class.
    """
    import pandas as pd

    has_proba = resolve_loss(model.loss).has_proba
    for batch in hash_batches(docs, model.hasher_, remap=model._remap):
        scores = model.decision_batch(batch, columns=True)
        labels = model.labels_of(scores)
        frame = {"source": batch.sources, "line": batch.lines}
        if any(label is not None for label in batch.labels):
            frame["true_label"] = batch.labels
        frame["label"] = labels
        if scores.shape[1] == 1:
            frame["score"] = scores[:, 0]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[:, 1]
        else:
            best = np.argmax(scores, axis=1)
            frame["score"] = scores[np.arange(len(best)), best]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[np.arange(len(best)), best]
        yield pd.DataFrame(frame)
