"""Numba kernels of the multi-output linear learners (PA, MIRA, multi-class and multi-label
hinge): arrays and scalars in, updates in place.

Shared state, one row per class or label (``K`` rows):

- ``W`` ``(K, n_features + 1)``: the last column is the bias, the weight of a constant input
  1 (updated only with ``use_bias``); the last iterate is ``scale * W`` (L2 shrinkage only
  changes ``scale``, so a step touches only the example's non-zeros);
- ``A`` of ``W``'s shape, or ``(0, 0)`` without averaging: with
  ``state = [scale, scale_sum, n_iterates]`` the sum of all iterates ``w_0 .. w_T`` is
  ``scale_sum * W - A``; dividing by ``n_iterates`` gives the averaged weights. With
  ``scale == 1`` this is Daume's trick (``A`` collects ``n_iterates * update``); in
  general, if ``W`` moves by ``delta`` at a step, ``A`` moves by ``scale_sum * delta``
  (``scale_sum`` before the step's own scale is added).

Rows are CSR with explicit values (``indices``, ``values``, ``offsets``); examples are
visited in ``order``. ``T`` ``(K, n_features)`` (or ``(0, 0)``: every class sees the same
row) is a class table: class ``k`` sees the document through it, ``phi(x, k) = T[k] o x``
(divided by its norm with ``unit``), the joint feature map of structured prediction (Sol,
Fendrich 2012) in which NBSVM's classes score the document on their own NB ratios.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nbsvm.learners.kernels.losses import pa_step
from nbsvm.learners.schedules import CONSTANT, INVSQRT, OPTIMAL, PEGASOS, rate

# when ``scale`` leaves [SCALE_MIN, SCALE_MAX], fold it into ``W`` (O(K n_features), rare)
SCALE_MIN = 1e-6
SCALE_MAX = 1e6

# per-label step rules of _per_label_epoch: the hinge's PA steps (they also serve MIRA), or SGD
RULE_SGD = 3
# step-size schedules of the SGD kernels (t counts steps from 1)
# (the names and formulas of nbsvm.learners.schedules)
SCHED_CONSTANT, SCHED_INVSQRT, SCHED_PEGASOS, SCHED_OPTIMAL = CONSTANT, INVSQRT, PEGASOS, OPTIMAL


@njit(cache=True, nogil=True, inline="always")
def _value(values, T, f, j, i, k):
    """Entry ``j`` (column ``i``) of class ``k``'s row: the shared value, or with a class
    table (the joint feature map ``phi(x, k) = T[k] o x``) ``values[j] T[k, i] f[k]``."""
    if T.shape[0] == 0:
        return values[j]
    return values[j] * T[k, i] * f[k]


@njit(cache=True, nogil=True, inline="always")
def _class_factors(indices, values, lo, hi, T, unit, f):
    """``f[k]``: 1, or with ``unit`` one over the norm of class ``k``'s row ``T[k] o x``
    (an all-zero row keeps 1); nothing to do without a class table."""
    if T.shape[0] == 0:
        return
    for k in range(T.shape[0]):
        f[k] = 1.0
        if unit:
            acc = 0.0
            for j in range(lo, hi):
                v = values[j] * T[k, indices[j]]
                acc += v * v
            if acc > 0.0:
                f[k] = 1.0 / np.sqrt(acc)


@njit(cache=True, nogil=True, inline="always")
def _dot(indices, values, lo, hi, W, k, T, f):
    acc = 0.0
    for j in range(lo, hi):
        i = indices[j]
        acc += W[k, i] * _value(values, T, f, j, i, k)
    return acc


@njit(cache=True, nogil=True, inline="always")
def _sq_norm(indices, values, lo, hi, T, f, k):
    """``||x||^2`` of class ``k``'s row (the shared row without a class table)."""
    acc = 0.0
    for j in range(lo, hi):
        v = _value(values, T, f, j, indices[j], k)
        acc += v * v
    return acc


@njit(cache=True, nogil=True, inline="always")
def _score(indices, values, lo, hi, W, k, T, f):
    """W[k] . (phi(x, k), 1): the row's dot product plus the bias column."""
    return _dot(indices, values, lo, hi, W, k, T, f) + W[k, W.shape[1] - 1]


@njit(cache=True, nogil=True, inline="always")
def _all_scores(indices, values, lo, hi, W, T, unit, f, scale, scores):
    """``scores[k] = scale * W[k] . (phi(x, k), 1)`` for every class, the class factors
    ``f`` set first."""
    _class_factors(indices, values, lo, hi, T, unit, f)
    for k in range(W.shape[0]):
        scores[k] = scale * _score(indices, values, lo, hi, W, k, T, f)


