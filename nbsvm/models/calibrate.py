"""Training with calibrated probabilities (``calibrate``): a model trained without a held-out
part of the training data scores that part; a :class:`~nbsvm.learners.calibrator.Calibrator`
is fitted on those scores; the model is then trained again on all the documents and keeps
the calibrator (scikit-learn's ``CalibratedClassifierCV(ensemble=False)`` with one split).

``calibrate='auto'`` (the default) does this with temperature scaling only where the
learner's own probabilities are known to be off (:func:`needs_calibration`): more than two
classes (one against the rest with modified Huber has no probabilities of its own: the
20 Newsgroups subject lines' log loss 4.74 without, 1.20 with, scikit-learn's calibrated
LinearSVC 1.17) and two classes one of which is rare (IMDB 1:9, 0.33 -> 0.24 against 0.17),
and a backend learner that ``auto`` chose over the built-in one (the exact solver's margins
are not probabilities, and the defaults it replaces gave some), each
after the model is trained on all the documents (:func:`auto_calibrate`), so the labels and
the accuracy are the uncalibrated model's. Two balanced classes keep the log loss's own
probabilities (IMDB 0.23, MPQA 0.38, Subj 0.19: at or near the calibrated baseline's) and
their training time.

The held-out part is a tenth of each class's documents (:func:`split`: stratified, from a
seeded phase), at most :data:`MAX_HELD_OUT` in all, the same ones on each read of the
stream: nothing is kept in memory but the held-out scores, ``MAX_HELD_OUT x outputs``
numbers at most.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from nbsvm.data.batches import hash_batches
from nbsvm.errors import NBSVMError, shown
from nbsvm.io.document import Document, rereadable
from nbsvm.io.labels import label_set
from nbsvm.learners.calibrator import Calibrator, ReliabilityHistogram
from nbsvm.memory import array_bytes, parse_size, spilled
from nbsvm.models.settings import NO_SEARCH

if TYPE_CHECKING:
    from nbsvm.models._types import Documents, MemoryLimit, Reread
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.models.run import FitRun

MAX_HELD_OUT = 50_000
AUTO_METHOD = "temperature"  # one number: stable on a few hundred held-out documents
#: Two classes below it keep the log loss's own probabilities (a tenth is too few to fit
#: even one number better); more than two classes are calibrated on any number of
#: documents: modified Huber's own are clipped scores, exact 0s (Blitzer domains, 30 whole
#: reviews each: test log loss 0.853 uncalibrated, 0.604 with a temperature fitted on 12)
AUTO_MIN_DOCS = 500
RARE_CLASS = 0.25  # two classes, the smaller under a quarter: calibrate
#: Below, isotonic's steps are few and flat: probabilities of exactly 0 and 1 (Subj, 320
#: held out: 574 of 1,000 test probabilities, log loss 0.50 against sigmoid's 0.22)
ISOTONIC_MIN_HELD_OUT = 1000


def split(
    docs: Iterable[Document],
    seed: int,
    held: bool,
    fraction: float = 0.1,
    limit: int = MAX_HELD_OUT,
    multilabel: bool = False,
) -> Iterator[Document]:
    """The held-out documents (``held``: a ``fraction`` of each class, at most ``limit`` in
    all) or the others, the same ones on every read of the same stream.

    Stratified, as scikit-learn's early stopping splits: the documents of each label are
    held out evenly spaced along the stream, from a seeded phase per label, so that a label
    of ``n`` documents holds ``floor((n - 1) * fraction + phase)`` of them out. A random
    draw per document left a class of 30 documents out of the held-out tenth one time in 24
    (20 such classes: most draws), and the calibration was skipped; its first document
    always trains, so no class is held out whole. ``multilabel``: each label of a
    document's set keeps its own count (the empty set is one more), and a document is held
    out when the rarest of its labels so far is due and none is at its first document (a
    document held out counts for all its labels); split by whole label sets, a label whose
    every document had a set of its own was never held out, and its calibration, fitted
    without a positive, never predicted it."""
    draw, n_held = random.Random(int(seed)).random, 0
    phase: dict[str | None, float] = {}
    seen: dict[str | None, int] = {}
    taken: dict[str | None, int] = {}  # the label's documents held out so far
    for doc in docs:
        keys = (label_set(doc.label) or ("",)) if multilabel and doc.label else (doc.label,)
        for key in keys:
            if key not in phase:
                phase[key], seen[key], taken[key] = draw(), 0, 0
        # the rarest label so far decides (of one label: that one)
        rarest = min(keys, key=lambda key: (seen[key], str(key)))
        first = any(seen[key] == 0 for key in keys)  # a label's first document trains
        due = int(seen[rarest] * fraction + phase[rarest]) > taken[rarest]
        for key in keys:
            seen[key] += 1
        chosen = due and not first and n_held < limit
        if chosen:
            n_held += 1
            for key in keys:
                taken[key] += 1
        if chosen == held:
            yield doc


def check_seen(model: NBSVMClassifier, label: str, flag: str, **where: Any) -> None:
    """Refuse a held-out document with a class the model trained without: the held-out
    measure would not cover the model's outputs, or the model would silently lack the
    class. :func:`split` trains on each class's first document, so this guards the
    parts made some other way."""
    values = label_set(label) if model.multilabel else [label]
    missing = [v for v in values if v not in model.class_names_]
    if missing:
        raise NBSVMError(
            f"{flag}: every document of class {shown(missing[0])} fell in the "
            "held-out part, so the model never sees the class; give that class "
            "more documents",
            **where,
        )


def _truth(model, labels) -> np.ndarray:
    """``(n, n_outputs)`` 0/1: which outputs are each held-out document's (a class the
    model trained without: :func:`check_seen`)."""
    classes = {c: i for i, c in enumerate(model.class_names_)}
    n_out = model.n_outputs()
    truth = np.zeros((len(labels), n_out if n_out > 1 else 1), dtype=bool)
    for row, label in enumerate(labels):
        check_seen(model, label, "--calibrate")
        if model.multilabel:
            for v in label_set(label):
                truth[row, classes[v]] = True
        elif n_out == 1:
            truth[row, 0] = label == model.class_names_[1]
        else:
            truth[row, classes[label]] = True
    return truth


class HeldOut(NamedTuple):
    """The held-out documents' ``scores`` ``(n, n_outputs)``, their ``truth`` (as
    :func:`_truth`) and ``weight`` (``sample_weight``; documents of weight 0, which count
    nowhere, are left out)."""

    scores: np.ndarray
    truth: np.ndarray
    weight: np.ndarray


def held_out_scores(model: NBSVMClassifier, docs: Iterable[Document]) -> HeldOut:
    """A fitted model's :class:`HeldOut` scores of ``docs``."""
    parts: list[np.ndarray] = []
    truth: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    for batch in hash_batches(docs, model.hasher_):
        w = np.ones(len(batch)) if batch.weights is None else np.asarray(batch.weights, float)
        keep = w > 0
        scores = np.asarray(model.decision_batch(batch)).reshape(len(batch), -1)
        parts.append(scores[keep])
        truth.append(_truth(model, [label for label, k in zip(batch.labels, keep) if k]))
        weights.append(w[keep])
    scores = np.concatenate(parts) if parts else np.zeros((0, 1))
    if len(scores) < 2:
        raise NBSVMError(
            f"calibration and thresholds hold out a tenth of each class's training documents "
            f"(never a class's first) and held out {len(scores)} (of weight above 0): at "
            "least 2 are needed, which a corpus of fewer than about 20 documents may not "
            "give; train on more documents, or without them (--calibrate none; --threshold "
            "other than auto)"
        )
    return HeldOut(scores, np.concatenate(truth), np.concatenate(weights))


