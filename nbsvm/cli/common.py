"""What the commands share: the documents they read (with what reading replaced or skipped,
reported when the command ends), outputs checked before reading, Ctrl-C at safe points, and
the project's errors turned into one line and an exit status."""

from __future__ import annotations

import errno
import functools
import itertools
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, cast

import typer

from nbsvm.errors import NBSVMError
from nbsvm.io.document import read_once

if TYPE_CHECKING:  # the readers are imported when a command reads
    from rich.console import Console

    from nbsvm.io.decoding import ReadStats


_console: list[Console] = []


def stderr_console() -> Console:
    """rich's Console on standard error, made on first use: a command that prints neither
    an error nor progress never imports rich (0.05 s of nbsvm info's start)."""
    if not _console:
        from rich.console import Console

        _console.append(Console(stderr=True))
    return _console[0]


class _ErrConsole:
    """:func:`stderr_console` by attribute (``err_console.print``), made when first used;
    what takes a Console itself (rich's Progress) gets :func:`stderr_console`."""

    def __getattr__(self, name: str) -> Any:
        return getattr(stderr_console(), name)


err_console = cast("Console", _ErrConsole())

_stdout_gone: list[bool] = []  # the reader of standard output went away mid-report


def stdout_console() -> Console:
    """rich's Console on standard output, for a command's report. When the reader goes away
    (``nbsvm explain ... --html page.html | head -1``) rich's own console ends the process
    with status 1 and no message, past nbsvm's handling of a closed pipe, and the command's
    files were lost (the page, eval's plot): this one stops printing and lets the command
    finish its files; it then ends as ``cat`` does (:func:`stdout_closed`)."""
    return _pipe_console_class()()


@functools.cache
def _pipe_console_class() -> type[Console]:
    """The console class of :func:`stdout_console`, made once (rich is imported when a
    report is printed, not at start-up)."""
    from rich.console import Console

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            _stdout_gone.append(True)
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass

    return _PipeConsole


def stdout_closed() -> bool:
    """Whether a report's reader went away (:func:`stdout_console`): the command then ends by
    :func:`end_on_closed_pipe` once its files are written."""
    return bool(_stdout_gone)


def given_options(ctx: typer.Context) -> set[str]:
    """The options given on the command line, not left at their defaults (the sources of
    typer's own click, compared by name)."""
    return {
        name
        for name in ctx.params
        if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"
    }


#: C0 and C1 control characters (TAB and LF kept): a label or n-gram holding ESC [ 2 J
#: cleared the terminal of whoever read the report
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with its control characters shown as ``\\xNN`` escapes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def escape(text: str) -> str:
    """rich's markup escape (rich imported on first use) of :func:`visible` ``text``."""
    from rich.markup import escape as rich_escape

    return rich_escape(visible(text))


def files_given_again(
    inputs: Iterable[str], test: Iterable[str] = ()
) -> list[tuple[str, str, str]]:
    """``(first name, later name, "input" or "test")`` of each file among ``inputs`` given
    again among the inputs after it or in ``test`` (the same file under any name: device
    and inode). One ``stat`` per path (a shell pattern may give thousands); standard
    input, URLs and patterns are no files."""
    first: dict[tuple, str] = {}
    again = []
    for kind, paths in (("input", inputs), ("test", test)):
        for path in paths:
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                continue
            key = (st.st_dev, st.st_ino)
            if key in first:
                again.append((first[key], path, kind))
            elif kind == "input":
                first[key] = path
    return again


