"""``nbsvm predict``: one row per input document, as CSV, JSON lines or Parquet."""

from __future__ import annotations

import json
import os
import sys
from json.encoder import encode_basestring
from pathlib import Path

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import (
    Dask,
    Reading,
    cli_errors,
    err_console,
    prepare_reading,
    read_stats,
    refuse_other_format,
)
from nbsvm.cli.options import (
    DASK,
    INPUTS,
    READING,
    SKIP_BAD,
    dask_options,
    reading_flags,
    reading_options,
    refuse_text_reading,
)
from nbsvm.cli.progress import ProgressReporter, isatty
from nbsvm.errors import NBSVMError

#: ``--output-format`` values; without it, the suffix of ``--output`` decides (csv otherwise)
OUTPUT_FORMATS = ("csv", "parquet", "jsonl")
SUFFIXES = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}
#: rows per Parquet row group: predictions come in batches of 512, far too small a group
ROW_GROUP_ROWS = 65536


def choose_output_format(requested: str | None, output: str | None) -> str:
    """The output format: ``requested``, or from the suffix of ``output`` (``.parquet``,
    ``.jsonl`` / ``.ndjson``; a suffix of a format predict does not write is refused,
    :func:`~nbsvm.cli.common.refuse_other_format`; anything else, and standard output, is CSV)."""
    if output is not None and Path(output).suffix.lower() == ".npz":  # a model, whatever asked
        refuse_other_format(output, "CSV, Parquet or JSON lines", ".csv, .parquet or .jsonl")
    if requested is not None:
        fmt = requested.strip().lower()
        if fmt not in OUTPUT_FORMATS:
            raise NBSVMError(
                f"unknown output format {requested!r}; allowed: {', '.join(OUTPUT_FORMATS)}"
            )
        return fmt
    if output is None:
        return "csv"
    refuse_other_format(
        output, "CSV, Parquet or JSON lines", ".csv, .parquet or .jsonl, or give --output-format"
    )
    return SUFFIXES.get(Path(output).suffix.lower(), "csv")


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise NBSVMError("Parquet output needs pyarrow: pip install 'nbsvm[parquet]'") from None
    return pyarrow


#: predict's --label-col: the label is not needed, only copied where there is one
PREDICT_LABEL_COL = typer.Option(
    "label",
    "--label-col",
    help="Label column of CSV/TSV input, copied to true_label when present.",
)


def _columns(frame) -> dict:
    """A prediction table as ``{column: numpy array}`` (a DataFrame's, or the columns of
    :func:`~nbsvm.evaluation.predict.prediction_columns`)."""
    import numpy as np

    items = frame.items()
    out = {}
    for name, values in items:
        if isinstance(values, np.ndarray):
            out[name] = values
        elif hasattr(values, "to_numpy"):  # a pandas column
            out[name] = values.to_numpy()
        else:  # a list: numbers as numbers (as pandas would read them), else objects
            column = np.asarray(values) if values else np.empty(0, dtype=object)
            if column.dtype.kind not in "iufb" or column.ndim != 1:
                column = np.empty(len(values), dtype=object)
                column[:] = values
            out[name] = column
    if "source" in out:  # a file name of bytes not UTF-8 (kept by Python as surrogates)
        out["source"] = _printable(out["source"])
    return out


def _printable(sources):
    """File names as text an output file can hold: a name whose bytes are not UTF-8 shows
    them escaped (``bad\\xffname.txt``), where writing it raised UnicodeEncodeError."""
    import numpy as np

    names = {}
    for name in dict.fromkeys(sources.tolist()):  # a few distinct names per table
        try:
            name.encode("utf-8")
            names[name] = name
        except (UnicodeEncodeError, AttributeError):
            names[name] = os.fsencode(name).decode("utf-8", "backslashreplace")
    if all(k is v for k, v in names.items()):
        return sources
    out = np.empty(len(sources), dtype=object)
    out[:] = [names[s] for s in sources.tolist()]
    return out


def _n_rows(frame) -> int:
    """Rows of a prediction table (a DataFrame, or columns by name)."""
    if isinstance(frame, dict):
        return len(next(iter(frame.values()))) if frame else 0
    return len(frame)


