"""The ``nbsvm`` typer application, to which each command's module adds its command (see
:func:`nbsvm.cli.register`)."""

from __future__ import annotations

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


def _word_for(label: str) -> str:
    """TEXT for ``<str>``, INTEGER for ``<int range>``..., a ``a|b`` choice as it is."""
    inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
    return _TYPE_WORDS.get(inner, inner if "|" in inner else inner.upper())


def _words_for_types():
    """Help shows a parameter's metavar, else a word for its type (TEXT, INTEGER, NUMBER),
    and nothing for flags, where typer would show ``<str>``, ``<list[str]>`` or ``<bool>``
    (typer 0.29 in its rich help, display_type_rich; 0.2x before it in the plain help of
    an option, make_metavar)."""
    from typer import core

    make_metavar = getattr(core.TyperOption, "make_metavar", None)
    if make_metavar is not None and not getattr(make_metavar, "_nbsvm", False):

        def metavar(self, *args, _made=make_metavar, **kwargs):  # click < 8.2: no ctx
            made = _made(self, *args, **kwargs)
            return made if self.metavar else _word_for(made)

        metavar._nbsvm = True
        core.TyperOption.make_metavar = metavar
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
            return None if label is None else _word_for(label)

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