def warn_given_again(inputs: list[str], test: list[str], what: str = "documents") -> None:
    """Warn (even with -q) of a file read twice: an input given twice trains on its
    documents (``what``) twice; a --test file that is an input scores documents the model
    saw, so its accuracy says how well the model fits, not how it does on new ones. Both
    are allowed (:func:`files_given_again`)."""
    for first, path, kind in files_given_again(inputs, test):
        if kind == "input":
            say = f"{escape(first)} is given twice: its {what} train twice"
        else:
            say = (
                f"--test {escape(path)} is also a training input: its accuracy measures "
                f"the fit to {what} the model saw, not to new ones"
            )
        err_console.print(f"warning: {say}", highlight=False, soft_wrap=True)


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
        self.bytes_read = 0  # written by the thread that reads, read by the others
        self.started: float | None = None  # perf_counter() when reading began
        self.finished: float | None = None  # and when the last document was read
        self.done = False  # every document has been read

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

    def total_bytes(self) -> int | None:
        """Bytes of text in the inputs, or None when that is not known cheaply."""
        return input_bytes(self.inputs)


def input_bytes(inputs: Iterable[str | os.PathLike[str] | IO[Any]]) -> int | None:
    """The summed size of ``inputs`` from the file system: a file's size, or for an aclImdb
    folder the sizes of its reviews (``.txt`` files in its label folders but ``unsup``, one
    ``os.scandir`` per folder). None when any input's text size is not known: standard
    input, open files, compressed (``.gz``, ``.bz2``, ``.xz``) files, anything unreadable."""
    from nbsvm.io.decoding import DECOMPRESS
    from nbsvm.io.document import STDIN
    from nbsvm.io.folders import is_document

    total = 0
    for src in inputs:
        if not isinstance(src, (str, os.PathLike)) or str(src) == STDIN:
            return None
        path = Path(src)
        try:
            if path.is_dir():
                for folder in os.scandir(path):
                    if folder.name == "unsup" or folder.name.startswith(".") or not folder.is_dir():
                        continue
                    with os.scandir(folder.path) as entries:
                        total += sum(e.stat().st_size for e in entries if is_document(e))
            elif path.suffix.lower() in DECOMPRESS or not path.is_file():
                return None
            else:
                total += path.stat().st_size
        except OSError:
            return None
    return total


# The ReadStats of the running command; cli_errors() reports them when the command ends.
_command_stats: list[ReadStats | _FullestRead] = []
# The document streams of the running command, which progress bars take their bytes from.
command_streams: list[DocumentStream] = []


class _FullestRead:
    """What reading counted (as :class:`~nbsvm.io.decoding.ReadStats` reports it) in the
    first of several reads of the same inputs that read them to the end (else the first)."""

    def __init__(self) -> None:
        self.streams: list[DocumentStream] = []

    def _stats(self) -> ReadStats:
        done = [s for s in self.streams if s.done]
        return (done or self.streams)[0].stats

    replaced_bytes = property(lambda self: self._stats().replaced_bytes)
    replaced_docs = property(lambda self: self._stats().replaced_docs)
    bad_lines = property(lambda self: self._stats().bad_lines)
    bad_examples = property(lambda self: self._stats().bad_examples)
    notes = property(lambda self: self._stats().notes)
    encoding = property(lambda self: self._stats().encoding)


def bound_reading(max_memory: str | None) -> None:
    """``--max-memory`` bounds the longest line read too (:func:`nbsvm.memory.set_budget`):
    one too long to hash within it is refused as it is read, not once held whole."""
    from nbsvm.memory import set_budget

    set_budget(max_memory)


def read_stats(skip_bad: bool = False, encoding: str = "utf-8", hint: bool = True) -> ReadStats:
    """A fresh ReadStats, reported by :func:`cli_errors` when the command ends well
    (``hint``: the command has --skip-bad-lines)."""
    from nbsvm.io.decoding import ReadStats

    stats = ReadStats(skip_bad, encoding, hint)
    _command_stats.append(stats)
    return stats


