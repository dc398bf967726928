"""``nbsvm lexicon``: one streaming pass that builds and saves the NB lexicon."""
from __future__ import annotations

import time
from typing import List

import typer

from ..config import DEFAULTS
from ..lexicon import build_lexicon
from ..text.hashing import Hasher
from . import app
from .common import (FORMAT, INPUTS, LABEL_COL, QUIET, STRICT, TEXT_COL, ProgressReporter,
                     cli_errors, documents, echo_kv)


@app.command("lexicon")
def lexicon_command(
    inputs: List[str] = INPUTS,
    output: str = typer.Option(..., "--output", "-o", help="Lexicon file to write (.npz)."),
    ngrams: int = typer.Option(DEFAULTS["ngrams"], "--ngrams", help="Word n-grams of orders 1..N."),
    n_bits: int = typer.Option(DEFAULTS["n_bits"], "--n-bits", help="2**N hash buckets (1..31)."),
    char_ngrams: int = typer.Option(DEFAULTS["char_ngrams"], "--char-ngrams",
                                    help="Character n-grams of this length (0: none)."),
    hash_seed: int = typer.Option(DEFAULTS["hash_seed"], "--hash-seed", help="MurmurHash3 seed."),
    alpha: float = typer.Option(DEFAULTS["alpha"], "--alpha", help="NB smoothing."),
    fmt: str = FORMAT, text_col: str = TEXT_COL, label_col: str = LABEL_COL, quiet: bool = QUIET,
    strict: bool = STRICT,
):
    """Count binarized hashed n-grams per class and save the NB log-count-ratio lexicon."""
    with cli_errors():
        hasher = Hasher(ngrams=ngrams, n_bits=n_bits, char_ngrams=char_ngrams, seed=hash_seed)
        t0 = time.perf_counter()
        with ProgressReporter(quiet) as progress:
            lex = build_lexicon(documents(inputs, fmt, text_col, label_col, strict=strict),
                                hasher, alpha,
                                callback=progress)
        elapsed = time.perf_counter() - t0
        lex.save(output)
        echo_kv({"documents": int(lex.class_counts_.sum()),
                 "classes": ", ".join(f"{c} ({n})" for c, n in zip(lex.classes_, lex.class_counts_)),
                 "buckets seen": f"{lex.n_seen_:,} of {1 << n_bits:,}",
                 "lexicon seconds": f"{elapsed:.2f}", "saved": output})
