r"""Bytes to text lines: opening a file, splitting it into lines, decoding with invalid bytes
counted, and the :class:`ReadStats` that records what reading replaced and skipped.

Files are read as bytes (``.gz`` decompressed, ``"-"`` standard input) and split on ``\n``
only. Text is UTF-8 (or another ASCII-compatible ``--encoding``, :func:`check_encoding`):
invalid bytes are replaced by U+FFFD (one per invalid sequence, as Python's
``errors="replace"``) and counted by a codecs error handler (:data:`COUNT_ERRORS`,
:func:`decode_counting`), or with ``strict`` refused by an :class:`~nbsvm.errors.NBSVMError`
naming the file, the line and the byte (:func:`invalid_utf8_error`). :func:`iter_lines` is
the line loop the other line formats share.
"""
from __future__ import annotations

import codecs
import gzip
import io
import itertools
import sys
import threading
import zlib
from pathlib import Path
from typing import IO, Iterator

from nbsvm.errors import NBSVMError
from nbsvm.io.document import STDIN

#: What reading a damaged file raises below the readers (a corrupt or truncated ``.gz``, an
#: unreadable file or folder); the readers turn these into :class:`NBSVMError`.
READ_ERRORS = (OSError, EOFError, zlib.error)
#: Malformed lines named in the report of a run with ``--skip-bad-lines``.
BAD_EXAMPLES = 5
#: Bytes buffered when reading line files.
READ_BUFFER = 1 << 20


class ReadStats:
    """What reading replaced, skipped and noticed, filled in while documents are read.

    ``replaced_bytes``: invalid UTF-8 bytes replaced by U+FFFD; ``replaced_docs``: the
    documents (lines of line formats, rows of tables, files of aclImdb) that had any.
    ``skip_bad``: skip malformed lines (counted in ``bad_lines``, the first
    :data:`BAD_EXAMPLES` described in ``bad_examples``) instead of stopping at the first.
    ``notes``: what a reader decided on the user's behalf (a header line skipped, lines
    read as whole documents), one sentence each.
    """

    __slots__ = ("replaced_bytes", "replaced_docs", "skip_bad", "bad_lines", "bad_examples",
                 "notes")

    def __init__(self, skip_bad: bool = False):
        self.replaced_bytes = 0
        self.replaced_docs = 0
        self.skip_bad = skip_bad
        self.bad_lines = 0
        self.bad_examples: list[str] = []
        self.notes: list[str] = []

    def bad(self, message: str, path: str, line: int | None = None) -> None:
        """A malformed line: raise (naming file and line) unless bad lines are skipped."""
        if not self.skip_bad:
            raise NBSVMError(message + " (--skip-bad-lines skips such lines and counts them)",
                             path=path, line=line)
        self.bad_lines += 1
        if len(self.bad_examples) < BAD_EXAMPLES:
            self.bad_examples.append(str(NBSVMError(message, path=path, line=line)))

    def note(self, sentence: str) -> None:
        if sentence not in self.notes:
            self.notes.append(sentence)

    def add(self, n_bytes: int, n_docs: int = 1):
        if n_bytes:
            self.replaced_bytes += n_bytes
            self.replaced_docs += n_docs

    def __repr__(self) -> str:
        return (f"ReadStats(replaced_bytes={self.replaced_bytes}, replaced_docs="
                f"{self.replaced_docs}, bad_lines={self.bad_lines})")


# Invalid bytes are counted by a codecs error handler: the decoder only calls it on bad
# bytes, so valid text decodes at full speed. The count is per thread (readers run in a
# reader thread of their own) and only grows; callers take differences.
_replaced = threading.local()


def _count_and_replace(exc):
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _replaced.n = getattr(_replaced, "n", 0) + (exc.end - exc.start)
    return "\ufffd", exc.end


#: ``errors=`` name of the counting handler (also accepted by pandas' ``encoding_errors``).
COUNT_ERRORS = "nbsvm-count-replaced"
codecs.register_error(COUNT_ERRORS, _count_and_replace)


def _replaced_so_far() -> int:
    return getattr(_replaced, "n", 0)


def decode_counting(raw: bytes, encoding: str = "utf-8") -> tuple[str, int]:
    r"""``raw`` decoded with invalid bytes replaced, and how many were replaced.

    >>> decode_counting(b"caf\xe9 \xf0\x9f")
    ('caf\ufffd \ufffd', 3)
    >>> decode_counting(b"caf\xe9", "latin-1")
    ('café', 0)
    """
    before = _replaced_so_far()
    text = raw.decode(encoding, COUNT_ERRORS)
    return text, _replaced_so_far() - before


def check_encoding(encoding: str) -> str:
    """The codec's canonical name; refused unless it is known and ASCII-compatible (files
    are split on the byte ``\\n``, so UTF-16 and the like cannot be read line by line).

    >>> check_encoding("Latin-1"), check_encoding("utf8")
    ('iso8859-1', 'utf-8')
    """
    try:
        name = codecs.lookup(encoding).name
        ok = "\n\t a,".encode(name) == b"\n\t a,"
    except (LookupError, TypeError, UnicodeError):
        ok = False
    if not ok:
        raise NBSVMError(f"unknown or unusable --encoding {encoding!r}: give an ASCII-compatible "
                         "one such as utf-8 (the default), latin-1 or cp1252")
    return name


