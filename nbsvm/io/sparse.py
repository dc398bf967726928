"""Readers for sparse-feature formats: svmlight/libsvm, Blitzer ``processed_acl``, and
``label name:value ...`` lines with string feature names (MIRA's format).

Each reader is a generator over a path (plain or ``.gz``; ``"-"`` is standard input) or an
open file and yields :class:`SparseRow` records one line at a time. Malformed lines raise
:class:`~nbsvm.errors.NBSVMError` naming the file and line. Lines are read as in
:func:`nbsvm.io.readers.iter_lines` (a lone ``\\r`` ends a line here, as ``\\n`` does):
invalid UTF-8 (in labels or feature names) is replaced and counted in a
:class:`~nbsvm.io.readers.ReadStats` (``stats``) or, with ``strict``, refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import DECOMPRESS, ReadStats, iter_lines
from nbsvm.io.document import plain_number

if TYPE_CHECKING:
    import os

    from nbsvm.io.document import PathOrFile

SPARSE_FORMATS = ("svmlight", "blitzer", "named")
#: The largest 0-based feature index (indices are returned as int64).
MAX_INDEX = np.iinfo(np.int64).max


class SparseRow(NamedTuple):
    """One example: its labels (several for multi-label, none if unlabeled), feature keys
    (int64 column indices for svmlight, strings otherwise), float64 values, and origin."""

    labels: tuple
    keys: object
    values: np.ndarray
    source: str
    line: int


def _lines(
    path_or_file,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
    comments: bool = True,
) -> Iterator[tuple[str, str, int]]:
    """(text without comment and line end, source name, 1-based line), blank lines skipped.
    ``comments``: svmlight's ``#`` to the line end; else (named features) a line is a
    comment only when it is ``#`` then white space or nothing, or a rule of ``#``, ``-``
    and ``=`` (``#fun:1`` or a label ``#general`` is data: the rest of such a line was
    dropped without a word)."""
    for raw, name, lineno in iter_lines(
        path_or_file, strict, stats, lone_cr="newline", encoding=encoding
    ):
        if comments:
            text = raw.split("#", 1)[0].strip()
            if text and raw[:1] in (" ", "\t"):  # (an empty first field: read_svmlight)
                text = " " + text
        else:
            text = raw.strip()
            if _comment_line(text):
                text = ""  # ('# features follow', '#-----')
        if text:
            yield text, name, lineno


def _comment_line(text: str) -> bool:
    """A named-feature line that is a comment: ``#`` alone or before white space, or a
    rule of ``#``, ``-`` and ``=`` (stripped ``text``)."""
    return text.startswith("#") and (len(text) == 1 or text[1].isspace() or not text.strip("#-="))


#: The largest feature value read: squared (a row's norm, PA's and MIRA's steps) it stays
#: finite. Beyond, PA and MIRA learned nothing and SGD saved infinite scores, without a word.
MAX_VALUE = 1e150


def _value(text: str, name: str, lineno: int, token: str) -> float:
    try:
        if not plain_number(text):
            raise ValueError(text)
        v = float(text)
    except ValueError:
        raise NBSVMError(f"bad feature value in {token!r}", path=name, line=lineno) from None
    if not np.isfinite(v):
        raise NBSVMError(f"feature value is not finite in {token!r}", path=name, line=lineno)
    if abs(v) > MAX_VALUE:
        raise NBSVMError(
            f"feature value too large in {token!r}: at most {MAX_VALUE:g} in absolute value "
            "(a row's squared norm overflows beyond; scale the features down)",
            path=name,
            line=lineno,
        )
    return v


def _take_labels(tokens: list, name: str, lineno: int, multi: bool) -> tuple:
    """Pop the leading label field (comma-separated labels when ``multi``). A Vowpal
    Wabbit line without one (``|f 3:1``) is refused: its marker was a class '|f'."""
    if tokens and tokens[0].startswith("|"):
        raise NBSVMError(
            f"no label: a Vowpal Wabbit line without one ({tokens[0]!r} first); training "
            "and eval need a label on every line (predict reads a file whose first line "
            "has none as unlabeled)",
            path=name,
            line=lineno,
        )
    first = tokens.pop(0)
    if ":" in first:
        raise NBSVMError(f"expected a label first, found feature {first!r}", path=name, line=lineno)
    labels = tuple(label for label in first.split(",") if label) if multi else (first,)
    if not labels:
        raise NBSVMError("empty label", path=name, line=lineno)
    return labels


def _check_namespace(token: str, seen: int, name: str, lineno: int) -> None:
    """A Vowpal Wabbit namespace marker is skipped, not kept: a second one (its index 1
    would add to the first one's) or a weight (``|a:100``, ignored) is refused."""
    if ":" in token or seen > 1:
        raise NBSVMError(
            f"Vowpal Wabbit namespaces are not kept ({token!r}): one '|name' marker per line, "
            "without a weight (features of two namespaces would share their indices)",
            path=name,
            line=lineno,
        )


