#!/usr/bin/env python
"""The full RCV1-v2 CCAT task prepared as Bottou's ``sgd`` benchmark does, and the learners
of ``pipelines/rcv1.py`` trained on it out of core (``RCV1_FULL=1 make rcv1``).

Bottou's ``prep_rcv1`` (sgd-2.0, ``svm/prep_rcv1.cpp``; his README, section 3) swaps the
official LYRL2004 split to get a larger training set: the four official *test* files
(781,265 documents) become the training set and the official *training* file (23,149)
the test set. Label: +1 if the document has topic CCAT in ``rcv1-v2.topics.qrels``, else
-1. Two routes, both streamed (memory bounded by the dictionary, never by the corpus):

``tokens`` (default, what ``prep_rcv1`` does)
    From the stemmed token files ``lyrl2004_tokens_*.dat.gz`` (``.I <id>`` / ``.W`` /
    tokens): the dictionary is the terms of the official training file, numbered from 1 in
    order of first appearance, then frozen (47,152 terms); TF-IDF is recomputed with the
    document frequencies of the *new* training set, ``(1 + log tf) log(N / df)``, terms
    with ``df = 0`` dropped, every vector scaled to unit length. Three passes: dictionary,
    document frequencies, writing.
``vectors``
    From the LYRL2004 vector files ``lyrl2004_vectors_*.dat.gz`` (``<id>  idx:val ...``):
    their TF-IDF (idf of the official training set, 47,236 stems) kept, every vector scaled
    to unit length. One pass.

Differences from ``prep_rcv1``: the training file is written in the order of the official
files, not shuffled (``nbsvm learn`` shuffles every epoch in a seeded block shuffle);
documents left without any feature are skipped and counted (``prep_rcv1`` stops).

Files come from the JMLR LYRL2004 appendices (``a08-topic-qrels``, ``a12-token-files``,
``a13-vector-files`` under ``https://jmlr.org/papers/volume5/lewis04a/``, with the old
``www.ai.mit.edu`` address as a fallback), or from a local folder with ``--source``.

    python pipelines/rcv1_full.py [--kind tokens|vectors] [--source DIR] [--out data/rcv1_full]
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
from _harness import run_script, script_parser
from _report import ROOT
from rcv1_fetch import BASES, FOLDERS
from rcv1_prepare import TEST_NAME, TRAIN_NAME, max_index, prepare

# ---- training out of core ------------------------------------------------------------------------


def first_rows(path: Path, n: int, n_features: int):
    """The first ``n`` rows of an svmlight file as SparseRows and labels (eta0 calibration)."""
    from rcv1_data import rows_from_records

    from nbsvm.io.sparse import read_svmlight

    return rows_from_records(itertools.islice(read_svmlight(path, index_base=1), n), n_features)


def streamed_objective(
    model, path: Path, lam: float, loss: str, n_features: int, batch: int = 8192
) -> float:
    """Bottou's cost ``lam/2 ||w||^2 + mean loss`` over an svmlight file read in batches."""
    from rcv1_data import rows_from_records
    from rcv1_objective import signs

    from nbsvm.data.rowencoder import RowEncoder
    from nbsvm.data.rows import SparseRows
    from nbsvm.io.sparse import read_svmlight

    # a model that keeps the columns it trained on alone finds each index's among them
    columns = getattr(model, "columns_", None)
    encoder = RowEncoder("svmlight", n_features=n_features, columns=columns)
    total, n = 0.0, 0
    records = read_svmlight(path, index_base=1)
    while True:
        chunk = list(itertools.islice(records, batch))
        if not chunk:
            break
        X, y = rows_from_records(chunk, n_features)
        if columns is not None:
            X = SparseRows(*encoder.encode(chunk), model.n_features_in_)
        z = signs(y) * model.decision_function(X)
        total += float(
            (np.maximum(0.0, 1.0 - z) if loss == "hinge" else np.logaddexp(0.0, -z)).sum()
        )
        n += len(chunk)
    w = model.coef_
    return 0.5 * lam * float(w @ w) + total / max(n, 1)


