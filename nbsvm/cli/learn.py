"""``nbsvm learn``: train any backend learner on svmlight / Blitzer / named-feature files."""

from __future__ import annotations

import json
import time

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import (
    bound_reading,
    checkpoint_note,
    claim_outputs,
    cli_errors,
    parse_eta0,
    read_stats,
    refuse_model_name,
    warn_given_again,
)
from nbsvm.cli.options import (
    CHECKPOINT_EVERY,
    ENCODING,
    MAX_MEMORY,
    QUIET,
    RESUME,
    STRICT,
)
from nbsvm.cli.progress import ProgressReporter
from nbsvm.cli.reports import echo_kv, print_report
from nbsvm.config import DEFAULT_N_BITS, MAX_BITS, MAX_HASH_SEED, MIN_BITS
from nbsvm.errors import NBSVMError, saved_untested
from nbsvm.learners.registry import names

SPARSE_FORMAT = typer.Option(
    "auto",
    "--format",
    help="svmlight, blitzer or named (auto: blitzer for *.review, else svmlight).",
)


def _index_base(value: str):
    if value == "auto":
        return "auto"
    if value in ("0", "1"):
        return int(value)
    from nbsvm.errors import NBSVMError

    raise NBSVMError(f"--index-base must be 0, 1 or auto, got {value!r}")


@app.command("learn")
def learn_command(
    inputs: list[str] = typer.Argument(
        ...,
        metavar="FILE",
        help="Training files (svmlight/libsvm, Blitzer .review, or 'label name:value' lines).",
        show_default=False,
    ),
    output: str = typer.Option(..., "--output", "-o", help="Model file to write (.npz)."),
    algorithm: str = typer.Option(
        "sgd", "--algorithm", "-a", help=f"One of: {', '.join(names('algorithm'))}."
    ),
    loss: str | None = typer.Option(None, "--loss", help="Loss (learners that take one)."),
    schedule: str | None = typer.Option(None, "--schedule", help="Step-size schedule."),
    penalty: str | None = typer.Option(None, "--penalty", help="Regularizer."),
    l1: float | None = typer.Option(None, "--l1", help="L1 strength / mix."),
    lam: float | None = typer.Option(None, "--lambda", min=0.0, help="Regularization strength."),
    eta0: str | None = typer.Option(
        None,
        "--eta0",
        help="Step size (OGD: eta), or auto: Bottou's calibration on a sample (the default of "
        "sgd, adagrad and ovr's sgd).",
    ),
    C: float | None = typer.Option(None, "--C", help="Aggressiveness of PA-I / PA-II."),
    radius: float | None = typer.Option(None, "--radius", help="L2 ball radius (OGD)."),
    average: bool | None = typer.Option(
        None, "--average/--no-average", help="Predict with averaged weights."
    ),
    estimator: str | None = typer.Option(
        None, "--estimator", help="Binary learner of --algorithm ovr (the other options go to it)."
    ),
    epochs: int | None = typer.Option(
        None, "--epochs", min=1, help="Passes over the data (default: the learner's own)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the epoch shuffles."),
    n_bits: int = typer.Option(
        DEFAULT_N_BITS,
        "--n-bits",
        min=MIN_BITS,
        max=MAX_BITS,
        help="Feature space of 2**N columns: named "
        "features are hashed into it; svmlight indices must "
        "fit it (an index beyond is an error naming its line).",
    ),
    hash_seed: int = typer.Option(
        0, "--hash-seed", min=0, max=MAX_HASH_SEED, help="MurmurHash3 seed of named features."
    ),
    fmt: str = SPARSE_FORMAT,
    index_base: str = typer.Option(
        "auto", "--index-base", help="svmlight indices start at 0 or 1 (auto: 0 if any index is 0)."
    ),
    test: list[str] | None = typer.Option(
        None, "--test", help="Also evaluate on this labeled file (repeatable)."
    ),
    cache_dir: str | None = typer.Option(
        None, "--cache-dir", help="Folder for the temporary training cache."
    ),
    json_out: bool = typer.Option(
        False,
        "--json",
        help="Print the training summary as JSON only (with --test: "
        "the test report, the summary under 'training').",
    ),
    max_memory: str | None = MAX_MEMORY,
    checkpoint_every: int = CHECKPOINT_EVERY,
    resume: bool = RESUME,
    quiet: bool = QUIET,
    strict: bool = STRICT,
    encoding: str = ENCODING,
) -> None:
    """Train an online learner out of core (epochs over a shuffled binary cache) and save it."""
    from nbsvm.data.rowencoder import check_sparse_format, file_format, model_file_format
    from nbsvm.models.checkpoint import Checkpoint, checkpoint_path

    with cli_errors():
        claim_outputs(
            reads={"an input": inputs, "a --test file": test},
            output=output,
            checkpoint_every=checkpoint_path(output) if checkpoint_every or resume else None,
        )
        refuse_model_name(output)  # (after: an input named as the output is said as such)
        check_sparse_format(fmt)  # before the learner is named: an argument error only
        bound_reading(max_memory)  # a line too long for it: refused as it is read
        warn_given_again(inputs, test or [], "examples")
        for path in test or ():  # a --test file the model could not read: before training
            model_file_format(path, fmt, file_format(inputs[0], fmt) if inputs else "svmlight")
        options = dict(locals())  # every option by name, for the steps below
        learner = _learner(**options)
        base = _index_base(index_base)
        talk = not (quiet or json_out)
        checkpoint = (
            Checkpoint.for_run(
                output, checkpoint_every, resume, inputs, {"format": fmt, "strict": strict}
            )
            if checkpoint_every or resume
            else None
        )
        if talk:
            typer.echo(f"learner: {learner!r}")
        learner, seconds = _learn(learner, base, checkpoint, talk, **options)
        learner.save(output)
        if checkpoint is not None:
            checkpoint.remove()  # the model is safely written: nothing to resume
        summary, stats = _learn_summary(learner, checkpoint, seconds, output)
        if test:
            try:
                rep = _evaluate(learner, talk, **options)
            except NBSVMError as e:  # as train says it: the model is kept, the test named
                raise saved_untested(e, output) from e
            if json_out:
                typer.echo(json.dumps(dict(rep, training=summary), indent=2))
                return
            print_report(rep, rep["eval_seconds"])
        if json_out:
            typer.echo(json.dumps(summary, indent=2))
            return
        echo_kv(stats)


