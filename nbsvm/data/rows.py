"""CSR rows with explicit values, the input of the backend learners: :class:`SparseRows`,
and :func:`as_rows`, which checks and converts every accepted ``X`` to them (dense arrays,
lists of lists and DataFrames, any scipy.sparse matrix or array, ``(indices, values,
offsets)`` tuples), raising :class:`~nbsvm.compat.InputError` on bad input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.compat import InputError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


NO_TABLE = np.zeros((0, 0))


@dataclass
class SparseRows:
    """CSR rows with explicit values: row ``d`` is ``indices[offsets[d]:offsets[d+1]]`` with
    ``values`` at the same positions. ``n_features`` bounds the indices.

    Examples
    --------
    >>> X = as_rows(np.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> X.indices.tolist(), X.values.tolist(), X.offsets.tolist(), len(X)
    ([1, 0], [2.0, 1.0], [0, 1, 2], 2)
    """

    indices: np.ndarray  # int64
    values: np.ndarray  # float64
    offsets: np.ndarray  # int64, length n_rows + 1
    n_features: int
    # the joint feature map of the multi-class learners: class k sees row d as
    # class_table[k] o x_d (divided by its norm with class_unit); None: every class the same
    class_table: np.ndarray | None = None
    class_unit: bool = False

    def table(self) -> np.ndarray:
        """The class table for the kernels (``(0, 0)`` when every class sees the row)."""
        return NO_TABLE if self.class_table is None else self.class_table

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def take(self, rows: ArrayLike) -> SparseRows:
        """The rows ``rows`` (an index array) as a new CSR block."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.offsets[rows + 1] - self.offsets[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        pos = np.repeat(self.offsets[rows] - offsets[:-1], lengths) + np.arange(offsets[-1])
        return SparseRows(
            self.indices[pos],
            self.values[pos],
            offsets,
            self.n_features,
            self.class_table,
            self.class_unit,
        )

    def sq_norms(self) -> np.ndarray:
        """``||x_d||^2`` of every row."""
        rows = np.repeat(np.arange(len(self)), np.diff(self.offsets))
        return np.bincount(rows, weights=self.values * self.values, minlength=len(self))


_RESHAPE = (
    "Reshape your data either using array.reshape(-1, 1) if your data has a single "
    "feature or array.reshape(1, -1) if it contains a single sample."
)


def _float_values(values, what="X") -> np.ndarray:
    """``values`` as float64: complex data refused, object arrays converted (a value that
    is not a number raises numpy's own ``TypeError``/``ValueError``)."""
    values = np.asarray(values)
    if values.dtype.kind == "c":
        raise InputError(f"Complex data not supported ({what})")
    if values.dtype.kind in "USV":
        raise InputError(f"{what} must hold numbers, got dtype {values.dtype}")
    try:
        return values.astype(np.float64, copy=False)
    except ValueError as e:  # a string that is not a number
        raise InputError(f"{what} must hold numbers: {e}") from None


def _sparse_rows(X) -> SparseRows:
    """A scipy.sparse matrix or array (any format: ``tocsr`` is duck-typed, scipy is not
    imported) or a CSR-like object with ``indptr``, ``indices``, ``data`` and ``shape``."""
    shape = tuple(X.shape)
    if len(shape) != 2:
        raise InputError(f"Expected a 2-D sparse matrix, got shape {shape}. {_RESHAPE}")
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        if not getattr(X, "has_canonical_format", True):  # duplicates or unsorted indices
            X = X.copy()  # (summed, as a dense X would be)
            X.sum_duplicates()
    return SparseRows(
        np.asarray(X.indices), _float_values(X.data), np.asarray(X.indptr), int(shape[1])
    )


def _dense_rows(X) -> SparseRows:
    """A dense 2-D array-like (array, list of lists, DataFrame) as CSR rows of its non-zeros."""
    A = _float_values(X)
    if A.ndim != 2:
        raise InputError(
            f"Expected a 2-D array, got a {A.ndim}-D array of shape {A.shape} instead. {_RESHAPE}"
            if A.ndim == 1
            else f"Expected a 2-D array or sparse rows, got shape {A.shape}"
        )
    r, c = np.nonzero(A)
    offsets = np.zeros(A.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=A.shape[0]), out=offsets[1:])
    return SparseRows(c, A[r, c], offsets, A.shape[1])


def _is_matrix(X) -> bool:
    """Whether ``X`` declares its number of features (a dense or scipy.sparse matrix), as
    opposed to :class:`SparseRows` and ``(indices, values, offsets)`` tuples, whose
    indices only need to fit the model."""
    return not isinstance(X, (SparseRows, tuple))


def as_rows(X: Any, n_features: int | None = None) -> SparseRows:
    """Accept :class:`SparseRows`, a scipy.sparse matrix or array of any format (or a
    CSR-like object with ``indptr``, ``indices``, ``data``, ``shape``), a dense 2-D
    array-like (array, list of lists, DataFrame) or an ``(indices, values, offsets)``
    tuple.

    Indices must lie in ``[0, n_features)``; ``n_features`` defaults to the input's own
    width (or the largest index + 1 for a tuple). Values must be finite real numbers.
    Problems raise :class:`InputError`.
    """
    if isinstance(X, SparseRows):
        rows = X
    elif hasattr(X, "tocsr") or (
        hasattr(X, "indptr") and hasattr(X, "indices") and hasattr(X, "data")
    ):
        rows = _sparse_rows(X)
    elif isinstance(X, tuple) and len(X) == 3:
        indices, values, offsets = (np.asarray(a) for a in X)
        width = int(indices.max()) + 1 if indices.size else 0
        rows = SparseRows(indices, values, offsets, width)
    else:
        rows = _dense_rows(X)
    width = rows.n_features if n_features is None else int(n_features)
    out = SparseRows(
        np.ascontiguousarray(rows.indices, dtype=np.int64),
        np.ascontiguousarray(_float_values(rows.values)),
        np.ascontiguousarray(rows.offsets, dtype=np.int64),
        width,
        rows.class_table,
        rows.class_unit,
    )
    if out.class_table is not None and (
        out.class_table.ndim != 2 or out.class_table.shape[1] < width
    ):
        raise InputError("a class table needs a row of at least n_features values per class")
    if (
        out.offsets.ndim != 1
        or len(out.offsets) < 1
        or out.offsets[0] != 0
        or out.offsets[-1] != len(out.indices)
        or len(out.values) != len(out.indices)
        # a row ending before it starts, or past nnz, made the kernels read out of bounds
        or (len(out.offsets) > 1 and bool((np.diff(out.offsets) < 0).any()))
    ):
        raise InputError(
            "malformed sparse rows: offsets must start at 0, never decrease and end at nnz"
        )
    from nbsvm.data._rows_kernels import _check_rows  # compiled: rows for a backend learner

    bad_index, finite = _check_rows(out.indices, out.values, width)
    if bad_index >= 0:
        raise InputError(
            f"feature index {int(out.indices[bad_index])} out of range: this "
            f"model has {width} features (indices 0..{width - 1})"
        )
    if not finite:
        what = "NaN" if np.isnan(out.values).any() else "infinity"
        raise InputError(f"Input X contains {what}: feature values must be finite")
    return out


def csr_dot(
    w: np.ndarray, indices: np.ndarray, values: np.ndarray, offsets: np.ndarray
) -> np.ndarray:
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
