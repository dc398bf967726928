"""Numba kernels of the linear learners in :mod:`.linear` and :mod:`.pegasos`, and the one
SGD and the one AdaGrad implementation every linear learner runs.

Rows are CSR with explicit values (``indices``, ``values``, ``offsets``), or NBSVM's table
rows whose values sit in the learner's own float32 state beside each weight (``W[i, 0]``;
:mod:`.sgd`): :func:`_sgd_steps` and :func:`_adagrad_steps` take either (``table``), and
:func:`_sgd_pass` / :func:`_adagrad_pass` here and ``_sgd_epoch`` / ``_adagrad_epoch`` in
:mod:`._kernels` are their entries. Each kernel runs the examples ``order`` once and
updates its arrays in place. The tricks (weight scaling, lazy L1, ball projection,
averaging) are described in :mod:`.regularizers`.

Scalar state of :func:`_sgd_pass` / :func:`_adagrad_pass` is one float64 array indexed by
the constants below; the weights are ``w = state[SCALE] * v`` and, once averaging has
started (``state[AVG_N] > 0``), their average is ``state[AVG_A] * u + state[AVG_B] * v``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from nbsvm._prefetch import prefetch_row
from nbsvm.learners.losses import loss_dloss as _loss_dloss
from nbsvm.learners.schedules import rate

# indices into the scalar state
SCALE, T, BIAS, L1_U, AVG_A, AVG_B, AVG_BIAS, AVG_N, BIAS_G = range(9)
STATE_SIZE = 9

TRUNCATED = 1          # regularizers.L1_METHODS["truncated"]; 0 is cumulative
FOLD_LOW, FOLD_HIGH = 1e-6, 1e6


# Examples are visited in a random order, so each one's row, offset and label are a
# cache miss away; the kernels ask for them ahead (``_prefetch_example``): the offset and
# label a few examples ahead, the row of the next example (whose offset has arrived by then).
# On an RCV1-shaped corpus this makes an epoch about 3x faster (pipelines/rcv1.py).
OFFSETS_AHEAD = 6


@njit(cache=True, nogil=True, inline="always")
def _prefetch_example(indices, values, offsets, y, order, k):
    """Prefetch what step ``k + 1`` (row) and step ``k + OFFSETS_AHEAD`` (offset, label)
    will read; a hint only, results do not change."""
    n = order.shape[0]
    if k + OFFSETS_AHEAD < n:
        ahead = order[k + OFFSETS_AHEAD]
        prefetch_row(offsets, ahead)
        prefetch_row(y, ahead)
    if k + 1 < n:
        d = order[k + 1]
        for j in range(offsets[d], offsets[d + 1], 8):     # 8 entries per cache line
            prefetch_row(indices, j)
            prefetch_row(values, j)


@njit(cache=True, nogil=True, inline="always")
def _soft(z, threshold):
    if z > threshold:
        return z - threshold
    if z < -threshold:
        return z + threshold
    return 0.0


@njit(cache=True, nogil=True, inline="always")
def _set(v, i, new, sq, avg_u, ratio):
    """``v[i] <- new``, keeping ``||v||^2`` (returned) and the average (``u -= ratio
    * change``, ``ratio = B / A``; 0 before averaging starts) up to date."""
    old = v[i]
    v[i] = new
    if ratio != 0.0:
        avg_u[i] -= ratio * (new - old)
    return sq + new * new - old * old


@njit(cache=True, nogil=True, inline="always")
def _l1_new(v, i, s, u, q, method):
    """The L1-penalized value of ``v[i]`` (``w_i = s v_i``) given the total penalty ``u``;
    updates ``q[i]``."""
    z = v[i]
    if method == TRUNCATED:                  # shrink |w_i| by the penalty not yet applied
        new = _soft(s * z, u - q[i]) / s
        q[i] = u
        return new
    # cumulative penalty (Tsuruoka et al. 2009), written as in scikit-learn's l1penalty
    new = z
    if s * z > 0.0:
        new = max(0.0, z - (u + q[i]) / s)
    elif s * z < 0.0:
        new = min(0.0, z + (u - q[i]) / s)
    q[i] += s * (new - z)
    return new


@njit(cache=True, nogil=True, inline="always")
def _materialize_average(state, avg_u, v):
    """``u <- A u + B v``, ``A = 1``, ``B = 0`` (O(n_features), rare): the average itself
    is stored again, before ``A u`` and ``B v`` grow large and cancel (Bottou's
    ``svmasgd`` renormalizes the same way)."""
    if state[AVG_N] > 0.0:
        a = state[AVG_A]
        bb = state[AVG_B]
        for i in range(avg_u.shape[0]):
            avg_u[i] = a * avg_u[i] + bb * v[i]
        state[AVG_A] = 1.0
        state[AVG_B] = 0.0


@njit(cache=True, nogil=True, inline="always")
def _average(state, avg_u, v, s, b, avg_start):
    """Fold iterate number ``state[T]`` (just finished) into the average once averaging
    has started (from update ``avg_start``, 1-based; 0 = never)."""
    if avg_start <= 0 or state[T] < avg_start:
        return
    n = state[AVG_N] + 1.0
    state[AVG_N] = n
    if n == 1.0:                             # the average restarts at the current iterate
        for i in range(avg_u.shape[0]):
            avg_u[i] = 0.0
        state[AVG_A] = 1.0
        state[AVG_B] = s
        state[AVG_BIAS] = b
        return
    mu = 1.0 / n
    state[AVG_A] *= 1.0 - mu
    state[AVG_B] = (1.0 - mu) * state[AVG_B] + mu * s
    state[AVG_BIAS] += mu * (b - state[AVG_BIAS])
    if state[AVG_A] < FOLD_LOW:
        _materialize_average(state, avg_u, v)


@njit(cache=True, nogil=True, inline="always")
def _shrink(v, s, sq, shrink, avg_u, ratio):
    """L2's step on ``w = s v``: ``s *= shrink``; if that is <= 0, ``w = 0`` (as
    scikit-learn does). Returns ``(s, ||v||^2)``."""
    if shrink > 0.0:
        return s * shrink, sq
    for i in range(v.shape[0]):
        sq = _set(v, i, 0.0, sq, avg_u, ratio)
    return 1.0, 0.0


@njit(cache=True, nogil=True, inline="always")
def _renormalize(state, avg_u, v, s, sq):
    """Fold the scale into ``v`` (``w = s v = 1 (s v)``, O(n_features), rare) when it
    leaves [FOLD_LOW, FOLD_HIGH]; returns the new ``(s, ||v||^2)``."""
    if not (s < FOLD_LOW or s > FOLD_HIGH):
        return s, sq
    _materialize_average(state, avg_u, v)
    for i in range(v.shape[0]):
        v[i] *= s
    return 1.0, sq * (s * s)


# ---- SGD with a global schedule: one implementation for both row types -------------------------
@njit(cache=True, nogil=True, inline="always")
def _sgd_steps(table, indices, values, offsets, y, order, W, wf, q, avg_u, state, loss_code,
               schedule, eta0, lam, lam1, lam2, l1_method, bias_rate, radius, avg_start, unit):
    """SGD over ``order``; returns ``(summed loss, mistakes)`` (loss before each update; a
    mistake is ``y p <= 0``). Explicit rows take x's values from ``values[j]``, table rows
    from ``W[i, 0]``; the stored vector is ``v = W[:, wf]``.

    Step t: ``p = s v.x / ||x|| + b`` (``/ ||x||`` with ``unit`` only); ``g = dloss(p,
    y)``; ``eta = rate(t)``; L2: ``s *= 1 - eta lam2`` (weights zeroed if that is <= 0);
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
    if radius > 0.0:                          # ||v||^2 is only needed for the projection
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
        if lam1 > 0.0 and l1_method == TRUNCATED:    # catch up on the missed shrinkage
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
            else:                             # no norm or average to keep: the plain step
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
def _sgd_pass(indices, values, offsets, y, order, v, q, avg_u, state, loss_code, schedule,
              eta0, lam, lam1, lam2, l1_method, bias_rate, radius, avg_start):
    """:func:`_sgd_steps` on explicit rows (float64 ``v``)."""
    return _sgd_steps(False, indices, values, offsets, y, order, v.reshape(-1, 1), 0, q, avg_u,
                      state, loss_code, schedule, eta0, lam, lam1, lam2, l1_method, bias_rate,
                      radius, avg_start, False)