def rereadable(
    inputs: list[str],
    read: Callable[[list[str], bool], DocumentStream] | None,
    flag: str,
) -> Callable[[], DocumentStream]:
    """``read(inputs, report)`` as a callable giving the documents afresh on each call, for
    the modes that read the inputs more than once; one read's counts are reported, the
    first that read every document (every read meets the same bad lines, but a first read
    can stop early: a calibration's held-out part, 15 of 90 replaced documents counted).
    Standard input or a pipe cannot be read twice (:func:`read_once`): refused, naming
    ``flag``."""
    once = [str(i) for i in inputs if read_once(i)]
    if once:
        what = "standard input" if once[0] == "-" else f"{once[0]} (a pipe or a device)"
        raise NBSVMError(
            f"{flag} reads the inputs more than once: {what} cannot be; save it to a file first"
        )
    calls = [0]
    reads = _FullestRead()

    def again():
        calls[0] += 1
        stream = read(inputs, calls[0] == 1)
        if calls[0] == 1:  # reported through the fullest read, not the first
            for i, stats in enumerate(_command_stats):
                if stats is stream.stats:
                    _command_stats[i] = reads
        reads.streams.append(stream)
        return stream

    def peek(n: int) -> list:
        """The first ``n`` documents, from a read that neither reports its counts nor shows
        a progress bar (the data-read defaults look at them before the first real read)."""
        # (read is None only where the caller wants the standard-input check alone)
        stream = iter(read(inputs, False))  # type: ignore[misc]
        head = list(itertools.islice(stream, n))
        stream.close()
        return head

    cast(Any, again).peek = peek  # a function attribute, which mypy does not model
    return again


def documents(
    inputs: list[str],
    fmt: str,
    text_col: str | Sequence[str],
    label_col: str | None,
    labeled: bool = True,
    strict: bool = False,
    skip_bad: bool = False,
    known_labels: Iterable[str] | None = None,
    encoding: str = "utf-8",
    empty_label: bool = False,
    label_sep: str = "\t",
    report: bool = True,
    weight_col: str | None = None,
    several_labels: bool | None = None,
    hint: bool = True,
) -> DocumentStream:
    """The documents of ``inputs``; invalid UTF-8 is refused (``strict``) or replaced and
    counted, malformed lines skipped and counted (``skip_bad``), the counts and what the
    readers noted printed when the command ends (see :func:`report_reading`; not with
    ``report`` False: a later read of the same inputs). ``hint``: a malformed line names
    --skip-bad-lines (False for a command without it)."""
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.readers import read_inputs

    stats = read_stats(skip_bad, encoding, hint) if report else ReadStats(skip_bad, encoding, hint)
    stream = DocumentStream(
        read_inputs(
            inputs,
            fmt=fmt,
            labeled=labeled,
            text_col=text_col,
            label_col=label_col,
            strict=strict,
            stats=stats,
            known_labels=known_labels,
            encoding=encoding,
            empty_label=empty_label,
            label_sep=label_sep,
            weight_col=weight_col,
            # a multi-label task's reading is empty_label's; lexicon counts label sets
            several_labels=(empty_label or not labeled)
            if several_labels is None
            else several_labels,
        ),
        stats,
        inputs,
    )
    if report:
        command_streams.append(stream)
    return stream


def report_reading(*sources: Any) -> None:
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
        kinds = sorted({_encoding_name(s.encoding) for s in stats if s.replaced_bytes})
        _say(
            f"replaced {n_bytes} invalid {' or '.join(kinds)} byte{'s' * (n_bytes != 1)} in "
            f"{n_docs} document{'s' * (n_docs != 1)} (--strict refuses them)"
        )
    n_bad = sum(s.bad_lines for s in stats)
    if n_bad:
        examples = [e for s in stats for e in s.bad_examples]
        _say(
            f"skipped {n_bad} malformed line{'s' * (n_bad != 1)} (--skip-bad-lines)"
            + "".join(f"\n  {e}" for e in examples)
            + ("\n  ..." if n_bad > len(examples) else "")
        )
    for note in dict.fromkeys(n for s in stats for n in s.notes):
        _say(f"note: {note}")


def _encoding_name(encoding: str) -> str:
    """``UTF-8`` for any spelling of it; another encoding as given (``cp1252``)."""
    import codecs

    name = codecs.lookup(encoding).name
    return "UTF-8" if name.startswith("utf-8") else encoding


