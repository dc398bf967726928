"""``nbsvm predict``: one CSV row per input document."""
from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..evaluate import predict_documents
from ..learn import load_learner, model_file_kind, predict_sparse
from ..nbsvm import NBSVMClassifier
from ..persist import atomic_path
from . import app
from .common import (FORMAT, INPUTS, STRICT, TEXT_COL, ProgressReporter, _isatty, cli_errors,
                     documents, err_console, read_stats)


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
    quiet: bool = typer.Option(False, "--quiet", "-q",
                               help="No progress bar and no summary line on stderr."),
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
        # rows on a terminal show their own progress; a bar would only garble them
        show = not quiet and not (output is None and _isatty(sys.stdout))
        n = 0
        with ProgressReporter(not show, redirect_stdout=False) as progress:
            if output is None:
                for frame in frames:
                    frame.to_csv(sys.stdout, index=False, header=(n == 0))
                    n += len(frame)
                    progress({"stage": "predict", "docs": n})
                return
            with atomic_path(output) as tmp:
                with open(tmp, "w", newline="") as fh:
                    for frame in frames:
                        frame.to_csv(fh, index=False, header=(n == 0))
                        n += len(frame)
                        progress({"stage": "predict", "docs": n})
        if not quiet:
            err_console.print(f"predictions: {n} written to {output}", highlight=False,
                              soft_wrap=True, markup=False)
