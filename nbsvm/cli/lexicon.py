"""``nbsvm lexicon``: one streaming pass that builds and saves the NB lexicon."""

from __future__ import annotations

import json
import time
from typing import cast

import typer

from nbsvm.cli import app
from nbsvm.cli.common import check_outputs, cli_errors, documents, parse_char_ngrams, text_columns
from nbsvm.cli.options import (
    CHAR_NGRAMS,
    DASK_LOCAL,
    ENCODING,
    FORMAT,
    INPUTS,
    JSON,
    KEEP_CASE,
    LABEL_COL,
    LABEL_SEP,
    LONG_WORDS,
    NFKC,
    QUIET,
    SCHEDULER,
    SPLIT_SCRIPTS,
    STRICT,
    TEXT_COL,
)
from nbsvm.cli.progress import ProgressReporter
from nbsvm.cli.reports import echo_kv
from nbsvm.config import DEFAULTS
from nbsvm.io.decoding import check_encoding
from nbsvm.lexicon.build import build_lexicon
from nbsvm.text.hashing import Hasher


@app.command("lexicon")
def lexicon_command(
    inputs: list[str] = INPUTS,
    output: str = typer.Option(..., "--output", "-o", help="Lexicon file to write (.npz)."),
    ngrams: int = typer.Option(DEFAULTS["ngrams"], "--ngrams", help="Word n-grams of orders 1..N."),
    n_bits: int = typer.Option(DEFAULTS["n_bits"], "--n-bits", help="2**N hash buckets (1..31)."),
    char_ngrams: str = CHAR_NGRAMS,
    keep_case: bool = KEEP_CASE,
    split_scripts: bool = SPLIT_SCRIPTS,
    nfkc: bool = NFKC,
    long_words: int = LONG_WORDS,
    hash_seed: int = typer.Option(DEFAULTS["hash_seed"], "--hash-seed", help="MurmurHash3 seed."),
    alpha: float = typer.Option(DEFAULTS["alpha"], "--alpha", help="NB smoothing."),
    fmt: str = FORMAT,
    text_col: list[str] = TEXT_COL,
    label_col: str = LABEL_COL,
    quiet: bool = QUIET,
    json_out: bool = JSON,
    strict: bool = STRICT,
    encoding: str = ENCODING,
    label_sep: str = LABEL_SEP,
    scheduler: str | None = SCHEDULER,
    dask_local: int | None = DASK_LOCAL,
) -> None:
    """Count binarized hashed n-grams per class and save the NB log-count-ratio lexicon."""
    with cli_errors():
        text_col = text_columns(text_col, label_col)
        check_outputs(reads={"an input": inputs}, output=output)
        char_min, n_chars = parse_char_ngrams(char_ngrams, allow_auto=False)
        hasher = Hasher(
            ngrams=ngrams,
            n_bits=n_bits,
            char_ngrams=cast(int, n_chars),  # an int: 'auto' was refused
            seed=hash_seed,
            char_min=char_min,
            lowercase=not keep_case,
            split_scripts=split_scripts,
            nfkc=nfkc,
            long_words=long_words,
        )
        t0 = time.perf_counter()
        if scheduler or dask_local:
            reader = {"format": fmt, "text_col": text_col, "label_col": label_col, "strict": strict}
            if check_encoding(encoding) != "utf-8":
                reader["encoding"] = encoding
            if label_sep != "\t":
                reader["label_sep"] = label_sep
            lex = _count_on_dask(inputs, hasher, alpha, reader, scheduler, dask_local)
            docs = None
        else:
            docs = documents(
                inputs,
                fmt,
                text_col,
                label_col,
                strict=strict,
                encoding=encoding,
                label_sep=label_sep,
            )
            with ProgressReporter(quiet or json_out) as progress:
                lex = build_lexicon(docs, hasher, alpha, callback=progress)
        elapsed = time.perf_counter() - t0
        lex.save(output)
        if json_out:
            summary = _json_summary(lex, hasher, alpha, docs, elapsed, output)
            typer.echo(json.dumps(summary, indent=2))
            return
        echo_kv(
            {
                "documents": int(lex.class_counts_.sum()),
                "classes": ", ".join(f"{c} ({n})" for c, n in zip(lex.classes_, lex.class_counts_)),
                "buckets seen": f"{lex.n_seen_:,} of {1 << n_bits:,}",
                "lexicon seconds": f"{elapsed:.2f}",
                "saved": output,
            }
        )


def _count_on_dask(inputs, hasher, alpha: float, reader: dict, scheduler, dask_local):
    """``--scheduler / --dask-local``: the lexicon, counted by the workers' shards."""
    from nbsvm.workflows import distributed

    with distributed.client_for(scheduler, dask_local) as client:
        return distributed.lexicon(client, distributed.shards_of(inputs), hasher, alpha, reader)


def _json_summary(lex, hasher, alpha: float, docs, elapsed: float, output: str) -> dict:
    """``--json``: what was counted, with which settings, and where it is saved."""
    return {
        "documents": int(lex.class_counts_.sum()),
        "classes": {c: int(n) for c, n in zip(lex.classes_, lex.class_counts_)},
        "buckets_seen": lex.n_seen_,
        "n_buckets": 1 << hasher.n_bits,
        "hasher": hasher.settings(),
        "alpha": alpha,
        "text_bytes": docs.bytes_read if docs is not None else None,
        "seconds": elapsed,
        "saved": output,
    }
