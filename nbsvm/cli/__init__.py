"""The ``nbsvm`` command line: one thin typer command per module."""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

#: the commands, each in the module of its name, in `nbsvm --help`'s order (the NBSVM
#: workflow first, then the tools)
COMMANDS = (
    "lexicon", "train", "eval", "predict", "learn", "explain", "tune",
    "datasets", "info", "quantize", "serve",
)  # fmt: skip


def register(names: Iterable[str] = COMMANDS) -> typer.Typer:
    """The application with the commands ``names`` (importing a command's module adds it;
    every command by default)."""
    from nbsvm.cli import _app

    for name in names:
        importlib.import_module(f"nbsvm.cli.{name}")
    return _app.app


def __getattr__(name: str):
    if name == "app":  # the whole application: every command registered
        return register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _commands_needed(argv: list[str]) -> tuple[str, ...]:
    """The command of this command line alone (its module's imports are all it pays for:
    ``nbsvm info`` does not import the trainer's); every command for the top-level help,
    ``--version`` or a name that is not a command (whose error lists them)."""
    return (argv[1],) if len(argv) >= 2 and argv[1] in COMMANDS else COMMANDS


def _return_freed_memory():
    """Serve large allocations from mmap so that freed buffers go back to the OS.

    glibc raises its mmap threshold as big blocks are freed and then keeps later buffers in
    the heap, where they fragment; batch buffers come and go all the time here. The CLI
    fixes the threshold at 128 KiB (a process-wide setting, so only the CLI does it).
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        M_MMAP_THRESHOLD = -3
        libc.mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    except (OSError, AttributeError):  # not glibc: nothing to tune
        pass


class _SkipNumbaBlasProbe:
    """Keeps numba from importing SciPy's linear algebra (about 0.15 s and 14 MB) in the
    CLI process.

    When ``numba.np.arraymath`` initializes (the first kernel numba loads) it probes for
    BLAS by importing ``scipy.linalg.cython_blas``, which first imports all of
    ``scipy.linalg``. nbsvm's kernels use no BLAS. This import finder, installed by the CLI
    before anything imports numba, marks that module missing (``None`` in
    ``sys.modules``: the import fails before its package is imported) when
    ``numba.np.arraymath`` is about to load, and takes the mark away at the first import
    after it has loaded; numba then computes the inner products of ``np.correlate`` and
    ``np.convolve`` with a loop of its own (the one thing that probe decides: ``np.dot``
    looks for BLAS again when it compiles), and nbsvm uses neither. A command that never runs a kernel never imports numba at all. Not
    done on ``import nbsvm``, where other code in the same process may want numba's BLAS.
    """

    BLOCKED = "scipy.linalg.cython_blas"
    PROBING = "numba.np.arraymath"

    def __init__(self) -> None:
        self.blocking = False

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == self.PROBING and self.BLOCKED not in sys.modules:
            sys.modules[self.BLOCKED] = None  # type: ignore[assignment]
            self.blocking = True
        elif self.blocking:
            probing = sys.modules.get(self.PROBING)
            if probing is not None and not getattr(probing.__spec__, "_initializing", False):
                if sys.modules.get(self.BLOCKED, 0) is None:
                    del sys.modules[self.BLOCKED]
                self.blocking = False
        return None


def _exit_now(code) -> None:
    """End the process without tearing the interpreter down (about 0.2 s after a training
    run: LLVM's and numba's destructors, freeing every object). By the time a command
    returns, every file it wrote is complete and closed (models, caches and reports are
    written to a temporary name, synced and renamed), so only the standard streams still
    hold data; they are flushed first."""
    if code is None:
        code = 0
    common = sys.modules.get("nbsvm.cli.common")
    if code == 0 and common is not None and common.stdout_closed():
        common.end_on_closed_pipe()  # its files written: ends as `cat` does (status 141)
    if not isinstance(code, int):  # sys.exit("message"), as Python prints it
        sys.stderr.write(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away: nothing to deliver
            pass
        except (OSError, ValueError) as e:  # e.g. a full disk under `> out.csv`: say so
            try:
                os.write(2, f"error: could not write the output: {e}\n".encode())
            except OSError:
                pass
            if code == 0:
                code = 120  # what CPython exits with in this case
    os._exit(code)


#: commands that run the compiled kernels
KERNEL_COMMANDS = {"train", "eval", "predict", "lexicon", "tune", "learn", "explain", "serve"}


def _note_first_compile(argv) -> None:
    """On the first run the kernels compile for this machine (half a minute or more on two
    cores: 35-41 s for a first ``nbsvm train`` of 10,000 sentences, 3-5 s later): say so,
    so that the wait does not look like a hang (not with -q or --json)."""
    if not runs_kernels(argv) or {"-q", "--quiet", "--json"} & set(argv):
        return
    from nbsvm.workflows.compile_ahead import kernels_cached

    try:
        if not kernels_cached():
            sys.stderr.write(
                "compiling nbsvm's kernels for this machine: the first run "
                "only (up to a minute; later runs load them from numba's cache)\n"
            )
    except OSError:
        pass


def runs_kernels(argv: list[str]) -> bool:
    """Whether this command line runs compiled kernels (help and ``info`` never do:
    they start without numba)."""
    return len(argv) >= 2 and argv[1] in KERNEL_COMMANDS and not {"-h", "--help"} & set(argv)


_SHOW_WARNING = warnings.showwarning  # Python's, for the warnings of other packages


def _warning_as_note(message, category, filename, lineno, file=None, line=None) -> None:
    """nbsvm's own warnings as the command's notes (``note: ...``), not as Python prints
    them (a path, a line number and the warning's class)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    ours = os.path.abspath(str(filename)).startswith(package)
    if not (ours and issubclass(category, UserWarning)) or file is not None:
        # (numpy's RuntimeWarnings and other packages' warnings keep their own words)
        return _SHOW_WARNING(message, category, filename, lineno, file, line)
    sys.stderr.write(f"note: {message}\n")


def main() -> None:
    warnings.showwarning = _warning_as_note
    _return_freed_memory()
    if runs_kernels(sys.argv):
        sys.meta_path.insert(0, _SkipNumbaBlasProbe())
    _note_first_compile(sys.argv)
    try:
        register(_commands_needed(sys.argv))()
    except SystemExit as e:  # typer ends every command with SystemExit
        _exit_now(e.code)
    except BrokenPipeError:  # a report printed after the reader left
        from nbsvm.cli.common import end_on_closed_pipe

        end_on_closed_pipe()
    except KeyboardInterrupt as e:  # before a command handles it (while modules import):
        # the default action's ending, as a command's own, not a traceback through importlib
        sys.stderr.write("interrupted: nothing was written over existing files\n")
        _exit_now(128 + getattr(e, "signum", 2))
    _exit_now(0)
