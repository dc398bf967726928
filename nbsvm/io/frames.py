"""Texts and labels from what Python users hand an estimator: lists, numpy arrays, pandas
Series, one-column 2-D arrays, or a DataFrame with named columns."""

from __future__ import annotations

import numbers
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import valid_unicode
from nbsvm.io.document import MAX_WEIGHT, WEIGHTS_ARE, number_key
from nbsvm.io.formats import COLUMN_SEPARATOR


def _text_columns(X, text_col, label_col) -> list:
    """``text_col`` as a list, where no column read (text or label) is one the DataFrame
    ``X`` names twice and no text column is given twice: ``X[name]`` is then a DataFrame,
    whose rows read as its column names (two 'documents' called 'text'), as the CSV
    reader refuses such a header."""
    cols = [text_col] if isinstance(text_col, str) else list(text_col)
    if len(set(cols)) != len(cols):
        raise NBSVMError(f"text_col names each column once; got {cols}")
    counts = X.columns.value_counts()
    twice = [c for c in [*cols, label_col] if c is not None and counts.get(c, 0) > 1]
    if twice:
        raise NBSVMError(
            f"the DataFrame has {len(X.columns)} columns, {twice[0]!r} among them "
            f"{int(counts[twice[0]])} times: name each column once"
        )
    return cols


def texts_and_labels(
    X: Any,
    y: Any,
    text_col: str | Sequence[str],
    label_col: str | None,
    multilabel: bool = False,
    columns: Sequence | None = None,
) -> tuple[list[str], Any]:
    """(texts, labels) from sequences, arrays, Series or a DataFrame with named columns.

    ``y`` may be a sequence of labels or, with a DataFrame ``X``, a column name; without
    ``multilabel``, one label each (:func:`one_label_each`: a column y is read as 1-D);
    with it, label lists, or an indicator matrix whose columns are ``columns``
    (:func:`indicator_sets`)."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):  # a pandas DataFrame
        if isinstance(y, str):
            label_col, y = y, None
        cols = _text_columns(X, text_col, label_col if y is None else None)
        if y is None and label_col is not None:
            if label_col not in X.columns:
                raise NBSVMError(
                    f"no label column {label_col!r} in the DataFrame; it has "
                    f"{list(X.columns)} (pass y, or label_col=...)"
                )
            y = X[label_col]
        if len(cols) > 1:
            # several text columns (a title and a body): joined as the readers join them
            missing = [c for c in cols if c not in X.columns]
            if missing:
                raise NBSVMError(
                    f"no text column(s) {missing} in the DataFrame; it has "
                    f"{list(X.columns)} (pass text_col=...)"
                )
            X = X[cols]
            _refuse_missing_cells(X)  # pandas 2's astype(str) wrote them as the word 'nan'
            X = X.astype(str).agg(COLUMN_SEPARATOR.join, axis=1)
        elif cols[0] in X.columns:
            X = X[cols[0]]
        elif X.shape[1] == 1:
            X = X.iloc[:, 0]
        else:
            raise NBSVMError(
                f"no text column {text_col!r} in the DataFrame; it has "
                f"{list(X.columns)} (pass text_col=...)"
            )
    elif isinstance(X, str):
        raise NBSVMError("X must be a sequence of texts, not a single string")
    elif isinstance(y, str):  # a label column's name: it was read as a label per character
        raise NBSVMError(
            f"y={y!r} names a column only when X is a DataFrame; give a label per text"
        )
    else:
        shape = getattr(X, "shape", None)
        if shape is not None and len(shape) == 2:
            if shape[1] != 1:
                raise NBSVMError(f"X must hold one text per row; got shape {shape}")
            X = np.asarray(X)[:, 0]
    texts = X.tolist() if hasattr(X, "tolist") else list(X)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise NBSVMError(f"X[{i}] is {type(t).__name__}, not a text")
    texts = [valid_unicode(t) for t in texts]  # lone surrogates: U+FFFD, as the server
    if y is None:
        return texts, None
    if multilabel:
        y = indicator_sets(y, columns) or y
    labels = y.tolist() if hasattr(y, "tolist") else list(y)
    if len(labels) != len(texts):
        raise NBSVMError(f"X has {len(texts)} documents but y has {len(labels)} labels")
    if not multilabel:
        labels = one_label_each(labels)
    labels = [valid_unicode(v) if isinstance(v, str) else v for v in labels]
    check_labels(labels)
    return texts, labels


def _refuse_missing_cells(frame: Any) -> None:
    """A missing text cell (NaN, None) of several text columns, named by row and column."""
    missing = frame.isna()
    if missing.to_numpy().any():
        i, j = (int(v[0]) for v in np.nonzero(missing.to_numpy()))
        raise NBSVMError(
            f"X[{i}] has no text in column {frame.columns[j]!r} (a missing cell): fill it "
            "(with '' for none) or drop the row"
        )


def indicator_sets(y: Any, columns: Sequence | None = None) -> list[list] | None:
    """Label lists from an indicator matrix ``y`` (2-D, of 0 / 1: what
    MultiLabelBinarizer and a multi-label ``predict`` give): row ``i`` holds ``columns[k]``
    where ``y[i, k]`` is 1 (``columns``: a model's ``classes_``; None, for ``fit``:
    ``0 .. K-1``, each of which must label a document). None when ``y`` is not one (a list
    of label lists is read as one, as scikit-learn reads it, only as an array).

    >>> indicator_sets(np.array([[1, 0, 1], [0, 1, 0]]))
    [[0, 2], [1]]
    >>> indicator_sets(np.array([[1, 0], [0, 0]]), ["a", "b"]), indicator_sets([[1, 0]])
    ([['a'], []], None)
    """
    if hasattr(y, "toarray"):  # a scipy sparse matrix
        y = y.toarray()
    if len(getattr(y, "shape", ())) != 2:
        return None
    a = np.asarray(y)
    if a.dtype.kind not in "biuf":
        return None  # an array of label lists of one length
    if not np.isin(a, (0, 1)).all():  # 2*Y-1 trained classes -1 and 1 for every document
        other = a[~np.isin(a, (0, 1))].flat[0].item()
        raise NBSVMError(
            f"a 2-D y of numbers is read as an indicator matrix of 0 and 1 (scikit-learn's "
            f"multi-label form), and this one holds {other!r}: give 0/1 columns, or a label "
            "list per document"
        )
    if columns is None:
        empty = np.flatnonzero(a.sum(axis=0) == 0)
        if empty.size:
            raise NBSVMError(
                f"column {int(empty[0])} of the indicator matrix y labels no document: "
                "every label needs one (drop the column, or give label lists)"
            )
        columns = range(a.shape[1])
    if a.shape[1] != len(columns):
        raise NBSVMError(
            f"y is an indicator matrix of {a.shape[1]} columns; the model has "
            f"{len(columns)} classes"
        )
    names = list(columns)
    return [[names[k] for k in np.flatnonzero(row)] for row in a]


def _missing(value: Any) -> bool:
    """None, NaN, or pandas' NA / NaT: no label (a DataFrame's empty cell)."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, (float, np.floating)) and bool(np.isnan(value))


