"""CSV/TSV tables with a header row, read through pandas in chunks.

:func:`read_table` picks the text column(s) (several joined with :data:`COLUMN_SEPARATOR`)
and the label column of each row; pandas' parser errors and skipped rows are turned into
:class:`~nbsvm.errors.NBSVMError` naming the file and line, or counted in
:class:`~nbsvm.io.decoding.ReadStats` with ``--skip-bad-lines``.
"""

from __future__ import annotations

import codecs
import io
import re
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import (
    COUNT_ERRORS,
    DECOMPRESS,
    LONG_HEAD,
    READ_BUFFER,
    READ_ERRORS,
    ReadStats,
    _cr_only,
    _open_binary,
    _peek,
    _replaced_so_far,
    check_encoding,
    invalid_utf8_error,
    wide_encoding,
)
from nbsvm.io.document import STDIN, Document, read_once, weight_of
from nbsvm.io.formats import COLUMN_SEPARATOR
from nbsvm.io.labeled_lines import _columns
from nbsvm.io.short_rows import FieldCounts
from nbsvm.io.table_lines import RowLines, RowScanner, Scanned

if TYPE_CHECKING:
    from nbsvm.io.document import PathOrFile

#: Bytes of a table's start looked at before pandas reads it (a UTF-16/32 BOM, the fields
#: of the first rows of a file without a header row, whether lines end with CR only or
#: with CRLF: :func:`_lf_source`).
HEAD_BYTES = 1 << 16
#: Suffixes pandas decompresses by itself: their first bytes are not text, so not looked at.
OTHER_COMPRESSION = (".bz2", ".zip", ".xz", ".zst", ".tar")
#: Archives pandas opens: their first bytes are the archive's header, not the table's.
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def read_table(
    path: PathOrFile,
    text_col: str | Sequence[str] = "text",
    label_col: str | int | None = "label",
    sep: str = ",",
    chunksize: int = 10_000,
    strict: bool = False,
    stats: ReadStats | None = None,
    label_optional: bool = False,
    encoding: str = "utf-8",
    empty_label: bool = False,
    weight_col: str | int | None = None,
) -> Iterator[Document]:
    """Read a CSV/TSV file (path, open file or ``"-"``) with a header through pandas in chunks.
    ``weight_col``: the column of each document's weight (by name, or by number in a file
    without a header row); a row whose weight is not a finite number >= 0 is malformed.

    ``label_col=None`` reads unlabeled text; with ``label_optional`` a missing label column
    reads as unlabeled too (``predict`` keeps true labels when there are some). Labels are
    stripped of surrounding white space. Row numbers in errors count the header as line 1
    and a quoted field's line breaks; blank lines, which pandas skips unseen, are not
    counted (kept as rows, they could not be told from rows of empty fields, which are
    reported, and spaces-only lines would become rows). CRLF line ends read as LF (inside a
    quoted field too: ``"a\r\nb"`` is ``a\nb``, the same white space to the tokenizer); a
    lone CR stays in its field. Invalid UTF-8 is replaced and
    counted in ``stats`` (the rows whose text or label then holds U+FFFD are the documents
    counted), or with ``strict`` raises :class:`NBSVMError` naming the file and the line.

    ``text_col``: a column name, or several whose texts are joined with
    :data:`COLUMN_SEPARATOR` (a title and a body). Columns given by number (``"3"``,
    counting from 1, the label's too) read a file without a header row. A row with an
    empty label, or with more fields than the header (the first data row too: pandas
    would take its first field for an index and shift the others, :func:`_header_names`),
    or in a file without a header a first row with more fields than the rows after it
    (:func:`_long_first_row`), or with fewer fields than the first row (a file read again:
    :class:`~nbsvm.io.short_rows.FieldCounts`), is malformed: an error naming the line, or skipped and
    counted when ``stats.skip_bad``. A file with a UTF-16 or UTF-32 BOM is decoded as
    such (NUL-filled text without one is refused: :func:`~nbsvm.io.decoding.wide_encoding`).
    """
    if stats is None:
        stats = ReadStats()
    text_cols: list[Any] = _columns(text_col)  # names, or 0-based numbers when positional
    encoding = check_encoding(encoding)
    if not text_cols or len(set(text_cols)) != len(text_cols):
        raise NBSVMError(f"--text-col names each column once; got {text_cols}")
    source, name = _source(path)
    import pandas as pd  # only CSV/TSV input needs pandas (it costs ~60 MB to import)

    kind = "TSV" if sep == "\t" else "CSV"
    positional, text_cols, label_col = _positional_columns(
        text_cols, label_col, label_optional, name
    )
    weight_col = _weight_column(weight_col, positional, name)
    head, whole = _head(source, name)
    wide = wide_encoding(head, name)
    encoding = wide or encoding
    long_row = _skip_long_first_row(head, whole, wide, sep, stats, name) if positional else 0
    skipped: set[int] = {long_row} - {0}  # lines pandas drops: the row count steps over them
    lines: Any = None
    try:
        with _lf_source(source, name, head, wide, sep) as (lf, scanner):  # CRLF read as LF
            lines = _row_lines(scanner, positional, skipped, stats, name)
            before = _replaced_so_far()
            chunks = _opened(pd, name, lf, sep, chunksize, encoding, strict, stats, skipped, head)
            counts = FieldCounts(
                name if source is name else "-", sep, encoding, _crlf_as_lf(head, wide),
                _cr_only(head), bool(long_row),
            )  # fmt: skip
            names, first, spans = None, True, _Spans(sep)
            for chunk in _chunks_noting_bad_rows(chunks, lines, pd):
                chunk = _without_cr(chunk)
                if chunk.empty and names is None and not positional:
                    continue  # blank rows only ('\r\r\n'): no header row yet
                breaks = _line_breaks(chunk)
                if not positional:
                    if names is None:  # the header row's own
                        lines.header(breaks[0])
                        breaks = breaks[1:]
                    used = [*text_cols, label_col, weight_col]
                    chunk, names = _named_columns(chunk, names, used, name)
                if first and label_optional and label_col not in chunk.columns:
                    label_col = None
                first = False
                texts, labels = _texts_and_labels(chunk, text_cols, label_col, positional, name)
                weights = _weights(chunk, weight_col, positional, name, len(texts))
                before = _count_replaced(before, texts, labels, stats)
                rows = _Rows(stats, name, lines, label_col, positional, label_optional, sep, spans)
                rows.empty_label, rows.weight_col, rows.counts = empty_label, weight_col, counts
                yield from rows.documents(chunk, texts, labels, weights, breaks)
            lines.finish()
        spans.note(stats, name)
    except pd.errors.EmptyDataError:
        raise NBSVMError("empty file (expected a header row)", path=name) from None
    except pd.errors.ParserError as e:
        raise _parser_error(e, lines, stats, name, kind) from None
    except UnicodeDecodeError as e:  # strict: find the line again (only files can be re-read)
        raise _strict_decode_error(e, source, name, wide) from None
    except (*READ_ERRORS, zipfile.BadZipFile, tarfile.TarError) as e:  # e.g. a corrupt .csv.gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None


