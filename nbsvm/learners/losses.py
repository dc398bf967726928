"""Every loss, defined once: its value and derivative as one compiled function that the numba
kernels call and the Python objects of :data:`LOSSES` wrap (as scikit-learn's ``_sgd_fast``
defines a loss once, and fastText's ``loss.cc`` keeps a loss's forward pass and gradient
together). Beside the binary ones, their multi-class forms (softmax, Crammer-Singer hinge) and
the passive-aggressive step of the hinge.

Binary losses are functions of the margin ``z = y * p`` (y in {-1, +1}); ``squared`` of the
residual ``p - y`` (regression). Each has a registry name and an integer code the kernels
switch on (:func:`loss_dloss`). ``tests/naive.py`` holds plain references they are checked
against, with finite differences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

HINGE, LOG, SQUARED_HINGE, MODIFIED_HUBER = 0, 1, 2, 3
SQUARED = 4  # regression: (p - y)^2 / 2
SOFTMAX, MULTICLASS_HINGE = 5, 6  # of all K scores at once (multiclass_loss_grad)


# -- binary and regression losses: (loss, dloss/dp) of a score p for a target y --------------


@njit(cache=True, nogil=True, inline="always")
def hinge_loss(p, y):
    """``max(0, 1 - z)``."""
    z = y * p
    if z < 1.0:
        return 1.0 - z, -y
    return 0.0, 0.0


@njit(cache=True, nogil=True, inline="always")
def log_loss(p, y):
    """``log(1 + exp(-z))``, its tails without overflow."""
    z = y * p
    if z > 18.0:
        e = math.exp(-z)
        return e, -y * e
    if z < -18.0:
        return -z, -y
    return math.log1p(math.exp(-z)), -y / (1.0 + math.exp(z))


@njit(cache=True, nogil=True, inline="always")
def squared_hinge_loss(p, y):
    """``max(0, 1 - z)^2``."""
    z = y * p
    if z < 1.0:
        return (1.0 - z) * (1.0 - z), -2.0 * y * (1.0 - z)
    return 0.0, 0.0


@njit(cache=True, nogil=True, inline="always")
def modified_huber_loss(p, y):
    """``-4 z`` below -1, else ``max(0, 1 - z)^2`` (Zhang 2004; has probabilities)."""
    z = y * p
    if z < -1.0:
        return -4.0 * z, -4.0 * y
    if z < 1.0:
        return (1.0 - z) * (1.0 - z), -2.0 * y * (1.0 - z)
    return 0.0, 0.0


@njit(cache=True, nogil=True, inline="always")
def squared_loss(p, y):
    """Regression: half the squared residual (scikit-learn's SquaredLoss), gradient ``p - y``."""
    r = p - y
    return 0.5 * r * r, r


@njit(cache=True, nogil=True, inline="always")
def loss_dloss(kind, p, y):
    """``(loss, dloss/dp)`` of a binary or regression loss by its code: the one table the
    numba kernels read."""
    if kind == HINGE:
        return hinge_loss(p, y)
    if kind == LOG:
        return log_loss(p, y)
    if kind == SQUARED_HINGE:
        return squared_hinge_loss(p, y)
    if kind == SQUARED:
        return squared_loss(p, y)
    return modified_huber_loss(p, y)


@njit(cache=True, nogil=True)
def _mean_loss(p, y, loss_code):
    """Mean of ``loss(p[d], y[d])`` (0 for no rows)."""
    total = 0.0
    for d in range(p.shape[0]):
        total += loss_dloss(loss_code, p[d], y[d])[0]
    return total / max(1, p.shape[0])


@dataclass(frozen=True)
class Loss:
    """A loss by name: its kernel code, whether it gives probabilities, and its value and
    derivative as plain functions of ``(p, y)`` (the compiled definition above)."""

    name: str
    code: int
    has_proba: bool

    def loss(self, p: float, y: float) -> float:
        return float(loss_dloss(self.code, float(p), float(y))[0])

    def dloss(self, p: float, y: float) -> float:
        """The derivative with respect to ``p``."""
        return float(loss_dloss(self.code, float(p), float(y))[1])


LOSSES = {
    "hinge": Loss("hinge", HINGE, False),
    "log": Loss("log", LOG, True),
    "squared_hinge": Loss("squared_hinge", SQUARED_HINGE, False),
    "modified_huber": Loss("modified_huber", MODIFIED_HUBER, True),
    "squared": Loss("squared", SQUARED, False),
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


@njit(cache=True, nogil=True, inline="always")
def multiclass_loss_grad(kind, p, y, g):
    """Loss of the K scores ``p`` for true output ``y``, and its gradient in ``g``."""
    K = p.shape[0]
    if kind == SOFTMAX:
        m = p[0]
        for o in range(1, K):
            m = max(m, p[o])
        z = 0.0
        for o in range(K):
            g[o] = math.exp(p[o] - m)
            z += g[o]
        for o in range(K):
            g[o] /= z
        g[y] -= 1.0
        return math.log(z) + m - p[y]
    # MULTICLASS_HINGE: the best-scoring wrong output against the true one
    j = 0 if y != 0 else 1
    for o in range(K):
        g[o] = 0.0
        if o != y and p[o] > p[j]:
            j = o
    margin = 1.0 + p[j] - p[y]
    if margin <= 0.0:
        return 0.0
    g[j] = 1.0
    g[y] = -1.0
    return margin


@njit(cache=True, nogil=True)
def _multiclass_losses(kind, scores, target):
    out = np.empty(scores.shape[0])
    g = np.empty(scores.shape[1])
    for d in range(scores.shape[0]):
        out[d] = multiclass_loss_grad(kind, scores[d], target[d], g)
    return out


def multiclass_loss(name: str, scores: ArrayLike, target: ArrayLike) -> np.ndarray:
    """Per-row loss of ``scores`` (n, K) for true output indices ``target`` (n,)."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    target = np.ascontiguousarray(target, dtype=np.int64)
    return _multiclass_losses(MULTICLASS_LOSSES[name], scores, target)


# The passive-aggressive form of the hinge (Crammer et al. 2006): the step that makes a
# violated hinge ``loss`` zero along a direction of squared norm ``norm2``; PA-I clips it at
# ``C``, PA-II softens it by ``1 / (2C)``. PA, MIRA and the multi-label hinge take it.
PA_RULES = {"pa": 0, "pa-i": 1, "pa-ii": 2}
RULE_PA, RULE_PA1, RULE_PA2 = PA_RULES["pa"], PA_RULES["pa-i"], PA_RULES["pa-ii"]


@njit(cache=True, nogil=True, inline="always")
def pa_step(rule, loss, norm2, C):
    """The step ``tau`` of rule ``rule`` (:data:`PA_RULES`) for a hinge ``loss`` and
    ``norm2``."""
    if rule == RULE_PA2:
        return loss / (norm2 + 0.5 / C)
    tau = loss / norm2
    if rule == RULE_PA1 and tau > C:
        tau = C
    return tau


def check_loss(name: object) -> None:
    """Raise unless ``name`` is a classification loss (margin or multi-class): what a text
    classifier trains with (the regression loss ``squared`` is for ``nbsvm learn``)."""
    if name not in MULTICLASS_LOSSES and name not in CLASSIFICATION_LOSSES:
        raise NBSVMError(
            f"unknown loss {name!r}; allowed: "
            f"{', '.join([*CLASSIFICATION_LOSSES, *MULTICLASS_LOSSES])}"
        )
