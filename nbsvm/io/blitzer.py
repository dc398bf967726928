"""Reader of the raw review text of Blitzer et al.'s (2007) Multi-Domain Sentiment Dataset
(``sorted_data_acl/<domain>/{positive,negative}.review``).

A ``.review`` file is pseudo-XML: a sequence of ``<review> ... </review>`` records, no root
element, every field tag on a line of its own, the field's text on the lines between::

    <review>
    <rating>
    5.0
    </rating>
    <title>
    One of the best Crichton novels
    </title>
    <review_text>
    Sphere by Michael Crichton is an excellant novel. ...
    </review_text>
    </review>

An XML parser rejects it (``&`` and ``<`` appear unescaped in the text), so records are
parsed line by line. Quirks handled: HTML entities (``&quot;``, ``&#8217;``) are decoded;
bytes that are not UTF-8 are replaced and counted (or refused with ``strict``, naming the
line and byte), a BOM is dropped; wrapper lines some copies add
around the records (``<data>``, ``<reviews>``) are skipped; fields may be missing (read as
empty, except ``review_text``). Anything else malformed raises
:class:`~nbsvm.errors.NBSVMError` naming the file and line.

Like the other readers this one streams: it holds one record at a time.
"""

from __future__ import annotations

import html
import re
import tarfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import ReadStats, iter_lines
from nbsvm.io.document import Document, _name

if TYPE_CHECKING:
    import os

    from nbsvm.io.document import PathOrFile

#: The fields of a record, in file order.
REVIEW_FIELDS = (
    "unique_id",
    "asin",
    "product_name",
    "product_type",
    "helpful",
    "rating",
    "title",
    "date",
    "reviewer",
    "reviewer_location",
    "review_text",
)
#: Lines that some copies wrap the records in (skipped between records).
WRAPPER_TAGS = ("<data>", "</data>", "<reviews>", "</reviews>")
#: The text Blitzer et al.'s ``processed_acl`` features were built from (title and body).
TEXT_FIELDS = ("title", "review_text")
LABELS = ("positive", "negative")

_TAG = re.compile(r"<(/?)([a-z_]+)>")


def _tag(line: str) -> tuple[bool, str] | None:
    """``(closing, name)`` when the line is exactly one tag, else None."""
    m = _TAG.fullmatch(line.strip())
    return (m.group(1) == "/", m.group(2)) if m else None


class _RecordParser:
    """The line-by-line state of :func:`parse_reviews`: between records, inside a record,
    or inside one of its fields."""

    def __init__(self, source: str):
        self.source = source
        self.start = None  # line of the open <review>; None between records
        self.field = None  # the open field, its first line and its lines so far
        self.field_line = 0
        self.body: list[str] = []
        self.record: dict[str, str] = {}

    def error(self, message: str, line: int) -> NBSVMError:
        return NBSVMError(message, path=self.source, line=line)

    def feed(self, lineno: int, line: str):
        """Take one line; return ``(start line, record)`` when it closes a record."""
        tag = _tag(line)
        if self.field is not None:
            self._in_field(lineno, line, tag)
        elif self.start is None:
            self._between(lineno, line, tag)
        else:
            return self._in_record(lineno, line, tag)
        return None

    def _in_field(self, lineno, line, tag):
        """Text until the field's end tag; a <review> tag means the field was never closed."""
        if tag == (True, self.field):
            self.record[self.field] = html.unescape("\n".join(self.body).strip())
            self.field, self.body = None, []
        elif tag is not None and tag[1] == "review":
            raise self.error(
                f"<{self.field}> (opened on line {self.field_line}) is not "
                f"closed before {line.strip()}",
                lineno,
            )
        else:
            self.body.append(line)

    def _between(self, lineno, line, tag):
        """Only <review>, blank lines and wrapper tags may come between records."""
        if tag == (False, "review"):
            self.start, self.record = lineno, {}
        elif line.strip() and line.strip() not in WRAPPER_TAGS:
            raise self.error(f"expected <review>, found {line.strip()[:40]!r}", lineno)

    def _in_record(self, lineno, line, tag):
        """Field tags open fields; </review> ends the record; anything else is an error."""
        if tag == (True, "review"):
            done, self.start = (self.start, self.record), None
            return done
        if tag is not None and not tag[0] and tag[1] != "review":
            if tag[1] in self.record:
                raise self.error(
                    f"field <{tag[1]}> appears twice in the review opened on line {self.start}",
                    lineno,
                )
            self.field, self.field_line = tag[1], lineno
        elif line.strip():
            what = (
                f"unexpected {line.strip()}"
                if tag
                else f"text outside a field: {line.strip()[:40]!r}"
            )
            raise self.error(f"{what} (in the review opened on line {self.start})", lineno)
        return None

    def finish(self, lineno: int) -> None:
        """At the end of the file no record or field may be open."""
        if self.field is not None:
            raise self.error(
                f"end of file inside <{self.field}> opened on line {self.field_line}", lineno
            )
        if self.start is not None:
            raise self.error(f"end of file inside <review> opened on line {self.start}", lineno)


