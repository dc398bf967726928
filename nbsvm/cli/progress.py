"""Progress bars: the library's progress events rendered with rich, one bar per stage or
epoch, with documents/s and, while the inputs are read, MB/s and an ETA."""

from __future__ import annotations

import sys
import time
from typing import Any

from nbsvm.cli.common import (
    DocumentStream,
    check_interrupt,
    command_streams,
    stderr_console,
)

#: Stages whose events come while documents are read from the inputs: their bars take
#: bytes from a document stream of the command (an epoch reads them when it has no total:
#: the first epoch with ``--lexicon`` trains while streaming).
READING_STAGES = {"hash", "lexicon", "eval", "hash test", "predict", "read"}
#: Events that say something once instead of counting (the commands print them or not).
NOT_PROGRESS = {"lexicon done", "data defaults", "lexicon without corpus", "columns"}
#: What the ``docs`` of a stage count, when not documents.
STAGE_UNITS = {"tune": "trainings"}


class _Bar:
    __slots__ = (
        "task",
        "unit",
        "total",
        "stream",
        "total_bytes",
        "first",
        "n",
        "last",
        "extra",
        "final",
        "bytes",
    )

    def __init__(self, task, unit, total, stream, total_bytes):
        self.task, self.unit, self.total = task, unit, total
        self.stream, self.total_bytes = stream, total_bytes
        self.first = None  # (documents, time) of the first event
        self.n, self.last = 0, 0.0  # documents and time of the latest event
        self.extra = ""
        self.final = False
        self.bytes = None  # bytes read, when the events say

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

    def __init__(
        self,
        quiet: bool = False,
        streams: list[DocumentStream] | None = None,
        redirect_stdout: bool | None = None,
    ):
        self.quiet = quiet
        self.streams = streams
        self.bars: dict[tuple, _Bar] = {}  # (stage, epoch) -> bar
        self._claimed: set[int] = set()
        self.progress: Any = None
        if quiet:  # nothing drawn: rich.progress not even imported (0.06 s of a small job)
            return
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        if redirect_stdout is None:
            # lines printed while the bars show go above them when stdout is the terminal
            # too; never take over a redirected stdout (it would end up on stderr)
            redirect_stdout = isatty(sys.stdout)
        # at 80 columns a 40-wide bar and the elapsed time would push the rate and the ETA
        # off the line: a short bar, the figures in one column (each column is as wide as
        # its widest row), and the ETA alone
        narrow = stderr_console().width < 120
        if narrow:
            columns = [
                TextColumn("{task.description}"),
                BarColumn(bar_width=6),
                TextColumn("{task.fields[count]} {task.fields[rate]} {task.fields[extra]}"),
                TimeRemainingColumn(),
            ]
        else:
            columns = [
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[count]}"),
                TextColumn("{task.fields[rate]}"),
                TextColumn("{task.fields[extra]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
            ]
        self.progress = Progress(
            *columns, console=stderr_console(), redirect_stdout=redirect_stdout
        )

    def __enter__(self):
        if self.progress is not None:
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress is None:
            return None
        if exc[0] is None:
            self._finish_reads()
        return self.progress.__exit__(*exc)

    def _finish_reads(self):
        """Complete the bars of stages whose input has been read to the end."""
        for bar in list(self.bars.values()):
            if bar.stream is not None and bar.stream.done and not bar.final:
                bar.final = True
                self._render(bar)

    def _stream_for(self, stage: str, event: dict) -> DocumentStream | None:
        """The stream a reading stage reads: one that has started and no other bar took."""
        if stage not in READING_STAGES and not (stage == "epoch" and event.get("total") is None):
            return None
        streams = command_streams if self.streams is None else self.streams
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
        task = self.progress.add_task(
            desc, total=total if total is not None else total_bytes, count="", rate="", extra=""
        )
        bar = self.bars[key] = _Bar(task, unit, total, stream, total_bytes)
        return bar

    def __call__(self, event: dict):
        check_interrupt()
        if self.quiet:
            return
        stage = event["stage"]
        if stage in NOT_PROGRESS:
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
                total = n  # read to the end: the bar is complete
        self.progress.update(
            bar.task,
            completed=completed,
            total=total,
            count=f"{count} {unit}".rstrip(),
            rate=rate,
            extra=bar.extra,
        )


def isatty(stream: Any) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
