"""``label<TAB>text`` lines (NBSVM-XL's format) and plain lines, one document per line.

:func:`read_lines` reads ``label<TAB>text`` lines, or with ``labeled=False`` whole lines as
unlabeled documents (:func:`read_text_lines`); a first line of column names such as
``label<TAB>text`` is recognized by :func:`header_columns` and skipped. Line ends, the BOM
and invalid bytes are handled as in :func:`nbsvm.io.decoding.iter_lines`.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import (
    READ_ERRORS,
    ReadStats,
    _byte_lines,
    _decode_invalid,
    _open_binary,
    check_encoding,
)
from nbsvm.io.document import Document

if TYPE_CHECKING:
    from nbsvm.io.document import PathOrFile

#: Names a first line is read as column names by (with the --label-col / --text-col ones):
#: ``label<TAB>text`` on line 1 of a labeled-lines file is a header, not a document.
LABEL_HEADERS = frozenset(
    {
        "label",
        "labels",
        "class",
        "category",
        "categories",
        "target",
        "y",
        "sentiment",
        "polarity",
        "tag",
        "tags",
        "topic",
        "intent",
    }
)
TEXT_HEADERS = frozenset(
    {
        "text",
        "texts",
        "document",
        "doc",
        "review",
        "sentence",
        "body",
        "content",
        "message",
        "comment",
        "tweet",
        "x",
    }
)


def header_columns(
    line: str, label_col: str | None = "label", text_col: str | Sequence[str] = ("text",)
) -> list[str] | None:
    """The column names if ``line`` (a first line) is a header row of TAB-separated names,
    one naming labels and one naming texts (:data:`LABEL_HEADERS`, :data:`TEXT_HEADERS`,
    ``label_col``, ``text_col``); else None.

    >>> header_columns("label\\ttext"), header_columns("pos\\tgreat text")
    (['label', 'text'], None)
    """
    fields = [f.strip() for f in line.split("\t")]
    if len(fields) < 2 or len(fields) > 64 or any(not f or len(f) > 64 for f in fields):
        return None
    names = {f.casefold() for f in fields}
    labels = LABEL_HEADERS | ({label_col.casefold()} if label_col else set())
    texts = TEXT_HEADERS | {c.casefold() for c in _columns(text_col)}
    return fields if names & labels and names & texts else None


def _columns(text_col) -> list[str]:
    """``--text-col`` as a list (one name or several)."""
    return [text_col] if isinstance(text_col, str) else list(text_col)


def named_columns(label_col: str | None, text_col: str | Sequence[str]) -> list[str]:
    """The column options given other values than their defaults (``--label-col label``,
    ``--text-col text``), as the user wrote them: ``["--text-col 3"]``."""
    named = [] if label_col in (None, "label") else [f"--label-col {label_col}"]
    texts = _columns(text_col)
    return named + ([] if texts == ["text"] else [f"--text-col {c}" for c in texts])


def refuse_named_columns(named: list[str], read_as: str, name: str, line: int = 0) -> None:
    """Column options on input that has no columns would be ignored, and the model trained
    on other text than the user asked for (``--text-col 3`` on ``label<TAB>id<TAB>text``
    lines: the id became a word): an error saying how to read the file as a table."""
    if named:
        raise NBSVMError(
            f"{' '.join(named)} {'chooses' if len(named) == 1 else 'choose'} columns of "
            f"CSV/TSV, JSON lines or Parquet input, but this file is read as {read_as}: "
            "the option would be ignored. Read the file as a table with --format tsv (or "
            "csv), or leave the option out",
            path=name,
            line=line or None,
        )


def _header_names_them(fields: list[str], label_col, text_col) -> bool:
    """Whether a skipped ``label<TAB>text`` header names the columns given by name."""
    label_ok = label_col in (None, "label") or fields[0].casefold() == label_col.casefold()
    texts = _columns(text_col)
    text_ok = texts == ["text"] or [c.casefold() for c in texts] == [fields[1].casefold()]
    return label_ok and text_ok


def _names_two_columns(line: str, label_sep: str, label_col, text_col) -> bool:
    """Whether ``line`` is exactly a label column's name and a text column's name split by
    ``label_sep`` (``label text`` with ``--label-sep ' '``): a header, not a document of
    class 'label'.

    >>> _names_two_columns("label text", " ", "label", "text")
    True
    >>> _names_two_columns("label great film", " ", "label", "text")
    False
    """
    fields = [f.strip() for f in line.split(label_sep)]
    if len(fields) != 2:
        return False
    labels = LABEL_HEADERS | ({label_col.casefold()} if label_col else set())
    texts = TEXT_HEADERS | {c.casefold() for c in _columns(text_col)}
    named = fields[0].casefold() in labels and fields[1].casefold() in texts
    # column options the header does not name are refused by the caller
    return named and _header_names_them(fields, label_col, text_col)


def _skip_header(
    line: str, name: str, label_col, text_col, stats: ReadStats, lineno: int = 1
) -> bool:
    """Whether the first line ``line`` is a header to skip; a header of other columns than
    ``label<TAB>text`` is an error saying how to read the file as a table."""
    fields = header_columns(line, label_col, text_col)
    if fields is None:
        return False
    labels = LABEL_HEADERS | ({label_col.casefold()} if label_col else set())
    if len(fields) == 2 and fields[0].casefold() in labels:
        if not _header_names_them(fields, label_col, text_col):
            refuse_named_columns(
                named_columns(label_col, text_col),
                f"labeled lines whose header names the columns {fields[0]!r} and {fields[1]!r}",
                name,
                lineno,
            )
        stats.note(
            f"{name}:{lineno}: skipped a header line ({' / '.join(fields)}: column names, not a document)"
        )
        return True
    raise NBSVMError(
        f"the first line looks like a header row (columns: {', '.join(fields)}); "
        "read the file as a table with --format tsv (--label-col and --text-col "
        "choose the columns)",
        path=name,
        line=lineno,
    )


def _first_line_is_header(
    line: str, lineno: int, name: str, columns: tuple, stats: ReadStats
) -> bool:
    """Whether the first non-blank line is a ``label<TAB>text`` header to skip.
    ``columns``: ``(label_col, text_col, label_sep)``, the separator None when the lines
    are not split into label and text. Column options that no header names are refused:
    they would be ignored."""
    label_col, text_col, label_sep = columns
    if (  # (after blank lines too: it was trained as a document of class 'label')
        label_sep == "\t"
        and "\t" in line
        and _skip_header(line, name, label_col, text_col, stats, lineno)
    ):
        return True
    if label_sep not in (None, "\t") and _names_two_columns(line, label_sep, label_col, text_col):
        stats.note(
            f"{name}:{lineno}: skipped a header line ({line.strip()!r}: column names, not a "
            "document)"
        )
        return True
    refuse_named_columns(
        named_columns(label_col, text_col),
        "labeled lines (label<TAB>text) with no header row naming its columns"
        if label_sep is not None
        else "plain lines (one document per line), which have no columns",
        name,
        lineno,
    )
    if "\t" not in line and _names_text_column(line):
        # a table piped in: its header, its quoted rows and label cells were documents
        stats.note(
            f"{name}:{lineno}: {line.strip()[:60]!r} looks like a table's header: these lines "
            "are read as documents (label<TAB>text); give --format csv (or tsv) for a table"
        )
    return False


def _names_text_column(line: str) -> bool:
    """Whether ``line`` is a comma- or semicolon-separated header naming a text column:
    names without spaces, one of them a text column's (``text,label``; not a document
    that starts ``text, and more``)."""
    for sep in (",", ";"):
        fields = [f.strip().strip('"') for f in line.split(sep)]
        if len(fields) > 1 and all(f and " " not in f and len(f) <= 40 for f in fields):
            if any(f.lower() in TEXT_HEADERS for f in fields):
                return True
    return False


def read_lines(
    path_or_file: PathOrFile,
    labeled: bool = True,
    strict: bool = False,
    stats: ReadStats | None = None,
    known_labels: Iterable[str] | None = None,
    label_col: str | None = "label",
    text_col: str | Sequence[str] = ("text",),
    encoding: str = "utf-8",
    empty_label: bool = False,
    label_sep: str = "\t",
) -> Iterator[Document]:
    """Read ``label<TAB>text`` lines (NBSVM-XL's format); blank lines are skipped.

    The label is stripped of surrounding white space; the text is kept as it is, but for
    a lone ``\\r`` in it, which becomes a space. Line ends, the BOM and invalid UTF-8
    (``strict``, ``stats``) as in :func:`iter_lines` (the same loop, inlined for speed).
    A first line of column names (``label<TAB>text``, see :func:`header_columns`) is
    skipped and noted in ``stats``; a ``label_col`` or ``text_col`` other than the default
    must be named by that header, else it is an error (:func:`refuse_named_columns`: the
    option would be ignored). A line without a TAB or with an empty label is
    malformed: an error naming file and line, or skipped and counted when
    ``stats.skip_bad``.

    ``labeled=False``: every line is one unlabeled document, unless ``known_labels`` (a
    model's classes) is given: then a line ``label<TAB>text`` whose label is one of them
    keeps it as its true label, and any other line, TABs and all, is one unlabeled document
    (how many had a TAB is noted in ``stats``). ``encoding``: an ASCII-compatible codec
    (:func:`check_encoding`; invalid bytes as for UTF-8). ``empty_label``: an empty label
    is a document's (an empty label set, ``--multilabel``), not a malformed line.
    ``label_sep``: what ends the label (``" "`` for ``label text`` lines, as SST's and
    TREC's); the text keeps later separators.

    Examples
    --------
    >>> import io
    >>> [d.label for d in read_lines(io.StringIO("pos\\tgreat\\n neg \\tawful\\n"))]
    ['pos', 'neg']
    """
    if stats is None:
        stats = ReadStats()
    encoding = check_encoding(encoding)
    sep_name = _separator_name(label_sep)
    split = labeled or known_labels is not None
    known = _frozen(known_labels)
    tab_unknown, first = 0, True
    vw_unsaid = label_sep != "\t"  # a TAB file never splits such a line
    cr_unsaid = split  # (unlabeled lines have no records to lose)
    fh, name, close = _open_binary(path_or_file)
    try:
        lines, encoding = _byte_lines(fh, name, encoding)
        for lineno, raw in enumerate(lines, 1):
            # a UTF-8 BOM, whatever --encoding says (latin-1: 'ï»¿pos'), on any line: the
            # files that `cat a.txt b.txt` joins bring theirs ('\ufeffpos' became a class)
            raw = raw.removeprefix(codecs.BOM_UTF8)
            try:
                line = raw.decode(encoding).rstrip("\r\n")
            except UnicodeDecodeError as e:
                line = _decode_invalid(raw, e, strict, stats, name, lineno, encoding).rstrip("\r\n")
            if "\r" in line:  # a lone CR is a space: it never splits a document
                cr_unsaid = cr_unsaid and _note_cr_record(stats, name, lineno, line, label_sep)
                line = line.replace("\r", " ")
            if lineno == 1:
                line = line.lstrip("\ufeff")
            if not line.strip():
                continue
            if first:
                first = False
                columns = (label_col, text_col, label_sep if split else None)
                if _first_line_is_header(line, lineno, name, columns, stats):
                    continue
            if not split:
                yield Document(None, line, name, lineno)
                continue
            label, sep, text = line.partition(label_sep)
            label = label.strip()
            if known is not None:
                if sep and label in known:
                    yield Document(label, text, name, lineno)
                else:
                    tab_unknown += bool(sep)
                    yield Document(None, line, name, lineno)
                continue
            if not sep:
                stats.bad(_no_separator(sep_name, line), name, lineno)
                continue
            if not label and not empty_label:
                stats.bad(f"empty label before the {sep_name}", name, lineno)
                continue
            if vw_unsaid and _VW_LINE.match(line):  # '1 |f text' read with --label-sep ' '
                vw_unsaid = _note_vw_line(stats, name, lineno)
            yield Document(label, text, name, lineno)
    except READ_ERRORS as e:  # e.g. a truncated or corrupt .gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None
    finally:
        if close:
            fh.close()
    if tab_unknown and known is not None:  # counted only against known classes
        _note_read_whole(stats, name, tab_unknown, known)


def _separator_name(label_sep: str) -> str:
    """How errors name ``label_sep`` (an empty one is refused)."""
    if not label_sep:
        raise NBSVMError("--label-sep must be at least one character")
    return {"\t": "TAB", " ": "space"}.get(label_sep, repr(label_sep))


def _note_cr_record(stats: ReadStats, name: str, lineno: int, line: str, sep: str) -> bool:
    """Say once that a lone CR inside a line is followed by what looks like a label and
    its separator (a file of CR line ends joined to one of LF ends: its records became
    the text of one document); True while not said."""
    found = re.search(r"\r([^\s\r]{1,40})" + re.escape(sep), line)
    if found is None:
        return True
    stats.note(
        f"{name}:{lineno}: a lone CR followed by {found.group(1)!r} and a "
        f"{'TAB' if sep == chr(9) else repr(sep)} inside a line: a lone CR is read as a space "
        "(only a file whose lines end so is split on them), so what follows it is this "
        "line's text; if those are records of their own (a file with CR line ends joined "
        "to one with LF ends), convert the CRs first: tr '\\r' '\\n'"
    )
    return False


def _note_vw_line(stats: ReadStats, name: str, lineno: int) -> bool:
    """Say once that VW lines are read as text; False (said)."""
    stats.note(
        f"{name}:{lineno}: a Vowpal Wabbit line: its namespace marks (|...) and importance "
        "weights are read as words of the text (docs/coming-from/vowpal-wabbit.md writes "
        "such files as label<TAB>text)"
    )
    return False


def _frozen(known_labels) -> frozenset | None:
    """``known_labels`` (a model's classes, or None) as a frozenset."""
    if isinstance(known_labels, frozenset) or known_labels is None:
        return known_labels
    return frozenset(known_labels)


#: ``label [importance] |namespace ...``: a Vowpal Wabbit example line
_VW_LINE = re.compile(r"^[^\s|]+(?: [^\s|]+)? *\|")


def _no_separator(sep_name: str, line: str = "") -> str:
    """The malformed-line message of a labeled line without the label separator (a
    fastText line, ``__label__pos text``, names the format that reads it)."""
    if line.startswith("__label__"):
        return (
            f"expected 'label<{sep_name}>text', found a fastText line (__label__...): read "
            "the file with --format fasttext"
        )
    if _VW_LINE.match(line):
        return (
            f"expected 'label<{sep_name}>text', found a Vowpal Wabbit line (label |namespace "
            "...): write it as label<TAB>text (`sed -E 's/^([^ |]+)[^|]*\\|[^ ]* /\\1\\t/'`, "
            "docs/coming-from/vowpal-wabbit.md), or read numeric features with nbsvm learn"
        )
    return (
        f"expected 'label<{sep_name}>text', found no {sep_name} (a file of "
        "unlabeled documents, one per line, is read with --format "
        "plain-lines)"
    )


def _note_read_whole(stats: ReadStats, name: str, tab_unknown: int, known: frozenset) -> None:
    """Note in ``stats`` the ``tab_unknown`` lines with a TAB whose first field is not one
    of the ``known`` classes, read whole as unlabeled documents."""
    shown = ", ".join(sorted(map(str, known))[:10])
    stats.note(
        f"{name}: {tab_unknown} line{'s' * (tab_unknown != 1)} with a TAB whose "
        f"first field is not one of the model's classes ({shown}) read whole, as "
        "unlabeled documents (--format labeled-lines reads every line as "
        "label<TAB>text)"
    )


def read_text_lines(
    path_or_file: PathOrFile,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
) -> Iterator[Document]:
    """Read one unlabeled document per line (for ``predict``)."""
    return read_lines(path_or_file, labeled=False, strict=strict, stats=stats, encoding=encoding)
