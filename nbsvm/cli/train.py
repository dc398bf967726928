"""``nbsvm train``: fit NBSVM (building the lexicon in the same pass if none is given)."""

from __future__ import annotations

import json
import os
import shlex
import time
from typing import TYPE_CHECKING

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import (
    Dask,
    Hashing,
    Reading,
    bound_reading,
    check_interrupt,
    checkpoint_note,
    cli_errors,
    err_console,
    escape,
    given_options,
    parse_class_weight,
    parse_eta0,
    parse_seconds,
    prepare_reading,
    read_stats,
    refuse_missing_inputs,
    refuse_model_name,
    rereadable,
    warn_given_again,
)
from nbsvm.cli.options import (
    CHAR_NGRAMS_TRAIN,
    CHECKPOINT_EVERY,
    DASK,
    HASHING,
    INPUTS,
    MAX_MEMORY,
    QUIET,
    READING,
    RESUME,
    SKIP_BAD,
    WEIGHT_COL,
    dask_options,
    hashing_options,
    one_of,
    reading_options,
    train_flags,
)
from nbsvm.cli.progress import ProgressReporter
from nbsvm.cli.reports import class_counts_line, echo_kv, print_report
from nbsvm.config import (
    CALIBRATIONS,
    CLASSIFICATION_LOSSES,
    DEFAULTS,
    HASHER_SETTINGS,
    INTERPOLATIONS,
    MAX_NGRAMS,
    MAX_THREADS,
    MULTICLASS_DEFAULTS,
    MULTICLASS_LOSS_NAMES,
    MULTILABEL_DEFAULTS,
    NORMS,
    OPTIMIZERS,
    SOFTMAX_LAM,
    WEIGHTINGS,
)
from nbsvm.errors import NBSVMError, saved_untested, shown
from nbsvm.io.document import read_once
from nbsvm.learners.registry import ALGORITHMS, TEXT_LEARNERS, check_learner
from nbsvm.workflows import compile_ahead

if TYPE_CHECKING:  # the library is imported when the command runs
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.models.nbsvm import NBSVMClassifier


def data_defaults_line(event: dict) -> str:
    """``data-dependent defaults: min_df 1, eta0 0.072 (9,013 documents, median 64 n-grams
    each, 612,480 in all)``."""
    corpus = event["corpus"]
    chosen = ", ".join(
        f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in event["chosen"].items()
    )
    return (
        f"data-dependent defaults: {chosen} ({corpus['documents']:,} documents, median "
        f"{corpus['median_ngrams']:,} n-grams each, {corpus['ngrams']:,} in all)"
    )


def auto_line(event: dict) -> str:
    """One line of the --auto search: its plan, each trial, a note, the choice."""
    from nbsvm.models.auto import describe

    stage = event["stage"]
    if stage == "auto plan":
        space = "; ".join(
            f"{'lambda' if k == 'lam' else k} {'/'.join(map(str, v))}"
            for k, v in event["space"].items()
        )
        return (
            f"auto: {event['docs']:,} documents read and hashed in {event['pass_s']:.1f} s; "
            f"{event['candidates']} candidates, {event['split']}, budget "
            f"{event['budget']:g} s; searching {space}"
        )
    if stage == "auto trial":
        return (
            f"auto: rung {event['rung']} ({event['documents']:,} documents x "
            f"{event['folds']}): {describe(event['changed'])}: {event['metric']} "
            f"{100 * event['score']:.2f}% ({event['seconds']:.1f} s)"
        )
    if stage == "auto note":
        return f"auto: {event['note']}"
    return (
        f"auto: chose {describe(event['changed'])}: {event['reason']}; search "
        f"{event['seconds']:.1f} s of the {event['budget']:g} s budget"
    )


def by_classes(name: str) -> str:
    """The help's note on a setting whose default follows the number of classes."""
    return (
        f"(default: {DEFAULTS[name]} with two classes, {MULTICLASS_DEFAULTS[name]} "
        f"with more, {MULTILABEL_DEFAULTS[name]} multi-label)"
    )


#: train's options of one machine's runs (refused with --scheduler / --dask-local)
_ONE_MACHINE = {
    "keep_cache": "--keep-cache",
    "checkpoint_every": "--checkpoint-every",
    "resume": "--resume",
    "plot_path": "--plot",
    "max_memory": "--max-memory",
    "skip_bad": "--skip-bad-lines",
    "weight_col": "--weight-col",
}


