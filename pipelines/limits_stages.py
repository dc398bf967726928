"""The measuring helpers of :mod:`limits` (medians, halves side by side, a stage's row)
and its training stages: an epoch and the whole training of ``nbsvm train`` beside the bare
AdaGrad kernel over the same rows, and scoring beside the rows' dot products."""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from limits_kernels import _dots

from nbsvm import NBSVMClassifier
from nbsvm.data.batches import hash_batches
from nbsvm.io.document import Document
from nbsvm.learners.kernels.table import _adagrad_epoch


def median_seconds(fn, runs: int) -> float:
    fn()  # warm-up: compile or load the kernels, fill the caches
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def halves(fn, n: int, threads: int):
    """``fn(lo, hi)`` over ``threads`` contiguous parts of ``range(n)``, side by side."""
    if threads == 1:
        return lambda: fn(0, n)
    cuts = np.linspace(0, n, threads + 1).astype(int)
    pool = ThreadPoolExecutor(threads)
    return lambda: list(pool.map(fn, cuts[:-1], cuts[1:]))


def row(stage, bound_name, nbsvm_name, size, bound, nbsvm, runs, threads) -> dict:
    b, n = median_seconds(bound, runs), median_seconds(nbsvm, runs)
    return {
        "stage": stage,
        "threads": threads,
        "bound": bound_name,
        "bound MB/s": size / 2**20 / b,
        "nbsvm": nbsvm_name,
        "nbsvm MB/s": size / 2**20 / n,
        "fraction of bound": b / n,
        "seconds": n,
    }


def training_epoch(docs: list[Document], threads: int, runs: int):
    """The model of a default fit (10 epochs) and the median seconds of its epochs after
    the first and before the last, each timed from the end of the one before (the progress
    events), over ``runs`` fits after one that warms the kernels and caches. The first
    epoch also translates the cache's buckets to columns and the last runs beside the
    n-gram map of ``explain``: the whole training's seconds (median) come with it."""
    middle, whole = [], []
    for run in range(1 + runs):
        ends: dict = {}

        def ended(event, ends=ends):
            if event.get("stage") == "epoch" and event.get("total") is not None:
                if event["docs"] >= event["total"]:
                    ends[event["epoch"]] = time.perf_counter()

        clf = NBSVMClassifier(threads=threads).fit_documents(iter(docs), callback=ended)
        if run:
            last = max(ends)
            middle += [ends[k] - ends[k - 1] for k in sorted(ends) if 1 < k < last]
            whole.append(clf.timings_["train_s"])
    return clf, statistics.median(middle), statistics.median(whole)


def training_rows(
    docs: list[Document], work: Path, runs: int
) -> tuple[list[dict], NBSVMClassifier]:
    """Epochs and scoring over the rows nbsvm's epochs stream: the hashed documents in the
    columns its lexicon keeps (the bound reads the same ids and the same state width)."""
    one_thread = training_epoch(docs, 1, runs)
    clf = one_thread[0]
    batches = list(hash_batches(iter(docs), clf.hasher_, remap=clf.column_of_))
    (whole,) = hash_batches(iter(docs), clf.hasher_, batch_docs=len(docs), remap=clf.column_of_)
    cols, offsets = whole.ids.astype(np.int32), whole.offsets
    y = np.where(np.array([d.label for d in docs]) == "pos", 1.0, -1.0)
    S = np.array(clf.linear_.S_[0], dtype=np.float32)  # ratios, weights, AdaGrad sums
    order = np.random.default_rng(0).permutation(len(docs)).astype(np.int64)
    nnz = cols.size * 4  # bytes of the column ids one epoch reads
    rows = []
    for threads in (1, 2):
        bound = _bound_epoch(cols, offsets, y, S, order, threads, runs)
        clf, per_epoch, training_s = (
            one_thread if threads == 1 else training_epoch(docs, threads, runs)
        )
        per_epoch *= cols.size / clf.timings_["cache_ngrams"]  # per the same n-grams
        rows += _epoch_rows(threads, nnz, bound, per_epoch, training_s, clf.setting("epochs"))
    out = np.empty(len(docs))
    rows.append(
        row(
            "score",
            "dot products of the rows",
            "decision of hashed batches",
            nnz,
            lambda: _dots(cols, offsets, S, out),
            lambda: [clf.decision_batch(b, columns=True) for b in batches],
            runs,
            1,
        )
    )
    return rows, clf


def _bound_epoch(cols, offsets, y, S, order, threads: int, runs: int) -> float:
    """Seconds of one pass of the production AdaGrad kernel over the rows in memory
    (``threads`` halves side by side, as Hogwild! runs), median of ``runs``."""
    epoch = halves(
        lambda lo, hi: _adagrad_epoch(
            cols,
            offsets,
            y,
            np.zeros(0),
            order[lo:hi],
            S,
            np.zeros(3),
            0.02,
            1e-4,
            1.0,
            1,
            1e-8,
            False,
        ),  # fmt: skip
        len(order),
        threads,
    )
    return median_seconds(epoch, runs)


def _epoch_rows(threads, nnz, bound, per_epoch, training_s, epochs) -> list[dict]:
    """The epoch's row and the whole training's, beside ``bound`` seconds an epoch."""
    return [
        {
            "stage": "epoch",
            "threads": threads,
            "bound": "AdaGrad kernel over the kept columns in memory",
            "bound MB/s": nnz / 2**20 / bound,
            "nbsvm": "training epoch after the first, before the last (cache reads, replay)",
            "nbsvm MB/s": nnz / 2**20 / per_epoch,
            "fraction of bound": bound / per_epoch,
            "seconds": per_epoch,
        },
        {
            "stage": "training",
            "threads": threads,
            "bound": f"{epochs} epochs of that kernel",
            "bound MB/s": nnz / 2**20 / bound,
            "nbsvm": f"training, {epochs} epochs (the first translates the cache)",
            "nbsvm MB/s": epochs * nnz / 2**20 / training_s,
            "fraction of bound": epochs * bound / training_s,
            "seconds": training_s,
        },
    ]