def empty_label_set(text: str) -> bool:
    """Whether a line of :func:`_lines` starts with a blank, then a feature: svmlight's
    empty label set as scikit-learn writes it (`` 3:1``), or an unlabeled line indented.

    >>> empty_label_set(" 3:1 4:1"), empty_label_set("1 3:1"), empty_label_set(" 1 3:1")
    (True, False, False)
    """
    return text[0] == " " and ":" in text.split(None, 1)[0]


def detect_index_base(path: PathOrFile, labeled: bool = True) -> int:
    """0 if any svmlight feature index is 0, else 1 (one streaming pass over the file;
    ``labeled``: each line's first token is its label)."""
    for text, name, lineno in _lines(path):
        tokens = text.split()
        for token in tokens[0 if empty_label_set(text) or not labeled else 1 :]:
            key = token.partition(":")[0]
            if key == "0":
                return 0
    return 1


#: A label that is a number written in digits (named and Blitzer files: their labels are
#: words, and 'Nan', 'inf' or 'Infinity' are names there).
NUMERAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def label_number(label: str, words: bool = False) -> float | None:
    """The number a label is (NaN included), or None; ``words``: the format's labels are
    words (named, Blitzer), a number only where written in digits (:data:`NUMERAL`).

    >>> label_number("+1"), label_number("inf", words=True), label_number("pos")
    (1.0, None, None)
    """
    if words and not NUMERAL.fullmatch(label):
        return None
    try:
        return float(label)
    except ValueError:
        return None


def _check_spelling(
    label: str, spellings: dict, name: str, lineno: int, words: bool = False
) -> None:
    """Refuse a label that is a number seen before under another spelling (``+1`` and
    ``1``, ``1`` and ``1.0``): labels are kept as written, so it would be a class of its own
    (a multi-class learner trained '+1' and '1' apart without a word); and NaN, which
    became a class named 'nan'. ``words``: the format's labels are words (named, Blitzer):
    only a label written in digits is a number."""
    value = label_number(label, words)
    if value is None:
        return
    if value != value:  # NaN: a class named 'nan' (the Python API and regression refuse it)
        raise NBSVMError(
            f"label {label!r} is not a number (NaN): a row's label is its class; "
            "give each row a class",
            path=name,
            line=lineno,
        )
    first = spellings.setdefault(value, (label, name, lineno))
    if first[0] != label:
        seen = f"first seen at {first[1]}:{first[2]}" if first[2] else "a class of the model"
        raise NBSVMError(
            f"label {label!r} is the number {first[0]!r} ({seen}) written another way: it "
            "would be a class of its own; write it the same way everywhere",
            path=name,
            line=lineno,
        )


def _index_pairs(tokens: list, index_base: int, name: str, lineno: int) -> tuple[list, list]:
    """The 0-based indices and values of an svmlight line's ``index:value`` tokens (``qid``
    and one Vowpal Wabbit namespace marker skipped)."""
    keys, values = [], []
    namespaces = 0
    for token in tokens:
        if token.startswith("|"):
            namespaces += 1
            _check_namespace(token, namespaces, name, lineno)
            continue
        key, sep, val = token.partition(":")
        if not sep:
            raise NBSVMError(
                f"expected index:value, found {token!r} (svmlight rows: 'label "
                "index:value ...'; text documents go to a model of nbsvm train)",
                path=name,
                line=lineno,
            )
        if key == "qid":
            continue
        try:
            if not plain_number(key):
                raise ValueError(key)
            index = int(key)
        except ValueError:
            raise NBSVMError(
                f"feature index is not an integer in {token!r}", path=name, line=lineno
            ) from None
        if index < index_base:
            raise NBSVMError(
                f"feature index {index} below the {index_base}-based minimum",
                path=name,
                line=lineno,
            )
        if index - index_base > MAX_INDEX:
            raise NBSVMError(
                f"feature index too large in {token[:40]!r} (at most {MAX_INDEX + index_base})",
                path=name,
                line=lineno,
            )
        keys.append(index - index_base)
        values.append(_value(val, name, lineno, token))
    return keys, values


def read_svmlight(
    path_or_file: PathOrFile,
    index_base: int | str = "auto",
    labeled: bool = True,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
    spellings: dict | None = None,
    targets: bool = False,
) -> Iterator[SparseRow]:
    """Read svmlight/libsvm lines ``label[,label...] [qid:n] index:value ...``.

    ``spellings``: each number label's first spelling, shared by the files of one
    training set (``+1`` in one, ``1`` in another: refused); None: this file's own table.
    ``targets``: the labels are regression targets, where ``1`` and ``1.0`` are one value.

    Labels are kept as strings (``1,3,7`` is a multi-label example); ``qid`` is ignored, as
    are Vowpal Wabbit namespace markers (``|f``) so that VW files in svmlight layout read
    too. Indices are returned 0-based: ``index_base`` is 0, 1 or ``"auto"`` (0 if any index
    is 0; a file object is taken as 1-based unless told).

    Examples
    --------
    >>> import io
    >>> row = next(read_svmlight(io.StringIO("1,3 qid:7 1:0.5 4:2\\n"), index_base=1))
    >>> row.labels, row.keys.tolist(), row.values.tolist()
    (('1', '3'), [0, 3], [0.5, 2.0])
    """
    if index_base == "auto":
        index_base = (
            1
            if hasattr(path_or_file, "read") or path_or_file == "-"
            else detect_index_base(path_or_file, labeled)
        )
    if index_base not in (0, 1):
        raise NBSVMError(f"index_base must be 0, 1 or 'auto', got {index_base!r}")
    if spellings is None:
        spellings = {}  # a number's first label: '+1' beside '1' is refused
    for text, name, lineno in _lines(path_or_file, strict, stats, encoding):
        tokens = text.split()
        if labeled and empty_label_set(text):
            labels: tuple = ()  # ' 3:1': the empty label set (scikit-learn writes it so)
        else:
            labels = _take_labels(tokens, name, lineno, multi=True) if labeled else ()
        for label in labels if not targets else ():
            _check_spelling(label, spellings, name, lineno)
        keys, values = _index_pairs(tokens, index_base, name, lineno)
        yield SparseRow(
            labels,
            np.asarray(keys, dtype=np.int64),
            np.asarray(values, dtype=np.float64),
            name,
            lineno,
        )