def _train_on_dask(
    clf,
    lex,
    reader,
    *,
    inputs,
    test,
    output,
    dask,
    quiet,
    json_out,
    **options,
) -> None:
    """``nbsvm train --scheduler/--dask-local``: lexicon and parameter mixing on Dask."""
    from nbsvm.workflows import distributed

    for key, flag in _ONE_MACHINE.items():  # the options given, of those
        if options[key]:
            raise NBSVMError(f"{flag} is not available with --scheduler / --dask-local")
    t0 = time.perf_counter()
    with dask.client() as client:
        n_workers = len(client.scheduler_info()["workers"])
        with ProgressReporter(quiet or json_out) as progress:
            # (the notes one machine's run prints: data defaults, label sets as classes)
            distributed.fit(
                client,
                distributed.shards_of(inputs),
                clf,
                reader,
                lexicon_=lex,
                callback=_training_events(progress, quiet or json_out),
                stats=read_stats(encoding=reader.get("encoding", "utf-8"), hint=False),
            )
        t1 = time.perf_counter()
        clf.save(output)
        t2 = time.perf_counter()
        rep = _score_on_dask(client, distributed, test, output, reader) if test else None
        t3 = time.perf_counter()
    summary = {
        "workers": n_workers,
        "documents": int(clf.n_docs_),
        "classes": list(clf.class_names_),
        "lexicon_s": clf.timings_["lexicon_s"],
        "train_s": clf.timings_["train_s"],
        "total_s": t1 - t0,
        "save_s": t2 - t1,
        "saved": output,
    }
    if rep is not None:
        rep["timings"] = dict(summary, eval_s=t3 - t2)
    if json_out:
        typer.echo(json.dumps(rep if rep is not None else summary, indent=2))
        return
    if rep is not None:
        print_report(rep, t3 - t2)
    echo_kv(
        {
            "workers": n_workers,
            "documents": clf.n_docs_,
            "classes": class_counts_line(clf.class_names_, clf.class_counts_),
            "lexicon seconds": f"{clf.timings_['lexicon_s']:.2f}",
            "training seconds (parameter mixing)": f"{clf.timings_['train_s']:.2f}",
            "total seconds": f"{t1 - t0:.2f}",
            "save seconds": f"{t2 - t1:.2f}",
            "saved": output,
        }
    )


#: options of ``nbsvm train`` -> the model parameters they set, where the names differ
_OPTION_PARAMS = {
    "keep_case": ("lowercase",),
    "char_ngrams": ("char_min", "char_ngrams"),
    "valid": ("early_stopping", "validation_fraction"),
    "patience": ("n_iter_no_change",),
}


def _refuse_init_conflicts(ctx: typer.Context, asked, model, init: str) -> None:
    """``--init`` continues a model with the settings it was trained with: an option given
    on the command line that says otherwise (``--ngrams 2`` for a trigram model) is
    refused, naming both values, instead of silently ignored."""
    from nbsvm.models.warm import check_continuable, resolved_params

    check_continuable(model)  # a backend learner's model has no eta0_ to resolve
    saved, raw, wanted = resolved_params(model), model.get_params(), asked.get_params()
    for option in sorted(given_options(ctx)):
        for param in _OPTION_PARAMS.get(option, (option,)):
            if (
                param in saved
                and param in wanted
                and wanted[param] is not None
                and param != "cache_dir"
                and wanted[param] not in (saved[param], raw[param])
            ):
                flag = "--" + ("lambda" if option == "lam" else option.replace("_", "-"))
                raise NBSVMError(
                    f"--init continues {init} with its own settings: {flag} "
                    f"asks for {param}={wanted[param]!r}, the model has "
                    f"{saved[param]!r}; leave {flag} out (or train a new model)"
                )