def check_every_class_held_out(model: NBSVMClassifier, truth: np.ndarray) -> None:
    """Refuse to calibrate on a held-out part without a document of every class (of every
    label, multi-label): a temperature or sigmoid fitted without a class pushes its
    probabilities to the extremes (2 positives in 802 documents: none held out, a
    temperature of 6.1, the test log loss 0.81 -> 3.17; a label's sigmoid fitted without a
    positive never predicted it)."""
    if model.multilabel:  # each label's calibration needs a held-out positive
        present = np.asarray(truth.any(axis=0), dtype=bool)
    else:
        present = np.asarray(
            truth.any(axis=0) if truth.shape[1] > 1 else [not truth.all(), truth.any()],
            dtype=bool,
        )
    missing = [c for c, seen in zip(model.class_names_, present) if not seen]
    if missing:
        counts = dict(zip(model.class_names_, np.asarray(model.class_counts_).tolist()))
        # (a name as long as a document stalled the printing for minutes: cut)
        said = ", ".join(f"{shown(c)} ({counts.get(c, 0):g} documents in all)" for c in missing[:5])
        kind = "label" if model.multilabel else "class"
        raise NBSVMError(
            f"the held-out tenth ({len(truth)} documents) holds no document of {kind} "
            f"{said}: a calibration fitted without it would push its probabilities to the "
            "extremes; train on more documents of it, or without calibration (--calibrate none)"
        )


