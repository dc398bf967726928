"""Numba kernels of dual coordinate descent for L2-regularized linear classifiers
(:mod:`nbsvm.learners.dcd`): Hsieh, Chang, Lin, Keerthi & Sundararajan (ICML 2008) for the
L1- and L2-loss SVM, Yu, Huang & Lin (Machine Learning 2011) for logistic regression, the
algorithms of liblinear's dual solvers (written here from the papers).

The primal is ``1/2 ||w||^2 + C sum_i loss(y_i w.x_i)``; the dual variables ``alpha``
give ``w = sum_i alpha_i y_i x_i``, kept up to date so that each coordinate costs one row.
A bias is the weight of a constant feature of value ``bias`` (``w[n_features]``,
regularized, as liblinear does); ``bias = 0`` for none.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

SQUARED_HINGE = 0
HINGE = 1
LOG = 2


@njit(cache=True, nogil=True)
def _row_dot(w, indices, values, start, stop, bias, bias_index):
    s = 0.0
    for j in range(start, stop):
        s += w[indices[j]] * values[j]
    return s + w[bias_index] * bias if bias != 0.0 else s


@njit(cache=True, nogil=True)
def _row_add(w, indices, values, start, stop, step, bias, bias_index):
    for j in range(start, stop):
        w[indices[j]] += step * values[j]
    if bias != 0.0:
        w[bias_index] += step * bias


@njit(cache=True, nogil=True)
def _svm_pass(indices, values, offsets, y, order, C, kind, qd, alpha, w, bias, bias_index):
    """One pass of the SVM dual over ``order`` (Hsieh et al. 2008, Algorithm 1, without
    shrinking): for each ``i``, the gradient ``G = y_i w.x_i - 1 + D_ii alpha_i``, its
    projection on the box ``[0, U]``, and the exact minimizer along ``alpha_i``. ``qd[i]``
    is ``||x_i||^2 (+ bias^2) + D_ii``; the squared hinge has ``U = inf``,
    ``D_ii = 1 / (2C)``, the hinge ``U = C``, ``D_ii = 0``. Returns the largest and
    smallest projected gradient (their gap is the stopping test)."""
    upper = C if kind == HINGE else np.inf
    diag = 0.5 / C if kind == SQUARED_HINGE else 0.0
    pg_max = -np.inf
    pg_min = np.inf
    for i in order:
        a, b = offsets[i], offsets[i + 1]
        g = y[i] * _row_dot(w, indices, values, a, b, bias, bias_index) - 1.0 + diag * alpha[i]
        pg = g
        if alpha[i] == 0.0:
            pg = min(g, 0.0)
        elif alpha[i] == upper:
            pg = max(g, 0.0)
        pg_max = max(pg_max, pg)
        pg_min = min(pg_min, pg)
        if pg != 0.0 and qd[i] > 0.0:
            old = alpha[i]
            alpha[i] = min(max(old - g / qd[i], 0.0), upper)
            _row_add(w, indices, values, a, b, (alpha[i] - old) * y[i], bias, bias_index)
    return pg_max, pg_min


@njit(cache=True, nogil=True)
def _log_pass(indices, values, offsets, y, order, C, qd, alpha, w, bias, bias_index, inner_eps):
    """One pass of the logistic-regression dual over ``order`` (Yu, Huang & Lin 2011,
    Algorithm 5): ``alpha_i`` and ``C - alpha_i`` both stay in ``(0, C)``; each coordinate
    solves ``min_z 1/2 a (z - z0)^2 + s b (z - z0) + z log z + (C - z) log(C - z)`` by
    Newton's method (``a = ||x_i||^2``, ``b = y_i w.x_i``, ``z`` the smaller-gradient
    side), a step that would leave ``(0, C)`` shrinking ``z`` by 0.1 instead. Returns the
    largest |first derivative| at the start of a coordinate (the stopping test) and the
    Newton steps taken. ``alpha`` has two entries per example: ``alpha[2i]`` and
    ``alpha[2i + 1] = C - alpha[2i]``."""
    g_max = 0.0
    newton = 0
    for i in order:
        a_i, b_i = offsets[i], offsets[i + 1]
        quad = qd[i]
        lin = y[i] * _row_dot(w, indices, values, a_i, b_i, bias, bias_index)
        first, second, sign = 2 * i, 2 * i + 1, 1.0
        if 0.5 * quad * (alpha[second] - alpha[first]) + lin < 0.0:
            first, second, sign = 2 * i + 1, 2 * i, -1.0
        z0 = alpha[first]
        z = z0
        if C - z < 0.5 * C:
            z = 0.1 * z
        gp = quad * (z - z0) + sign * lin + math.log(z / (C - z))
        g_max = max(g_max, abs(gp))
        steps = 0
        while steps <= 100 and abs(gp) >= inner_eps:
            gpp = quad + C / (C - z) / z
            trial = z - gp / gpp
            z = z * 0.1 if trial <= 0.0 else trial
            gp = quad * (z - z0) + sign * lin + math.log(z / (C - z))
            steps += 1
        newton += steps
        if steps > 0:
            alpha[first] = z
            alpha[second] = C - z
            _row_add(w, indices, values, a_i, b_i, sign * (z - z0) * y[i], bias, bias_index)
    return g_max, newton
