r"""Bytes to text lines: opening a file, splitting it into lines, decoding with invalid bytes
counted, and the :class:`ReadStats` that records what reading replaced and skipped.

Files are read as bytes (``.gz`` decompressed, ``"-"`` standard input) and split on ``\n``
only, after one look at a file's first bytes (:func:`_byte_lines`): a file with a UTF-16
or UTF-32 byte order mark is decoded as such (a start with a NUL in every other byte and
no BOM is refused: :func:`wide_encoding`), and a file whose lines end with a lone ``\r``
(classic Mac OS: ``\r`` and no ``\n`` in its first megabyte) is split on ``\r`` too.
Text is UTF-8 (or another ASCII-compatible ``--encoding``, :func:`check_encoding`):
invalid bytes are replaced by U+FFFD (one per invalid sequence, as Python's
``errors="replace"``) and counted by a codecs error handler (:data:`COUNT_ERRORS`,
:func:`decode_counting`), or with ``strict`` refused by an :class:`~nbsvm.errors.NBSVMError`
naming the file, the line and the byte (:func:`invalid_utf8_error`). :func:`iter_lines` is
the line loop the other line formats share.
"""

from __future__ import annotations

import bz2
import codecs
import functools
import gzip
import io
import itertools
import lzma
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from nbsvm import memory
from nbsvm.errors import NBSVMError
from nbsvm.io.document import STDIN

if TYPE_CHECKING:
    from nbsvm.io.document import PathOrFile