def _say(text: str) -> None:
    err_console.print(text, highlight=False, soft_wrap=True, markup=False)


def refuse_missing_inputs(paths: Iterable[str], where: str = "") -> None:
    """Name an input file or folder that does not exist before anything is read or
    imported (``where``: the option that named it, `` (--test)``); standard input, URLs
    and glob patterns are the readers' to resolve."""
    from nbsvm.io.document import missing_input

    for path in paths:
        if path != "-" and "://" not in path and not any(c in path for c in "*?["):
            if not os.path.exists(path):  # (a broken link too: missing_input says which)
                raise missing_input(path, where)


def text_columns(columns: list[str], label_col: str | None = None) -> Any:
    """``--text-col`` as the readers take it: one name, or a list of several (one name
    stays a string, so cache keys and checkpoints of one column are as before). A label
    column that is also a text column is refused here, before a model is loaded or a
    Dask worker reads anything."""
    from nbsvm.io.formats import check_columns

    check_columns(columns, label_col)
    return columns[0] if len(columns) == 1 else list(columns)


@dataclass(frozen=True)
class Reading:
    """How a command reads its text inputs: ``--format``, ``--text-col``, ``--label-col``,
    ``--strict``, ``--encoding`` and ``--label-sep`` (the options
    :func:`nbsvm.cli.options.reading_options` adds to a command). ``text_col`` is the
    list given until :func:`prepare_reading` resolves it (see :func:`text_columns`)."""

    fmt: str
    text_col: Any
    label_col: str | None
    strict: bool
    encoding: str
    label_sep: str

    def documents(self, inputs: list[str], **options: Any) -> DocumentStream:
        """The documents of ``inputs`` read so (``options``: the other arguments of
        :func:`documents`: ``labeled``, ``skip_bad``, ``empty_label``...)."""
        return documents(
            inputs,
            self.fmt,
            self.text_col,
            self.label_col,
            strict=self.strict,
            encoding=self.encoding,
            label_sep=self.label_sep,
            **options,
        )

    def reader(self, **extra: Any) -> dict:
        """The reading as Dask workers take it and model files and feature caches record
        it: the encoding and label separator only where they are not the defaults,
        ``extra`` entries last."""
        from nbsvm.io.decoding import check_encoding

        reader = {
            "format": self.fmt,
            "text_col": self.text_col,
            "label_col": self.label_col,
            "strict": self.strict,
        }
        if check_encoding(self.encoding) != "utf-8":
            reader["encoding"] = self.encoding
        if self.label_sep != "\t":
            reader["label_sep"] = self.label_sep
        return dict(reader, **extra)


@dataclass(frozen=True)
class Hashing:
    """How a command hashes text: ``--n-bits``, ``--char-ngrams``, ``--keep-case``,
    ``--split-scripts``, ``--nfkc``, ``--long-words`` and ``--hash-seed`` (the options
    :func:`nbsvm.cli.options.hashing_options` adds to a command)."""

    n_bits: int
    char_ngrams: str
    keep_case: bool
    split_scripts: bool
    nfkc: bool
    long_words: int
    hash_seed: int

    def settings(self, allow_auto: bool = True) -> dict[str, Any]:
        """The settings as models take them: ``n_bits``, ``char_ngrams`` and ``char_min``
        (:func:`parse_char_ngrams`; ``allow_auto``: where the command trains),
        ``lowercase``, ``split_scripts``, ``nfkc``, ``long_words``, ``hash_seed``."""
        char_min, n_chars = parse_char_ngrams(self.char_ngrams, allow_auto)
        return dict(
            n_bits=self.n_bits,
            char_ngrams=n_chars,
            char_min=char_min,
            lowercase=not self.keep_case,
            split_scripts=self.split_scripts,
            nfkc=self.nfkc,
            long_words=self.long_words,
            hash_seed=self.hash_seed,
        )


