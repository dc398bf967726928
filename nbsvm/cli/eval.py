"""``nbsvm eval``: metrics of a saved model on labeled documents."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import typer

from nbsvm.cli import app
from nbsvm.cli.common import (
    check_interrupt,
    check_outputs,
    cli_errors,
    documents,
    read_stats,
    text_columns,
)
from nbsvm.cli.options import (
    DASK_LOCAL,
    ENCODING,
    FORMAT,
    INPUTS,
    LABEL_COL,
    LABEL_SEP,
    QUIET,
    SCHEDULER,
    SKIP_BAD,
    STRICT,
    TEXT_COL,
)
from nbsvm.cli.progress import ProgressReporter
from nbsvm.cli.reports import print_report
from nbsvm.errors import NBSVMError
from nbsvm.evaluation import plot
from nbsvm.evaluation.evaluate import evaluate_documents
from nbsvm.evaluation.metrics import report_table
from nbsvm.evaluation.sparse import evaluate_sparse, load_learner, model_file_kind
from nbsvm.io.decoding import check_encoding
from nbsvm.io.npzfile import atomic_path
from nbsvm.models.nbsvm import NBSVMClassifier


def _plot_title(inputs: list[str], model: str) -> str:
    shown = " ".join(inputs) if len(inputs) <= 2 else f"{inputs[0]} and {len(inputs) - 1} more"
    return f"{Path(model).name} on {shown}"


@app.command("eval")
def eval_command(
    inputs: list[str] = INPUTS,
    model: str = typer.Option(
        ..., "--model", "-m", help="Model file from `nbsvm train` or `nbsvm learn`."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
    output: str | None = typer.Option(
        None, "--output", "-o", help="Also write the report as a tidy CSV table."
    ),
    plot_path: str | None = typer.Option(
        None,
        "--plot",
        help="Write ROC, precision-recall (two classes), "
        "reliability (models with probabilities) "
        "and confusion-matrix plots (.png, .svg or "
        ".pdf; needs matplotlib: pip install "
        "'nbsvm[plot]'). Keeps 8 bytes per document "
        "and class in memory.",
    ),
    fmt: str = FORMAT,
    text_col: list[str] = TEXT_COL,
    label_col: str = LABEL_COL,
    quiet: bool = QUIET,
    strict: bool = STRICT,
    encoding: str = ENCODING,
    skip_bad: bool = SKIP_BAD,
    label_sep: str = LABEL_SEP,
    scheduler: str | None = SCHEDULER,
    dask_local: int | None = DASK_LOCAL,
) -> None:
    """Evaluate a model: accuracy, precision, recall, F1, log loss, confusion matrix (for
    `nbsvm learn` models: the metrics of their task). A document whose label the model
    does not know counts as an error; the report lists such labels."""
    with cli_errors():
        text_col = text_columns(text_col, label_col)
        check_outputs(reads={"an input": inputs, "the model": model}, output=output, plot=plot_path)
        learner = _check_modes(model, plot_path, skip_bad, bool(scheduler or dask_local))
        options = dict(locals())  # every option by name (--text-col resolved), for the steps
        scores: list | None = [] if plot_path is not None else None
        t0 = time.perf_counter()
        if learner:
            rep = _evaluate_learned(**options)
        elif scheduler or dask_local:
            rep = _evaluate_on_dask(**options)
        else:
            clf = NBSVMClassifier.load(model)
            t0 = time.perf_counter()
            rep = _evaluate_text(clf, scores, **options)
        seconds = time.perf_counter() - t0
        rep["eval_seconds"] = seconds
        if plot_path is not None and scores is not None:  # scores: kept with --plot
            _plot(rep, scores, clf, plot_path, _plot_title(inputs, model))
        if output:
            with atomic_path(output) as tmp:
                report_table(rep).to_csv(tmp, index=False)
        if json_out:
            typer.echo(json.dumps(rep, indent=2))
        else:
            print_report(rep, seconds)
            if plot_path is not None:
                typer.echo(f"plot: {plot_path}")


def _check_modes(model: str, plot_path: str | None, skip_bad: bool, dask: bool) -> bool:
    """Refuse the options that do not go together, before reading; whether the model is
    an `nbsvm learn` one."""
    if skip_bad and (dask or model_file_kind(model) == "learner"):
        raise NBSVMError(
            "--skip-bad-lines reads text for models of `nbsvm train`, "
            "without --scheduler / --dask-local"
        )
    if dask and (plot_path is not None or model_file_kind(model) == "learner"):
        raise NBSVMError(
            "--scheduler / --dask-local evaluate models from `nbsvm train`, without --plot"
        )
    if plot_path is not None:
        plot.check(plot_path)  # no matplotlib or a bad suffix: say so before reading
    learner = model_file_kind(model) == "learner"
    if plot_path is not None and learner:
        raise NBSVMError(
            "--plot draws the ROC and precision-recall curves of models from "
            "`nbsvm train`; this is an `nbsvm learn` model",
            path=model,
        )
    return learner


def _evaluate_learned(*, inputs, model, fmt, strict, encoding, **_) -> dict:
    """The report of an `nbsvm learn` model on sparse-feature files, read as the model
    was trained (--format auto)."""
    return evaluate_sparse(
        load_learner(model),
        inputs,
        fmt=fmt,
        callback=lambda e: check_interrupt(),
        strict=strict,
        stats=read_stats(),
        encoding=check_encoding(encoding),
    )


def _evaluate_on_dask(
    *,
    inputs,
    model,
    fmt,
    text_col,
    label_col,
    strict,
    encoding,
    label_sep,
    scheduler,
    dask_local,
    **_,
) -> dict:
    """``--scheduler / --dask-local``: the report, gathered from the workers' shards."""
    from nbsvm.workflows import distributed

    NBSVMClassifier.load(model)  # a bad model file: say so before starting workers
    reader = {"format": fmt, "text_col": text_col, "label_col": label_col, "strict": strict}
    if check_encoding(encoding) != "utf-8":
        reader["encoding"] = encoding
    if label_sep != "\t":
        reader["label_sep"] = label_sep
    with distributed.client_for(scheduler, dask_local) as client:
        return distributed.evaluate(client, distributed.shards_of(inputs), model, reader)


def _evaluate_text(
    clf,
    scores: list | None,
    *,
    inputs,
    fmt,
    text_col,
    label_col,
    strict,
    skip_bad,
    encoding,
    label_sep,
    quiet,
    json_out,
    **_,
) -> dict:
    """The report of an `nbsvm train` model on text (its scores kept in ``scores``)."""
    with ProgressReporter(quiet or json_out) as progress:
        return evaluate_documents(
            clf,
            documents(
                inputs,
                fmt,
                text_col,
                label_col,
                strict=strict,
                skip_bad=skip_bad,
                encoding=encoding,
                empty_label=clf.multilabel,
                label_sep=label_sep,
            ),
            callback=progress,
            scores_out=scores,
        )


def _plot(rep: dict, scores: list, clf, plot_path: str, title: str) -> None:
    """``--plot``: ROC, precision-recall, confusion and reliability plots."""
    truth = np.concatenate([t for t, _ in scores])
    plot.roc_pr_confusion(
        truth,
        np.concatenate([s for _, s in scores]),
        clf.classes_,
        plot_path,
        confusion=np.asarray(rep["confusion_matrix"])[: len(clf.classes_), : len(clf.classes_)],
        title=title,
        reliability=dict(rep["reliability"], ece=rep["ece"]) if "reliability" in rep else None,
    )
