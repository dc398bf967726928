"""Scale-out on Dask: distributed lexicon, iterative parameter mixing, distributed predict.

Inputs are shards (files, globs or any fsspec URL the workers can read); each worker streams
its own shards. Dask is the optional ``dask`` extra (``pip install 'nbsvm[dask]'``); without
it a single machine works as before.

- **Lexicon** (:func:`lexicon`): each shard's binarized bucket counts per class are counted
  on a worker and returned sparse (buckets seen, counts); the counts are summed in a tree
  reduction on the workers and the ratios computed once on the driver. The counts equal the
  single-machine lexicon's exactly, whatever the partitioning. Counting a shard also writes
  its hashed cache on that worker (keyed like ``--keep-cache``), so training never hashes
  again where it can avoid it.
- **Training** (:func:`fit`): iterative parameter mixing (McDonald, Hall & Mann 2010), as
  Vowpal Wabbit averages on clusters: the driver broadcasts the weights, each worker runs
  one epoch of the same SGD/AdaGrad learner over its shard (a seeded shuffle of its cache),
  and the weights, AdaGrad sums and learner state come back and are averaged, weighted by
  shard size. A shard whose worker dies is recomputed by Dask on another worker (from the
  shard file); the average is formed only once every shard of the epoch has returned, so a
  half-averaged model is never kept, and an epoch that cannot finish fails the run with the
  shard named.
- **Predict / eval** (:func:`predict`, :func:`evaluate`): map over shards; predictions come
  back as one pandas DataFrame per shard, metrics are summed.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.errors import Diverged, NBSVMError
from nbsvm.io.document import missing_input
from nbsvm.models import history
from nbsvm.models.columns import start_from_lexicon
from nbsvm.models.fitting import data_defaults_event, label_set_classes_event, refuse_diverged
from nbsvm.models.learner_setup import new_backend
from nbsvm.models.modes import mode_of_named
from nbsvm.workflows import dask_worker as worker

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client

    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.document import Document
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.text.hashing import Hasher

EPOCH_ATTEMPTS = 3  # an epoch broken by a lost worker is started again this often


def _dask():
    try:
        import distributed
    except ImportError:
        raise NBSVMError("distributed runs need Dask: pip install 'nbsvm[dask]'") from None
    return distributed


@contextlib.contextmanager
def client_for(scheduler: str | None = None, local_workers: int | None = None) -> Iterator[Client]:
    """A ``distributed.Client``: of the scheduler at ``scheduler``, or of a ``LocalCluster``
    of ``local_workers`` worker processes (one thread each), closed afterwards."""
    distributed = _dask()
    if scheduler and local_workers:
        raise NBSVMError("give either --scheduler or --dask-local, not both")
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout="30s")
        except (ValueError, TypeError) as e:  # an address it cannot parse
            raise NBSVMError(
                f"--scheduler {scheduler!r} is not a scheduler address ({e}): give one such "
                "as tcp://host:8786"
            ) from None
        with client:
            yield client
        return
    if not (isinstance(local_workers, int) and local_workers >= 1):
        raise NBSVMError(f"--dask-local needs a number of workers >= 1, got {local_workers!r}")
    with (
        distributed.LocalCluster(
            n_workers=local_workers,
            threads_per_worker=1,
            processes=True,
            # no dashboard wanted, but distributed starts its HTTP server anyway: on a free
            # port (its default 8787 in use, by a notebook's cluster say, printed a warning)
            dashboard_address=":0",
            # a shard's error reaches the driver, which names it in one line (_gather): the
            # workers' "Compute Failed" log with its traceback would come first otherwise
            silence_logs=logging.CRITICAL,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


class Shard(str):
    """A shard's path as the workers open it, absolute (a worker's folder is not the
    driver's: a relative path read the worker's file of that name, a wrong model without
    a word); ``shown``: as the user wrote it, for the predictions' source column."""

    shown: str

    def __reduce__(self):  # to the workers as a plain path
        return (str, (str(self),))


