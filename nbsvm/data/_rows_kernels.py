"""The compiled check of :func:`nbsvm.data.rows.as_rows` (loaded on first use: loading a
model never imports numba, :mod:`nbsvm._small_jobs`)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _check_rows(indices, values, width):
    """One pass over the non-zeros: the position of the first index outside
    ``[0, width)`` (-1 if none) and whether every value is finite. The kernels do not check
    bounds, so every input is checked here once per call."""
    for j in range(indices.shape[0]):
        if indices[j] < 0 or indices[j] >= width:
            return j, True
    for j in range(values.shape[0]):
        if not np.isfinite(values[j]):
            return -1, False
    return -1, True
