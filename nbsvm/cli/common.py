"""What the commands share: input options, error handling, progress bars."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from nbsvm.errors import NBSVMError
from nbsvm.io.readers import (COLUMN_SEPARATOR, FORMAT_HELP, STDIN, ReadStats, is_document,
                          read_inputs)
from nbsvm.io.outputs import check_output

err_console = Console(stderr=True)

INPUTS = typer.Argument(..., help="aclImdb-style split folders, label<TAB>text files or .csv files "
                                  "('-': standard input). Labels are stripped of surrounding "
                                  "spaces; two labels differing only in case are an error.",
                        show_default=False)
FORMAT = typer.Option("auto", "--format", help=f"Input format: {FORMAT_HELP}.")
TEXT_COL = typer.Option(["text"], "--text-col",
                        help="Text column of CSV/TSV input; repeat it to join several columns "
                             f"(e.g. title and body, joined with {COLUMN_SEPARATOR.strip()!r}).")
ENCODING = typer.Option("utf-8", "--encoding",
                        help="Text encoding of the inputs: utf-8 (invalid bytes replaced and "
                             "counted, or refused with --strict), latin-1 for old corpora such "
                             "as 20 Newsgroups, or any other ASCII-compatible codec.")
SKIP_BAD = typer.Option(False, "--skip-bad-lines",
                        help="Skip malformed lines (no TAB, empty label, a row with too many "
                             "fields) and report how many, naming the first few; default: "
                             "stop at the first, naming file and line.")
LABEL_COL = typer.Option("label", "--label-col", help="Label column of CSV/TSV input.")
SCHEDULER = typer.Option(None, "--scheduler",
                         help="Run on the Dask cluster at this address (tcp://host:8786); "
                              "inputs are shards (files or globs) each worker reads itself. "
                              "Needs pip install 'nbsvm[dask]'.")
DASK_LOCAL = typer.Option(None, "--dask-local", min=1,
                          help="Run on a local Dask cluster of N worker processes.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bars.")
JSON = typer.Option(False, "--json", help="Print the report as JSON only (no progress bars).")
STRICT = typer.Option(False, "--strict",
                      help="Refuse invalid UTF-8 (default: replace it and report how many bytes).")


class DocumentStream:
    """The documents of some inputs (iterate once) and, once read, what reading replaced
    (``stats``: a :class:`~nbsvm.io.readers.ReadStats`).

    While it is read it counts the UTF-8 bytes of the documents' text (``bytes_read``; the
    length of ASCII text is its size, other text is encoded to measure it), which progress
    bars show as MB/s. Labels, separators and other CSV columns are not counted, so the
    count stays a little below the size of the files. ``total_bytes()`` is the size of the
    inputs when it is known (plain files and aclImdb folders; not ``.gz`` files or standard
    input). Counting costs 0.2 to 0.4 microseconds per document (IMDB: 6-9 ms for
    25,000 reviews, against about a second of hashing).
    """

    def __init__(self, docs, stats: ReadStats, inputs=()):
        self._docs = docs
        self.stats = stats
        self.inputs = list(inputs)
        self.bytes_read = 0          # written by the thread that reads, read by the others
        self.started: Optional[float] = None      # perf_counter() when reading began
        self.finished: Optional[float] = None     # and when the last document was read
        self.done = False            # every document has been read

    def __iter__(self):
        return self._counting()

    def _counting(self):
        self.started = time.perf_counter()
        n = 0
        for doc in self._docs:
            text = doc[1]
            n += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
            self.bytes_read = n
            yield doc
        self.finished = time.perf_counter()
        self.done = True

    def total_bytes(self) -> Optional[int]:
        """Bytes of text in the inputs, or None when that is not known cheaply."""
        return input_bytes(self.inputs)


def input_bytes(inputs) -> Optional[int]:
    """The summed size of ``inputs`` from the file system: a file's size, or for an aclImdb
    folder the sizes of its reviews (``.txt`` files in its label folders but ``unsup``, one
    ``os.scandir`` per folder). None when any input's text size is not known: standard
    input, open files, compressed (``.gz``) files, anything unreadable."""
    total = 0
    for src in inputs:
        if not isinstance(src, (str, os.PathLike)) or str(src) == STDIN:
            return None
        path = Path(src)
        try:
            if path.is_dir():
                for folder in os.scandir(path):
                    if folder.name == "unsup" or folder.name.startswith(".") \
                            or not folder.is_dir():
                        continue
                    with os.scandir(folder.path) as entries:
                        total += sum(e.stat().st_size for e in entries if is_document(e))
            elif path.suffix == ".gz" or not path.is_file():
                return None
            else:
                total += path.stat().st_size
        except OSError:
            return None
    return total


# The ReadStats of the running command; cli_errors() reports them when the command ends.
_command_stats: List[ReadStats] = []
# The document streams of the running command, which progress bars take their bytes from.
_command_streams: List[DocumentStream] = []


def read_stats(skip_bad: bool = False) -> ReadStats:
    """A fresh ReadStats, reported by :func:`cli_errors` when the command ends well."""
    stats = ReadStats(skip_bad=skip_bad)
    _command_stats.append(stats)
    return stats


def documents(inputs: List[str], fmt: str, text_col, label_col: Optional[str], labeled=True,
              strict: bool = False, skip_bad: bool = False, known_labels=None,
              encoding: str = "utf-8", empty_label: bool = False) -> DocumentStream:
    """The documents of ``inputs``; invalid UTF-8 is refused (``strict``) or replaced and
    counted, malformed lines skipped and counted (``skip_bad``), the counts and what the
    readers noted printed when the command ends (see :func:`report_reading`)."""
    stats = read_stats(skip_bad)
    stream = DocumentStream(read_inputs(inputs, fmt=fmt, labeled=labeled, text_col=text_col,
                                        label_col=label_col, strict=strict, stats=stats,
                                        known_labels=known_labels, encoding=encoding,
                                        empty_label=empty_label),
                            stats, inputs)
    _command_streams.append(stream)
    return stream


def report_reading(*sources) -> None:
    """Print to stderr what reading changed or decided: ``replaced N invalid UTF-8 bytes in
    M documents (--strict refuses them)``, ``skipped N malformed lines`` with the first few
    named, and the readers' notes (a header line skipped, lines read whole). Printed even
    with ``--quiet``: each says the data was not read as it stands.

    ``sources``: ReadStats or DocumentStreams; none: every one made for the running command
    (what :func:`cli_errors` prints when a command ends without an error).
    """
    stats = [getattr(s, "stats", s) for s in sources] if sources else _command_stats
    n_bytes = sum(s.replaced_bytes for s in stats)
    if n_bytes:
        n_docs = sum(s.replaced_docs for s in stats)
        _say(f"replaced {n_bytes} invalid UTF-8 byte{'s' * (n_bytes != 1)} in "
             f"{n_docs} document{'s' * (n_docs != 1)} (--strict refuses them)")
    n_bad = sum(s.bad_lines for s in stats)
    if n_bad:
        examples = [e for s in stats for e in s.bad_examples]
        _say(f"skipped {n_bad} malformed line{'s' * (n_bad != 1)} (--skip-bad-lines)"
             + "".join(f"\n  {e}" for e in examples)
             + ("\n  ..." if n_bad > len(examples) else ""))
    for note in dict.fromkeys(n for s in stats for n in s.notes):
        _say(f"note: {note}")


def _say(text: str) -> None:
    err_console.print(text, highlight=False, soft_wrap=True, markup=False)


def text_columns(columns: List[str]):
    """``--text-col`` as the readers take it: one name, or a list of several (one name
    stays a string, so cache keys and checkpoints of one column are as before)."""
    return columns[0] if len(columns) == 1 else list(columns)


def check_outputs(**paths) -> None:
    """Check every output a command will write (``option name -> path``, None: not
    written) before it reads anything: see :func:`nbsvm.io.outputs.check_output`."""
    for option, path in paths.items():
        if path is not None:
            check_output(path, "--" + option.replace("_", "-"))


_interrupted = threading.Event()


def _on_sigint(signum, frame):
    # Only note the first Ctrl-C: raising KeyboardInterrupt at an arbitrary point can land
    # inside numba's dispatcher (while it loads or compiles a kernel), which then loses or
    # garbles it. The progress callback raises it at the next safe point instead (every
    # batch or chunk); a second Ctrl-C interrupts at once.
    if _interrupted.is_set():
        raise KeyboardInterrupt
    _interrupted.set()


def end_on_closed_pipe():
    """The reader of standard output went away (``nbsvm predict ... | head -1``): a normal
    end for a filter. End as ``cat`` does: no message, killed by SIGPIPE (exit status 141
    in a shell). Standard output is pointed at /dev/null first, so that nothing flushed on
    the way out raises again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    raise typer.Exit(141)           # not reached where SIGPIPE exists


