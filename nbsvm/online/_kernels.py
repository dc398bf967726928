"""All numba code of the linear learners: numpy arrays and scalars in, updates in place.

Rows are CSR (``ids``, ``offsets``) whose values come from a lookup table:
``x[d] = {ids[j]: table[ids[j]]}`` -- NB ratios for NBSVM, ones for binary features.
Each example's label is ``+1`` if ``codes[d] == positive`` else ``-1``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .losses import HINGE, LOG, SQUARED_HINGE, MODIFIED_HUBER

# When the L2 scale grows past this, fold it into the weights (O(2**n_bits), rare).
SCALE_BOUND = 1e6


@njit(cache=True, nogil=True, inline="always")
def _loss_dloss(kind, p, y):
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
    # MODIFIED_HUBER
    if z < -1.0:
        return -4.0 * z, -4.0 * y
    if z < 1.0:
        return (1.0 - z) * (1.0 - z), -2.0 * y * (1.0 - z)
    return 0.0, 0.0


@njit(cache=True, nogil=True)
def _sgd_epoch(ids, offsets, codes, positive, order, table, v, state, eta0, lam, bias_rate,
               loss_kind):
    """Plain SGD (Bottou 2012) over ``order``; returns the summed loss before each update.

    ``w = v / s``: L2 shrinks ``w`` by raising ``s`` (``s /= 1 - eta*lam``), so each step
    touches only the example's non-zeros. ``state = [s, bias, t]``; ``t`` counts all updates
    so far and sets ``eta_t = eta0 / (1 + lam*eta0*t)``. The bias moves with
    ``eta_t * bias_rate`` and is not regularized.
    """
    s = state[0]
    b = state[1]
    t = state[2]
    total = 0.0
    for k in range(order.shape[0]):
        d = order[k]
        lo = offsets[d]
        hi = offsets[d + 1]
        y = 1.0 if codes[d] == positive else -1.0
        dot = 0.0
        for j in range(lo, hi):
            i = ids[j]
            dot += v[i] * table[i]
        p = dot / s + b
        loss, g = _loss_dloss(loss_kind, p, y)
        total += loss
        eta = eta0 / (1.0 + lam * eta0 * t)
        if lam > 0.0:
            s = s / (1.0 - eta * lam)
        if g != 0.0:
            c = -eta * g * s
            for j in range(lo, hi):
                i = ids[j]
                v[i] += c * table[i]
            b -= eta * bias_rate * g
        t += 1.0
        if s > SCALE_BOUND:
            inv = 1.0 / s
            for i in range(v.shape[0]):
                v[i] *= inv
            s = 1.0
    state[0] = s
    state[1] = b
    state[2] = t
    return total


@njit(cache=True, nogil=True)
def _adagrad_epoch(ids, offsets, codes, positive, order, table, w, sq, state, eta0, lam,
                   bias_rate, loss_kind, eps):
    """AdaGrad (Duchi et al. 2011) with per-bucket steps ``eta0 / sqrt(G_i + eps)``.

    L2 enters each touched bucket's gradient as ``lam * w_i`` (lazily: buckets not in the
    example are not shrunk). ``state = [bias, t, G_bias]``. Returns the summed loss.
    """
    b = state[0]
    t = state[1]
    gb = state[2]
    total = 0.0
    for k in range(order.shape[0]):
        d = order[k]
        lo = offsets[d]
        hi = offsets[d + 1]
        y = 1.0 if codes[d] == positive else -1.0
        dot = 0.0
        for j in range(lo, hi):
            i = ids[j]
            dot += w[i] * table[i]
        p = dot + b
        loss, g = _loss_dloss(loss_kind, p, y)
        total += loss
        for j in range(lo, hi):
            i = ids[j]
            gi = g * table[i] + lam * w[i]
            if gi != 0.0:
                sq[i] += gi * gi
                w[i] -= eta0 * gi / math.sqrt(sq[i] + eps)
        if g != 0.0:
            gb += g * g
            b -= eta0 * bias_rate * g / math.sqrt(gb + eps)
        t += 1.0
    state[0] = b
    state[1] = t
    state[2] = gb
    return total


@njit(cache=True, nogil=True)
def _scores(ids, offsets, table, w, out):
    """out[d] = sum_j w[ids[j]] * table[ids[j]] over document d's ids."""
    for d in range(offsets.shape[0] - 1):
        acc = 0.0
        for j in range(offsets[d], offsets[d + 1]):
            i = ids[j]
            acc += w[i] * table[i]
        out[d] = acc


@njit(cache=True, nogil=True)
def _table_sums(ids, offsets, table, out):
    """out[d] = sum_j table[ids[j]] (the NB log-likelihood ratio of a binarized document)."""
    for d in range(offsets.shape[0] - 1):
        acc = 0.0
        for j in range(offsets[d], offsets[d + 1]):
            acc += table[ids[j]]
        out[d] = acc
