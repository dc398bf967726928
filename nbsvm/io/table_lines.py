"""The file line of every row of a CSV/TSV table, read beside pandas.

pandas numbers the rows it reports (``Skipping line 7``, ``Expected 2 fields in line 7``)
by its own count: every record and every blank line is one, a quoted field's line breaks
are none; the rows it yields carry no number at all, and the blank lines it drops leave no
trace. :class:`RowScanner` reads the same bytes as pandas, as they stream past
(:class:`Scanned`), and notes what its count hides: the blank lines (by pandas' number) and
the records whose quoted fields hold line breaks (how many). :class:`RowLines` walks the
rows pandas yields and skips with those notes, and gives each its line as ``wc -l`` counts
it. The scanner follows pandas' C tokenizer for the settings nbsvm reads tables with
(``"`` quotes a field only at its start, ``""`` inside quotes is a quote, a line of white
space only is blank, and so is one that ends with a CR, as the reader drops the rows CRLF
line ends make of them; no escape or comment character).
"""

from __future__ import annotations

import io
import re
from collections import deque
from collections.abc import Callable
from typing import Any

(_START_RECORD, _WHITE_LINE, _WHITE_CR, _FIELD_START, _IN_FIELD, _IN_QUOTED, _QUOTE_IN_QUOTED) = (
    range(7)
)
_CR = ord("\r")
_QUOTE = ord('"')
_BOM = b"\xef\xbb\xbf"


class RowScanner:
    """pandas' record count over a table's bytes, fed in pieces (:meth:`feed`).

    ``notes`` holds ``(pandas' number, line breaks)`` per record with quoted line breaks
    and ``(pandas' number, -1)`` per blank line, in file order. ``sep`` and ``end``: the
    field separator and the line end (one byte each).

    >>> s = RowScanner(b",", b"\\n")
    >>> s.feed(b'label,text\\npos,"a\\nb"\\n\\n   \\nneg,c')
    >>> list(s.notes)
    [(2, 1), (3, -1), (4, -1)]
    """

    def __init__(self, sep: bytes, end: bytes = b"\n"):
        self.sep, self.end = sep[0], end[0]
        # pandas' blank bytes (isblank), less the separator
        self._blanks = bytes(c for c in b" \t" if c not in (sep[0], end[0]))
        self._white = re.compile(b"[" + re.escape(self._blanks) + b"]*")
        # in an unquoted field only a line end, or a quote opening the next field, matters
        self._field = re.compile(re.escape(end) + b"|" + re.escape(sep + b'"'))
        # a quoted field's rest: to its closing quote, over "" (a quote inside)
        self._quoted = re.compile(b'[^"]*+(?:""[^"]*+)*+"')
        # a whole record at once, where the piece holds all of it: its fields quoted (then
        # anything up to the separator), unquoted (not starting with a quote) or empty;
        # atomic, as pandas parses (a backtracking match took '"""' for '""' and a '"')
        other = b"[^" + re.escape(sep + end) + b"]"
        field = b'(?>"[^"]*+(?:""[^"]*+)*+"' + other + b"*+|" + other[:2] + b'"' + other[2:]
        field += other + b"*+)?"
        self._record = re.compile(field + b"(?:" + re.escape(sep) + field + b")*" + re.escape(end))
        # a blank line among lines without quotes (the fast path's one exception)
        white, e = b"[" + re.escape(self._blanks) + b"]*", re.escape(end)
        cr = b"" if end == b"\r" else b"\r?"
        self._blank_first = re.compile(white + cr + e)  # (matched at the first line)
        self._blank_later = re.compile(e + white + cr + e)
        self.mode = _START_RECORD
        self.record = 1  # pandas' number of the record (or blank line) being read
        self.breaks = 0  # line breaks inside its quotes so far
        self.started = False
        self.notes: deque[tuple[int, int]] = deque()

    def feed(self, data: bytes) -> None:
        """Scan the next bytes of the table."""
        i, n = 0, len(data)
        if not self.started:  # pandas drops a UTF-8 BOM that starts the table
            self.started = True
            i = len(_BOM) if data.startswith(_BOM) else 0
        steps: dict[int, Callable[[bytes, int, int], int]] = {
            _START_RECORD: self._start_record,
            _WHITE_LINE: self._white_line,
            _WHITE_CR: self._white_cr,
            _FIELD_START: lambda data, i, n: self._field_start(data, i),
            _IN_FIELD: self._in_field,
            _IN_QUOTED: self._in_quoted,
            _QUOTE_IN_QUOTED: self._quote_in_quoted,
        }
        while i < n:
            if self.mode == _START_RECORD:
                i = self._plain_lines(data, i)
                if i == n:
                    break
            i = steps[self.mode](data, i, n)

    def _plain_lines(self, data: bytes, i: int) -> int:
        """At a record's start: skip the whole lines before the next quote at once when
        none of them is blank (each is one record of no quoted line break); returns where
        the byte by byte reading goes on."""
        quote = data.find(b'"', i)
        cut = data.rfind(self.end, i, len(data) if quote < 0 else quote) + 1
        if (
            cut <= i
            or self._blank_first.match(data, i, cut) is not None
            or self._blank_later.search(data, i, cut) is not None
        ):
            return i
        self.record += data.count(self.end, i, cut)
        return cut

    def close(self) -> None:
        """At the end of the table: a last record without a line end ends there."""
        if self.mode not in (_START_RECORD, _WHITE_LINE, _WHITE_CR):
            self._end_record()

    def _end_record(self) -> None:
        if self.breaks:
            self.notes.append((self.record, self.breaks))
        self.record += 1
        self.breaks = 0
        self.mode = _START_RECORD

    def _blank(self) -> None:
        self.notes.append((self.record, -1))
        self.record += 1
        self.mode = _START_RECORD

    def _start_record(self, data: bytes, i: int, n: int) -> int:
        c = data[i]
        if c == self.end:
            self._blank()
            return i + 1
        if c == _CR or c in self._blanks:  # a blank line?
            self.mode = _WHITE_LINE
            return i
        found = self._record.match(data, i)
        if found is not None:  # the whole record in this piece
            j = found.end()
            self.breaks = data.count(self.end, i, j) - 1
            self._end_record()
            return j
        return self._field_start(data, i)

    def _white_line(self, data: bytes, i: int, n: int) -> int:
        found = self._white.match(data, i)  # (it always matches, maybe nothing)
        j = found.end() if found is not None else i
        if j == n:
            return n
        if data[j] == self.end:
            self._blank()
            return j + 1
        if data[j] == _CR:  # before the line end, the reader drops it (_without_cr)
            self.mode = _WHITE_CR
            return j + 1
        self.mode = _IN_FIELD  # a record whose first field starts with white space
        return j

    def _white_cr(self, data: bytes, i: int, n: int) -> int:
        if data[i] == self.end:
            self._blank()
            return i + 1
        self.mode = _IN_FIELD  # the CR was the field's
        return i

    def _field_start(self, data: bytes, i: int) -> int:
        """At a field's first byte: a quote opens a quoted field."""
        if data[i] == _QUOTE:
            self.mode = _IN_QUOTED
            return i + 1
        self.mode = _IN_FIELD
        return i

    def _in_field(self, data: bytes, i: int, n: int) -> int:
        found = self._field.search(data, i)
        if found is None:
            if data[n - 1] == self.sep:  # the next field's first byte is in the next piece
                self.mode = _FIELD_START
            return n
        j = found.start()
        if data[j] == self.end:
            self._end_record()
            return j + 1
        self.mode = _IN_QUOTED  # separator, quote: a quoted field
        return j + 2

    def _in_quoted(self, data: bytes, i: int, n: int) -> int:
        found = self._quoted.match(data, i)
        if found is None:  # no closing quote in this piece
            self.breaks += data.count(self.end, i, n)
            return n
        j = found.end()
        self.breaks += data.count(self.end, i, j)
        self.mode = _QUOTE_IN_QUOTED  # the next byte (never a quote here) decides
        return j

    def _quote_in_quoted(self, data: bytes, i: int, n: int) -> int:
        c = data[i]
        if c == _QUOTE:  # "" inside quotes
            self.mode = _IN_QUOTED
            return i + 1
        if c == self.end:
            self._end_record()
            return i + 1
        if c == self.sep:
            self.mode = _FIELD_START
            return i + 1
        self.mode = _IN_FIELD  # text after the closing quote: the field goes on, unquoted
        return i


