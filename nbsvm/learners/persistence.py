"""Saving and loading a learner: its parameters and scalar state as JSON, its learned
arrays as ``.npz`` (never pickle), and every part of a loaded file checked against a fresh
learner with the same parameters before it is used (the kernels index the arrays without
bounds checks). :class:`PersistenceMixin` gives :class:`~nbsvm.learners.base.OnlineLearner`
``save``, ``load`` and the ``(header, arrays)`` pair a model file holding learners uses.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.io.labels import class_order
from nbsvm.learners.targets import Labels

if TYPE_CHECKING:
    from nbsvm.learners.base import OnlineLearner


class PersistenceMixin:
    """``.npz`` arrays + JSON for an :class:`~nbsvm.learners.base.OnlineLearner`: the
    learned attributes (names ending in ``_``) are saved, arrays apart from the rest."""

    task: str

    if TYPE_CHECKING:  # the parameter protocol of the learner (nbsvm._params.Params)

        def get_params(self, deep: bool = True) -> dict: ...

    # learned attributes that describe the last pass only and are not saved
    _transient: tuple[str, ...] = ("history_", "last_stats_")

    def state_arrays(self) -> dict:
        return {
            k: v
            for k, v in vars(self).items()
            if k.endswith("_")
            and k not in self._transient
            and isinstance(v, np.ndarray)
            and v.dtype != object
        }

    def diverged(self) -> str | None:
        """The first learned array holding NaN or infinity (a run whose steps blew up),
        or None: such a learner is never saved, since no loader would take it back."""
        return next((k for k, a in self.state_arrays().items() if _not_finite(a)), None)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the learner to ``path`` (``.npz`` arrays + JSON header, atomically)."""
        import json

        from nbsvm._version import __version__
        from nbsvm.io.npzfile import save_npz

        header, arrays = self.saved_parts()
        header["package_version"] = __version__
        try:
            json.dumps(header)
        except (TypeError, ValueError) as e:
            raise NBSVMError(
                f"cannot save {type(self).__name__}: a parameter or learned value is not JSON ({e})"
            ) from None
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
                raise NBSVMError(
                    f"cannot save {type(self).__name__}.{k} of type "
                    f"{type(v).__name__} (only arrays and JSON values)"
                )
        classes = scalars.get("classes_")
        if classes and not all(isinstance(c, str) for c in classes):
            # the file keeps class names (strings); label_type_ says how to read them back
            scalars["classes_"], scalars["label_type_"] = label_names(classes)
        return scalars

    def saved_parts(self) -> tuple[dict, dict]:
        """``(header, arrays)`` of a saved learner: the JSON part (its class, task,
        parameters and scalar state) and the learned arrays; :meth:`from_parts` inverts it
        (a model file that holds learners inside it uses the pair)."""
        bad = self.diverged()
        if bad is not None:
            from nbsvm.learners.hints import divergence_hints

            hints = divergence_hints(self, cli=False)  # type: ignore[arg-type]
            *first, last = ["scale the feature values down", *hints]
            raise NBSVMError(
                f"{type(self).__name__} diverged: {bad} holds values that are not finite, so "
                f"it is not saved ({', '.join(first) + ' or ' if first else ''}{last})"
            )
        header = dict(
            learner=type(self).__name__,
            task=self.task,
            params=self.get_params(),
            state=self.state_scalars(),
        )
        arrays, sparse = sparse_parts(self.state_arrays())
        if sparse:
            header["sparse"] = sparse
        return header, arrays

    @staticmethod
    def from_parts(
        header: dict, arrays: dict, path: str | os.PathLike[str] | None = None
    ) -> OnlineLearner:
        """The learner :meth:`saved_parts` described, every part checked (a file may be
        crafted): an :class:`NBSVMError` saying ``corrupted learner file`` otherwise."""
        from nbsvm.learners.registry import learner_class

        name = header.get("learner") if isinstance(header, dict) else None
        if not isinstance(name, str):
            raise NBSVMError(
                f"corrupted learner file: bad learner name {name!r}",
                path=None if path is None else str(path),
            )
        cls = learner_class(name, path=None if path is None else str(path))
        params, state = header.get("params", {}), header.get("state", {})
        arrays = dense_parts(header.get("sparse"), arrays, path)
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
            raise NBSVMError(
                f"corrupted learner file: {e.message}", path=None if path is None else str(path)
            ) from None
        except (TypeError, ValueError, AttributeError, OverflowError) as e:
            raise NBSVMError(
                f"corrupted learner file: {type(e).__name__}: {e}",
                path=None if path is None else str(path),
            ) from None
        return obj

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> OnlineLearner:
        """The learner saved in ``path``, of the class it was saved from: any learner
        through ``OnlineLearner.load``, one of this class (or a subclass) through
        ``Pegasos.load`` and the like; a file of another class is refused."""
        from nbsvm.io.npzfile import load_npz

        header, arrays = load_npz(path, "learner")
        learner = PersistenceMixin.from_parts(header, arrays, path)
        if not isinstance(learner, cls):
            raise NBSVMError(
                f"this file holds a learner of class {type(learner).__name__}, not "
                f"{cls.__name__}: load it with {type(learner).__name__}.load or "
                "OnlineLearner.load",
                path=str(path),
            )
        return learner


