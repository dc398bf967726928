"""The input formats' names, aliases and help text, and how several text columns are
joined: what the command line's options declare, without importing the readers (numpy,
pandas)."""

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
