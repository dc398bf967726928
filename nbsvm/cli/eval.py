"""``nbsvm eval``: metrics of a saved model on labeled documents."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import (
    Dask,
    Reading,
    check_interrupt,
    cli_errors,
    prepare_reading,
    read_stats,
    refuse_other_format,
)
from nbsvm.cli.options import (
    DASK,
    INPUTS,
    QUIET,
    READING,
    SKIP_BAD,
    dask_options,
    reading_flags,
    reading_options,
    refuse_text_reading,
)
from nbsvm.cli.progress import ProgressReporter
from nbsvm.cli.reports import print_report
from nbsvm.errors import NBSVMError

#: eval -o writes CSV only: under these names (predict's other formats, pages, images) the
#: report was CSV all the same
REPORT_NOT = {
    ".parquet": "Parquet",
    ".jsonl": "JSON lines",
    ".html": "a web page",
    ".png": "an image",
    ".pdf": "a PDF document",
}


def _plot_title(inputs: list[str], model: str) -> str:
    shown = " ".join(inputs) if len(inputs) <= 2 else f"{inputs[0]} and {len(inputs) - 1} more"
    return f"{Path(model).name} on {shown}"


@app.command("eval")
@reading_options()
@dask_options()
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
    reading: Reading = READING,
    quiet: bool = QUIET,
    skip_bad: bool = SKIP_BAD,
    dask: Dask = DASK,
) -> None:
    """Evaluate a model: accuracy, precision, recall, F1, log loss, confusion matrix (for
    `nbsvm learn` models: the metrics of their task). A document whose label the model
    does not know counts as an error; the report lists such labels."""
    from nbsvm.evaluation.metrics import report_table
    from nbsvm.io.npzfile import atomic_path
    from nbsvm.models.nbsvm import NBSVMClassifier

    with cli_errors():
        given = reading_flags(reading)  # as given, for a learn model
        reading = prepare_reading(
            reading, {"an input": inputs, "the model": model}, output=output, plot=plot_path
        )
        if output:
            refuse_other_format(output, "its report as CSV", ".csv", also=REPORT_NOT)
        learner = _check_modes(model, plot_path, skip_bad, bool(dask))
        options = dict(locals())  # every option by name (--text-col resolved), for the steps
        scores: list | None = [] if plot_path is not None else None
        t0 = time.perf_counter()
        if learner:
            rep = _evaluate_learned(**options)
        elif dask:
            rep = _evaluate_on_dask(**options)
        else:
            clf = NBSVMClassifier.load(model)
            t0 = time.perf_counter()
            rep = _evaluate_text(clf, scores, **options)
        seconds = time.perf_counter() - t0
        rep["eval_seconds"] = seconds
        if output:
            with atomic_path(output) as tmp:
                report_table(rep).to_csv(tmp, index=False)
        if json_out:
            typer.echo(json.dumps(rep, indent=2))
        else:
            print_report(rep, seconds)
        if plot_path is not None and scores is not None:  # last: a plot that fails loses
            _plot(rep, scores, clf, plot_path, _plot_title(inputs, model))  # no report
            if not json_out:
                typer.echo(f"plot: {plot_path}")


def _check_modes(model: str, plot_path: str | None, skip_bad: bool, dask: bool) -> bool:
    """Refuse the options that do not go together, before reading; whether the model is
    an `nbsvm learn` one."""
    from nbsvm.evaluation import plot
    from nbsvm.io.npzfile import model_file_kind

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


def _evaluate_learned(*, inputs, model, reading, given, **_) -> dict:
    """The report of an `nbsvm learn` model on sparse-feature files, read as the model
    was trained (--format auto)."""
    from nbsvm.evaluation.sparse import evaluate_sparse, load_learner
    from nbsvm.io.decoding import check_encoding

    refuse_text_reading(given, model)

    return evaluate_sparse(
        load_learner(model),
        inputs,
        fmt=reading.fmt,
        callback=lambda e: check_interrupt(),
        strict=reading.strict,
        stats=read_stats(),
        encoding=check_encoding(reading.encoding),
    )


def _evaluate_on_dask(*, inputs, model, reading, dask, **_) -> dict:
    """``--scheduler / --dask-local``: the report, gathered from the workers' shards."""
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.workflows import distributed

    NBSVMClassifier.load(model)  # a bad model file: say so before starting workers
    with dask.client() as client:
        shards = distributed.shards_of(inputs)
        return distributed.evaluate(client, shards, model, reading.reader(), read_stats())


def _evaluate_text(
    clf, scores: list | None, *, inputs, reading, skip_bad, quiet, json_out, **_
) -> dict:
    """The report of an `nbsvm train` model on text (its scores kept in ``scores``)."""
    from nbsvm.evaluation.evaluate import evaluate_documents

    with ProgressReporter(quiet or json_out) as progress:
        return evaluate_documents(
            clf,
            reading.documents(inputs, skip_bad=skip_bad, empty_label=clf.multilabel),
            callback=progress,
            scores_out=scores,
        )


def _plot(rep: dict, scores: list, clf, plot_path: str, title: str) -> None:
    """``--plot``: ROC, precision-recall, confusion and reliability plots."""
    import numpy as np

    from nbsvm.evaluation import plot

    truth = np.concatenate([t for t, _ in scores])
    plot.roc_pr_confusion(
        truth,
        np.concatenate([s for _, s in scores]),
        clf.class_names_,
        plot_path,
        # the report's whole matrix: true labels the model does not know are its rows too
        confusion=np.asarray(rep["confusion_matrix"]),
        confusion_classes=rep["classes"],
        title=title,
        reliability=dict(rep["reliability"], ece=rep["ece"]) if "reliability" in rep else None,
    )