def parse_reviews(lines: Iterable[str], source: str) -> Iterator[tuple[int, dict[str, str]]]:
    """The records of a ``.review`` file: ``(line of its <review> tag, {field: text})``.

    Field text is the lines between the field's tags joined by newlines, stripped, with
    HTML entities decoded.

    Examples
    --------
    >>> lines = ["<review>", "<title>", "Tom &amp; Jerry", "</title>", "</review>"]
    >>> list(parse_reviews(lines, "x.review"))
    [(1, {'title': 'Tom & Jerry'})]
    """
    parser = _RecordParser(source)
    lineno = 0
    for lineno, line in enumerate(lines, 1):
        done = parser.feed(lineno, line)
        if done is not None:
            yield done
    parser.finish(lineno)


def label_of_rating(rating: str, source: str, line: int) -> str:
    """``positive`` for 4 or 5 stars, ``negative`` for 1 or 2 (the dataset's rule)."""
    try:
        stars = float(rating)
    except ValueError:
        raise NBSVMError(f"rating is not a number: {rating!r}", path=source, line=line) from None
    if stars >= 4:
        return "positive"
    if stars <= 2:
        return "negative"
    raise NBSVMError(
        f"rating {rating} is neither positive (4-5) nor negative (1-2)", path=source, line=line
    )


def _label_rule(label: str | None, source: str):
    """A function ``(record, line) -> label`` for the ``label`` argument of :func:`read_reviews`."""
    if label == "auto":
        stem = Path(source).stem  # also for "<archive>:<member>" names
        label = stem if stem in LABELS else "rating"
    if label == "rating":

        def from_rating(record, line):
            if "rating" not in record:
                raise NBSVMError(
                    "review has no <rating> to take its label from", path=source, line=line
                )
            return label_of_rating(record["rating"], source, line)

        return from_rating
    return lambda record, line: label