def check_labels(labels: list, name: str = "y") -> None:
    """Refuse a missing label (it would become a class named 'nan' or 'None', as the command
    line refuses an empty one) and two labels that are one class once written as text, as
    models keep them (``1`` and ``'1'``: one class, predicted as either). ``name``: what
    the messages call the labels (``partial_fit``'s ``classes``)."""
    seen: dict[str, Any] = {}
    # equal numbers written apart: 1, 1.0 and True (keyed by the exact value: Python
    # compares ints and floats exactly, where float() made 2**53 + 1 equal to 2**53)
    numbers: dict[int | float, Any] = {}
    shapes: dict[str, str] = {}  # 'ö' as one code point or as 'o' and a combining mark
    kinds: dict[bool, Any] = {}  # the first string label and the first other one
    spelled: dict[tuple, str] = {}  # a decimal number's first spelling among string labels
    for where, value in _each_label(labels):
        if _missing(value):
            raise NBSVMError(
                f"{name}{where} is {value!r}: every document needs a label (drop the document, or "
                "give it one)"
            )
        text = str(value)
        # a NumPy scalar is its Python value: np.str_('x') and 'x' (labels drawn with
        # rng.choice beside literals), np.int64(0) and 0 are one class each
        plain = value.item() if isinstance(value, np.generic) else value
        first = seen.setdefault(text, plain)
        if first is not plain and (type(first) is not type(plain) or first != plain):
            raise NBSVMError(
                f"{name} holds {first!r} and {value!r} ({name}{where}), one class once written as text: "
                "give the labels one type"
            )
        key = number_key(value) if isinstance(value, str) else None
        if key is not None:  # '1' and '1.0', '+1' and '1': refused as the CLI refuses them
            first = spelled.setdefault(key, value)
            if first != value:
                raise NBSVMError(
                    f"{name} holds {first!r} and {value!r} ({name}{where}), the same number "
                    "written two ways: labels are compared as written, so it would be a class "
                    "of its own: write it the same way everywhere"
                )
        if isinstance(value, str) and not value.isascii():  # the same text on screen
            first = shapes.setdefault(unicodedata.normalize("NFC", value), value)
            if first != value:
                raise NBSVMError(
                    f"{name} holds {first!r} and {value!r} ({name}{where}), the same text in another "
                    "Unicode normalization (NFC / NFD): write the labels the same way"
                )
        if isinstance(value, (int, float, np.number)):
            first = numbers.setdefault(
                value.item() if isinstance(value, np.generic) else value, value
            )
            if str(first) != text:
                raise NBSVMError(
                    f"{name} holds {first!r} and {value!r} ({name}{where}), equal values that are two "
                    "classes once written as text: give the labels one type"
                )
        _refuse_mixed_kinds(kinds, value, name + where)


