"""Readers for labeled text: aclImdb folders, ``label<TAB>text`` lines, CSV/TSV tables.

Every reader is a generator over a path (or an open file for line formats; ``"-"`` is
standard input) and yields :class:`Document` records one at a time, so memory does not
depend on the corpus size.

Text is UTF-8. Invalid bytes are replaced by U+FFFD (one per invalid sequence, as Python's
``errors="replace"``) and counted in a :class:`ReadStats`; with ``strict=True`` the first
one raises :class:`~nbsvm.errors.NBSVMError` naming the file, the line and the byte in the
line. Files are read as bytes and split on ``\n`` only: a line's ``\r\n`` or ``\n`` end is
removed, a UTF-8 BOM on the first line is dropped, and a lone ``\r`` inside a line is white
space in the text (a space), not a line end, so it never splits a document in two.

Labels: surrounding white space is removed (``" pos "`` is ``pos``) and case is kept, but
:func:`read_inputs` refuses a label that differs only in case from one seen before
(``POS`` after ``pos`` would silently become a class of its own), naming the file, the
line and both spellings.
"""
from __future__ import annotations

import codecs
import gzip
import io
import itertools
import os
import re
import sys
import threading
import zlib
from pathlib import Path
from typing import IO, Iterable, Iterator, NamedTuple

from nbsvm.errors import NBSVMError

#: What reading a damaged file raises below the readers (a corrupt or truncated ``.gz``, an
#: unreadable file or folder); the readers turn these into :class:`NBSVMError`.
READ_ERRORS = (OSError, EOFError, zlib.error)

#: Input formats of text documents. ``labeled-lines``: ``label<TAB>text`` per line;
#: ``plain-lines``: one unlabeled document per line; ``csv`` / ``tsv``: a table whose first
#: row names the columns; ``folders``: one sub-folder per class, one file per document.
FORMATS = ("auto", "folders", "labeled-lines", "plain-lines", "csv", "tsv")
#: The older names, still accepted.
FORMAT_ALIASES = {"aclimdb": "folders", "lines": "labeled-lines", "text": "plain-lines"}
#: What the formats are, for help texts and errors.
FORMAT_HELP = ("auto (a folder: folders; .csv: csv; else labeled-lines, whose header line "
               "label<TAB>text is skipped), "
               "folders (one sub-folder per class), labeled-lines (label<TAB>text per line), "
               "plain-lines (one unlabeled document per line), csv / tsv (a table with a "
               "header row); old names: aclimdb, lines, text")
#: Several ``--text-col`` columns are joined with this: the tokenizer sees ``|`` as a token
#: of its own, so no n-gram runs from the end of one column into the next.
COLUMN_SEPARATOR = " | "
#: Names a first line is read as column names by (with the --label-col / --text-col ones):
#: ``label<TAB>text`` on line 1 of a labeled-lines file is a header, not a document.
LABEL_HEADERS = frozenset({"label", "labels", "class", "category", "categories", "target", "y",
                           "sentiment", "polarity", "tag", "tags", "topic", "intent"})
TEXT_HEADERS = frozenset({"text", "texts", "document", "doc", "review", "sentence", "body",
                          "content", "message", "comment", "tweet", "x"})
#: Malformed lines named in the report of a run with ``--skip-bad-lines``.
BAD_EXAMPLES = 5


def normalize_format(fmt: str) -> str:
    """The format's current name (old names are aliases); unknown names are refused.

    >>> normalize_format("lines"), normalize_format("plain-lines")
    ('labeled-lines', 'plain-lines')
    """
    name = FORMAT_ALIASES.get(fmt, fmt)
    if name not in FORMATS:
        raise NBSVMError(f"unknown format {fmt!r}; allowed: {FORMAT_HELP}")
    return name


class Document(NamedTuple):
    """One document: its label (``None`` when unlabeled), text, and where it came from."""

    label: str | None
    text: str
    source: str
    line: int


#: The name that means standard input where a file name is expected.
STDIN = "-"
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
               lone_cr: str = "space") -> Iterator[tuple[str, str, int]]:
    """``(line without its end, source name, 1-based line number)`` of a text file.

    Bytes are split on ``\\n``; the line end (``\\n``, ``\\r\\n``) is removed and a BOM on the
    first line dropped. A lone ``\\r`` left inside a line becomes a space (``lone_cr="space"``:
    it never splits a document) or, with ``lone_cr="newline"``, ends a line as in Python's
    universal newlines (the numeric formats, one example per line). Invalid UTF-8 is
    replaced and counted in ``stats`` (one document per line that had some), or with
    ``strict`` raises :class:`NBSVMError` naming file, line and byte. An open text file
    (e.g. ``io.StringIO``) is read too.
    """
    fh, name, close = _open_binary(path_or_file)
    lineno = 0
    try:
        for raw in _byte_lines(fh):
            lineno += 1
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                line = _decode_invalid(raw, e, strict, stats, name, lineno).rstrip("\r\n")
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