@app.command("train")
@reading_options()
@hashing_options(char_ngrams=CHAR_NGRAMS_TRAIN)
@dask_options()
def train_command(
    ctx: typer.Context,
    inputs: list[str] = INPUTS,
    output: str = typer.Option(..., "--output", "-o", help="Model file to write (.npz)."),
    lexicon: str | None = typer.Option(
        None,
        "--lexicon",
        help="Lexicon from `nbsvm lexicon` (default: build it "
        "from the training data in the same run); the model hashes as "
        "it was counted (a hashing option with another value is an error).",
    ),
    ngrams: int = typer.Option(
        DEFAULTS["ngrams"],
        "--ngrams",
        min=1,
        max=MAX_NGRAMS,
        help="Word n-grams of orders 1..N (with --lexicon: the lexicon's).",
    ),
    hashing: Hashing = HASHING,
    alpha: float | None = typer.Option(
        None, "--alpha", help=f"NB smoothing {by_classes('alpha')}."
    ),
    min_df: int | None = typer.Option(
        None,
        "--min-df",
        min=1,
        help="Keep buckets seen in at least this many "
        "training documents (default: 1 when the "
        "training set holds under 2 million n-gram "
        "occurrences and its median document under 300 "
        "distinct n-grams, else 2; printed after the "
        "first pass).",
    ),
    loss: str | None = typer.Option(
        None,
        "--loss",
        callback=one_of("loss", (*CLASSIFICATION_LOSSES, *MULTICLASS_LOSS_NAMES)),
        help="log, hinge, squared_hinge or modified_huber "
        "(one output per class against the rest), or "
        "softmax or multiclass_hinge (all classes "
        "trained together on the per-class NB "
        "features) " + by_classes("loss"),
    ),
    optimizer: str | None = typer.Option(
        None,
        "--optimizer",
        callback=one_of("optimizer", OPTIMIZERS),
        help="sgd or adagrad " + by_classes("optimizer"),
    ),
    epochs: int | None = typer.Option(
        None, "--epochs", min=1, help="Passes over the data " + by_classes("epochs") + "."
    ),
    eta0: str | None = typer.Option(
        None,
        "--eta0",
        help="Initial step size, or auto (Bottou's calibration "
        "on a 1,000-document sample) " + by_classes("eta0"),
    ),
    lam: float | None = typer.Option(
        None,
        "--lambda",
        min=0.0,
        help=f"L2 regularization strength (default: {DEFAULTS['lam']}; {SOFTMAX_LAM} for "
        "the softmax loss over more than two classes).",
    ),
    beta: float = typer.Option(
        DEFAULTS["beta"], "--beta", min=0.0, max=1.0, help="Weight of the linear model against NB."
    ),
    interpolate: str = typer.Option(
        DEFAULTS["interpolate"],
        "--interpolate",
        callback=one_of("interpolation", INTERPOLATIONS),
        help="scores (NBSVM-XL) or weights (Wang & Manning).",
    ),
    learner: str | None = typer.Option(
        None,
        "--learner",
        help="adagrad, sgd or ovr: the built-in learner "
        "(its optimizer; ovr: one output per class "
        "against the rest, its default shape); "
        f"{', '.join(TEXT_LEARNERS[:-1])} or {TEXT_LEARNERS[-1]} "
        "(with --multilabel): a learner of the shared "
        "backend on the same NB features (default: "
        "the built-in --optimizer).",
    ),
    weighting: str = typer.Option(
        "nb",
        "--weighting",
        callback=one_of("weighting", WEIGHTINGS),
        help="Feature value of a kept n-gram: its NB ratio (nb) or "
        "1 (binary: plain binarized features, needs --beta 1).",
    ),
    auto: bool = typer.Option(
        False,
        "--auto",
        help="Choose the settings on held-out parts of the training "
        "data within --time-budget (n-gram order, character "
        "n-grams for short texts, the tokenizer for text in "
        "scripts without spaces, alpha, lambda, loss, norm, "
        "min_df, weighting, beta; successive halving; a change "
        "must gain more than the noise over the defaults: "
        "Student's t at the Bonferroni level, paired document "
        "by document (F1: over five validation groups)), print what was tried and "
        "chosen, then train on all of it. Options given with "
        "other values than their defaults are kept.",
    ),
    time_budget: str = typer.Option(
        "60s",
        "--time-budget",
        help="Seconds the --auto search may take (60, 90s, 2m), "
        "its reading pass included, as predicted from "
        "the work of its trials for a 2-core reference "
        "machine: the same trials and choice on any "
        "machine, however busy (a slower one takes "
        "longer; stopped at 3x).",
    ),
    auto_metric: str | None = typer.Option(
        None,
        "--auto-metric",
        help="What --auto ranks by: accuracy (the "
        "default; micro_f1 for label sets) or "
        "macro_f1 (every class alike: for a rare "
        "class that matters).",
    ),
    valid: float | None = typer.Option(
        None,
        "--valid",
        metavar="SHARE",
        help="Hold out this share of the training data "
        "(0.1: a seeded tenth), print the accuracy on "
        "it after every epoch, stop when it has not "
        "improved for --patience epochs and keep the "
        "best epoch's weights.",
    ),
    patience: int = typer.Option(
        2, "--patience", min=1, help="With --valid: epochs without improvement before stopping."
    ),
    init: str | None = typer.Option(
        None,
        "--init",
        metavar="MODEL",
        help="Continue training this saved model (trained with "
        "--keep-counts) on the new inputs: their counts "
        "join its lexicon's, and its weights, AdaGrad "
        "sums and step counters carry on (VW's "
        "--save_resume). The settings are the model's.",
    ),
    keep_counts: bool = typer.Option(
        False,
        "--keep-counts",
        help="Keep the lexicon's counts in the model file (4 "
        "bytes per class and bucket seen) so that a later "
        "train --init can add new documents to them; reads "
        "the inputs twice. For the built-in learner, without "
        "--calibrate (a backend learner or a calibration cannot "
        "be continued: refused).",
    ),
    class_weight: str | None = typer.Option(
        None,
        "--class-weight",
        metavar="WEIGHTS",
        help="Weigh each document's learning step by "
        "its class: balanced (n / (classes x "
        "n_class), as scikit-learn) or name=w "
        "pairs such as pos=5 (others weigh 1). "
        "For imbalanced data; the NB lexicon is "
        "unaffected.",
    ),
    weight_col: str | None = WEIGHT_COL,
    calibrate: str = typer.Option(
        "auto",
        "--calibrate",
        metavar="METHOD",
        callback=one_of("calibration", ("auto", "none", *CALIBRATIONS)),
        help="auto (the default): one temperature fitted on a "
        "held-out tenth where the probabilities need it "
        "(more than two classes, a class under a quarter "
        "of the documents or --beta under 1 from 500 documents on; not from "
        "standard input), about twice the training time "
        "there. none: never. sigmoid (Platt scaling), "
        "isotonic (for 1,000+ held-out documents) or "
        "temperature: always; train without a tenth of the "
        "data (at most 50,000 documents), fit on its "
        "scores, train on all; any loss or learner then "
        "gives probabilities. Prints the held-out expected "
        "calibration error before and after.",
    ),
    threshold: str = typer.Option(
        "none",
        "--threshold",
        metavar="auto|none",
        help="--multilabel only: auto tunes the labels' decision thresholds for micro F1 "
        "on a held-out tenth of the training documents (a copy trains without it; the "
        "model on all), saved with the model and used by predict, eval and serve; none "
        "(the default): a label is predicted above 0 (calibrated: probability 0.5).",
    ),
    multilabel: bool = typer.Option(
        False,
        "--multilabel",
        help="Each document has a set of labels, written a,b "
        "(label<TAB>text lines, or the label column): one "
        "NB ratio vector and one binary model per label; "
        "eval prints Hamming loss, subset accuracy and "
        "micro / macro F1, predict the label sets.",
    ),
    norm: str | None = typer.Option(
        None,
        "--norm",
        callback=one_of("norm", NORMS),
        help="Scale each document to unit L2 norm (l2) or not "
        "(none) " + by_classes("norm") + "; with two "
        "classes l2 for phrases (median under 16 "
        "n-grams).",
    ),
    seed: int = typer.Option(DEFAULTS["seed"], "--seed", min=0, help="Seed of the epoch shuffles."),
    threads: int = typer.Option(
        DEFAULTS["threads"],
        "--threads",
        min=1,
        max=MAX_THREADS,
        help="Hogwild! threads for AdaGrad epochs (1: reproducible bit "
        "for bit; 2+: faster, varies in the last digits).",
    ),
    cache_dir: str | None = typer.Option(
        None,
        "--cache-dir",
        help="Folder for the feature cache (default: the "
        "temp folder; with --keep-cache: "
        "$NBSVM_CACHE_DIR or ~/.cache/nbsvm).",
    ),
    keep_cache: bool = typer.Option(
        False,
        "--keep-cache",
        help="Keep the hashed training data for later runs, keyed "
        "by the inputs' paths, sizes and modification times "
        "and the hashing settings; a run with the same key "
        "skips reading and hashing.",
    ),
    checkpoint_every: int = CHECKPOINT_EVERY,
    resume: bool = RESUME,
    test: list[str] | None = typer.Option(
        None,
        "--test",
        help="Also evaluate on this labeled input (repeat "
        "for several); it is hashed on the other core "
        "while the model trains.",
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Print the report (with --test) or the training summary as JSON."
    ),
    plot_path: str | None = typer.Option(
        None,
        "--plot",
        help="Write the training curve (.png, .svg or "
        ".pdf): mean training loss per epoch and, "
        "with --test, the test accuracy after each "
        "epoch (needs matplotlib: pip install "
        "'nbsvm[plot]').",
    ),
    max_memory: str | None = MAX_MEMORY,
    reading: Reading = READING,
    quiet: bool = QUIET,
    skip_bad: bool = SKIP_BAD,
    dask: Dask = DASK,
) -> None:
    """Train an NB-weighted linear model out of core and save it."""
    with cli_errors():
        reading = _check_files(**locals())  # the files and the learner, before reading
        bound_reading(max_memory)  # a line too long for it: refused as it is read
        # the library after the checks of what was asked: a wrong file is said at once
        from nbsvm.evaluation.heldout import EpochHistory
        from nbsvm.models.nbsvm import NBSVMClassifier

        if "patience" in given_options(ctx) and valid is None:
            raise NBSVMError(
                "--patience counts the epochs of early stopping, which --valid turns on: "
                "add --valid 0.1, or leave --patience out"
            )
        if "time_budget" in given_options(ctx) and not auto:  # it would be ignored
            raise NBSVMError(
                "--time-budget bounds the search of --auto: add --auto, or leave --time-budget out"
            )
        options = dict(locals())  # every option by name (--text-col resolved), for the steps
        history = EpochHistory() if plot_path is not None else None  # kept with --plot
        clf, lex = _classifier(**options)
        flag, twice = _check_extra_passes(**options)
        if init:
            asked = clf
            clf = NBSVMClassifier.load(init)  # its settings; the counts it kept
            _refuse_init_conflicts(ctx, asked, clf, init)
            # its task reads the data: an empty label is a multi-label model's empty set
            options["multilabel"] = bool(clf.multilabel)
        if not dask:  # a first run: the other core compiles the kernels needed after hashing
            compile_ahead.start(clf.get_params())
        if not (quiet or json_out):
            typer.echo(
                "settings: "
                + json.dumps({k: v for k, v in clf.get_params().items() if k != "cache_dir"})
            )
        reader = _reader(**options)
        if dask:
            _train_on_dask(clf, lex, reader, **options)
            return
        # hand over the only reference, so that fit can free the counts once used
        holder = [lex]
        del lex
        job = _fit_here(clf, holder, reader, history, flag, twice, **options)
        _report_training(clf, job, history, **options)


