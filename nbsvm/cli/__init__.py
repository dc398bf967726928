"""The ``nbsvm`` command line: one thin typer command per module."""

from __future__ import annotations

import os
import sys

import typer

from nbsvm._version import __version__

# rich_markup_mode=None: help is plain text (rich markup would eat "[plot]" in
# "pip install 'nbsvm[plot]'"); -h as well as --help
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Hashed NBSVM and online linear learners for text classification.",
    epilog="Optional extras: pip install 'nbsvm[plot]' (figures: --plot), "
    "'nbsvm[parquet]' (Parquet output), 'nbsvm[dask]' (--scheduler, "
    "--dask-local), 'nbsvm[serve]' (nbsvm serve). `nbsvm COMMAND -h` "
    "describes a command.",
)

#: what help shows for a value of each Python type (typer 0.2x shows ``<list[str]>``)
_TYPE_WORDS = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "NUMBER",
    "int range": "INTEGER",
    "float range": "NUMBER",
    "list[str]": "TEXT",
    "list[int]": "INTEGER",
    "path": "PATH",
    "file": "FILE",
    "directory": "FOLDER",
}


def _words_for_types():
    """Help shows a parameter's metavar, else a word for its type (TEXT, INTEGER, NUMBER),
    and nothing for flags, where typer would show ``<str>``, ``<list[str]>`` or ``<bool>``."""
    from typer import core

    for cls in (core.TyperOption, core.TyperArgument):
        shown = getattr(cls, "display_type_rich", None)
        if shown is None or getattr(shown, "_nbsvm", False):
            continue

        def display(self, ctx, _shown=shown, _argument=cls is core.TyperArgument):
            if self.metavar:  # an argument's name column already shows it
                return None if _argument else self.metavar
            if getattr(self, "is_flag", False) or getattr(self, "is_bool_flag", False):
                return None
            label = _shown(self, ctx)
            if label is None:
                return None
            inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
            return _TYPE_WORDS.get(inner, inner if "|" in inner else inner.upper())

        display._nbsvm = True
        cls.display_type_rich = display


_words_for_types()


def _version(value: bool):
    if value:
        typer.echo(f"nbsvm {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
):
    """Hashed NBSVM and online linear learners for text classification."""


# importing a command's module registers it: this order is `nbsvm --help`'s (the NBSVM
# workflow first, then the tools)
# isort: off
from nbsvm.cli import lexicon, train, eval, predict, learn, explain, tune  # noqa: E402,F401
from nbsvm.cli import datasets, info, quantize, serve  # noqa: E402,F401
# isort: on


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
    after it has loaded; numba then only disables ``np.dot`` and friends in kernels, which
    nbsvm does not use. A command that never runs a kernel never imports numba at all. Not
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
    elif not isinstance(code, int):  # sys.exit("message"), as Python prints it
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


def kernels_cached() -> bool:
    """Whether numba has this machine's compiled kernels on disk (the training kernel's
    index in ``$NUMBA_CACHE_DIR`` or beside the package's sources)."""
    from pathlib import Path

    root = os.environ.get("NUMBA_CACHE_DIR")
    pattern = "table._adagrad_epoch-*.nbi"
    if root:
        return any(Path(root).glob("*/" + pattern)) or any(Path(root).glob(pattern))
    here = Path(__file__).resolve().parents[1] / "learners" / "kernels" / "__pycache__"
    return any(here.glob(pattern))


def _note_first_compile(argv) -> None:
    """On the first run the kernels compile for this machine (about 10 s): say so, so that
    the wait does not look like a hang (not with -q or --json)."""
    if not runs_kernels(argv) or {"-q", "--quiet", "--json"} & set(argv):
        return
    try:
        if not kernels_cached():
            sys.stderr.write(
                "compiling nbsvm's kernels for this machine: the first run "
                "only (about 10 s; later runs load them from numba's cache)\n"
            )
    except OSError:
        pass


def runs_kernels(argv: list[str]) -> bool:
    """Whether this command line runs compiled kernels (help and ``info`` never do:
    they start without numba)."""
    return len(argv) >= 2 and argv[1] in KERNEL_COMMANDS and not {"-h", "--help"} & set(argv)


def main() -> None:
    _return_freed_memory()
    if runs_kernels(sys.argv):
        sys.meta_path.insert(0, _SkipNumbaBlasProbe())
    _note_first_compile(sys.argv)
    try:
        app()
    except SystemExit as e:  # typer ends every command with SystemExit
        _exit_now(e.code)
    except BrokenPipeError:  # a report printed after the reader left
        from nbsvm.cli.common import end_on_closed_pipe

        end_on_closed_pipe()
    _exit_now(0)
