"""Readers for labeled text: aclImdb folders, ``label<TAB>text`` lines, CSV/TSV tables.

Every reader is a generator over a path (or an open text file for line formats) and yields
:class:`Document` records one at a time, so memory does not depend on the corpus size.
"""
from __future__ import annotations

import gzip
import os
import re
import zlib
from pathlib import Path
from typing import IO, Iterable, Iterator, NamedTuple

from ..errors import NBSVMError

#: What reading a damaged file raises below the readers (a corrupt or truncated ``.gz``, an
#: unreadable file or folder); the readers turn these into :class:`NBSVMError`.
READ_ERRORS = (OSError, EOFError, zlib.error)

FORMATS = ("auto", "aclimdb", "lines", "text", "csv", "tsv")


class Document(NamedTuple):
    """One document: its label (``None`` when unlabeled), text, and where it came from."""

    label: str | None
    text: str
    source: str
    line: int


def _open_text(path_or_file) -> tuple[IO[str], str, bool]:
    """(text file, its name, whether we opened it); ``.gz`` files are decompressed."""
    if hasattr(path_or_file, "read"):
        return path_or_file, getattr(path_or_file, "name", "<stream>"), False
    path = Path(path_or_file)
    if not path.exists():
        raise NBSVMError("no such file", path=str(path))
    if path.is_dir():
        raise NBSVMError("is a folder, expected a file", path=str(path))
    # Universal newlines (\n, \r\n); invalid UTF-8 is replaced, not fatal.
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace"), str(path), True
    return open(path, encoding="utf-8", errors="replace", newline=None), str(path), True


def read_lines(path_or_file, labeled: bool = True) -> Iterator[Document]:
    """Read ``label<TAB>text`` lines (NBSVM-XL's format); blank lines are skipped.

    Examples
    --------
    >>> import io
    >>> [d.label for d in read_lines(io.StringIO("pos\\tgreat\\nneg\\tawful\\n"))]
    ['pos', 'neg']
    """
    fh, name, close = _open_text(path_or_file)
    try:
        for lineno, raw in enumerate(fh, 1):
            line = raw.rstrip("\r\n")
            if lineno == 1:
                line = line.lstrip("\ufeff")
            if not line.strip():
                continue
            if not labeled:
                yield Document(None, line, name, lineno)
                continue
            label, sep, text = line.partition("\t")
            if not sep:
                raise NBSVMError("expected 'label<TAB>text', found no TAB", path=name, line=lineno)
            label = label.strip()
            if not label:
                raise NBSVMError("empty label before the TAB", path=name, line=lineno)
            yield Document(label, text, name, lineno)
    except READ_ERRORS as e:          # e.g. a truncated or corrupt .gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None
    finally:
        if close:
            fh.close()


def read_text_lines(path_or_file) -> Iterator[Document]:
    """Read one unlabeled document per line (for ``predict``)."""
    return read_lines(path_or_file, labeled=False)


def _label_folders(root: Path) -> list[Path]:
    folders = sorted(p for p in root.iterdir() if p.is_dir() and p.name != "unsup")
    split = next((f for f in folders if f.name in ("train", "test")
                  and any(p.is_dir() for p in f.iterdir())), None)
    if split is not None:
        raise NBSVMError(f"this is the aclImdb root; give a split folder such as {split}",
                         path=str(root))
    if not folders:
        raise NBSVMError("expected one sub-folder per label (e.g. pos/ and neg/)", path=str(root))
    return folders


def read_aclimdb(root, labeled: bool = True) -> Iterator[Document]:
    """Read an aclImdb-style split folder: one sub-folder per label, one ``.txt`` per review.

    Files are read in name order and the label folders are interleaved round-robin, so a
    single streaming pass sees the classes mixed (the official layout is sorted by label).
    The unlabeled ``unsup`` folder is skipped.
    """
    root = Path(root)
    if not root.is_dir():
        raise NBSVMError("no such folder", path=str(root))
    try:
        folders = _label_folders(root)
        listings = []
        for folder in folders:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".txt"))
            listings.append((folder.name, folder, names))
    except OSError as e:               # e.g. a folder that cannot be listed
        raise NBSVMError(f"cannot read: {e.strerror or e}", path=e.filename or str(root)) from None
    longest = max(len(names) for _, _, names in listings)
    for i in range(longest):
        for label, folder, names in listings:
            if i < len(names):
                path = folder / names[i]
                try:
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        text = fh.read().lstrip("\ufeff").rstrip("\r\n")
                except OSError as e:    # e.g. a folder named like a review, no permission
                    raise NBSVMError(f"cannot read: {e.strerror or e}", path=str(path)) from None
                yield Document(label if labeled else None, text, str(path), 1)


