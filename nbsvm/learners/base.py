"""What every backend learner shares: input checking, label encoding, the epoch loop, the
scikit-learn estimator protocol, and saving to ``.npz`` + JSON.

A learner subclasses :class:`OnlineLearner` and provides four things:

- ``task``: ``"binary"``, ``"multiclass"``, ``"multilabel"`` or ``"regression"``;
- ``_init_state(n_features, n_outputs)``: allocate the learned arrays (names ending in ``_``);
- ``_pass(rows, y, order) -> dict``: one pass over ``order`` (numba kernels do the work);
  returns *sums* for the progress line, so that passes over blocks add up:
  ``{"n": examples, "loss": summed loss before each update, "mistakes": count}``
  (``loss`` and ``mistakes`` where they mean something for the learner);
- ``_scores(rows) -> ndarray``: ``(n_rows,)`` for binary and regression, else
  ``(n_rows, n_outputs)``.

``y`` reaching ``_pass`` is already encoded: float64 ``+-1`` (binary), int64 class codes
(multiclass), an int8 ``(n, n_labels)`` matrix of ``+-1`` (multilabel) or float64 targets
(regression). Classes are the label values given to ``fit``, sorted (``np.unique`` order):
strings stay strings, ints stay ints, and ``predict`` returns them. For two classes the
second is the positive one (``1`` over ``-1``, ``pos`` over ``neg``), as in the NBSVM model.

Input ``X``: :class:`SparseRows`, a 2-D dense array (or list of lists, or a pandas
DataFrame), any scipy.sparse matrix or array (anything with ``tocsr``), or an
``(indices, values, offsets)`` tuple. scikit-learn conventions are followed without
importing scikit-learn: ``__init__`` only stores parameters, learned attributes end in
``_``, bad input raises :class:`InputError` (a ``ValueError``), an unfitted learner raises
:class:`NotFittedError`, and ``__sklearn_tags__`` imports scikit-learn only when scikit-learn
itself asks for the tags.
"""
from __future__ import annotations

import inspect
import numbers
import sys
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit

from nbsvm._params import Params
from nbsvm.errors import NBSVMError, NotFittedError, interop as _interop  # noqa: F401

TASKS = ("binary", "multiclass", "multilabel", "regression")


# ---- errors and warnings (scikit-learn-compatible, scikit-learn not imported) -------------

class InputError(NBSVMError, ValueError):
    """Bad data given to a learner (``X`` or ``y``): an :class:`NBSVMError` that is also a
    ``ValueError``, the type scikit-learn's input validation raises."""


class DataConversionWarning(UserWarning):
    """A column vector ``y`` was given where a 1-d array was expected (scikit-learn's
    warning of the same name and meaning)."""


class UnavailableMethod(NBSVMError, AttributeError):
    """A method this learner does not offer with its current parameters (e.g.
    ``predict_proba`` with the hinge loss): an ``AttributeError``, so ``hasattr`` is False,
    as with scikit-learn's ``available_if``."""


class available_if:
    """Decorator: the method exists only when ``check(self)`` returns without raising
    (it raises :class:`UnavailableMethod` saying why). Accessed on the class, the plain
    function is returned."""

    def __init__(self, check):
        self.check = check

    def __call__(self, fn):
        self.fn = fn
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__
        return self

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        self.check(obj)
        return self.fn.__get__(obj, owner)


