"""Numba kernels of NBSVM's table rows (:mod:`.sgd`): the SGD and AdaGrad entries, the
multi-class losses and scoring; numpy arrays and scalars in, updates in place.

Rows are CSR (``ids``, ``offsets``) whose values come from a lookup table. The table and
the learner's per-feature state live side by side in one float32 array ``S`` of shape
``(n_features, W)`` (array of structs): ``S[i, 0]`` is feature i's value when present
(the NB ratio for NBSVM, 1 for plain binary features), ``S[i, 1]`` its weight and, for
AdaGrad, ``S[i, 2]`` its sum of squared gradients. One update then touches one cache line
instead of three, which is what bounds the speed of sparse SGD on large hashed spaces.
Each example's label is ``+1`` if ``codes[d] == positive`` else ``-1`` (AdaGrad: ``y[d]``).

AdaGrad has one implementation for these rows and for explicit-valued ones
(:func:`nbsvm.learners.kernels.linear._adagrad_steps`); :func:`_adagrad_epoch` is its entry
for table rows. The loss table is :func:`nbsvm.learners.losses.loss_dloss`, the schedule table
:func:`nbsvm.learners.schedules.rate`. OGD's kernel (explicit rows) is in
:mod:`.projected`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from nbsvm._prefetch import prefetch_row
from nbsvm.learners.kernels.linear import _adagrad_row, _adagrad_steps, _sgd_steps
from nbsvm.learners.kernels.losses import multiclass_loss_grad
from nbsvm.learners.kernels.prefetch import TABLE_PREFETCH
from nbsvm.learners.kernels.weight_tricks import BIAS, FOLD_HIGH, FOLD_LOW, SCALE, STATE_SIZE, T
from nbsvm.learners.schedules import OPTIMAL, rate

# Rows are prefetched this many non-zeros ahead: on the IMDB epoch 24-48 were equally good
# and 8 too short to hide a cache miss (pipelines/bench_kernels.py measures the gain).
PREFETCH_AHEAD = TABLE_PREFETCH


@njit(cache=True, nogil=True, inline="always")
def _unit_dot(ids, lo, hi, S, unit):
    """``(sum_j w_i v_i, inv)`` over a row's ids ``i = ids[j]`` (``v = S[:, 0]``,
    ``w = S[:, 1]``): ``inv = 1 / ||v_row||`` when ``unit`` (0 for an all-zero row), else 1.
    Scaling a row to unit length keeps long documents from outweighing short ones (as
    TF-IDF's L2 norm does); with ``unit`` False the products are the unscaled ones, bit for
    bit."""
    dot = 0.0
    sq = 0.0
    for j in range(lo, hi):
        if j + PREFETCH_AHEAD < hi:
            prefetch_row(S, ids[j + PREFETCH_AHEAD])
        i = ids[j]
        v = S[i, 0]
        dot += np.float64(S[i, 1]) * v  # exact product in float64
        if unit:
            sq += np.float64(v) * v
    inv = 1.0
    if unit:
        inv = 1.0 / math.sqrt(sq) if sq > 0.0 else 0.0
    return dot, inv


@njit(cache=True, nogil=True)
def _sgd_epoch(ids, offsets, y, weight, order, S, state, eta0, lam, bias_rate, loss_kind, unit):
    """Plain SGD (Bottou 2012) on table rows: :func:`~nbsvm.learners.kernels.linear.
    _sgd_steps`, the one implementation, with Bottou's schedule ``eta_t = eta0 / (1 +
    lam eta0 t)`` and L2 by the scale ``w = s v`` (``v = S[:, 1]``; each step touches only
    the example's non-zeros). ``y``: each document's target (+1 / -1); ``weight``: its
    weight (empty: 1); ``state = [s, bias, t]``. The bias moves with ``eta_t * bias_rate`` and is not regularized. Returns the
    summed loss before each update."""
    full = np.zeros(STATE_SIZE)
    full[SCALE] = state[0]
    full[BIAS] = state[1]
    full[T] = state[2]
    total, _ = _sgd_steps(
        True,
        ids,
        np.zeros(1),
        offsets,
        y,
        weight,
        order,
        S,
        1,
        np.zeros(1),
        np.zeros(1),
        full,
        loss_kind,
        OPTIMAL,
        eta0,
        lam,
        0.0,
        lam,
        0,
        bias_rate,
        0.0,
        0,
        unit,
    )
    state[0] = full[SCALE]
    state[1] = full[BIAS]
    state[2] = full[T]
    return total


@njit(cache=True, nogil=True, fastmath=True)
def _adagrad_epoch(
    ids, offsets, y, weight, order, S, state, eta0, lam, bias_rate, loss_kind, eps, unit
):
    """AdaGrad on table rows: :func:`~nbsvm.learners.kernels.linear._adagrad_steps`, the one
    implementation, with ``S[:, 0]`` the values, ``S[:, 1]`` the weights and ``S[:, 2]`` the
    squared-gradient sums, in float32 (fastmath: the order of float32 sums is free; the
    plain step compiles alone, so the arithmetic is that of the kernel before the
    implementations were merged, bit for bit on IMDB).
    ``y``: each document's target (+1 / -1); ``weight``: its weight (empty: 1); ``state =
    [bias, t, G_bias]``. Returns the summed loss."""
    typed = np.empty(4, dtype=S.dtype)
    typed[0] = eta0
    typed[1] = lam
    typed[2] = eps
    total, _, b, t, gb = _adagrad_steps(
        True,
        ids,
        np.zeros(1),
        offsets,
        y,
        weight,
        order,
        S,
        S,
        1,
        S,
        2,
        typed,
        np.zeros(1),
        np.zeros(STATE_SIZE),
        state[0],
        state[1],
        state[2],
        loss_kind,
        eta0,
        0.0,
        bias_rate,
        eps,
        unit,
        0,
    )
    state[0] = b
    state[1] = t
    state[2] = gb
    return total


@njit(cache=True, nogil=True, fastmath=True)
def _multiclass_epoch(
    ids, offsets, target, weight, order, S, state, eta0, lam, bias_rate, kind, adagrad, eps, unit
):
    """All K outputs trained together on one loss of their K scores (softmax or the
    multiclass hinge, :func:`~nbsvm.learners.losses.multiclass_loss_grad`); output ``o``'s rows take their values
    from ``S[o, :, 0]`` as in the one-vs-rest kernels, and each output's step is the
    binary kernels' step with that output's gradient: AdaGrad (``state[o] = [bias, t,
    G_bias]``) or SGD (``state[o] = [s, bias, t]``; every output shrinks by the same
    factor at every step, so they share one scale ``s``). ``target[d]``: the output of
    document d's class (-1: none; skipped); ``weight[d]``: document d's weight (its class
    weight times its own; empty: 1). Returns the summed loss."""
    K = S.shape[0]
    p = np.empty(K)
    g = np.empty(K)
    inv = np.empty(K)
    s = 1.0 if adagrad else state[0, 0]
    t = state[0, 1] if adagrad else state[0, 2]
    eta0f = np.float32(eta0)
    lamf = np.float32(lam)
    epsf = np.float32(eps)
    no_average = np.zeros(1, dtype=np.float32)
    total = 0.0
    for k in range(order.shape[0]):
        d = order[k]
        y = target[d]
        if y < 0:
            continue
        lo = offsets[d]
        hi = offsets[d + 1]
        for o in range(K):
            dot, inv[o] = _unit_dot(ids, lo, hi, S[o], unit)
            p[o] = dot * inv[o] * s + (state[o, 0] if adagrad else state[o, 1])
        loss = multiclass_loss_grad(kind, p, y, g)
        if weight.shape[0] > 0:
            loss *= weight[d]
            for o in range(K):
                g[o] *= weight[d]
        total += loss
        if adagrad:
            weighed = weight.shape[0] == 0 or weight[d] != 0.0  # (else: no step at all)
            for o in range(K):
                if not weighed:
                    continue
                _adagrad_row(
                    True,
                    ids,
                    lo,
                    hi,
                    S[o],
                    S[o],
                    1,
                    S[o],
                    2,
                    np.float32(g[o] * inv[o]),
                    lamf,
                    eta0f,
                    epsf,
                    0.0,
                    eta0,
                    eps,
                    no_average,
                    0.0,
                )
                if g[o] != 0.0:
                    state[o, 2] += g[o] * g[o]
                    state[o, 0] -= eta0 * bias_rate * g[o] / math.sqrt(state[o, 2] + eps)
            t += 1.0
            continue
        eta = rate(OPTIMAL, t, eta0, lam)
        if lam > 0.0:
            s *= 1.0 - eta * lam
        for o in range(K):
            if g[o] != 0.0:
                c = -eta * g[o] * inv[o] / s
                So = S[o]
                for j in range(lo, hi):
                    i = ids[j]
                    So[i, 1] += c * So[i, 0]
                state[o, 1] -= eta * bias_rate * g[o]
        t += 1.0
        if s < FOLD_LOW or s > FOLD_HIGH:  # w = s v = 1 (s v)
            for o in range(K):
                for i in range(S.shape[1]):
                    S[o, i, 1] *= s
            s = 1.0
    for o in range(K):
        if adagrad:
            state[o, 1] = t
        else:
            state[o, 0] = s
            state[o, 2] = t
    return total


@njit(cache=True, nogil=True)
def _scores(ids, offsets, S, scale, out, unit):
    """out[d] = scale * sum_j S[i, 0] * S[i, 1] over document d's ids i = ids[j] (divided by
    the row's norm when ``unit``): the weights are ``w = scale * S[:, 1]``."""
    for d in range(offsets.shape[0] - 1):
        acc, inv = _unit_dot(ids, offsets[d], offsets[d + 1], S, unit)
        out[d] = scale * acc * inv


@njit(cache=True, nogil=True)
def _table_sums(ids, offsets, S, out, unit):
    """out[d] = sum_j S[ids[j], 0] (for NBSVM: the NB log-likelihood ratio of document d),
    divided by the row's norm when ``unit``."""
    for d in range(offsets.shape[0] - 1):
        acc = 0.0
        sq = 0.0
        for j in range(offsets[d], offsets[d + 1]):
            v = S[ids[j], 0]
            acc += v
            if unit:
                sq += np.float64(v) * v
        if unit:
            acc = acc / math.sqrt(sq) if sq > 0.0 else 0.0
        out[d] = acc


@njit(cache=True, nogil=True)
def _mean_abs_weight(S):
    """Mean |S[i, 1]| over the features with a non-zero value S[i, 0] (0 if none)."""
    total = 0.0
    n = 0
    for i in range(S.shape[0]):
        if S[i, 0] != 0.0:
            total += abs(S[i, 1])
            n += 1
    return total / n if n else 0.0


@njit(cache=True, nogil=True)
def _used_features(S):
    """Sorted indices (int32) of features with a non-zero value or weight in any output."""
    n_out, n_feat = S.shape[0], S.shape[1]
    used = 0
    for i in range(n_feat):
        for k in range(n_out):
            if S[k, i, 0] != 0.0 or S[k, i, 1] != 0.0:
                used += 1
                break
    out = np.empty(used, np.int32)
    j = 0
    for i in range(n_feat):
        for k in range(n_out):
            if S[k, i, 0] != 0.0 or S[k, i, 1] != 0.0:
                out[j] = i
                j += 1
                break
    return out
