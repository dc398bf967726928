"""The input formats' names, aliases and help text, how several text columns are joined,
and which column options go together: what the command line's options declare and check,
without importing the readers (numpy, pandas)."""

from __future__ import annotations

from collections.abc import Sequence

from nbsvm.errors import NBSVMError

#: Input formats of text documents. ``labeled-lines``: ``label<TAB>text`` per line;
#: ``plain-lines``: one unlabeled document per line; ``csv`` / ``tsv``: a table whose first
#: row names the columns; ``folders``: one sub-folder per class, one file per document;
#: ``fasttext``: ``__label__NAME text`` per line (:mod:`nbsvm.io.fasttext`).
FORMATS = (
    "auto",
    "folders",
    "labeled-lines",
    "plain-lines",
    "csv",
    "tsv",
    "fasttext",
    "jsonl",
    "parquet",
    "blitzer",
)
#: The formats read by line, and folders, whose readers
#: :func:`nbsvm.io.readers._line_reader` picks; the
#: others are records or tables, whose ``--text-col`` and ``--label-col`` pick the fields.
_LINE_FORMATS = frozenset({"folders", "labeled-lines", "blitzer", "plain-lines", "fasttext"})
#: The older names, still accepted.
FORMAT_ALIASES = {"aclimdb": "folders", "lines": "labeled-lines", "text": "plain-lines"}
#: What the formats are, for help texts and errors.
FORMAT_HELP = (
    "auto (a folder: folders; .csv: csv; else labeled-lines, whose header line "
    "label<TAB>text is skipped), "
    "folders (one sub-folder per class), labeled-lines (label<TAB>text per line), "
    "plain-lines (one unlabeled document per line), csv / tsv (a table with a "
    "header row), fasttext (__label__NAME text per line; several labels: a "
    "multi-label document, for --multilabel), jsonl (a JSON object per line; .jsonl, .ndjson), "
    "parquet (.parquet; needs pyarrow), both with --text-col and --label-col; "
    "blitzer (Blitzer et al.'s raw .review files: a file, a domain folder, the "
    "sorted_data_acl folder or its .tar.gz); "
    "old names: aclimdb, lines, text"
)

#: Several ``--text-col`` columns are joined with this: the tokenizer sees ``|`` as a token
#: of its own, so no n-gram runs from the end of one column into the next.
COLUMN_SEPARATOR = " | "


def check_columns(
    text_col: str | Sequence[str], label_col: str | int | None, weight_col: str | None = None
) -> None:
    """Refuse a label column that is also a text column (``--text-col 2 --label-col 2``):
    every text would be its own label, one class per document. Called when the inputs are
    opened, before anything is read.

    >>> check_columns(["title", "body"], "body")
    Traceback (most recent call last):
    ...
    nbsvm.errors.NBSVMError: --text-col and --label-col both name column 'body': ...
    """
    named = [str(c) for c in ([text_col] if isinstance(text_col, str) else text_col)]
    if len(set(named)) != len(named):  # (each format: JSON lines read the text twice)
        raise NBSVMError(f"--text-col names each column once; got {named}")
    texts = set(named)
    if weight_col is not None and (str(weight_col) in texts or str(weight_col) == str(label_col)):
        raise NBSVMError(
            f"--weight-col names column {weight_col!r}, which is also the text's or the "
            "label's: give each its own column"
        )
    if label_col is None:
        return
    if str(label_col) in texts:
        raise NBSVMError(
            f"--text-col and --label-col both name column {label_col!r}: every "
            "text would be its own label (one class per document); give the "
            "label's column to --label-col and the text's to --text-col"
        )
