"""Readers for labeled text: aclImdb folders, ``label<TAB>text`` lines, CSV/TSV tables.

Every reader is a generator over a path (or an open file for line formats; ``"-"`` is
standard input) and yields :class:`Document` records one at a time, so memory does not
depend on the corpus size.

This module picks the reader of each input by its format (:func:`read_inputs`,
:data:`FORMATS`); the readers are :func:`~nbsvm.io.labeled_lines.read_lines`,
:func:`~nbsvm.io.folders.read_aclimdb` and :func:`~nbsvm.io.tables.read_table`, decoding
through :mod:`nbsvm.io.decoding`.

Text is UTF-8. Invalid bytes are replaced by U+FFFD (one per invalid sequence, as Python's
``errors="replace"``) and counted in a :class:`ReadStats`; with ``strict=True`` the first
one raises :class:`~nbsvm.errors.NBSVMError` naming the file, the line and the byte in the
line. Files are read as bytes and split on ``\n`` only: a line's ``\r\n`` or ``\n`` end is
removed, a UTF-8 BOM on the first line is dropped, and a lone ``\r`` inside a line is white
space in the text (a space), not a line end, so it never splits a document in two; but a
file whose lines all end with a lone ``\r`` (classic Mac OS: a CR and no LF in its first
megabyte) is split on it. A file with a UTF-16 or UTF-32 byte order mark is decoded as such
(CSV/TSV too); NUL-filled text without one (UTF-16 without its BOM) is refused, naming the
file (:func:`nbsvm.io.decoding.wide_encoding`).

Labels: surrounding white space is removed (``" pos "`` is ``pos``) and case is kept, but
:func:`read_inputs` refuses a label that differs only in case from one seen before
(``POS`` after ``pos`` would silently become a class of its own), naming the file, the
line and both spellings.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbsvm.errors import NBSVMError
from nbsvm.io.blitzer import has_reviews, read_review_inputs
from nbsvm.io.decoding import DECOMPRESS, ReadStats, check_encoding
from nbsvm.io.document import STDIN, Document, _name, missing_input, number_key
from nbsvm.io.fasttext import read_fasttext
from nbsvm.io.folders import read_aclimdb
from nbsvm.io.labeled_lines import (
    named_columns,
    read_lines,
    read_text_lines,
    refuse_named_columns,
)
from nbsvm.io.labels import SEPARATOR, label_set
from nbsvm.io.records import read_jsonl, read_parquet
from nbsvm.io.tables import read_table

if TYPE_CHECKING:
    import os

from nbsvm.io.formats import _LINE_FORMATS, FORMAT_ALIASES, FORMAT_HELP, FORMATS, check_columns


def normalize_format(fmt: str) -> str:
    """The format's current name (old names are aliases); unknown names are refused.

    >>> normalize_format("lines"), normalize_format("plain-lines")
    ('labeled-lines', 'plain-lines')
    """
    name = FORMAT_ALIASES.get(fmt, fmt)
    if name not in FORMATS:
        raise NBSVMError(f"unknown format {fmt!r}; allowed: {FORMAT_HELP}")
    return name


def detect_format(path: str | os.PathLike[str]) -> str:
    """``blitzer`` for ``.review`` files and folders holding them, ``folders`` for another
    folder, ``csv`` for ``.csv``, ``jsonl`` for ``.jsonl`` and
    ``.ndjson``, ``parquet`` for ``.parquet``, else ``labeled-lines``
    (label<TAB>text; also for ``"-"``, standard input); the suffix under a compression's
    (``.csv.gz`` is ``csv``)."""
    if isinstance(path, str) and path == STDIN:
        return "labeled-lines"
    p = Path(path)
    if p.is_dir():
        return "blitzer" if has_reviews(p) else "folders"
    suffix = p.suffix.lower()
    if suffix in DECOMPRESS:  # reviews.csv.gz: the format under the compression
        suffix = Path(p.stem).suffix.lower()
    if suffix == ".review":
        return "blitzer"
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".parquet":
        return "parquet"
    return "labeled-lines"


def read_inputs(
    inputs: Iterable,
    fmt: str = "auto",
    labeled: bool = True,
    text_col: str | Sequence[str] = "text",
    label_col: str | None = "label",
    strict: bool = False,
    stats: ReadStats | None = None,
    known_labels: Iterable[str] | None = None,
    encoding: str = "utf-8",
    empty_label: bool = False,
    label_sep: str = "\t",
    weight_col: str | None = None,
    several_labels: bool = True,
) -> Iterator[Document]:
    """Chain the documents of several inputs, choosing each reader by ``fmt`` (a name of
    :data:`FORMATS` or an old alias).

    With ``labeled=False`` labels are not required: ``auto`` line files keep a leading
    ``label<TAB>`` as the true label only when it is one of ``known_labels`` (a model's
    classes; without them, every line needs one), ``labeled-lines`` requires it, and
    ``plain-lines`` reads every line whole. ``"-"`` reads standard
    input. Invalid UTF-8 is replaced and counted in ``stats``, or refused with ``strict``.
    Labels are stripped of surrounding white space and kept in their case; with ``labeled``
    a label that differs only in case or Unicode normalization from one seen earlier is an
    error (it would be a class of its own), naming the file, the line and both spellings. ``label_sep``: what
    ends a line's label in line files (TAB; ``" "`` for ``label text`` lines). The
    settings are checked when it is called, before any input is opened: an unknown format
    or encoding, a label column that is also a text column (:func:`check_columns`).
    ``weight_col``: the column (field) of each document's weight in CSV/TSV, JSON lines
    and Parquet (:attr:`Document.weight`); other formats have no columns to name.
    ``several_labels=False`` (a single-label task): a labeled fastText line or record
    with several labels is malformed, as :meth:`NBSVMClassifier.fit` refuses label
    lists (else they are one label set, ``a,b``).

    Examples
    --------
    >>> import io
    >>> docs = read_inputs([io.StringIO("pos\\tgreat\\nneg\\tawful\\nPos\\tfine\\n")])
    >>> [d.label for d in docs]
    Traceback (most recent call last):
    ...
    nbsvm.errors.NBSVMError: <stream>:3: label 'Pos' differs only in case from 'pos' ...
    """
    fmt = normalize_format(fmt)
    encoding = check_encoding(encoding)
    check_columns(text_col, label_col, weight_col)
    if empty_label and SEPARATOR in label_sep:  # (empty_label: a multi-label task's reading)
        raise NBSVMError(
            f"--label-sep {label_sep!r} with --multilabel: {SEPARATOR!r} separates the labels "
            "of a set, so every line would keep its first label and read the others as text; "
            "separate the labels from the text with a TAB or a space"
        )
    if stats is None:
        stats = ReadStats()
    settings = _Settings(
        labeled,
        text_col,
        label_col,
        strict,
        stats,
        known_labels,
        encoding,
        empty_label,
        label_sep,
        weight_col,
        several_labels,
    )
    return _read_inputs(inputs, fmt, settings)


@dataclass(frozen=True)
class _Settings:
    """The arguments of :func:`read_inputs` that every input is read with, checked."""

    labeled: bool
    text_col: str | Sequence[str]
    label_col: str | None
    strict: bool
    stats: ReadStats
    known_labels: Iterable[str] | None
    encoding: str
    empty_label: bool
    label_sep: str
    weight_col: str | None = None
    several_labels: bool = True


def _read_inputs(inputs, fmt, s: _Settings) -> Iterator[Document]:
    """The documents of :func:`read_inputs`, its arguments checked."""
    spellings = LabelSpellings()
    for src in inputs:
        if (
            not hasattr(src, "read")
            and not (isinstance(src, str) and src == STDIN)
            and not Path(src).exists()
        ):
            raise missing_input(str(src))
        n = 0
        bad_before = s.stats.bad_lines
        for doc in _read_one(src, fmt, s):
            n += 1
            if s.labeled and doc.label not in spellings.known:
                spellings.add(doc)
                # (empty_label: a multi-label task; a lexicon's keys may be class names)
                if s.empty_label and doc.label and SEPARATOR in doc.label:
                    spellings.add_members(doc)
            yield doc
        if n == 0:
            skipped = s.stats.bad_lines - bad_before
            raise NBSVMError(
                "no documents found "
                + (f"(all {skipped} lines were malformed)" if skipped else "(empty input)"),
                path=_name(src),
            )


MODEL_CLASSES = "<the model's classes>"


class LabelSpellings:
    """The labels read so far, by how they read on screen (:func:`_shown`) and by the
    number they are: a new label that differs from one of them only in case, in its
    Unicode normalization ('ö' as one code point or as 'o' and a combining mark),
    in characters that do not show or in a number's spelling is refused, naming both.
    ``model``: a model's classes, which a test set's labels are checked against (else,
    'café' written decomposed was a label the model did not know, every document an
    error, printed as the model's own 'café')."""

    def __init__(self, model: Iterable[str] = ()) -> None:
        names = list(model)
        self.known: set = set(names)
        self.folded: dict = {}
        for name in names:  # not checked against each other: what the model is, it is
            self._remember(name, MODEL_CLASSES, 0)

    def add_members(self, doc: Document) -> None:
        """A new label set (``Food,sport``): each of its labels checked as a label of its
        own, so that ``Food`` beside ``food`` in another set, or ``1.0`` beside ``1``, is
        refused as it is for single labels (each became a class)."""
        for member in label_set(doc.label):
            if member not in self.known:
                self.add(doc._replace(label=member))

    def see(self, doc: Document) -> None:
        """``doc``'s label, checked (:meth:`add`) unless seen before."""
        if doc.label not in self.known:
            self.add(doc)

    def add(self, doc: Document) -> None:
        """A new label, refused when it is another's spelling."""
        self.known.add(doc.label)
        if doc.label is None:
            return
        number = number_key(doc.label)
        key = _shown(doc.label)
        first = self.folded.get(key)
        if first is None and number is not None:
            first = self.folded.get(number)
        if first is not None and first[0] != doc.label:
            self._refuse(doc, number, *first)
        self._remember(doc.label, doc.source, doc.line)

    def _remember(self, label: str, source: str, line: int) -> None:
        self.folded.setdefault(_shown(label), (label, source, line))
        number = number_key(label)
        if number is not None:
            self.folded.setdefault(number, (label, source, line))

    def _refuse(self, doc: Document, number, label: str, source: str, line: int) -> None:
        assert doc.label is not None
        nfc = unicodedata.normalize("NFC", doc.label)
        other = unicodedata.normalize("NFC", label)
        how = (
            "is the same text as {!r} in another Unicode normalization (NFC / NFD)"
            if other == nfc
            else "is the number of {!r}, written another way"
            if number is not None and number_key(label) == number
            else "differs only in case from {!r}"
            if other.casefold() == nfc.casefold()
            else "differs from {!r} only in characters that do not show (zero-width, "
            "control) or in their width (fullwidth letters)"
        )
        if source == MODEL_CLASSES:
            where = "a class of the model"
            outcome = "the model would not know it: each of its documents would be an error"
        else:
            where = f"first seen at {source}:{line}" if line else f"first seen in {source}"
            outcome = "it would be a class of its own"
        raise NBSVMError(
            f"label {doc.label!r} {how.format(label)} ({where}); labels are compared as "
            f"written, so {outcome}: write it the same way everywhere",
            path=doc.source,
            line=doc.line,
        )


def refuse_idle_label_sep(inputs: Iterable, fmt: str, label_sep: str) -> None:
    """Refuse a ``label_sep`` that no input would use: it ends the label of labeled-lines
    input only (``--label-sep ';'`` with a CSV did nothing, without a word). One such
    input among those of a command (its --test files included) takes it."""
    inputs = list(inputs)
    if label_sep == "\t" or not inputs:
        return
    fmt = normalize_format(fmt)
    kinds = sorted({_kind_of(src, fmt) for src in inputs})
    if "labeled-lines" not in kinds:
        raise NBSVMError(
            f"--label-sep ends the label of each line of labeled-lines input; "
            f"{', '.join(kinds)} input has none, so it would be ignored: leave it out"
        )


def _kind_of(src, fmt: str) -> str:
    """The format ``src`` is read in: ``fmt``, or for ``auto`` the one its path says."""
    kind = detect_format(src) if fmt == "auto" and not hasattr(src, "read") else fmt
    return "labeled-lines" if kind == "auto" else kind


#: characters that do not show and join or shape nothing: zero-width space, word joiner,
#: soft hyphen, BOM, the direction marks and embeddings (not the zero-width joiner, which
#: makes 🧑‍🌾 of 🧑🌾, nor the tag characters of flags)
_INVISIBLE = frozenset(
    "\u200b\u2060\u00ad\ufeff\u200e\u200f\u061c"
    + "".join(map(chr, range(0x202A, 0x202F)))
    + "".join(map(chr, range(0x2066, 0x206A)))
)


def _shown(label: str) -> str:
    """A label as it reads on screen: case folded, fullwidth and halfwidth forms as their
    plain letters ('ｐｏｓ' is 'pos'), without control characters and :data:`_INVISIBLE`
    ones ('\u200bneg' and 'pos\x00' each became a class beside 'neg' and 'pos', printed
    alike). Other compatibility forms stay apart ('m²' is not 'm2')."""
    out = []
    for c in unicodedata.normalize("NFC", label):
        if c in _INVISIBLE or unicodedata.category(c) == "Cc":
            continue
        if unicodedata.decomposition(c).startswith(("<wide>", "<narrow>")):
            c = unicodedata.normalize("NFKC", c)
        out.append(c)
    return "".join(out).casefold()


def _read_one(src, fmt, s: _Settings) -> Iterator[Document]:
    kind = _kind_of(src, fmt)
    if kind in _LINE_FORMATS:
        if s.weight_col is not None:
            raise NBSVMError(
                f"--weight-col names a column of CSV/TSV, JSON lines or Parquet input; "
                f"{kind} input has none (write the weights into a column of a table)",
                path=_name(src),
            )
        if kind != "labeled-lines":  # which checks them against its header
            refuse_named_columns(
                named_columns(s.label_col, s.text_col),
                f"{kind} input, which has no columns",
                _name(src),
            )
        yield from _line_reader(src, kind, fmt, s)
    else:
        yield from _column_reader(src, kind, s)


def _line_reader(src, kind, fmt, s: _Settings) -> Iterator[Document]:
    """The reader of a source in one of the :data:`_LINE_FORMATS` (``kind``; ``fmt`` is
    the format asked for)."""
    common: dict[str, Any] = {"strict": s.strict, "stats": s.stats, "encoding": s.encoding}
    if kind == "folders":
        return read_aclimdb(src, **common)
    if kind == "labeled-lines":
        # predict's auto format: a leading label only when it is one of the model's
        unlabeled = not s.labeled and fmt == "auto" and s.known_labels is not None
        return read_lines(
            src,
            labeled=not unlabeled,
            known_labels=s.known_labels if unlabeled else None,
            label_col=s.label_col,
            text_col=s.text_col,
            empty_label=s.empty_label,
            label_sep=s.label_sep,
            **common,
        )
    if kind == "blitzer":
        return read_review_inputs(src, labeled=s.labeled, **common)
    if kind == "plain-lines":
        return read_text_lines(src, **common)
    return read_fasttext(
        src,
        labeled=s.labeled,
        several_labels=s.several_labels,
        label_sets=s.empty_label,  # (a multi-label task's reading)
        **common,
    )


def _column_reader(src, kind, s: _Settings) -> Iterator[Document]:
    """The reader of a source of records or a table (jsonl, parquet, csv, tsv), whose
    ``--text-col`` and ``--label-col`` choose the fields."""
    fields: dict[str, Any] = {
        "text_col": s.text_col,
        "label_col": s.label_col,
        "label_optional": not s.labeled,
        "stats": s.stats,
        "empty_label": s.empty_label,
        "weight_col": s.weight_col,
    }
    if kind == "jsonl":
        fields["several_labels"] = s.several_labels
        return read_jsonl(src, labeled=s.labeled, strict=s.strict, encoding=s.encoding, **fields)
    if kind == "parquet":  # decoded by pyarrow: no strict, no encoding
        return read_parquet(src, labeled=s.labeled, several_labels=s.several_labels, **fields)
    # unlabeled: keep true labels when the column is there, for predict's output
    sep = "," if kind == "csv" else "\t"
    return read_table(src, sep=sep, strict=s.strict, encoding=s.encoding, **fields)