class _Sink:
    """Writes prediction tables one after another under the columns of the first: a later
    table lacking one of them gets it empty, columns only a later table has are dropped
    (the first batch decides, e.g. whether there is a ``true_label``), and counted in
    ``dropped`` (column -> rows) for the note :func:`_write_predictions` prints."""

    columns: list | None = None

    def write(self, frame):
        import numpy as np

        table = _columns(frame)
        if self.columns is None:
            self.columns = list(table)
            self.dropped: dict[str, int] = {}
        elif list(table) != self.columns:
            n = len(next(iter(table.values()))) if table else 0
            for c in table.keys() - set(self.columns):  # the rows that had a value
                kept = sum(v is not None and v == v and v != "" for v in table[c])
                if kept:
                    self.dropped[c] = self.dropped.get(c, 0) + kept
            table = {c: table.get(c, np.full(n, None, dtype=object)) for c in self.columns}
        self._write(table)

    def close(self):
        pass

    def note(self) -> str | None:
        """What the columns of the first table left out, in one sentence (None: nothing)."""
        if not getattr(self, "dropped", None):
            return None
        said = ", ".join(f"{c} of {n} rows" for c, n in sorted(self.dropped.items()))
        return (
            f"note: left out {said}: the output's columns are those of its first table (the "
            "first batch of documents, or the first shard), which had none; predict such "
            "inputs on their own"
        )


def _csv_values(column) -> list[str]:
    """A column's values as pandas' ``to_csv`` writes them: numbers by numpy's shortest
    text, NaN and None empty."""
    import numpy as np

    kind = column.dtype.kind
    if kind == "f":
        text = column.astype(str)
        text[np.isnan(column)] = ""
        return text.tolist()
    if kind in "iub":
        return column.astype(str).tolist()
    return ["" if _missing(v) else str(v) for v in column.tolist()]


def _missing(value) -> bool:
    """None, NaN or pandas' NA (whose comparisons are neither true nor false)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:
        return True


class _CsvSink(_Sink):
    """CSV by the standard library (the same text as pandas' ``to_csv``, without
    importing pandas: 0.3 s of a prediction's start)."""

    def __init__(self, fh):
        import csv

        self.writer = csv.writer(fh, lineterminator="\n")
        self.header = True

    def _write(self, table):
        if self.header:
            self.writer.writerow(self.columns)
            self.header = False
        self.writer.writerows(zip(*(_csv_values(table[c]) for c in self.columns)))


def _json_values(column) -> list:
    """A column's values as JSON text: numbers exactly (``repr`` of a double reads back
    bit for bit), NaN and None as ``null``, anything else as a JSON string."""
    import numpy as np

    kind = column.dtype.kind
    values = column.tolist()
    if kind == "f":
        out = [repr(v) for v in values]
        finite = np.isfinite(column.astype(np.float64))
        if not finite.all():
            for i in np.flatnonzero(~finite):
                out[i] = "null"
        return out
    if kind in "iu":
        return [str(v) for v in values]
    if kind == "b":
        return ["true" if v else "false" for v in values]
    return ["null" if v is None or v != v else encode_basestring(str(v)) for v in values]


class _JsonlSink(_Sink):
    """One JSON object per line. Built column by column (about 2 microseconds a row):
    pandas' ``to_json`` rounds doubles to 15 decimals (a probability of 1e-17 becomes 0)."""

    def __init__(self, fh):
        self.fh = fh
        self.template = None

    def _write(self, table):
        if self.template is None:
            self.template = "{" + ",".join(json.dumps(c) + ":%s" for c in self.columns) + "}\n"
        if self.columns and len(table[self.columns[0]]):
            columns = [_json_values(table[c]) for c in self.columns]
            self.fh.write("".join([self.template % row for row in zip(*columns)]))


class _ParquetSink(_Sink):
    """Row groups of :data:`ROW_GROUP_ROWS` rows, written as they fill: memory holds at most
    one group, whatever the size of the input."""

    def __init__(self, path):
        self.pa = _pyarrow()
        self.path = path
        self.writer = None
        self.pending, self.n_pending = [], 0

    def _write(self, table):
        import pandas as pd

        frame = pd.DataFrame(table)
        self.pending.append(frame)
        self.n_pending += len(frame)
        if self.n_pending >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self):
        import pandas as pd

        if not self.pending:
            return
        frame = (
            pd.concat(self.pending, ignore_index=True) if len(self.pending) > 1 else self.pending[0]
        )
        self.pending, self.n_pending = [], 0
        if self.writer is None:
            table = self.pa.Table.from_pandas(frame, preserve_index=False)
            # a column empty in the first group (a top-k label below --threshold, a true
            # label) has no type yet: text, or every later group failed to cast to it
            pa = self.pa
            schema = pa.schema(
                [f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in table.schema]
            )
            table = table.cast(schema)
            self.writer = self.pa.parquet.ParquetWriter(str(self.path), table.schema)
        else:
            table = self.pa.Table.from_pandas(
                frame, schema=self.writer.schema, preserve_index=False, safe=False
            )
        self.writer.write_table(table, row_group_size=len(table))  # one group

    def close(self):
        self._flush()
        if self.writer is None:  # no rows at all: still a valid, empty file
            import pandas as pd

            table = self.pa.Table.from_pandas(
                pd.DataFrame(columns=self.columns or []), preserve_index=False
            )
            self.writer = self.pa.parquet.ParquetWriter(str(self.path), table.schema)
        self.writer.close()