def _shard(path: str) -> Shard:
    shard = Shard(path if "://" in path else os.path.abspath(path))
    shard.shown = path
    return shard


def shards_of(inputs: Iterable[str]) -> list[str]:
    """Expand globs (local paths, made absolute: :class:`Shard`; URLs with a scheme are
    passed on for the workers' fsspec)."""
    out = []
    for pattern in inputs:
        if pattern == "-":
            raise NBSVMError(
                "standard input cannot be read on Dask: the workers read shards, give files "
                "(or URLs) every worker sees"
            )
        if "://" in pattern:
            out.append(pattern)
            continue
        found = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
        if not found:
            raise NBSVMError("no input matches", path=pattern)
        out.extend(found)
    for p in out:
        if "://" not in p and not Path(p).exists():
            raise missing_input(p)
    return [_shard(p) for p in out]


def on_workers(path: str) -> str:
    """A local file (a model) as the workers open it: absolute, as :class:`Shard`."""
    return str(path) if "://" in str(path) else os.path.abspath(path)


# ----------------------------------------------------------------------------- on the driver


def _gather(client, futures, what: str):
    """Results of ``futures``; a failure names the shard and says nothing was kept."""
    from distributed import wait

    wait(futures)
    for f in futures:
        if f.status == "error":
            exc = f.exception()
            shard = getattr(f, "_nbsvm_shard", "?")
            if isinstance(exc, NBSVMError):
                raise exc
            raise NBSVMError(
                f"{what} failed on shard {shard}: {type(exc).__name__}: {exc} "
                f"(nothing of this step was kept)"
            ) from None
    return client.gather(futures)


def _tree_reduce(client, futures, merge):
    while len(futures) > 1:
        nxt = [
            client.submit(merge, futures[i], futures[i + 1], pure=False)
            for i in range(0, len(futures) - 1, 2)
        ]
        if len(futures) % 2:
            nxt.append(futures[-1])
        futures = nxt
    return futures[0]


def _on_shard(client, shard: str, fn, *args) -> Any:
    """The future of ``fn(*args)`` on a worker, tagged with ``shard``: a failure names it
    (:func:`_gather`)."""
    f: Any = client.submit(fn, *args, pure=False)
    f._nbsvm_shard = shard
    return f


def _one(client, what: str, shard: str, fn, *args):
    """``fn(*args)`` on a worker; a failure names ``shard`` (:func:`_gather`)."""
    return _gather(client, [_on_shard(client, shard, fn, *args)], what)[0]


def first_documents(client: Client, shards: list[str], reader: dict) -> list[Document]:
    """The corpus's first documents (what one machine's peek reads), read on a worker:
    URL shards are fetched there."""
    return _one(client, "reading", shards[0], worker.first_documents, shards, reader)


def lexicon(
    client: Client,
    shards: list[str],
    hasher: Hasher,
    alpha: float | None = 1.0,
    reader: dict | None = None,
    stats: ReadStats | None = None,
) -> NBLexicon:
    """The NB lexicon of ``shards``, counted on the workers (see the module docstring);
    what reading the shards met is added to ``stats``."""
    from nbsvm.lexicon.nblexicon import NBLexicon

    reader = dict(reader or {})
    settings = hasher.settings()
    futures = [_on_shard(client, s, worker.count_shard, s, reader, settings) for s in shards]
    _gather(client, futures, "counting")
    notes = client.gather([client.submit(worker.notes_of, f) for f in futures])
    _add_notes(stats, notes, shards)
    counts = [client.submit(worker.counts_of, f) for f in futures]
    merged = _tree_reduce(client, counts, worker.merge_counts).result()
    lex = NBLexicon.from_label_counts(hasher, alpha, merged)
    # what train --lexicon reads its data defaults from, as one machine's lexicon records
    lex.corpus_ = _corpus(client, shards, reader, hasher)
    return lex


