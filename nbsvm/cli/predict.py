"""``nbsvm predict``: one CSV row per input document."""
from __future__ import annotations

from typing import List, Optional

import typer

from ..evaluate import predict_documents
from ..learn import load_learner, model_file_kind, predict_sparse
from ..nbsvm import NBSVMClassifier
from ..persist import atomic_path
from . import app
from .common import (FORMAT, INPUTS, STRICT, TEXT_COL, check_interrupt, cli_errors, documents,
                     read_stats)


@app.command("predict")
def predict_command(
    inputs: List[str] = INPUTS,
    model: str = typer.Option(..., "--model", "-m", help="Model file from `nbsvm train` or "
                                                          "`nbsvm learn`."),
    output: Optional[str] = typer.Option(None, "--output", "-o",
                                         help="CSV file to write (default: standard output)."),
    fmt: str = FORMAT, text_col: str = TEXT_COL,
    label_col: Optional[str] = typer.Option("label", "--label-col",
                                            help="Label column of CSV/TSV input, copied to "
                                                 "true_label when present."),
    strict: bool = STRICT,
):
    """Predict labels as CSV: source, line, true_label (if known), label, score, probability
    (`nbsvm learn` models: label and score, or prediction for regression)."""
    with cli_errors():
        if model_file_kind(model) == "learner":
            frames = predict_sparse(load_learner(model), inputs, fmt=fmt, strict=strict,
                                    stats=read_stats())
        else:
            clf = NBSVMClassifier.load(model)
            frames = predict_documents(clf, documents(inputs, fmt, text_col, label_col,
                                                      labeled=False, strict=strict))
        if output is None:
            import sys
            for i, frame in enumerate(frames):
                check_interrupt()
                frame.to_csv(sys.stdout, index=False, header=(i == 0))
            return
        with atomic_path(output) as tmp:
            with open(tmp, "w", newline="") as fh:
                n = 0
                for i, frame in enumerate(frames):
                    check_interrupt()
                    frame.to_csv(fh, index=False, header=(i == 0))
                    n += len(frame)
        typer.echo(f"predictions: {n} written to {output}", err=True)