def _check_files(
    *,
    reading,
    inputs,
    test,
    init,
    lexicon,
    output,
    plot_path,
    checkpoint_every,
    resume,
    learner,
    cache_dir=None,
    **_,
) -> Reading:
    """Every file this run writes, checked before anything is read: none may be one it
    reads; and a --plot that could not be drawn (no matplotlib or a bad suffix). The
    reading options, their --text-col resolved. Imports the library only where an option
    needs it (--plot, a checkpoint), so that these errors come before numpy loads; and
    the --learner's name, for the same reason."""
    check_learner(learner)
    checkpoint = None
    if checkpoint_every or resume:
        from nbsvm.models.checkpoint import checkpoint_path

        checkpoint = checkpoint_path(output)
    reading = prepare_reading(
        reading,
        {
            "an input": inputs,
            "a --test file": test,
            "the --init model": init,
            "the --lexicon file": lexicon,
        },
        output=output,
        plot=plot_path,
        checkpoint_every=checkpoint,
    )
    refuse_model_name(output)  # (after: an input named as the output is said as such)
    if plot_path is not None:
        from nbsvm.evaluation import plot

        plot.check(plot_path)  # no matplotlib or a bad suffix: say so before training
    # a missing input or --test file (read after training) is named before anything runs
    refuse_missing_inputs(inputs)
    refuse_missing_inputs(test or (), " (--test)")
    _refuse_cache_inside(cache_dir, [*inputs, *(test or [])])
    warn_given_again(inputs, test or [])
    return reading


