"""Per-label decision thresholds (``threshold='auto'``, ``nbsvm train --threshold auto``):
a multi-label model predicts label ``k`` when its score (its calibrated probability, when
the model has a calibrator) is above ``thresholds_[k]`` instead of 0 (0.5).

The thresholds maximize micro F1 over the labels (:func:`micro_f1_thresholds`: each
label's in turn, given the others') on the scores that a copy trained without a held-out
tenth of the training documents gives that tenth (the held-out part of
:mod:`~nbsvm.models.calibrate`); the model itself is trained on all of them. Rare labels
are where a threshold at 0 fails: a hinge or log loss on a label present in 3% of the
documents scores most of its documents below 0, and recall, hence F1, suffers. A label with
fewer than :data:`MIN_POSITIVES` held-out documents keeps the default threshold: a few
positives would place it by chance.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.models.calibrate import with_held_out_copy
from nbsvm.models.prediction import default_threshold, label_values

if TYPE_CHECKING:
    from nbsvm.models._types import Reread
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.models.run import FitRun

MIN_POSITIVES = 5


def best_f1_threshold(
    values: np.ndarray,
    truth: np.ndarray,
    default: float,
    others: tuple[float, float, float] = (0, 0, 0),
    weight: np.ndarray | None = None,
) -> float:
    """The threshold on ``values`` with the highest F1 for the 0/1 ``truth`` (midway
    between the two values it separates, or half a unit below / above them all: every
    document predicted, or none; among equal F1, the
    one nearest ``default``), or ``default`` with fewer than :data:`MIN_POSITIVES`
    positives. ``others``: the true positives, predictions and positives of the other
    labels, whose sums with this label's make micro F1 (zeros: this label's own F1).
    ``weight``: each document's weight in the counts (None: 1)."""
    truth = np.asarray(truth, dtype=bool)
    if int(truth.sum()) < MIN_POSITIVES:
        return float(default)
    w = np.ones(len(truth)) if weight is None else np.asarray(weight, dtype=np.float64)
    n_pos = float(w[truth].sum())
    tp_o, pred_o, true_o = others
    order = np.argsort(-values, kind="stable")
    v, t, w = values[order], truth[order], w[order]
    # predicting the top i documents (i = 0..n): F1 of the true positives among them
    tp = np.concatenate([[0], np.cumsum(w * t)])
    i = np.concatenate([[0], np.cumsum(w)])
    f1 = 2 * (tp_o + tp) / np.maximum(pred_o + i + true_o + n_pos, 1e-300)
    # cut only between distinct values: none, or after the last of a run of equal values
    cuts = np.concatenate([[0], np.flatnonzero(np.append(v[1:] != v[:-1], True)) + 1])
    below = np.concatenate([v, [v[-1] - 1.0]])  # the value just past each cut
    above = np.concatenate([[v[0] + 1.0], v])  # the last value predicted (midpoints: 0.5)
    thresholds = (above[cuts] + below[cuts]) / 2
    best = f1[cuts].max()
    near = thresholds[np.isclose(f1[cuts], best, rtol=0, atol=1e-12)]
    return float(near[np.argmin(np.abs(near - default))])


def micro_f1_thresholds(
    values: np.ndarray,
    truth: np.ndarray,
    default: float,
    rounds: int = 3,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """Per-label thresholds maximizing micro F1 over all labels (documents counted by
    their ``weight``; None: 1): each label's threshold in turn is the best given the
    others' (coordinate ascent from ``default``, ``rounds`` sweeps; each step cannot lower
    micro F1). Maximizing each label's own F1 instead moves rare labels too far (on a
    synthetic task it lost 1.6 points of micro F1)."""
    thresholds = np.full(values.shape[1], float(default))
    w = np.ones(len(values)) if weight is None else np.asarray(weight, dtype=np.float64)
    values, truth, w = values[w > 0], truth[w > 0], w[w > 0]  # (no cut beside weight 0)
    for _ in range(rounds):
        pred = values > thresholds
        tp_k, pred_k, true_k = w @ (pred & truth), w @ pred, w @ truth
        moved = False
        for k in range(values.shape[1]):
            others = (
                float(tp_k.sum() - tp_k[k]),
                float(pred_k.sum() - pred_k[k]),
                float(true_k.sum() - true_k[k]),
            )
            new = best_f1_threshold(values[:, k], truth[:, k], thresholds[k], others, w)
            moved |= new != thresholds[k]
            thresholds[k] = new
            p = values[:, k] > new
            tp_k[k], pred_k[k] = float(w @ (p & truth[:, k])), float(w @ p)
        if not moved:
            break
    return thresholds


def refuse_with_lexicon(model: NBSVMClassifier, lexicon: object) -> None:
    """``threshold='auto'`` with a given lexicon: the held-out copies it tunes on count their
    own, whose labels need not be the lexicon's (a file no command could load)."""
    if lexicon is not None and model.threshold == "auto":
        raise NBSVMError(
            "threshold='auto' (--threshold auto) tunes on models trained on parts of the "
            "data, which cannot share a lexicon counted on all of it: leave out the "
            "lexicon (it is counted in the same pass) or the thresholds"
        )


def tune_thresholds(model: NBSVMClassifier, reread: Reread | None, run: FitRun) -> None:
    """Set ``model.thresholds_`` (the module docstring) on a fitted multi-label model
    whose documents can be read again; where the held-out tenth cannot be had (too few
    documents, a label only in it) the default thresholds stay and a ``"thresholds
    skipped"`` event says why."""
    if reread is None:
        raise NBSVMError(
            "threshold='auto' reads the training documents twice: they cannot come from "
            "standard input"
        )
    t0 = time.perf_counter()
    default = default_threshold(model)

    def tuned(copy, held):
        scores, truth, weight = held
        if not (truth.sum(axis=0) >= MIN_POSITIVES).any():  # every label keeps its default
            raise NBSVMError(
                f"the held-out tenth ({len(truth)} documents of weight above 0) holds fewer than "
                f"{MIN_POSITIVES} documents of every label, too few to place a threshold; "
                "train on more documents, or without --threshold auto"
            )
        copy.calibrator_ = model.calibrator_
        return micro_f1_thresholds(label_values(copy, scores), truth, default, weight=weight)

    try:
        thresholds = with_held_out_copy(model, reread, tuned, run.max_memory)
    except NBSVMError as e:  # too few documents held out, a label only there, memory
        run.notify({"stage": "thresholds skipped", "docs": 0, "why": str(e)})
        return
    model.thresholds_ = thresholds
    run.notify(
        {
            "stage": "thresholds",
            "docs": 0,
            "changed": int(np.sum(thresholds != default)),
            "labels": len(thresholds),
            "seconds": round(time.perf_counter() - t0, 3),
        }
    )
