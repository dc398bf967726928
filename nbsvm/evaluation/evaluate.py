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

from nbsvm.errors import NBSVMError
from nbsvm.data.features import Batch, CacheWriter, FeatureCache, hash_batches
from nbsvm.io.readers import Document
from nbsvm.io.labels import label_set
from nbsvm.evaluation.metrics import add_sums, confusion_matrix, multilabel_counts, multilabel_report, report
from nbsvm.models.nbsvm import NBSVMClassifier



class _Scorer:
    """Accumulates the confusion matrix and log loss batch by batch.

    True labels the model does not know (``unseen``) are errors whatever is predicted:
    each gets a row of the confusion matrix and a class of the report (recall 0), and the
    log loss is the mean over the documents of known labels (it has no value for others).
    """

    def __init__(self, model: NBSVMClassifier, scores_out: list | None = None):
        self.model = model
        self.scores_out = scores_out        # (true codes, scores) per batch, if a list
        k = len(model.classes_)
        self.index = {c: i for i, c in enumerate(model.classes_)}
        self.cm = np.zeros((k, k), dtype=np.int64)
        self.unseen: dict = {}               # label -> predictions per model class
        self.has_proba = model.has_proba()
        self._partials: list[float] = []       # exact running sum (Shewchuk), see _add
        self.n = 0
        self.n_known = 0

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

    def codes(self, batch: Batch) -> np.ndarray:
        """The batch's true class indices; -1 for a label the model does not know (a
        document without a label is an error naming it)."""
        out = np.empty(len(batch), dtype=np.int32)
        for i, label in enumerate(batch.labels):
            code = self.index.get(label)
            if code is None:
                if label is None:
                    raise NBSVMError("document has no label", **batch.where(i))
                code = -1
            out[i] = code
        return out

    def add(self, batch: Batch, truth: np.ndarray, columns: bool = False, names=None):
        """Score ``batch`` against ``truth`` (class indices, -1: a label the model does not
        know); ``names``: the label of each of ``batch.labels`` when they are codes."""
        scores = self.model.decision_batch(batch, columns=columns)
        pred = self.model.codes_for(list(self.model.labels_of(scores)))
        known = truth >= 0
        if not known.all():
            k = len(self.model.classes_)
            for i in np.flatnonzero(~known):
                label = batch.labels[i] if names is None else names[batch.labels[i]]
                row = self.unseen.setdefault(label, np.zeros(k, dtype=np.int64))
                row[pred[i]] += 1
            truth, pred, scores = truth[known], pred[known], scores[known]
        self.cm += confusion_matrix(truth, pred, len(self.model.classes_))
        if self.scores_out is not None:
            self.scores_out.append((np.asarray(truth, dtype=np.int32), scores))
        if self.has_proba and len(truth):
            proba = self.model.proba_of(scores)
            p_true = np.clip(proba[np.arange(len(truth)), truth], 1e-15, 1.0)
            for term in (-np.log(p_true)).tolist():
                self._add(term)
        self.n += len(batch)
        self.n_known += len(truth)

    def report(self) -> dict:
        if self.n == 0:
            raise NBSVMError("no documents to evaluate")
        classes, cm = list(self.model.classes_), self.cm
        if self.unseen:
            k, u = len(classes), len(self.unseen)
            cm = np.zeros((k + u, k + u), dtype=np.int64)
            cm[:k, :k] = self.cm
            for j, row in enumerate(self.unseen.values()):
                cm[k + j, :k] = row
            classes += list(self.unseen)
        rep = report(cm, classes)
        if self.has_proba and self.n_known:
            rep["log_loss"] = float(math.fsum(self._partials) / self.n_known)
        if self.unseen:
            rep["unseen_labels"] = {label: int(row.sum()) for label, row in self.unseen.items()}
        return rep


