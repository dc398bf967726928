"""Losses of a prediction ``p`` for a target ``y``: functions of the margin ``z = y * p``
for classification (y in {-1, +1}), of the residual ``p - y`` for regression (``squared``).

Each loss has a registry name, an integer code the numba kernels switch on, and plain-Python
``loss(p, y)`` / ``dloss(p, y)`` (derivative with respect to ``p``) used by tests and docs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numba import njit

from nbsvm.errors import NBSVMError

HINGE, LOG, SQUARED_HINGE, MODIFIED_HUBER = 0, 1, 2, 3
SQUARED = 4  # regression: (p - y)^2 / 2
SOFTMAX, MULTICLASS_HINGE = 5, 6  # of all K scores at once (multiclass_loss)


@njit(cache=True, nogil=True, inline="always")
def loss_dloss(kind, p, y):
    """``(loss, dloss/dp)`` of a binary or regression loss by its code: the one table the
    numba kernels read (the plain functions below are its references)."""
    z = y * p
    if kind == HINGE:
        if z < 1.0:
            return 1.0 - z, -y
        return 0.0, 0.0
    if kind == LOG:
        if z > 18.0:
            e = math.exp(-z)
            return e, -y * e
        if z < -18.0:
            return -z, -y
        return math.log1p(math.exp(-z)), -y / (1.0 + math.exp(z))
    if kind == SQUARED_HINGE:
        if z < 1.0:
            return (1.0 - z) * (1.0 - z), -2.0 * y * (1.0 - z)
        return 0.0, 0.0
    if kind == SQUARED:  # regression: y is the target, not a sign
        r = p - y
        return 0.5 * r * r, r
    # MODIFIED_HUBER
    if z < -1.0:
        return -4.0 * z, -4.0 * y
    if z < 1.0:
        return (1.0 - z) * (1.0 - z), -2.0 * y * (1.0 - z)
    return 0.0, 0.0


@njit(cache=True, nogil=True)
def _mean_loss(p, y, loss_code):
    """Mean of ``loss(p[d], y[d])`` (0 for no rows)."""
    total = 0.0
    for d in range(p.shape[0]):
        total += loss_dloss(loss_code, p[d], y[d])[0]
    return total / max(1, p.shape[0])


def _log_loss(p, y):
    z = y * p
    if z > 18.0:
        return math.exp(-z)
    if z < -18.0:
        return -z
    return math.log1p(math.exp(-z))


def _log_dloss(p, y):
    z = y * p
    if z > 18.0:
        return -y * math.exp(-z)
    if z < -18.0:
        return -y
    return -y / (1.0 + math.exp(z))


def _mh_loss(p, y):
    z = y * p
    return -4.0 * z if z < -1.0 else max(0.0, 1.0 - z) ** 2


def _mh_dloss(p, y):
    z = y * p
    return -4.0 * y if z < -1.0 else (-2.0 * y * (1.0 - z) if z < 1.0 else 0.0)


@dataclass(frozen=True)
class Loss:
    name: str
    code: int
    loss: callable
    dloss: callable
    has_proba: bool


LOSSES = {
    "hinge": Loss(
        "hinge",
        HINGE,
        lambda p, y: max(0.0, 1.0 - y * p),
        lambda p, y: -y if y * p < 1.0 else 0.0,
        False,
    ),
    "log": Loss("log", LOG, _log_loss, _log_dloss, True),
    "squared_hinge": Loss(
        "squared_hinge",
        SQUARED_HINGE,
        lambda p, y: max(0.0, 1.0 - y * p) ** 2,
        lambda p, y: -2.0 * y * (1.0 - y * p) if y * p < 1.0 else 0.0,
        False,
    ),
    "modified_huber": Loss("modified_huber", MODIFIED_HUBER, _mh_loss, _mh_dloss, True),
    # half the square, as in scikit-learn's SquaredLoss, so that the gradient is p - y
    "squared": Loss("squared", SQUARED, lambda p, y: 0.5 * (p - y) ** 2, lambda p, y: p - y, False),
}

# Losses for margins (binary labels) and for real targets (regression).
CLASSIFICATION_LOSSES = ("hinge", "log", "squared_hinge", "modified_huber")
REGRESSION_LOSSES = ("squared",)


def resolve_loss(name: str) -> Loss:
    try:
        return LOSSES[name]
    except (KeyError, TypeError):
        raise NBSVMError(f"unknown loss {name!r}; allowed: {', '.join(LOSSES)}") from None


# Losses of K scores at once (one per class) and the true class: the outputs are trained
# together, not one against the rest. Softmax: the multinomial log loss
# ``log sum_j exp(p_j) - p_y``; multiclass hinge (Crammer & Singer 2001):
# ``max(0, 1 + max_{j != y} p_j - p_y)``.
MULTICLASS_LOSSES = {"softmax": SOFTMAX, "multiclass_hinge": MULTICLASS_HINGE}


def multiclass_loss(name: str, scores, target):
    """Per-row loss of ``scores`` (n, K) for true output indices ``target`` (n,)."""
    import numpy as np

    scores = np.asarray(scores, dtype=np.float64)
    rows = np.arange(len(scores))
    own = scores[rows, target]
    if name == "softmax":
        m = scores.max(axis=1)
        return np.log(np.exp(scores - m[:, None]).sum(axis=1)) + m - own
    other = scores.copy()
    other[rows, target] = -np.inf
    return np.maximum(0.0, 1.0 + other.max(axis=1) - own)


def check_loss(name) -> None:
    """Raise unless ``name`` is a classification loss (margin or multi-class): what a text
    classifier trains with (the regression loss ``squared`` is for ``nbsvm learn``)."""
    if name not in MULTICLASS_LOSSES and name not in CLASSIFICATION_LOSSES:
        raise NBSVMError(
            f"unknown loss {name!r}; allowed: "
            f"{', '.join([*CLASSIFICATION_LOSSES, *MULTICLASS_LOSSES])}"
        )