@app.command("predict")
@reading_options(label_col=PREDICT_LABEL_COL)
@dask_options()
def predict_command(
    inputs: list[str] = INPUTS,
    model: str = typer.Option(
        ..., "--model", "-m", help="Model file from `nbsvm train` or `nbsvm learn`."
    ),
    output: str | None = typer.Option(
        None,
        "--output",
        "-o",
        help="File to write (default or '-': standard "
        "output). A file is written to a temporary "
        "name and renamed when complete; a device or "
        "FIFO is written through.",
    ),
    output_format: str | None = typer.Option(
        None,
        "--output-format",
        help=f"One of {', '.join(OUTPUT_FORMATS)} (default: from the --output suffix: "
        ".parquet, .jsonl or .ndjson, else csv; a suffix of another format, such as .gz, "
        ".tsv or .json, is refused). Parquet needs pyarrow "
        "(pip install 'nbsvm[parquet]').",
    ),
    reading: Reading = READING,
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bar and no summary line on stderr."
    ),
    top_k: int | None = typer.Option(
        None,
        "--top-k",
        min=1,
        metavar="K",
        help="Also write the K best classes of each document "
        "with their probabilities (scores for losses "
        "without them): top1_label, top1_probability, "
        "...",
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        metavar="T",
        help="With --top-k, leave out classes whose "
        "probability (score) is below T; alone, "
        "list every class at or above T.",
    ),
    skip_bad: bool = SKIP_BAD,
    dask: Dask = DASK,
) -> None:
    """Predict labels: one row per document with source, line, true_label (if known), label,
    then for two classes score_POS and probability_POS (of the positive class, named after
    it), for more the score and probability of the predicted class, for multi-label every
    label's probability_LABEL (`nbsvm learn` models: label and score, or prediction for
    regression), as CSV, JSON lines or Parquet; --top-k K adds the K best classes.

    Line files (--format auto): a line `label<TAB>text` whose label is one of the model's
    classes (a multi-label model's: a set of them, `a,b`, or none, `<TAB>text`) keeps it
    as true_label; any other line is one document, TABs and all. The
    first batch of documents decides the columns: true labels met only later are left out,
    with a note saying how many."""
    from nbsvm.io.npzfile import model_file_kind
    from nbsvm.io.outputs import check_not_read

    with cli_errors():
        if output == "-":
            output = None
        given = reading_flags(reading, PREDICT_LABEL_COL)  # as given, for a learn model
        reads = {"an input": inputs, "the model": model}
        reading = prepare_reading(reading, reads, output=output)
        if output is None:  # `>> input.txt`: each prediction read back as a document, forever
            check_not_read("/dev/stdout", "standard output", reads)
        out_fmt = _output_format(output_format, output)
        options = dict(locals())  # every option by name, resolved: for the steps below
        if dask:
            frames = _predict_on_dask(**options)
        elif model_file_kind(model) == "learner":
            frames = _predict_learned(**options)
        else:
            frames = _predict_text(**options)
        n = _write_predictions(frames, output, out_fmt, quiet)
        if output is not None and not quiet:
            err_console.print(
                f"predictions: {n} written to {output} ({out_fmt})",
                highlight=False,
                soft_wrap=True,
                markup=False,
            )


def _output_format(output_format: str | None, output: str | None) -> str:
    """The format to write, checked before any work: Parquet needs pyarrow and a file."""
    out_fmt = choose_output_format(output_format, output)
    if out_fmt == "parquet":
        _pyarrow()  # before any work: say what to install
        if output is None or not _seekable_target(output):
            # (its index is written at its end: a pipe got an OSError's 'lseek failed')
            raise NBSVMError(
                "Parquet output needs --output FILE (it is not written to standard output, "
                "a pipe or a device)"
            )
    return out_fmt