def _named_pairs(tokens, name, lineno):
    keys, values = [], []
    for token in tokens:
        key, sep, val = token.rpartition(":")  # names may contain ':'; split on the last
        if not sep or not key:
            raise NBSVMError(f"expected name:value, found {token!r}", path=name, line=lineno)
        keys.append(key)
        values.append(_value(val, name, lineno, token))
    return keys, np.asarray(values, dtype=np.float64)


def read_blitzer(
    path_or_file: PathOrFile,
    labeled: bool = True,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
    spellings: dict | None = None,
    targets: bool = False,
) -> Iterator[SparseRow]:
    """Read Blitzer et al.'s ``processed_acl`` lines: ``feature:count ... #label#:positive``.

    Feature names (unigrams, ``a_b`` bigrams) are split from their count on the last
    ``:``; the label is the value of the ``#label#`` pseudo-feature (optional when not
    ``labeled``: lines without it get no label; two on a line are refused).
    ``spellings``, ``targets``: as :func:`read_svmlight`'s (``+1`` beside ``1`` refused).

    Examples
    --------
    >>> import io
    >>> row = next(read_blitzer(io.StringIO("great:2 a_b:1 #label#:positive\\n")))
    >>> row.labels, row.keys, row.values.tolist()
    (('positive',), ['great', 'a_b'], [2.0, 1.0])
    """
    spellings = {} if spellings is None else spellings
    for line, name, lineno in iter_lines(
        path_or_file, strict, stats, lone_cr="newline", encoding=encoding
    ):
        tokens = line.split()
        if not tokens:
            continue
        label = None
        features = []
        for token in tokens:
            if not token.startswith("#label#:"):
                features.append(token)
            elif label is not None:  # (the last one silently won)
                raise NBSVMError(
                    f"two labels on the line ('#label#:{label}', {token!r}): one a line",
                    path=name,
                    line=lineno,
                )
            else:
                label = token[len("#label#:") :]
        if not label and labeled:
            raise NBSVMError("no '#label#:<label>' on the line", path=name, line=lineno)
        if label and not targets:
            _check_spelling(label, spellings, name, lineno, words=True)
        keys, values = _named_pairs(features, name, lineno)
        yield SparseRow((label,) if label else (), keys, values, name, lineno)


def read_named(
    path_or_file: PathOrFile,
    labeled: bool = True,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
    spellings: dict | None = None,
    targets: bool = False,
    label_sets: bool = False,
) -> Iterator[SparseRow]:
    """Read ``label name:value name:value ...`` lines (MIRA's format; names are strings;
    ``spellings`` and ``targets`` as :func:`read_svmlight`'s). A label is a name, commas
    and all, unless ``label_sets`` (a multi-label task): then ``a,b`` is the set {a, b}.

    Examples
    --------
    >>> import io
    >>> row = next(read_named(io.StringIO("sports goal:1 team:0.5\\n")))
    >>> row.labels, row.keys
    (('sports',), ['goal', 'team'])
    """
    spellings = {} if spellings is None else spellings
    for text, name, lineno in _lines(path_or_file, strict, stats, encoding, comments=False):
        tokens = text.split()
        labels = _take_labels(tokens, name, lineno, multi=label_sets) if labeled else ()
        for label in labels if not targets else ():
            _check_spelling(label, spellings, name, lineno, words=True)
        keys, values = _named_pairs(tokens, name, lineno)
        yield SparseRow(labels, keys, values, name, lineno)


def detect_sparse_format(path: str | os.PathLike[str]) -> str:
    """``blitzer`` for ``*.review`` (compressed too: ``.gz``, ``.bz2``, ``.xz``), else
    ``svmlight`` (``.svm``, ``.libsvm``, ``.dat``...).

    >>> detect_sparse_format("books.review.bz2"), detect_sparse_format("a.svm.xz")
    ('blitzer', 'svmlight')
    """
    name = str(path).lower()
    for suffix in DECOMPRESS:
        name = name.removesuffix(suffix)
    return "blitzer" if name.endswith(".review") else "svmlight"
