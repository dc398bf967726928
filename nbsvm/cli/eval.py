"""``nbsvm eval``: metrics of a saved model on labeled documents."""
from __future__ import annotations

import json
import time
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from ..evaluate import evaluate_documents
from ..metrics import report_table
from ..nbsvm import NBSVMClassifier
from ..persist import atomic_path
from . import app
from .common import (FORMAT, INPUTS, LABEL_COL, QUIET, TEXT_COL, ProgressReporter, cli_errors,
                     documents)


def _print_report(rep: dict, seconds: float):
    console = Console()
    console.print(f"accuracy: {100 * rep['accuracy']:.2f}%", highlight=False)
    if "log_loss" in rep:
        console.print(f"log loss: {rep['log_loss']:.4f}", highlight=False)
    console.print(f"documents: {rep['n_docs']}   eval seconds: {seconds:.2f}", highlight=False)
    table = Table("class", "precision", "recall", "F1", "support")
    for c, m in rep["per_class"].items():
        table.add_row(c, f"{m['precision']:.4f}", f"{m['recall']:.4f}", f"{m['f1']:.4f}",
                      str(m["support"]))
    table.add_row("macro", f"{rep['macro_precision']:.4f}", f"{rep['macro_recall']:.4f}",
                  f"{rep['macro_f1']:.4f}", str(rep["n_docs"]))
    console.print(table)
    cm = Table(title="confusion matrix (rows: true, columns: predicted)")
    cm.add_column("")
    for c in rep["classes"]:
        cm.add_column(c)
    for c, row in zip(rep["classes"], rep["confusion_matrix"]):
        cm.add_row(c, *[str(x) for x in row])
    console.print(cm)


@app.command("eval")
def eval_command(
    inputs: List[str] = INPUTS,
    model: str = typer.Option(..., "--model", "-m", help="Model file from `nbsvm train`."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
    output: Optional[str] = typer.Option(None, "--output", "-o",
                                         help="Also write the report as a tidy CSV table."),
    fmt: str = FORMAT, text_col: str = TEXT_COL, label_col: str = LABEL_COL, quiet: bool = QUIET,
):
    """Evaluate a model: accuracy, precision, recall, F1, log loss, confusion matrix."""
    with cli_errors():
        clf = NBSVMClassifier.load(model)
        t0 = time.perf_counter()
        with ProgressReporter(quiet or json_out) as progress:
            rep = evaluate_documents(clf, documents(inputs, fmt, text_col, label_col),
                                     callback=progress)
        seconds = time.perf_counter() - t0
        rep["eval_seconds"] = seconds
        if output:
            with atomic_path(output) as tmp:
                report_table(rep).to_csv(tmp, index=False)
        if json_out:
            typer.echo(json.dumps(rep, indent=2))
        else:
            _print_report(rep, seconds)