def _row_lines(scanner, positional: bool, skipped: set[int], stats: ReadStats, name: str) -> Any:
    """What numbers the rows: :class:`~nbsvm.io.table_lines.RowLines` beside ``scanner``,
    or without one (a table pandas alone reads) :class:`_Lines`."""

    def report(why: str, line: int) -> None:
        stats.bad(why, name, line)

    if scanner is not None:
        return RowLines(scanner, skipped, report)
    return _Lines(0 if positional else 1, skipped, report=report)


def _parser_error(error, lines, stats: ReadStats, name: str, kind: str) -> NBSVMError:
    """pandas' parser error as nbsvm says it, at the row's line (a row with too many
    fields said as --skip-bad-lines says it, and counted)."""
    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(error))
    line = _parser_line(error)
    if found:
        expected, number, saw = map(int, found.groups())
        line = number if lines is None else lines.line_of(number)
        stats.bad(f"malformed row (expected {expected} fields, saw {saw})", name, line)
    unclosed = re.search(r"EOF inside string starting at row (\d+)", str(error))
    if unclosed:  # pandas counts records from 0 (the header's): the line it starts on
        number = int(unclosed.group(1)) + 1
        line = number if lines is None else lines.line_of(number)
        return NBSVMError(
            f"cannot parse as {kind}: a quote opened in this row is never closed (the rest "
            "of the file would be one field)",
            path=name,
            line=line,
        )
    return NBSVMError(f"cannot parse as {kind}: {str(error).strip()}", path=name, line=line)