def _learner(
    *,
    algorithm,
    loss,
    schedule,
    penalty,
    l1,
    lam,
    eta0,
    C,
    radius,
    average,
    estimator,
    epochs,
    seed,
    **_,
):
    """The untrained learner the options describe (each checked, named by its flag)."""
    from nbsvm.learners.options import make_learner_from_options

    return make_learner_from_options(
        algorithm,
        {
            "--loss": loss,
            "--schedule": schedule,
            "--penalty": penalty,
            "--l1": l1,
            "--lambda": lam,
            "--eta0": parse_eta0(eta0),
            "--C": C,
            "--radius": radius,
            "--average": average,
            "--estimator": estimator,
            "--epochs": epochs,
            "--seed": seed,
        },
    )


def _learn(
    learner,
    base,
    checkpoint,
    talk: bool,
    *,
    inputs,
    fmt,
    n_bits,
    hash_seed,
    epochs,
    seed,
    cache_dir,
    max_memory,
    strict,
    encoding,
    **_,
):
    """``(the learner trained on the inputs, the training seconds)``."""
    from nbsvm.io.decoding import check_encoding
    from nbsvm.workflows.learn import learn_sparse

    with ProgressReporter(not talk) as bars:
        progress = _learning_events(bars, talk)
        t0 = time.perf_counter()
        learner = learn_sparse(  # the same learner, trained
            learner,
            inputs,
            fmt=fmt,
            n_bits=n_bits,
            hash_seed=hash_seed,
            index_base=base,
            epochs=epochs,
            seed=seed,
            cache_dir=cache_dir,
            callback=progress,
            max_memory=max_memory,
            strict=strict,
            stats=read_stats(),
            checkpoint=checkpoint,
            encoding=check_encoding(encoding),
        )
    return learner, time.perf_counter() - t0