def _seekable_target(output: str) -> bool:
    """Whether ``output`` is (or will be) a regular file: a new name, or an existing one
    that links to a regular file, not a pipe, FIFO or device (``-o /dev/stdout | cat``)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(output).st_mode)
    except OSError:
        return True  # a new file


def _predict_on_dask(*, inputs, model, reading, skip_bad, top_k, threshold, dask, **_):
    """``--scheduler / --dask-local``: one table per shard, gathered in shard order."""
    import numpy as np

    from nbsvm.io.npzfile import model_file_kind
    from nbsvm.models.nbsvm import NBSVMClassifier

    if skip_bad:
        raise NBSVMError("--skip-bad-lines is not available with --scheduler / --dask-local")
    if model_file_kind(model) == "learner":
        raise NBSVMError("--scheduler / --dask-local predict with models from `nbsvm train`")
    from nbsvm.workflows import distributed

    clf = NBSVMClassifier.load(model)  # a bad model file: say so before starting workers
    if top_k is not None or threshold is not None:  # and a bad threshold
        clf.top_k_of(np.zeros((0, clf.n_outputs())), top_k, threshold)
    reader = reading.reader(top_k=top_k, threshold=threshold)
    # one table per shard, gathered in shard order and written as one file
    with dask.client() as client:
        shards = distributed.shards_of(inputs)
        return iter(distributed.predict(client, shards, model, reader, read_stats()))


def _predict_learned(*, inputs, model, reading, given, skip_bad, top_k, threshold, **_):
    """The predictions of an `nbsvm learn` model (sparse feature input)."""
    from nbsvm.evaluation.sparse import load_learner, predict_sparse
    from nbsvm.io.decoding import check_encoding

    refuse_text_reading(given, model)

    if skip_bad:
        raise NBSVMError(
            "--skip-bad-lines reads text for models of `nbsvm train`; "
            "this is an `nbsvm learn` model",
            path=model,
        )
    if top_k is not None or threshold is not None:
        raise NBSVMError(
            "--top-k / --threshold rank the classes of models from "
            "`nbsvm train`; this is an `nbsvm learn` model",
            path=model,
        )
    return predict_sparse(
        load_learner(model),
        inputs,
        fmt=reading.fmt,
        strict=reading.strict,
        stats=read_stats(skip_bad),
        encoding=check_encoding(reading.encoding),
    )


def _predict_text(*, inputs, model, reading, skip_bad, top_k, threshold, **_):
    """The predictions of an `nbsvm train` model, on text."""
    from nbsvm.evaluation.predict import prediction_columns
    from nbsvm.io.labels import known_labels
    from nbsvm.models.nbsvm import NBSVMClassifier

    clf = NBSVMClassifier.load(model)
    return prediction_columns(
        clf,
        reading.documents(
            inputs,
            labeled=False,
            skip_bad=skip_bad,
            known_labels=known_labels(clf.class_names_, clf.multilabel),
            empty_label=clf.multilabel,  # '<TAB>text': an empty label set, as eval reads it
        ),
        top_k,
        threshold,
    )


def _write_predictions(frames, output: str | None, out_fmt: str, quiet: bool) -> int:
    """Write the tables of predictions (to standard output when ``output`` is None, else
    to a temporary file renamed when complete); the number of rows."""
    # rows on a terminal show their own progress; a bar would only garble them
    from nbsvm.io.npzfile import atomic_path

    show = not quiet and not (output is None and isatty(sys.stdout))
    n = 0
    sink: _JsonlSink | _CsvSink | _ParquetSink
    with ProgressReporter(not show, redirect_stdout=False) as progress:
        if output is None:
            sink = (_JsonlSink if out_fmt == "jsonl" else _CsvSink)(sys.stdout)
            for frame in frames:
                sink.write(frame)
                n += _n_rows(frame)
                progress({"stage": "predict", "docs": n})
            sink.close()
            _note(sink)
            return n
        with atomic_path(output) as tmp:
            if out_fmt == "parquet":
                sink = _ParquetSink(tmp)
                fh = None
            else:
                fh = open(tmp, "w", newline="", encoding="utf-8")
                sink = (_JsonlSink if out_fmt == "jsonl" else _CsvSink)(fh)
            try:
                for frame in frames:
                    sink.write(frame)
                    n += _n_rows(frame)
                    progress({"stage": "predict", "docs": n})
                sink.close()
            finally:
                if fh is not None:
                    fh.close()
    _note(sink)
    return n


def _note(sink: _Sink) -> None:
    note = sink.note()
    if note:
        typer.echo(note, err=True)
