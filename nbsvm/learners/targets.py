"""The targets ``y`` of a learner: checked against its task, its classes learned
(:class:`Labels`, sorted and of the type given, :func:`unique_labels`) and encoded for the
kernels (float64 ``+-1`` for binary, int64 class codes for multi-class, an int8 ``(n,
n_labels)`` matrix of ``+-1`` for multi-label, float64 targets for regression).
:class:`TargetsMixin` holds these steps for :class:`~nbsvm.learners.base.OnlineLearner`.
"""

from __future__ import annotations

import numbers
import warnings
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.compat import DataConversionWarning, InputError
from nbsvm.compat import interop as _interop
from nbsvm.io.labels import class_order

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


class Labels(list):
    """The classes of a fitted learner: a list (what the CLI, the model file's JSON header
    and comparisons like ``classes_ == ["neg", "pos"]`` use) that can also be indexed by
    an array of positions, as ``classes_[codes]`` indexes a numpy array (what
    scikit-learn does with ``classes_``).

    Examples
    --------
    >>> c = Labels([-1, 1])
    >>> c == [-1, 1], c[np.array([1, 1, 0])].tolist(), np.asarray(c).dtype.kind, c == 1
    (True, [1, 1, -1], 'i', array([False,  True]))
    >>> c.shape, c.ndim, c.dtype.kind
    ((2,), 1, 'i')
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

    def tolist(self) -> list:
        """The classes as a plain list (as an array's ``tolist``)."""
        return list(self)

    # what scikit-learn reads of an array of classes (cross_val_predict's method=
    # "predict_proba", StackingClassifier read classes_.shape)
    @property
    def shape(self) -> tuple[int]:
        return (len(self),)

    @property
    def ndim(self) -> int:
        return 1

    @property
    def size(self) -> int:
        return len(self)

    @property
    def dtype(self) -> np.dtype:
        return self.values().dtype

    # Against a list or tuple, equality is a list's (one bool); against a scalar or an
    # array it is element by element, as numpy's: scikit-learn finds a class's column with
    # ``np.flatnonzero(classes_ == label)``.
    def __eq__(self, other):
        if isinstance(other, (list, tuple)):
            return list.__eq__(self, list(other))
        return self.values() == other

    def __ne__(self, other):
        if isinstance(other, (list, tuple)):
            return list.__ne__(self, list(other))
        return self.values() != other

    __hash__ = None


def unique_labels(values: ArrayLike) -> Labels:
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
    if any(v is None or (isinstance(v, float) and v != v) for v in items):
        raise InputError("y holds a missing label (None or NaN): every example needs a label")
    numeric = [isinstance(v, numbers.Real) for v in items]
    if all(numeric):
        return Labels(np.unique(np.array(items)).tolist())
    if any(numeric) and any(isinstance(v, str) for v in items):
        raise InputError("Unknown label type: y mixes strings and numbers; give one kind")
    return Labels(sorted({str(v) for v in items}))  # other objects: their names


def _refuse_mixed_kinds(y) -> None:
    """Labels of two kinds, strings beside numbers (``[1, 'b']``, not an array): numpy made
    them all strings, and predict answered ``'1'`` for a ``1`` (as :func:`unique_labels`
    refuses them in an object array, and scikit-learn and NBSVMClassifier do)."""
    values = y.tolist() if hasattr(y, "tolist") else list(y)
    if all(type(v) is str for v in values):  # the common case, at C speed: 50 ns a label
        return
    first: dict[bool, tuple[int, object]] = {}
    for i, value in enumerate(values):
        if isinstance(value, list):  # a column vector's rows
            value = value[0] if len(value) == 1 else value
        number = isinstance(value, (numbers.Number, np.number)) and value == value
        if not (number or isinstance(value, str)):
            continue  # missing (None, NaN): refused as such below
        first.setdefault(isinstance(value, str), (i, value))
        if len(first) == 2:
            text, other = first[True][1], first[False][1]
            raise InputError(
                f"Unknown label type: y mixes strings and numbers ({text!r} and {other!r}, "
                f"y[{i}]); give one kind"
            )


class TargetsMixin:
    """``y`` for an :class:`~nbsvm.learners.base.OnlineLearner` (which sets ``task``):
    checking (:meth:`_targets`), the classes (:meth:`_set_classes`, ``classes_``,
    ``n_outputs_``) and the encoding the kernels take (:meth:`_encode`)."""

    task: str  # the learner's, a class attribute of each learner

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
        return self._target_array(y, n_rows)

    def _target_array(self, y, n_rows: int) -> np.ndarray:
        """``y`` as a 1-d array of one target per row: regression targets (finite
        numbers) or class labels (not real-valued); a column vector warns, as in
        scikit-learn, and is used raveled."""
        name = type(self).__name__
        try:
            a = np.asarray(y)
        except ValueError as e:  # ragged nested sequences
            raise InputError(f"y should be a 1d array of labels: {e}") from None
        if a.dtype.kind == "c":
            raise InputError("Complex data not supported (y)")
        if a.ndim == 2 and a.shape[1] == 1:
            warnings.warn(
                _interop(DataConversionWarning)(
                    "A column-vector y was passed when a 1d array was expected. Please change "
                    "the shape of y to (n_samples,), for example using ravel()."
                ),
                stacklevel=4,
            )
            a = a.ravel()
        elif a.ndim != 1:
            raise InputError(f"y should be a 1d array, got an array of shape {a.shape} instead.")
        if len(a) != n_rows:
            raise InputError(
                f"{n_rows} rows but {len(a)} labels: X and y have inconsistent numbers of samples"
            )
        if a.dtype.kind == "U" and not isinstance(y, np.ndarray) and self.task != "regression":
            _refuse_mixed_kinds(y)  # (an object array: unique_labels refuses them)
        if self.task == "regression":
            try:
                a = a.astype(np.float64)
            except (TypeError, ValueError):
                raise InputError(
                    f"regression targets must be finite numbers, got {a.dtype} values"
                ) from None
            if not np.all(np.isfinite(a)):
                what = "NaN" if np.isnan(a).any() else "infinity"
                raise InputError(
                    f"Input y contains {what}: regression targets must be finite numbers"
                )
        elif a.dtype.kind == "f":
            if not np.all(np.isfinite(a)):
                what = "NaN" if np.isnan(a).any() else "infinity"
                raise InputError(f"Input y contains {what}: class labels must be finite")
            if np.any(a != np.round(a)):
                raise InputError(
                    f"Unknown label type: continuous. {name} is a classifier: y "
                    "must hold class labels, not real-valued targets"
                )
        return a

    # ---- labels ----------------------------------------------------------------------
    def _set_classes(self, y, classes=None):
        if self.task == "regression":
            self.classes_ = Labels()
            return
        if self.task == "multilabel":
            seen = set(classes) if classes is not None else {str(lab) for ys in y for lab in ys}
            # numbers by value, as MultiLabelBinarizer orders its columns (not 1, 10, 2)
            self.classes_ = Labels(class_order(str(c) for c in seen))
        else:
            self.classes_ = unique_labels(classes if classes is not None else y)
        n, shown = len(self.classes_), ", ".join(map(str, self.classes_[:5]))
        if self.task == "binary" and n != 2:
            raise InputError(
                f"{type(self).__name__} is binary: needs exactly two classes, "
                f"got {n} class{'es' if n != 1 else ''} ({shown}). Only binary "
                "classification is supported."
            )
        if self.task == "multiclass" and n < 2:
            raise InputError(
                f"need at least two classes, got {n} class{'es' if n != 1 else ''} ({shown})"
            )

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
                    for lab in ys:
                        Y[d, index[str(lab)]] = 1
            except KeyError as e:
                raise InputError(
                    f"unknown label {e.args[0]!r}; this model knows: {', '.join(self.classes_)}"
                ) from None
            return Y
        codes = self._codes(y)
        if self.task == "binary":
            return np.where(codes == 1, 1.0, -1.0)
        return codes

    def _codes(self, y) -> np.ndarray:
        """The int64 code of each label of ``y`` (its position in ``classes_``); an
        unknown label raises :class:`InputError`."""
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
                labels = (
                    np.array([str(lab) for lab in labels])
                    if labels.dtype == object
                    else labels.astype(str)
                )
            names = classes.astype(str)
            if classes.dtype == object:
                codes = np.minimum(np.searchsorted(names, labels), len(names) - 1)
            else:
                index = {c: i for i, c in enumerate(names.tolist())}
                codes = np.array([index.get(lab, 0) for lab in labels.tolist()], dtype=np.int64)
            unknown = names[codes] != labels
        if unknown.any():
            raise InputError(
                f"unknown label {str(labels[np.argmax(unknown)])!r}; this model "
                f"knows: {', '.join(map(str, self.classes_))}"
            )
        return codes.astype(np.int64)

    @property
    def n_outputs_(self) -> int:
        if self.task in ("binary", "regression"):
            return 1
        return len(self.classes_)