def read_table(path, text_col: str = "text", label_col: str | None = "label", sep: str = ",",
               chunksize: int = 10_000) -> Iterator[Document]:
    """Read a CSV/TSV file (path or open file) with a header through pandas in chunks.

    ``label_col=None`` reads unlabeled text. Row numbers in errors count the header as line 1
    (exact for files without quoted multi-line fields).
    """
    if hasattr(path, "read"):
        source, name = path, getattr(path, "name", "<stream>")
    else:
        source = name = str(path)
        if not Path(path).is_file():
            raise NBSVMError("no such file", path=name)
    import pandas as pd     # only CSV/TSV input needs pandas (it costs ~60 MB to import)

    usecols = [text_col] + ([label_col] if label_col else [])
    try:
        chunks = pd.read_csv(source, sep=sep, chunksize=chunksize, dtype=str, keep_default_na=False,
                             encoding="utf-8", encoding_errors="replace")
        row = 1
        for chunk in chunks:
            missing = [c for c in usecols if c not in chunk.columns]
            if missing:
                raise NBSVMError(f"missing column(s) {missing}; the file has {list(chunk.columns)} "
                                 "(choose with --text-col / --label-col)", path=name, line=1)
            texts = chunk[text_col].tolist()
            labels = chunk[label_col].tolist() if label_col else [None] * len(texts)
            for text, label in zip(texts, labels):
                row += 1
                if label is not None:
                    label = label.strip()
                    if not label:
                        raise NBSVMError(f"empty label in column {label_col!r}", path=name,
                                         line=row)
                yield Document(label, text, name, row)
    except pd.errors.EmptyDataError:
        raise NBSVMError("empty file (expected a header row)", path=name) from None
    except pd.errors.ParserError as e:
        raise NBSVMError(f"cannot parse as {'TSV' if sep == chr(9) else 'CSV'}: {e}",
                         path=name, line=_parser_line(e)) from None
    except READ_ERRORS as e:          # e.g. a truncated or corrupt .csv.gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None


def _parser_line(error) -> int | None:
    """The line pandas names in a parser error (``... in line 3, saw 4``), if any."""
    m = re.search(r"\bline (\d+)", str(error))
    return int(m.group(1)) if m else None


def detect_format(path) -> str:
    """``aclimdb`` for a folder, ``csv`` for ``.csv``, else ``lines`` (label<TAB>text)."""
    p = Path(path)
    if p.is_dir():
        return "aclimdb"
    if p.suffix.lower() == ".csv":
        return "csv"
    return "lines"


def read_inputs(inputs: Iterable, fmt: str = "auto", labeled: bool = True, text_col: str = "text",
                label_col: str | None = "label") -> Iterator[Document]:
    """Chain the documents of several inputs, choosing each reader by ``fmt``.

    With ``labeled=False`` labels are not required (``lines`` still strips a leading label
    field; use ``text`` for plain one-document-per-line files).
    """
    if fmt not in FORMATS:
        raise NBSVMError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
    for src in inputs:
        if not hasattr(src, "read") and not Path(src).exists():
            raise NBSVMError("no such file or folder", path=str(src))
        n = 0
        for doc in _read_one(src, fmt, labeled, text_col, label_col):
            n += 1
            yield doc
        if n == 0:
            raise NBSVMError("no documents found (empty input)",
                             path=getattr(src, "name", "<stream>") if hasattr(src, "read") else str(src))


def _read_one(src, fmt, labeled, text_col, label_col) -> Iterator[Document]:
    kind = detect_format(src) if fmt == "auto" and not hasattr(src, "read") else fmt
    if kind == "auto":
        kind = "lines"
    if kind == "aclimdb":
        yield from read_aclimdb(src)
    elif kind == "lines":
        yield from read_lines(src)
    elif kind == "text":
        yield from read_text_lines(src)
    else:
        sep = "," if kind == "csv" else "\t"
        has_label = label_col if labeled else None
        if not labeled and label_col:
            import pandas as pd

            # keep true labels when the column is there, for predict's output
            try:
                header = pd.read_csv(src, sep=sep, nrows=0, encoding_errors="replace").columns
            except pd.errors.EmptyDataError:
                raise NBSVMError("empty file (expected a header row)", path=str(src)) from None
            except pd.errors.ParserError as e:
                raise NBSVMError(f"cannot parse the header: {e}", path=str(src),
                                 line=_parser_line(e)) from None
            except READ_ERRORS as e:
                raise NBSVMError(f"cannot read: {e}", path=str(src)) from None
            has_label = label_col if label_col in header else None
        yield from read_table(src, text_col=text_col, label_col=has_label, sep=sep)