def _learn_summary(learner, checkpoint, seconds: float, output: str) -> tuple[dict, dict]:
    """``(the --json summary, the key: value lines)`` of a training."""
    from nbsvm.evaluation.sparse import feature_space

    space, used = feature_space(learner), int(learner.n_features_in_)
    summary = {
        "learner": type(learner).__name__,
        "task": learner.task,
        "examples": int(learner.n_train_),
        "classes": [str(c) for c in learner.classes_] if learner.classes_ else None,
        "features": int(learner.n_features_in_),
        "feature_space": space,
        "epochs": len(learner.history_),
        "history": learner.history_,
        "training_seconds": seconds,
        "saved": output,
    }
    stats = {"examples": learner.n_train_, "task": learner.task}
    if checkpoint is not None and checkpoint.resumed_from is not None:
        summary["resumed_after_epoch"] = stats["resumed after epoch"] = checkpoint.resumed_from
    if learner.classes_:
        stats["classes"] = ", ".join(learner.classes_[:20]) + (
            " ..." if len(learner.classes_) > 20 else ""
        )
    if hasattr(learner, "eta0_"):
        summary["eta0_chosen"] = stats["eta0 (auto)"] = learner.eta0_
    stats.update(
        {
            "features": f"{used:,} used of {space:,}" if used < space else f"{used:,}",
            "training seconds": f"{seconds:.2f}",
            "saved": output,
        }
    )
    return summary, stats


def _evaluate(learner, talk: bool, *, test, fmt, strict, encoding, **_) -> dict:
    """The report of the trained learner on the --test files, with its seconds."""
    from nbsvm.evaluation.sparse import evaluate_sparse
    from nbsvm.io.decoding import check_encoding

    t2 = time.perf_counter()
    with ProgressReporter(not talk) as bars:
        rep = evaluate_sparse(
            learner,
            test,
            fmt=fmt,
            callback=bars,
            strict=strict,
            stats=read_stats(),
            encoding=check_encoding(encoding),
        )
    rep["eval_seconds"] = time.perf_counter() - t2
    return rep


def _learning_events(bars, talk: bool):
    """The callback of ``learn_sparse``: a bar while the inputs are read, one over the
    epochs, a line per epoch and the checkpoint notes (``talk``: not quiet)."""

    def progress(event):
        if event["stage"] == "cache":  # reading the inputs
            return bars({"stage": "read", "docs": event["examples"], "unit": "examples"})
        if checkpoint_note(event, not talk):
            return
        if event["stage"] != "epoch":
            return bars(event)
        parts = [f"epoch {event['epoch']}/{event['epochs']}", f"examples {event['examples']:,}"]
        if "loss" in event:
            parts.append(f"mean loss {event['loss']:.6f}")
        if "mistakes" in event:
            parts.append(f"mistakes {event['mistakes']:,}")
        if "summed_over" in event:  # not multi-class errors: 451 'mistakes' of 300 examples
            parts.append(f"(summed over the {event['summed_over']} one-vs-rest learners)")
        parts.append(f"{event['seconds']:.2f}s")
        # one bar over the epochs (the learners report at the end of each)
        bars(
            {
                "stage": "epochs",
                "docs": event["epoch"],
                "total": event["epochs"],
                "unit": "epochs",
                "extra": f"{event['examples'] / event['seconds']:,.0f} examples/s"
                if event["seconds"] > 0
                else "",
            }
        )
        if talk:
            typer.echo("  ".join(parts))

    return progress
