"""What every backend learner shares: sparse-row input, label encoding, the epoch loop,
and saving to ``.npz`` + JSON.

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
(regression). Classes are strings, sorted; for two classes the second is the positive one
(``1`` over ``-1``, ``pos`` over ``neg``), as in the NBSVM model.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import NBSVMError

TASKS = ("binary", "multiclass", "multilabel", "regression")


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


def as_rows(X, n_features: int | None = None) -> SparseRows:
    """Accept :class:`SparseRows`, a scipy-style CSR matrix (``indptr``, ``indices``,
    ``data``, ``shape``), a dense 2-D array or an ``(indices, values, offsets)`` tuple.

    Indices must lie in ``[0, n_features)``; ``n_features`` defaults to the input's own
    width (or the largest index + 1 for a tuple).
    """
    if isinstance(X, SparseRows):
        rows = X
    elif hasattr(X, "indptr") and hasattr(X, "indices") and hasattr(X, "data"):
        X = X.tocsr() if hasattr(X, "tocsr") else X
        rows = SparseRows(np.asarray(X.indices), np.asarray(X.data), np.asarray(X.indptr),
                          int(X.shape[1]))
    elif isinstance(X, tuple) and len(X) == 3:
        indices, values, offsets = (np.asarray(a) for a in X)
        width = int(indices.max()) + 1 if indices.size else 0
        rows = SparseRows(indices, values, offsets, width)
    else:
        A = np.asarray(X, dtype=np.float64)
        if A.ndim != 2:
            raise NBSVMError(f"expected a 2-D array or sparse rows, got shape {A.shape}")
        r, c = np.nonzero(A)
        offsets = np.zeros(A.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=A.shape[0]), out=offsets[1:])
        rows = SparseRows(c, A[r, c], offsets, A.shape[1])
    width = rows.n_features if n_features is None else int(n_features)
    out = SparseRows(np.ascontiguousarray(rows.indices, dtype=np.int64),
                     np.ascontiguousarray(rows.values, dtype=np.float64),
                     np.ascontiguousarray(rows.offsets, dtype=np.int64), width)
    if out.offsets.ndim != 1 or len(out.offsets) < 1 or out.offsets[0] != 0 \
            or out.offsets[-1] != len(out.indices) or len(out.values) != len(out.indices):
        raise NBSVMError("malformed sparse rows: offsets must start at 0 and end at nnz")
    bad_index, finite = _check_rows(out.indices, out.values, width)
    if bad_index >= 0:
        raise NBSVMError(f"feature index {int(out.indices[bad_index])} out of range: this model "
                         f"has {width} features (indices 0..{width - 1})")
    if not finite:
        raise NBSVMError("feature values must be finite")
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


class OnlineLearner:
    """Base class of the backend learners (scikit-learn conventions: ``__init__`` only
    stores parameters; learned state ends in ``_``)."""

    task = "binary"

    # ---- parameters ------------------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep=True) -> dict:
        return {p: getattr(self, p) for p in self._param_names()}

    def set_params(self, **params) -> "OnlineLearner":
        for k, v in params.items():
            if k not in self._param_names():
                raise NBSVMError(f"unknown parameter {k!r} for {type(self).__name__}; allowed: "
                                 f"{', '.join(self._param_names())}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # ---- labels ----------------------------------------------------------------------
    def _set_classes(self, y, classes=None):
        if self.task == "regression":
            self.classes_ = []
            return
        if self.task == "multilabel":
            seen = set(classes) if classes is not None else {str(l) for ys in y for l in ys}
        else:
            seen = {str(l) for l in (classes if classes is not None else y)}
        self.classes_ = sorted(seen)
        if self.task == "binary" and len(self.classes_) != 2:
            raise NBSVMError(f"{type(self).__name__} is binary: needs exactly two classes, got "
                             f"{len(self.classes_)} ({', '.join(self.classes_[:5])})")
        if self.task == "multiclass" and len(self.classes_) < 2:
            raise NBSVMError(f"need at least two classes, got {self.classes_}")

    def _encode(self, y) -> np.ndarray:
        if self.task == "regression":
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise NBSVMError("regression targets must be finite numbers")
            return y
        if self.task == "multilabel":
            index = {c: i for i, c in enumerate(self.classes_)}
            Y = -np.ones((len(y), len(self.classes_)), dtype=np.int8)
            try:
                for d, ys in enumerate(y):
                    for l in ys:
                        Y[d, index[str(l)]] = 1
            except KeyError as e:
                raise NBSVMError(f"unknown label {e.args[0]!r}; this model knows: "
                                 f"{', '.join(self.classes_)}") from None
            return Y
        # vectorized: classes_ are sorted strings, so a label's code is its sorted position
        labels = np.asarray(y)
        if labels.dtype.kind != "U":
            labels = np.array([str(l) for l in labels.ravel()]) if labels.dtype == object \
                else labels.astype(str)
        classes = np.asarray(self.classes_)
        codes = np.minimum(np.searchsorted(classes, labels), len(classes) - 1).astype(np.int64)
        unknown = classes[codes] != labels
        if unknown.any():
            raise NBSVMError(f"unknown label {str(labels[np.argmax(unknown)])!r}; this model "
                             f"knows: {', '.join(self.classes_)}")
        if self.task == "binary":
            return np.where(codes == 1, 1.0, -1.0)
        return codes

    @property
    def n_outputs_(self) -> int:
        if self.task in ("binary", "regression"):
            return 1
        return len(self.classes_)

    # ---- training --------------------------------------------------------------------
    def _ensure_started(self, rows: SparseRows, y, classes):
        if not hasattr(self, "n_features_in_"):
            self._set_classes(y, classes)
            self.n_features_in_ = rows.n_features
            self.t_ = 0
            self._init_state(rows.n_features, self.n_outputs_)

    def partial_fit(self, X, y, classes=None, order=None) -> "OnlineLearner":
        """One pass over the given rows (in ``order``, default as given), continuing from the
        current state. ``classes`` lists every label up front when a first batch may not
        show them all."""
        rows = as_rows(X, getattr(self, "n_features_in_", None))
        if len(y) != len(rows):
            raise NBSVMError(f"{len(rows)} rows but {len(y)} labels")
        self._ensure_started(rows, y, classes)
        codes = self._encode(y)
        order = np.arange(len(rows)) if order is None else np.asarray(order, dtype=np.int64)
        self.last_stats_ = self._pass(rows, codes, order)
        self.t_ += len(order)
        return self

    def fit(self, X, y, callback=None) -> "OnlineLearner":
        """Start afresh and run ``self.epochs`` passes, each a new seeded permutation.

        ``callback(epoch, stats)`` is called after every pass (progress lines)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        rows = as_rows(X)
        rng = np.random.default_rng(getattr(self, "seed", 0))
        self.history_ = []
        for epoch in range(int(getattr(self, "epochs", 1))):
            self.partial_fit(rows, y, order=rng.permutation(len(rows)))
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
    def decision_function(self, X) -> np.ndarray:
        if not hasattr(self, "n_features_in_"):
            raise NBSVMError(f"this {type(self).__name__} is not fitted yet")
        return self._scores(as_rows(X, self.n_features_in_))

    def predict(self, X) -> np.ndarray:
        s = self.decision_function(X)
        if self.task == "regression":
            return s
        classes = np.asarray(self.classes_, dtype=object)
        if self.task == "binary":
            return classes[(s > 0).astype(np.int64)]
        if self.task == "multiclass":
            return classes[np.argmax(s, axis=1)]
        return [tuple(classes[np.flatnonzero(r > 0)]) for r in s]     # multilabel

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

        from ..persist import save_npz
        from .. import __version__
        header = dict(learner=type(self).__name__, task=self.task, params=self.get_params(),
                      state=self.state_scalars(), package_version=__version__)
        try:
            json.dumps(header)
        except (TypeError, ValueError) as e:
            raise NBSVMError(f"cannot save {type(self).__name__}: a parameter or learned value "
                             f"is not JSON ({e})") from None
        save_npz(path, "learner", header, self.state_arrays())

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
        return scalars

    @staticmethod
    def load(path) -> "OnlineLearner":
        from ..persist import load_npz
        from .registry import learner_class
        header, arrays = load_npz(path, "learner")
        name = header.get("learner")
        if not isinstance(name, str):
            raise NBSVMError(f"corrupted learner file: bad learner name {name!r}",
                             path=str(path))
        cls = learner_class(name, path=str(path))
        params, state = header.get("params", {}), header.get("state", {})
        try:
            if not isinstance(params, dict) or not isinstance(state, dict):
                raise NBSVMError("params and state must be objects")
            obj = cls(**params)
            _check_state(obj, state, arrays)
            for k, v in state.items():
                setattr(obj, k, v)
            for k, v in arrays.items():
                setattr(obj, k, v)
        except NBSVMError as e:
            raise NBSVMError(f"corrupted learner file: {e.message}", path=str(path)) from None
        except (TypeError, ValueError, AttributeError, OverflowError) as e:
            raise NBSVMError(f"corrupted learner file: {type(e).__name__}: {e}",
                             path=str(path)) from None
        return obj


MAX_FEATURES = 1 << 40          # a loaded n_features_in_ above this is taken as corruption


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
        if classes != sorted(set(classes)):
            raise NBSVMError("classes_ must be sorted and distinct")
        n = len(classes)
        if (obj.task == "binary" and n != 2) or (obj.task == "multiclass" and n < 2) \
                or (obj.task == "regression" and n != 0):
            raise NBSVMError(f"{n} classes for a {obj.task} learner")
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