@dataclass
class _Rows:
    """The documents of a chunk's rows, each malformed one counted in ``stats`` (or an
    error) instead."""

    stats: ReadStats
    name: str
    lines: Any  # _Lines or RowLines
    label_col: Any
    positional: bool
    label_optional: bool
    sep: str
    spans: _Spans
    empty_label: bool = False
    weight_col: Any = None
    counts: FieldCounts | None = None  # the fields of short rows, read again

    def documents(self, chunk, texts: list[str], labels: list, weights: list, breaks: list[int]):
        stats, name, lines = self.stats, self.name, self.lines
        short = (
            {}
            if self.counts is None
            else _short_rows(
                chunk, self.counts, self.positional, self.label_col if self.label_optional else None
            )
        )  # row of the chunk: its problem
        optional, empty_label, sep = self.label_optional, self.empty_label, self.sep
        if any(breaks):  # rows taken into a quoted field are looked for only there
            self.spans.labels.update(str(y).strip() for y in labels if y is not None)
        self.spans.labels.discard("")
        for i, (text, label, weight, extra) in enumerate(zip(texts, labels, weights, breaks)):
            row = lines.next(extra)
            self.spans.add(row, extra, text)
            if short and i in short:
                if short[i] != UNCHECKED:
                    stats.bad(short[i], name, row)
                    continue
                self._note_unchecked(row)
            if label is not None:
                label = label.strip() or (None if optional else "")
                if label == "" and not empty_label:  # predict: unlabelled (None)
                    stats.bad(_empty_label(self.label_col, self.positional), name, row)
                    continue
            w, problem = _row_problem(text, label, weight, self.weight_col, self.positional, sep)
            if problem is not None:
                stats.bad(problem, name, row)
                continue
            yield Document(label, text, name, row, w)

    def _note_unchecked(self, row: int) -> None:
        """A row ending in an empty field of a table read once (``self.counts``'s)."""
        first = self.counts.first_unchecked(row) if self.counts is not None else row
        self.stats.note(
            f"{self.name} cannot be read again (standard input, a stream or an archive): "
            f"its rows that end in an empty field (the first: line {first}) could be texts "
            "cut short by a line break outside quotes, which only a file given by name is "
            "checked for"
        )


#: What :func:`_short_rows` says of a row ending in an empty field in a table read once.
UNCHECKED = ""


def _short_rows(chunk, counts: FieldCounts, positional: bool, optional_label=None) -> dict:
    """``{row of the chunk: its problem}`` for the rows with fewer fields than the first
    row: among those pandas ends with an empty field, the ones ``counts`` finds short.
    ``optional_label``: predict's label column, if any; a row that only leaves it off, as
    the last column, is unlabelled, not short."""
    last_optional = optional_label is not None and optional_label == chunk.columns[-1]
    if len(chunk.columns) < 2 or last_optional and counts.read_once:
        return {}
    if counts.lost:
        return {i: UNCHECKED for i in _ends_empty(chunk)} if counts.read_once else {}
    empty = _ends_empty(chunk)
    if not len(empty):
        return {}
    index = chunk.index.to_numpy()[empty].tolist()
    firsts = chunk.iloc[:, 0].to_numpy()[empty].tolist()
    found = counts.short_rows(index, firsts)  # reads the first row's fields too
    first = "the rows have" if positional else "the header has"
    least = (counts.expected or 0) - 1 if last_optional else None
    return {
        i: f"too few fields ({n}; {first} {counts.expected}): a line break outside "
        "quotes splits a text? Quote texts that hold line breaks"
        for i, n in zip(empty.tolist(), found)
        if n is not None and n != least
    }


def _ends_empty(chunk) -> np.ndarray:
    """The rows of ``chunk`` whose last field is empty (a short row's is)."""
    return np.flatnonzero((chunk.iloc[:, -1] == "").to_numpy())


class _LfOnly(io.RawIOBase):
    """A binary stream read with each CRLF as LF, so that pandas, told that LF alone ends a
    row, reads CRLF rows as LF ones: blank lines skipped, a quoted empty field kept, and a
    lone CR left inside its field (a CRLF cut between two reads stays one line end)."""

    def __init__(self, raw: Any):
        self.raw, self.held, self.out = raw, b"", b""

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while not self.out:
            data = self.raw.read(max(len(buf), 1 << 16))
            if not data:  # the end: a last lone CR as it is
                self.out, self.held = self.held, b""
                break
            data = self.held + data
            self.held = b"\r" if data.endswith(b"\r") else b""
            self.out = (data[:-1] if self.held else data).replace(b"\r\n", b"\n")
        n = min(len(buf), len(self.out))
        buf[:n], self.out = self.out[:n], self.out[n:]
        return n


@contextmanager
def _lf_source(
    source: Any, name: str, head: bytes, wide: str | None, sep: str
) -> Iterator[tuple[Any, RowScanner | None]]:
    """``(what pandas reads, the scanner reading it too)``: the bytes of ``source`` (a
    ``.gz``, ``.bz2`` or ``.xz`` file decompressed), with LF line ends when its first bytes
    end lines with CRLF (:class:`_LfOnly`), through a
    :class:`~nbsvm.io.table_lines.RowScanner` that finds each row's line. Left to pandas
    as they are, without a scanner: UTF-16/32 text (its CR and LF are two bytes), what
    pandas decompresses itself and text streams; a CR that then ends a field is dropped
    after (:func:`_without_cr`)."""
    if wide or (source is name and _pandas_decompresses(name)) or not _is_binary(source):
        yield source, None
        return
    fh, close = source, False
    if source is name:
        fh, _, close = _open_binary(name)
    try:
        if head.startswith(codecs.BOM_UTF8):
            # dropped, as the line readers drop it whatever the encoding: pandas drops it
            # for UTF-8 alone ('--encoding latin-1' read it into the first header or label)
            fh.read(len(codecs.BOM_UTF8))
        raw = io.BufferedReader(_LfOnly(fh), READ_BUFFER) if _crlf_as_lf(head, wide) else fh
        scanner = RowScanner(sep.encode(), b"\r" if _cr_only(head) else b"\n")
        yield io.BufferedReader(Scanned(raw, scanner), READ_BUFFER), scanner
    finally:
        if close:
            fh.close()