def fit(
    client: Client,
    shards: list[str],
    clf: NBSVMClassifier,
    reader: dict | None = None,
    lexicon_: NBLexicon | None = None,
    callback: Callable[[dict], None] | None = None,
    stats: ReadStats | None = None,
) -> NBSVMClassifier:
    """Train ``clf`` (an unfitted :class:`~nbsvm.NBSVMClassifier`) on ``shards``; returns
    ``clf`` fitted (no n-gram map for explanations). ``callback`` gets one machine's
    events (progress, the data defaults, label sets read as classes); what reading the
    shards met is added to ``stats``.

    The built-in learner trains by iterative parameter mixing (every shard's epoch in
    parallel, then averaged). A backend learner (``clf.backend_learner``) is passed from shard to
    shard instead, each epoch visiting the shards in order on their workers: exact
    sequential training over the shards (its parts cannot be averaged: Pegasos keeps a
    scaled vector, PA and MIRA running averages), with the hashing and the caches still
    spread over the workers."""
    notify = callback or (lambda event: None)
    reader = dict(reader or {})
    clf.validate()  # the settings, before anything is read
    _refuse_one_machine_modes(clf)
    if clf.multilabel:  # the shards' lexicons count label sets; an empty one is none
        reader["empty_label"] = True
    # char_ngrams left to the data: the first documents decide, as on one machine
    head = []
    if clf.char_ngrams is None and lexicon_ is None:
        head = first_documents(client, shards, reader)
    clf.read_text_defaults(head, lexicon_)
    hasher = clf.validate()
    t0 = time.perf_counter()
    if lexicon_ is None:  # (the ratios take clf.setting("alpha"), not the lexicon's)
        lexicon_ = lexicon(client, shards, hasher, clf.alpha, reader, stats)
    lex = lexicon_
    if lex.hasher != hasher:
        raise NBSVMError(
            f"the lexicon was built with {lex.hasher.settings()} but the model "
            f"asks for {hasher.settings()}"
        )
    clf.forget()
    # min_df, eta0, norm as one machine's (counted with the lexicon, else now)
    clf.corpus_ = lex.corpus_ or _corpus(client, shards, reader, hasher)
    start_from_lexicon(clf, lex)
    notify(data_defaults_event(clf))
    sets = label_set_classes_event(clf)  # (as one machine's run says it)
    if sets is not None:
        notify(sets)
    notify({"stage": "lexicon done", "docs": lex.n_docs_})
    timings = {"lexicon_s": time.perf_counter() - t0}
    _start_learner(client, shards, clf, reader, notify)
    epochs = clf.setting("epochs")
    shared: dict = {"remap": None}
    n = 0
    for epoch in range(1, epochs + 1):
        try:
            n, loss_sum = _epoch_with_retries(client, shards, clf, reader, shared, epoch, notify)
        except Diverged:  # a backend learner's, on a worker: said as one machine says it
            refuse_diverged(clf, epoch, math.inf)
            raise
        notify(
            {
                "stage": "epoch",
                "epoch": epoch,
                "epochs": epochs,
                "docs": n,
                "total": n,
                "loss": loss_sum / n,
            }
        )
        refuse_diverged(clf, epoch, loss_sum / n if n else 0.0)
    clf.n_docs_, clf.weight_sum_ = n, float(n)  # every document weighs 1 on Dask
    clf.mean_abs_coef_ = clf.linear_.mean_abs_coef()
    clf.ngram_map_ = {}
    timings["train_s"] = time.perf_counter() - t0 - timings["lexicon_s"]
    clf.timings_ = timings
    history.record(clf, "fit", n)  # as one machine's fit: the model file's history
    return clf


def _refuse_one_machine_modes(clf: NBSVMClassifier) -> None:
    """Settings that read or hold out the data on one machine are refused (calibrate='auto'
    is not asked for: a model trained on Dask stays uncalibrated)."""
    asked = [
        name
        for name in ("auto", "calibrate", "keep_counts", "early_stopping")
        if mode_of_named(clf, name)
    ]
    if clf.threshold == "auto":  # tuned on held-out training documents, read again
        asked.append("threshold='auto'")
    if asked:
        raise NBSVMError(f"{', '.join(asked)} cannot run on Dask: train on one machine")


