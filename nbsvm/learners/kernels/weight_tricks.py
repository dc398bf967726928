"""The scalar state of the linear kernels and the in-place tricks that keep an update
sparse (described in :mod:`.regularizers`): weights kept as ``w = s v`` so that L2 only
changes the scale ``s``, which is folded back into ``v`` when it leaves [FOLD_LOW,
FOLD_HIGH]; lazy L1 (cumulative or truncated); the running average of the iterates as
``A u + B v``. The SGD and AdaGrad kernels (:mod:`.linear`) and Pegasos
(:mod:`.projected`) inline these helpers.

Scalar state of :func:`~nbsvm.learners.kernels.linear._sgd_pass` /
:func:`~nbsvm.learners.kernels.linear._adagrad_pass` is one float64 array indexed by the
constants below; the weights are ``w = state[SCALE] * v`` and, once averaging has started
(``state[AVG_N] > 0``), their average is ``state[AVG_A] * u + state[AVG_B] * v``.
"""

from __future__ import annotations

from numba import njit

# indices into the scalar state
SCALE, T, BIAS, L1_U, AVG_A, AVG_B, AVG_BIAS, AVG_N, BIAS_G = range(9)
STATE_SIZE = 9

TRUNCATED = 1  # regularizers.L1_METHODS["truncated"]; 0 is cumulative
FOLD_LOW, FOLD_HIGH = 1e-6, 1e6


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
    if method == TRUNCATED:  # shrink |w_i| by the penalty not yet applied
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


@njit(cache=True, nogil=True)
def _owed_l1(v, q, state, avg_u):
    """Give every weight the truncations it missed since its feature last appeared (lazy
    truncated L1 shrinks a weight when its feature next appears): the weights a pass
    leaves are then the truncated gradient's (Langford et al. apply the rest before
    output; left owed, a rare feature kept a weight up to its missed steps x eta lam1 too
    large, and none became exactly 0). The average of the iterates is left as it is."""
    s = state[SCALE]
    u = state[L1_U]
    ratio = state[AVG_B] / state[AVG_A] if state[AVG_N] > 0.0 else 0.0
    for i in range(v.shape[0]):
        if q[i] != u:
            _set(v, i, _l1_new(v, i, s, u, q, TRUNCATED), 0.0, avg_u, ratio)


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
    if n == 1.0:  # the average restarts at the current iterate
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