def _crlf_as_lf(head: bytes, wide: str | None) -> bool:
    """Whether pandas reads the table through :class:`_LfOnly` (its first bytes end lines
    with CRLF); :class:`~nbsvm.io.short_rows.FieldCounts` reads it again the same way."""
    return not wide and b"\r\n" in head


def _pandas_decompresses(name: str) -> bool:
    """Whether a file is one only pandas opens: ``.zip``, ``.zst``, ``.tar(.gz, ...)``."""
    lower = name.lower()
    return lower.endswith(TAR_SUFFIXES) or (
        lower.endswith(OTHER_COMPRESSION) and Path(lower).suffix not in DECOMPRESS
    )


def _is_binary(source: Any) -> bool:
    """A path, or a stream of bytes (standard input's buffer, a file opened ``rb``)."""
    if isinstance(source, str):
        return True
    try:
        return isinstance(source.read(0), bytes)
    except (OSError, ValueError, AttributeError):
        return False


def _source(path) -> tuple[Any, str]:
    """``(what pandas reads, the name errors give)`` of a path, an open file or ``"-"``
    (standard input); a path that is not a file is an error."""
    if hasattr(path, "read"):
        return path, str(getattr(path, "name", "<stream>"))
    if isinstance(path, str) and path == STDIN:
        return sys.stdin.buffer, "<stdin>"
    source = name = str(path)
    if read_once(path):  # a pipe by name (/dev/stdin, <(...)): read as standard input is
        return open(path, "rb"), name  # noqa: SIM115  (pandas reads it to its end)
    if not Path(path).is_file():
        raise NBSVMError("no such file", path=name)
    return source, name


def _positional_columns(
    text_cols: list[Any], label_col, label_optional: bool, name: str
) -> tuple[bool, list[Any], Any]:
    """``(positional, text_cols, label_col)``: columns given by number (``--text-col 3
    --label-col 1``) read a file without a header row, as AG News' class,title,description;
    numbers count from 1, as cut and awk do, and become 0-based here. A label column given
    by name then is an error, or with ``label_optional`` none (predict: unlabeled rows)."""
    positional = all(_is_number(c) for c in text_cols)
    if positional and label_col is not None and not _is_number(label_col):
        if not label_optional:
            raise NBSVMError(
                f"--text-col {' '.join(map(str, text_cols))} numbers the columns "
                "of a file without a header row: number the label's column too "
                "(--label-col 1)",
                path=name,
            )
        label_col = None  # predict: unlabeled rows
    if positional:
        text_cols = [int(c) - 1 for c in text_cols]
        label_col = None if label_col is None else int(label_col) - 1
        if min(text_cols + ([label_col] if label_col is not None else [])) < 0:
            raise NBSVMError("column numbers count from 1", path=name)
    return positional, text_cols, label_col


def _weight_column(weight_col, positional: bool, name: str):
    """The weight's column as the table is read: a name, or 0-based in a file without a
    header row (where it must be a number, as the text's)."""
    if weight_col is None or not positional:
        return weight_col
    if not _is_number(weight_col) or int(weight_col) < 1:
        raise NBSVMError(
            "--text-col numbers the columns of a file without a header row: number the "
            "weight's column too, from 1 (--weight-col 3)",
            path=name,
        )
    return int(weight_col) - 1


def _named(col, positional: bool) -> str:
    return f"column {col + 1}" if positional else f"column {col!r}"


def _weights(chunk, col, positional: bool, name: str, n: int) -> list:
    """A chunk's weight column (None: ``n`` Nones); a missing column is an error."""
    if col is None:
        return [None] * n
    if col not in chunk.columns:
        fields = f"{len(chunk.columns)} fields" if positional else str(list(chunk.columns))
        raise NBSVMError(
            f"no weight {_named(col, positional)}; the file has {fields} (--weight-col)",
            path=name,
            line=1,
        )
    return chunk[col].tolist()


def _opened(pd, name: str, *args):
    """:func:`_read_csv` of ``args``, where pandas opening a .zip or .tar itself (one
    member, else a ValueError of its own) or a .zst without zstandard (an ImportError)
    fails: refused, naming the file."""
    try:
        return _read_csv(pd, *args)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError):
        raise  # (ValueErrors too: read_table names them, with their lines)
    except (ValueError, ImportError) as e:
        raise NBSVMError(f"cannot read: {e}", path=name) from None


