"""``nbsvm eval``: metrics of a saved model on labeled documents."""
from __future__ import annotations

import json
import time
from typing import List, Optional

import typer
from ..evaluate import evaluate_documents
from ..metrics import report_table
from ..nbsvm import NBSVMClassifier
from ..persist import atomic_path
from . import app
from .common import (FORMAT, INPUTS, LABEL_COL, QUIET, TEXT_COL, ProgressReporter, cli_errors,
                     documents, print_report)


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
            print_report(rep, seconds)