def read_reviews(
    path_or_file: PathOrFile,
    label: str | None = "auto",
    fields: Sequence[str] = TEXT_FIELDS,
    source: str | None = None,
    strict: bool = False,
    encoding: str = "utf-8",
    stats: ReadStats | None = None,
) -> Iterator[Document]:
    """Read a raw ``.review`` file one record at a time as :class:`Document` records.

    Parameters
    ----------
    path_or_file : str, Path or file object
        A ``.review`` file (plain or ``.gz``) or an open text or binary file (e.g. a member
        of a tar archive); bytes that are not UTF-8 are replaced.
    label : str or None
        ``"auto"``: the file's name when it is ``positive.review`` or ``negative.review``,
        else from the rating; ``"rating"``: 4-5 stars ``positive``, 1-2 ``negative``; any
        other string: that label for every review; None: unlabeled.
    fields : sequence of str
        Fields joined (by a blank line) into the document's text; missing ones are skipped.
        The default, title and body, is the text Blitzer et al.'s features were built from.
    source : str, optional
        The name used in documents and errors (default: the path or the file's name).
    strict : bool
        Refuse invalid UTF-8 (an error naming the line and byte) instead of replacing it.
    stats : ReadStats, optional
        Counts the invalid bytes replaced and the reviews that had some.

    Yields
    ------
    Document
        ``(label, text, source, line of the record's <review> tag)``.

    Raises
    ------
    NBSVMError
        On a malformed record or a review without ``<review_text>``, naming file and line.

    Examples
    --------
    >>> import io
    >>> raw = io.StringIO("<review>\\n<rating>\\n5.0\\n</rating>\\n<title>\\nFun\\n</title>\\n"
    ...                   "<review_text>\\nA &quot;great&quot; read &amp; a gift.\\n"
    ...                   "</review_text>\\n</review>\\n")
    >>> doc = next(read_reviews(raw, source="books/positive.review"))
    >>> doc.label, doc.text, doc.line
    ('positive', 'Fun\\n\\nA "great" read & a gift.', 1)
    """
    unknown = [f for f in fields if f not in REVIEW_FIELDS]
    if unknown or not fields:
        raise NBSVMError(f"unknown review field(s) {unknown}; allowed: {', '.join(REVIEW_FIELDS)}")
    name = source or _name(path_or_file)
    labeler = _label_rule(label, name) if label is not None else (lambda record, line: None)
    seen = ReadStats()  # bad bytes are counted per line; a review counts once
    counted = 0
    lines = (
        line
        for line, _, _ in iter_lines(
            path_or_file, strict, seen, lone_cr="newline", encoding=encoding
        )
    )
    try:
        for line, record in parse_reviews(lines, name):
            if "review_text" not in record:
                raise NBSVMError("review has no <review_text>", path=name, line=line)
            text = "\n\n".join(record[f] for f in fields if record.get(f))
            if seen.replaced_bytes > counted and stats is not None:
                stats.add(seen.replaced_bytes - counted)
                counted = seen.replaced_bytes
            yield Document(labeler(record, line), text, name, line)
    except (OSError, EOFError, zlib.error, tarfile.TarError) as e:  # e.g. a truncated .gz
        raise NBSVMError(f"cannot read: {e}", path=name) from None
    except NBSVMError as e:  # raised reading lines: name the file as told
        if source is None or e.path == name:
            raise
        raise NBSVMError(e.message, path=name, line=e.line) from None


class ArchiveMember:
    """A member of a tar archive read as text lines: UTF-8 with bad bytes replaced, named
    ``<archive>:<member>`` for errors. Iterating yields lines with their ends, as a text
    file does (what :func:`read_reviews` and :func:`~nbsvm.io.read_blitzer` need)."""

    def __init__(self, raw: IO[bytes], name: str):
        self.raw = raw
        self.name = name

    def __iter__(self) -> Iterator[str]:
        for line in self.byte_lines():
            yield line.decode("utf-8", errors="replace")

    def byte_lines(self) -> Iterator[bytes]:
        """The member's lines as bytes (what the readers decode, counting bad bytes)."""
        try:
            yield from self.raw
        except (tarfile.TarError, EOFError, OSError, zlib.error) as e:  # a damaged archive
            raise NBSVMError(
                f"cannot read the archive member ({type(e).__name__}: {e})", path=self.name
            ) from None

    def read(self) -> str:
        return "".join(self)


def review_members(
    archive: str | os.PathLike[str] | IO[bytes], suffix: str = ".review"
) -> Iterator[tuple[str, ArchiveMember]]:
    """Stream the members of a tar (``.tar.gz``) archive whose names end with ``suffix``, in
    archive order, as ``(member name, text file)``. Nothing is extracted to disk; each file
    is valid until the next member is taken.

    Examples
    --------
    >>> import io, tarfile
    >>> data, buf = b"<review>\\n<review_text>\\nok\\n</review_text>\\n</review>\\n", io.BytesIO()
    >>> with tarfile.open(fileobj=buf, mode="w:gz") as tar:
    ...     info = tarfile.TarInfo("d/books/positive.review"); info.size = len(data)
    ...     tar.addfile(info, io.BytesIO(data))
    >>> _ = buf.seek(0)
    >>> [(name, next(read_reviews(fh)).label) for name, fh in review_members(buf)]
    [('d/books/positive.review', 'positive')]
    """
    is_file = hasattr(archive, "read")
    name = getattr(archive, "name", "<archive>") if is_file else str(archive)
    if not is_file and not Path(cast("str | os.PathLike[str]", archive)).is_file():
        raise NBSVMError("no such archive", path=name)
    try:
        opened = (
            tarfile.open(fileobj=cast(IO[bytes], archive), mode="r|*")
            if is_file
            else tarfile.open(cast("str | os.PathLike[str]", archive), mode="r|*")
        )
        with opened as tar:
            for member in tar:
                if member.isfile() and member.name.endswith(suffix):
                    yield (
                        member.name,
                        ArchiveMember(
                            cast(IO[bytes], tar.extractfile(member)),  # a file: never None
                            f"{name}:{member.name}",
                        ),
                    )
    except (tarfile.TarError, OSError, EOFError, zlib.error, TypeError) as e:
        # TypeError: tarfile's stream mode calls ord() on a gzip header cut short
        raise NBSVMError(f"cannot read the archive: {type(e).__name__}: {e}", path=name) from None


ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