# ---- input -----------------------------------------------------------------------------

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

    indices: np.ndarray     # int64
    values: np.ndarray      # float64
    offsets: np.ndarray     # int64, length n_rows + 1
    n_features: int

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def take(self, rows) -> "SparseRows":
        """The rows ``rows`` (an index array) as a new CSR block."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.offsets[rows + 1] - self.offsets[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        pos = np.repeat(self.offsets[rows] - offsets[:-1], lengths) + np.arange(offsets[-1])
        return SparseRows(self.indices[pos], self.values[pos], offsets, self.n_features)

    def sq_norms(self) -> np.ndarray:
        """``||x_d||^2`` of every row."""
        rows = np.repeat(np.arange(len(self)), np.diff(self.offsets))
        return np.bincount(rows, weights=self.values * self.values, minlength=len(self))


_RESHAPE = ("Reshape your data either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample.")


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
    except ValueError as e:                   # a string that is not a number
        raise InputError(f"{what} must hold numbers: {e}") from None


def _sparse_rows(X) -> SparseRows:
    """A scipy.sparse matrix or array (any format: ``tocsr`` is duck-typed, scipy is not
    imported) or a CSR-like object with ``indptr``, ``indices``, ``data`` and ``shape``."""
    shape = tuple(X.shape)
    if len(shape) != 2:
        raise InputError(f"Expected a 2-D sparse matrix, got shape {shape}. {_RESHAPE}")
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        if not getattr(X, "has_canonical_format", True):   # duplicates or unsorted indices
            X = X.copy()                                    # (summed, as a dense X would be)
            X.sum_duplicates()
    return SparseRows(np.asarray(X.indices), _float_values(X.data), np.asarray(X.indptr),
                      int(shape[1]))


def _dense_rows(X) -> SparseRows:
    """A dense 2-D array-like (array, list of lists, DataFrame) as CSR rows of its non-zeros."""
    A = _float_values(X)
    if A.ndim != 2:
        raise InputError(f"Expected a 2-D array, got a {A.ndim}-D array of shape {A.shape} "
                         f"instead. {_RESHAPE}" if A.ndim == 1 else
                         f"Expected a 2-D array or sparse rows, got shape {A.shape}")
    r, c = np.nonzero(A)
    offsets = np.zeros(A.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=A.shape[0]), out=offsets[1:])
    return SparseRows(c, A[r, c], offsets, A.shape[1])


def _is_matrix(X) -> bool:
    """Whether ``X`` declares its number of features (a dense or scipy.sparse matrix), as
    opposed to :class:`SparseRows` and ``(indices, values, offsets)`` tuples, whose
    indices only need to fit the model."""
    return not isinstance(X, (SparseRows, tuple))


def as_rows(X, n_features: int | None = None) -> SparseRows:
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
    elif hasattr(X, "tocsr") or (hasattr(X, "indptr") and hasattr(X, "indices")
                                 and hasattr(X, "data")):
        rows = _sparse_rows(X)
    elif isinstance(X, tuple) and len(X) == 3:
        indices, values, offsets = (np.asarray(a) for a in X)
        width = int(indices.max()) + 1 if indices.size else 0
        rows = SparseRows(indices, values, offsets, width)
    else:
        rows = _dense_rows(X)
    width = rows.n_features if n_features is None else int(n_features)
    out = SparseRows(np.ascontiguousarray(rows.indices, dtype=np.int64),
                     np.ascontiguousarray(_float_values(rows.values)),
                     np.ascontiguousarray(rows.offsets, dtype=np.int64), width)
    if out.offsets.ndim != 1 or len(out.offsets) < 1 or out.offsets[0] != 0 \
            or out.offsets[-1] != len(out.indices) or len(out.values) != len(out.indices):
        raise InputError("malformed sparse rows: offsets must start at 0 and end at nnz")
    bad_index, finite = _check_rows(out.indices, out.values, width)
    if bad_index >= 0:
        raise InputError(f"feature index {int(out.indices[bad_index])} out of range: this "
                         f"model has {width} features (indices 0..{width - 1})")
    if not finite:
        what = "NaN" if np.isnan(out.values).any() else "infinity"
        raise InputError(f"Input X contains {what}: feature values must be finite")
    return out


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


# ---- labels ------------------------------------------------------------------------------

class Labels(list):
    """The classes of a fitted learner: a list (what the CLI, the model file's JSON header
    and comparisons like ``classes_ == ["neg", "pos"]`` use) that can also be indexed by
    an array of positions, as ``classes_[codes]`` indexes a numpy array (what
    scikit-learn does with ``classes_``).

    Examples
    --------
    >>> c = Labels([-1, 1])
    >>> c == [-1, 1], c[np.array([1, 1, 0])].tolist(), np.asarray(c).dtype.kind
    (True, [1, 1, -1], 'i')
    """

    def values(self) -> np.ndarray:
        """The classes as an array: object for strings (as ``predict`` returns them),
        else numpy's dtype of the values (int64, float64, bool)."""
        if self and isinstance(self[0], str):
            return np.array(list(self), dtype=object)
        return np.array(list(self))

    def __getitem__(self, key):
        if isinstance(key, (np.ndarray, list)):
            return self.values()[np.asarray(key)]
        return super().__getitem__(key)

    def __array__(self, dtype=None, copy=None):
        a = self.values()
        return a if dtype is None else a.astype(dtype)


