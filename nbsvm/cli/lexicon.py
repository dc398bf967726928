"""``nbsvm lexicon``: one streaming pass that builds and saves the NB lexicon."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import (
    Dask,
    Hashing,
    Reading,
    cli_errors,
    err_console,
    escape,
    files_given_again,
    prepare_reading,
    read_stats,
    refuse_missing_inputs,
    refuse_model_name,
)
from nbsvm.cli.options import (
    ALPHA_HELP,
    CHAR_NGRAMS_TRAIN,
    DASK,
    HASHING,
    INPUTS,
    JSON,
    QUIET,
    READING,
    WEIGHT_COL,
    dask_options,
    hashing_options,
    reading_options,
)
from nbsvm.cli.progress import ProgressReporter
from nbsvm.cli.reports import class_counts_line, echo_kv
from nbsvm.config import DEFAULTS, MAX_NGRAMS
from nbsvm.errors import NBSVMError
from nbsvm.workflows import compile_ahead

if TYPE_CHECKING:
    from nbsvm.text.hashing import Hasher


@app.command("lexicon")
@reading_options()
@hashing_options(CHAR_NGRAMS_TRAIN)
@dask_options()
def lexicon_command(
    inputs: list[str] = INPUTS,
    output: str = typer.Option(..., "--output", "-o", help="Lexicon file to write (.npz)."),
    ngrams: int = typer.Option(
        DEFAULTS["ngrams"], "--ngrams", min=1, max=MAX_NGRAMS, help="Word n-grams of orders 1..N."
    ),
    hashing: Hashing = HASHING,
    alpha: float | None = typer.Option(None, "--alpha", help=ALPHA_HELP),
    reading: Reading = READING,
    quiet: bool = QUIET,
    json_out: bool = JSON,
    dask: Dask = DASK,
    weight_col: str | None = WEIGHT_COL,
    multilabel: bool = typer.Option(
        False,
        "--multilabel",
        help="Each document has a set of labels (a,b), as train --multilabel reads them: "
        "an empty label is the empty set (a negative of every label), counted too.",
    ),
) -> None:
    """Count binarized hashed n-grams per class and save the NB log-count-ratio lexicon."""
    with cli_errors():
        reading = prepare_reading(reading, {"an input": inputs}, output=output)
        refuse_model_name(output, "a lexicon")
        for first, _, _ in files_given_again(inputs):
            say = f"{escape(first)} is given twice: its documents are counted twice"
            err_console.print(f"warning: {say}", highlight=False, soft_wrap=True)
        settings = dict(hashing.settings(), ngrams=ngrams)  # char_ngrams None: auto
        t0 = time.perf_counter()
        if dask and weight_col:
            raise NBSVMError("--weight-col is not available with --scheduler / --dask-local")
        if dask:
            # (--multilabel: a corpus's label sets are counted as they are, for train
            # --multilabel; without, several labels are a malformed line, as train reads)
            reader = reading.reader(
                several_labels=multilabel, **({"empty_label": True} if multilabel else {})
            )
            stats = read_stats(encoding=reading.encoding, hint=False)
            lex, docs = _count_on_dask(inputs, settings, alpha, reader, dask, stats), None
        else:
            refuse_missing_inputs(inputs)  # before the second process starts
            # its counts: --json; label sets (--multilabel) as the reader above
            docs = reading.documents(
                inputs,
                weight_col=weight_col,
                several_labels=multilabel,
                empty_label=multilabel,
                hint=False,
            )
            lex = _count_here(settings, alpha, docs, quiet or json_out)
        elapsed = time.perf_counter() - t0
        if len(lex.classes_) < 2:  # a train --lexicon of it could only fail, later
            raise NBSVMError(
                f"the documents hold one class ({', '.join(lex.classes_)}): NB ratios compare "
                "classes; count the lexicon on data with two or more"
            )
        weightless = [c for c, n in zip(lex.classes_, lex.class_counts_) if not n > 0]
        if weightless and not multilabel:  # (so could this: label sets add up in train)
            raise NBSVMError(
                f"class {weightless[0]!r} has only documents of weight 0 (--weight-col): a "
                "train --lexicon of it could only fail; every class needs a document of "
                "weight > 0"
            )
        lex.save(output)
        if json_out:
            summary = _json_summary(lex, lex.hasher, lex.smoothing(), docs, elapsed, output)
            typer.echo(json.dumps(summary, indent=2))
            return
        _report(lex, settings["char_ngrams"] is None, elapsed, output)


def _count_here(settings: dict, alpha: float | None, docs, silent: bool):
    """The lexicon of ``docs``, counted on this machine."""
    from nbsvm.lexicon.build import build_lexicon

    # a first run: the other core compiles the kernels of the training that follows
    compile_ahead.start(dict(settings, alpha=alpha))
    hasher, peeked = _hasher(settings, docs)  # the peeked documents, then the rest
    with ProgressReporter(silent) as progress:
        return build_lexicon(peeked, hasher, alpha, callback=progress)


def _report(lex, char_auto: bool, elapsed: float, output: str) -> None:
    """What was counted and saved, one line each."""
    hasher = lex.hasher
    echo_kv(
        {
            "documents": f"{lex.n_docs_:,}",
            **({"weight": f"{lex.class_counts_.sum():g}"} if lex.weighted else {}),
            "classes": class_counts_line(
                [c or "(no label)" for c in lex.classes_], lex.class_counts_
            ),
            "buckets seen": f"{lex.n_seen_:,} of {1 << hasher.n_bits:,}",
            **({"char_ngrams (from the data)": hasher.char_ngrams} if char_auto else {}),
            "lexicon seconds": f"{elapsed:.2f}",
            "saved": output,
        }
    )


def _hasher(settings: dict, docs: Any) -> tuple[Hasher, Any]:
    """The hasher of the settings, and the documents to read on; ``char_ngrams`` None
    (auto) decided as ``nbsvm train`` decides it, from the first documents
    (:meth:`NBSVMClassifier.read_text_defaults <nbsvm.NBSVMClassifier.read_text_defaults>`):
    then ``train --lexicon`` hashes as ``train`` would (short texts: character 4-grams)."""
    from nbsvm.models.nbsvm import NBSVMClassifier

    probe = NBSVMClassifier(**settings)
    docs = probe.read_text_defaults(docs)
    return probe.validate(), docs


def _count_on_dask(inputs, settings: dict, alpha: float | None, reader: dict, dask, stats):
    """``--scheduler / --dask-local``: the lexicon, counted by the workers' shards (auto
    character n-grams read from the first documents, on a worker); what reading met goes
    to ``stats``."""
    from nbsvm.workflows import distributed

    with dask.client() as client:
        shards = distributed.shards_of(inputs)
        auto = settings["char_ngrams"] is None
        head = distributed.first_documents(client, shards, reader) if auto else []
        return distributed.lexicon(client, shards, _hasher(settings, head)[0], alpha, reader, stats)


def _json_summary(lex, hasher, alpha: float, docs, elapsed: float, output: str) -> dict:
    """``--json``: what was counted, with which settings, and where it is saved."""
    return {
        "documents": lex.n_docs_,
        "weight": lex.class_counts_.sum().item() if lex.weighted else None,
        "classes": {c: n.item() for c, n in zip(lex.classes_, lex.class_counts_)},
        "buckets_seen": lex.n_seen_,
        "n_buckets": 1 << hasher.n_bits,
        "hasher": hasher.settings(),
        "alpha": alpha,
        "text_bytes": docs.bytes_read if docs is not None else None,
        "seconds": elapsed,
        "saved": output,
    }