class _LabelSetScorer:
    """A multi-label model's :class:`_Scorer`: sums for
    :func:`~nbsvm.evaluation.metrics.multilabel_report` batch by batch.

    A true label the model does not know is a label of the report never predicted (each
    document holding it has a false negative, and its set cannot be exactly right).
    """

    def __init__(self, model: NBSVMClassifier):
        self.model = model
        self.index = {c: i for i, c in enumerate(model.classes_)}
        self.sums: dict | None = None
        self.unseen: dict = {}              # label -> documents holding it
        self.parsed: dict = {}              # key -> (known label indices, unknown labels)
        self.n = 0

    def _parse(self, key: str) -> tuple[list, list]:
        """A label field's known outputs and unknown labels, parsed once per distinct key
        (a corpus has few label sets and many documents)."""
        found = self.parsed.get(key)
        if found is None:
            labels = label_set(key)
            found = ([self.index[v] for v in labels if v in self.index],
                     [v for v in labels if v not in self.index])
            self.parsed[key] = found
        return found

    def add(self, batch: Batch, keys: list, columns: bool = False):
        """Score ``batch`` against ``keys``, each document's label field (``"a,b"``)."""
        scores = self.model.decision_batch(batch, columns=columns)
        truth = np.zeros(scores.shape, dtype=bool)
        missing = np.zeros(len(keys), dtype=np.int64)   # unknown true labels per document
        for i, key in enumerate(keys):
            if key is None:
                raise NBSVMError("document has no label", **batch.where(i))
            known, unknown = self._parse(key)
            truth[i, known] = True
            missing[i] = len(unknown)
            for label in unknown:
                self.unseen[label] = self.unseen.get(label, 0) + 1
        part = multilabel_counts(truth, scores > 0)
        part["wrong"] += int(missing.sum())
        part["exact"] -= int(((truth == (scores > 0)).all(axis=1) & (missing > 0)).sum())
        self.sums = add_sums(self.sums, part)
        self.n += len(batch)

    def parts(self) -> dict:
        """What the report is made of, to be summed with other shards' (:meth:`merge`)."""
        return {"sums": self.sums, "unseen": dict(self.unseen), "n": self.n}

    def merge(self, parts: dict) -> None:
        if parts["n"]:
            self.sums = add_sums(self.sums, parts["sums"])
        for label, n in parts["unseen"].items():
            self.unseen[label] = self.unseen.get(label, 0) + n
        self.n += parts["n"]

    def report(self) -> dict:
        if self.n == 0:
            raise NBSVMError("no documents to evaluate")
        sums, classes = dict(self.sums), list(self.model.classes_)
        if self.unseen:
            u = len(self.unseen)
            sums["tp"] = np.concatenate([sums["tp"], np.zeros(u, dtype=np.int64)])
            sums["fp"] = np.concatenate([sums["fp"], np.zeros(u, dtype=np.int64)])
            sums["fn"] = np.concatenate([sums["fn"], list(self.unseen.values())])
            classes += list(self.unseen)
        rep = multilabel_report(sums, classes)
        if self.unseen:
            rep["unseen_labels"] = dict(self.unseen)
        return rep


def headline(rep: dict) -> float:
    """A report's one figure: accuracy (multi-label: subset accuracy)."""
    return rep["accuracy"] if "accuracy" in rep else rep["subset_accuracy"]


def label_set_parts(model: NBSVMClassifier, docs: Iterable[Document]) -> dict:
    """A multi-label model's evaluation sums over ``docs``, to be merged with others'
    (:func:`label_set_report`): how Dask evaluates shards."""
    scorer = _LabelSetScorer(model)
    for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
        scorer.add(batch, batch.labels, columns=True)
    return scorer.parts()


def label_set_report(model: NBSVMClassifier, parts: list) -> dict:
    """The report of :func:`evaluate_documents` from :func:`label_set_parts` of shards."""
    scorer = _LabelSetScorer(model)
    for part in parts:
        scorer.merge(part)
    return scorer.report()


def evaluate_documents(model: NBSVMClassifier, docs: Iterable[Document],
                       callback: Callable[[dict], None] | None = None,
                       scores_out: list | None = None) -> dict:
    """Score labeled documents batch by batch; return :func:`nbsvm.evaluation.metrics.report`.

    A document whose label the model does not know counts as an error; such labels get a
    class of the report and are listed in ``unseen_labels`` (label -> documents).
    ``scores_out``: a list that receives ``(true class indices, decision scores)`` per batch
    for the documents of known labels (for ROC and precision-recall curves: 8 bytes per
    document and output are kept).
    """
    if model.multilabel:
        if scores_out is not None:
            raise NBSVMError("ROC and precision-recall plots are drawn for single-label "
                             "models")
        scorer = _LabelSetScorer(model)
        for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
            scorer.add(batch, batch.labels, columns=True)
            if callback:
                callback({"stage": "eval", "docs": scorer.n})
        return scorer.report()
    scorer = _Scorer(model, scores_out)
    # the hasher thread also maps buckets to model columns
    for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
        scorer.add(batch, scorer.codes(batch), columns=True)
        if callback:
            callback({"stage": "eval", "docs": scorer.n})
    return scorer.report()