def _refuse_cache_inside(cache_dir, inputs: list[str]) -> None:
    """A --cache-dir that is an input folder: its cache folders would be read as class
    folders of documents by the next run (a folder below a class folder, or a hidden one,
    is skipped by the reader: those are left alone)."""
    if cache_dir is None:
        return
    cache = os.path.realpath(cache_dir)
    for path in inputs:
        if str(path) != "-" and os.path.isdir(path) and os.path.realpath(path) == cache:
            raise NBSVMError(
                f"--cache-dir {cache_dir} is the input folder {path}: the next run would "
                "read its caches as classes of documents; choose a folder outside the inputs"
            )


def _hashing(
    *, ctx, lexicon, ngrams, hashing, alpha, weight_col, quiet, **_
) -> tuple[NBLexicon | None, dict]:
    """The --lexicon (None without one) and the hashing settings and smoothing: the
    options', or with --lexicon the lexicon's (its alpha unless --alpha is given)."""
    from nbsvm.lexicon.nblexicon import NBLexicon

    lex = None
    settings = dict(ngrams=ngrams, **hashing.settings(), alpha=alpha)
    if lexicon is not None:
        lex = NBLexicon.load(lexicon)
        if weight_col and not lex.weighted and not quiet:  # the file's counts are used:
            typer.echo(  # the weights reach the learner only
                "note: --weight-col weighs the learner's steps; the NB counts are those of "
                "the --lexicon file, counted without weights (count it with --weight-col "
                "to weigh them)",
                err=True,
            )
        h = lex.hasher
        _refuse_other_hashing(given_options(ctx), hashing, h, lexicon, ngrams)
        settings.update({name: getattr(h, name) for name in HASHER_SETTINGS}, hash_seed=h.seed)
        if alpha is None and not lex.alpha_default_:
            settings["alpha"] = lex.alpha  # given when it was counted: kept
    return lex, settings


#: each hashing option -> the settings it gives (Hasher's names) and its flag
_HASHING_OPTIONS = {
    "ngrams": (("ngrams",), "--ngrams"),
    "n_bits": (("n_bits",), "--n-bits"),
    "char_ngrams": (("char_min", "char_ngrams"), "--char-ngrams"),
    "keep_case": (("lowercase",), "--keep-case"),
    "split_scripts": (("split_scripts",), "--split-scripts/--no-split-scripts"),
    "nfkc": (("nfkc",), "--nfkc"),
    "long_words": (("long_words",), "--long-words"),
    "hash_seed": (("hash_seed",), "--hash-seed"),
}


def _refuse_other_hashing(
    given: set[str], hashing: Hashing, lexicon_hasher, path: str, ngrams: int
) -> None:
    """A --lexicon hashes as it was counted: a hashing option given on the command line
    with another value than the lexicon's is an error, not silently dropped."""
    mine = {**hashing.settings(), "ngrams": ngrams}
    theirs = {**lexicon_hasher.settings(), "hash_seed": lexicon_hasher.seed}
    flags = [
        flag
        for option, (settings, flag) in _HASHING_OPTIONS.items()
        if option in given and any(mine[k] != theirs[k] for k in settings)
    ]
    if flags:
        raise NBSVMError(
            f"--lexicon {path} was counted with other hashing settings than "
            f"{', '.join(flags)} give: leave {'it' if len(flags) == 1 else 'them'} out (the "
            "lexicon's apply), or count a lexicon with them"
        )


def _refuse_unused_by_backend(clf: NBSVMClassifier, o: dict) -> None:
    """A backend --learner trains with its own rule: the built-in learner's options (its
    Hogwild! threads too), an L2 strength it has none of, or epochs for a solver that runs
    to its tolerance, would be dropped without a word."""
    name = clf.backend_learner
    if name is None:
        return
    if o["weight_col"]:  # (refused when a weight other than 1 came up: data decided)
        from nbsvm.learners.epochs import NO_WEIGHTS

        raise NBSVMError(f"--weight-col: {NO_WEIGHTS}")
    algorithm = ALGORITHMS[name]
    unused = [
        flag
        for flag, key in (("--loss", "loss"), ("--optimizer", "optimizer"), ("--eta0", "eta0"))
        if o[key] is not None
    ]
    if o["lam"] is not None and algorithm.lam is None:
        unused.append("--lambda")
    if o["epochs"] is not None and algorithm.batch:
        unused.append("--epochs")
    if o["threads"] != 1:  # Hogwild! threads of the built-in learner's AdaGrad epochs
        unused.append("--threads")
    if unused:
        takes = [
            *([] if algorithm.batch else ["--epochs"]),
            *(["--lambda"] if algorithm.lam else []),
            "--seed",
        ]
        raise NBSVMError(
            f"--learner {name} does not take {', '.join(unused)} (it steps by its own rule"
            f"{'; it solves to a tolerance in one pass' if algorithm.batch else ''}); it "
            f"takes {', '.join(takes)}"
        )


# the options that are NBSVMClassifier parameters of the same name and value
_AS_GIVEN = (
    "min_df loss optimizer lam beta interpolate epochs seed threads cache_dir norm learner "
    "multilabel auto weighting keep_counts auto_metric"
).split()


