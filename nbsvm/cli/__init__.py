"""The ``nbsvm`` command line: one thin typer command per module."""
from __future__ import annotations

import typer

from .. import __version__

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Hashed NBSVM and online linear learners for text classification.")


def _version(value: bool):
    if value:
        typer.echo(f"nbsvm {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")):
    """Hashed NBSVM and online linear learners for text classification."""


from . import lexicon, train, eval, predict, learn  # noqa: E402,F401  (registers the commands)


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
    except (OSError, AttributeError):      # not glibc: nothing to tune
        pass


def main():
    _return_freed_memory()
    app()