@njit(cache=True, nogil=True, inline="always")
def _add_row(indices, values, lo, hi, W, A, k, step, use_bias, scale_sum, T, f):
    """W[k] += step * (phi(x, k), use_bias); A[k] += scale_sum * (the same) when
    averaging."""
    averaging = A.shape[1] > 0
    acc_step = scale_sum * step
    for j in range(lo, hi):
        i = indices[j]
        v = _value(values, T, f, j, i, k)
        W[k, i] += step * v
        if averaging:
            A[k, i] += acc_step * v
    if use_bias:
        W[k, W.shape[1] - 1] += step
        if averaging:
            A[k, W.shape[1] - 1] += acc_step


@njit(cache=True, nogil=True)
def _fold_scale(W, A, state):
    """Write ``scale`` into ``W`` and restart ``scale_sum`` at 0, keeping the iterate sum:
    ``A <- A - scale_sum * W`` (so ``0 * W' - A'`` is the old sum), ``W <- scale * W``."""
    scale = state[0]
    scale_sum = state[1]
    averaging = A.shape[1] > 0
    for k in range(W.shape[0]):
        for i in range(W.shape[1]):
            if averaging:
                A[k, i] -= scale_sum * W[k, i]
            W[k, i] *= scale
    state[0] = 1.0
    state[1] = 0.0


@njit(cache=True, nogil=True, inline="always")
def _shrink(W, A, state, factor):
    """Multiply the iterate by ``factor`` (L2 step), folding when the scale drifts; a
    factor <= 0 restarts the weights from 0 (Pegasos' first step)."""
    state[0] *= max(factor, 0.0)
    if state[0] < SCALE_MIN or state[0] > SCALE_MAX:
        _fold_scale(W, A, state)


@njit(cache=True, nogil=True, inline="always")
def _end_step(state):
    state[1] += state[0]
    state[2] += 1.0


@njit(cache=True, nogil=True, inline="always")
def _eta(schedule, eta0, lam, t):
    """The step of update ``t`` (counted from 1 here) from the one schedule table."""
    return rate(schedule, t - 1.0, eta0, lam)


@njit(cache=True, nogil=True)
def _mira_epoch(
    indices, values, offsets, T, unit, y, order, cost, W, A, state, rule, C, use_bias, on_error_only
):
    """Multi-class MIRA / PA (Crammer et al. 2006), closed form for k = 1.

    With ``top`` the best-scoring wrong class and ``worst`` the wrong class with the highest
    ``score[r] + cost[y, r]`` (lowest index on ties), the rival is ``r = worst`` (the
    max-loss update; with the zero-one cost ``worst == top``), or with ``on_error_only``
    ``r = top`` and only when ``score[top] >= score[y]`` (the prediction update of the k = 1
    MIRA of docs/design.md). With ``margin = score[y] - score[r]`` and
    ``loss = cost[y, r] - margin > 0``:
    ``tau = pa_step(rule, loss, ||phi(x, y)||^2 + ||phi(x, r)||^2 + 2 use_bias)`` (the
    squared norm of ``phi(x, y) - phi(x, r)``; ``2 (||x||^2 + use_bias)`` with a shared row),
    ``w_y += tau phi(x, y)``, ``w_r -= tau phi(x, r)``
    (and the biases by ``+-tau``). No shrinkage: ``state[0]`` stays 1. Returns
    ``(summed cost-sensitive hinge max(0, cost[y, worst] - score[y] + score[worst]) before
    each step, mistakes)``; a mistake is ``score[top] >= score[y]``.
    """
    n_classes = W.shape[0]
    scores = np.empty(n_classes)
    f = np.ones(n_classes)
    total = 0.0
    mistakes = 0
    for n in range(order.shape[0]):
        d = order[n]
        lo = offsets[d]
        hi = offsets[d + 1]
        label = y[d]
        _all_scores(indices, values, lo, hi, W, T, unit, f, 1.0, scores)
        top = -1
        worst = -1
        for k in range(n_classes):
            if k == label:
                continue
            if top < 0 or scores[k] > scores[top]:
                top = k
            if worst < 0 or scores[k] + cost[label, k] > scores[worst] + cost[label, worst]:
                worst = k
        mistake = scores[top] >= scores[label]
        if mistake:
            mistakes += 1
        hinge = cost[label, worst] - (scores[label] - scores[worst])
        if hinge > 0.0:
            total += hinge
        rival = worst
        if on_error_only:
            rival = top
        loss = cost[label, rival] - (scores[label] - scores[rival])
        norm2 = (
            _sq_norm(indices, values, lo, hi, T, f, label)
            + _sq_norm(indices, values, lo, hi, T, f, rival)
            + (2.0 if use_bias else 0.0)
        )
        if loss > 0.0 and norm2 > 0.0 and (mistake or not on_error_only):
            tau = pa_step(rule, loss, norm2, C)
            _add_row(indices, values, lo, hi, W, A, label, tau, use_bias, state[1], T, f)
            _add_row(indices, values, lo, hi, W, A, rival, -tau, use_bias, state[1], T, f)
        _end_step(state)
    return total, mistakes


