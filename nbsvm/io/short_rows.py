"""Rows of a CSV/TSV file with fewer fields than its first row.

pandas pads a short row with empty fields, so in a ``label,text`` file a text broken by an
unquoted line break read as a document of class ``"the rest of the review"`` and no text,
without a word. Its parser cannot tell a missing field from an empty one, so the file is
read again, by the csv module and only from the first row pandas gives with an empty last
field (a short row has one), to count that row's fields.
"""

from __future__ import annotations

import csv
import io
import itertools
import sys
from collections.abc import Iterator

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import DECOMPRESS, _open_binary
from nbsvm.io.document import read_once

#: Stands for a CR the csv module would take for a line end where pandas, told that LF
#: alone ends a row, keeps it inside a field.
_CR = "\ue000"
#: csv's default limit (128 KB a field) refuses a long review.
_FIELD_LIMIT = min(sys.maxsize, 2**31 - 1)


class FieldCounts:
    """The field count of pandas' rows of a table file, read again only when asked.

    ``crlf``: whether pandas reads the file's CRLF as LF (``_LfOnly``); ``cr_only``:
    whether a lone CR ends its rows; ``skip_first``: whether pandas skips its first row.
    """

    def __init__(
        self, path: str, sep: str, encoding: str, crlf: bool, cr_only: bool, skip_first: bool
    ):
        self.path, self.sep, self.encoding = path, sep, encoding
        self.crlf, self.cr_only, self.skip_first = crlf, cr_only, skip_first
        self.expected: int | None = None  # the first row's fields
        self._records: Iterator[list[str]] | None = None
        self._index = -1  # pandas' row of the last record read
        self._record: list[str] = []
        self._line_read = ""  # the last line the csv module read
        self.lost = self.read_once = not can_count(path)
        self._first_unchecked: int | None = None

    def first_unchecked(self, line: int) -> int:
        """The line of the first row ending in an empty field in a table read once
        (``line``: this one's)."""
        if self._first_unchecked is None:
            self._first_unchecked = line
        return self._first_unchecked

    def short_rows(self, rows: list[int], first_fields: list[str]) -> list[int | None]:
        """For each of pandas' rows ``rows`` (increasing; 0: the first row it keeps), its
        fields when they are fewer than the first row's, else None (also where they cannot
        be told: a row read again that does not start with its ``first_fields`` stops the
        counting, since a blank line or a quote read otherwise by the two parsers would
        misplace every later row)."""
        found: list[int | None] = []
        for index, first in zip(rows, first_fields):
            if self.lost or index <= self._index:
                found.append(None)
                continue
            try:
                while self._index < index:
                    self._next_row()
            except (csv.Error, NBSVMError, OSError, EOFError, StopIteration):
                self.lost = True
                found.append(None)
                continue
            if self._record[0].replace(_CR, "") != first.replace("\r", ""):
                self.lost = True
                found.append(None)
                continue
            n = len(self._record)
            found.append(n if self.expected is not None and n < self.expected else None)
        return found

    def _next_row(self) -> None:
        """Read on to the next record pandas keeps as a row."""
        if self._records is None:
            self._records = self._read()
        while True:
            record = next(self._records)
            if not record or (
                len(record) == 1 and _blank(record[0], self.sep) and '"' not in self._line_read
            ):
                continue  # pandas skips blank and white-space-only lines unseen (not `" "`)
            if self.expected is None:
                if self.skip_first:
                    self.skip_first = False
                    continue
                self.expected = len(record)
            elif len(record) > self.expected:
                continue  # skipped by pandas as malformed (counted there)
            self._index += 1
            self._record = record
            return

    def _read(self) -> Iterator[list[str]]:
        csv.field_size_limit(_FIELD_LIMIT)
        fh, _, close = _open_binary(self.path)
        try:
            end = "\r" if self.cr_only else "\n"
            text = io.TextIOWrapper(fh, self.encoding, errors="replace", newline=end)
            lines = map(self._line, text)
            first = next(lines, "")
            # a BOM starts no field: pandas drops it (any encoding), as the readers do
            yield from csv.reader(
                itertools.chain([first.removeprefix("\ufeff")], lines), delimiter=self.sep
            )
        finally:
            if close:
                fh.close()

    def _line(self, line: str) -> str:
        """A line as pandas sees it, with the CRs it keeps in fields hidden from csv (the
        last one read kept: a quoted white-space line is a row, an unquoted one is not)."""
        self._line_read = line
        if self.cr_only:
            body = line[:-1] if line.endswith("\r") else line
            return body.replace("\n", _CR).replace("\r", _CR) + "\n"
        if self.crlf:
            line = line.replace("\r\n", "\n")
        return line.replace("\r", _CR)


def can_count(path: object) -> bool:
    """Whether a table can be read again to count its fields: a file by name, plain or
    compressed as :func:`~nbsvm.io.decoding._open_binary` reads it (not standard input,
    a pipe or device, an open stream, or what pandas decompresses itself)."""
    if not isinstance(path, str) or read_once(path):  # '-', or a pipe by any name
        return False
    lower = path.lower()
    return not lower.endswith((".zip", ".zst", ".tar", ".tgz")) and not any(
        lower.endswith(".tar" + s) for s in DECOMPRESS
    )


def _blank(field: str, sep: str) -> bool:
    """Whether pandas takes a line of this one field for a blank line (spaces, and TABs
    where TAB does not separate fields; a quoted empty field, ``""``, is a row)."""
    return field != "" and not field.strip(" " if sep == "\t" else " \t")
