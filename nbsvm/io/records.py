"""Records with named fields: JSON lines (one object per line) and Parquet files.

Both pick the text field(s) (``--text-col``; several are joined with
:data:`~nbsvm.io.tables.COLUMN_SEPARATOR`) and the label field (``--label-col``) of each
record, as :func:`~nbsvm.io.tables.read_table` does for CSV, and stream: JSON lines one line
at a time, Parquet one record batch at a time.

A text is a string. A label is a string, an integer (``3`` is the class ``"3"``, as it reads
in a line file), or for a multi-label document a list of them (its label set); a float,
``true``, ``null`` inside a list, an object or a list of lists would become a class spelled
as Python prints it, so it is refused. A line that is not JSON (nested too deeply for the
parser too), a record without its text, with a text or label of another type, or without a
label where one is needed, is malformed: an error naming the file and the line (row), or
skipped and counted with ``--skip-bad-lines``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import ReadStats, valid_unicode
from nbsvm.io.document import Document, weight_of
from nbsvm.io.formats import COLUMN_SEPARATOR
from nbsvm.io.labeled_lines import _columns, read_text_lines
from nbsvm.io.labels import SEPARATOR, SEVERAL_LABELS, key_of

if TYPE_CHECKING:
    import os

    from nbsvm.io.document import PathOrFile

PARQUET_BATCH_ROWS = 8192


def _kind(value) -> str:
    """How a field's value is named in errors: its JSON type, with the value when short."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        shown = repr(value)
        return f"a number ({shown if len(shown) <= 24 else shown[:20] + '...'})"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "null" if value is None else type(value).__name__


def _is_label(value) -> bool:
    """A string or an integer (not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _label_of(value, empty_label: bool):
    """``(label, problem)`` of a label field: a string stripped, an integer as text, a list
    of them as a label set's key; ``label`` None when absent or empty (unless
    ``empty_label``: an empty set is a label), ``problem`` a sentence for a value of
    another type."""
    if isinstance(value, str):
        label = value.strip()
        return (label if label or empty_label else None), None
    if value is None:
        return None, None
    if isinstance(value, (list, tuple)):
        bad = [v for v in value if not _is_label(v)]
        if bad:
            return None, f"a label list holds {_kind(bad[0])}: labels are strings or integers"
        labels = [str(v).strip() for v in value]
        if any(SEPARATOR in v for v in labels):
            return None, f"a label in a list holds {SEPARATOR!r}, which separates labels"
        return (key_of(labels) if value or empty_label else None), None
    if not _is_label(value):
        return None, (
            f"the label is {_kind(value)}: a label is a string, an integer or "
            "(multi-label) a list of them"
        )
    return str(value), None


@dataclass(frozen=True)
class _Fields:
    """What a reader takes from each record (``needs_label``: labeled and the label not
    optional), and where it counts a malformed one."""

    text_cols: list[str]
    label_col: str | None
    needs_label: bool
    empty_label: bool
    stats: ReadStats
    weight_col: str | None = None
    several_labels: bool = True  # else a list of several is malformed (single-label)

    @classmethod
    def of(
        cls,
        text_col,
        label_col,
        labeled,
        label_optional,
        empty_label,
        stats,
        weight_col,
        several_labels,
    ) -> _Fields:
        """The fields of a reader's options (``label_optional``: a missing label is no
        error)."""
        needs_label = labeled and not label_optional
        return cls(
            _columns(text_col), label_col, needs_label, empty_label, stats, weight_col,
            several_labels,
        )  # fmt: skip

    def names(self) -> list[str]:
        """The fields read: the texts', the label's, the weight's."""
        read = [*self.text_cols, self.label_col, self.weight_col]
        return [n for n in read if n is not None]

    def document(self, record: dict, name, line):
        """The Document of one record, or None (malformed and skipped)."""
        stats, label_col = self.stats, self.label_col
        parts = []
        for col in self.text_cols:
            value = record.get(col)
            if value is None:
                fields = ", ".join(map(repr, list(record)[:10])) or "none"
                stats.bad(
                    f"no text in field {col!r} (fields: {fields}; --text-col names it)",
                    name,
                    line,
                )
                return None
            if not isinstance(value, str):
                stats.bad(f"the text in field {col!r} is {_kind(value)}, not a string", name, line)
                return None
            parts.append(value)
        text = COLUMN_SEPARATOR.join(parts)
        label, problem = (
            _label_of(record.get(label_col), self.empty_label) if label_col else (None, None)
        )
        several = problem is None and self.needs_label and label and SEPARATOR in label
        if several and not self.several_labels:
            value = record.get(label_col)
            if isinstance(value, (list, tuple)):
                problem = f"several labels {list(value)!r}: {SEVERAL_LABELS}"
        if problem is not None:
            stats.bad(f"field {label_col!r}: {problem}", name, line)
            return None
        if label is None and self.needs_label:
            stats.bad(f"no label in field {label_col!r} (--label-col names it)", name, line)
            return None
        weight = 1.0
        if self.weight_col:
            weight, problem = weight_of(record.get(self.weight_col))
            if problem is not None:
                stats.bad(f"field {self.weight_col!r}: {problem} (--weight-col)", name, line)
                return None
        return Document(label, text, name, line, weight)