def _read_csv(
    pd,
    source,
    sep: str,
    chunksize: int,
    encoding: str,
    strict: bool,
    stats: ReadStats,
    skipped,
    head: bytes = b"",
):
    """pandas' chunked reader of a table, every field a string. The header row is read as a
    row (``header=None``): pandas then checks every row, the first too, against its fields
    (see :func:`_header_names`)."""
    return pd.read_csv(
        source,
        sep=sep,
        chunksize=chunksize,
        dtype=str,
        keep_default_na=False,
        encoding=encoding,
        encoding_errors="strict" if strict else COUNT_ERRORS,
        on_bad_lines="warn" if stats.skip_bad else "error",
        header=None,
        skiprows=sorted(i - 1 for i in skipped) or None,
        # LF alone ends a row (CR in a file of CR-only line ends, by its ``head``): pandas' default
        # also ended one at a lone CR, which DataFrame.to_csv leaves unquoted inside a text
        # ('dull\rthe end' became a row 'dull' and a document labelled 'the end'); CRLF
        # reaches pandas as LF (_lf_source), or where it cannot, its CR is dropped after
        # (_without_cr)
        lineterminator="\r" if _cr_only(head) else "\n",
    )


def _without_cr(chunk):
    """The chunk with the CR of each row's CRLF line end dropped, and the rows of blank
    lines dropped as pandas drops them in LF files (their CR made them rows): for the
    CRLF that reach pandas (:func:`_lf_source` passes UTF-16/32, what pandas decompresses
    and a file whose first :data:`HEAD_BYTES` hold no CRLF as they are), where a blank line
    and a quoted empty field of one column are the same row.

    The CR ends the last field the line has: the last column's, or in a line with fewer
    fields than the header an earlier one (the later ones are empty). A line of fewer
    fields holding only white space is a blank line (a row of empty fields, ``,``, has
    them all and stays: its empty label is reported)."""
    last = chunk[chunk.columns[-1]]
    if not last.str.endswith("\r").any() and (len(chunk.columns) == 1 or not (last == "").any()):
        return chunk  # no CR ends a last field, and no row is short: nothing to do
    ends = {c: chunk[c].str.endswith("\r") for c in chunk.columns}
    if not any(e.any() for e in ends.values()):
        return chunk
    out = chunk.copy()
    later_empty = np.ones(len(chunk), dtype=bool)  # every later field of the row is empty
    short = np.zeros(len(chunk), dtype=bool)  # the CR sat before the last column
    for i, c in enumerate(reversed(chunk.columns)):
        cut = ends[c].to_numpy() & later_empty
        out.loc[cut, c] = chunk.loc[cut, c].str[:-1]
        if i:
            short |= cut
        later_empty &= (chunk[c] == "").to_numpy()
    if len(chunk.columns) == 1:
        short = ends[chunk.columns[0]].to_numpy()  # one column: a blank line is a row of it
    blank = short & np.all([(out[c].str.strip() == "").to_numpy() for c in out.columns], axis=0)
    return out[~blank] if blank.any() else out


@dataclass
class _Lines:
    """The line of each row of a table pandas reads itself (compressions it alone opens,
    UTF-16/32, text streams), where :class:`~nbsvm.io.table_lines.RowLines` cannot read
    beside it: a row starts one line after the last line of the row before (``carry``: the
    line breaks inside that row's quoted fields); the lines pandas skipped are stepped
    over, blank lines are not counted."""

    row: int
    skipped: set[int]
    carry: int = 0
    report: Callable[[str, int], Any] | None = None

    def skip(self, number: int, why: str) -> None:
        """pandas skipped its row ``number``: reported now, by that number."""
        self.skipped.add(number)
        if self.report is not None:
            self.report(why, number)

    def header(self, extra: int) -> int:
        """The header row (line 1): the next row starts after its quoted line breaks."""
        self.carry = extra
        return self.row

    def finish(self) -> None:
        """Nothing left to report."""

    def line_of(self, number: int) -> int:
        """pandas' number of a row, as this count has it."""
        return number

    def next(self, extra: int = 0) -> int:
        """The next row's first line; ``extra``: its own quoted line breaks."""
        self.row += 1 + self.carry
        self.carry = extra
        while self.row in self.skipped:
            self.row += 1
        return self.row