def header_columns(line: str, label_col: str | None = "label",
                   text_col=("text",)) -> list[str] | None:
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


def _skip_header(line: str, name: str, label_col, text_col, stats: ReadStats) -> bool:
    """Whether the first line ``line`` is a header to skip; a header of other columns than
    ``label<TAB>text`` is an error saying how to read the file as a table."""
    fields = header_columns(line, label_col, text_col)
    if fields is None:
        return False
    labels = LABEL_HEADERS | ({label_col.casefold()} if label_col else set())
    if len(fields) == 2 and fields[0].casefold() in labels:
        stats.note(f"{name}:1: skipped a header line ({' / '.join(fields)}: column names, "
                   "not a document)")
        return True
    raise NBSVMError(f"the first line looks like a header row (columns: {', '.join(fields)}); "
                     "read the file as a table with --format tsv (--label-col and --text-col "
                     "choose the columns)", path=name, line=1)


def read_lines(path_or_file, labeled: bool = True, strict: bool = False,
               stats: ReadStats | None = None, known_labels=None, label_col: str | None = "label",
               text_col=("text",), encoding: str = "utf-8",
               empty_label: bool = False) -> Iterator[Document]:
    """Read ``label<TAB>text`` lines (NBSVM-XL's format); blank lines are skipped.

    The label is stripped of surrounding white space; the text is kept as it is, but for
    a lone ``\\r`` in it, which becomes a space. Line ends, the BOM and invalid UTF-8
    (``strict``, ``stats``) as in :func:`iter_lines` (the same loop, inlined for speed).
    A first line of column names (``label<TAB>text``, see :func:`header_columns`) is
    skipped and noted in ``stats``. A line without a TAB or with an empty label is
    malformed: an error naming file and line, or skipped and counted when
    ``stats.skip_bad``.

    ``labeled=False``: every line is one unlabeled document, unless ``known_labels`` (a
    model's classes) is given: then a line ``label<TAB>text`` whose label is one of them
    keeps it as its true label, and any other line, TABs and all, is one unlabeled document
    (how many had a TAB is noted in ``stats``). ``encoding``: an ASCII-compatible codec
    (:func:`check_encoding`; invalid bytes as for UTF-8). ``empty_label``: an empty label
    is a document's (an empty label set, ``--multilabel``), not a malformed line.

    Examples
    --------
    >>> import io
    >>> [d.label for d in read_lines(io.StringIO("pos\\tgreat\\n neg \\tawful\\n"))]
    ['pos', 'neg']
    """
    if stats is None:
        stats = ReadStats()
    encoding = check_encoding(encoding)
    split = labeled or known_labels is not None
    known = known_labels if isinstance(known_labels, frozenset) or known_labels is None \
        else frozenset(known_labels)
    tab_unknown = 0
    first = True
    fh, name, close = _open_binary(path_or_file)
    try:
        for lineno, raw in enumerate(_byte_lines(fh), 1):
            try:
                line = raw.decode(encoding).rstrip("\r\n")
            except UnicodeDecodeError as e:
                line = _decode_invalid(raw, e, strict, stats, name, lineno,
                                       encoding).rstrip("\r\n")
            if "\r" in line:
                line = line.replace("\r", " ")
            if lineno == 1:
                line = line.lstrip("\ufeff")
            if not line.strip():
                continue
            if first:
                first = False
                if split and lineno == 1 and "\t" in line \
                        and _skip_header(line, name, label_col, text_col, stats):
                    continue
            if not split:
                yield Document(None, line, name, lineno)
                continue
            label, sep, text = line.partition("\t")
            label = label.strip()
            if known is not None:
                if sep and label in known:
                    yield Document(label, text, name, lineno)
                else:
                    tab_unknown += bool(sep)
                    yield Document(None, line, name, lineno)
                continue
            if not sep:
                stats.bad("expected 'label<TAB>text', found no TAB (a file of unlabeled "
                          "documents, one per line, is read with --format plain-lines)",
                          name, lineno)
                continue
            if not label and not empty_label:
                stats.bad("empty label before the TAB", name, lineno)
                continue
            yield Document(label, text, name, lineno)
    except READ_ERRORS as e:          # e.g. a truncated or corrupt .gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None
    finally:
        if close:
            fh.close()
    if tab_unknown:
        shown = ", ".join(sorted(map(str, known))[:10])
        stats.note(f"{name}: {tab_unknown} line{'s' * (tab_unknown != 1)} with a TAB whose "
                   f"first field is not one of the model's classes ({shown}) read whole, as "
                   "unlabeled documents (--format labeled-lines reads every line as "
                   "label<TAB>text)")


