"""Every loss's value and derivative, compiled: the one definition the numba kernels call
and the Python objects of :data:`nbsvm.learners.losses.LOSSES` wrap (names, codes and
registry live there, without numba)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from nbsvm.learners.kernels.loss_codes import (
    HINGE,
    LOG,
    RULE_PA1,
    RULE_PA2,
    SOFTMAX,
    SQUARED,
    SQUARED_HINGE,
)


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