def _classifier(**options) -> tuple[NBSVMClassifier, NBLexicon | None]:
    """The model the options describe, checked, and the --lexicon it starts from."""
    from nbsvm.models.nbsvm import NBSVMClassifier

    lex, hashing = _hashing(**options)
    o = options
    eta0 = parse_eta0(o["eta0"])
    clf = NBSVMClassifier(
        **hashing,
        **{name: o[name] for name in _AS_GIVEN},
        eta0=eta0,
        calibrate=None if o["calibrate"] == "none" else o["calibrate"],
        threshold=None if o["threshold"] == "none" else o["threshold"],
        class_weight=parse_class_weight(o["class_weight"]),
        early_stopping=o["valid"] is not None,
        validation_fraction=0.1 if o["valid"] is None else o["valid"],
        n_iter_no_change=o["patience"],
        time_budget=parse_seconds(o["time_budget"]),
    )
    clf.validate()
    _refuse_unused_by_backend(clf, o)
    return clf, lex


def _check_extra_passes(
    *,
    inputs,
    auto,
    calibrate,
    keep_counts,
    init,
    valid,
    lexicon,
    dask,
    keep_cache,
    checkpoint_every,
    resume,
    threshold,
    **_,
) -> tuple[str, bool]:
    """The option that reads the inputs more than once (named in errors), and whether one
    is given; such a run refuses standard input, before reading, and the options that
    reuse what was hashed or counted before."""
    chosen = calibrate not in ("none", "auto")  # auto calibrates where it can
    flag = (
        "--init"
        if init
        else "--auto"
        if auto
        else "--calibrate"
        if chosen
        else "--keep-counts"
        if keep_counts
        else "--valid"
    )
    twice = bool(auto or chosen or keep_counts or init or valid is not None)
    if threshold == "auto" and not dask:  # tuned on the training documents, read again
        rereadable(inputs, None, "--threshold auto")  # refused before training, not after
    if twice:
        rereadable(inputs, None, flag)  # standard input: refused before reading
        _refuse_with_auto(
            flag,
            lexicon,
            bool(dask),
            keep_cache,
            checkpoint_every or resume,
            init and (auto or chosen or keep_counts),
        )
    return flag, twice


def _score_on_dask(client, distributed, test: list[str], output: str, reader: dict) -> dict:
    """The test set's report on Dask; a failure says the model is saved, as one machine's
    run does."""
    try:
        return distributed.evaluate(
            client,
            distributed.shards_of(test),
            output,
            reader,
            read_stats(encoding=reader.get("encoding", "utf-8"), hint=False),
        )
    except NBSVMError as e:
        raise saved_untested(e, output) from e


def _reader(*, reading, skip_bad, weight_col, multilabel, **_) -> dict:
    """How the inputs are read, as the model file and the feature cache record it (a
    multi-label run reads an empty label as the empty set: another cache's documents)."""
    extra: dict = {"weight_col": weight_col} if weight_col else {}
    if multilabel:
        extra["empty_label"] = True
    return reading.reader(skip_bad=True, **extra) if skip_bad else reading.reader(**extra)


def _fit_here(
    clf,
    holder: list,
    reader: dict,
    history,
    flag: str,
    twice: bool,
    *,
    inputs,
    test,
    output,
    lexicon,
    keep_cache,
    cache_dir,
    checkpoint_every,
    resume,
    max_memory,
    init,
    quiet,
    json_out,
    **options,
) -> dict:
    """Train on this machine (the lexicon handed over in ``holder``) and save the model."""
    from nbsvm.workflows.job import train_job

    with ProgressReporter(quiet or json_out) as progress:
        on_event = _training_events(progress, quiet or json_out)

        def docs(paths, report=True, weighted=True):
            return _documents(paths, report=report, weighted=weighted, **options)

        # files are read again where the defaults need it (a peek at the first
        # documents, calibration); standard input and pipes once
        again = twice or not any(map(read_once, inputs))
        return train_job(
            clf,
            inputs,
            rereadable(inputs, docs, flag) if again else docs(inputs),
            output,
            reader,
            test_docs=docs(test, weighted=False) if test else None,
            lexicon=holder.pop(),
            lexicon_path=lexicon,
            keep_cache=keep_cache,
            cache_dir=cache_dir,
            checkpoint_every=checkpoint_every,
            resume=resume,
            max_memory=max_memory,
            callback=on_event,
            history=history,
            init=bool(init),
        )


def _documents(paths, *, report, weighted, reading, skip_bad, multilabel, weight_col, **_):
    """The labeled documents of ``paths``, read as the options say (``weighted``: with
    their --weight-col)."""
    return reading.documents(
        paths,
        skip_bad=skip_bad,
        empty_label=multilabel,
        report=report,
        weight_col=weight_col if weighted else None,
    )


def _report_training(
    clf, job: dict, history, *, plot_path, json_out, output, lexicon=None, **_
) -> None:
    """After training: the test report or the training summary (JSON with --json), then
    the --plot (last, as eval draws its own: a plot that fails loses no report)."""
    from nbsvm.evaluation import plot

    rep = job["report"]
    if rep is not None:
        rep["timings"]["save_s"] = job["save_s"]
        if history is not None:
            rep["history"] = history.as_dict()
    if json_out:  # without a test set, the training summary
        typer.echo(
            json.dumps(rep if rep is not None else _json_summary(clf, job, output), indent=2)
        )
    else:
        if rep is not None:
            print_report(rep, rep["timings"]["eval_s"])
        echo_kv(_summary(clf, job, output, plot_path, from_lexicon=lexicon is not None))
    if plot_path is not None and history is not None:  # history: kept with --plot
        plot.training_curve(
            history.as_dict(),
            plot_path,
            title=f"nbsvm train: {clf.setting('loss')} loss, "
            f"{clf.setting('optimizer')}, eta0 "
            f"{clf.setting('eta0')}, lambda {clf.setting('lam')}, "
            f"{clf.n_docs_:,} documents",
        )