def check_interrupt():
    """Raise KeyboardInterrupt if Ctrl-C was pressed (call at safe points)."""
    if _interrupted.is_set():
        raise KeyboardInterrupt


@contextmanager
def cli_errors():
    """Turn the project's errors into one line on stderr and a non-zero exit, no traceback.

    When the command ends without an error, says how many invalid UTF-8 bytes the inputs it
    read through :func:`documents` (or :func:`read_stats`) had replaced, if any.
    """
    previous = None
    if threading.current_thread() is threading.main_thread():
        _interrupted.clear()
        previous = signal.signal(signal.SIGINT, _on_sigint)
    _command_stats.clear()
    _command_streams.clear()
    try:
        yield
        report_reading()
    except BrokenPipeError:
        end_on_closed_pipe()
    except NBSVMError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except KeyboardInterrupt:
        err_console.print("[bold red]interrupted[/]: nothing was written over existing files")
        raise typer.Exit(130)
    except (OSError, MemoryError) as e:
        err_console.print(f"[bold red]error:[/] {type(e).__name__}: {escape(str(e))}", highlight=False,
                          soft_wrap=True)
        raise typer.Exit(2)
    finally:
        _command_streams.clear()     # a later command in this process must not see them
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


#: Stages whose events come while documents are read from the inputs: their bars take
#: bytes from a document stream of the command (an epoch reads them when it has no total:
#: the first epoch with ``--lexicon`` trains while streaming).
READING_STAGES = {"hash", "lexicon", "eval", "hash test", "predict", "read"}
#: What the ``docs`` of a stage count, when not documents.
STAGE_UNITS = {"tune": "trainings"}