def _corpus(client, shards: list[str], reader: dict, hasher: Hasher) -> dict:
    """The corpus statistics the data defaults read (:func:`~nbsvm.data.cache.corpus_of`),
    summed over the shards' cached rows."""
    from nbsvm.data.cache import corpus_of

    parts = _map_shards(
        client, worker.shard_lengths, shards, reader, hasher.settings(), what="corpus statistics"
    )
    return corpus_of(sum(h for h, _ in parts), sum(n for _, n in parts))


def _shard_rows(clf, reader: dict) -> dict:
    """How every worker reads a shard's rows (:func:`nbsvm.workflows.dask_worker.shard_rows`)."""
    return {
        "reader": reader,
        "hasher": clf.hasher_.settings(),
        "classes": list(clf.class_names_),
        "multilabel": clf.multilabel,
    }


def _start_learner(client, shards, clf, reader: dict, notify) -> None:
    """A backend learner's reduction, or the built-in learner's step size calibrated on the
    first shard (``eta0='auto'``)."""
    if clf.backend_learner is not None:
        clf.backend_ = new_backend(clf)
    elif clf.setting("eta0") == "auto":  # Bottou's calibration on the first shard
        # the map and the learner scattered, not put in the task's graph (2**24 buckets'
        # map: 64 MB, which distributed warned of, "Sending large graph")
        remap, linear = (client.scatter(a, hash=False) for a in (clf.column_of_, clf.linear_))
        clf.eta0_ = clf.linear_.eta0 = _one(
            client,
            "calibrating eta0",
            shards[0],
            worker.calibrate_on_shard,
            shards[0],
            _shard_rows(clf, reader),
            remap,
            linear,
            clf.seed,
        )
        notify({"stage": "eta0", "eta0": clf.eta0_, "docs": 0})


def _epoch_with_retries(client, shards, clf, reader: dict, shared: dict, epoch: int, notify):
    """One epoch over the shards, started again (up to :data:`EPOCH_ATTEMPTS` times) when a
    worker is lost while it broadcasts or gathers; ``shared["remap"]``: the scattered
    bucket -> column map. Returns ``(documents, summed loss)``."""
    for attempt in range(1, EPOCH_ATTEMPTS + 1):
        try:
            if shared["remap"] is None:
                shared["remap"] = client.scatter(clf.column_of_, hash=False)
            args = (_shard_rows(clf, reader), shared["remap"])
            return (_passing_epoch if clf.backend_learner else _mixing_epoch)(
                client, shards, clf, args, epoch
            )
        except NBSVMError:
            raise
        except Exception as e:  # a worker lost while broadcasting or gathering
            if attempt == EPOCH_ATTEMPTS:
                raise NBSVMError(
                    f"epoch {epoch} failed {attempt} times "
                    f"({type(e).__name__}: {e}); nothing of it was kept and "
                    f"no model was written"
                ) from None
            notify({"stage": "retry", "epoch": epoch, "docs": 0, "error": str(e)})
            shared["remap"] = None  # its copies may have gone with the worker
            client.wait_for_workers(1, timeout=60)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _mixing_epoch(client, shards, clf, args, epoch) -> tuple[int, float]:
    """Every shard's epoch in parallel from the same weights, then their average."""
    linear = client.scatter(clf.linear_, hash=False)
    futures = [
        _on_shard(client, s, worker.epoch_on_shard, s, i, *args, linear, None, clf.seed, epoch)
        for i, s in enumerate(shards)
    ]
    results = _gather(client, futures, f"epoch {epoch}")
    n = np.array([r[1] for r in results], dtype=np.float64)
    _mix(clf.linear_, [r[0] for r in results], n / n.sum())
    return int(n.sum()), sum(r[2] for r in results)


def _passing_epoch(client, shards, clf, args, epoch) -> tuple[int, float]:
    """The backend learner passed from shard to shard; kept only once every shard is done."""
    linear = client.scatter(clf.linear_, hash=False)  # the values; not trained
    backend, n, loss_sum = clf.backend_, 0, 0.0
    for i, shard in enumerate(shards):
        f = _on_shard(
            client, shard, worker.epoch_on_shard, shard, i, *args, linear, backend, clf.seed, epoch
        )
        backend, docs, loss = _gather(client, [f], f"epoch {epoch}")[0]
        n, loss_sum = n + docs, loss_sum + loss
    clf.backend_ = backend
    return n, loss_sum