@dataclass(frozen=True)
class Dask:
    """Where a command runs: on the Dask cluster at ``--scheduler``, on a local one of
    ``--dask-local`` worker processes, or (neither given: false) here (the options
    :func:`nbsvm.cli.options.dask_options` adds to a command)."""

    scheduler: str | None
    dask_local: int | None

    def __bool__(self) -> bool:
        return bool(self.scheduler or self.dask_local)

    @contextmanager
    def client(self) -> Iterator[Any]:
        """A client of that cluster, closed afterwards
        (:func:`nbsvm.workflows.distributed.client_for`). A Ctrl-C reaches the local
        cluster's processes too: what their end raises here (a traceback of 'Nanny failed
        to start' while it started) is the interrupt."""
        from nbsvm.workflows import distributed

        try:
            with distributed.client_for(self.scheduler, self.dask_local) as client:
                yield client
        except Exception:
            check_interrupt()
            raise


def prepare_reading(
    reading: Reading, reads: dict, **outputs: str | os.PathLike[str] | None
) -> Reading:
    """What a command that reads text does before anything else: ``reading`` with its
    ``--text-col`` resolved (a label column that is also a text column refused), and the
    outputs checked and claimed (:func:`claim_outputs` of ``reads`` and ``outputs``)."""
    resolved = replace(reading, text_col=text_columns(reading.text_col, reading.label_col))
    claim_outputs(reads, **outputs)
    if reading.label_sep != "\t":  # every text input of the command, --test files too
        from nbsvm.io.readers import refuse_idle_label_sep

        texts = [p for what in ("an input", "a --test file") for p in reads.get(what) or ()]
        refuse_idle_label_sep(texts, reading.fmt, reading.label_sep)
    return resolved


def claim_outputs(reads: dict | None = None, **paths: str | os.PathLike[str] | None) -> None:
    """Check every output a command will write (``option name -> path``, None: not
    written) before it reads anything: each can be written
    (:func:`nbsvm.io.outputs.check_output`), none is a file the command reads (``reads``:
    ``what -> path or paths``, e.g. ``{"the input": inputs, "the model": model}``;
    :func:`nbsvm.io.outputs.check_not_read`), and no two are the same file; then claim
    them: when one is standard output (``-o /dev/stdout``), the command's words go to
    stderr from here on."""
    from nbsvm.io.outputs import check_not_read, check_output, descriptor_of

    _refuse_stdin_twice(reads or {})
    written: dict[str, Any] = {}
    for option, path in paths.items():
        if path is None:
            continue
        flag = "--" + option.replace("_", "-")
        if str(path) == "-":  # a file of that name would be written, and a read of "-" is stdin
            raise NBSVMError(
                f"{flag} -: this output is a file, not standard output; name one "
                "(./- for a file named '-')"
            )
        check_output(path, flag)
        check_not_read(path, flag, reads or {})
        for other, earlier in written.items():
            if os.path.realpath(earlier) == os.path.realpath(path):
                raise NBSVMError(
                    f"{flag} and {other} name the same file: give each its own", path=str(path)
                )
        written[flag] = path
    if any(descriptor_of(p) == 1 for p in written.values()):
        # -o /dev/stdout: standard output carries the file, and the command's words go to
        # stderr (a model written there was followed by 'saved: /dev/stdout', no .npz)
        sys.stdout = sys.stderr


#: the names of standard input a command may be given
STDIN_NAMES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _refuse_stdin_twice(reads: dict) -> None:
    """Standard input (``-``) named twice among what a command reads: the first read took
    it all, the second found it empty ('no documents found'; a --test set scored empty
    after the model was written)."""
    stdin = [
        what
        for what, given in reads.items()
        for path in (given if isinstance(given, (list, tuple)) else [given])
        if path is not None and str(path) in STDIN_NAMES
    ]
    if len(stdin) > 1:
        named = " and ".join(dict.fromkeys(stdin))
        raise NBSVMError(
            f"standard input (- or /dev/stdin) is given {len(stdin)} times ({named}): it can be read "
            "once; save it to a file to read it twice"
        )