class _Bar:
    __slots__ = ("task", "unit", "total", "stream", "total_bytes", "first", "n", "last",
                 "extra", "final", "bytes")

    def __init__(self, task, unit, total, stream, total_bytes):
        self.task, self.unit, self.total = task, unit, total
        self.stream, self.total_bytes = stream, total_bytes
        self.first = None            # (documents, time) of the first event
        self.n, self.last = 0, 0.0   # documents and time of the latest event
        self.extra = ""
        self.final = False
        self.bytes = None            # bytes read, when the events say

    def docs_per_second(self) -> str:
        """From the start of reading for a reading stage; else from the first event (what
        came before it took an unknown time)."""
        if self.stream is not None and self.stream.started is not None:
            n, t0 = self.n, self.stream.started
        else:
            n, t0 = self.n - self.first[0], self.first[1]
        if self.last <= t0 or n <= 0:
            return ""
        return f"{n / (self.last - t0):,.0f} {self.unit}/s"


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def _size(done: float, total: float) -> str:
    """``12.3/33.1 MB`` (``kB`` under 100 kB)."""
    if total >= 1e5:
        return f"{done / 1e6:,.1f}/{total / 1e6:,.1f} MB"
    return f"{done / 1e3:,.1f}/{total / 1e3:,.1f} kB"