def read_jsonl(
    path_or_file: PathOrFile,
    text_col: str | Sequence[str] = "text",
    label_col: str | None = "label",
    labeled: bool = True,
    label_optional: bool = False,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
    empty_label: bool = False,
    weight_col: str | None = None,
    several_labels: bool = True,
) -> Iterator[Document]:
    """Documents of a JSON lines file: one object per line, blank lines skipped
    (``weight_col``: the field holding each document's weight; ``several_labels=False``:
    a labeled record's list of several labels is malformed, a single-label task's).

    Examples
    --------
    >>> import io
    >>> src = io.StringIO('{"text": "great", "label": "pos"}\\n{"text": "x", "label": ["b", "a"]}\\n')
    >>> [(d.label, d.text) for d in read_jsonl(src)]
    [('pos', 'great'), ('a,b', 'x')]
    """
    if stats is None:
        stats = ReadStats()
    fields = _Fields.of(
        text_col, label_col, labeled, label_optional, empty_label, stats, weight_col, several_labels
    )
    # each read field's name as JSON writes it: a line naming one twice is parsed again
    quoted = {n: json.dumps(n, ensure_ascii=False) for n in fields.names()}
    needles = tuple(quoted.values())
    spelled = _spellings(quoted)
    ascii_names = all(name.isascii() for name in quoted)  # (escaped: \u0020-\u007f)
    for doc in read_text_lines(path_or_file, strict=strict, stats=stats, encoding=encoding):
        text, twice = doc.text, None
        try:
            # a name may be written escaped ("labe\u006c"): such a line is parsed once, key
            # by key (only where an escape may end in a key: json.dumps escapes all
            # non-ASCII text, and every line parsed so had cost 1.4x)
            escaped = (
                "\\u" in text
                and (not ascii_names or _PRINTABLE_ESCAPE.search(text) is not None)
                and _spelled_escaped(spelled, text)
            )
            if escaped:
                record, twice = _parse_checking(text, quoted)
            else:
                record = json.loads(text)
        except RecursionError:  # nesting past the parser's limit: no ValueError
            stats.bad("JSON nested too deeply to be read", doc.source, doc.line)
            continue
        except ValueError as e:
            stats.bad(f"not JSON: {e}", doc.source, doc.line)
            continue
        if not isinstance(record, dict):
            stats.bad(
                f"expected a JSON object per line, found {type(record).__name__}",
                doc.source,
                doc.line,
            )
            continue
        for q in needles if not escaped else ():  # (inline: a call a line cost 16%)
            if text.count(q) > 1:
                twice = _read_twice(text, quoted)
                break
        if twice is not None:
            stats.bad(f"the field {twice!r} appears twice in the object", doc.source, doc.line)
            continue
        found = fields.document(record, doc.source, doc.line)
        if found is not None:  # JSON's lone surrogates ("\ud800"): U+FFFD, as the server
            label = found.label
            yield found._replace(
                text=valid_unicode(found.text),
                label=valid_unicode(label) if isinstance(label, str) else label,
            )


#: an escaped printable ASCII character, which an ASCII field name escaped holds (text
#: json.dumps escapes is not ASCII, or a control character)
_PRINTABLE_ESCAPE = re.compile(r"\\u00[2-7][0-9a-fA-F]")


def _spellings(names: Iterable[str]) -> re.Pattern:
    """A key naming one of ``names``, each character as itself or its ``\\uXXXX`` escape
    (one pass over a line, no nested repeats)."""
    spelled = [
        "".join(f"(?:{re.escape(c)}|\\\\u(?i:{ord(c):04x}))" for c in name) for name in names
    ]
    return re.compile('"(?:' + "|".join(spelled) + ')"\\s*:')


def _spelled_escaped(spelled: re.Pattern, text: str) -> bool:
    """Whether ``text`` names a field of ``spelled`` with an escape in its name."""
    return any("\\u" in m.group() for m in spelled.finditer(text))


