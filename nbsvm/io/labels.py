"""Multi-label targets: a document's label set written as one key (``"books,pos"``), and
which outputs (one per label) each key belongs to.

The feature cache stores one code per distinct label field as read; a multi-label model
has one output per label, and output ``k`` counts a document as positive when its key
holds label ``k`` (:func:`membership`). Keys are parsed wherever they are used, so a cache
written from ``"pos,books"`` and one from ``"books,pos"`` train the same model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from nbsvm.errors import NBSVMError

#: Separates the labels of a multi-label field (``a,b<TAB>text``).
SEPARATOR = ","

#: Why a single-label task's reader refuses a document of several labels.
SEVERAL_LABELS = "a multi-label document, for a multi-label task (nbsvm train --multilabel)"


def label_set(key: str | None) -> tuple[str, ...]:
    """The labels of a key: split on commas, stripped, unique, sorted; ``""`` is no label.

    >>> label_set(" pos, books,pos")
    ('books', 'pos')
    >>> label_set("")
    ()
    """
    if key is None:
        raise NBSVMError("document has no label field")
    return tuple(sorted({part.strip() for part in key.split(SEPARATOR)} - {""}))


def key_of(labels: str | Iterable[Any]) -> str:
    """The canonical key of a label set given as a key string or an iterable of labels.

    >>> key_of(["pos", "books"]), key_of("pos,books"), key_of(["pos", " books "])
    ('books,pos', 'books,pos', 'books,pos')
    """
    if isinstance(labels, str):
        return SEPARATOR.join(label_set(labels))
    try:
        # stripped as label_set strips a key's labels: ["a", " b"] is the key of "a, b"
        parts = [str(v.item() if isinstance(v, np.generic) else v).strip() for v in labels]
    except TypeError:
        raise NBSVMError(
            f"a multi-label target must be a list of labels or an 'a,b' string, got {labels!r}"
        ) from None
    bad = [p for p in parts if SEPARATOR in p]
    if bad:
        raise NBSVMError(f"labels of a multi-label target cannot contain {SEPARATOR!r}: {bad[0]!r}")
    return SEPARATOR.join(sorted(set(parts) - {""}))


def class_order(names: Iterable[str]) -> list[str]:
    """The distinct class names in a model's order: by value when every one is a number
    as Python writes one (``str(10)``, ``str(-0.5)``: labels given as numbers), as
    scikit-learn orders labels, so that ``classes_[1]`` and the score columns are the ones
    its metrics expect; else by text (``+1`` or ``01`` are names, not numbers).

    >>> class_order(["10", "2", "10"]), class_order(["b", "a"]), class_order(["+1", "-1"])
    (['2', '10'], ['a', 'b'], ['+1', '-1'])
    """
    distinct = sorted(set(names))
    values = [_number(name) for name in distinct]
    if distinct and None not in values and len(set(values)) == len(values):
        return [name for _, name in sorted(zip(values, distinct))]
    return distinct


def _number(name: str) -> float | None:
    """The value of a name that is a number exactly as ``str()`` writes an int or a finite
    float, else None."""
    try:
        if str(int(name)) == name:
            return int(name)
    except ValueError:
        pass
    try:
        value = float(name)
    except ValueError:
        return None
    return value if math.isfinite(value) and repr(value) == name else None


def classes_of(keys: Iterable[str]) -> list[str]:
    """Every label the keys hold, in :func:`class_order` (the model's ``classes_``: labels
    given as numbers by value, as MultiLabelBinarizer's columns, not ``1, 10, 2``).

    >>> classes_of(["1,10", "2", ""]), classes_of(["b,a"])
    (['1', '2', '10'], ['a', 'b'])
    """
    out: set[str] = set()
    for key in keys:
        out.update(label_set(key))
    return class_order(out)


def membership(classes: list[str], keys: list[str]) -> np.ndarray:
    """``M[k, c]``: whether key ``c`` holds label ``classes[k]``, shape
    ``(len(classes), len(keys))`` (bool)."""
    index = {c: k for k, c in enumerate(classes)}
    out = np.zeros((len(classes), len(keys)), dtype=bool)
    for c, key in enumerate(keys):
        for label in label_set(key):
            k = index.get(label)
            if k is not None:
                out[k, c] = True
    return out


def label_lists(classes: list[str], keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`membership` as CSR: key ``c``'s label indices are
    ``labels[ptr[c]:ptr[c + 1]]`` (the counting kernels' form)."""
    M = membership(classes, keys)
    ptr = np.zeros(len(keys) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(M.sum(axis=0))
    labels = np.concatenate(
        [np.flatnonzero(M[:, c]) for c in range(len(keys))] or [np.zeros(0, dtype=np.int64)]
    ).astype(np.int32)
    return ptr, labels


class KnownLabelSets(frozenset):
    """A multi-label model's labels, holding a field ``"a,b"`` when every label in it is
    one of them (how ``predict`` tells a leading label field from text), and the empty
    field: the empty label set, as ``eval`` reads ``<TAB>text``."""

    def __contains__(self, key) -> bool:
        if not isinstance(key, str):
            return False
        return all(frozenset.__contains__(self, v) for v in label_set(key))


def known_labels(classes: list[str], multilabel: bool) -> KnownLabelSets | list[str]:
    """What a leading label field of a line may hold: one of the classes, or for a
    multi-label model a set of them (``a,b``)."""
    return KnownLabelSets(classes) if multilabel else classes


def output_targets(
    codes: np.ndarray, positive: Sequence[int] | np.ndarray, k: int
) -> tuple[np.ndarray, int]:
    """Output ``k``'s view of the label codes: ``(codes, positive code)`` for the kernels,
    which read a document as +1 when its code equals the positive one.

    ``positive`` lists one class code per output (one-vs-rest, binary), or is a
    :func:`membership` matrix (multi-label: codes are label-set keys, recoded 1 / 0).
    """
    if isinstance(positive, np.ndarray) and positive.ndim == 2:
        return positive[k].astype(np.int32)[codes], 1
    return codes, int(positive[k])


def output_order(source: list, target: list, n_outputs: int) -> tuple[list[int], float]:
    """For each of ``target``'s outputs, the ``source`` output holding the same class, and
    the sign its scores take. A model saved when classes that are numbers ordered as text
    ('10' before '2') has them the other way round from the model continuing it: with two
    classes the one output scores ``classes_[1]`` against ``classes_[0]`` and changes sign;
    with more, outputs are permuted.

    >>> output_order(["10", "2"], ["2", "10"], 1), output_order(["a", "b", "c"], ["c", "a", "b"], 3)
    (([0], -1.0), ([2, 0, 1], 1.0))
    """
    if sorted(source) != sorted(target):
        raise NBSVMError(
            f"the saved model's classes ({', '.join(source)}) differ from the new "
            f"training's ({', '.join(target)}): train a new model"
        )
    if n_outputs == 1:
        return [0], 1.0 if source == target else -1.0
    return [source.index(c) for c in target], 1.0


def names_by_value(labels: Iterable, label_values: dict | None) -> list[str]:
    """Each label as a model names its class: a value equal to a class's typed value
    (``label_values``: name -> value, what ``fit`` was given) takes that class's name, so
    1.0 and True find the class of 1 (scoring floats against a model fitted on ints gave
    0.0); any other value its text.

    >>> names_by_value([1.0, True, 0, "x", 7], {"1": 1, "0": 0})
    ['1', '1', '0', 'x', '7']
    """
    by_value = {v: name for name, v in (label_values or {}).items() if _hashable(v)}
    return [
        y if isinstance(y, str) else by_value.get(y, str(y)) if _hashable(y) else str(y)
        for y in labels
    ]


def values_of_names(names: Iterable[str]) -> dict:
    """``{name: number}`` for the class names that are numbers as Python writes them
    (:func:`class_order`'s): the ``label_values`` of a model trained from files, which
    keep names only, so that 1.0 or True finds the class '1' as it finds a model's fitted
    on 1.

    A number two names write (``1`` and ``1.0``: two classes) names neither.

    >>> values_of_names(["0", "1", "+1", "x", "2.5", "01"])
    {'0': 0, '1': 1, '2.5': 2.5}
    >>> values_of_names(["1", "1.0", "2"])
    {'2': 2}
    """
    from collections import Counter

    values = {name: _number(name) for name in names}
    numbers = Counter(v for v in values.values() if v is not None)
    return {
        name: value for name, value in values.items() if value is not None and numbers[value] == 1
    }


def keys_by_value(targets: Iterable, label_values: dict | None) -> list[str]:
    """Each multi-label target (a list of labels, or an ``'a,b'`` key) as its key, each
    label named as :func:`names_by_value` names it: ``[1.0, 2.0]`` finds the classes of a
    model fitted on ``[1, 2]``.

    >>> keys_by_value([[2.0, 1], "b,a", []], {"1": 1, "2": 2})
    ['1,2', 'a,b', '']
    """
    return [
        key_of(t) if isinstance(t, str) else key_of(names_by_value(_members(t), label_values))
        for t in targets
    ]


def _members(target: Any) -> list:
    try:
        return list(target)
    except TypeError:
        raise NBSVMError(
            f"a multi-label target must be a list of labels or an 'a,b' string, got {target!r}"
        ) from None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