def _refuse_with_auto(flag: str, *options) -> None:
    """--auto picks the hashing settings and --calibrate the documents each training reads:
    nothing hashed or counted before can serve."""
    if any(options):
        what = {
            "--auto": "chooses the hashing settings itself",
            "--calibrate": "trains twice, on parts of the data it chooses",
            "--keep-counts": "counts the lexicon in a pass of its own",
            "--init": "continues a saved model with its own settings",
            "--valid": "holds out part of the data it reads",
        }[flag]
        raise NBSVMError(
            f"{flag} {what}: it cannot be used with --lexicon, --keep-cache, "
            "--checkpoint-every, --resume or Dask"
            + (", or --init with --auto, --calibrate or --keep-counts" if flag == "--init" else "")
        )


# the one-line notes on stderr, by event stage (None: nothing to say)
_NOTES = {
    "data defaults": lambda e: data_defaults_line(e) if e["chosen"] else None,
    "lexicon without corpus": lambda e: (
        "note: the --lexicon file does not record the data it counted (written by an "
        "earlier version, or grown in Python with partial_fit): min_df, eta0 and norm take "
        "the package defaults, not the data's; count it with `nbsvm lexicon` for those"
    ),
    "validation": lambda e: (
        f"epoch {e['epoch']}: validation accuracy {100 * e['accuracy']:.2f}% (best: epoch "
        f"{e['best_epoch']})" + (": stopping" if e["stop"] else "")
    ),
    "init": lambda e: (
        f"continuing the saved model: {e['buckets']:,} of its buckets carry their weights"
    ),
    "calibrated": lambda e: calibration_line(e),
    "thresholds": lambda e: (
        f"thresholds: {e['changed']} of {e['labels']} labels moved from the default (best "
        f"micro F1 on a held-out tenth, {e['seconds']:.1f} s)"
    ),
    "thresholds skipped": lambda e: f"note: the default thresholds are kept: {e['why']}",
    "calibration skipped": lambda e: (
        f"note: probabilities not calibrated ({e['reason']}): {e['why']}"
    ),
    "lone classes": lambda e: lone_classes_line(e),
    "lone classes, most": lambda e: lone_classes_line(e),
    "label sets as classes": lambda e: (
        f"note: {e['sets']} of {e['classes']} classes read as label sets ("
        + ", ".join(map(shown, e["shown"]))
        + (", ..." if e["sets"] > len(e["shown"]) else "")
        + "): each is a class of its own; --multilabel learns each label"
    ),
}

# notes on what was not done as asked or as a default would: even with -q (a script that
# asks for calibrated probabilities must learn that it has none)
_WARNINGS = {
    "lexicon without corpus",
    "thresholds skipped",
    "calibration skipped",
    "lone classes, most",
    "label sets as classes",
}


def lone_classes_line(event: dict) -> str:
    """``note: 1 of 3 classes holds one document: 'rating' (hdr.txt line 1) ...``, with what
    to check: a header line, or (most documents alone) the label and text swapped."""
    said = ", ".join(
        shown(c) + (f" ({w['path']} line {w['line']})" if w.get("path") and w.get("line") else "")
        for c, w in event["shown"]
    )
    more = f" and {event['alone'] - len(event['shown'])} more" if event["alone"] > 3 else ""
    holds = "holds one document" if event["alone"] == 1 else "hold one document each"
    line = f"note: {event['alone']} of {event['classes']} classes {holds}: {said}{more}"
    if event.get("held_out"):
        return line + (
            f" in the part left for training after --valid {event['held_out']:g} held out "
            "the rest: a smaller --valid leaves more to train on"
        )
    if event["stage"] == "lone classes, most":
        return line + (
            ": is the text where the label should be? Lines are label<TAB>text (--label-col"
            " and --text-col name a table's columns)"
        )
    return line + (
        ": a header line (--label-col and --text-col naming its columns skip it), or a "
        "label to check?"
    )


def _training_events(progress, silent: bool):
    """The callback of a single-machine fit: progress bars, and the one-line notes (kept
    cache, checkpoints, resuming, the defaults read from the data) on stderr."""

    def on_event(event):
        stage = event["stage"]
        if stage == "count":
            return progress(dict(event, stage="lexicon from kept cache"))
        if stage in _NOTES:
            line = None if silent and stage not in _WARNINGS else _NOTES[stage](event)
            if line:
                err_console.print(line, highlight=False)
            return
        if stage.startswith("auto"):
            if not silent:
                err_console.print(auto_line(event), highlight=False, markup=False, soft_wrap=True)
            return
        if checkpoint_note(event, silent):
            return
        if stage not in ("cache", "resume"):
            return progress(event)
        check_interrupt()
        if stage == "cache" and event["discarded"]:  # a warning: even with -q
            err_console.print(
                f"feature cache: removed an unusable one ({escape(event['discarded'])})",
                highlight=False,
                soft_wrap=True,
            )

    return on_event