def _parse_checking(text: str, quoted: dict[str, str]) -> tuple[object, str | None]:
    """``(the JSON value of text, a field the reader takes that its top level names
    twice, or None)``: one parse, key by key."""
    last: list[list[str]] = [[]]

    def pairs(items):  # called for each object, the top level last
        keys = [k for k, _ in items if k in quoted]
        last[0] = [k for k in dict.fromkeys(keys) if keys.count(k) > 1]
        return dict(items)

    value = json.loads(text, object_pairs_hook=pairs)
    return value, (last[0][0] if last[0] and isinstance(value, dict) else None)


def _read_twice(text: str, quoted: dict[str, str]) -> str | None:
    """A field the reader takes (``quoted``: name -> its JSON) that the object ``text``
    names twice at its top level (JSON keeps the last, silently: ``{"label": "pos",
    "label": "neg"}`` would be a 'neg'), or None. The object is parsed again, key by key,
    only where a name occurs twice in the line; nested objects are not the reader's."""
    names = [n for n, q in quoted.items() if text.count(q) > 1]
    if not names:
        return None
    last: list[list[str]] = [[]]

    def pairs(items):  # called for each object, the top level last
        keys = [k for k, _ in items if k in names]
        last[0] = [k for k in dict.fromkeys(keys) if keys.count(k) > 1]
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return last[0][0] if last[0] else None


def _parquet_columns(names: list[str], fields: _Fields, name: str) -> list[str]:
    """The columns of a Parquet schema (``names``) the reader takes: the texts', the
    weight's, the label's where present; an absent one it needs, or one named twice in
    the schema (pyarrow cannot select it: a KeyError), refused."""
    listed = ", ".join(names)
    wanted = list(fields.text_cols)
    missing = [c for c in wanted if c not in names]
    if missing:
        raise NBSVMError(
            f"no column {missing[0]!r}; columns: {listed} (--text-col names the text)", path=name
        )
    weight_col, label_col = fields.weight_col, fields.label_col
    if weight_col and weight_col not in names:
        raise NBSVMError(
            f"no weight column {weight_col!r}; columns: {listed} (--weight-col names it)",
            path=name,
        )
    if weight_col:
        wanted.append(weight_col)
    if label_col and label_col in names:
        wanted.append(label_col)
    elif label_col and fields.needs_label:
        raise NBSVMError(
            f"no label column {label_col!r}; columns: {listed} (--label-col names it)",
            path=name,
        )
    twice = [c for c in wanted if names.count(c) > 1]  # (others are never read)
    if twice:
        raise NBSVMError(f"the column {twice[0]!r} appears twice in the schema", path=name)
    return wanted


def read_parquet(
    path: str | os.PathLike[str],
    text_col: str | Sequence[str] = "text",
    label_col: str | None = "label",
    labeled: bool = True,
    label_optional: bool = False,
    stats: ReadStats | None = None,
    empty_label: bool = False,
    weight_col: str | None = None,
    several_labels: bool = True,
) -> Iterator[Document]:
    """Documents of a Parquet file, one record batch at a time (``line``: the row, from 1;
    ``weight_col``: the column of each document's weight). Needs pyarrow (``pip install 'nbsvm[parquet]'``)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise NBSVMError("Parquet input needs pyarrow: pip install 'nbsvm[parquet]'") from None
    if stats is None:
        stats = ReadStats()
    name = str(path)
    if name == "-":
        raise NBSVMError(
            "Parquet is not read from standard input (its index is at its end): give the file"
        )
    if not Path(name).is_file():
        raise NBSVMError("no such file", path=name)
    try:
        # pre_buffer (pyarrow's default) reads ahead whole row groups and keeps them:
        # 800k rows held 430 MB where the same rows as CSV stream in 160 MB
        pf = pq.ParquetFile(name, pre_buffer=False)
    except Exception as e:  # pyarrow's errors: not a Parquet file, truncated
        raise NBSVMError(f"cannot read as Parquet: {e}", path=name) from None
    fields = _Fields.of(
        text_col, label_col, labeled, label_optional, empty_label, stats, weight_col, several_labels
    )
    wanted = _parquet_columns(pf.schema_arrow.names, fields, name)
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=wanted):
            columns = {c: batch.column(c).to_pylist() for c in wanted}
            for i in range(batch.num_rows):
                row += 1
                found = fields.document({c: columns[c][i] for c in wanted}, name, row)
                if found is not None:
                    yield found
    except (OSError, pa.ArrowException) as e:  # a corrupt page: ArrowInvalid
        raise NBSVMError(f"cannot read as Parquet: {e}", path=name) from None
    except UnicodeDecodeError as e:  # a string column of bytes that are not UTF-8
        raise NBSVMError(
            f"cannot read as Parquet: a string column holds bytes that are not UTF-8 "
            f"(row group of row {row + 1}: {e.reason})",
            path=name,
        ) from None