def evaluate_cache(model: NBSVMClassifier, cache: FeatureCache,
                   callback: Callable[[dict], None] | None = None, columns: bool = False,
                   scores_out: list | None = None) -> dict:
    """Score the documents of a feature cache (hashed with the model's settings).

    ``columns``: the cache holds model columns already (translated when it was written).
    ``scores_out``: as in :func:`evaluate_documents`.
    """
    if cache.hasher != model.hasher_:
        raise NBSVMError("the cache was hashed with other settings than the model's",
                         path=str(cache.folder))
    if model.multilabel:
        scorer = _LabelSetScorer(model)
        for batch in cache.batches(2048):
            scorer.add(batch, [cache.labels[c] for c in batch.labels], columns)
            if callback:
                callback({"stage": "eval", "docs": scorer.n})
        return scorer.report()
    # a label the model does not know is an error of every document that has it
    to_class = np.array([model.classes_.index(label) if label in model.classes_ else -1
                         for label in cache.labels] or [0], dtype=np.int32)
    scorer = _Scorer(model, scores_out)
    for batch in cache.batches(2048):
        scorer.add(batch, to_class[np.asarray(batch.labels, dtype=np.int64)], columns,
                   names=cache.labels)
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


class EpochHistory:
    """Mean training loss and held-out accuracy per epoch (for
    :func:`nbsvm.evaluation.plot.training_curve`).

    :meth:`observe` takes training progress events: the last ``"epoch"`` event of an epoch
    carries the epoch's mean loss. :func:`fit_and_evaluate` fills ``test_accuracy``.
    """

    def __init__(self):
        self.loss: dict[int, float] = {}
        self.test_accuracy: dict[int, float] = {}

    def observe(self, event: dict) -> None:
        if event.get("stage") == "epoch":
            self.loss[event["epoch"]] = float(event["loss"])

    def as_dict(self) -> dict:
        """``{"epoch": [...], "loss": [...]}``, with ``"test_accuracy"`` (``None`` for an
        epoch without one) when there is a test set."""
        epochs = sorted(self.loss)
        out = {"epoch": epochs, "loss": [self.loss[e] for e in epochs]}
        if self.test_accuracy:
            out["test_accuracy"] = [self.test_accuracy.get(e) for e in epochs]
        return out


class _Counted:
    """Iterates ``docs`` one document ahead, so that ``total`` (their number) is known
    before the last one is handed on: a streamed epoch's last progress event is then the
    one with ``docs == total``."""

    def __init__(self, docs: Iterable[Document]):
        self.docs = docs
        self.total: int | None = None

    def __iter__(self):
        it = iter(self.docs)
        n = 0
        for prev in it:
            for doc in it:
                n += 1
                yield prev
                prev = doc
            self.total = n + 1
            yield prev
            return
        self.total = 0


def _accuracy_now(model: NBSVMClassifier, cache: FeatureCache, columns: bool) -> float:
    """Accuracy on ``cache`` of a model between two epochs, leaving its state as it is (the
    learner's SGD weight scale is not folded in as :meth:`LinearSGD.coef` would)."""
    from nbsvm.learners import _kernels

    before = model.__dict__.get("mean_abs_coef_")
    if model.interpolate == "weights" and model.beta != 1.0:
        learner = model.linear_
        model.mean_abs_coef_ = np.array([_kernels._mean_abs_weight(learner.S_[k])
                                         * learner.scale_of(k)
                                         for k in range(learner.n_outputs)])
    try:
        return headline(evaluate_cache(model, cache, columns=columns))
    finally:
        if before is None:
            model.__dict__.pop("mean_abs_coef_", None)
        else:
            model.mean_abs_coef_ = before


