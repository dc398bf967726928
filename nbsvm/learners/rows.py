"""CSR rows with explicit values: the input of the backend learners."""
from __future__ import annotations

import numpy as np


def csr_dot(w: np.ndarray, indices, values, offsets) -> np.ndarray:
    """``w . x_d`` for every row d of the CSR matrix ``(indices, values, offsets)``.

    Examples
    --------
    >>> csr_dot(np.array([1.0, 2.0]), np.array([0, 1, 1]), np.array([1.0, 1.0, 3.0]),
    ...         np.array([0, 2, 2, 3])).tolist()
    [3.0, 0.0, 6.0]
    """
    n = len(offsets) - 1
    rows = np.repeat(np.arange(n), np.diff(offsets))
    return np.bincount(rows, weights=w[indices] * values, minlength=n)