class ProgressReporter:
    """Renders the library's progress events as rich bars (one per stage / epoch).

    An event is ``{"stage": ..., "docs": n}`` (``"examples"`` is read as ``"docs"``), with
    ``"total"`` when the stage knows how many documents it will see, ``"epoch"`` /
    ``"epochs"`` for epochs, ``"loss"``; ``"unit"`` names what ``docs`` counts and
    ``"extra"`` is shown as it is; ``"bytes"`` (read so far) and ``"total_bytes"`` give a
    stage without a document stream MB/s and an ETA. Each bar shows documents and documents/s; a stage that
    reads the inputs (:data:`READING_STAGES`) also shows MB/s, from the
    :class:`DocumentStream` the command is reading (``streams``; default: every stream
    :func:`documents` made for the command). The bar and its ETA follow the documents when
    the stage knows their total, else the bytes when the inputs' size is known
    (:func:`input_bytes`), else the bar only pulses. Called once per batch (512 documents),
    so the cost per document is nil; ``quiet`` draws nothing.
    """

    def __init__(self, quiet: bool = False, streams: Optional[List[DocumentStream]] = None,
                 redirect_stdout: Optional[bool] = None):
        self.quiet = quiet
        if redirect_stdout is None:
            # lines printed while the bars show go above them when stdout is the terminal
            # too; never take over a redirected stdout (it would end up on stderr)
            redirect_stdout = _isatty(sys.stdout)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.fields[count]}"),
                                 TextColumn("{task.fields[rate]}"),
                                 TextColumn("{task.fields[extra]}"), TimeElapsedColumn(),
                                 TimeRemainingColumn(), console=err_console, disable=quiet,
                                 redirect_stdout=redirect_stdout)
        self.streams = streams
        self.bars = {}
        self._claimed = set()

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if exc[0] is None and not self.quiet:
            self._finish_reads()
        return self.progress.__exit__(*exc)

    def _finish_reads(self):
        """Complete the bars of stages whose input has been read to the end."""
        for bar in list(self.bars.values()):
            if bar.stream is not None and bar.stream.done and not bar.final:
                bar.final = True
                self._render(bar)

    def _stream_for(self, stage: str, event: dict) -> Optional[DocumentStream]:
        """The stream a reading stage reads: one that has started and no other bar took."""
        if stage not in READING_STAGES and not (stage == "epoch" and event.get("total") is None):
            return None
        streams = _command_streams if self.streams is None else self.streams
        for stream in streams:
            if id(stream) not in self._claimed and stream.started is not None:
                self._claimed.add(id(stream))
                return stream
        return None

    def _start(self, key, stage: str, event: dict) -> _Bar:
        self._finish_reads()
        desc = f"epoch {event['epoch']}/{event['epochs']}" if stage == "epoch" else stage
        stream = self._stream_for(stage, event)
        total, total_bytes = event.get("total"), None
        if stream is not None and total is None:
            total_bytes = stream.total_bytes()
        unit = event.get("unit") or STAGE_UNITS.get(stage, "docs")
        task = self.progress.add_task(desc, total=total if total is not None else total_bytes,
                                      count="", rate="", extra="")
        bar = self.bars[key] = _Bar(task, unit, total, stream, total_bytes)
        return bar

    def __call__(self, event: dict):
        check_interrupt()
        if self.quiet:
            return
        stage = event["stage"]
        if stage == "lexicon done":
            return
        key = (stage, event.get("epoch"))
        bar = self.bars.get(key)
        if bar is None:
            bar = self._start(key, stage, event)
        bar.n = event.get("docs", event.get("examples", 0))
        bar.last = time.perf_counter()
        if bar.first is None:
            bar.first = (bar.n, bar.last)
        if event.get("total") is not None:
            bar.total = event["total"]
        if "bytes" in event:
            bar.bytes = event["bytes"]
            if event.get("total_bytes") is not None:
                bar.total_bytes = event["total_bytes"]
        if "extra" in event:
            bar.extra = event["extra"]
        elif "loss" in event:
            bar.extra = f"loss {event['loss']:.4f}"
        self._render(bar)

    def _render(self, bar: _Bar):
        n, unit = bar.n, bar.unit
        count = f"{n:,}/{bar.total:,}" if bar.total is not None else f"{n:,}"
        rate = bar.docs_per_second()
        completed, total = n, bar.total
        stream, done = bar.stream, False
        read = seconds = None
        if stream is not None and stream.started is not None:
            read, done = stream.bytes_read, stream.done
            seconds = (stream.finished if done else time.perf_counter()) - stream.started
        elif bar.bytes is not None and bar.first is not None:
            read, seconds = bar.bytes, bar.last - bar.first[1]
        if read is not None:
            if seconds and seconds > 0:
                rate = f"{rate}  {_mb(read / seconds)} MB/s".strip()
            if bar.total is None and bar.total_bytes is not None:
                total = max(bar.total_bytes, read)
                completed = total if done else read
                count += f" {unit}  {_size(completed, total)}"
                unit = ""
            elif bar.total is None and done:
                total = n                       # read to the end: the bar is complete
        self.progress.update(bar.task, completed=completed, total=total,
                             count=f"{count} {unit}".rstrip(), rate=rate, extra=bar.extra)


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def echo_kv(pairs: dict):
    for k, v in pairs.items():
        typer.echo(f"{k}: {v}")