#: A learned array of at least this many bytes is saved as its nonzero entries (flat
#: indices and values) when they take less than half its bytes: named features hashed into
#: 2**n_bits columns leave most of them zero (6 features at --n-bits 27 wrote 1 GB).
SPARSE_MIN_BYTES = 1 << 20
INDEX_SUFFIX, VALUES_SUFFIX = ".nonzero_index", ".nonzero_values"


def sparse_parts(arrays: dict) -> tuple[dict, dict]:
    """``arrays`` as a file keeps them, and the shapes of those kept by their nonzero
    entries (``name + INDEX_SUFFIX``: int64 flat indices, increasing; ``name +
    VALUES_SUFFIX``: their values); :func:`dense_parts` inverts it."""
    kept, sparse = {}, {}
    for name, a in arrays.items():
        # counted before the index is made: a dense array takes no index of its size
        if a.nbytes >= SPARSE_MIN_BYTES and np.count_nonzero(a) * (8 + a.itemsize) < a.nbytes // 2:
            index = np.flatnonzero(a)
            kept[name + INDEX_SUFFIX] = index.astype(np.int64)
            kept[name + VALUES_SUFFIX] = a.reshape(-1)[index]
            sparse[name] = list(a.shape)
            continue
        kept[name] = a
    return kept, sparse


def dense_parts(sparse: object, arrays: dict, path: str | os.PathLike[str] | None = None) -> dict:
    """The arrays :func:`sparse_parts` kept by their nonzero entries, dense again, each
    part checked (a file may be crafted) and their dense sizes together checked against
    the memory available before any is allocated."""
    from nbsvm import memory

    if sparse is None:
        return arrays
    where = None if path is None else str(path)

    def bad(why: str) -> NBSVMError:
        return NBSVMError(f"corrupted learner file: {why}", path=where)

    if not isinstance(sparse, dict):
        raise bad("sparse must map array names to shapes")
    out, parts = dict(arrays), []
    for name, shape in sparse.items():
        if name in out:
            raise bad(f"array {name!r} is kept both whole and by its nonzero entries")
        index, values = out.pop(name + INDEX_SUFFIX, None), out.pop(name + VALUES_SUFFIX, None)
        if not (
            isinstance(shape, list)
            and all(type(n) is int and 0 <= n <= MAX_FEATURES for n in shape)
            and isinstance(index, np.ndarray)
            and isinstance(values, np.ndarray)
        ):
            raise bad(f"array {name!r} kept by its nonzero entries has a bad shape or parts")
        size = math.prod(shape)
        if not (
            index.dtype == np.int64
            and index.ndim == values.ndim == 1
            and index.size == values.size
            and values.dtype.kind == "f"
            and size <= MAX_FEATURES
        ):
            raise bad(f"array {name!r}: bad nonzero entries")
        if index.size and (index[0] < 0 or index[-1] >= size or np.any(np.diff(index) <= 0)):
            raise bad(f"array {name!r}: nonzero indices out of order or beyond its shape")
        parts.append((name, shape, index, values))
    try:  # all of them together, before the first is allocated
        memory.check_fit_memory(
            sum(math.prod(shape) * values.dtype.itemsize for _, shape, _, values in parts),
            what=f"loading the learner's {', '.join(name for name, *_ in parts)}",
            advice="load it on a machine with more memory",
        )
    except NBSVMError as e:
        raise NBSVMError(e.message, path=where) from None
    for name, shape, index, values in parts:
        dense = np.zeros(math.prod(shape), dtype=values.dtype)
        dense[index] = values
        out[name] = dense.reshape(shape)
    return out