@dataclass
class _Spans:
    """The rows that took in several lines through a quoted field, and those of them whose
    lines look like the file's rows (a label of the file and the separator)."""

    sep: str
    count: int = 0
    first: tuple[int, int] = (0, 0)  # the first one's line and lines
    rowlike: int = 0
    first_rowlike: tuple[int, int] = (0, 0)
    labels: set[str] = field(default_factory=set)  # seen in chunks with such rows

    def add(self, row: int, extra: int, text: str = "") -> None:
        """Row ``row`` holds ``extra`` quoted line breaks, in ``text``."""
        if not extra:
            return
        self.count += 1
        if self.count == 1:
            self.first = (row, extra + 1)
        if _holds_rows(text, self.labels, self.sep):
            self.rowlike += 1
            if self.rowlike == 1:
                self.first_rowlike = (row, extra + 1)

    def note(self, stats: ReadStats, name: str) -> None:
        """Say how many rows took in several lines through a quoted field: a text that
        opens with a quote by accident takes in the lines, rows and labels up to the next
        quote, which only this note shows (a one-column table has no field count to
        check). In a CSV, whose quoted texts may hold line breaks, only the rows whose
        lines look like rows of the file are named (66 rows read as one, no word)."""
        tsv = self.sep == "\t"
        count, (line, lines) = (
            (self.count, self.first) if tsv else (self.rowlike, self.first_rowlike)
        )
        if not count:
            return
        what = "line breaks" if tsv else "lines that look like rows (a label and a comma)"
        stats.note(
            f"{name}: {count} row(s) hold {what} inside quotes (the first: line {line}, "
            f"{lines} lines); a text that opens with a quote (\") by accident takes in the "
            "lines up to the next quote"
        )


def _holds_rows(text: str, labels: set[str], sep: str) -> bool:
    """Whether a line of ``text`` after its first starts with one of ``labels`` and ``sep``
    or ends with ``sep`` and one of them: a row of the file taken into a quoted field."""
    if not labels:
        return False
    for line in text.split("\n")[1:]:
        if sep in line:
            head, tail = line.split(sep, 1)[0], line.rsplit(sep, 1)[1]
            if head.strip() in labels or tail.strip() in labels:
                return True
    return False


def _line_breaks(chunk) -> list[int]:
    """Per row of a chunk (every field a string), the line breaks inside its quoted fields:
    what a row spans beyond its first line, so that a row's line is the file's."""
    total = None
    for col in chunk.columns:
        field = chunk[col]
        if field.str.contains("\n", regex=False).any():  # LF ends a line, as wc -l counts
            count = field.str.count("\n")
            total = count if total is None else total + count
    return [0] * len(chunk) if total is None else total.tolist()


def _named_columns(
    chunk, names: list[str] | None, used: list | None = None, name: str = ""
) -> tuple[Any, list[str]]:
    """``(chunk, names)``: the chunk with its columns named by the header row, which the
    first chunk (``names`` None) starts with and loses. A column the command reads
    (``used``) that the header names twice is an error: pandas calls the second
    ``label.1``, and the first was read without a word (``label,text,label``), unless
    the command reads one of those names too."""
    if names is None:
        row = chunk.iloc[0].tolist()
        names = _header_names(row)
        chunk = chunk.iloc[1:]
        used = used or []
        for col in used:
            at = [i + 1 for i, value in enumerate(row) if value == col]
            # (reading 'text' and 'text.1', pandas' name of the second, is a choice made)
            if len(at) > 1 and not any(f"{col}.{k}" in used for k in range(1, len(at))):
                raise NBSVMError(
                    f"the header names column {col!r} {len(at)} times (fields "
                    f"{', '.join(map(str, at))}): rename all but the one to read",
                    path=name,
                    line=1,
                )
    chunk.columns = names
    return chunk, names


def _texts_and_labels(
    chunk, text_cols: list[Any], label_col, positional: bool, name: str
) -> tuple[list[str], list]:
    """The texts (several columns joined with :data:`COLUMN_SEPARATOR`) and the labels (all
    None without a label column) of a chunk's rows; a missing column is an error."""
    usecols = text_cols + ([label_col] if label_col is not None else [])
    missing = [c for c in usecols if c not in chunk.columns]
    if missing and positional:
        raise NBSVMError(
            f"no column {missing[0] + 1}: the rows have {len(chunk.columns)} "
            "fields (--text-col / --label-col count from 1)",
            path=name,
            line=1,
        )
    if missing:
        fields = [str(c) for c in chunk.columns]
        other = next(
            (sep for sep in (";", "|", "\t", ",") if len(fields) == 1 and sep in fields[0]), None
        )
        hint = (
            f"(its header is one field holding {other!r}: a file separated by {other!r} is "
            "read as one column; nbsvm reads commas (.csv) and TABs (.tsv, --format tsv), so "
            "convert it)"
            if other is not None
            else "(choose with --text-col / --label-col)"
        )
        raise NBSVMError(
            f"missing column(s) {missing}; the file has {list(chunk.columns)} {hint}",
            path=name,
            line=1,
        )
    texts = chunk[text_cols[0]].tolist()
    for col in text_cols[1:]:
        texts = [a + COLUMN_SEPARATOR + b for a, b in zip(texts, chunk[col].tolist())]
    labels = chunk[label_col].tolist() if label_col is not None else [None] * len(texts)
    return texts, labels