_interrupted = threading.Event()


def _on_sigint(signum, frame):
    # Only note the first Ctrl-C: raising KeyboardInterrupt at an arbitrary point can land
    # inside numba's dispatcher (while it loads or compiles a kernel), which then loses or
    # garbles it. The progress callback raises it at the next safe point instead (every
    # batch or chunk); a second Ctrl-C interrupts at once. With no safe point near (an
    # archive unpacking, a Dask cluster whose worker the Ctrl-C killed: waited for forever)
    # the timer SIGTERM arms raises it where it is.
    if _interrupted.is_set():
        signal.setitimer(signal.ITIMER_REAL, 0)  # (or it raised again in the cleaning up)
        raise KeyboardInterrupt
    _interrupted.set()
    signal.setitimer(signal.ITIMER_REAL, FORCE_AFTER, FORCE_AFTER)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C (every temporary file, cache and partial
    output removed on the way out), then exits with ``128 + signum`` as the default
    action would."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


#: the termination signal received, or 0; seconds after it before it is raised anywhere
#: (a repeating timer, disarmed once raised)
_terminating = [0]
FORCE_AFTER = 1.0


def _on_terminate(signum, frame):
    # Like Ctrl-C: noted and raised at the next safe point (every batch of every stage).
    # A command with no safe point near (unpacking an archive, compiling a kernel) is
    # interrupted where it is by a timer, again every second until the exception is
    # through: a supervisor's SIGTERM never waits for the work to end, and nothing is left.
    if signum == signal.SIGALRM and not _terminating[0]:  # the timer of a Ctrl-C
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise KeyboardInterrupt
    if _terminating[0] or signum == signal.SIGALRM:
        signal.setitimer(signal.ITIMER_REAL, 0)  # cleaning up must not be cut short
        raise Terminated(_terminating[0] or signum)
    _terminating[0] = signum
    _interrupted.set()
    signal.setitimer(signal.ITIMER_REAL, FORCE_AFTER, FORCE_AFTER)


TERMINATING = (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)


def end_on_closed_pipe() -> NoReturn:
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
    raise typer.Exit(141)  # not reached where SIGPIPE exists


