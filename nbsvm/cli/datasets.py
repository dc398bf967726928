"""``nbsvm datasets list|get``: the corpora the project knows (:mod:`nbsvm.datasets`)."""

from __future__ import annotations

import errno
import json

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import cli_errors, stdout_console
from nbsvm.errors import NBSVMError


@app.command("datasets")
def datasets_command(
    action: str = typer.Argument(
        ...,
        metavar="list|get",
        help="list: every corpus, its size, classes, whether the "
        "shared folder has it and its citation; get: unpack "
        "corpora into --data (each archive's sha256 checked; a corpus prepared "
        "before is taken when its files have the sizes it was written with).",
    ),
    names: list[str] | None = typer.Argument(
        None,
        metavar="NAME...",
        help="Corpora to get (all: every one), or to list (default: every one).",
    ),
    data: str | None = typer.Option(
        None,
        "--data",
        metavar="FOLDER",
        help="Where get unpacks (default: the checkout's data/ folder).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the corpora nbsvm knows, or unpack them from the shared datasets folder (each
    archive's sha256 checked against its README; IMDB can also be downloaded)."""
    from nbsvm import datasets  # 15 ms that `nbsvm --help` need not pay

    with cli_errors():
        if action == "list":
            if data is not None:
                raise NBSVMError("--data is where get unpacks corpora; list takes no folder")
            wanted = sorted(datasets.CORPORA) if not names or names == ["all"] else names
            for name in wanted:
                datasets.corpus(name)  # an unknown name: say so
            rows = [datasets.describe(n) for n in sorted(set(wanted))]
            if json_out:
                typer.echo(json.dumps(rows, indent=2))
                return
            from rich.table import Table

            table = Table(
                title=f"corpora (shared folder: {datasets.shared_root()})", title_justify="left"
            )
            for col in ("name", "MB", "classes", "documents", "here", "citation"):
                table.add_column(col, justify="right" if col == "MB" else "left")
            for r in rows:
                table.add_row(
                    r["name"],
                    f"{r['MB']:.1f}",
                    r["classes"],
                    r["documents"],
                    "yes" if r["available"] else "no",
                    r["citation"],
                )
            stdout_console().print(table)
            return
        if action != "get":
            raise NBSVMError(f"unknown action {action!r}; allowed: list, get")
        if not names:
            raise NBSVMError(
                "get needs corpus names (or all); the corpora are "
                + ", ".join(sorted(datasets.CORPORA))
            )
        wanted = sorted(datasets.CORPORA) if names == ["all"] else list(dict.fromkeys(names))
        for name in wanted:
            datasets.corpus(name)  # an unknown name: say so first
        out = {}
        for name in wanted:
            try:
                root = datasets.prepare(name, data, notify=None if json_out else _say)
            except _Said as e:  # standard output's own error (a closed pipe, a full disk)
                raise e.error from None
            except OSError as e:
                raise _unpack_error(name, e) from None
            out[name] = str(root)
            if not json_out:
                c = datasets.corpus(name)
                typer.echo(f"{name}: {root} ({c.documents}; {c.classes})\n  cite: {c.citation}")
        if json_out:
            typer.echo(json.dumps(out, indent=2))


class _Said(Exception):
    """An OSError of writing a progress line, carried past the unpack's own handling to
    the CLI's handling of standard output."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def _say(message: str) -> None:
    try:
        typer.echo(message)
    except OSError as e:
        raise _Said(e) from None


def _unpack_error(name: str, e: OSError) -> NBSVMError:
    """What an OSError from unpacking ``name`` says: --data naming a file, a dangling link,
    a link loop or a folder on a file's path; else the OS's own reason (a full disk)."""
    if isinstance(e, (FileExistsError, NotADirectoryError, PermissionError)) or (
        e.errno == errno.ELOOP
    ):
        return NBSVMError(
            f"cannot make the corpus's folder ({e.strerror}): --data names a folder "
            "nbsvm can write in",
            path=e.filename,
        )
    return NBSVMError(f"cannot unpack {name} ({e.strerror or e})", path=e.filename)