def fit_and_evaluate(model: NBSVMClassifier, train_docs: Iterable[Document],
                     test_docs: Iterable[Document], lexicon=None,
                     callback: Callable[[dict], None] | None = None,
                     max_memory=None, history: EpochHistory | None = None, **fit_kw) -> dict:
    """Fit on ``train_docs`` and evaluate on ``test_docs`` in one run (``fit_kw``: more
    arguments of :meth:`~nbsvm.NBSVMClassifier.fit_documents`, e.g. ``kept``).

    The test documents are read and hashed into a cache by a background thread while the
    training epochs run (the compiled kernels release the GIL, so both cores work), then
    scored from that cache. Returns the report, with ``timings`` added.

    ``history``: also record each epoch's mean training loss and the accuracy on the test
    set after each epoch. The test set is then hashed from the start and scored after every
    epoch but the last, whose value is the report's accuracy. Training is unchanged (the
    model is only read between epochs); the scoring adds to the training time.
    """
    hasher = model.validate()
    if model.cache_dir is not None:
        Path(model.cache_dir).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="nbsvm-test-", dir=model.cache_dir))
    worker = _BackgroundCache(test_docs, hasher, tmp / "test", callback)
    if history is not None:
        train_docs = counted = _Counted(train_docs)
    scored, waited, eval_time = set(), [0.0], [0.0]

    def start_worker():
        if not worker.is_alive() and worker.cache is None and worker.error is None:
            worker.remap = model.column_of_          # store model columns, not buckets
            worker.start()

    def epoch_done(epoch: int, epochs: int):
        if epoch in scored or epoch >= epochs:  # the last one: the report, after fit
            return
        scored.add(epoch)
        t = time.perf_counter()
        start_worker()
        worker.join()
        waited[0] += time.perf_counter() - t
        if worker.error is not None:
            raise worker.error
        t = time.perf_counter()
        history.test_accuracy[epoch] = _accuracy_now(
            model, worker.cache, columns=worker.remap is not None or model.column_of_ is None)
        eval_time[0] += time.perf_counter() - t

    def on_event(event):
        stage = event["stage"]
        if history is None:
            # hash the test set from the second epoch on: the lexicon pass and the first
            # epoch (which translates the cache to columns in a thread) keep both cores
            # busy, a later epoch keeps only one
            if stage == "epoch" and event["epoch"] >= 2:
                start_worker()
        elif stage in ("lexicon done", "epoch"):
            # scored after every epoch: hash it from the start (the columns are known)
            start_worker()
            if stage == "epoch":
                history.observe(event)
                total = event["total"] if event["total"] is not None else counted.total
                if total is not None and event["docs"] >= total:
                    epoch_done(event["epoch"], event["epochs"])
        elif stage == "epoch done":          # should the library ever say so itself
            epoch_done(event["epoch"], event.get("epochs", model.setting("epochs")))
        if callback and stage != "lexicon done":
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
                             columns=worker.remap is not None or model.column_of_ is None)
        t3 = time.perf_counter()
    finally:
        worker.stop.set()
        if worker.is_alive():
            worker.join(timeout=10)
        worker.cache = None
        shutil.rmtree(tmp, ignore_errors=True)
    # waiting for the test hashing: after training, and between epochs with ``history``
    rep["timings"] = dict(model.timings_, fit_s=t1 - t0, wait_test_hash_s=t2 - t1 + waited[0],
                          eval_s=t3 - t2)
    if history is not None:
        history.test_accuracy[model.setting("epochs")] = headline(rep)
        rep["timings"]["epoch_eval_s"] = eval_time[0]
    return rep


def predict_documents(model: NBSVMClassifier, docs: Iterable[Document]) -> Iterator["pd.DataFrame"]:
    """Yield one DataFrame per batch: ``source, line, [true_label,] label, score[, probability]``.

    For two classes ``score`` is the decision value for ``classes_[1]`` and ``probability``
    that class's probability; for more classes both are those of the predicted class.
    Multi-label: ``label`` is the predicted set (``"a,b"``), then ``probability_<label>``
    (or ``score_<label>`` for losses without probabilities) for every label.
    """
    import pandas as pd

    has_proba = model.has_proba()
    for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
        scores = model.decision_batch(batch, columns=True)
        labels = model.labels_of(scores)
        frame = {"source": batch.sources, "line": batch.lines}
        if any(label is not None for label in batch.labels):
            frame["true_label"] = batch.labels
        frame["label"] = labels
        if model.multilabel:            # every label's own score or probability
            values = model.proba_of(scores) if has_proba else scores
            for k, c in enumerate(model.classes_):
                frame[f"{'probability' if has_proba else 'score'}_{c}"] = values[:, k]
        elif scores.shape[1] == 1:
            frame["score"] = scores[:, 0]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[:, 1]
        else:
            best = np.argmax(scores, axis=1)
            frame["score"] = scores[np.arange(len(best)), best]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[np.arange(len(best)), best]
        yield pd.DataFrame(frame)