def read_text_lines(path_or_file, strict: bool = False, stats: ReadStats | None = None,
                    encoding: str = "utf-8") -> Iterator[Document]:
    """Read one unlabeled document per line (for ``predict``)."""
    return read_lines(path_or_file, labeled=False, strict=strict, stats=stats,
                      encoding=encoding)


def is_document(entry: os.DirEntry) -> bool:
    """Whether an entry of a class folder is a document: a regular file (links followed)
    whose name does not start with a dot (``.DS_Store`` is not a review). Any suffix, as
    scikit-learn's ``load_files``: 20 Newsgroups' messages have none."""
    return not entry.name.startswith(".") and entry.is_file()


def document_names(folder) -> list[str]:
    """The documents of a class folder (:func:`is_document`), in name order."""
    with os.scandir(folder) as entries:
        return sorted(e.name for e in entries if is_document(e))


def label_folders(root: Path) -> list[Path]:
    """The class folders of a ``folders`` input: every sub-folder but ``unsup`` (aclImdb's
    unlabeled reviews) and hidden ones, in name order."""
    folders = sorted(p for p in root.iterdir()
                     if p.is_dir() and p.name != "unsup" and not p.name.startswith("."))
    split = next((f for f in folders if f.name in ("train", "test")
                  and any(p.is_dir() for p in f.iterdir())), None)
    if split is not None:
        raise NBSVMError(f"this is the aclImdb root; give a split folder such as {split}",
                         path=str(root))
    if not folders:
        raise NBSVMError("expected one sub-folder per label (e.g. pos/ and neg/)", path=str(root))
    return folders


def read_aclimdb(root, labeled: bool = True, strict: bool = False,
                 stats: ReadStats | None = None, encoding: str = "utf-8") -> Iterator[Document]:
    """Read a folder of class folders (aclImdb's ``train/``, 20 Newsgroups' bydate
    folders): one sub-folder per label, one file per document (:func:`is_document`: any
    regular file but hidden ones; sub-folders inside a class folder are not read).

    Files are read in name order and the label folders are interleaved round-robin, so a
    single streaming pass sees the classes mixed (the official layout is sorted by label).
    The unlabeled ``unsup`` folder is skipped. A document's line ends become ``\\n``, a BOM
    is dropped; text is decoded with ``encoding`` (``latin-1`` for 20 Newsgroups), invalid
    bytes replaced and counted in ``stats`` or, with ``strict``, an error naming the file,
    the line in it and the byte.
    """
    root = Path(root)
    if not root.is_dir():
        raise NBSVMError("no such folder", path=str(root))
    encoding = check_encoding(encoding)
    try:
        folders = label_folders(root)
        listings = []
        for folder in folders:
            listings.append((folder.name, folder, document_names(folder)))
    except OSError as e:               # e.g. a folder that cannot be listed
        raise NBSVMError(f"cannot read: {e.strerror or e}", path=e.filename or str(root)) from None
    longest = max(len(names) for _, _, names in listings)
    for i in range(longest):
        for label, folder, names in listings:
            if i < len(names):
                path = folder / names[i]
                try:
                    with open(path, "rb") as fh:
                        raw = fh.read()
                except OSError as e:    # e.g. a folder named like a review, no permission
                    raise NBSVMError(f"cannot read: {e.strerror or e}", path=str(path)) from None
                try:
                    text = raw.decode(encoding)
                except UnicodeDecodeError as e:
                    if strict:
                        start = raw.rfind(b"\n", 0, e.start) + 1
                        raise invalid_utf8_error(raw, e, str(path), raw.count(b"\n", 0, start) + 1,
                                                 start, encoding) from None
                    text, n_bad = decode_counting(raw, encoding)
                    if stats is not None:
                        stats.add(n_bad)
                if "\r" in text:       # universal newlines, as reading in text mode did
                    text = text.replace("\r\n", "\n").replace("\r", "\n")
                text = text.lstrip("\ufeff").rstrip("\n")
                yield Document(label if labeled else None, text, str(path), 1)


