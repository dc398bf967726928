"""Training with calibrated probabilities (``calibrate``): a model trained without a held-out
part of the training data scores that part; a :class:`~nbsvm.models.calibrator.Calibrator`
is fitted on those scores; the model is then trained again on all the documents and keeps
the calibrator (scikit-learn's ``CalibratedClassifierCV(ensemble=False)`` with one split).

The held-out part is a tenth of the documents drawn at random (seeded), at most
:data:`MAX_HELD_OUT` of them, the same ones on each read of the stream: nothing is kept in
memory but the held-out scores, ``MAX_HELD_OUT x outputs`` numbers at most.
"""
from __future__ import annotations

import random
import time
from typing import Callable, Iterable, Iterator

import numpy as np

from nbsvm.data.batches import hash_batches
from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document
from nbsvm.io.labels import label_set
from nbsvm.models.calibrator import Calibrator, ReliabilityHistogram

HELD_OUT_EVERY = 10
MAX_HELD_OUT = 50_000


def split(docs: Iterable[Document], seed: int, held: bool, fraction: float = 0.1,
          limit: int = MAX_HELD_OUT) -> Iterator[Document]:
    """The held-out documents (``held``: a seeded random ``fraction`` of them, at most
    ``limit``) or the others, the same ones on every read of the same stream."""
    draw, n_held = random.Random(seed).random, 0     # not i % 10: readers interleave classes
    for doc in docs:
        chosen = draw() < fraction and n_held < limit
        n_held += chosen
        if chosen == held:
            yield doc


def check_seen(model, label, flag: str, **where) -> None:
    """Refuse a held-out document with a class the model trained without (every document
    of it fell in the held-out part): the held-out measure would not cover the model's
    outputs, or the model would silently lack the class."""
    values = label_set(label) if model.multilabel else [label]
    missing = [v for v in values if v not in model.classes_]
    if missing:
        raise NBSVMError(f"{flag}: every document of class {missing[0]!r} fell in the "
                         "held-out part, so the model never sees the class; give that class "
                         "more documents", **where)


def _truth(model, labels) -> np.ndarray:
    """``(n, n_outputs)`` 0/1: which outputs are each held-out document's (a class the
    model trained without: :func:`check_seen`)."""
    classes = {c: i for i, c in enumerate(model.classes_)}
    n_out = model.n_outputs()
    truth = np.zeros((len(labels), n_out if n_out > 1 else 1), dtype=bool)
    for row, label in enumerate(labels):
        check_seen(model, label, "--calibrate")
        if model.multilabel:
            for v in label_set(label):
                truth[row, classes[v]] = True
        elif n_out == 1:
            truth[row, 0] = label == model.classes_[1]
        else:
            truth[row, classes[label]] = True
    return truth


def held_out_scores(model, docs: Iterable[Document]) -> tuple[np.ndarray, np.ndarray]:
    """A fitted model's scores ``(n, n_outputs)`` of ``docs`` and their truth (as
    :func:`_truth`)."""
    scores, truth = [], []
    for batch in hash_batches(docs, model.hasher_):
        scores.append(np.asarray(model.decision_batch(batch)).reshape(len(batch), -1))
        truth.append(_truth(model, batch.labels))
    scores = np.concatenate(scores) if scores else np.zeros((0, 1))
    if len(scores) < 2:
        raise NBSVMError(f"--calibrate holds out a tenth of the training documents and got "
                         f"{len(scores)}: at least 2 are needed (about 20 documents or more)")
    return scores, np.concatenate(truth)


def reliability(model, calibrator, scores, truth) -> dict:
    """Expected calibration error of the held-out scores before (the loss's probabilities;
    the logistic of the score for a loss without them) and after calibration (two-fold:
    each half calibrated by a calibrator fitted on the other)."""
    def ece(proba):
        h = ReliabilityHistogram()
        if model.multilabel:
            h.add_proba(proba, truth, True)
        else:
            codes = truth[:, 0].astype(int) if truth.shape[1] == 1 else \
                np.where(truth.any(axis=1), np.argmax(truth, axis=1), -1)
            h.add_proba(proba, codes, False)
        return h.ece()

    if model.has_proba(own=True):
        before = model.proba_of(scores, own=True)
    else:
        before = Calibrator("sigmoid", model.multilabel)
        before.knots_ = [np.array([1.0, 0.0])] * scores.shape[1]   # plain logistic
        before = before.probabilities(scores)
    # after: two-fold on the held-out scores (the calibrator's own fit set would flatter it)
    half = np.arange(len(scores)) % 2 == 0
    if len(scores) < 4:         # a half of one document cannot be fitted: no honest figure
        return {"ece_before": ece(before), "ece_after": None, "held_out": int(len(scores))}
    after = np.empty_like(before)
    for fit_on in (half, ~half):
        part = Calibrator(calibrator.method, model.multilabel).fit(scores[fit_on], truth[fit_on])
        after[~fit_on] = part.probabilities(scores[~fit_on])
    return {"ece_before": ece(before), "ece_after": ece(after), "held_out": int(len(scores))}


def calibrated_fit(model, docs, callback: Callable[[dict], None] | None = None,
                   max_memory=None) -> dict:
    """Fit ``model`` (its ``calibrate`` method set) on ``docs`` with a calibrator, as the
    module docstring says; returns what :func:`reliability` measured (also kept in
    ``model.calibration_report_``)."""
    from nbsvm.training.modes import rereadable

    notify = callback or (lambda event: None)
    reread = rereadable(docs)
    method, seed = model.calibrate, model.seed
    model.set_params(calibrate=None)
    t0 = time.perf_counter()
    try:
        model.fit_documents(lambda: split(reread(), seed, held=False), callback=callback,
                            max_memory=max_memory)
        scores, truth = held_out_scores(model, split(reread(), seed, held=True))
        calibrator = Calibrator(method, model.multilabel).fit(scores, truth)
        rep = reliability(model, calibrator, scores, truth)
        rep["seconds"] = round(time.perf_counter() - t0, 3)    # the extra training and fit
        notify({"stage": "calibrated", "docs": rep["held_out"], **rep, "method": method})
        auto = {k: model.__dict__[k] for k in ("auto_", "auto_table_") if k in model.__dict__}
        chose_auto = model.auto
        model.set_params(auto=False)        # the settings --auto chose are the model's now
        model.fit_documents(reread, callback=callback, max_memory=max_memory)
        model.set_params(auto=chose_auto)
        model.__dict__.update(auto)
    finally:
        model.set_params(calibrate=method)
    model.calibrator_ = calibrator
    model.calibration_report_ = rep
    return rep