def reliability(model: NBSVMClassifier, calibrator: Calibrator, held: HeldOut) -> dict:
    """Expected calibration error of the held-out scores before (the loss's probabilities;
    the logistic of the score for a loss without them) and after calibration (two-fold:
    each half calibrated by a calibrator fitted on the other, with the documents' weights;
    the error counts each held-out document once)."""
    scores, truth, weight = held

    def ece(proba):
        h = ReliabilityHistogram()
        if model.multilabel:
            h.add_proba(proba, truth, True)
        else:
            codes = (
                truth[:, 0].astype(int)
                if truth.shape[1] == 1
                else np.where(truth.any(axis=1), np.argmax(truth, axis=1), -1)
            )
            h.add_proba(proba, codes, False)
        return h.ece()

    if model.has_proba(own=True):
        before = model.proba_of(scores, own=True)
    else:
        logistic = Calibrator("sigmoid", model.multilabel)
        logistic.knots_ = [np.array([1.0, 0.0])] * scores.shape[1]  # plain logistic
        before = logistic.probabilities(scores)
    # after: two-fold on the held-out scores (the calibrator's own fit set would flatter it),
    # dealt in turns along the documents sorted by their truth, so that each class is in
    # both halves: by position, a stream of alternating classes gave each half one class
    # (IMDB folders: ECE 1.0)
    _, kind = np.unique(truth, axis=0, return_inverse=True)
    half = np.empty(len(scores), dtype=bool)
    half[np.argsort(kind.ravel(), kind="stable")] = np.arange(len(scores)) % 2 == 0
    if len(scores) < 4:  # a half of one document cannot be fitted: no honest figure
        return {"ece_before": ece(before), "ece_after": None, "held_out": int(len(scores))}
    after = np.empty_like(before)
    for fit_on in (half, ~half):
        part = Calibrator(calibrator.method, model.multilabel)
        part.fit(scores[fit_on], truth[fit_on], weight[fit_on])
        after[~fit_on] = part.probabilities(scores[~fit_on])
    return {"ece_before": ece(before), "ece_after": ece(after), "held_out": int(len(scores))}