#: What reading a damaged file raises below the readers (a corrupt or truncated ``.gz``, an
#: unreadable file or folder); the readers turn these into :class:`NBSVMError`.
READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError)
#: Compressed files read by their suffix.
DECOMPRESS: dict[str, Callable[..., Any]] = {
    ".gz": gzip.open,
    ".bz2": bz2.open,
    ".xz": lzma.open,
    ".lzma": lzma.open,
}
#: Bytes read to tell text from what is not (:func:`not_text`).
SNIFF_BYTES = 4096
#: The first bytes of files that are not text (or are compressed under another name): such
#: a file is refused, saying what it is, instead of read as lines of invalid UTF-8.
NOT_TEXT = (
    (b"\x1f\x8b", "gzip-compressed data: name it .gz"),
    (b"BZh", "bzip2-compressed data: name it .bz2"),
    (b"\xfd7zXZ\x00", "xz-compressed data: name it .xz"),
    (b"PK\x03\x04", "a zip archive (a .npz model is one): unzip it first"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data: decompress it first (zstd -d)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-zip archive: extract it first"),
    (b"\x89PNG\r\n", "a PNG image"),
    (b"%PDF-", "a PDF document: extract its text first"),
    (b"PK\x05\x06", "an empty zip archive"),
    (b"\x7fELF", "an executable program (ELF)"),
)
#: the first bytes of :data:`NOT_TEXT`'s signatures: a head starting otherwise (and not a
#: tar archive) is looked at no further (every document of a folder is)
_SIGNATURE_STARTS = frozenset(magic[:1] for magic, _ in NOT_TEXT)
#: Malformed lines named in the report of a run with ``--skip-bad-lines``.
BAD_EXAMPLES = 5
#: Bytes buffered when reading line files.
READ_BUFFER = 1 << 20
#: Bytes a file's line ends are decided on when its first buffer held no LF
LONG_HEAD = 16 << 20
#: Byte order marks of the Unicode encodings that are not ASCII-compatible, and the codec
#: that reads each (UTF-32-LE's BOM starts with UTF-16-LE's, so it is looked for first).
WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: Bytes at a file's start in which NUL bytes are counted (:func:`wide_encoding`).
NUL_SAMPLE = 4096


class ReadStats:
    """What reading replaced, skipped and noticed, filled in while documents are read.

    ``replaced_bytes``: bytes invalid in ``encoding`` (UTF-8 unless the reader was told
    otherwise) replaced by U+FFFD; ``replaced_docs``: the
    documents (lines of line formats, rows of tables, files of aclImdb) that had any.
    ``skip_bad``: skip malformed lines (counted in ``bad_lines``, the first
    :data:`BAD_EXAMPLES` described in ``bad_examples``) instead of stopping at the first.
    ``notes``: what a reader decided on the user's behalf (a header line skipped, lines
    read as whole documents), one sentence each.
    """

    __slots__ = (
        "replaced_bytes",
        "replaced_docs",
        "skip_bad",
        "bad_lines",
        "bad_examples",
        "notes",
        "encoding",
        "hint",
    )

    def __init__(self, skip_bad: bool = False, encoding: str = "utf-8", hint: bool = True):
        self.encoding = encoding  # what replaced bytes were invalid as
        self.hint = hint  # the command has --skip-bad-lines: a malformed line says so
        self.replaced_bytes = 0
        self.replaced_docs = 0
        self.skip_bad = skip_bad
        self.bad_lines = 0
        self.bad_examples: list[str] = []
        self.notes: list[str] = []

    def bad(self, message: str, path: str, line: int | None = None) -> None:
        """A malformed line: raise (naming file and line) unless bad lines are skipped."""
        if not self.skip_bad:
            raise NBSVMError(
                message + (" (--skip-bad-lines skips such lines and counts them)" * self.hint),
                path=path,
                line=line,
            )
        self.bad_lines += 1
        if len(self.bad_examples) < BAD_EXAMPLES:
            self.bad_examples.append(str(NBSVMError(message, path=path, line=line)))

    def note(self, sentence: str) -> None:
        if sentence not in self.notes:
            self.notes.append(sentence)

    def add(self, n_bytes: int, n_docs: int = 1) -> None:
        if n_bytes:
            self.replaced_bytes += n_bytes
            self.replaced_docs += n_docs

    def __repr__(self) -> str:
        return (
            f"ReadStats(replaced_bytes={self.replaced_bytes}, replaced_docs="
            f"{self.replaced_docs}, bad_lines={self.bad_lines})"
        )


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

    ``utf-8-sig`` is UTF-8: every reader drops a UTF-8 byte order mark whatever the
    encoding (Python's name for "UTF-8 with a BOM" was refused: its encoder writes one).

    >>> check_encoding("Latin-1"), check_encoding("utf8"), check_encoding("UTF-8-SIG")
    ('iso8859-1', 'utf-8', 'utf-8')
    """
    try:
        name = codecs.lookup(encoding).name
        name = "utf-8" if name == "utf-8-sig" else name
        ok = "\n\t a,".encode(name) == b"\n\t a,"
        # a codec that takes no error handler (idna) fails every reader that replaces
        # invalid bytes: refused here, not a traceback from pandas
        b"\n\t a,\xff".decode(name, "replace")
    except (LookupError, TypeError, UnicodeError):
        ok = False
    if not ok:
        raise NBSVMError(
            f"unknown or unusable --encoding {encoding!r}: give an ASCII-compatible "
            "one such as utf-8 (the default), latin-1 or cp1252"
        )
    return name


def invalid_utf8_error(
    raw: bytes,
    exc: UnicodeDecodeError,
    name: str,
    line: int | None,
    line_start: int = 0,
    encoding: str = "utf-8",
) -> NBSVMError:
    """The strict-mode error for ``exc`` raised decoding ``raw`` (a line, or a whole file
    when ``line_start`` is where the line begins in it)."""
    bad = raw[exc.start : exc.end]
    what = "UTF-8" if encoding == "utf-8" else encoding
    return NBSVMError(
        f"invalid {what} at byte {exc.start - line_start + 1} of the line "
        f"(0x{bad.hex()}); without --strict invalid bytes are replaced by "
        "U+FFFD and counted",
        path=name,
        line=line,
    )


def _open_binary(path_or_file) -> tuple[IO, str, bool]:
    """(file, its name, whether we opened it): ``"-"`` is standard input, ``.gz``, ``.bz2``
    and ``.xz`` files are decompressed, other input that is not text refused
    (:func:`_refuse_not_text`); an open file (text or binary) is used as it is."""
    if hasattr(path_or_file, "read"):
        return path_or_file, str(getattr(path_or_file, "name", "<stream>")), False
    if isinstance(path_or_file, str) and path_or_file == STDIN:
        _refuse_not_text(sys.stdin.buffer, "<stdin>")
        return sys.stdin.buffer, "<stdin>", False
    path = Path(path_or_file)
    if not path.exists():
        raise NBSVMError("no such file", path=str(path))
    if path.is_dir():
        raise NBSVMError("is a folder, expected a file", path=str(path))
    try:
        # lines are read from a 1 MB buffer: twice as fast as the default 8 KB on reviews
        opener = DECOMPRESS.get(path.suffix.lower())
        if opener is not None:
            return io.BufferedReader(opener(path, "rb"), READ_BUFFER), str(path), True
        fh = open(path, "rb", buffering=READ_BUFFER)
    except OSError as e:
        raise NBSVMError(f"cannot read: {e.strerror or e}", path=str(path)) from None
    try:
        _refuse_not_text(fh, str(path))
    except BaseException:
        fh.close()
        raise
    return fh, str(path), True


def _refuse_not_text(fh: IO[bytes], name: str) -> None:
    """Refuse input that is not text (:func:`not_text`), seen through the reader's own
    buffer (``peek`` takes no bytes: a pipe loses none): read as lines, its bytes became
    documents of replaced characters, and a model or predictions of nothing."""
    peek = getattr(fh, "peek", None)
    what = not_text(peek(SNIFF_BYTES)[:SNIFF_BYTES]) if peek is not None else None
    if what:
        raise NBSVMError(f"not a text file: {what}", path=name)


def not_text(head: bytes) -> str | None:
    """What ``head`` (a file's first bytes) is when it starts with the signature of a
    compressed file, an archive or an image (:data:`NOT_TEXT`) and is not text (a NUL
    byte, or invalid UTF-8): a line of text that happens to start with ``%PDF-`` or
    ``BZh9`` is text."""
    tar = head[257:262] == b"ustar"
    if head[:1] not in _SIGNATURE_STARTS and not tar:
        return None
    what = next((w for magic, w in NOT_TEXT if head.startswith(magic)), None)
    if what is None and tar:  # a tar header's magic, after the name
        what = "a tar archive: extract it first (Blitzer's archive: --format blitzer reads it)"
    if what is None:
        return None
    try:  # a multi-byte character cut at the end of the head is not an error
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return what
    return what if b"\x00" in head else None


def wide_encoding(head: bytes, name: str) -> str | None:
    """``"utf-16"`` or ``"utf-32"`` when ``head`` (a file's first bytes) starts with their
    byte order mark; None for text in an ASCII-compatible encoding.

    Read as UTF-8, such a file held a NUL in every other byte: one line with a stray
    ``\\n\\x00`` byte pair, or classes like ``\\x00n\\x00e\\x00g\\x00``. With a BOM the codec is
    known and the file is decoded; without one the byte order is a guess, so a start of
    which a quarter or more is NUL bytes (no text in an ASCII-compatible encoding has
    that many) is refused, saying how to convert the file.

    >>> wide_encoding(b"\\xff\\xfep\\x00", "f"), wide_encoding(b"pos\\tgood", "f")
    ('utf-16', None)
    """
    for bom, codec in WIDE_BOMS:
        if head.startswith(bom):
            return codec
    sample = head[:NUL_SAMPLE]
    nul = sample.count(0)
    if nul >= 2 and 4 * nul >= len(sample):
        what = not_text(head)  # an archive's header is mostly NUL too
        if what:
            raise NBSVMError(f"not a text file: {what}", path=name)
        raise NBSVMError(
            f"looks like UTF-16 or UTF-32 text without a byte order mark ({nul} "
            f"of its first {len(sample)} bytes are NUL): convert it to UTF-8 "
            "(e.g. iconv -f UTF-16LE -t UTF-8 FILE > NEW), or save it with a "
            "BOM",
            path=name,
        )
    return None


def _peek(fh, size: int = READ_BUFFER) -> bytes:
    """Up to ``size`` first bytes of a binary file without consuming them (what one read of
    its buffer gives; b"" for a stream that can neither peek nor seek)."""
    if hasattr(fh, "peek"):
        return fh.peek(size)[:size]
    if getattr(fh, "seekable", lambda: False)():
        start = fh.tell()
        try:
            return fh.read(size) or b""
        finally:
            fh.seek(start)
    return b""


def _a_pipe(fh) -> bool:
    """Whether ``fh`` is a stream whose first read can stop short (a pipe, not a terminal,
    where waiting for more would stall a person typing)."""
    try:
        return not fh.seekable() and not fh.isatty()
    except (OSError, ValueError):
        return False


class _Replayed(io.RawIOBase):
    """``head`` (bytes read from ``rest`` already), then the rest of ``rest``."""

    def __init__(self, head: bytes, rest):
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if len(self._head):
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._rest.readinto(b)


def _whole_head(fh, size: int = READ_BUFFER) -> tuple[io.BufferedReader, bytes]:
    """A pipe's first ``size`` bytes (or all it holds), read whole and given back in front
    of the rest: whether its lines end with lone CRs is then decided on what a file's would
    be, not on what the writer's first write held (a first line with CRs inside, written
    alone, had split every line at its CRs)."""
    head = fh.read(size) or b""
    return io.BufferedReader(_Replayed(head, fh), READ_BUFFER), head


def _longer_head(fh) -> tuple:
    """``(fh, head)``: up to :data:`LONG_HEAD` first bytes of ``fh``, to decide on when the
    first buffer held lone CRs and no LF (a first line longer than the buffer with CRs
    inside had split at them: one document as three); a stream that cannot seek is given
    back whole (:func:`_whole_head`)."""
    if not getattr(fh, "seekable", lambda: False)():
        return _whole_head(fh, LONG_HEAD)
    start = fh.tell()
    try:
        return fh, fh.read(LONG_HEAD) or b""
    finally:
        fh.seek(start)


def _cr_only(head: bytes) -> bool:
    """Whether a file starting with ``head`` ends its lines with a lone CR (classic Mac OS):
    no LF in its first bytes (a megabyte for files), and CRs that end lines: at least two,
    or one at its end. One CR inside a single line of text (``printf 'great\\rfilm' |``)
    is a space, as a lone CR inside a line is anywhere, so that it never splits a document.

    >>> _cr_only(b"pos\\tgood\\rneg\\tbad\\r"), _cr_only(b"great\\rbut dull"), _cr_only(b"a\\r\\n")
    (True, False, False)
    """
    if b"\n" in head:
        return False
    crs = head.count(b"\r")
    return crs > 1 or (crs == 1 and head.endswith(b"\r"))


def _cr_ends(head: bytes) -> bool:
    """Whether lines of a file starting with ``head`` end with lone CRs: CR-only files
    (:func:`_cr_only`), and those with at most two LFs (a header's, a last line's) and
    more than twice as many lone CRs. Any LF had made the whole file LF-ended: 40 reviews
    with CR ends and a final CRLF were one document, a header's LF and CR rows two. A lone
    CR inside LF lines stays a space (one in each line of a two-line file as well), and a
    CR before a CRLF (``\\r\\r\\n``) ends nothing.

    >>> _cr_ends(b"a\\rb\\rc\\rd\\r\\n"), _cr_ends(b"h\\na\\rb\\rc\\r"), _cr_ends(b"a\\r\\r\\nb\\r\\r\\n")
    (True, True, False)
    >>> _cr_ends(b"pos\\tgreat\\rfun\\nneg\\tawful\\rdull\\n")
    False
    """
    if _cr_only(head):
        return True
    lone = head.count(b"\r") - head.count(b"\r\n") - head.count(b"\r\r\n")
    lfs = head.count(b"\n")
    return lfs <= 2 and lone >= 2 and lone > 2 * lfs


def _universal_lines(fh) -> Iterator[bytes]:
    """The lines of a binary file ending with CR, CRLF or LF (Python's universal newlines),
    each with its end; a CRLF cut between two reads stays one line end."""
    pending = bytearray()
    while True:
        chunk = fh.read(READ_BUFFER)
        if not chunk:
            break
        if pending.endswith(b"\r"):  # a complete line, unless LF follows
            if chunk.startswith(b"\n"):
                pending += b"\n"
                chunk = chunk[1:]
            yield bytes(pending)
            pending = bytearray()
        lines = chunk.splitlines(keepends=True)
        if not lines:
            continue
        pending += lines.pop(0)
        if lines:
            yield bytes(pending)
            pending = bytearray(lines.pop())
            yield from lines
        if pending.endswith(b"\n"):
            yield bytes(pending)
            pending = bytearray()
    if pending:
        yield bytes(pending)


def _mark_invalid(exc):
    """Decoding a UTF-16/32 file: an invalid sequence becomes a lone surrogate that encodes
    back (``surrogateescape``) to one invalid UTF-8 byte, 0xff, so the line loop counts it or,
    with ``strict``, refuses it naming the line, as it does invalid UTF-8."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "\udcff", exc.end


codecs.register_error("nbsvm-mark-invalid", _mark_invalid)


def _wide_lines(fh, codec: str) -> Iterator[bytes]:
    """The lines of a UTF-16/32 file (``codec`` reads its BOM) as UTF-8 bytes: split on
    ``\\n`` as other files are, or on any line end for one whose lines end with a lone CR.
    The file is detached from the decoder at the end (standard input stays open)."""
    raw = _peek(fh)
    if len(raw) >= READ_BUFFER and b"\r" in raw and "\n" not in raw.decode(codec, "replace"):
        fh, raw = _longer_head(fh)  # a first line longer than the buffer, CRs inside?
    head = raw.decode(codec, "replace")
    newline = None if "\r" in head and "\n" not in head else "\n"
    text = io.TextIOWrapper(fh, encoding=codec, errors="nbsvm-mark-invalid", newline=newline)
    try:
        for line in text:
            yield line.encode("utf-8", "surrogateescape")
    finally:
        if not fh.closed:  # else closed by its reader already
            text.detach()


def longest_line() -> int | None:
    """The longest line read: one whose document could be hashed in the memory available,
    within the run's ``--max-memory`` (:func:`nbsvm.memory.reading_bytes`;
    :data:`nbsvm.memory.SCRATCH_PER_BYTE` bytes a byte), at least
    :data:`nbsvm.memory.CHECKED_DOCUMENT_BYTES`; None where neither is known."""
    available = memory.reading_bytes()
    if available is None:
        return None
    return max(available // memory.SCRATCH_PER_BYTE, memory.CHECKED_DOCUMENT_BYTES)


class LineTooLong(NBSVMError):
    """A line over the longest read (:func:`longest_line`); its reader names the line as it
    counts lines (a lone CR ends one in the numeric formats)."""

    def __init__(self, limit: int, path: str, line: int):
        budget = memory.reading_budget()
        of = (
            f"--max-memory less the {memory.human(memory.FIXED_BYTES)} a run holds"
            if budget is not None and limit * memory.SCRATCH_PER_BYTE >= budget
            else "the memory available"
        )
        super().__init__(
            f"a line of more than {memory.human(limit)}, a twentieth of {of} "
            f"(hashing a document takes about {memory.SCRATCH_PER_BYTE} times its bytes): "
            "split it into documents or rows",
            path=path,
            line=line,
        )
        self.limit = limit


def _capped_lines(fh, name: str, limit: int) -> Iterator[bytes]:
    """The lines of a binary file, each read only up to ``limit`` bytes: a longer one is
    refused, naming it, before it is held whole (a 192 MB line took 744 MB to read,
    decode and strip before the document check refused it)."""
    for lineno, raw in enumerate(iter(functools.partial(fh.readline, limit + 1), b""), 1):
        if len(raw) > limit:
            raise LineTooLong(limit, name, lineno)
        yield raw


def _byte_lines(fh, name: str = "<stream>", encoding: str = "utf-8") -> tuple[Iterator[bytes], str]:
    """The lines of ``fh`` as bytes, and the codec that decodes them (``encoding``, or
    UTF-8 for lines decoded here). A binary file's first bytes are looked at once: a UTF-16
    or UTF-32 BOM decodes it (:func:`wide_encoding`; NUL-filled text without one is
    refused), and lines ending with a lone CR split on it (:func:`_cr_ends`). Every other
    file is read line by line, each line up to :func:`longest_line` bytes (UTF-16/32 and
    CR-only files are not capped). An open text file's lines are encoded back."""
    if isinstance(fh, (io.BufferedIOBase, io.RawIOBase)):
        head = _peek(fh)
        wide = wide_encoding(head, name)
        if wide is not None:
            return _wide_lines(fh, wide), "utf-8"
        if _cr_ends(head) and len(head) < READ_BUFFER and _a_pipe(fh):
            fh, head = _whole_head(fh)  # a pipe's first write alone: decide on more
        if _cr_ends(head) and len(head) >= READ_BUFFER and b"\n" not in head:
            fh, head = _longer_head(fh)  # a first line longer than the buffer?
        if _cr_ends(head):
            return _universal_lines(fh), encoding
        limit = longest_line()
        return (fh if limit is None else _capped_lines(fh, name, limit)), encoding
    byte_lines = getattr(fh, "byte_lines", None)  # a tar member (nbsvm.io.blitzer)
    if byte_lines is not None:
        return byte_lines(), encoding
    it = iter(fh)
    for first in it:
        if isinstance(first, bytes):
            return itertools.chain((first,), it), encoding
        return (s.encode("utf-8", "surrogatepass") for s in itertools.chain((first,), it)), "utf-8"
    return iter(()), encoding


def _decode_invalid(
    raw: bytes,
    exc: UnicodeDecodeError,
    strict: bool,
    stats: ReadStats | None,
    name: str,
    lineno: int,
    encoding: str = "utf-8",
) -> str:
    """A line that is not valid in ``encoding``: refused (``strict``) or replaced and
    counted."""
    if strict:
        raise invalid_utf8_error(raw, exc, name, lineno, encoding=encoding)
    text, n_bad = decode_counting(raw, encoding)
    if stats is not None:
        stats.add(n_bad)
    return text


def iter_lines(
    path_or_file: PathOrFile,
    strict: bool = False,
    stats: ReadStats | None = None,
    lone_cr: str = "space",
    encoding: str = "utf-8",
) -> Iterator[tuple[str, str, int]]:
    """``(line without its end, source name, 1-based line number)`` of a text file.

    Bytes are split on ``\\n`` (on any line end in a file whose lines end with a lone
    ``\\r``; a UTF-16/32 file with a BOM is decoded: :func:`_byte_lines`); the line end
    (``\\n``, ``\\r\\n``) is removed and a UTF-8 BOM starting any line dropped. A lone ``\\r``
    left inside a line becomes a space (``lone_cr="space"``: it never splits a document)
    or, with ``lone_cr="newline"``, ends a line as in Python's universal newlines (the
    numeric formats, one example per line). Invalid UTF-8 is replaced and counted in
    ``stats`` (one document per line that had some), or with ``strict`` raises
    :class:`NBSVMError` naming file, line and byte. An open text file (e.g.
    ``io.StringIO``) is read too. ``encoding``: an ASCII-compatible codec
    (:func:`check_encoding`), its invalid bytes treated as UTF-8's.
    """
    fh, name, close = _open_binary(path_or_file)
    lineno = 0
    try:
        lines, encoding = _byte_lines(fh, name, encoding)
        for raw in lines:
            lineno += 1
            # a UTF-8 BOM, whatever ``encoding`` says (latin-1: 'ï»¿pos'), on any line: the
            # files that `cat a.txt b.txt` joins bring theirs ('\ufeffpos' became a class)
            raw = raw.removeprefix(codecs.BOM_UTF8)
            try:
                line = raw.decode(encoding).rstrip("\r\n")
            except UnicodeDecodeError as e:
                line = _decode_invalid(raw, e, strict, stats, name, lineno, encoding).rstrip("\r\n")
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
    except READ_ERRORS as e:  # e.g. a truncated or corrupt .gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None
    except LineTooLong as e:  # named by this loop's count (CR pieces are lines here)
        raise LineTooLong(e.limit, name, lineno + 1) from None
    finally:
        if close:
            fh.close()


def valid_unicode(text: str) -> str:
    """JSON (and a Python string) may hold lone surrogates (``"\\ud800"``) that no UTF-8
    text holds: they become U+FFFD, as undecodable bytes do where files are read, so that
    a text scores the same through the server, a JSON lines file and the Python API (and a
    label never breaks an output file)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