def _count_replaced(before: int, texts: list[str], labels: list, stats: ReadStats) -> int:
    """Count in ``stats`` the invalid bytes replaced since ``before`` (the count of
    replacements so far, returned updated) and the rows of a chunk whose text or label
    holds U+FFFD."""
    n_bad = _replaced_so_far() - before
    if n_bad:
        before += n_bad
        if stats is not None:
            stats.add(
                n_bad,
                sum(
                    1
                    for t, lab in zip(texts, labels)
                    if "\ufffd" in t or (lab is not None and "\ufffd" in lab)
                ),
            )
    return before


def _row_problem(
    text: str, label: str | None, weight, weight_col, positional: bool, sep: str
) -> tuple[float, str | None]:
    """``(the row's weight, what is wrong with it or None)``: a weight that is not a
    finite number >= 0; in a TSV table, a TAB inside a field, which only a quote opened
    in one field and closed in a later one puts there (TSV has no quoting: a review
    starting with '"' swallowed the rows after it, labels and all, without a word)."""
    if sep == "\t" and ("\t" in text or (label is not None and "\t" in label)):
        return 1.0, (
            'a field holds a TAB: a quote (") opened a field and closed in a later one. '
            "TSV has no quoting: write the texts without an opening quote, or as CSV"
        )
    if weight_col is None:
        return 1.0, None
    w, problem = weight_of(weight)
    return w, None if problem is None else f"{_named(weight_col, positional)}: {problem}"


def _empty_label(label_col, positional: bool) -> str:
    """The malformed-row message of a row with an empty label."""
    return f"empty label in column {cast(int, label_col) + 1 if positional else repr(label_col)}"


def _strict_decode_error(e: UnicodeDecodeError, source, name: str, wide: str | None) -> NBSVMError:
    """The error of invalid bytes with ``strict``: naming the line of a file, which can be
    re-read to find it; else naming the bytes."""
    where = None if source is not name or wide else _first_invalid_utf8(name)
    if where is None:
        return NBSVMError(
            f"invalid {(wide or 'utf-8').upper()} "
            f"(0x{e.object[e.start : e.end].hex()}); without "
            "--strict invalid bytes are replaced by U+FFFD and counted",
            path=name,
        )
    return where


def _head(source, name: str) -> tuple[bytes, bool]:
    """``(first bytes, whether they are the whole table)``: up to :data:`HEAD_BYTES` of a
    file (``.gz``, ``.bz2``, ``.xz`` decompressed; none for other compressions pandas
    reads), or what one
    look at standard input or an open binary file gives without consuming it (none for
    other streams: they are read as they are)."""
    if source is name:
        if _pandas_decompresses(name):  # .zip, .zst, .tar(.gz, .bz2, .xz): pandas' own
            return b"", False
        fh, _, _ = _open_binary(name)
        try:
            head = asked = fh.read(HEAD_BYTES)
            if len(head) == HEAD_BYTES and b"\n" not in head and _cr_only(head):
                # a first row longer than the head with lone CRs inside (split at them: 3
                # rows of 1, or a 'malformed row' at a line no editor shows), or CR ends?
                more = fh.read(LONG_HEAD - HEAD_BYTES)
                head += more
                return head, len(more) < LONG_HEAD - HEAD_BYTES
        except READ_ERRORS as e:
            raise NBSVMError(f"cannot read: {e}", path=name) from None
        finally:
            fh.close()
        return head, len(asked) < HEAD_BYTES
    try:
        head = _peek(source, HEAD_BYTES)
    except (OSError, ValueError):
        return b"", False
    return (head if isinstance(head, bytes) else b""), False