class Scanned(io.RawIOBase):
    """A binary stream read through to pandas, every byte fed to ``scanner`` on the way."""

    def __init__(self, raw: Any, scanner: RowScanner):
        self.raw, self.scanner = raw, scanner

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        data = self.raw.read(len(buf))
        n = len(data)
        buf[:n] = data
        if n:
            self.scanner.feed(data)
        return n


class RowLines:
    """The file line of each row pandas yields (:meth:`next`), in order; the rows pandas
    skipped (:meth:`skip`, by its number) are reported to ``report`` with their own line
    when the walk passes them (:meth:`finish` at the end). ``reported``: pandas' numbers
    of rows left out and reported before (a first row skipped by ``skiprows``)."""

    def __init__(self, scanner: RowScanner, reported: set[int], report: Callable[[str, int], Any]):
        self.scanner, self.reported, self.report = scanner, reported, report
        self.pending: dict[int, str] = {}
        self.record = 0  # pandas' number of the last record walked
        self.shift = 0  # the quoted line breaks of the records walked
        self.row = 0  # the line of the last row given

    def skip(self, number: int, why: str) -> None:
        """pandas skipped its row ``number`` (``why``): reported when the walk gets there."""
        self.pending[number] = why

    def header(self, extra: int = 0) -> int:
        """The header row's line (a row as the others to this walk)."""
        return self.next(extra)

    def next(self, extra: int = 0) -> int:
        """The line of the next row pandas yields (``extra``, its quoted line breaks, is
        the scanner's to count)."""
        while True:
            line, blank = self._step()
            if blank or self.record in self.reported:
                continue
            why = self.pending.pop(self.record, None)
            if why is not None:
                self.report(why, line)
                continue
            self.row = line
            return line

    def finish(self) -> None:
        """At the end of the table: report the skipped rows after the last one yielded."""
        self.scanner.close()
        while self.pending:
            line, _ = self._step()
            why = self.pending.pop(self.record, None)
            if why is not None:
                self.report(why, line)

    def line_of(self, number: int) -> int:
        """The line of pandas' row ``number``, at or after the walk's place (the row of a
        parser error)."""
        ahead = sum(b for r, b in self.scanner.notes if self.record < r < number and b > 0)
        return number + self.shift + ahead

    def _step(self) -> tuple[int, bool]:
        """To the next record: ``(its line, whether it is a blank line)``."""
        self.record += 1
        line = self.record + self.shift
        notes = self.scanner.notes
        while notes and notes[0][0] < self.record:
            notes.popleft()
        if notes and notes[0][0] == self.record:
            _, breaks = notes.popleft()
            if breaks < 0:
                return line, True
            self.shift += breaks
        return line, False
