"""``nbsvm explain``: the strongest n-grams of a model, or what each n-gram of a text adds."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import (
    NOT_A_MODEL,
    claim_outputs,
    cli_errors,
    escape,
    refuse_other_format,
    report_reading,
    stdout_console,
    visible,
)
from nbsvm.cli.options import ENCODING, STRICT
from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from rich.console import Console

    from nbsvm.models.nbsvm import NBSVMClassifier


@app.command("explain")
def explain_command(
    model: str = typer.Option(..., "--model", "-m", help="Model file from `nbsvm train`."),
    top: int = typer.Option(30, "--top", min=1, help="How many n-grams of each sign to list."),
    text: str | None = typer.Option(
        None,
        "--text",
        help="Explain this document's score n-gram by n-gram; "
        "- reads one document per line from standard "
        "input (--json: one JSON object per line).",
    ),
    cls: str | None = typer.Option(
        None,
        "--class",
        help="Class to explain (default: the positive class; "
        "every class of a multi-class or multi-label "
        "model; with --text the predicted class, "
        "multi-label: the most probable label, as predict --top-k 1 names it).",
    ),
    html: str | None = typer.Option(
        None, "--html", help="With --text: also write an HTML page with each word shaded."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
    strict: bool = STRICT,
    encoding: str = ENCODING,
) -> None:
    """List a model's strongest n-grams (NB ratio, weight, contribution to the score), or
    split one text's score into its n-grams' contributions."""
    from nbsvm.evaluation.explain import HTML_HEAD, HTML_TAIL, explain_text, shaded_html
    from nbsvm.io.npzfile import atomic_path
    from nbsvm.io.outputs import check_not_read
    from nbsvm.models.nbsvm import NBSVMClassifier

    with cli_errors():
        reads = {"the model": model, "the --text input": "-" if text == "-" else None}
        claim_outputs(reads=reads, html=html)
        if text == "-":  # `< t.txt >> t.txt`: each explanation read back as a text, forever
            check_not_read("/dev/stdout", "standard output", reads)
        if html:
            pages = (".html", ".htm")  # (a user's notes.txt or data.csv was replaced)
            others = {k: v for k, v in NOT_A_MODEL.items() if k not in pages}
            refuse_other_format(html, "an HTML page", ".html", also=others)
        clf = NBSVMClassifier.load(model)
        console = stdout_console()  # rich is imported where it prints (--help: not)
        if text is None:
            if html:
                raise NBSVMError("--html needs --text (it shades the words of a document)")
            _print_top(console, clf, top, cls, json_out)
            return
        stdin = text == "-"
        with ExitStack() as stack:
            page = None  # written section by section: memory does not grow with the lines
            if html:
                tmp = stack.enter_context(atomic_path(html))
                page = stack.enter_context(open(tmp, "w", encoding="utf-8"))
                page.write(HTML_HEAD)
            for n, (i, one) in enumerate(_texts(text, strict, encoding)):
                result = explain_text(clf, one, cls)
                if page is not None:
                    page.write(("<hr>" if n else "") + shaded_html(result))
                if json_out:  # standard input: JSON lines, each with its line
                    typer.echo(
                        json.dumps(dict(result, line=i)) if stdin else json.dumps(result, indent=2)
                    )
                else:
                    if stdin:
                        console.rule(f"line {i}")
                    _print_explanation(console, result, top)
            if page is not None:
                page.write(HTML_TAIL)
        if html and not json_out:
            console.print(f"written: {escape(html)}", highlight=False)


def _texts(text: str, strict: bool, encoding: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of ``--text``: the argument, or each non-blank line of standard
    input as it is read (explained and printed one by one: memory does not grow with the
    lines), decoded as ``predict`` decodes its inputs (invalid bytes replaced and reported
    at the end, or refused with ``strict``), whatever the locale: so that explain scores
    what predict scores."""
    from nbsvm.io.decoding import ReadStats, check_encoding, decode_counting, iter_lines

    encoding = check_encoding(encoding)
    stats = ReadStats()
    if text == "-":
        for line, _, i in iter_lines("-", strict, stats, encoding=encoding):
            if line.strip():
                yield i, line
    else:  # the shell's bytes, as Python kept them (undecodable ones as surrogates), in
        # the terminal's encoding: --encoding is the files' and standard input's
        raw, typed = os.fsencode(text), sys.getfilesystemencoding()
        if strict:
            try:
                raw.decode(typed)
            except UnicodeDecodeError as e:
                raise NBSVMError(
                    f"--text is not valid {typed.upper()} (0x{raw[e.start : e.end].hex()}); "
                    "without --strict invalid bytes are replaced by U+FFFD and counted"
                ) from None
        decoded, n_bad = decode_counting(raw, typed)
        stats.add(n_bad)
        yield 1, decoded
    report_reading(stats)