REVIEW_FILES = tuple(f"{stem}.review" for stem in LABELS + ("unlabeled",))


def has_reviews(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a ``.review`` file, or a folder holding the dataset's own files
    (``positive.review``, ``negative.review``, ``unlabeled.review``) or domain folders of
    them; a class-folder corpus whose documents happen to end in ``.review`` is not one."""
    p = Path(path)
    if p.is_dir():
        return any((p / f).is_file() for f in REVIEW_FILES) or any(
            (d / f).is_file() for d in p.iterdir() if d.is_dir() for f in REVIEW_FILES
        )
    return p.suffix == ".review"


def _interleaved(streams: list) -> Iterator[Document]:
    """Round-robin over ``streams`` (a domain's negative and positive reviews), so that a
    first epoch that trains while it reads meets both classes from the start."""
    streams = [iter(s) for s in streams]
    while streams:
        for s in list(streams):
            try:
                yield next(s)
            except StopIteration:
                streams.remove(s)


def read_review_inputs(
    path: str | os.PathLike[str],
    labeled: bool = True,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
) -> Iterator[Document]:
    """The reviews of the raw dataset as it is unpacked or downloaded: a ``.review`` file, a
    domain folder (its ``positive.review`` and ``negative.review``), the ``sorted_data_acl``
    folder (every domain, in name order) or the ``.tar.gz`` archive of it (read without
    unpacking). Labels come from the file names; ``unlabeled.review`` is read only when
    labels are not needed (its documents then have none)."""

    def wanted(stem):
        return stem in LABELS or (not labeled and stem == "unlabeled")

    def one(source, fh_or_path, stem):
        yield from read_reviews(
            fh_or_path,
            label=stem if stem in LABELS else None,
            source=source,
            strict=strict,
            stats=stats,
            encoding=encoding,
        )

    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.review")) + sorted(p.glob("*/*.review"))
        files = [f for f in files if wanted(f.stem)]
        if not files:
            raise NBSVMError(
                "no positive.review or negative.review in the folder or its "
                "sub-folders (a folder of class folders: --format folders)",
                path=str(path),
            )
        by_domain: dict = {}
        for f in files:
            by_domain.setdefault(f.parent, []).append(f)
        for domain_files in by_domain.values():  # each domain's classes interleaved
            yield from _interleaved([one(str(f), f, f.stem) for f in domain_files])
    elif str(path).endswith(ARCHIVE_SUFFIXES):
        yield from _archive_reviews(path, wanted, one)
    else:
        stem = p.stem
        yield from read_reviews(
            path,
            label="auto" if labeled or stem in LABELS else None,
            strict=strict,
            stats=stats,
            encoding=encoding,
        )


def _archive_reviews(path, wanted, one) -> Iterator[Document]:
    """The reviews of a ``sorted_data_acl`` archive, each domain's classes interleaved: the
    archive is opened once per member of a domain (random access, nothing unpacked)."""
    try:
        with tarfile.open(path) as tar:
            names = [
                m.name
                for m in tar.getmembers()
                if m.isfile() and m.name.endswith(".review") and wanted(Path(m.name).stem)
            ]
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise NBSVMError(
            f"cannot read the archive: {type(e).__name__}: {e}", path=str(path)
        ) from None
    by_domain: dict = {}
    for name in names:
        by_domain.setdefault(str(Path(name).parent), []).append(name)
    for members in by_domain.values():
        tars = [tarfile.open(path) for _ in members]
        try:
            yield from _interleaved(
                [
                    one(
                        f"{path}:{name}",
                        ArchiveMember(
                            cast(IO[bytes], t.extractfile(name)),  # a file: never None
                            f"{path}:{name}",
                        ),
                        Path(name).stem,
                    )
                    for t, name in zip(tars, members)
                ]
            )
        finally:
            for t in tars:
                t.close()