def calibrated_fit(model: NBSVMClassifier, docs: Documents, run: FitRun) -> dict:
    """Fit ``model`` (its ``calibrate`` method set) on ``docs`` with a calibrator, as the
    module docstring says; returns what :func:`reliability` measured (also kept in
    ``model.calibration_report_``)."""

    reread = rereadable(docs)
    method, seed = model.calibrate, model.seed
    searched = {name: getattr(model, name) for name in NO_SEARCH}
    model.set_params(calibrate=None)
    t0 = time.perf_counter()
    try:
        model.fit_documents(
            lambda: split(reread(), seed, held=False, multilabel=model.multilabel),
            callback=run.callback,
            max_memory=run.max_memory,
        )
        held = held_out_scores(model, split(reread(), seed, held=True, multilabel=model.multilabel))
        check_every_class_held_out(model, held.truth)
        calibrator = Calibrator(cast(str, method), model.multilabel).fit(*held)
        kept = keep_order(model, calibrator)
        rep = reliability(model, calibrator, held)
        if kept:  # (said in train's output and calibration_report_)
            rep["reversed"] = kept
            rep["note"] = (
                f"the held-out scores of {', '.join(map(shown, kept[:5]))} rank the classes "
                "the wrong way round (a sigmoid of slope 0 or below): they keep the plain "
                "logistic of their scores, whose order is theirs"
            )
        rep["seconds"] = round(time.perf_counter() - t0, 3)  # the extra training and fit
        if method == "isotonic" and rep["held_out"] < ISOTONIC_MIN_HELD_OUT:
            rep["note"] = (
                f"isotonic calibration fitted on {rep['held_out']:,} held-out documents "
                f"(it needs {ISOTONIC_MIN_HELD_OUT:,}+): its few steps give probabilities "
                "of exactly 0 and 1, which cost log loss; sigmoid or temperature suit "
                "fewer documents"
            )
        run.notify({"stage": "calibrated", "docs": rep["held_out"], **rep, "method": method})
        auto: dict[str, Any] = {
            k: model.__dict__[k] for k in ("auto_", "auto_table_") if k in model.__dict__
        }
        model.set_params(**NO_SEARCH)  # the settings --auto chose are the model's now
        model.fit_documents(reread, callback=run.callback, max_memory=run.max_memory)
        model.__dict__.update(auto)
    finally:  # (a refit that fails leaves the estimator's settings as they were given)
        model.set_params(calibrate=method, **searched)
    model.calibrator_ = calibrator
    model.calibration_report_ = rep
    return rep


def keep_order(model: NBSVMClassifier, calibrator: Calibrator) -> list[str]:
    """The outputs whose fitted sigmoid has slope 0 or below (their held-out scores ranked
    the classes the wrong way round: a few dozen documents can), given the plain logistic
    of their scores instead, which keeps their order; their names. Calibrated so, every
    decision of such an output was turned around (a hunt: 0.00% on the training data
    itself, 6% on a test set where the uncalibrated model scored 91%)."""
    if calibrator.method != "sigmoid":
        return []
    names = model.class_names_
    kept = []
    for k, knots in enumerate(calibrator.knots_):
        if not knots[0] > 0:
            calibrator.knots_[k] = np.array([1.0, 0.0])
            kept.append(str(names[1] if model.binary_task() else names[k]))
    return kept


def needs_calibration(model: NBSVMClassifier) -> str | None:
    """Why ``calibrate='auto'`` calibrates this fitted model (None: it does not): the
    built-in learner, one label per document, counts not kept for further training (a
    calibrated model cannot be continued), and more than two classes, or at least
    :data:`AUTO_MIN_DOCS` documents and a class under :data:`RARE_CLASS` of them or scores
    interpolated with NB (``beta`` under 1); or a backend learner that ``auto`` chose (the
    defaults it replaces give probabilities, its margins do not)."""
    if model.calibrate != "auto" or model.multilabel or model.keep_counts:
        return None
    if model.backend_learner is not None:  # on any number of documents: else none at all
        chosen = model.__dict__.get("auto_", {}).get("changed", {})
        return f"--auto chose learner {model.backend_learner}" if "learner" in chosen else None
    if len(model.class_names_) > 2:  # on any number of documents: else exact 0s and 1s
        return f"{len(model.class_names_)} classes"
    if model.n_docs_ < AUTO_MIN_DOCS:
        return None
    if model.beta < 1 and model.interpolate == "scores" and model.weighting == "nb":
        # the NB part sums log-count ratios, which are not log-odds: on Subj beta 0.5
        # gained 0.1 point of accuracy and took the log loss from 0.20 to 0.67
        return f"beta {model.beta:g} (the NB part's scores are not log-odds)"
    total = float(np.sum(model.class_counts_))  # documents, or their summed weights
    share = float(np.min(model.class_counts_)) / total if total > 0 else 0.0
    return f"a class of {100 * share:.1f}% of the documents" if share < RARE_CLASS else None