def invalid_utf8_error(raw: bytes, exc: UnicodeDecodeError, name: str, line: int | None,
                       line_start: int = 0, encoding: str = "utf-8") -> NBSVMError:
    """The strict-mode error for ``exc`` raised decoding ``raw`` (a line, or a whole file
    when ``line_start`` is where the line begins in it)."""
    bad = raw[exc.start:exc.end]
    what = "UTF-8" if encoding == "utf-8" else encoding
    return NBSVMError(f"invalid {what} at byte {exc.start - line_start + 1} of the line "
                      f"(0x{bad.hex()}); without --strict invalid bytes are replaced by "
                      "U+FFFD and counted", path=name, line=line)


def _open_binary(path_or_file) -> tuple[IO, str, bool]:
    """(file, its name, whether we opened it): ``"-"`` is standard input, ``.gz`` files are
    decompressed; an open file (text or binary) is used as it is."""
    if hasattr(path_or_file, "read"):
        return path_or_file, str(getattr(path_or_file, "name", "<stream>")), False
    if isinstance(path_or_file, str) and path_or_file == STDIN:
        return sys.stdin.buffer, "<stdin>", False
    path = Path(path_or_file)
    if not path.exists():
        raise NBSVMError("no such file", path=str(path))
    if path.is_dir():
        raise NBSVMError("is a folder, expected a file", path=str(path))
    try:
        # lines are read from a 1 MB buffer: twice as fast as the default 8 KB on reviews
        if path.suffix == ".gz":
            return io.BufferedReader(gzip.open(path, "rb"), READ_BUFFER), str(path), True
        return open(path, "rb", buffering=READ_BUFFER), str(path), True
    except OSError as e:
        raise NBSVMError(f"cannot read: {e.strerror or e}", path=str(path)) from None


def _open_text(path_or_file) -> tuple[IO[str], str, bool]:
    """(text file, its name, whether we opened it); ``.gz`` files are decompressed and
    invalid UTF-8 is replaced (uncounted: the readers use :func:`iter_lines`)."""
    if hasattr(path_or_file, "read"):
        return path_or_file, getattr(path_or_file, "name", "<stream>"), False
    path = Path(path_or_file)
    if not path.exists():
        raise NBSVMError("no such file", path=str(path))
    if path.is_dir():
        raise NBSVMError("is a folder, expected a file", path=str(path))
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace"), str(path), True
    return open(path, encoding="utf-8", errors="replace", newline=None), str(path), True


def _byte_lines(fh) -> Iterator[bytes]:
    """The lines of ``fh`` as bytes (an open text file's lines are encoded back)."""
    if isinstance(fh, (io.BufferedIOBase, io.RawIOBase)):
        return fh
    byte_lines = getattr(fh, "byte_lines", None)     # a tar member (nbsvm.io.blitzer)
    if byte_lines is not None:
        return byte_lines()
    it = iter(fh)
    for first in it:
        if isinstance(first, bytes):
            return itertools.chain((first,), it)
        return (s.encode("utf-8", "surrogatepass") for s in itertools.chain((first,), it))
    return iter(())


def _decode_invalid(raw: bytes, exc: UnicodeDecodeError, strict: bool, stats: ReadStats | None,
                    name: str, lineno: int, encoding: str = "utf-8") -> str:
    """A line that is not valid in ``encoding``: refused (``strict``) or replaced and
    counted."""
    if strict:
        raise invalid_utf8_error(raw, exc, name, lineno, encoding=encoding)
    text, n_bad = decode_counting(raw, encoding)
    if stats is not None:
        stats.add(n_bad)
    return text


def iter_lines(path_or_file, strict: bool = False, stats: ReadStats | None = None,
               lone_cr: str = "space", encoding: str = "utf-8") -> Iterator[tuple[str, str, int]]:
    """``(line without its end, source name, 1-based line number)`` of a text file.

    Bytes are split on ``\\n``; the line end (``\\n``, ``\\r\\n``) is removed and a BOM on the
    first line dropped. A lone ``\\r`` left inside a line becomes a space (``lone_cr="space"``:
    it never splits a document) or, with ``lone_cr="newline"``, ends a line as in Python's
    universal newlines (the numeric formats, one example per line). Invalid UTF-8 is
    replaced and counted in ``stats`` (one document per line that had some), or with
    ``strict`` raises :class:`NBSVMError` naming file, line and byte. An open text file
    (e.g. ``io.StringIO``) is read too. ``encoding``: an ASCII-compatible codec
    (:func:`check_encoding`), its invalid bytes treated as UTF-8's.
    """
    fh, name, close = _open_binary(path_or_file)
    lineno = 0
    try:
        for raw in _byte_lines(fh):
            lineno += 1
            try:
                line = raw.decode(encoding).rstrip("\r\n")
            except UnicodeDecodeError as e:
                line = _decode_invalid(raw, e, strict, stats, name, lineno,
                                       encoding).rstrip("\r\n")
            if lineno == 1:
                line = line.lstrip("\ufeff")
            if "\r" in line:
                if lone_cr == "space":
                    line = line.replace("\r", " ")
                else:
                    pieces = line.split("\r")
                    for piece in pieces[:-1]:
                        yield piece, name, lineno
                        lineno += 1
                    line = pieces[-1]
            yield line, name, lineno
    except READ_ERRORS as e:          # e.g. a truncated or corrupt .gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None
    finally:
        if close:
            fh.close()
