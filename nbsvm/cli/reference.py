"""The command-line reference as Markdown, generated from the typer app.

``python -m nbsvm.cli.reference > docs/cli.md`` writes it; ``tests/test_readme.py`` checks
that the committed ``docs/cli.md`` equals what this prints, so the reference cannot go
stale: after changing a command, an option or a help text, run the command above.

For every command: its usage line, its help (the function's docstring) and a table of its
arguments and options with their type, default and help. Names and help come from the
click command typer builds (``typer.main.get_command``); types from the annotations of the
command functions (``app.registered_commands``), so the output does not depend on how a
typer version spells types, nor on the terminal's width.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from typing import TYPE_CHECKING, cast

import typer
import typer.main

if TYPE_CHECKING:
    import click

PROG = "nbsvm"
TYPE_NAMES = {str: "TEXT", int: "INTEGER", float: "FLOAT", bool: "FLAG"}


def _type_name(annotation) -> str:
    """``Optional[List[str]]`` -> ``TEXT...``; ``int`` -> ``INTEGER``."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _type_name(args[0])
    if origin is list and args:
        return _type_name(args[0]) + "..."
    return TYPE_NAMES.get(annotation, getattr(annotation, "__name__", str(annotation)).upper())


def _escape(text: str) -> str:
    """``<`` and ``>`` as entities outside code spans (``label<TAB>text`` is not a tag)."""
    parts = str(text).split("`")
    for i in range(0, len(parts), 2):  # even parts are outside backticks
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _cell(text) -> str:
    """Text for a Markdown table cell: one line, ``|`` escaped."""
    return _escape(" ".join(str(text).split())).replace("|", "\\|")


def _default(param, type_name: str) -> str:
    if param.required:
        return "required"
    default = param.default
    if type_name == "FLAG" and not param.secondary_opts:
        return "off" if not default else "on"
    if default is None or default == [] or default == ():
        return ""
    if isinstance(default, bool):
        return (param.opts if default else param.secondary_opts)[0]
    if param.show_default is False:  # (its help says it: a TAB was shown as a blank)
        return ""
    if isinstance(default, str) and default != default.strip():
        return repr(default)  # white space shown as what it is
    return f"`{default}`"


def _range(param) -> str:
    lo = getattr(param, "min", None)
    hi = getattr(param, "max", None)
    kind = getattr(param, "type", None)  # click's IntRange / FloatRange
    lo = lo if lo is not None else getattr(kind, "min", None)
    hi = hi if hi is not None else getattr(kind, "max", None)
    if lo is not None and hi is not None:
        return f" From {lo} to {hi}."
    if lo is not None:
        return f" At least {lo}."
    if hi is not None:
        return f" At most {hi}."
    return ""


def _annotations(app: typer.Typer) -> dict:
    """``{command name: {parameter name: annotation}}`` of the command functions."""
    out = {}
    for info in app.registered_commands:
        fn = info.callback
        assert fn is not None  # every command is registered by decorating its function
        name = info.name or fn.__name__.replace("_", "-")
        hints = typing.get_type_hints(fn)
        out[name] = {p: hints.get(p, str) for p in inspect.signature(fn).parameters}
    return out


def _usage(name: str, command) -> str:
    parts = [f"{PROG} {name}" if name else PROG]
    if any(not _is_argument(p) for p in command.params) or not name:
        parts.append("[OPTIONS]")
    for p in command.params:
        if _is_argument(p):
            meta = p.name.upper() + ("..." if p.nargs == -1 else "")
            parts.append(meta if p.required else f"[{meta}]")
    if not name:
        parts.append("COMMAND [ARGS]...")
    return " ".join(parts)


def _is_argument(param) -> bool:
    return getattr(param, "param_type_name", None) == "argument" or type(param).__name__.endswith(
        "Argument"
    )


def _params_table(command, types: dict) -> list[str]:
    rows = []
    for p in command.params:
        if getattr(p, "hidden", False):
            continue
        annotation = types.get(p.name, str)
        type_name = _type_name(annotation)
        if _is_argument(p):
            names = f"`{p.name.upper()}{'...' if p.nargs == -1 else ''}`"
        else:
            names = ", ".join(f"`{o}`" for o in sorted(p.opts, key=len, reverse=True))
            if p.secondary_opts:
                names += " / " + ", ".join(f"`{o}`" for o in p.secondary_opts)
            if type_name == "FLAG":
                type_name = ""
        help_text = (getattr(p, "help", None) or "") + _range(p)
        if type_name.endswith("...") and not _is_argument(p):
            type_name = type_name[:-3] + " (repeatable)"
        rows.append(
            f"| {names} | {_cell(type_name)} | {_cell(_default(p, _type_name(annotation)))} "
            f"| {_cell(help_text)} |"
        )
    if not rows:
        return []
    return [
        "| argument / option | type | default | description |",
        "| --- | --- | --- | --- |",
        *rows,
    ]


def render(app: typer.Typer | None = None) -> str:
    """The Markdown reference of every command of ``app`` (default: nbsvm's)."""
    if app is None:
        from nbsvm.cli import app as nbsvm_app

        app = nbsvm_app
    group = typer.main.get_command(app)
    types = _annotations(app)
    lines = [
        "# Command-line reference",
        "",
        "<!-- Generated by `python -m nbsvm.cli.reference > docs/cli.md`; do not edit by "
        "hand (tests/test_readme.py checks it is current). -->",
        "",
        _escape(inspect.cleandoc(group.help or "")),
        "",
        "```",
        _usage("", group),
        "```",
        "",
    ]
    commands = list(cast("click.Group", group).commands.items())  # an app of several commands
    lines += ["Commands:", ""]
    for name, command in commands:
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]
        lines.append(f"- [`{PROG} {name}`](#{PROG}-{name}): {_escape(' '.join(first.split()))}")
    lines.append("")
    root_options = _params_table(group, {"version": bool})
    if root_options:
        lines += ["Options of `nbsvm` itself:", "", *root_options, ""]
    for name, command in commands:
        lines += [
            f"## {PROG} {name}",
            "",
            "```",
            _usage(name, command),
            "```",
            "",
            _escape(inspect.cleandoc(command.help or "")),
            "",
        ]
        table = _params_table(command, types.get(name, {}))
        if table:
            lines += [*table, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
