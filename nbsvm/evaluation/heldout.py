"""Training with a held-out test set hashed on the other core at the same time
(:func:`fit_and_evaluate`), and the training curve it can record (:class:`EpochHistory`:
mean training loss and held-out accuracy per epoch).
"""

from __future__ import annotations

import concurrent.futures
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nbsvm.data.batches import hash_batches
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.data.store import cache_folder
from nbsvm.errors import NBSVMError, TestSetError
from nbsvm.evaluation.evaluate import evaluate_cache
from nbsvm.evaluation.scoring import headline
from nbsvm.io.document import Document

if TYPE_CHECKING:  # the estimator is above: it is only passed in
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.models.nbsvm import NBSVMClassifier


class _BackgroundCache(threading.Thread):
    """Hashes documents into a feature cache in a thread of its own."""

    def __init__(self, docs, hasher, folder: Path, callback=None):
        super().__init__(daemon=True, name="nbsvm-test-hasher")
        self.docs, self.hasher, self.folder, self.callback = docs, hasher, folder, callback
        self.remap: np.ndarray | None = None
        self.cache: FeatureCache | None = None
        self.error: BaseException | None = None
        self.stop = threading.Event()
        # the second hasher waits for this: until someone waits for the cache, the test
        # set is hashed beside the epochs on what one core leaves (they keep the other)
        self.needed = threading.Event()

    def run(self):
        try:
            with CacheWriter(self.folder, self.hasher) as writer:
                n = 0
                batches = hash_batches(self.docs, self.hasher, remap=self.remap, gate=self.needed)
                for batch in batches:
                    if self.stop.is_set():
                        raise KeyboardInterrupt
                    writer.add(batch)
                    n += len(batch)
                    if self.callback:
                        self.callback({"stage": "hash test", "docs": n})
                self.cache = writer.close()
        except BaseException as e:  # re-raised by fit_and_evaluate in the main thread
            self.error = e


class EpochHistory:
    """Mean training loss and held-out accuracy per epoch (for
    :func:`nbsvm.evaluation.plot.training_curve`).

    :meth:`observe` takes training progress events: the last ``"epoch"`` event of an epoch
    carries the epoch's mean loss. :func:`fit_and_evaluate` fills ``test_accuracy``.
    """

    def __init__(self) -> None:
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
        # a callable gives the documents afresh (calibrate='auto' reads them again)
        it = iter(self.docs() if callable(self.docs) else self.docs)
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


def accuracy_now(
    model: NBSVMClassifier, cache: FeatureCache, columns: bool, weighted: bool = False
) -> float:
    """Accuracy on ``cache`` of a model between two epochs, leaving its state as it is (the
    learner's SGD weight scale is not folded in as :meth:`LinearSGD.coef` would); with
    ``weighted``, weighted documents count their weights (a multi-label model's micro-F1
    counts each once), as early stopping scores them."""
    from nbsvm.learners.kernels import table

    before = model.__dict__.get("mean_abs_coef_")
    if model.interpolate == "weights" and model.beta != 1.0:
        learner = model.linear_
        model.mean_abs_coef_ = np.array(
            [
                table._mean_abs_weight(learner.S_[k]) * learner.scale_of(k)
                for k in range(learner.n_outputs)
            ]
        )
    try:
        if not (weighted and cache.weighted) or model.multilabel:
            return headline(evaluate_cache(model, cache, columns=columns))
        # weighted documents count their weights, as scikit-learn's validation score
        correct: list = []
        evaluate_cache(model, cache, columns=columns, correct_out=correct)
        weights = cast(np.ndarray, cache.weights(0, cache.n_docs))  # weighted: not None
        right = float(np.dot(weights, np.concatenate(correct)))
        return right / float(weights.sum()) if weights.sum() > 0 else 0.0
    finally:
        if before is None:
            model.__dict__.pop("mean_abs_coef_", None)
        else:
            model.mean_abs_coef_ = before