def _top_table(console, part, toward: str) -> None:
    from rich.table import Table

    table = Table(title=f"strongest n-grams toward {escape(toward)}", title_justify="left")
    for col in (
        "rank",
        "n-grams (collisions: a | b)",
        "bucket",
        "NB ratio",
        "weight",
        "contribution",
    ):
        table.add_column(col, justify="left" if col.startswith("n-") else "right")
    for row in part.itertuples():
        table.add_row(
            str(row.rank),
            escape(row.ngrams),
            str(row.bucket),
            f"{row.ratio:+.3f}",
            f"{row.weight:+.4f}",
            f"{row.contribution:+.4f}",
        )
    console.print(table)


def _print_explanation(console, result, top: int) -> None:
    """One text's explanation: the score, the words shaded, the strongest n-grams."""
    from rich.table import Table
    from rich.text import Text

    console.print(
        f"class [bold]{escape(result['class'])}[/]: score "
        f"{result['score']:+.4f} = constant {result['constant']:+.4f} + the "
        f"n-grams below",
        highlight=False,
    )
    words = [r for r in result["ngrams"] if r["kind"] == "word" and " " not in r["ngram"]]
    scale = max([abs(r["contribution"]) for r in result["ngrams"]] + [1e-12])
    line = Text()
    for r in words:
        v = r["contribution"]
        strength = min(1.0, abs(v) / scale)
        style = (
            ""
            if strength < 0.05
            else ("bold green" if v > 0 else "bold red")
            if strength > 0.5
            else ("green" if v > 0 else "red")
        )
        line.append(visible(r["ngram"]), style=style)
        line.append(" ")
    console.print(line)
    table = Table(title="n-grams by |contribution|", title_justify="left")
    for col in ("n-gram", "kind", "bucket", "contribution", "note"):
        table.add_column(col, justify="right" if col in ("bucket", "contribution") else "left")
    ranked = sorted(result["ngrams"], key=lambda r: -abs(r["contribution"]))
    for r in ranked[:top]:
        color = "green" if r["contribution"] > 0 else "red" if r["contribution"] < 0 else ""
        table.add_row(
            escape(r["ngram"]),
            r["kind"],
            str(r["bucket"]),
            f"[{color}]{r['contribution']:+.4f}[/]" if color else "0",
            escape(r["note"]),
        )
    console.print(table)


def _print_top(
    console: Console, clf: NBSVMClassifier, top: int, cls: str | None, json_out: bool
) -> None:
    """The model's strongest n-grams: a table per class, or per sign of one class's score."""
    from nbsvm.evaluation.explain import top_features, top_features_by_class

    every = cls is None and clf.n_outputs() > 1
    frame = top_features_by_class(clf, top) if every else top_features(clf, top, cls)
    if json_out:
        typer.echo(frame.to_json(orient="records", indent=2))
        return
    if not clf.ngram_map_:
        console.print(
            "[yellow]this model keeps no n-gram names (trained without a "
            "text sample): buckets are shown by number[/]"
        )
    if every:  # one table per class: what points to it
        for c in clf.class_names_:
            _top_table(console, frame[frame["class"] == c], c)
        return
    positive = cls or clf.class_names_[-1]
    for direction in ("positive", "negative"):
        part = frame[frame.direction == direction]
        toward = (
            positive
            if direction == "positive"
            else (
                clf.class_names_[0]
                if clf.binary_task() and positive == clf.class_names_[-1]
                else f"not {positive}"
            )
        )
        _top_table(console, part, toward)
