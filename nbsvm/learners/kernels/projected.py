"""Numba kernels of the learners projected onto an L2 ball on explicit rows: mini-batch
Pegasos (:mod:`.pegasos`) and projected online gradient descent (:mod:`.ogd`). Both keep
``w = s v``, so that the shrinkage and the projection only rescale ``s``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from nbsvm.learners.kernels.weight_tricks import FOLD_HIGH, FOLD_LOW, _set


@njit(cache=True, nogil=True)
def _pegasos_batch_pass(indices, values, offsets, y, order, v, state, lam, k, bias_index):
    """Mini-batch Pegasos (Shalev-Shwartz, Singer & Srebro 2007, Fig. 2) over ``order`` cut
    into consecutive batches of ``k`` (the last may be smaller; its size ``m`` divides).

    Iteration t (from 1, ``state = [s, ||v||^2, t, violations]``, ``w = s v``): with all
    margins of the batch taken at ``w_t``, ``w <- (1 - 1/t) w + 1/(lam t m) sum y x`` over
    the violators (``y w.x < 1``), then projection onto ``||w|| <= 1/sqrt(lam)``. With
    ``bias_index >= 0``, ``v[bias_index]`` is the weight of a constant feature of value 1
    (the paper's bias convention: regularized and projected like the other weights).
    Returns the summed hinge loss of the examples at the ``w`` they were checked against.
    """
    s = state[0]
    sq = state[1]
    t = state[2]
    violations = state[3]
    radius2 = 1.0 / lam
    total = 0.0
    n = order.shape[0]
    margins = np.empty(k)
    for start in range(0, n, k):
        stop = min(n, start + k)
        m = stop - start
        for kk in range(start, stop):
            d = order[kk]
            dot = v[bias_index] if bias_index >= 0 else 0.0
            for j in range(offsets[d], offsets[d + 1]):
                dot += v[indices[j]] * values[j]
            margins[kk - start] = y[d] * dot * s
        t += 1.0
        if t == 1.0:  # (1 - 1/t) = 0: w restarts from 0
            for i in range(v.shape[0]):
                v[i] = 0.0
            s = 1.0
            sq = 0.0
        else:
            s *= 1.0 - 1.0 / t
        for kk in range(start, stop):
            margin = margins[kk - start]
            if margin < 1.0:
                d = order[kk]
                total += 1.0 - margin
                violations += 1.0
                c = y[d] / (lam * t * m * s)
                for j in range(offsets[d], offsets[d + 1]):
                    i = indices[j]
                    sq = _set(v, i, v[i] + c * values[j], sq, v[:0], 0.0)
                if bias_index >= 0:
                    sq = _set(v, bias_index, v[bias_index] + c, sq, v[:0], 0.0)
        norm2 = s * s * sq
        if norm2 > radius2:
            s *= math.sqrt(radius2 / norm2)
        if s < FOLD_LOW or s > FOLD_HIGH:
            for i in range(v.shape[0]):
                v[i] *= s
            sq *= s * s
            s = 1.0
    state[0] = s
    state[1] = sq
    state[2] = t
    state[3] = violations
    return total


@njit(cache=True, nogil=True, inline="always")
def _row_dot(indices, values, lo, hi, v):
    acc = 0.0
    for j in range(lo, hi):
        acc += v[indices[j]] * values[j]
    return acc


@njit(cache=True, nogil=True, inline="always")
def _add_row(indices, values, lo, hi, v, c, sq):
    """v += c * x over the row's entries; returns ``||v||^2`` updated from ``sq``."""
    for j in range(lo, hi):
        i = indices[j]
        old = v[i]
        v[i] = old + c * values[j]
        sq += v[i] * v[i] - old * old
    return sq


@njit(cache=True, nogil=True, inline="always")
def _fold_scale(v, s, sq):
    """Fold ``w = s * v`` back into ``v`` when ``s`` drifts far from 1 (O(n_features), rare)."""
    if s < 1e-6 or s > 1e6:
        for i in range(v.shape[0]):
            v[i] *= s
        sq *= s * s
        s = 1.0
    return s, sq


@njit(cache=True, nogil=True)
def _ogd_epoch(indices, values, offsets, y, order, v, state, eta, radius, before, after):
    """Online gradient descent (Zinkevich 2003) for the square loss, projected on a ball.

    Step t (from 1): ``w <- P(w - eta/sqrt(t) * (w.x - y) x)``, ``P`` the projection onto
    the L2 ball of radius ``radius``. ``w = s * v`` so that the projection only rescales
    ``s``; ``state = [s, ||v||^2, t]``. ``before[k]`` / ``after[k]`` receive the prediction
    for the k-th visited example just before / just after its update.
    """
    s = state[0]
    sq = state[1]
    t = state[2]
    for k in range(order.shape[0]):
        d = order[k]
        lo = offsets[d]
        hi = offsets[d + 1]
        p = s * _row_dot(indices, values, lo, hi, v)
        before[k] = p
        t += 1.0
        sq = _add_row(indices, values, lo, hi, v, -eta / math.sqrt(t) * (p - y[d]) / s, sq)
        norm2 = s * s * sq
        if norm2 > radius * radius:
            s *= radius / math.sqrt(norm2)
        after[k] = s * _row_dot(indices, values, lo, hi, v)
        s, sq = _fold_scale(v, s, sq)
    state[0] = s
    state[1] = sq
    state[2] = t
