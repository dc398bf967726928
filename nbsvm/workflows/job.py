"""``nbsvm train`` on one machine as one library call: the kept cache and the checkpoint of
the run (keyed by its inputs and settings), the fit (with the test set hashed alongside when
there is one), the model written, the checkpoint removed. Returns data; printing is the
CLI's."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, cast

from nbsvm.data.cachestore import KeptCache, default_root
from nbsvm.errors import NBSVMError, TestSetError, saved_untested
from nbsvm.evaluation.evaluate import evaluate_documents
from nbsvm.evaluation.heldout import EpochHistory, fit_and_evaluate
from nbsvm.io.document import Document
from nbsvm.models.checkpoint import Checkpoint
from nbsvm.models.modelfile import save_model
from nbsvm.models.nbsvm import NBSVMClassifier

if TYPE_CHECKING:
    import os

    from nbsvm.lexicon.nblexicon import NBLexicon


def train_job(
    clf: NBSVMClassifier,
    inputs: list,
    docs: Iterable[Document] | Callable[[], Iterable[Document]],
    output: str | os.PathLike[str],
    reader: dict,
    test_docs: Iterable[Document] | None = None,
    lexicon: NBLexicon | None = None,
    lexicon_path: str | os.PathLike[str] | None = None,
    keep_cache: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    checkpoint_every: int = 0,
    resume: bool = False,
    max_memory: int | str | None = None,
    callback: Callable[[dict], None] | None = None,
    history: EpochHistory | None = None,
    init: bool = False,
) -> dict:
    """Fit ``clf`` on ``docs`` (read from ``inputs`` with the ``reader`` settings, which
    with the hashing settings key the kept cache and the checkpoint) and save it to
    ``output``; with ``test_docs``, evaluate it too.

    Returns ``{"report": the test report or None, "total_s" (with a test set, the model
    is saved beside its scoring: counted in it), "save_s", "feature_cache":
    {"folder", "reused"} or None, "resumed_after_epoch": int or None}``. ``callback`` gets
    every training event (:meth:`NBSVMClassifier.fit_documents`); ``history`` records each
    epoch's loss (and, with a test set, its accuracy after each epoch). ``init``: ``clf`` is
    a saved model (with ``keep_counts``) that ``docs`` train further
    (:meth:`~nbsvm.NBSVMClassifier.continue_documents`).
    """
    clf.validate()  # every setting checked before the peek below reads any document
    if not init:  # char_ngrams read from the data key the kept cache too
        docs = clf.read_text_defaults(docs)
    hasher = clf.validate()
    kept = KeptCache(cache_dir or default_root(), inputs, reader, hasher) if keep_cache else None
    checkpoint = (
        Checkpoint.for_run(output, checkpoint_every, resume, inputs, reader, lexicon_path, kept)
        if checkpoint_every or resume
        else None
    )
    cache_event: dict = {}
    # with a test set fit_and_evaluate records the history itself (--auto and --init
    # score their test set after training: their events record it)
    recorded = test_docs is None or clf.auto or init
    events = _events(callback, history if recorded else None, cache_event)
    # hand over the only reference, so that fit can free the counts once used
    holder = [lexicon]
    del lexicon
    # how both plain fits run (the lexicon is not among them: see holder)
    fitting = {"callback": events, "max_memory": max_memory, "kept": kept, "checkpoint": checkpoint}
    save = _Saver(clf, inputs, output, checkpoint)
    t0 = time.perf_counter()
    try:
        if clf.auto or init:
            report = _fit_then_evaluate(clf, docs, test_docs, init, events, callback, max_memory)
        else:
            report = _fit(clf, docs, test_docs, holder, history, fitting, save)
    except TestSetError as e:  # trained: the model is kept, the test set named
        save.once()
        raise saved_untested(e, output) from e
    t1 = time.perf_counter()
    save.once()
    return {
        "report": report,
        "total_s": t1 - t0,
        "save_s": save.seconds,
        "feature_cache": None
        if kept is None
        else {"folder": str(kept.folder), "reused": bool(cache_event.get("reused"))},
        "resumed_after_epoch": None if checkpoint is None else checkpoint.resumed_from,
    }


def _fit(clf, docs, test_docs, holder: list, history, fitting: dict, save) -> dict | None:
    """The plain fit (with its test set hashed alongside, when there is one, and scored
    while ``save`` saves the model), taking the lexicon from ``holder`` (the only
    reference: fit frees the counts once used). Returns the test report, or None."""
    if test_docs is None:
        clf.fit_documents(docs, lexicon=holder.pop(), **fitting)
        return None
    return fit_and_evaluate(
        # (it reads a callable's documents too, as fit_documents does)
        clf,
        cast("Iterable[Document]", docs),
        test_docs,
        lexicon=holder.pop(),
        history=history,
        beside_eval=save,
        **fitting,
    )


class _Saver:
    """Saves the trained model (:func:`_keep`) once. Called beside the scoring of the test
    set, with ``proceed``: that waits for the scoring before the model replaces the output
    (the wait is not counted in ``seconds``)."""

    def __init__(self, clf: NBSVMClassifier, inputs: Iterable, output, checkpoint):
        self.clf, self.inputs, self.output, self.checkpoint = clf, inputs, output, checkpoint
        self.seconds: float | None = None  # None: not saved yet

    def __call__(self, proceed: Callable[[], None] | None = None) -> None:
        waited = 0.0

        def gate() -> None:
            nonlocal waited
            t = time.perf_counter()
            try:
                if proceed is not None:
                    proceed()
            finally:
                waited += time.perf_counter() - t

        t = time.perf_counter()
        _keep(self.clf, self.inputs, self.output, self.checkpoint, gate)
        self.seconds = time.perf_counter() - t - waited

    def once(self) -> None:
        """Save, unless saved beside the scoring already."""
        if self.seconds is None:
            self()


def _keep(clf: NBSVMClassifier, inputs: Iterable, output, checkpoint, before_replace) -> None:
    """Save the trained model, what it read recorded in its history; the checkpoint goes
    once the model is safely written (nothing to resume). ``before_replace``: as
    :func:`~nbsvm.models.modelfile.save_model`'s."""
    if clf.__dict__.get("history_"):
        clf.history_[-1]["inputs"] = [str(p) for p in inputs]
    save_model(clf, output, before_replace)
    if checkpoint is not None:
        checkpoint.remove()


def _events(callback, history: EpochHistory | None, cache_event: dict):
    """The callback the fit gets: ``callback``'s events, the kept cache's event copied into
    ``cache_event``, each epoch recorded in ``history``."""

    def events(event):
        if event["stage"] == "cache":
            cache_event.update(event)
        if history is not None:
            history.observe(event)
        if callback is not None:
            return callback(event)

    return events


def _fit_then_evaluate(clf, docs, test_docs, init: bool, events, callback, max_memory):
    """Where the search picks the hashing settings (``auto``), or a saved model continues
    (``init``): train first, then read and score the test set. Returns its report (None
    without one)."""
    t0 = time.perf_counter()
    if init:
        clf.continue_documents(docs, callback=events, max_memory=max_memory)
    else:
        clf.fit_documents(docs, callback=events, max_memory=max_memory)
    if test_docs is None:
        return None
    t1 = time.perf_counter()
    try:
        report = evaluate_documents(clf, test_docs, callback)
    except NBSVMError as e:  # trained all the same: train_job keeps the model
        raise TestSetError(e.message, e.path, e.line) from e
    report["timings"] = dict(
        clf.timings_, fit_s=t1 - t0, wait_test_hash_s=0.0, eval_s=time.perf_counter() - t1
    )
    return report