def unique_labels(values) -> Labels:
    """The distinct labels of ``values``, sorted, keeping their type: strings, or numbers
    (ints, floats, bools; numpy scalars become Python numbers).

    Examples
    --------
    >>> unique_labels(["b", "a", "b"]), unique_labels(np.array([3, 1, 3])), unique_labels([])
    (['a', 'b'], [1, 3], [])
    """
    a = np.asarray(values)
    if a.dtype.kind in "US":
        return Labels(np.unique(a.astype(str)).tolist())
    if a.dtype.kind in "biuf":
        return Labels(np.unique(a).tolist())
    items = a.ravel().tolist()
    if all(isinstance(v, str) for v in items):
        return Labels(sorted(set(items)))
    numeric = [isinstance(v, numbers.Real) for v in items]
    if all(numeric):
        return Labels(np.unique(np.array(items)).tolist())
    if any(numeric) and any(isinstance(v, str) for v in items):
        raise InputError("Unknown label type: y mixes strings and numbers; give one kind")
    return Labels(sorted({str(v) for v in items}))      # other objects: their names


# ---- the learner ------------------------------------------------------------------------

class OnlineLearner(Params):
    """Base class of the backend learners, following scikit-learn's estimator conventions:
    ``__init__`` only stores parameters (read back from its signature, :class:`~nbsvm.
    _params.Params`); learned state ends in ``_`` and exists after ``fit``;
    ``get_params``/``set_params``/``score``; scikit-learn's tags on request."""

    task = "binary"

    # ---- scikit-learn protocol (scikit-learn is imported only when it asks) -----------
    @property
    def _estimator_type(self) -> str:
        return "regressor" if self.task == "regression" else "classifier"

    def __sklearn_tags__(self):
        from sklearn.utils import (ClassifierTags, InputTags, RegressorTags, Tags,
                                   TargetTags)
        multilabel = self.task == "multilabel"
        tags = Tags(estimator_type=self._estimator_type,
                    target_tags=TargetTags(required=True, multi_output=multilabel,
                                           single_output=not multilabel),
                    input_tags=InputTags(sparse=True))
        if self.task == "regression":
            tags.regressor_tags = RegressorTags()
        else:
            tags.classifier_tags = ClassifierTags(multi_class=self.task != "binary",
                                                  multi_label=multilabel)
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_features_in_"):
            raise _interop(NotFittedError)(
                f"This {type(self).__name__} instance is not fitted yet: call 'fit' (or "
                "'partial_fit') with appropriate arguments before using this estimator.")

    # ---- input -----------------------------------------------------------------------
    def _rows(self, X, reset: bool) -> SparseRows:
        """``X`` checked and converted. ``reset`` (the first call of ``fit`` or
        ``partial_fit``): the input sets ``n_features_in_`` and must not be empty; else a
        matrix must have ``n_features_in_`` columns (sparse rows only need indices within
        them)."""
        name = type(self).__name__
        if reset:
            rows = as_rows(X)
            if _is_matrix(X):
                if len(rows) == 0:
                    raise InputError(f"Found array with 0 sample(s) (shape=(0, "
                                     f"{rows.n_features})) while a minimum of 1 is required "
                                     f"by {name}.")
                if rows.n_features == 0:
                    raise InputError(f"Found array with 0 feature(s) (shape=({len(rows)}, 0))"
                                     f" while a minimum of 1 is required by {name}.")
            return rows
        self._check_fitted()
        if _is_matrix(X):
            rows = as_rows(X)
            if rows.n_features != self.n_features_in_:
                raise InputError(f"X has {rows.n_features} features, but {name} is expecting "
                                 f"{self.n_features_in_} features as input.")
            return rows
        return as_rows(X, self.n_features_in_)

    def _targets(self, y, n_rows: int):
        """``y`` checked against the task and the number of rows; a 1-d array (the
        multi-label task's label sets are returned as given)."""
        name = type(self).__name__
        if y is None:
            raise InputError(f"{name} requires y to be passed, but the target y is None")
        if self.task == "multilabel":
            if len(y) != n_rows:
                raise InputError(f"{n_rows} rows but {len(y)} labels")
            return y
        try:
            a = np.asarray(y)
        except ValueError as e:                       # ragged nested sequences
            raise InputError(f"y should be a 1d array of labels: {e}") from None
        if a.dtype.kind == "c":
            raise InputError("Complex data not supported (y)")
        if a.ndim == 2 and a.shape[1] == 1:
            warnings.warn(_interop(DataConversionWarning)(
                "A column-vector y was passed when a 1d array was expected. Please change "
                "the shape of y to (n_samples,), for example using ravel()."), stacklevel=3)
            a = a.ravel()
        elif a.ndim != 1:
            raise InputError(f"y should be a 1d array, got an array of shape {a.shape} "
                             "instead.")
        if len(a) != n_rows:
            raise InputError(f"{n_rows} rows but {len(a)} labels: X and y have inconsistent "
                             "numbers of samples")
        if self.task == "regression":
            try:
                a = a.astype(np.float64)
            except (TypeError, ValueError):
                raise InputError("regression targets must be finite numbers, got "
                                 f"{a.dtype} values") from None
            if not np.all(np.isfinite(a)):
                what = "NaN" if np.isnan(a).any() else "infinity"
                raise InputError(f"Input y contains {what}: regression targets must be "
                                 "finite numbers")
        elif a.dtype.kind == "f":
            if not np.all(np.isfinite(a)):
                what = "NaN" if np.isnan(a).any() else "infinity"
                raise InputError(f"Input y contains {what}: class labels must be finite")
            if np.any(a != np.round(a)):
                raise InputError(f"Unknown label type: continuous. {name} is a classifier: y "
                                 "must hold class labels, not real-valued targets")
        return a

    # ---- labels ----------------------------------------------------------------------
    def _set_classes(self, y, classes=None):
        if self.task == "regression":
            self.classes_ = Labels()
            return
        if self.task == "multilabel":
            seen = set(classes) if classes is not None else {str(l) for ys in y for l in ys}
            self.classes_ = Labels(sorted(str(c) for c in seen))
        else:
            self.classes_ = unique_labels(classes if classes is not None else y)
        n, shown = len(self.classes_), ", ".join(map(str, self.classes_[:5]))
        if self.task == "binary" and n != 2:
            raise InputError(f"{type(self).__name__} is binary: needs exactly two classes, "
                             f"got {n} class{'es' if n != 1 else ''} ({shown}). Only binary "
                             "classification is supported.")
        if self.task == "multiclass" and n < 2:
            raise InputError(f"need at least two classes, got {n} class"
                             f"{'es' if n != 1 else ''} ({shown})")

    def _class_values(self) -> np.ndarray:
        classes = self.classes_
        return classes.values() if isinstance(classes, Labels) else Labels(classes).values()

    def _encode(self, y) -> np.ndarray:
        if self.task == "regression":
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise InputError("regression targets must be finite numbers")
            return y
        if self.task == "multilabel":
            index = {c: i for i, c in enumerate(self.classes_)}
            Y = -np.ones((len(y), len(self.classes_)), dtype=np.int8)
            try:
                for d, ys in enumerate(y):
                    for l in ys:
                        Y[d, index[str(l)]] = 1
            except KeyError as e:
                raise InputError(f"unknown label {e.args[0]!r}; this model knows: "
                                 f"{', '.join(self.classes_)}") from None
            return Y
        labels = np.asarray(y).ravel()
        classes = self._class_values()
        if classes.dtype != object and labels.dtype.kind in "biuf":
            # numbers against numbers: a label's code is its sorted position
            codes = np.minimum(np.searchsorted(classes, labels), len(classes) - 1)
            unknown = classes[codes] != labels
        else:
            # labels match classes by name (the string form of a number), vectorized:
            # the names of sorted string classes are sorted
            if labels.dtype.kind != "U":
                labels = np.array([str(l) for l in labels]) if labels.dtype == object \
                    else labels.astype(str)
            names = classes.astype(str)
            if classes.dtype == object:
                codes = np.minimum(np.searchsorted(names, labels), len(names) - 1)
            else:
                index = {c: i for i, c in enumerate(names.tolist())}
                codes = np.array([index.get(l, 0) for l in labels.tolist()], dtype=np.int64)
            unknown = names[codes] != labels
        if unknown.any():
            raise InputError(f"unknown label {str(labels[np.argmax(unknown)])!r}; this model "
                             f"knows: {', '.join(map(str, self.classes_))}")
        codes = codes.astype(np.int64)
        if self.task == "binary":
            return np.where(codes == 1, 1.0, -1.0)
        return codes

    @property
    def n_outputs_(self) -> int:
        if self.task in ("binary", "regression"):
            return 1
        return len(self.classes_)

    # ---- training --------------------------------------------------------------------
    def _start(self, rows: SparseRows, y, classes):
        self._set_classes(y, classes)
        self.n_features_in_ = rows.n_features
        self.t_ = 0
        self._init_state(rows.n_features, self.n_outputs_)

    def _step(self, rows: SparseRows, codes, order) -> None:
        order = np.arange(len(rows)) if order is None else np.asarray(order, dtype=np.int64)
        self.last_stats_ = self._pass(rows, codes, order)
        self.t_ += len(order)

    def partial_fit(self, X, y, classes=None, order=None) -> "OnlineLearner":
        """One pass over the given rows (in ``order``, default as given), continuing from the
        current state. ``classes`` lists every label up front when a first batch may not
        show them all."""
        first = not hasattr(self, "n_features_in_")
        rows = self._rows(X, reset=first)
        y = self._targets(y, len(rows))
        if first:
            self._start(rows, y, classes)
        self._step(rows, self._encode(y), order)
        return self

    def fit(self, X, y, callback=None) -> "OnlineLearner":
        """Start afresh and run ``self.epochs`` passes, each a new seeded permutation.

        ``callback(epoch, stats)`` is called after every pass (progress lines)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        rows = self._rows(X, reset=True)
        y = self._targets(y, len(rows))
        self._start(rows, y, None)
        codes = self._encode(y)
        rng = np.random.default_rng(getattr(self, "seed", 0))
        self.history_ = []
        for epoch in range(int(getattr(self, "epochs", 1))):
            self._step(rows, codes, rng.permutation(len(rows)))
            self.history_.append(dict(self.last_stats_))
            if callback is not None:
                callback(epoch + 1, self.last_stats_)
            if self._converged():
                break
        return self

    def _converged(self) -> bool:
        """Stop early (e.g. MIRA after a pass without mistakes)."""
        return False

    # ---- prediction ------------------------------------------------------------------
    @property
    def decision_function(self):
        """Scores of a classifier: ``(n,)`` for binary tasks and for multi-class learners
        fitted on two classes (``score[classes_[1]] - score[classes_[0]]``, as scikit-learn
        expects), ``(n, K)`` for more classes or labels. A regressor has none (scikit-learn's
        convention; ``hasattr`` is False): its scores are :meth:`predict`."""
        if self.task == "regression":
            raise AttributeError(f"{type(self).__name__} is a regressor and has no "
                                 "decision_function: use predict")
        return self._decision

    def _decision(self, X) -> np.ndarray:
        self._check_fitted()
        s = self._scores(self._rows(X, reset=False))
        if self.task == "multiclass" and s.ndim == 2 and s.shape[1] == 2:
            return s[:, 1] - s[:, 0]
        return s

    def predict(self, X):
        self._check_fitted()
        s = self._scores(self._rows(X, reset=False))
        if self.task == "regression":
            return s
        classes = self._class_values()
        if self.task == "binary":
            return classes[(s > 0).astype(np.int64)]
        if self.task == "multiclass":
            return classes[np.argmax(s, axis=1)]
        return [tuple(classes[np.flatnonzero(r > 0)]) for r in s]     # multilabel

    def score(self, X, y) -> float:
        """Accuracy (classification; exact label sets for multi-label) or the coefficient
        of determination R^2 (regression) of the predictions for ``X`` against ``y``."""
        predicted = self.predict(X)
        if self.task == "regression":
            y = self._targets(y, len(predicted))
            total = float(((y - y.mean()) ** 2).sum())
            residual = float(((y - predicted) ** 2).sum())
            if total == 0.0:
                return 1.0 if residual == 0.0 else 0.0
            return 1.0 - residual / total
        if self.task == "multilabel":
            if len(y) != len(predicted):
                raise InputError(f"{len(predicted)} rows but {len(y)} label sets")
            return float(np.mean([set(map(str, t)) == set(p) for t, p in zip(y, predicted)]))
        truth = self._targets(y, len(predicted))
        if predicted.dtype == object:             # string classes: labels match by name
            return float(np.mean(predicted == np.array([str(v) for v in truth], dtype=object)))
        return float(np.mean(predicted == truth))

    # ---- persistence (``.npz`` arrays + JSON; never pickle) ----------------------------
    # learned attributes that describe the last pass only and are not saved
    _transient = ("history_", "last_stats_")

    def state_arrays(self) -> dict:
        return {k: v for k, v in vars(self).items()
                if k.endswith("_") and k not in self._transient and isinstance(v, np.ndarray)
                and v.dtype != object}

    def save(self, path) -> None:
        """Write the learner to ``path`` (``.npz`` arrays + JSON header, atomically)."""
        import json

        from nbsvm.models.persist import save_npz
        from nbsvm import __version__
        header, arrays = self.saved_parts()
        header["package_version"] = __version__
        try:
            json.dumps(header)
        except (TypeError, ValueError) as e:
            raise NBSVMError(f"cannot save {type(self).__name__}: a parameter or learned value "
                             f"is not JSON ({e})") from None
        save_npz(path, "learner", header, arrays)

    def state_scalars(self) -> dict:
        """Learned values that are not arrays (numbers, strings, lists, dicts), for the
        file's JSON header; numpy scalars become Python numbers."""
        def plain(v):
            if isinstance(v, np.generic):
                return v.item()
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            if isinstance(v, dict):
                return {k: plain(x) for k, x in v.items()}
            return v

        scalars = {}
        for k, v in vars(self).items():
            if not k.endswith("_") or k in self._transient:
                continue
            if isinstance(v, (np.generic, bool, int, float, str, list, dict)):
                scalars[k] = plain(v)
            elif not isinstance(v, np.ndarray):
                raise NBSVMError(f"cannot save {type(self).__name__}.{k} of type "
                                 f"{type(v).__name__} (only arrays and JSON values)")
        classes = scalars.get("classes_")
        if classes and not all(isinstance(c, str) for c in classes):
            # the file keeps class names (strings); label_type_ says how to read them back
            kind = "bool" if all(isinstance(c, bool) for c in classes) else \
                "int" if all(isinstance(c, int) for c in classes) else "float"
            scalars["classes_"] = [str(_LABEL_TYPES[kind](c)) for c in classes]
            scalars["label_type_"] = kind
        return scalars

    def saved_parts(self) -> tuple[dict, dict]:
        """``(header, arrays)`` of a saved learner: the JSON part (its class, task,
        parameters and scalar state) and the learned arrays; :meth:`from_parts` inverts it
        (a model file that holds learners inside it uses the pair)."""
        return (dict(learner=type(self).__name__, task=self.task, params=self.get_params(),
                     state=self.state_scalars()), self.state_arrays())

    @staticmethod
    def from_parts(header: dict, arrays: dict, path=None) -> "OnlineLearner":
        """The learner :meth:`saved_parts` described, every part checked (a file may be
        crafted): an :class:`NBSVMError` saying ``corrupted learner file`` otherwise."""
        from nbsvm.learners.registry import learner_class
        name = header.get("learner") if isinstance(header, dict) else None
        if not isinstance(name, str):
            raise NBSVMError(f"corrupted learner file: bad learner name {name!r}",
                             path=None if path is None else str(path))
        cls = learner_class(name, path=None if path is None else str(path))
        params, state = header.get("params", {}), header.get("state", {})
        try:
            if not isinstance(params, dict) or not isinstance(state, dict):
                raise NBSVMError("params and state must be objects")
            obj = cls(**params)
            _check_state(obj, state, arrays)
            for k, v in state.items():
                if k == "classes_":
                    v = Labels(_typed_classes(state))
                if k != "label_type_":
                    setattr(obj, k, v)
            for k, v in arrays.items():
                setattr(obj, k, v)
        except NBSVMError as e:
            raise NBSVMError(f"corrupted learner file: {e.message}",
                             path=None if path is None else str(path)) from None
        except (TypeError, ValueError, AttributeError, OverflowError) as e:
            raise NBSVMError(f"corrupted learner file: {type(e).__name__}: {e}",
                             path=None if path is None else str(path)) from None
        return obj

    @staticmethod
    def load(path) -> "OnlineLearner":
        from nbsvm.models.persist import load_npz
        header, arrays = load_npz(path, "learner")
        return OnlineLearner.from_parts(header, arrays, path)


