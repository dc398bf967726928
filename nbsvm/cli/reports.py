"""Printing results: ``key: value`` lines and the evaluation report as rich tables
(accuracy or the multi-label and regression metrics, per-class precision / recall / F1, the
confusion matrix)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from nbsvm.cli.common import escape, stdout_console

if TYPE_CHECKING:  # rich is imported where a report is printed (0.04-0.07 s of --help)
    from rich.console import Console
    from rich.table import Table


def echo_kv(pairs: dict) -> None:
    for k, v in pairs.items():
        typer.echo(f"{k}: {v}")


# the scores a report holds only for some models, and how each is printed
_OPTIONAL_SCORES = (
    ("log_loss", "log loss"),
    ("ece", "expected calibration error (15 bins of top-class probability)"),
    ("roc_auc", "ROC AUC"),
    ("macro_roc_auc", "macro ROC AUC (each class against the rest)"),
)


#: Classes named on the summary's line; the others are counted (--json lists them all).
SHOWN_CLASSES = 30


#: A class name is shown up to this many characters in the reports (a label as long as a
#: document, 10 MB, kept rich's line wrapping busy for minutes).
NAME_CHARS = 80


def cut(name: object) -> str:
    """A class name for a report line or table: at most :data:`NAME_CHARS` characters.

    >>> cut("pos"), cut("x" * 100)[-3:], len(cut("x" * 100))
    ('pos', 'xx…', 81)
    """
    text = str(name)
    return text if len(text) <= NAME_CHARS else text[:NAME_CHARS] + "…"


def class_counts_line(names: Sequence, counts: Sequence) -> str:
    """``"neg (12), pos (13)"``: the documents of each class, the first
    :data:`SHOWN_CLASSES` of them (2,000 labels filled a screen per line).

    >>> class_counts_line(["a", "b"], [3, 4])
    'a (3), b (4)'
    >>> class_counts_line([f"c{i}" for i in range(32)], range(32))[-50:]
    ', c29 (29), and 2 more classes (--json lists them)'
    """
    shown = ", ".join(
        f"{cut(c)} ({n})" for c, n in zip(names[:SHOWN_CLASSES], counts[:SHOWN_CLASSES])
    )
    more = len(names) - SHOWN_CLASSES
    return shown if more <= 0 else f"{shown}, and {more:,} more classes (--json lists them)"


def print_report(rep: dict, seconds: float) -> None:
    """A model's report: accuracy, per-class table and confusion matrix; for multi-label,
    regression (``rep["task"]``) the metrics of that task."""
    if rep.get("task") in ("multilabel", "regression"):
        _print_task_report(rep, seconds)
        return
    console = stdout_console()
    console.print(f"accuracy: {100 * rep['accuracy']:.2f}%", highlight=False)
    for key, title in _OPTIONAL_SCORES:
        if key in rep:
            console.print(f"{title}: {rep[key]:.4f}", highlight=False)
    console.print(f"macro F1: {rep['macro_f1']:.4f}", highlight=False)
    console.print(f"documents: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
    # the scores of probabilities have no value for a class the model lacks
    short = {"log_loss": "log loss", "ece": "ECE", "roc_auc": "ROC AUC", "macro_roc_auc": "ROC AUC"}
    scored = list(dict.fromkeys(short[key] for key, _ in _OPTIONAL_SCORES if key in rep))
    left_out = f" ({', '.join(scored)} leave their documents out)" if scored else ""
    table = _per_class_table(console, rep, "class", "errors", left_out)
    table.add_row(
        "macro",
        f"{rep['macro_precision']:.4f}",
        f"{rep['macro_recall']:.4f}",
        f"{rep['macro_f1']:.4f}",
        str(rep["n_docs"]),
    )
    console.print(table)
    print_confusion(console, rep["classes"], rep["confusion_matrix"])


def print_confusion(
    console: Console,
    classes: Sequence[str],
    matrix: Sequence[Sequence[int]],
    top: int = 12,
) -> None:
    """The confusion matrix as a table when it fits the terminal; else (20 classes at 80
    columns) the largest confusions, one per line, so that no count is cut."""
    classes = [cut(c) for c in classes]
    width = (
        max(len(c) for c in classes)
        + 4
        + sum(
            max(len(c), len(str(max(row[j] for row in matrix)))) + 3 for j, c in enumerate(classes)
        )
    )

    if width <= console.width:
        from rich.table import Table

        # (the title as a line of its own: as a table title it wrapped to the table's width)
        console.print("confusion matrix (rows: true, columns: predicted)", highlight=False)
        cm = Table()
        cm.add_column("")
        for c in classes:
            cm.add_column(escape(c))
        for c, row in zip(classes, matrix):
            cm.add_row(escape(c), *[str(x) for x in row])
        console.print(cm)
        return
    pairs = sorted(
        (
            (int(row[j]), t, p)
            for i, (t, row) in enumerate(zip(classes, matrix))
            for j, p in enumerate(classes)
            if i != j and row[j]
        ),
        reverse=True,
    )
    console.print(
        f"confusion matrix: {len(classes)} classes do not fit in {console.width} "
        f"columns (--json or --output FILE.csv give all of it); the largest "
        f"confusions, true -> predicted:",
        highlight=False,
    )
    for n, t, p in pairs[:top]:
        console.print(f"  {n:>6,}  {escape(t)} -> {escape(p)}", highlight=False)


def _print_task_report(rep: dict, seconds: float):
    """Hamming loss, micro / macro F1 and a per-label table (multi-label), or MSE / MAE /
    R^2 (regression)."""
    console = stdout_console()
    if rep["task"] == "regression":
        console.print(
            f"MSE: {rep['mse']:.6g}\nMAE: {rep['mae']:.6g}\nR^2: {rep['r2']:.4f}", highlight=False
        )
        console.print(f"examples: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
        return
    console.print(
        f"Hamming loss: {rep['hamming_loss']:.4f}\n"
        f"micro F1: {rep['micro_f1']:.4f}\nmacro F1: {rep['macro_f1']:.4f}\n"
        f"subset accuracy: {100 * rep['subset_accuracy']:.2f}%",
        highlight=False,
    )
    console.print(f"examples: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
    console.print(_per_class_table(console, rep, "label", "missed"))


def _per_class_table(console, rep: dict, what: str, counted_as: str, left_out: str = "") -> Table:
    """Print the labels the model does not know (and the scores that ``left_out`` says
    leave their documents out); return the per-class P/R/F1 table."""
    from rich.table import Table

    if rep.get("unseen_labels"):
        shown = ", ".join(f"{cut(label)} ({n})" for label, n in rep["unseen_labels"].items())
        console.print(
            f"labels the model does not know, counted as {counted_as}: {shown}{left_out}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    table = Table(what, "precision", "recall", "F1", "support")
    for c, m in rep["per_class"].items():  # class names are user data, not markup
        table.add_row(
            escape(cut(c)),
            f"{m['precision']:.4f}",
            f"{m['recall']:.4f}",
            f"{m['f1']:.4f}",
            str(m["support"]),
        )
    return table