def _summary(clf, job: dict, output: str, plot_path, from_lexicon: bool = False) -> dict:
    """The ``key: value`` lines after training (``from_lexicon``: the class counts are the
    --lexicon's, whose documents may not be these: 'documents: 724' beside 'a (536), z
    (664)' read as a contradiction)."""
    stats = {}
    cached, resumed, rep = job["feature_cache"], job["resumed_after_epoch"], job["report"]
    if cached is not None:
        stats["feature cache"] = ("reused " if cached["reused"] else "kept in ") + cached["folder"]
    if resumed is not None:
        stats["resumed after epoch"] = resumed
    stats.update(
        {
            "documents": clf.n_docs_,
            "classes (the lexicon's counts)" if from_lexicon else "classes": class_counts_line(
                clf.class_names_, clf.class_counts_
            ),
        }
    )
    if "lexicon_s" in clf.timings_:
        stats["lexicon+cache seconds"] = f"{clf.timings_['lexicon_s']:.2f}"
    if "cache_ngrams" in clf.timings_:  # the size of what the epochs stream from disk
        stats["feature cache n-grams"] = clf.timings_["cache_ngrams"]
        stats["feature cache MB"] = f"{clf.timings_['cache_bytes'] / 2**20:.1f}"
    stats.update(_chosen_lines(clf))
    stats["training seconds"] = f"{clf.timings_['train_s']:.2f}"
    if rep is not None:
        stats["waiting for test hashing seconds"] = f"{rep['timings']['wait_test_hash_s']:.2f}"
        stats["test eval seconds"] = f"{rep['timings']['eval_s']:.2f}"
        if "epoch_eval_s" in rep["timings"]:
            stats["test eval after each epoch seconds (in training)"] = (
                f"{rep['timings']['epoch_eval_s']:.2f}"
            )
    stats.update(
        {
            "total seconds": f"{job['total_s']:.2f}",
            "save seconds": f"{job['save_s']:.2f}",
            "saved": output,
        }
    )
    if plot_path is not None:
        stats["plot"] = plot_path
    return stats


def _chosen_lines(clf) -> dict:
    """The summary's lines of what the fit chose: eta0, the data's defaults, the search,
    early stopping, the calibration."""
    stats: dict = {}
    if hasattr(clf, "eta0_"):
        stats["eta0 (auto)"] = clf.eta0_
    for name in clf.data_defaulted():
        stats[f"{name} (from the data)"] = clf.setting(name)
    if "auto_" in clf.__dict__:
        from nbsvm.models.auto import describe

        stats["auto"] = (
            f"{describe(clf.auto_['changed'])} ({clf.auto_['split']}, "
            f"{clf.auto_['trainings']} trainings, search "
            f"{clf.auto_['seconds']:.1f} s of {clf.auto_['budget']:g} s)"
        )
        stats["reproduce"] = reproduce_command(clf)
    if "validation_" in clf.__dict__:
        v = clf.validation_
        stats["early stopping"] = (
            f"kept epoch {v['best_epoch']} of {v['epochs_run']} run, "
            f"validation accuracy {100 * v['accuracy']:.2f}% on "
            f"{v['held_out']:,} held-out documents"
        )
    if "calibration_report_" in clf.__dict__:
        stats["calibration"] = calibration_line(
            {"method": clf.calibrate, **clf.calibration_report_}
        )
    return stats


def calibration_line(event: dict) -> str:
    """What a calibration measured, in one line."""
    after = (
        "too few documents to measure after"
        if event["ece_after"] is None
        else f"{event['ece_after']:.4f} after (two-fold)"
    )
    return (
        f"{event['method']} calibration on {event['held_out']:,} held-out documents: "
        f"expected calibration error {event['ece_before']:.4f} before, {after}, "
        f"{event['seconds']:.2f} s"
    ) + (f"\nnote: {event['note']}" if event.get("note") else "")


def _json_summary(clf, job: dict, output: str) -> dict:
    """``--json`` without a test set: the training summary."""
    out = {
        "documents": int(clf.n_docs_),
        "classes": list(clf.class_names_),
        "class_counts": [n.item() for n in clf.class_counts_],
        "timings": dict(clf.timings_, total_s=job["total_s"], save_s=job["save_s"]),
        "saved": output,
    }
    if hasattr(clf, "eta0_"):
        out["eta0"] = clf.eta0_
    if "calibration_report_" in clf.__dict__:
        out["calibration"] = {"method": clf.calibrate, **clf.calibration_report_}
    if "validation_" in clf.__dict__:
        out["validation"] = clf.validation_
    if clf.data_defaulted():
        out["data_defaults"] = {k: clf.setting(k) for k in clf.data_defaulted()}
    if "auto_" in clf.__dict__:
        out["auto"] = clf.auto_
    if job["feature_cache"] is not None:
        out["feature_cache"] = job["feature_cache"]
    if job["resumed_after_epoch"] is not None:
        out["resumed_after_epoch"] = job["resumed_after_epoch"]
    return out


def reproduce_command(clf: NBSVMClassifier) -> str:
    """The ``nbsvm train`` options that train this --auto model without the search (``...``:
    the inputs and reading options as given)."""
    plain = type(clf)()
    skip = ("auto", "time_budget", "auto_metric", "cache_dir")
    params = {k: v for k, v in clf.get_params().items() if k not in skip and v != getattr(plain, k)}
    return "nbsvm train ... " + shlex.join(train_flags(params))