def full_learners(train: Path, n_features: int, seed: int) -> list[dict]:
    """The learners of the small-data table with Bottou's epoch counts, eta0 calibrated on
    1,000 training rows as his programs do."""
    from rcv1_small import online_learners

    X, y = first_rows(train, 1000, n_features)
    return [
        dict(
            name=s["name"],
            loss=s["loss"],
            lam=s["lam"],
            epochs=s["bottou_epochs"],
            learner=s["learner"],
        )
        for s in online_learners(X, y, seed)
    ]


def train_full(spec: dict, train: Path, test: Path, n_features: int, seed: int) -> dict:
    """One learner through ``nbsvm.workflows.learn.learn_sparse`` (streamed into a binary cache,
    epochs replayed in a bounded buffer), then its objective and test error, streamed."""
    from nbsvm.evaluation.sparse import evaluate_sparse
    from nbsvm.workflows.learn import learn_sparse

    def progress(e):
        if e.get("stage") == "epoch":
            print(
                f"  {spec['name']:<20} epoch {e['epoch']:3d}/{e['epochs']}  loss "
                f"{e.get('loss', float('nan')):.5f}  {e['seconds']:.2f} s",
                flush=True,
            )

    m = learn_sparse(
        spec["learner"],
        train,
        fmt="svmlight",
        index_base=1,
        n_features=n_features,
        epochs=spec["epochs"],
        seed=seed,
        callback=progress,
    )
    seconds = sum(h["seconds"] for h in m.history_)
    objective = streamed_objective(m, train, spec["lam"], spec["loss"], n_features)
    accuracy = evaluate_sparse(m, test, fmt="svmlight")["accuracy"]
    print(
        f"  {spec['name']}: objective {objective:.6f}, test error {100 * (1 - accuracy):.3f}%",
        flush=True,
    )
    return dict(
        part="full RCV1 (out of core)",
        method=spec["name"],
        loss=spec["loss"],
        lam=spec["lam"],
        bias="none" if spec["name"].startswith("Pegasos") else "unregularized",
        setting="Bottou's epochs",
        epochs=spec["epochs"],
        train_seconds=seconds,
        objective=objective,
        gap_pct=None,
        test_error_pct=100 * (1 - accuracy),
        source="ours",
    )


def run_full(
    out: Path, seed: int = 0, kind: str = "tokens", source: Path | None = None, bases=BASES
) -> list[dict]:
    """Prepare the full data (once) and train every learner on it; tidy rows for the
    results table of ``pipelines/rcv1.py``."""
    source = source or os.environ.get("RCV1_SOURCE") or None
    out = Path(out) if Path(out).is_absolute() else ROOT / out
    print(f"== full RCV1-v2 CCAT ({kind} route) in {out}", flush=True)
    train, test = out / TRAIN_NAME, out / TEST_NAME
    if train.is_file() and test.is_file():
        n_features = max_index(train, test)
        print("  prepared files found, not converted again", flush=True)
    else:
        n_features = prepare(kind, source, out, bases)["n_features"]
    return [
        train_full(spec, train, test, n_features, seed)
        for spec in full_learners(train, n_features, seed)
    ]


def main(argv=None) -> int:
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--kind", choices=sorted(FOLDERS), default="tokens")
    ap.add_argument(
        "--source", type=Path, default=None, help="folder holding the official files (no download)"
    )
    ap.add_argument("--out", type=Path, default=Path("data") / "rcv1_full")
    ap.add_argument("--prepare-only", action="store_true")
    args = ap.parse_args(argv)
    from _report import start

    start("rcv1_full", vars(args))
    if args.prepare_only:
        prepare(args.kind, args.source, args.out)
        return 0
    for row in run_full(args.out, args.seed, args.kind, args.source):
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    run_script(main)