def _header_names(row: list) -> list[str]:
    """The column names of a header row, as pandas names them (an empty one ``Unnamed: i``,
    a repeated one ``name.1``, ``name.2``...).

    The header is read as a row of its own because pandas, given ``header="infer"``, takes
    a first data row with more fields than the header for one with an index in its first
    field: the columns shift (the texts become the labels) without a word, where a later
    row with one field too many is an error. Read as a row, the header sets the fields
    every row must have.

    A repeated name takes the first ``name.k`` that the header does not hold itself (as
    pandas 3 does): a column the header names ``text.1`` is that column, not the second
    ``text`` (it was, and ``--text-col text.1`` read the wrong one without a word).

    >>> _header_names(["text", "", "text", "label"])
    ['text', 'Unnamed: 1', 'text.1', 'label']
    >>> _header_names(["text", "label", "text", "text.1"])
    ['text', 'label', 'text.2', 'text.1']
    >>> _header_names(["a", "", "Unnamed: 1"])
    ['a', 'Unnamed: 1.1', 'Unnamed: 1']

    The header's own names first, then its empty fields (``Unnamed: i``, itself given the
    first free ``.k`` when the header holds that name), as pandas 3.1 names them.
    """
    named = [v if isinstance(v, str) and v else None for v in row]
    taken = {v for v in named if v is not None}
    names: list[str] = [""] * len(row)
    seen: set[str] = set()

    def free(col: str) -> str:  # the first name.k the header does not hold
        k = 1
        while f"{col}.{k}" in taken:
            k += 1
        taken.add(f"{col}.{k}")
        return f"{col}.{k}"

    for i, col in enumerate(named):
        if col is not None:
            names[i] = free(col) if col in seen else col
            seen.add(col)
    for i, col in enumerate(named):
        if col is None:
            unnamed = f"Unnamed: {i}"
            names[i] = free(unnamed) if unnamed in taken else unnamed
            taken.add(names[i])
    return names


def _skip_long_first_row(
    head: bytes, whole: bool, wide: str | None, sep: str, stats: ReadStats, name: str
) -> int:
    """The line of the first row of a table without a header row, to skip (0: none): a
    first row with more fields than the rows after it (:func:`_long_first_row`) is
    malformed, an error unless ``stats.skip_bad``. pandas takes the first row's fields for
    every row's, so it would pad the others and read on without a word. The blank lines
    before it count (pandas skips lines by that count: with line 1 skipped, a blank line
    went and the long row was read, after it was reported as skipped)."""
    found = _long_first_row(head, whole, wide, sep)
    if found is None:
        return 0
    saw, expected = found
    text = head.decode(wide or "utf-8", "replace")
    blank = 0
    for line in text.split("\r" if _cr_only(head) else "\n"):
        if line.strip(" \t\r".replace(sep, "")):
            break
        blank += 1
    stats.bad(f"malformed row (expected {expected} fields, saw {saw})", name, blank + 1)
    return blank + 1


def _long_first_row(head: bytes, whole: bool, wide: str | None, sep: str) -> tuple[int, int] | None:
    """``(fields of the first row, fields of the rows after it)`` when every complete row
    after the first in ``head`` (up to 20; its last row counts when ``head`` is the
    ``whole`` table) has fewer fields than the first; else None.

    >>> _long_first_row(b"pos,great,extra\\npos,good\\nneg,bad\\n", True, None, ",")
    (3, 2)
    >>> _long_first_row(b"pos,great\\npos,good\\n", True, None, ",") is None
    True
    """
    import csv
    import io
    from collections import Counter
    from itertools import islice

    text = head.decode(wide or "utf-8", "replace")
    try:
        # (a line of white space only is blank to pandas, as an empty one is)
        rows = [
            r
            for r in islice(csv.reader(io.StringIO(text), delimiter=sep), 22)
            if r and not (len(r) == 1 and not r[0].strip(" \t"))
        ]
    except csv.Error:  # an open quote, a huge field: pandas will say
        return None
    if not whole:
        rows = rows[:-1]  # the last row may be cut short
    later = [len(r) for r in rows[1:21]]
    if not later or max(later) >= len(rows[0]):
        return None
    return len(rows[0]), Counter(later).most_common(1)[0][0]


def _is_number(column) -> bool:
    return isinstance(column, int) or (isinstance(column, str) and column.isdigit())


def _chunks_noting_bad_rows(chunks, lines, pd) -> Iterator:
    """The chunks of a pandas reader; with ``--skip-bad-lines`` the rows pandas skipped
    (its ``on_bad_lines="warn"`` warnings: ``Skipping line N: expected 2 fields, saw 3``)
    are handed to ``lines`` (:meth:`_Lines.skip`), which reports them by their line.
    Warnings are caught only while a chunk is parsed."""
    import warnings

    it = iter(chunks)
    while True:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            try:
                chunk = next(it)
            except StopIteration:
                return
        for w in caught:
            text = str(w.message)
            found = re.findall(r"Skipping line (\d+): ([^\n]*)", text)
            if not found:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            for line, why in found:
                lines.skip(int(line), f"malformed row ({why})")
        yield chunk


def _first_invalid_utf8(path: str) -> NBSVMError | None:
    """The strict-mode error for the first invalid UTF-8 in a file (None if there is none)."""
    fh, name, close = _open_binary(path)
    try:
        for lineno, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                return invalid_utf8_error(raw, e, name, lineno)
    finally:
        if close:
            fh.close()
    return None


def _parser_line(error) -> int | None:
    """The line pandas names in a parser error (``... in line 3, saw 4``), if any."""
    m = re.search(r"\bline (\d+)", str(error))
    return int(m.group(1)) if m else None