def check_interrupt() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed, :class:`Terminated` after SIGTERM or
    SIGHUP (call at safe points)."""
    if _interrupted.is_set():
        signal.setitimer(signal.ITIMER_REAL, 0)  # raised here: the timer's work is done
        if _terminating[0]:
            raise Terminated(_terminating[0])
        raise KeyboardInterrupt


def _end_if_signalled() -> None:
    """A Ctrl-C or SIGTERM noted after the command's last safe point, the command done:
    its outputs are whole, and it exits as the signal asks (it exited 0)."""
    if not _interrupted.is_set():
        return
    signal.setitimer(signal.ITIMER_REAL, 0)
    signum = _terminating[0] or signal.SIGINT
    err_console.print(
        f"[bold red]{'terminated' if _terminating[0] else 'interrupted'}[/] "
        f"({signal.Signals(signum).name}) as the command ended: its outputs are written whole"
    )
    raise typer.Exit(128 + signum)


@contextmanager
def cli_errors(runs_until_stopped: bool = False) -> Iterator[None]:
    """Turn the project's errors into one line on stderr and a non-zero exit, no traceback.
    A Ctrl-C or SIGTERM that came too late to stop the work still ends with its exit
    status, but for a command that ``runs_until_stopped`` (serve), whose normal end it is.

    When the command ends without an error, says how many invalid UTF-8 bytes the inputs it
    read through :func:`documents` (or :func:`read_stats`) had replaced, if any.
    """
    previous = {}
    if threading.current_thread() is threading.main_thread():
        _interrupted.clear()
        _terminating[0] = 0
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _on_sigint)
        for signum in TERMINATING:
            previous[signum] = signal.signal(signum, _on_terminate)
    _command_stats.clear()
    command_streams.clear()
    try:
        yield
        report_reading()
        if not runs_until_stopped:
            _end_if_signalled()
    except BrokenPipeError:
        end_on_closed_pipe()
    except NBSVMError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except Terminated as e:
        signal.setitimer(signal.ITIMER_REAL, 0)
        err_console.print(
            f"[bold red]terminated[/] ({signal.Signals(e.signum).name}): nothing "
            "was written over existing files"
        )
        raise typer.Exit(128 + e.signum) from None
    except KeyboardInterrupt:
        err_console.print("[bold red]interrupted[/]: nothing was written over existing files")
        raise typer.Exit(130) from None
    except (OSError, MemoryError) as e:
        if isinstance(e, OSError) and _standard_output_failed(e):
            err_console.print(
                f"[bold red]error:[/] could not write the output (standard output): "
                f"{escape(e.strerror or str(e))}",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(120) from None  # as CPython exits when its last flush fails
        err_console.print(
            f"[bold red]error:[/] {type(e).__name__}: {escape(str(e))}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2) from None
    finally:
        command_streams.clear()  # a later command in this process must not see them
        if "nbsvm.memory" in sys.modules:  # (nor this one's --max-memory: bound_reading)
            sys.modules["nbsvm.memory"].set_budget(None)
        if previous:
            signal.setitimer(signal.ITIMER_REAL, 0)
            for signum, handler in previous.items():
                signal.signal(signum, handler)


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _standard_output_failed(e: OSError) -> bool:
    """Whether ``e`` is standard output's: a full disk (or file size limit) under ``>
    out.csv``, an error that names no file (nbsvm's own files, outputs and caches name
    theirs). Standard output is then set aside, so that the exit does not report the same
    failure again."""
    if e.filename is not None or e.errno not in _FULL:
        return False
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the process is ending)
    return True


def parse_eta0(text: str | None) -> float | str | None:
    """``--eta0``: a positive number or ``auto`` (None: the default for the classes)."""
    if text is None:
        return None
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise NBSVMError(f"--eta0 must be a positive number or auto, got {text!r}") from None


def parse_char_ngrams(text: str, allow_auto: bool = True) -> tuple[int, int | None]:
    """``--char-ngrams``: ``N`` or ``LO-HI`` as ``(char_min, char_ngrams)`` (``char_min`` 0:
    one length); ``auto`` (``nbsvm train``'s default) as ``(0, None)``: read from the data,
    where the command trains (``allow_auto``)."""
    t = str(text).strip()
    if t == "auto":
        if not allow_auto:
            raise NBSVMError(
                "--char-ngrams auto is read from training documents (nbsvm train, tune); "
                "a lexicon needs a length N (0: none) or a range LO-HI such as 2-5"
            )
        return 0, None
    lo, dash, hi = t.partition("-")
    try:
        if dash:
            first, last = int(lo), int(hi)
            if not 1 <= first <= last <= 32:
                raise ValueError
            return (first if first < last else 0), last
        n = int(t)
        if not 0 <= n <= 32:
            raise ValueError
        return 0, n
    except ValueError:
        raise NBSVMError(
            f"--char-ngrams must be a length N (0: none), a range LO-HI such "
            f"as 2-5, within 1..32, or auto (train: 4 for short texts, else 0), "
            f"got {text!r}"
        ) from None


def parse_class_weight(text: str | None) -> str | dict[str, float] | None:
    """``--class-weight``: ``balanced`` or ``name=w,name=w`` (a dict), None when absent."""
    if text is None:
        return None
    if text.strip() == "balanced":
        return "balanced"
    out = {}
    for part in text.split(","):
        name, eq, value = part.rpartition("=")
        try:
            w = float(value) if eq and name.strip() else float("nan")
        except ValueError:
            w = float("nan")
        if not 0 < w < float("inf"):
            raise NBSVMError(
                f"--class-weight must be 'balanced' or name=weight pairs such as "
                f"pos=5,neg=1 (positive weights), got {text!r}"
            )
        if name.strip() in out:  # the last one won without a word
            raise NBSVMError(f"--class-weight gives {name.strip()!r} twice, in {text!r}")
        out[name.strip()] = w
    return out


def parse_seconds(text: str) -> float:
    """``--time-budget``: ``90``, ``90s``, ``1.5m`` or ``1h`` as seconds (positive)."""
    units = {"s": 1.0, "m": 60.0, "h": 3600.0}
    t = text.strip().lower()
    scale = units.get(t[-1:], None)
    try:
        value = float(t[:-1] if scale else t) * (scale or 1.0)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise NBSVMError(
            f"--time-budget must be a positive duration such as 60, 60s, 2m or 1h, got {text!r}"
        )
    return value


def checkpoint_note(event: dict, silent: bool) -> bool:
    """Print the one-line note of a ``checkpoint`` or ``resumed`` training event (nbsvm
    train and learn); True if ``event`` was one."""
    stage = event["stage"]
    if stage not in ("checkpoint", "resumed"):
        return False
    check_interrupt()
    if silent:
        return True
    if stage == "checkpoint":
        err_console.print(
            f"checkpoint after epoch {event['epoch']}: {escape(event['path'])}", highlight=False
        )
    else:
        err_console.print(f"resuming after epoch {event['epoch']}", highlight=False)
    return True


#: suffixes of formats no table or page is written in: an output of predict, eval, tune or
#: explain --html so named is refused (refuse_other_format); .npz: a model or a lexicon, which
#: a typo replaced with CSV
OTHER_FORMATS = {
    ".npz": "an nbsvm model or lexicon (numpy's .npz)",
    ".gz": "a gzip file (gzip the file once written)",
    ".bz2": "a bzip2 file",
    ".xz": "an xz file",
    ".zip": "a zip archive",
    ".tsv": "TAB-separated values",
    ".json": "one JSON document (JSON lines are .jsonl)",
    ".xlsx": "a spreadsheet",
    ".png": "an image",
    ".svg": "an image",
    ".pdf": "a PDF document",
}


#: suffixes of data, tables and pages: a model or lexicon saved under one replaced a user's
#: file of that kind with a zip, without a word (``train data.txt -o test.csv``)
NOT_A_MODEL = {
    **{k: v for k, v in OTHER_FORMATS.items() if k not in (".npz", ".zip")},  # .npz is a zip
    ".csv": "comma-separated values",
    ".txt": "text",
    ".jsonl": "JSON lines",
    ".ndjson": "JSON lines",
    ".parquet": "Parquet",
    ".html": "a web page",
    ".htm": "a web page",
    ".md": "Markdown",
    ".svm": "svmlight rows",
    ".dat": "data rows",
    ".review": "Blitzer reviews",
}


def refuse_model_name(output: str | None, writes: str = "a model") -> None:
    """Refuse a model (or lexicon) output named as data, a table or a page
    (:data:`NOT_A_MODEL`): a file of that kind the user keeps would be replaced by a zip."""
    suffix = Path(output).suffix.lower() if output else ""
    if suffix in NOT_A_MODEL:
        raise NBSVMError(
            f"{output}: this command writes {writes} (numpy's .npz), and {suffix} names "
            f"{NOT_A_MODEL[suffix]}: a file of that name would be replaced by it. "
            "Name it .npz"
        )


def refuse_other_format(output: str, writes: str, name_it: str, also: dict | None = None) -> None:
    """Refuse an output whose suffix names a format the command does not write
    (:data:`OTHER_FORMATS`, and ``also``): ``p.csv.gz`` written as plain CSV is no gzip
    file, and a reader that trusts the name fails. ``writes``: what the command writes;
    ``name_it``: the suffixes it does."""
    others = {**OTHER_FORMATS, **(also or {})}
    suffix = Path(output).suffix.lower()
    if suffix in others:
        raise NBSVMError(
            f"{output}: this command writes {writes}, and {suffix} names "
            f"{others[suffix]}: the file would not be what its name says. Name it "
            f"{name_it}"
        )