def read_table(path, text_col="text", label_col: str | None = "label", sep: str = ",",
               chunksize: int = 10_000, strict: bool = False, stats: ReadStats | None = None,
               label_optional: bool = False, encoding: str = "utf-8",
               empty_label: bool = False) -> Iterator[Document]:
    """Read a CSV/TSV file (path, open file or ``"-"``) with a header through pandas in chunks.

    ``label_col=None`` reads unlabeled text; with ``label_optional`` a missing label column
    reads as unlabeled too (``predict`` keeps true labels when there are some). Labels are
    stripped of surrounding white space. Row numbers in errors count the header as line 1
    (exact for files without quoted multi-line fields). Invalid UTF-8 is replaced and
    counted in ``stats`` (the rows whose text or label then holds U+FFFD are the documents
    counted), or with ``strict`` raises :class:`NBSVMError` naming the file and the line.

    ``text_col``: a column name, or several whose texts are joined with
    :data:`COLUMN_SEPARATOR` (a title and a body). A row with an empty label, or (when
    ``stats.skip_bad``) with more fields than the header, is malformed: an error naming
    the line, or skipped and counted.
    """
    if stats is None:
        stats = ReadStats()
    text_cols = _columns(text_col)
    encoding = check_encoding(encoding)
    if not text_cols or len(set(text_cols)) != len(text_cols):
        raise NBSVMError(f"--text-col names each column once; got {text_cols}")
    if hasattr(path, "read"):
        source, name = path, str(getattr(path, "name", "<stream>"))
    elif isinstance(path, str) and path == STDIN:
        source, name = sys.stdin.buffer, "<stdin>"
    else:
        source = name = str(path)
        if not Path(path).is_file():
            raise NBSVMError("no such file", path=name)
    import pandas as pd     # only CSV/TSV input needs pandas (it costs ~60 MB to import)

    kind = "TSV" if sep == "\t" else "CSV"
    try:
        before = _replaced_so_far()
        chunks = pd.read_csv(source, sep=sep, chunksize=chunksize, dtype=str, keep_default_na=False,
                             encoding=encoding, encoding_errors="strict" if strict else COUNT_ERRORS,
                             on_bad_lines="warn" if stats.skip_bad else "error")
        row = 1
        skipped: set[int] = set()       # lines pandas dropped: the row count steps over them
        for chunk in _chunks_noting_bad_rows(chunks, stats, name, pd, skipped):
            if row == 1 and label_optional and label_col and label_col not in chunk.columns:
                label_col = None
            usecols = text_cols + ([label_col] if label_col else [])
            missing = [c for c in usecols if c not in chunk.columns]
            if missing:
                raise NBSVMError(f"missing column(s) {missing}; the file has {list(chunk.columns)} "
                                 "(choose with --text-col / --label-col)", path=name, line=1)
            texts = chunk[text_cols[0]].tolist()
            for col in text_cols[1:]:
                texts = [a + COLUMN_SEPARATOR + b for a, b in zip(texts, chunk[col].tolist())]
            labels = chunk[label_col].tolist() if label_col else [None] * len(texts)
            n_bad = _replaced_so_far() - before
            if n_bad:
                before += n_bad
                if stats is not None:
                    stats.add(n_bad, sum(1 for t, lab in zip(texts, labels)
                                         if "\ufffd" in t or (lab is not None and "\ufffd" in lab)))
            for text, label in zip(texts, labels):
                row += 1
                while row in skipped:
                    row += 1
                if label is not None:
                    label = label.strip()
                    if not label and not empty_label:
                        stats.bad(f"empty label in column {label_col!r}", name, row)
                        continue
                yield Document(label, text, name, row)
    except pd.errors.EmptyDataError:
        raise NBSVMError("empty file (expected a header row)", path=name) from None
    except pd.errors.ParserError as e:
        raise NBSVMError(f"cannot parse as {kind}: {e}", path=name, line=_parser_line(e)) from None
    except UnicodeDecodeError as e:   # strict: find the line again (only files can be re-read)
        where = None if source is not name else _first_invalid_utf8(name)
        if where is None:
            raise NBSVMError(f"invalid UTF-8 (0x{e.object[e.start:e.end].hex()}); without "
                             "--strict invalid bytes are replaced by U+FFFD and counted",
                             path=name) from None
        raise where from None
    except READ_ERRORS as e:          # e.g. a truncated or corrupt .csv.gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None


def _chunks_noting_bad_rows(chunks, stats: ReadStats, name: str, pd, skipped: set) -> Iterator:
    """The chunks of a pandas reader; with ``stats.skip_bad`` the rows pandas skipped (its
    ``on_bad_lines="warn"`` warnings: ``Skipping line N: expected 2 fields, saw 3``) are
    counted and named in ``stats`` and their line numbers added to ``skipped``. Warnings
    are caught only while a chunk is parsed."""
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
                skipped.add(int(line))
                stats.bad(f"malformed row ({why})", name, int(line))
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