MAX_FEATURES = 1 << 40  # a loaded n_features_in_ above this is taken as corruption

#: The types of class labels a file keeps besides strings, by the name it records them by.
LABEL_TYPES = {"bool": bool, "int": int, "float": float}


def _not_finite(a: np.ndarray) -> bool:
    """Whether a float array holds NaN or infinity: never saved, never loaded."""
    return a.dtype.kind == "f" and not np.isfinite(a).all()


def label_type(value: object) -> str | None:
    """The name files record a class label's type by: ``"bool"``, ``"int"`` or ``"float"``
    (numpy scalars too; floats finite); None for a string or any other value, which a file
    keeps by its name (``str``). One definition for model and learner files."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real) and math.isfinite(value):
        return "float"
    return None


def plain_label(value: object) -> bool | int | float | None:
    """``value`` as the Python value of its :func:`label_type` (what JSON holds exactly:
    ``np.int64(1)`` -> ``1``, ``np.float32(0.1)`` -> ``0.10000000149011612``); None for a
    label a file keeps by its name."""
    kind = label_type(value)
    return None if kind is None else LABEL_TYPES[kind](value)


def label_names(classes: Iterable[Any]) -> tuple[list[str], str]:
    """A learner's ``classes_`` (numbers of one kind, sorted) as a file writes them: their
    names and one type, ``(names, label_type_)``; :func:`typed_labels` reads them back."""
    kinds = {label_type(c) for c in classes}
    if None in kinds:
        raise NBSVMError(
            f"cannot save class labels {list(classes)[:5]}: strings, bools, "
            f"integers or finite floats only"
        )
    kind = "bool" if kinds == {"bool"} else "int" if kinds <= {"bool", "int"} else "float"
    return [str(LABEL_TYPES[kind](plain_label(c))) for c in classes], kind


_READ_LABEL: dict[str, Callable[[str], object]] = {
    "int": int,
    "float": float,
    "bool": {"True": True, "False": False}.__getitem__,
}


def typed_labels(names: list, kind: object) -> list:
    """The class names a file keeps, as the label values given to fit (``kind``:
    ``"int"``, ``"float"`` or ``"bool"``; strings when None)."""
    if kind is None:
        return list(names)
    if not isinstance(kind, str) or kind not in _READ_LABEL:
        raise NBSVMError(f"bad label_type_ {kind!r}; known: {', '.join(_READ_LABEL)}")
    try:
        values = [_READ_LABEL[kind](name) for name in names]
    except (KeyError, ValueError, TypeError):
        raise NBSVMError(f"classes_ {names[:5]} are not {kind} labels") from None
    if any(label_type(v) != kind for v in values):
        raise NBSVMError(f"{kind} class labels must be finite")
    return values


def label_values(values: Iterable[Any]) -> list:
    """A model's labels as its file's ``label_values`` keep them (parallel to the class
    names): each label's plain value (bool, int, float), None where it is kept by its
    name (a string, or a value of another type)."""
    return [plain_label(v) for v in values]


def read_label_values(values: object, n: int) -> list:
    """A file's ``label_values`` checked: ``n`` entries, each None or a bool, int or
    finite float as JSON gives it (nothing else can come back as a label)."""
    if not isinstance(values, list) or len(values) != n:
        raise NBSVMError(f"label_values must be a list of one value per class ({n})")
    for v in values:
        if v is not None and (type(v) not in LABEL_TYPES.values() or label_type(v) is None):
            raise NBSVMError(f"bad label value {v!r}: a bool, an integer, a finite float or null")
    return values


def _typed_classes(state: dict) -> list:
    """The saved class names as the label values given to fit (``label_type_``:
    ``"int"``, ``"float"`` or ``"bool"``; strings when absent)."""
    return typed_labels(state["classes_"], state.get("label_type_"))


def _check_state(obj: OnlineLearner, state: dict, arrays: dict, prefix: str = "") -> None:
    """Check a loaded learner's JSON state and arrays before they are set on ``obj``.

    A fresh learner with the same parameters is given the loaded ``classes_`` and
    ``n_features_in_`` and runs its own ``_init_state``: every array the fresh one has must
    be loaded with its dtype and shape (lazily sized ones, allocated empty, may also have
    the length of the weight vector ``v_``), no other array may be present, floats must be
    finite. The kernels index these arrays by feature and class without bounds checks.
    """
    cls = type(obj)
    _check_entries(cls, state, prefix)
    classes = _checked_classes(obj, state)
    t = state.get("t_", 0)
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise NBSVMError(f"bad t_ {t!r}")
    n_features = state.get("n_features_in_")
    if n_features is None:  # never trained: no learned arrays
        if arrays:
            raise NBSVMError(f"arrays {sorted(arrays)} in a learner that was never trained")
        return
    if (
        isinstance(n_features, bool)
        or not isinstance(n_features, int)
        or not 0 <= n_features <= MAX_FEATURES
        or classes is None
    ):
        raise NBSVMError(f"bad n_features_in_ {n_features!r} (or no classes_)")
    if "columns_" in arrays:  # each weight's feature index (nbsvm learn keeps the used ones)
        _check_columns(arrays["columns_"], n_features, prefix)
        arrays = {k: v for k, v in arrays.items() if k != "columns_"}
    fresh = cls(**obj.get_params())
    fresh.classes_ = classes
    fresh.n_features_in_ = n_features
    fresh._init_state(n_features, fresh.n_outputs_)
    expected = fresh.state_arrays()
    for name, a in arrays.items():
        if not name.endswith("_") or name.startswith("_") or hasattr(cls, name):
            raise NBSVMError(f"unexpected array {prefix}{name!r}")
        if _not_finite(a):
            raise NBSVMError(f"non-finite values in {prefix}{name}")
    sub = _check_estimators(obj, fresh, state, arrays, n_features)
    _check_shapes(fresh, expected, arrays, sub, prefix, n_features, len(classes))
    missing = sorted(set(expected) - set(arrays))
    if missing:
        raise NBSVMError(f"missing arrays {[prefix + m for m in missing]}")


def _check_columns(columns: np.ndarray, n_features: int, prefix: str) -> None:
    """``columns_``: one int64 feature index per weight column, increasing (prediction
    finds a feature's column among them by binary search)."""
    if not (
        columns.dtype == np.int64
        and columns.shape == (n_features,)
        and (not columns.size or (columns[0] >= 0 and bool(np.all(columns[1:] > columns[:-1]))))
    ):
        raise NBSVMError(
            f"array {prefix}columns_ must be {n_features} increasing int64 feature indices "
            f"(got {columns.dtype} {columns.shape})"
        )


def _check_entries(cls: type[OnlineLearner], state: dict, prefix: str) -> None:
    """Every entry of a learner's JSON state names a learned attribute (``name_``), not a
    property, a method or anything else of the class."""
    for k in state:
        if (
            not (isinstance(k, str) and k.endswith("_") and not k.startswith("_"))
            or isinstance(getattr(cls, k, None), (property, type(cls.load)))
            or callable(getattr(cls, k, None))
        ):
            raise NBSVMError(f"unexpected state entry {prefix}{k!r}")


def _checked_classes(obj: OnlineLearner, state: dict) -> list | None:
    """A learner's loaded ``classes_`` (typed, see :func:`_typed_classes`; None if there
    are none), checked: strings, sorted and distinct, as many as the learner's task has."""
    classes = state.get("classes_")
    if classes is not None:
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise NBSVMError("classes_ must be a list of strings")
        classes = _typed_classes(state)
        # a multi-label learner's names in class_order (numbers by value: 1, 2, 10), or by
        # text as files written before that order kept them
        orders = (sorted(set(classes)),) + (
            (class_order(classes),) if obj.task == "multilabel" else ()
        )
        if classes not in orders or len(set(classes)) != len(classes):
            raise NBSVMError("classes_ must be sorted and distinct")
        n = len(classes)
        if (
            (obj.task == "binary" and n != 2)
            or (obj.task == "multiclass" and n < 2)
            or (obj.task == "regression" and n != 0)
        ):
            raise NBSVMError(f"{n} classes for a {obj.task} learner")
    elif "label_type_" in state:
        raise NBSVMError("label_type_ without classes_")
    return classes


def _check_estimators(
    obj: OnlineLearner, fresh: OnlineLearner, state: dict, arrays: dict, n_features: int
) -> dict:
    """A OneVsRest learner's binary learners (one per class: their JSON state in
    ``estimator_state_``, their arrays prefixed ``est{k}_``), each checked by
    :func:`_check_state`; their arrays are returned (none for other learners)."""
    sub: dict = {}
    if hasattr(obj, "_make_binary"):  # OneVsRest: the binary learners' state
        per = state.get("estimator_state_")
        if (
            not isinstance(per, list)
            or len(per) != fresh.n_outputs_
            or not all(isinstance(d, dict) for d in per)
        ):
            raise NBSVMError("estimator_state_ must be one object per class")
        for k, scalars in enumerate(per):
            mine = {n[len(f"est{k}_") :]: a for n, a in arrays.items() if n.startswith(f"est{k}_")}
            sub.update({f"est{k}_{n}": a for n, a in mine.items()})
            if scalars.get("n_features_in_") != n_features or scalars.get("classes_") != ["0", "1"]:
                raise NBSVMError(f"estimator {k} does not match the learner")
            _check_state(fresh._make_binary(), scalars, mine, prefix=f"est{k}_")  # type: ignore[attr-defined]  # OneVsRest's, checked by hasattr above
    return sub


def _check_shapes(
    fresh: OnlineLearner,
    expected: dict,
    arrays: dict,
    sub: dict,
    prefix: str,
    n_features: int,
    n_classes: int,
) -> None:
    """Every loaded array but the binary learners' (``sub``) is one the ``fresh`` learner
    has (``expected``), with its dtype and shape (lazily sized ones, allocated empty, may
    also have the length of the weight vector ``v_``)."""
    for name, a in arrays.items():
        if name in sub:
            continue
        want = expected.get(name)
        if want is None:
            raise NBSVMError(f"unexpected array {prefix}{name!r} for {type(fresh).__name__}")
        shapes = {want.shape}
        v = getattr(fresh, "v_", None)
        if want.size == 0 and v is not None:
            shapes.add(v.shape)  # sized when first needed (linear.py)
        if a.dtype != want.dtype or a.shape not in shapes:
            raise NBSVMError(
                f"array {prefix}{name} is {a.dtype} {a.shape}, expected "
                f"{want.dtype} {want.shape} for {n_features} features and "
                f"{n_classes} classes"
            )