def with_held_out_copy(
    model: NBSVMClassifier,
    reread: Callable[[], Iterable[Document]],
    use: Callable[[NBSVMClassifier, HeldOut], Any],
    max_memory: MemoryLimit | None = None,
) -> Any:
    """``use(copy, held)``: a copy of the fitted ``model`` (its settings as read from all
    the data) trained without the held-out tenth, and its :class:`HeldOut` scores of that
    tenth. The full model's arrays wait on disk while the
    copy trains and is used: the peak is one model, not two (20 Newsgroups: 244 MB of
    weights and bucket map)."""
    params = dict(
        model.get_params(),
        calibrate=None,
        threshold=None,
        **NO_SEARCH,
        char_ngrams=model.hasher_.char_ngrams,
    )
    copy = type(model)(**params)
    seed = model.seed
    state = [model, *[v for k, v in vars(model).items() if k == "linear_"]]
    with spilled(*state) as moved:
        if max_memory is not None:  # what stays in memory of the full model
            held = max(0, array_bytes(*state) - moved)
            max_memory = max(0, parse_size(max_memory) - held)
        ml = model.multilabel
        copy.fit_documents(
            lambda: split(reread(), seed, held=False, multilabel=ml), max_memory=max_memory
        )
        result = use(copy, held_out_scores(copy, split(reread(), seed, held=True, multilabel=ml)))
        del copy  # before the full model's arrays come back
    return result


def auto_calibrate(model: NBSVMClassifier, reread: Reread | None, run: FitRun) -> None:
    """``calibrate='auto'`` after ``model`` was fitted on all the documents: where
    :func:`needs_calibration` says so, a copy with the same settings trains without the
    held-out tenth, and a temperature fitted on its scores of that tenth becomes
    ``model``'s calibrator. The documents must be readable again (``reread``): from a
    one-shot stream (standard input) the model stays uncalibrated and a
    ``"calibration skipped"`` event says why; so it does when a class falls wholly in the
    held-out part, or the copy's classes are not the model's (a model trained from a
    lexicon of other classes: the copy counts its own)."""
    why = needs_calibration(model)
    if why is None:
        return
    if reread is None:
        run.notify(
            {
                "stage": "calibration skipped",
                "docs": 0,
                "reason": why,
                "why": "the training documents cannot be read twice (standard input)",
            }
        )
        return
    t0 = time.perf_counter()

    def fit_calibrator(copy, held):
        if list(copy.class_names_) != list(model.class_names_):
            # a --lexicon of other classes: a calibration of the copy's outputs would not
            # fit the model's (a file no command could load)
            raise NBSVMError(
                f"the training documents hold {len(copy.class_names_)} of the model's "
                f"{len(model.class_names_)} classes (those of its --lexicon)"
            )
        check_every_class_held_out(copy, held.truth)
        calibrator = Calibrator(AUTO_METHOD, model.multilabel).fit(*held)
        return calibrator, reliability(copy, calibrator, held)

    try:
        calibrator, rep = with_held_out_copy(model, reread, fit_calibrator, run.max_memory)
    except NBSVMError as e:  # a class only in the held-out part, too few held out, memory
        run.notify({"stage": "calibration skipped", "docs": 0, "reason": why, "why": str(e)})
        return
    rep["seconds"] = round(time.perf_counter() - t0, 3)
    rep["method"] = f"{AUTO_METHOD} (auto: {why})"
    run.notify({"stage": "calibrated", "docs": rep["held_out"], **rep})
    model.calibrator_ = calibrator
    model.calibration_report_ = rep