def detect_format(path) -> str:
    """``folders`` for a folder, ``csv`` for ``.csv``, else ``labeled-lines``
    (label<TAB>text; also for ``"-"``, standard input)."""
    if isinstance(path, str) and path == STDIN:
        return "labeled-lines"
    p = Path(path)
    if p.is_dir():
        return "folders"
    if p.suffix.lower() == ".csv":
        return "csv"
    return "labeled-lines"


def _name(src) -> str:
    if hasattr(src, "read"):
        return str(getattr(src, "name", "<stream>"))
    return "<stdin>" if isinstance(src, str) and src == STDIN else str(src)


def read_inputs(inputs: Iterable, fmt: str = "auto", labeled: bool = True, text_col="text",
                label_col: str | None = "label", strict: bool = False,
                stats: ReadStats | None = None, known_labels=None,
                encoding: str = "utf-8", empty_label: bool = False) -> Iterator[Document]:
    """Chain the documents of several inputs, choosing each reader by ``fmt`` (a name of
    :data:`FORMATS` or an old alias).

    With ``labeled=False`` labels are not required: ``auto`` line files keep a leading
    ``label<TAB>`` as the true label only when it is one of ``known_labels`` (a model's
    classes; without them, every line needs one), ``labeled-lines`` requires it, and
    ``plain-lines`` reads every line whole. ``"-"`` reads standard
    input. Invalid UTF-8 is replaced and counted in ``stats``, or refused with ``strict``.
    Labels are stripped of surrounding white space and kept in their case; with ``labeled``
    a label that differs only in case from one seen earlier is an error (it would be a
    class of its own), naming the file, the line and both spellings.

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
    if stats is None:
        stats = ReadStats()
    known: set = set()
    folded: dict = {}
    for src in inputs:
        if not hasattr(src, "read") and not (isinstance(src, str) and src == STDIN) \
                and not Path(src).exists():
            raise NBSVMError("no such file or folder", path=str(src))
        n = 0
        bad_before = stats.bad_lines
        for doc in _read_one(src, fmt, labeled, text_col, label_col, strict, stats,
                             known_labels, encoding, empty_label):
            n += 1
            if labeled and doc[0] not in known:
                _check_case(doc, known, folded)
            yield doc
        if n == 0:
            skipped = stats.bad_lines - bad_before
            raise NBSVMError("no documents found " + (f"(all {skipped} lines were malformed)"
                                                      if skipped else "(empty input)"),
                             path=_name(src))


def _check_case(doc: Document, known: set, folded: dict):
    """A new label: refuse it when another label differs from it only in case."""
    known.add(doc.label)
    if doc.label is None:
        return
    key = doc.label.casefold()
    first = folded.get(key)
    if first is not None:
        label, source, line = first
        raise NBSVMError(f"label {doc.label!r} differs only in case from {label!r} (first seen "
                         f"at {source}:{line}); labels are case-sensitive, so it would be a "
                         "class of its own: spell it the same way everywhere",
                         path=doc.source, line=doc.line)
    folded[key] = (doc.label, doc.source, doc.line)


def _read_one(src, fmt, labeled, text_col, label_col, strict=False, stats=None,
              known_labels=None, encoding="utf-8", empty_label=False) -> Iterator[Document]:
    kind = detect_format(src) if fmt == "auto" and not hasattr(src, "read") else fmt
    if kind == "auto":
        kind = "labeled-lines"
    if kind == "folders":
        yield from read_aclimdb(src, strict=strict, stats=stats, encoding=encoding)
    elif kind == "labeled-lines":
        # predict's auto format: a leading label only when it is one of the model's
        unlabeled = not labeled and fmt == "auto" and known_labels is not None
        yield from read_lines(src, labeled=not unlabeled, strict=strict, stats=stats,
                              known_labels=known_labels if unlabeled else None,
                              label_col=label_col, text_col=text_col, encoding=encoding,
                              empty_label=empty_label)
    elif kind == "plain-lines":
        yield from read_text_lines(src, strict=strict, stats=stats, encoding=encoding)
    else:
        # unlabeled: keep true labels when the column is there, for predict's output
        yield from read_table(src, text_col=text_col, label_col=label_col,
                              sep="," if kind == "csv" else "\t", strict=strict, stats=stats,
                              label_optional=not labeled, encoding=encoding,
                              empty_label=empty_label)