def _mix(learner, results, w) -> None:
    """Average the shards' learners (``(S, state)`` each) into ``learner`` (in place):
    weights, AdaGrad sums and learner state, weighted by shard size ``w`` (every shard's SGD
    scale is folded to 1).

    Tried and not kept: averaging each weight by how much each shard moved it (the growth of
    its AdaGrad sum, as Vowpal Wabbit's adaptive allreduce does) followed serial training
    more closely on a 2,000-review slice but was 1 point less accurate than plain averaging.
    """
    mixed = sum(wi * S[:, :, 1:].astype(np.float64) for wi, (S, _) in zip(w, results))
    learner.S_[:, :, 1:] = mixed.astype(learner.S_.dtype)
    learner.state_[...] = sum(wi * state for wi, (_, state) in zip(w, results))


def _map_shards(client, fn, shards: list[str], *args, what: str):
    """``fn(shard, *args)`` for every shard on the workers; results in shard order."""
    return _gather(client, [_on_shard(client, s, fn, s, *args) for s in shards], what)


def predict(
    client: Client,
    shards: list[str],
    model_path: str,
    reader: dict | None = None,
    stats: ReadStats | None = None,
) -> list[pd.DataFrame]:
    """One DataFrame of predictions per shard, in shard order; what reading met (invalid
    bytes replaced, notes) added to ``stats`` as one machine's run counts it."""
    frames = _predict_shards(client, shards, model_path, reader, False, stats)
    for shard, frame in zip(shards, frames):  # the source as the user named it
        if getattr(shard, "shown", shard) != shard and "source" in frame:
            frame["source"] = [as_written(s, [shard]) for s in frame["source"]]
    return frames


def _predict_shards(
    client: Client,
    shards: list[str],
    model_path: str,
    reader: dict | None,
    report: bool,
    stats: ReadStats | None,
) -> list:
    """``worker.predict_shard`` on every shard: predictions, or (``report``) the sums a
    report is made of; each shard's reading counts and notes go to ``stats``."""
    what = "evaluating" if report else "predicting"
    args = (dict(reader or {}), on_workers(model_path), report)
    results = _map_shards(client, worker.predict_shard, shards, *args, what=what)
    _add_notes(stats, [read for _, read in results], shards)
    return [part for part, _ in results]


def _add_notes(stats: ReadStats | None, reads: list[dict], shards: list[str]) -> None:
    """The shards' reading counts and notes (:func:`~nbsvm.workflows.dask_worker.
    reading_notes`) added to ``stats``, as one machine's reading counts them (and names
    the files: :func:`as_written`)."""
    if stats is None:
        return
    for read in reads:
        stats.add(read["replaced_bytes"], read["replaced_docs"])
        for sentence in read["notes"]:
            stats.note(as_written(sentence, shards))


def as_written(text: str, shards: list[str]) -> str:
    """``text`` with each shard's absolute path (:class:`Shard`: what the workers open and
    name) put back as the user wrote it: a file's own name, or a folder's at the start of
    the paths of its documents."""
    for shard in shards:
        shown = getattr(shard, "shown", shard)
        if shown != shard:
            text = text.replace(str(shard), shown)
    return text


def evaluate(
    client: Client,
    shards: list[str],
    model_path: str,
    reader: dict | None = None,
    stats: ReadStats | None = None,
) -> dict:
    """The report of one machine's ``eval`` over all shards: each shard's counts,
    histograms and exact sums merged (unseen labels by name); reading counts and notes
    added to ``stats``."""
    from nbsvm.evaluation.evaluate import report_of_parts

    parts = _predict_shards(client, shards, model_path, reader, True, stats)
    return report_of_parts(worker.cached_model(on_workers(model_path)), parts)
