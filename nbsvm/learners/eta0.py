"""Bottou's eta0 calibration (svmsgd's ``determineEta0``), ``eta0='auto'``, for every
learner with a step size: NBSVM's built-in learner and the backend's SGD learners share
the search (:func:`bottou_search`), each with its own cost.

One pass over a seeded sample of cached documents from zero weights for eta0 = 1, then
halving or doubling while the regularized objective on the sample (after the pass) falls;
the eta0 with the lowest objective wins (a power of two). The trials learn on the sample's
own columns only (a few per cent of the model's state; untouched columns keep weight 0, so
the costs are the same).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.data.cache import FeatureCache
from nbsvm.data.translate import translate_rows
from nbsvm.io.labels import output_targets
from nbsvm.learners.losses import multiclass_loss, resolve_loss
from nbsvm.learners.sgd import LinearSGD

if TYPE_CHECKING:
    from nbsvm.data.rows import SparseRows
    from nbsvm.learners.base import OnlineLearner

#: Documents the calibration runs on (as Bottou's svmsgd).
ETA0_SAMPLE = 1000


def calibration_sample(
    cache: FeatureCache,
    positive: Sequence[int] | np.ndarray,
    column_of: np.ndarray | None,
    seed: int,
    n_sample: int = ETA0_SAMPLE,
) -> tuple:
    """``n_sample`` documents of ``cache`` picked with a generator of their own (``seed +
    1``: the epochs' shuffles are untouched), as ``(ids, offsets, codes, positive,
    columns)``: the ids index ``columns``, the model columns the sample holds.
    ``column_of``: the bucket -> column map of a cache of buckets (None: it holds columns)."""
    rng = np.random.default_rng(seed + 1)
    # in the drawn order, not the stored one: a trial pass over a corpus stored class by
    # class would otherwise see the classes in blocks and pick another eta0
    picks = rng.choice(cache.n_docs, size=min(n_sample, cache.n_docs), replace=False)
    parts = [cache.rows(int(i), int(i) + 1) for i in picks]
    ids = np.concatenate([p[0] for p in parts])
    offsets = np.concatenate([[0], np.cumsum([p[1][-1] for p in parts])]).astype(np.int64)
    codes = np.concatenate([p[2] for p in parts]).astype(np.int32)
    if column_of is not None:
        ids, offsets = translate_rows(ids, offsets, column_of)
    columns, ids = np.unique(ids, return_inverse=True)
    return ids.astype(np.int32), offsets, codes, positive, columns


def eta0_cost(learner: LinearSGD, sample: tuple, eta0: float) -> float:
    """The regularized objective on ``sample`` after one pass from zero with ``eta0`` and
    ``learner``'s other settings and feature values: mean loss + lambda/2 |w|^2 summed over
    the outputs (inf if it diverged)."""
    ids, offsets, codes, positive, columns = sample
    trial = LinearSGD(
        len(columns),
        n_outputs=learner.n_outputs,
        loss=learner.loss,
        optimizer=learner.optimizer,
        eta0=eta0,
        lam=learner.lam,
        threads=1,
        unit=learner.unit,
    )
    trial.tables[:] = learner.tables[:, columns]
    trial.epoch(ids, offsets, codes, np.arange(len(codes), dtype=np.int64), positive)
    scores = trial.decision(ids, offsets)
    if trial.multiclass:  # one loss of all scores
        target = np.full(int(codes.max(initial=0)) + 1, -1, dtype=np.int64)
        target[np.asarray(positive)] = np.arange(len(positive))
        rows = target[codes] >= 0
        total = float(np.mean(multiclass_loss(learner.loss, scores[rows], target[codes][rows])))
    else:
        total = 0.0
        loss = resolve_loss(learner.loss).loss
    for k in range(trial.n_outputs):
        w = trial.S_[k, :, 1].astype(np.float64) * trial.scale_of(k)
        penalty = 0.5 * learner.lam * float(np.dot(w, w))
        if trial.multiclass:
            total += penalty
            continue
        own, pos = output_targets(codes, positive, k)
        y = np.where(own == pos, 1.0, -1.0)
        total += float(np.mean([loss(p, t) for p, t in zip(scores[:, k], y)])) + penalty
    return total if np.isfinite(total) else np.inf


def bottou_search(cost: Callable[[float], float]) -> float:
    """svmsgd's search: ``cost(eta0)`` at 1 and 2, then halving or doubling while it falls;
    the eta0 (a power of two) with the lowest cost. Every learner's calibration is this
    search over its own cost."""
    factor = 2.0
    lo_eta, hi_eta = 1.0, factor
    lo_cost, hi_cost = cost(lo_eta), cost(hi_eta)
    # both refused or diverged (eta0 * lambda >= 1 with lambda 1): smaller until one is not,
    # where 1 had been returned, a step the training then refused or diverged with
    while not np.isfinite(lo_cost) and lo_eta > 1e-8:
        hi_eta, hi_cost = lo_eta, lo_cost
        lo_eta /= factor
        lo_cost = cost(lo_eta)
    if lo_cost < hi_cost:
        while lo_cost < hi_cost and lo_eta > 1e-8:
            hi_eta, hi_cost = lo_eta, lo_cost
            lo_eta = hi_eta / factor
            lo_cost = cost(lo_eta)
    elif hi_cost < lo_cost:
        while hi_cost < lo_cost and hi_eta < 1e8:
            lo_eta, lo_cost = hi_eta, hi_cost
            hi_eta = lo_eta * factor
            hi_cost = cost(hi_eta)
    return lo_eta


def calibrate_eta0(learner: LinearSGD, sample: tuple) -> float:
    """The eta0 (a power of two) svmsgd's search picks on ``sample`` (see the module)."""
    return bottou_search(lambda eta0: eta0_cost(learner, sample, eta0))


def calibrate_learner_eta0(
    learner: OnlineLearner,
    rows: SparseRows,
    y: Any,
    seed: int = 0,
    n_sample: int = ETA0_SAMPLE,
    classes: list | None = None,
) -> float:
    """Bottou's eta0 for a backend learner with an ``eta0`` parameter and an ``objective``
    (:class:`~nbsvm.learners.linear.SGDClassifier`, :class:`~nbsvm.learners.linear.
    SGDRegressor`): per trial, a copy makes one pass from scratch over a seeded sample of
    ``rows`` (``n_sample`` of them, as svmsgd), and the cost is its objective on the
    sample; a trial the learner refuses (e.g. ``eta0 * lam >= 1``) or that diverges costs
    infinity."""
    from nbsvm.errors import NBSVMError

    rng = np.random.default_rng(seed + 1)  # the epochs' shuffles are untouched
    # in the drawn order, as calibration_sample: a file stored class by class, passed in
    # its own order, showed the trial the classes in blocks (20 Newsgroups' two groups:
    # eta0 128 where 1 is best, 66.8% where the fixed default gave 86.2%)
    picks = rng.choice(len(rows), size=min(n_sample, len(rows)), replace=False)
    part = rows.take(picks)
    targets = [y[i] for i in picks] if isinstance(y, list) else np.asarray(y)[picks]

    def cost(eta0):
        trial = type(learner)(**dict(learner.get_params(), eta0=eta0))
        try:
            with np.errstate(all="ignore"):
                trial.partial_fit(part, targets, classes=classes)
                value = trial.objective(part, targets)
        except NBSVMError:
            return np.inf
        return value if np.isfinite(value) else np.inf

    return bottou_search(cost)