class _HeldOutSet:
    """The test set hashed alongside training (:func:`fit_and_evaluate`): when its hashing
    thread starts, the held-out accuracy after each epoch (with a history), and the time
    spent waiting for it and scoring between epochs.

    :meth:`on_event` takes the training progress events (and hands them on to
    ``callback``).
    """

    def __init__(
        self,
        model: NBSVMClassifier,
        worker: _BackgroundCache,
        history: EpochHistory | None,
        counted: _Counted | None,
        callback: Callable[[dict], None] | None,
    ):
        self.model, self.worker, self.history = model, worker, history
        self.counted, self.callback = counted, callback
        self.scored: set = set()
        # calibrate='sigmoid'|'isotonic'|'temperature' trains this model twice, on nine
        # tenths and then on all: its columns are known only in the last fit, so the test
        # set is hashed into buckets (mapped when scored) and the first fit's epoch scores
        # are dropped (the columns of the first fit scored the last one at chance)
        self.refits = model.calibrate not in (None, "auto")
        self.failed = False  # the test set could not be scored between epochs
        self.waited = 0.0  # waiting for the test hashing between epochs
        self.eval_time = 0.0  # scoring the test set between epochs

    def idle(self) -> bool:
        """Whether the hashing thread has not started yet."""
        worker = self.worker
        return not worker.is_alive() and worker.cache is None and worker.error is None

    def start(self, columns: bool = True) -> None:
        """Start hashing the test set unless it has started: into model columns (known once
        the lexicon pass is done), or with ``columns=False`` into buckets."""
        if self.idle():
            if columns and not self.refits:
                self.worker.remap = self.model.column_of_  # store model columns, not buckets
            self.worker.start()

    def _join(self) -> None:
        """Wait for the hashing thread to end, every hasher at work."""
        self.worker.needed.set()
        self.worker.join()

    def wait(self) -> FeatureCache:
        """The test set's cache, once hashed (what the thread raised is raised here)."""
        self._join()
        if self.worker.error is not None:
            raise self.worker.error
        assert self.worker.cache is not None  # the thread ended: a cache, or an error
        return self.worker.cache

    def columns(self) -> bool:
        """Whether the cache holds model columns (else buckets, mapped when scored)."""
        return self.worker.remap is not None or self.model.column_of_ is None

    def score_epoch(self, epoch: int, epochs: int) -> None:
        """Record the held-out accuracy after ``epoch`` (not the last one: the report, after
        fit, gives it)."""
        if epoch in self.scored or epoch >= epochs or self.failed:
            return
        self.scored.add(epoch)
        t = time.perf_counter()
        self.start()
        self._join()
        self.waited += time.perf_counter() - t
        t = time.perf_counter()
        try:
            if self.worker.error is not None:
                raise self.worker.error
            # on_event scores epochs only with a history; the thread ended: a cache
            assert self.history is not None and self.worker.cache is not None
            self.history.test_accuracy[epoch] = accuracy_now(
                self.model, self.worker.cache, columns=self.columns()
            )
        except NBSVMError:
            # the test set's own error: the training goes on and is saved; the scoring
            # after it meets the error again and says so (it threw the model away here)
            self.failed = True
        self.eval_time += time.perf_counter() - t

    def on_event(self, event: dict) -> None:
        stage = event["stage"]
        history = self.history
        if stage == "lexicon done" and self.refits:  # a fit starts: the last one counts
            self.scored.clear()
            if history is not None:
                history.loss.clear()
                history.test_accuracy.clear()
        if stage == "columns" and event.get("dense"):
            # every bucket a column: the learner about to be filled is most of the memory,
            # and the test set's hashing beside an epoch would add its buffers to it. Hash
            # it now, while only the count rows are held (its buckets are the columns).
            t = time.perf_counter()
            self.start(columns=False)
            self._join()
            self.waited += time.perf_counter() - t
        elif history is None:
            # hash the test set from the second epoch on: the lexicon pass and the first
            # epoch (which translates the cache to columns in a thread) keep both cores
            # busy, a later epoch keeps only one
            if stage == "epoch" and event["epoch"] >= 2:
                self.start()
        elif stage in ("lexicon done", "epoch"):
            # scored after every epoch: hash it from the start (the columns are known)
            self.start()
            if stage == "epoch":
                history.observe(event)
                # fit_and_evaluate counts the documents whenever it keeps a history
                counted = cast(_Counted, self.counted)
                total = event["total"] if event["total"] is not None else counted.total
                if total is not None and event["docs"] >= total:
                    self.score_epoch(event["epoch"], event["epochs"])
        elif stage == "epoch done":  # should the library ever say so itself
            self.score_epoch(event["epoch"], event.get("epochs", self.model.setting("epochs")))
        if self.callback and stage != "lexicon done":
            self.callback(event)

    def close(self) -> None:
        """Stop the hashing thread (if it still runs) and drop the cache."""
        self.worker.stop.set()
        self.worker.needed.set()  # a gated hasher sees the stop only once it starts
        if self.worker.is_alive():
            self.worker.join(timeout=10)
        self.worker.cache = None


class Abandoned(BaseException):
    """Raised in the work beside the scoring (:class:`_Beside`) when the scoring ended in an
    error (Ctrl-C, or another than the test set's): the model must not replace the output
    (the message of an interrupted command says nothing was written over a file)."""


