"""numpy twins of :func:`.table._scores` and :func:`.table._table_sums` for small jobs
(:mod:`nbsvm._small_jobs`): equal to the kernels bit for bit, since each row's sum is
taken in the kernels' order (``np.cumsum`` adds left to right, from the row's first term;
adding it to ``0.0`` as the kernels start makes a sum of zeros ``+0.0`` as theirs)."""

from __future__ import annotations

import math

import numpy as np


def _row_sums(terms: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``0.0 + t_lo + ... + t_{hi-1}`` over each row, left to right, in float64."""
    out = np.zeros(offsets.shape[0] - 1)
    for d in range(out.shape[0]):
        lo, hi = int(offsets[d]), int(offsets[d + 1])
        if hi > lo:
            out[d] = 0.0 + float(np.cumsum(terms[lo:hi])[-1])
    return out


def _inverse_norms(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``1 / ||v_row||`` per row, 0 for an all-zero row (the kernels' ``inv``)."""
    sq = _row_sums(values * values, offsets)
    return np.array([1.0 / math.sqrt(s) if s > 0.0 else 0.0 for s in sq])


def scores(
    ids: np.ndarray, offsets: np.ndarray, S: np.ndarray, scale: float, unit: bool
) -> np.ndarray:
    """:func:`.table._scores`: ``scale * sum_j S[i, 0] * S[i, 1]`` per row (times
    ``1 / ||v_row||`` when ``unit``)."""
    values = S[ids, 0].astype(np.float64)
    dots = _row_sums(S[ids, 1].astype(np.float64) * values, offsets)
    out = scale * dots
    return out * _inverse_norms(values, offsets) if unit else out * 1.0


def table_sums(ids: np.ndarray, offsets: np.ndarray, S: np.ndarray, unit: bool) -> np.ndarray:
    """:func:`.table._table_sums`: ``sum_j S[ids[j], 0]`` per row, divided by the row's
    norm when ``unit`` (0 for an all-zero row)."""
    values = S[ids, 0].astype(np.float64)
    sums = _row_sums(values, offsets)
    if not unit:
        return sums
    sq = _row_sums(values * values, offsets)
    return np.array([a / math.sqrt(s) if s > 0.0 else 0.0 for a, s in zip(sums, sq)])