MAX_FEATURES = 1 << 40          # a loaded n_features_in_ above this is taken as corruption

# how class names are written for labels that were not strings, and read back
_LABEL_TYPES = {"int": int, "float": float, "bool": bool}
_READ_LABEL = {"int": int, "float": float, "bool": {"True": True, "False": False}.__getitem__}


def _typed_classes(state: dict) -> list:
    """The saved class names as the label values given to fit (``label_type_``:
    ``"int"``, ``"float"`` or ``"bool"``; strings when absent)."""
    names, kind = state["classes_"], state.get("label_type_")
    if kind is None:
        return list(names)
    if not isinstance(kind, str) or kind not in _READ_LABEL:
        raise NBSVMError(f"bad label_type_ {kind!r}; known: {', '.join(_READ_LABEL)}")
    try:
        values = [_READ_LABEL[kind](name) for name in names]
    except (KeyError, ValueError):
        raise NBSVMError(f"classes_ {names[:5]} are not {kind} labels") from None
    if kind == "float" and not np.all(np.isfinite(values)):
        raise NBSVMError("float class labels must be finite")
    return values


def _check_state(obj: OnlineLearner, state: dict, arrays: dict, prefix: str = "") -> None:
    """Check a loaded learner's JSON state and arrays before they are set on ``obj``.

    A fresh learner with the same parameters is given the loaded ``classes_`` and
    ``n_features_in_`` and runs its own ``_init_state``: every array the fresh one has must
    be loaded with its dtype and shape (lazily sized ones, allocated empty, may also have
    the length of the weight vector ``v_``), no other array may be present, floats must be
    finite. The kernels index these arrays by feature and class without bounds checks.
    """
    cls = type(obj)
    for k in state:
        if not (isinstance(k, str) and k.endswith("_") and not k.startswith("_")) \
                or isinstance(getattr(cls, k, None), (property, type(cls.load))) \
                or callable(getattr(cls, k, None)):
            raise NBSVMError(f"unexpected state entry {prefix}{k!r}")
    classes = state.get("classes_")
    if classes is not None:
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise NBSVMError("classes_ must be a list of strings")
        classes = _typed_classes(state)
        if classes != sorted(set(classes)) or len(set(classes)) != len(classes):
            raise NBSVMError("classes_ must be sorted and distinct")
        n = len(classes)
        if (obj.task == "binary" and n != 2) or (obj.task == "multiclass" and n < 2) \
                or (obj.task == "regression" and n != 0):
            raise NBSVMError(f"{n} classes for a {obj.task} learner")
    elif "label_type_" in state:
        raise NBSVMError("label_type_ without classes_")
    t = state.get("t_", 0)
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise NBSVMError(f"bad t_ {t!r}")
    n_features = state.get("n_features_in_")
    if n_features is None:                       # never trained: no learned arrays
        if arrays:
            raise NBSVMError(f"arrays {sorted(arrays)} in a learner that was never trained")
        return
    if isinstance(n_features, bool) or not isinstance(n_features, int) \
            or not 0 <= n_features <= MAX_FEATURES or classes is None:
        raise NBSVMError(f"bad n_features_in_ {n_features!r} (or no classes_)")
    fresh = cls(**obj.get_params())
    fresh.classes_ = classes
    fresh.n_features_in_ = n_features
    fresh._init_state(n_features, fresh.n_outputs_)
    expected = fresh.state_arrays()
    for name, a in arrays.items():
        if not name.endswith("_") or name.startswith("_") or hasattr(cls, name):
            raise NBSVMError(f"unexpected array {prefix}{name!r}")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise NBSVMError(f"non-finite values in {prefix}{name}")
    sub = {}
    if hasattr(obj, "_make_binary"):             # OneVsRest: the binary learners' state
        per = state.get("estimator_state_")
        if not isinstance(per, list) or len(per) != fresh.n_outputs_ \
                or not all(isinstance(d, dict) for d in per):
            raise NBSVMError("estimator_state_ must be one object per class")
        for k, scalars in enumerate(per):
            mine = {n[len(f"est{k}_"):]: a for n, a in arrays.items()
                    if n.startswith(f"est{k}_")}
            sub.update({f"est{k}_{n}": a for n, a in mine.items()})
            if scalars.get("n_features_in_") != n_features \
                    or scalars.get("classes_") != ["0", "1"]:
                raise NBSVMError(f"estimator {k} does not match the learner")
            _check_state(fresh._make_binary(), scalars, mine, prefix=f"est{k}_")
    for name, a in arrays.items():
        if name in sub:
            continue
        want = expected.get(name)
        if want is None:
            raise NBSVMError(f"unexpected array {prefix}{name!r} for "
                             f"{cls.__name__}")
        shapes = {want.shape}
        if want.size == 0 and getattr(fresh, "v_", None) is not None:
            shapes.add(fresh.v_.shape)           # sized when first needed (linear.py)
        if a.dtype != want.dtype or a.shape not in shapes:
            raise NBSVMError(f"array {prefix}{name} is {a.dtype} {a.shape}, expected "
                             f"{want.dtype} {want.shape} for {n_features} features and "
                             f"{len(classes)} classes")
    missing = sorted(set(expected) - set(arrays))
    if missing:
        raise NBSVMError(f"missing arrays {[prefix + m for m in missing]}")