@njit(cache=True, nogil=True)
def _crammer_singer_epoch(
    indices, values, offsets, T, unit, y, order, W, A, state, lam, schedule, eta0, use_bias
):
    """SGD on the multi-class hinge of Crammer & Singer as in Sol (Fendrich 2012, eq. 10-11):
    ``lam/2 sum_k ||w_k||^2 + max(0, 1 + max_{r != y} s_r - s_y)`` with
    ``s_k = w_k.x + b_k`` (the bias is the weight of a constant input 1, shrunk with ``w``).

    Step t (``t = state[2]``, 1 on the first step): ``eta = _eta(schedule, eta0, lam, t)``;
    all weights shrink by ``1 - eta lam``; if the hinge is positive, with ``r`` the
    best-scoring wrong class (lowest index on ties), ``w_y += eta phi(x, y)``,
    ``w_r -= eta phi(x, r)`` and
    ``b_y += eta``, ``b_r -= eta``. Returns ``(summed hinge before each step, mistakes)``.
    """
    n_classes = W.shape[0]
    scores = np.empty(n_classes)
    f = np.ones(n_classes)
    total = 0.0
    mistakes = 0
    for n in range(order.shape[0]):
        d = order[n]
        lo = offsets[d]
        hi = offsets[d + 1]
        label = y[d]
        scale = state[0]
        _all_scores(indices, values, lo, hi, W, T, unit, f, scale, scores)
        rival = -1
        for k in range(n_classes):
            if k != label and (rival < 0 or scores[k] > scores[rival]):
                rival = k
        margin = scores[label] - scores[rival]
        if margin <= 0.0:
            mistakes += 1
        eta = _eta(schedule, eta0, lam, state[2])
        if lam > 0.0:
            _shrink(W, A, state, 1.0 - eta * lam)
        if margin < 1.0:
            total += 1.0 - margin
            step = eta / state[0]
            _add_row(indices, values, lo, hi, W, A, label, step, use_bias, state[1], T, f)
            _add_row(indices, values, lo, hi, W, A, rival, -step, use_bias, state[1], T, f)
        _end_step(state)
    return total, mistakes


@njit(cache=True, nogil=True)
def _per_label_epoch(
    indices, values, offsets, T, unit, Y, order, W, A, state, rule, C, lam, schedule, eta0, use_bias
):
    """One hinge per label (Sol's multi-label, Fendrich 2012 eq. 12-13; binary PA with one
    label): ``Y[d, l]`` in {-1, +1}, ``s_l = w_l.x + b_l``, loss ``max(0, 1 - Y[d, l] s_l)``;
    the bias is the weight of a constant input 1 (shrunk with ``w``).

    ``rule`` RULE_SGD: step t (``t = state[2]``) shrinks all weights by ``1 - eta lam``
    (``eta = _eta(schedule, eta0, lam, t)``), then each violated label moves
    ``w_l += eta Y[d, l] x``, ``b_l += eta Y[d, l]``. PA rules (Crammer et al. 2006):
    ``tau_l = pa_step(rule, loss_l, ||phi(x, l)||^2 + use_bias)`` replaces ``eta`` (no
    shrinkage); label ``l`` moves along its own row ``phi(x, l)``.
    Returns ``(summed loss before each step, label mistakes)``: a mistake is a label with
    ``Y[d, l] s_l <= 0``.
    """
    n_labels = W.shape[0]
    scores = np.empty(n_labels)
    f = np.ones(n_labels)
    total = 0.0
    mistakes = 0
    for n in range(order.shape[0]):
        d = order[n]
        lo = offsets[d]
        hi = offsets[d + 1]
        scale = state[0]
        _all_scores(indices, values, lo, hi, W, T, unit, f, scale, scores)
        eta = 0.0
        if rule == RULE_SGD:
            eta = _eta(schedule, eta0, lam, state[2])
            if lam > 0.0:
                _shrink(W, A, state, 1.0 - eta * lam)
        for k in range(n_labels):
            sign = float(Y[d, k])
            z = sign * scores[k]
            if z <= 0.0:
                mistakes += 1
            if z < 1.0:
                total += 1.0 - z
                if rule == RULE_SGD:
                    step = eta
                else:
                    norm2 = _sq_norm(indices, values, lo, hi, T, f, k) + (1.0 if use_bias else 0.0)
                    if norm2 <= 0.0:
                        continue
                    step = pa_step(rule, 1.0 - z, norm2, C)
                _add_row(
                    indices,
                    values,
                    lo,
                    hi,
                    W,
                    A,
                    k,
                    sign * step / state[0],
                    use_bias,
                    state[1],
                    T,
                    f,
                )
        _end_step(state)
    return total, mistakes


@njit(cache=True, nogil=True)
def _linear_scores(indices, values, offsets, T, unit, W, out):
    """out[d, k] = W[k] . (phi(x_d, k), 1) (the last column of ``W`` is the bias)."""
    f = np.ones(W.shape[0])
    for d in range(offsets.shape[0] - 1):
        lo = offsets[d]
        hi = offsets[d + 1]
        _all_scores(indices, values, lo, hi, W, T, unit, f, 1.0, out[d])
