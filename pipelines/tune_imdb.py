#!/usr/bin/env python
"""`nbsvm tune` on IMDB train (a seeded 20% validation split; the test set is never seen),
then the chosen settings and the defaults trained on all of IMDB train and scored on IMDB
test; and the same grid run naively (each candidate reads and hashes its training part
again, as separate `nbsvm train` + `nbsvm eval` runs would), for the time it costs.

    .venv/bin/python pipelines/tune_imdb.py [--naive/--no-naive]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nbsvm import NBSVMClassifier  # noqa: E402
from nbsvm.config import DEFAULT_GRID  # noqa: E402
from nbsvm.evaluation.evaluate import evaluate_documents  # noqa: E402
from nbsvm.io.folders import read_aclimdb  # noqa: E402
from nbsvm.io.labeled_lines import read_lines  # noqa: E402
from nbsvm.workflows.tune import candidates, model_params, reference_of, tune  # noqa: E402
from pipelines._report import ROOT, start, write_results  # noqa: E402


def naive(train_file: Path, valid_file: Path, grid: dict, seed: int) -> tuple[float, list]:
    """Each candidate as its own train + eval run: read, hash, train, evaluate."""
    t0 = time.perf_counter()
    accs = []
    for c in candidates(grid):
        clf = NBSVMClassifier(**dict(model_params(c), seed=seed)).fit_documents(read_lines(train_file))
        accs.append(evaluate_documents(clf, read_lines(valid_file))["accuracy"])
    return time.perf_counter() - t0, accs


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--valid", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--naive", action=argparse.BooleanOptionalAction, default=True)
    args = ap.parse_args(argv)
    return args


def test_rows(result, data: Path, seed: int) -> list[dict]:
    """The chosen, the best and the default settings trained on IMDB train and scored on
    IMDB test (each distinct setting once)."""
    rows, scored = [], {}
    for name, params in (
        ("chosen by nbsvm tune (1-SE rule)", result.chosen),
        ("best validation accuracy", result.best),
        ("defaults", {}),
    ):
        key = (
            str(sorted(dict(params).items()))
            if params != reference_of(DEFAULT_GRID, {})
            else "defaults"
        )
        if key not in scored:
            clf = NBSVMClassifier(**dict(model_params(params), seed=seed)).fit_documents(
                read_aclimdb(data / "train")
            )
            scored[key] = evaluate_documents(clf, read_aclimdb(data / "test"))["accuracy"]
        acc = scored[key]
        rows.append(
            {
                "model": name,
                "settings": str(params or "defaults"),
                "test accuracy %": round(100 * acc, 2),
            }
        )
        print(f"{name}: test accuracy {100 * acc:.2f}%", flush=True)

    return rows


def naive_timing(args, data: Path) -> dict:
    """The grid run naively, one training and evaluation per candidate, on tune's split."""
    # the same split as tune's, written out so that each naive run reads it from disk
    held = []
    rng = np.random.default_rng(args.seed)
    docs = list(read_aclimdb(data / "train"))
    for start_ in range(0, len(docs), 512):
        held.extend((rng.random(len(docs[start_ : start_ + 512])) < args.valid).tolist())
    with tempfile.TemporaryDirectory() as tmp:
        train_file, valid_file = Path(tmp) / "train.txt", Path(tmp) / "valid.txt"
        with open(train_file, "w") as ft, open(valid_file, "w") as fv:
            for d, h in zip(docs, held):
                (fv if h else ft).write(f"{d.label}\t{' '.join(d.text.split())}\n")
        seconds, accs = naive(train_file, valid_file, DEFAULT_GRID, args.seed)
    row = {
        "grid run": "naive (one train + eval per candidate)",
        "candidates": len(accs),
        "trainings": len(accs),
        "seconds": round(seconds, 1),
    }
    print(f"naive: {seconds:.1f} s", flush=True)
    return row


def main(argv=None):
    args = parse_args(argv)
    config = start(
        "tune_imdb", dict(vars(args), grid=DEFAULT_GRID), [__file__, *(argv or sys.argv[1:])]
    )
    data = Path(args.data)

    result = tune(
        read_aclimdb(data / "train"),
        DEFAULT_GRID,
        {"seed": args.seed},
        valid_fraction=args.valid,
        seed=args.seed,
    )
    print(
        f"tune: {len(result.table)} candidates, {result.n_trainings} trainings, "
        f"{result.seconds:.1f} s; best {result.best}",
        flush=True,
    )

    print(f"chosen: {result.chosen} ({result.reason})", flush=True)
    rows = test_rows(result, data, args.seed)
    timing = [
        {
            "grid run": "nbsvm tune (hash once, beta free)",
            "candidates": len(result.table),
            "trainings": result.n_trainings,
            "seconds": round(result.seconds, 1),
        }
    ]
    if args.naive:
        timing.append(naive_timing(args, data))
    timing = pd.DataFrame(timing)
    if args.naive:
        timing["time / naive"] = (timing.seconds / timing.seconds.iloc[-1]).round(2)
    table = result.table.copy()
    table["accuracy"] = (100 * table["accuracy"]).round(2)
    write_results(
        "tune_imdb",
        pd.DataFrame(rows),
        title="nbsvm tune on IMDB train (validation split), then IMDB test",
        notes=[
            f"Grid: {DEFAULT_GRID} ({len(result.table)} candidates); "
            f"{result.split} of IMDB train, seed {args.seed}. The test set is "
            f"used only for the two final rows.",
            f"Best on validation: {result.best}. Chosen: {result.chosen}: {result.reason}.",
        ],
        extra_tables={"Grid time": timing, "Validation ranking": table},
        config=config,
    )


if __name__ == "__main__":
    main()
