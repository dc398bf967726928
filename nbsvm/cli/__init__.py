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


from . import lexicon, train, eval, predict  # noqa: E402,F401  (registers the commands)


def main():
    app()
