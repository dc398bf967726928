"""What each kept bucket adds to a fitted model's scores.

Every kept bucket ``i`` adds a fixed amount to output ``k``'s score when present in a
document (features are binarized): ``c_ki = r_ki w_ki`` for ``beta = 1``; with
``interpolate='scores'``, ``beta r w + (1 - beta) r``; with ``'weights'``,
``beta r w + (1 - beta) mean|w| r``. The score is ``const_k + sum of c_ki`` over the buckets
present (:func:`contributions`); :func:`_unit_row` is the same for one document whose row is
scaled to unit norm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from nbsvm.models.nbsvm import NBSVMClassifier


def _backend_row(clf, k: int, out: np.ndarray) -> float:
    """:func:`_contribution_row` of a model trained with ``learner`` (the backend's weights
    over the same columns; NB interpolation by scores only)."""
    learner = clf.linear_
    values, w, b = clf.backend_.output_weights(k, learner.tables)
    out[:] = w if values is None else values.astype(np.float64) * w
    beta = clf.beta
    if beta == 1.0:
        return b
    out *= out.dtype.type(beta)
    out += out.dtype.type(1 - beta) * learner.tables[k].astype(out.dtype)
    return beta * b + (1 - beta) * clf.log_prior(k)


def _contribution_row(clf, k: int, out: np.ndarray, mean_abs=None, lo: int = 0) -> float:
    """Row ``k`` of :func:`contributions` into ``out`` (its dtype; with ``lo``, columns
    ``lo..lo+len(out)-1`` only, as a built-in learner allows); returns ``const[k]``."""
    if clf.backend_learner is not None:
        return _backend_row(clf, k, out)
    learner = clf.linear_
    dtype = out.dtype.type
    S = learner.S_[k, lo : lo + out.shape[0]]
    np.multiply(S[:, 0], S[:, 1], out=out, dtype=out.dtype, casting="unsafe")
    out *= dtype(learner.scale_of(k))
    b = float(learner.intercept()[k])
    beta = clf.beta
    if beta == 1.0:
        return b
    out *= dtype(beta)
    if clf.interpolate == "scores":
        out += dtype(1 - beta) * S[:, 0].astype(out.dtype)
        return beta * b + (1 - beta) * clf.log_prior(k)
    mean_abs = clf.mean_abs_coef_ if mean_abs is None else mean_abs
    out += dtype((1 - beta) * float(np.asarray(mean_abs)[k])) * S[:, 0].astype(out.dtype)
    return b


def contributions(
    clf: NBSVMClassifier, dtype: DTypeLike = np.float64, mean_abs: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(C, const)``: ``C[k, column]`` is what a present bucket adds to output ``k``'s
    score, ``const[k]`` the score of an empty document (``dtype=np.float32``: faster, for
    ranking; ``mean_abs``: mean |w| per output for ``interpolate='weights'``, default the
    model's ``mean_abs_coef_``). Reads the learner's state without changing it."""
    clf.check_fitted()
    learner = clf.linear_
    C = np.empty((learner.n_outputs, learner.n_features), dtype=dtype)
    const = np.array([_contribution_row(clf, k, C[k], mean_abs) for k in range(learner.n_outputs)])
    return C, const


def contribution_row(clf: NBSVMClassifier, k: int) -> tuple[np.ndarray, float]:
    """Row ``k`` of :func:`contributions` and ``const[k]`` (float64), for one output: what
    explaining one class needs (all of them cost outputs x columns per request)."""
    clf.check_fitted()
    row = np.empty(clf.linear_.n_features, dtype=np.float64)
    return row, float(_contribution_row(clf, k, row))


def _unit_row(clf, k: int, buckets: list[int]) -> np.ndarray:
    """Output ``k``'s contributions for one document whose rows are scaled to unit norm:
    the linear part (and with ``interpolate='weights'`` the NB part) divided by the norm of
    the ratios of the document's distinct kept columns."""
    learner = clf.linear_
    cols = np.array(
        sorted({int(clf.column_of_[b]) if clf.column_of_ is not None else b for b in buckets}),
        dtype=np.int64,
    )
    cols = cols[cols >= 0]
    r = learner.S_[k, :, 0].astype(np.float64)
    if clf.backend_learner is not None:  # the backend's row values: ratios, or 1 (shared)
        values, w, _ = clf.backend_.output_weights(k, learner.tables)
        x = np.ones_like(r) if values is None else r
        linear = x * w
    else:
        x = r
        linear = r * learner.S_[k, :, 1].astype(np.float64) * learner.scale_of(k)
    norm = float(np.sqrt(np.sum(x[cols] ** 2))) if cols.size else 0.0
    inv = 1.0 / norm if norm > 0 else 0.0
    beta = clf.beta
    if beta == 1.0:
        return linear * inv
    if clf.interpolate == "scores":
        return beta * linear * inv + (1 - beta) * r
    return (beta * linear + (1 - beta) * float(clf.mean_abs_coef_[k]) * r) * inv