def _refuse_mixed_kinds(kinds: dict[bool, Any], value: Any, where: str) -> None:
    """Strings beside numbers (``[1, 'neg']``): classes of two kinds, whose order and
    predictions scikit-learn refuses to mix (as the backend learners do). ``kinds``:
    the first label of each kind seen so far (is it a string?)."""
    first = kinds.setdefault(isinstance(value, str), value)
    if len(kinds) > 1:
        other = kinds[not isinstance(value, str)]
        odd = kinds[False]  # the label that is not a string
        what = "numbers" if isinstance(odd, (numbers.Real, np.number)) else type(odd).__name__
        raise NBSVMError(
            f"labels mix strings and {what} ({other!r} and {first!r}, {where}): give the "
            "labels one type"
        )


def _each_label(labels: list) -> Iterator[tuple[str, Any]]:
    """``(where, label)`` for every label, those in label sets (multi-label) one by one:
    ``[1]`` and ``[1.0]`` would be two classes as ``1`` and ``1.0`` are."""
    for i, value in enumerate(labels):
        if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
            yield from ((f"[{i}][{j}]", v) for j, v in enumerate(value))
        else:
            yield f"[{i}]", value


def one_label_each(labels: list, name: str = "y") -> list:
    """The labels of a task with one label per document: ``y`` of shape ``(n, 1)`` (or a
    list of one-label lists) is read as its column, as scikit-learn reads it, with a
    warning; a list of several labels per document is refused (multi-label needs
    ``multilabel=True``), where it became a class named ``"['a', 'b']"``."""
    import warnings

    lists = [isinstance(v, (list, tuple, set, frozenset, np.ndarray)) for v in labels]
    if not any(lists):
        return labels
    if all(lists) and all(len(v) == 1 for v in labels):
        warnings.warn(
            f"{name} holds one label per row in a column (shape (n, 1)): read as a 1-D {name}",
            stacklevel=3,
        )
        return [next(iter(v)) for v in labels]
    i = lists.index(True)
    raise NBSVMError(
        f"{name}[{i}] is a {type(labels[i]).__name__} of labels: several labels per document are "
        "a multi-label task (NBSVMClassifier(multilabel=True))"
    )


def first_bad_weight(weights: np.ndarray) -> int | None:
    """The index of the first weight outside 0..:data:`~nbsvm.io.document.MAX_WEIGHT`
    (NaN included), or None."""
    bad = np.flatnonzero(~((weights >= 0) & (weights <= MAX_WEIGHT)))  # NaN fails both
    return int(bad[0]) if bad.size else None


def sample_weights(sample_weight: Any, n: int) -> list[float]:
    """``sample_weight`` (None, a number or a sequence of ``n``) as ``n`` floats, each
    from 0 to :data:`~nbsvm.io.document.MAX_WEIGHT` (scikit-learn's ``sample_weight``; None: every document weighs 1)."""
    if sample_weight is None:
        return [1.0] * n
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise NBSVMError("sample_weight must hold numbers") from None
    if weights.ndim == 0:
        weights = np.full(n, float(weights))
    if weights.shape != (n,):
        raise NBSVMError(
            f"sample_weight has shape {weights.shape}: one weight per document, {n} in all"
        )
    i = first_bad_weight(weights)
    if i is not None:
        raise NBSVMError(f"sample_weight[{i}] is {float(weights[i])!r}: {WEIGHTS_ARE}")
    return weights.tolist()