def print_report(rep: dict, seconds: float):
    """A model's report: accuracy, per-class table and confusion matrix; for multi-label,
    regression (``rep["task"]``) the metrics of that task."""
    if rep.get("task") in ("multilabel", "regression"):
        _print_task_report(rep, seconds)
        return
    console = Console()
    console.print(f"accuracy: {100 * rep['accuracy']:.2f}%", highlight=False)
    if "log_loss" in rep:
        console.print(f"log loss: {rep['log_loss']:.4f}", highlight=False)
    console.print(f"documents: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
    table = _per_class_table(console, rep, "class", "errors")
    table.add_row("macro", f"{rep['macro_precision']:.4f}", f"{rep['macro_recall']:.4f}",
                  f"{rep['macro_f1']:.4f}", str(rep["n_docs"]))
    console.print(table)
    cm = Table(title="confusion matrix (rows: true, columns: predicted)")
    cm.add_column("")
    for c in rep["classes"]:
        cm.add_column(escape(c))
    for c, row in zip(rep["classes"], rep["confusion_matrix"]):
        cm.add_row(escape(c), *[str(x) for x in row])
    console.print(cm)


def _print_task_report(rep: dict, seconds: float):
    """Hamming loss, micro / macro F1 and a per-label table (multi-label), or MSE / MAE /
    R^2 (regression)."""
    console = Console()
    if rep["task"] == "regression":
        console.print(f"MSE: {rep['mse']:.6g}\nMAE: {rep['mae']:.6g}\nR^2: {rep['r2']:.4f}",
                      highlight=False)
        console.print(f"examples: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
        return
    console.print(f"Hamming loss: {rep['hamming_loss']:.4f}\n"
                  f"micro F1: {rep['micro_f1']:.4f}\nmacro F1: {rep['macro_f1']:.4f}\n"
                  f"subset accuracy: {100 * rep['subset_accuracy']:.2f}%", highlight=False)
    console.print(f"examples: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
    console.print(_per_class_table(console, rep, "label", "missed"))


def _per_class_table(console, rep: dict, what: str, counted_as: str) -> Table:
    """Print the labels the model does not know; return the per-class P/R/F1 table."""
    if rep.get("unseen_labels"):
        shown = ", ".join(f"{label} ({n})" for label, n in rep["unseen_labels"].items())
        console.print(f"labels the model does not know, counted as {counted_as}: {shown}",
                      highlight=False, markup=False)
    table = Table(what, "precision", "recall", "F1", "support")
    for c, m in rep["per_class"].items():       # class names are user data, not markup
        table.add_row(escape(c), f"{m['precision']:.4f}", f"{m['recall']:.4f}",
                      f"{m['f1']:.4f}", str(m["support"]))
    return table


def parse_eta0(text: str | None):
    """``--eta0``: a positive number or ``auto`` (None: the default for the classes)."""
    if text is None:
        return None
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise NBSVMError(f"--eta0 must be a positive number or auto, got {text!r}") from None
