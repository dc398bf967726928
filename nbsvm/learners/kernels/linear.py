"""The one SGD and the one AdaGrad implementation every linear learner runs, and their
entries for explicit rows (:mod:`.linear`).

Rows are CSR with explicit values (``indices``, ``values``, ``offsets``), or NBSVM's table
rows whose values sit in the learner's own float32 state beside each weight (``W[i, 0]``;
:mod:`.sgd`): :func:`_sgd_steps` and :func:`_adagrad_steps` take either (``table``), and
:func:`_sgd_pass` / :func:`_adagrad_pass` here and ``_sgd_epoch`` / ``_adagrad_epoch`` in
:mod:`.table` are their entries. Each kernel runs the examples ``order`` once and
updates its arrays in place. The tricks (weight scaling, lazy L1, ball projection,
averaging) are described in :mod:`.regularizers` and implemented in
:mod:`.weight_tricks`, whose scalar state layout (``SCALE``, ``T``, ``BIAS``, ...) the
kernels share; the memory prefetch is :mod:`.prefetch`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from nbsvm._prefetch import prefetch_row
from nbsvm.learners.kernels.losses import loss_dloss as _loss_dloss
from nbsvm.learners.kernels.prefetch import TABLE_PREFETCH, _prefetch_example, _prefetch_next_rows
from nbsvm.learners.kernels.weight_tricks import (  # noqa: F401
    AVG_A,
    AVG_B,
    AVG_BIAS,
    AVG_N,
    BIAS,
    BIAS_G,
    L1_U,
    SCALE,
    STATE_SIZE,
    TRUNCATED,
    T,
    _average,
    _l1_new,
    _owed_l1,
    _renormalize,
    _set,
    _shrink,
    _soft,
)
from nbsvm.learners.schedules import rate


# ---- SGD with a global schedule: one implementation for both row types -------------------------
@njit(cache=True, nogil=True, inline="always")
def _sgd_steps(
    table,
    indices,
    values,
    offsets,
    y,
    weight,
    order,
    W,
    wf,
    q,
    avg_u,
    state,
    loss_code,
    schedule,
    eta0,
    lam,
    lam1,
    lam2,
    l1_method,
    bias_rate,
    radius,
    avg_start,
    unit,
):
    """SGD over ``order``; returns ``(summed loss, mistakes)`` (loss before each update; a
    mistake is ``y p <= 0``). Explicit rows take x's values from ``values[j]``, table rows
    from ``W[i, 0]``; the stored vector is ``v = W[:, wf]``. ``weight``: each example's
    weight (class weights), or empty for 1.

    Step t: ``p = s v.x / ||x|| + b`` (``/ ||x||`` with ``unit`` only); ``g = weight
    dloss(p, y)``; ``eta = rate(t)``; L2: ``s *= 1 - eta lam2`` (weights zeroed if that is <= 0);
    gradient: ``v -= eta g x / (||x|| s)``, ``b -= eta bias_rate g``; L1 (``lam1 > 0``) on
    the touched features with ``u += eta lam1``; projection on ``||w|| <= radius``
    (``radius > 0``); averaging. ``q`` (L1) and ``avg_u`` (averaging) may be empty when
    unused. ``w = s v`` throughout; ``s`` is folded into ``v`` when it leaves [1e-6, 1e6].
    """
    v = W[:, wf]
    s = state[SCALE]
    t = state[T]
    b = state[BIAS]
    u = state[L1_U]
    sq = 0.0
    if radius > 0.0:  # ||v||^2 is only needed for the projection
        for i in range(v.shape[0]):
            sq += v[i] * v[i]
    total = 0.0
    mistakes = 0.0
    for k in range(order.shape[0]):
        d = order[k]
        lo = offsets[d]
        hi = offsets[d + 1]
        if not table:
            _prefetch_example(indices, values, offsets, y, order, k)
        ratio = state[AVG_B] / state[AVG_A] if state[AVG_N] > 0.0 else 0.0
        if lam1 > 0.0 and l1_method == TRUNCATED:  # catch up on the missed shrinkage
            for j in range(lo, hi):
                i = indices[j]
                sq = _set(v, i, _l1_new(v, i, s, u, q, l1_method), sq, avg_u, ratio)
        dot = 0.0
        norm2 = 0.0
        for j in range(lo, hi):
            if table and j + TABLE_PREFETCH < hi:
                prefetch_row(W, indices[j + TABLE_PREFETCH])
            i = indices[j]
            # float64 (a float32 table's value converts exactly): exact products
            x = np.float64(W[i, 0]) if table else values[j]
            dot += v[i] * x
            if unit:
                norm2 += x * x
        inv = 1.0
        if unit:
            inv = 1.0 / math.sqrt(norm2) if norm2 > 0.0 else 0.0
        p = s * dot * inv + b
        loss, g = _loss_dloss(loss_code, p, y[d])
        if weight.shape[0] > 0:
            loss *= weight[d]
            g *= weight[d]
        total += loss
        if y[d] * p <= 0.0:
            mistakes += 1.0
        if table:
            _prefetch_next_rows(indices, offsets, order, k + 1, W)
        eta = rate(schedule, t, eta0, lam)
        if lam2 > 0.0:
            s, sq = _shrink(v, s, sq, 1.0 - eta * lam2, avg_u, ratio)
        if g != 0.0:
            c = -eta * g * inv / s
            if radius > 0.0 or ratio != 0.0:
                for j in range(lo, hi):
                    i = indices[j]
                    x = np.float64(W[i, 0]) if table else values[j]
                    sq = _set(v, i, v[i] + c * x, sq, avg_u, ratio)
            else:  # no norm or average to keep: the plain step
                for j in range(lo, hi):
                    i = indices[j]
                    v[i] += c * (np.float64(W[i, 0]) if table else values[j])
            b -= eta * bias_rate * g
        if lam1 > 0.0:
            u += eta * lam1
            for j in range(lo, hi):
                i = indices[j]
                sq = _set(v, i, _l1_new(v, i, s, u, q, l1_method), sq, avg_u, ratio)
        if radius > 0.0:
            n2 = s * s * sq
            if n2 > radius * radius:
                s *= radius / math.sqrt(n2)
        t += 1.0
        state[T] = t
        _average(state, avg_u, v, s, b, avg_start)
        s, sq = _renormalize(state, avg_u, v, s, sq)
    state[SCALE] = s
    state[BIAS] = b
    state[L1_U] = u
    return total, mistakes


@njit(cache=True, nogil=True)
def _sgd_pass(
    indices,
    values,
    offsets,
    y,
    order,
    v,
    q,
    avg_u,
    state,
    loss_code,
    schedule,
    eta0,
    lam,
    lam1,
    lam2,
    l1_method,
    bias_rate,
    radius,
    avg_start,
):
    """:func:`_sgd_steps` on explicit rows (float64 ``v``)."""
    return _sgd_steps(
        False,
        indices,
        values,
        offsets,
        y,
        np.zeros(0),
        order,
        v.reshape(-1, 1),
        0,
        q,
        avg_u,
        state,
        loss_code,
        schedule,
        eta0,
        lam,
        lam1,
        lam2,
        l1_method,
        bias_rate,
        radius,
        avg_start,
        False,
    )


# ---- AdaGrad: one implementation for both row types ------------------------------------------
# Explicit rows carry their values (``values[j]`` for the row's j-th non-zero); table rows
# (NBSVM's) take feature i's value from the state itself, ``W[i, 0]``, beside its weight
# ``W[i, wf]`` and squared-gradient sum ``G[i, gf]`` (one cache line per update). The
# arithmetic runs in the state's dtype (float32 for NBSVM's table, float64 otherwise):
# ``typed`` holds eta0, lam2 and eps in it, and a slot that casts each step's gradient.
@njit(cache=True, nogil=True, inline="always")
def _adagrad_steps(
    table,
    indices,
    values,
    offsets,
    y,
    weight,
    order,
    X,
    W,
    wf,
    G,
    gf,
    typed,
    avg_u,
    state,
    b,
    t,
    gb,
    loss_code,
    eta0,
    lam1,
    bias_rate,
    eps,
    unit,
    avg_start,
):
    """AdaGrad (Duchi, Hazan & Singer 2011) over ``order``; returns ``(summed loss,
    mistakes, b, t, gb)`` (loss before each update; a mistake is ``y p <= 0``).
    ``weight``: each example's weight (class weights; its loss and gradient are scaled),
    or empty for 1.

    Step: ``p = w.x / ||x|| + b`` (``/ ||x||`` with ``unit`` only; x's values are
    ``X[i, 0]`` for table rows, ``X[j, 0]`` otherwise); ``g = dloss(p, y)``; for each
    touched coordinate ``g_i = g x_i + lam2 w_i``; if ``g_i != 0``: ``G_i += g_i^2``,
    ``w_i -= eta0 g_i / sqrt(G_i + eps)``; then, if ``lam1 > 0`` and ``G_i > 0``, ``w_i
    <- soft(w_i, eta0 lam1 / sqrt(G_i + eps))`` (lazily: untouched features are not
    shrunk). Bias: if ``g != 0``, ``G_b += g^2``, ``b -= eta0 bias_rate g / sqrt(G_b +
    eps)``. Averaging from update ``avg_start`` (0: never) in ``avg_u`` and ``state``.
    """
    eta0s = typed[0]
    lams = typed[1]
    epss = typed[2]
    wv = W[:, wf]
    total = 0.0
    mistakes = 0.0
    n = order.shape[0]
    for k in range(n):
        d = order[k]
        lo = offsets[d]
        hi = offsets[d + 1]
        if not table:
            _prefetch_example(indices, values, offsets, y, order, k)
        # (table rows never average: 0 without reading the state, so that the compiler
        # keeps only the plain step of _adagrad_row)
        ratio = (
            state[AVG_B] / state[AVG_A]
            if (avg_start > 0 or not table) and state[AVG_N] > 0.0
            else 0.0
        )
        dot = 0.0
        sq = 0.0
        for j in range(lo, hi):
            if table and j + TABLE_PREFETCH < hi:
                prefetch_row(W, indices[j + TABLE_PREFETCH])
            i = indices[j]
            x = X[i if table else j, 0]
            dot += np.float64(W[i, wf]) * x
            if unit:
                sq += np.float64(x) * x
        inv = 1.0
        if unit:
            inv = 1.0 / math.sqrt(sq) if sq > 0.0 else 0.0
        p = dot * inv + b
        loss, g = _loss_dloss(loss_code, p, y[d])
        if weight.shape[0] > 0:
            loss *= weight[d]
            g *= weight[d]
        total += loss
        if y[d] * p <= 0.0:
            mistakes += 1.0
        if table:
            _prefetch_next_rows(indices, offsets, order, k + 1, W)
        typed[3] = g * inv
        # a document of weight 0 counts nowhere: not even the L2 part of its features' steps
        if weight.shape[0] == 0 or weight[d] != 0.0:
            _adagrad_row(
                table,
                indices,
                lo,
                hi,
                X,
                W,
                wf,
                G,
                gf,
                typed[3],
                lams,
                eta0s,
                epss,
                lam1,
                eta0,
                eps,
                avg_u,
                ratio,
            )
        if g != 0.0:
            gb += g * g
            b -= eta0 * bias_rate * g / math.sqrt(gb + eps)
        t += 1.0
        state[T] = t
        _average(state, avg_u, wv, 1.0, b, avg_start)
    return total, mistakes, b, t, gb


@njit(cache=True, nogil=True, inline="always")
def _adagrad_row(
    table, indices, lo, hi, X, W, wf, G, gf, gs, lams, eta0s, epss, lam1, eta0, eps, avg_u, ratio
):
    """AdaGrad's step on one row's features, ``gs`` the loss gradient (times the row's
    norm factor) in the state's dtype: ``g_i = gs x_i + lam2 w_i``; where it is not 0,
    ``G_i += g_i^2`` and ``w_i -= eta0 g_i / sqrt(G_i + eps)``; then L1 and the average
    (``ratio``) as :func:`_adagrad_steps` says."""
    plain = lam1 == 0.0 and ratio == 0.0  # no L1 or average to keep: the plain step
    for j in range(lo, hi):
        i = indices[j]
        if plain:
            gi = gs * X[i if table else j, 0] + lams * W[i, wf]
            if gi != 0.0:
                Gi = G[i, gf] + gi * gi
                G[i, gf] = Gi
                W[i, wf] -= eta0s * gi / np.sqrt(Gi + epss)
            continue
        old = W[i, wf]
        new = old
        gi = gs * X[i if table else j, 0] + lams * new
        if gi != 0.0:
            Gi = G[i, gf] + gi * gi
            G[i, gf] = Gi
            new = new - eta0s * gi / np.sqrt(Gi + epss)
        if lam1 > 0.0 and G[i, gf] > 0.0:
            new = _soft(new, eta0 * lam1 / math.sqrt(G[i, gf] + eps))
        W[i, wf] = new
        if ratio != 0.0:
            avg_u[i] -= ratio * (new - old)


@njit(cache=True, nogil=True)
def _adagrad_pass(
    indices,
    values,
    offsets,
    y,
    order,
    w,
    G,
    avg_u,
    state,
    loss_code,
    eta0,
    lam1,
    lam2,
    bias_rate,
    eps,
    avg_start,
):
    """:func:`_adagrad_steps` on explicit rows (float64 ``w`` and ``G``); returns ``(summed
    loss, mistakes)``. Weights are not scaled (``state[SCALE]`` stays 1)."""
    typed = np.array([eta0, lam2, eps, 0.0])
    total, mistakes, b, t, gb = _adagrad_steps(
        False,
        indices,
        values,
        offsets,
        y,
        np.zeros(0),
        order,
        values.reshape(-1, 1),
        w.reshape(-1, 1),
        0,
        G.reshape(-1, 1),
        0,
        typed,
        avg_u,
        state,
        state[BIAS],
        state[T],
        state[BIAS_G],
        loss_code,
        eta0,
        lam1,
        bias_rate,
        eps,
        False,
        avg_start,
    )
    state[BIAS] = b
    state[BIAS_G] = gb
    return total, mistakes
