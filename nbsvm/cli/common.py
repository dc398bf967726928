"""What the commands share: input options, error handling, progress bars."""
from __future__ import annotations

import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from ..errors import NBSVMError
from ..io.readers import FORMATS, ReadStats, read_inputs

err_console = Console(stderr=True)

INPUTS = typer.Argument(..., help="aclImdb-style split folders, label<TAB>text files or .csv files "
                                  "('-': standard input). Labels are stripped of surrounding "
                                  "spaces; two labels differing only in case are an error.",
                        show_default=False)
FORMAT = typer.Option("auto", "--format", help=f"Input format: {', '.join(FORMATS)}.")
TEXT_COL = typer.Option("text", "--text-col", help="Text column of CSV/TSV input.")
LABEL_COL = typer.Option("label", "--label-col", help="Label column of CSV/TSV input.")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bars.")
STRICT = typer.Option(False, "--strict",
                      help="Refuse invalid UTF-8 (default: replace it and report how many bytes).")


class DocumentStream:
    """The documents of some inputs (iterate once) and, once read, what reading replaced
    (``stats``: a :class:`~nbsvm.io.readers.ReadStats`)."""

    def __init__(self, docs, stats: ReadStats):
        self._docs = docs
        self.stats = stats

    def __iter__(self):
        return iter(self._docs)


# The ReadStats of the running command; cli_errors() reports them when the command ends.
_command_stats: List[ReadStats] = []


def read_stats() -> ReadStats:
    """A fresh ReadStats, reported by :func:`cli_errors` when the command ends well."""
    stats = ReadStats()
    _command_stats.append(stats)
    return stats


def documents(inputs: List[str], fmt: str, text_col: str, label_col: Optional[str], labeled=True,
              strict: bool = False) -> DocumentStream:
    """The documents of ``inputs``; invalid UTF-8 is refused (``strict``) or replaced and
    counted, the count printed when the command ends (see :func:`report_replaced`)."""
    stats = read_stats()
    return DocumentStream(read_inputs(inputs, fmt=fmt, labeled=labeled, text_col=text_col,
                                      label_col=label_col, strict=strict, stats=stats), stats)


def report_replaced(*sources) -> None:
    """Print one line to stderr when invalid UTF-8 was replaced: ``replaced N invalid UTF-8
    bytes in M documents (--strict refuses them)``.

    ``sources``: ReadStats or DocumentStreams; none: every one made for the running command
    (what :func:`cli_errors` prints when a command ends without an error).
    """
    stats = [getattr(s, "stats", s) for s in sources] if sources else _command_stats
    n_bytes = sum(s.replaced_bytes for s in stats)
    if n_bytes:
        n_docs = sum(s.replaced_docs for s in stats)
        err_console.print(f"replaced {n_bytes} invalid UTF-8 byte{'s' * (n_bytes != 1)} in "
                          f"{n_docs} document{'s' * (n_docs != 1)} (--strict refuses them)",
                          highlight=False, soft_wrap=True)


_interrupted = threading.Event()


def _on_sigint(signum, frame):
    # Only note the first Ctrl-C: raising KeyboardInterrupt at an arbitrary point can land
    # inside numba's dispatcher (while it loads or compiles a kernel), which then loses or
    # garbles it. The progress callback raises it at the next safe point instead (every
    # batch or chunk); a second Ctrl-C interrupts at once.
    if _interrupted.is_set():
        raise KeyboardInterrupt
    _interrupted.set()


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
    try:
        yield
        report_replaced()
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
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


class ProgressReporter:
    """Renders the library's progress events as rich bars (one per stage / epoch)."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                                 TextColumn("{task.fields[extra]}"), TimeElapsedColumn(),
                                 TimeRemainingColumn(), console=err_console, disable=quiet)
        self.tasks = {}
        self.started = {}

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def __call__(self, event: dict):
        check_interrupt()
        stage = event["stage"]
        if stage == "lexicon done":
            return
        key = (stage, event.get("epoch"))
        if key not in self.tasks:
            desc = f"epoch {event['epoch']}/{event['epochs']}" if stage == "epoch" else stage
            self.tasks[key] = self.progress.add_task(desc, total=event.get("total"), rate="",
                                                     extra="")
            self.started[key] = time.perf_counter()
        elapsed = max(time.perf_counter() - self.started[key], 1e-9)
        extra = f"loss {event['loss']:.4f}" if "loss" in event else ""
        self.progress.update(self.tasks[key], completed=event["docs"],
                             rate=f"{event['docs'] / elapsed:,.0f} docs/s", extra=extra)


def echo_kv(pairs: dict):
    for k, v in pairs.items():
        typer.echo(f"{k}: {v}")


def print_report(rep: dict, seconds: float):
    console = Console()
    console.print(f"accuracy: {100 * rep['accuracy']:.2f}%", highlight=False)
    if "log_loss" in rep:
        console.print(f"log loss: {rep['log_loss']:.4f}", highlight=False)
    console.print(f"documents: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
    table = Table("class", "precision", "recall", "F1", "support")
    for c, m in rep["per_class"].items():
        table.add_row(c, f"{m['precision']:.4f}", f"{m['recall']:.4f}", f"{m['f1']:.4f}",
                      str(m["support"]))
    table.add_row("macro", f"{rep['macro_precision']:.4f}", f"{rep['macro_recall']:.4f}",
                  f"{rep['macro_f1']:.4f}", str(rep["n_docs"]))
    console.print(table)
    cm = Table(title="confusion matrix (rows: true, columns: predicted)")
    cm.add_column("")
    for c in rep["classes"]:
        cm.add_column(c)
    for c, row in zip(rep["classes"], rep["confusion_matrix"]):
        cm.add_row(c, *[str(x) for x in row])
    console.print(cm)