# ---- AdaGrad: one implementation for both row types ------------------------------------------
# Explicit rows carry their values (``values[j]`` for the row's j-th non-zero); table rows
# (NBSVM's) take feature i's value from the state itself, ``W[i, 0]``, beside its weight
# ``W[i, wf]`` and squared-gradient sum ``G[i, gf]`` (one cache line per update). The
# arithmetic runs in the state's dtype (float32 for NBSVM's table, float64 otherwise):
# ``typed`` holds eta0, lam2 and eps in it, and a slot that casts each step's gradient.
TABLE_PREFETCH = 32          # table rows: state rows prefetched this many non-zeros ahead


@njit(cache=True, nogil=True, inline="always")
def _adagrad_steps(table, indices, values, offsets, y, order, X, W, wf, G, gf, typed, avg_u,
                   state, b, t, gb, loss_code, eta0, lam1, bias_rate, eps, unit, avg_start):
    """AdaGrad (Duchi, Hazan & Singer 2011) over ``order``; returns ``(summed loss,
    mistakes, b, t, gb)`` (loss before each update; a mistake is ``y p <= 0``).

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
        ratio = state[AVG_B] / state[AVG_A] \
            if (avg_start > 0 or not table) and state[AVG_N] > 0.0 else 0.0
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
        total += loss
        if y[d] * p <= 0.0:
            mistakes += 1.0
        if table:
            _prefetch_next_rows(indices, offsets, order, k + 1, W)
        typed[3] = g * inv
        _adagrad_row(table, indices, lo, hi, X, W, wf, G, gf, typed[3], lams, eta0s, epss,
                     lam1, eta0, eps, avg_u, ratio)
        if g != 0.0:
            gb += g * g
            b -= eta0 * bias_rate * g / math.sqrt(gb + eps)
        t += 1.0
        state[T] = t
        _average(state, avg_u, wv, 1.0, b, avg_start)
    return total, mistakes, b, t, gb


@njit(cache=True, nogil=True, inline="always")
def _adagrad_row(table, indices, lo, hi, X, W, wf, G, gf, gs, lams, eta0s, epss, lam1, eta0,
                 eps, avg_u, ratio):
    """AdaGrad's step on one row's features, ``gs`` the loss gradient (times the row's
    norm factor) in the state's dtype: ``g_i = gs x_i + lam2 w_i``; where it is not 0,
    ``G_i += g_i^2`` and ``w_i -= eta0 g_i / sqrt(G_i + eps)``; then L1 and the average
    (``ratio``) as :func:`_adagrad_steps` says."""
    plain = lam1 == 0.0 and ratio == 0.0     # no L1 or average to keep: the plain step
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


@njit(cache=True, nogil=True, inline="always")
def _prefetch_next_rows(ids, offsets, order, k, S):
    """Table rows, while example ``order[k - 1]`` updates: prefetch the state rows of the
    first ids of example ``order[k]``, the ids of ``order[k + 1]`` and the offset of
    ``order[k + 4]`` (examples come in random order, so each is a cache miss away)."""
    n = order.shape[0]
    if k + 4 < n:
        prefetch_row(offsets, order[k + 4])
    if k + 1 < n:
        d = order[k + 1]
        for j in range(offsets[d], min(offsets[d + 1], offsets[d] + 2 * TABLE_PREFETCH), 16):
            prefetch_row(ids, j)                  # 16 int32 ids per cache line
    if k < n:
        d = order[k]
        lo = offsets[d]
        hi = min(offsets[d + 1], lo + TABLE_PREFETCH)
        for j in range(lo, hi):
            prefetch_row(S, ids[j])


@njit(cache=True, nogil=True)
def _adagrad_pass(indices, values, offsets, y, order, w, G, avg_u, state, loss_code, eta0,
                  lam1, lam2, bias_rate, eps, avg_start):
    """:func:`_adagrad_steps` on explicit rows (float64 ``w`` and ``G``); returns ``(summed
    loss, mistakes)``. Weights are not scaled (``state[SCALE]`` stays 1)."""
    typed = np.array([eta0, lam2, eps, 0.0])
    total, mistakes, b, t, gb = _adagrad_steps(
        False, indices, values, offsets, y, order, values.reshape(-1, 1), w.reshape(-1, 1), 0,
        G.reshape(-1, 1), 0, typed, avg_u, state, state[BIAS], state[T], state[BIAS_G],
        loss_code, eta0, lam1, bias_rate, eps, False, avg_start)
    state[BIAS] = b
    state[BIAS_G] = gb
    return total, mistakes


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
        if t == 1.0:                          # (1 - 1/t) = 0: w restarts from 0
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


@njit(cache=True, nogil=True)
def _mean_loss(p, y, loss_code):
    """Mean of ``loss(p[d], y[d])`` (0 for no rows)."""
    total = 0.0
    for d in range(p.shape[0]):
        total += _loss_dloss(loss_code, p[d], y[d])[0]
    return total / max(1, p.shape[0])