class _Beside:
    """``with _Beside(work) as beside:`` runs ``work(proceed)`` (None: nothing) in a thread
    beside the block; ``proceed()`` waits for the block to call :meth:`go_on` (and then
    returns) or to end without it (and then raises :class:`Abandoned`). On the way out the
    work is waited for, and its error raised (over the block's, which becomes its
    context), :class:`Abandoned` aside. Interrupted while it waits (a second Ctrl-C, or
    SIGTERM's timer) before the work is past ``proceed``, the go-ahead is withdrawn and
    the work (writing its temporary file) waited for, then the interrupt raised: the CLI
    ends the process at once, which killed the work mid-write (its temporary file left,
    or the output replaced after 'nothing was written'). Past ``proceed`` (writing
    through a pipe, which may never drain, or renaming), or interrupted again, the
    interrupt is raised at once."""

    def __init__(self, work: Callable[[Callable[[], None]], object] | None):
        self.work = work
        self.pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._decided = threading.Event()
        self._lock = threading.Lock()
        self._go_on = self._passed = False

    def proceed(self) -> None:
        self._decided.wait()
        with self._lock:
            if not self._go_on:
                raise Abandoned()
            self._passed = True

    def go_on(self) -> None:
        with self._lock:
            self._go_on = True
        self._decided.set()

    def _withdraw(self) -> bool:
        """Take the go-ahead back; whether in time (the work not past ``proceed``)."""
        with self._lock:
            if not self._passed:
                self._go_on = False
        self._decided.set()
        return not self._passed

    def __enter__(self) -> _Beside:
        if self.work is not None:
            self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nbsvm-beside")
            self.future = self.pool.submit(self.work, self.proceed)
        return self

    def __exit__(self, *exc: object) -> None:
        self._decided.set()  # without go_on: abandoned
        if self.pool is None:
            return
        interrupt: BaseException | None = None
        while not self.future.done():
            try:
                concurrent.futures.wait([self.future])
            except BaseException as e:
                if interrupt is not None or not self._withdraw():
                    self.pool.shutdown(wait=False)
                    raise
                interrupt = e  # raised below, once the withdrawn work has ended
        self.pool.shutdown(wait=True)
        if interrupt is not None:
            raise interrupt
        error = self.future.exception()
        if error is not None and not isinstance(error, Abandoned):
            raise error


def fit_and_evaluate(
    model: NBSVMClassifier,
    train_docs: Iterable[Document],
    test_docs: Iterable[Document],
    lexicon: NBLexicon | None = None,
    callback: Callable[[dict], None] | None = None,
    max_memory: int | str | None = None,
    history: EpochHistory | None = None,
    beside_eval: Callable[[Callable[[], None]], object] | None = None,
    **fit_kw: Any,
) -> dict:
    """Fit on ``train_docs`` and evaluate on ``test_docs`` in one run (``fit_kw``: more
    arguments of :meth:`~nbsvm.NBSVMClassifier.fit_documents`, e.g. ``kept``).
    ``beside_eval(proceed)``: called in a thread once the model is fitted, while the test
    set is scored (saving the model: both only read it); ``proceed()`` returns once the
    scoring is done or failed on the test set (the model is kept all the same), and
    raises :class:`Abandoned` after any other end (Ctrl-C: nothing may replace a file).
    The work's error is raised over the scoring's.

    The test documents are read and hashed into a cache by a background thread while the
    training epochs run (the compiled kernels release the GIL, so both cores work), then
    scored from that cache. Returns the report, with ``timings`` added.

    ``history``: also record each epoch's mean training loss and the accuracy on the test
    set after each epoch. The test set is then hashed from the start and scored after every
    epoch but the last, whose value is the report's accuracy. Training is unchanged (the
    model is only read between epochs); the scoring adds to the training time.
    """
    # the test set is hashed beside the training: with what the training data gives
    train_docs = model.read_text_defaults(train_docs, lexicon, fit_kw.get("kept"))
    hasher = model.validate()
    tmp = cache_folder(model.cache_dir, "nbsvm-test-")
    counted = None
    if history is not None:
        counted = _Counted(train_docs)
        # still readable again where the input is (calibrate, auto read it twice)
        again = callable(train_docs) or isinstance(train_docs, (list, tuple))
        train_docs = (lambda: iter(counted)) if again else counted  # type: ignore[assignment]
    test = _HeldOutSet(
        model,
        _BackgroundCache(test_docs, hasher, tmp / "test", callback),
        history,
        counted,
        callback,
    )
    try:
        t0 = time.perf_counter()
        model.fit_documents(
            train_docs, lexicon=lexicon, callback=test.on_event, max_memory=max_memory, **fit_kw
        )
        test.start(columns=False)
        t1 = time.perf_counter()
        with _Beside(beside_eval) as beside:
            try:
                cache = test.wait()
                t2 = time.perf_counter()
                rep = evaluate_cache(model, cache, callback, columns=test.columns())
            except NBSVMError as e:  # the model is trained all the same: the caller keeps it
                beside.go_on()
                raise TestSetError(e.message, e.path, e.line) from e
            beside.go_on()
            t3 = time.perf_counter()
    finally:
        test.close()
        shutil.rmtree(tmp, ignore_errors=True)
    # waiting for the test hashing: after training, and between epochs with ``history``
    rep["timings"] = dict(
        model.timings_, fit_s=t1 - t0, wait_test_hash_s=t2 - t1 + test.waited, eval_s=t3 - t2
    )
    if history is not None:
        history.test_accuracy[model.setting("epochs")] = headline(rep)
        rep["timings"]["epoch_eval_s"] = test.eval_time
    return rep
