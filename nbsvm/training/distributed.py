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
import logging
import glob
import os
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.learners.reduction import NBReduction

EPOCH_ATTEMPTS = 3          # an epoch broken by a lost worker is started again this often


def _dask():
    try:
        import distributed
    except ImportError:
        raise NBSVMError("distributed runs need Dask: pip install 'nbsvm[dask]'") from None
    return distributed


@contextlib.contextmanager
def client_for(scheduler: str | None = None, local_workers: int | None = None):
    """A ``distributed.Client``: of the scheduler at ``scheduler``, or of a ``LocalCluster``
    of ``local_workers`` worker processes (one thread each), closed afterwards."""
    distributed = _dask()
    if scheduler and local_workers:
        raise NBSVMError("give either --scheduler or --dask-local, not both")
    if scheduler:
        with distributed.Client(scheduler, timeout="30s") as client:
            yield client
        return
    if not (isinstance(local_workers, int) and local_workers >= 1):
        raise NBSVMError(f"--dask-local needs a number of workers >= 1, got {local_workers!r}")
    with distributed.LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def shards_of(inputs: Iterable[str]) -> list[str]:
    """Expand globs (local paths; URLs with a scheme are passed on for the workers' fsspec)."""
    out = []
    for pattern in inputs:
        if "://" in pattern:
            out.append(pattern)
            continue
        found = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
        if not found:
            raise NBSVMError("no input matches", path=pattern)
        out.extend(found)
    for p in out:
        if "://" not in p and not Path(p).exists():
            raise NBSVMError("no such file or folder", path=p)
    return out


# ---------------------------------------------------------------------------- on workers

def _local_copy(shard: str) -> str:
    """A URL shard (``s3://``, ``gs://``, ``file://``, anything fsspec opens) copied once to
    this worker's local folder, named by the URL and the remote size and modification time
    (so a changed object is fetched again); local paths are returned as they are."""
    if "://" not in shard:
        return shard
    import hashlib

    import fsspec
    from distributed import get_worker

    fs, path = fsspec.core.url_to_fs(shard)
    info = fs.info(path)
    stamp = f"{shard}|{info.get('size')}|{info.get('mtime') or info.get('LastModified') or info.get('ETag')}"
    folder = Path(get_worker().local_directory) / "nbsvm-downloads"
    folder.mkdir(parents=True, exist_ok=True)
    local = folder / (hashlib.sha256(stamp.encode()).hexdigest()[:24] + "-" +
                      os.path.basename(path.rstrip("/")))
    if not local.exists():
        tmp = local.with_name(local.name + f".{os.getpid()}.part")
        fs.get(path, str(tmp))
        os.replace(tmp, local)
    return str(local)


def _reader_docs(shard: str, reader: dict):
    from nbsvm.io.readers import read_inputs
    shard = _local_copy(shard)
    return read_inputs([shard], fmt=reader.get("format", "auto"), text_col=reader.get("text_col", "text"),
                       label_col=reader.get("label_col", "label"), strict=reader.get("strict", False),
                       encoding=reader.get("encoding", "utf-8"),
                       empty_label=reader.get("empty_label", False))


def _shard_cache(shard: str, reader: dict, hasher):
    """The shard's hashed cache on this worker: kept in the worker's local folder, keyed by
    the shard's identity and the settings; built from the shard when missing."""
    from distributed import get_worker

    from nbsvm.data.cachestore import KeptCache
    from nbsvm.data.features import hash_batches

    root = Path(get_worker().local_directory) / "nbsvm-shards"
    kept = KeptCache(root, [_local_copy(shard)], reader, hasher)
    cache = kept.open()
    if cache is None:
        writer = kept.writer()
        with writer:
            for batch in hash_batches(_reader_docs(shard, reader), hasher):
                writer.add(batch)
            cache = writer.close()
    return cache


def _count_shard(shard: str, reader: dict, hasher_settings: dict) -> dict:
    """Binarized bucket counts of one shard: ``{label: (docs, buckets, counts)}``."""
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.text.hashing import Hasher

    hasher = Hasher(**hasher_settings)
    cache = _shard_cache(shard, reader, hasher)
    lex = NBLexicon(hasher)
    for label in cache.labels:          # codes as the cache's (first appearance)
        lex.code_of(label)
    for batch in cache.batches(8192):
        lex.add_batch(batch.ids, batch.offsets, np.asarray(batch.labels, dtype=np.int32))
    return lex.label_counts() if cache.n_docs else {}


def _merge_counts(a: dict, b: dict) -> dict:
    """Sum two sparse count dicts (a node of the tree reduction)."""
    out = dict(a)
    for label, (n, idx, cnt) in b.items():
        if label not in out:
            out[label] = (n, idx, cnt)
            continue
        n0, idx0, cnt0 = out[label]
        both = np.concatenate([idx0, idx])
        keys, inverse = np.unique(both, return_inverse=True)
        total = np.bincount(inverse, weights=np.concatenate([cnt0, cnt])).astype(np.int64)
        out[label] = (n0 + n, keys.astype(np.int32), total)
    return out


def _shard_targets(cache, classes: list, multilabel: bool, shard: str):
    """Each output's positive class as a code of the shard's cache (a membership matrix
    of its label-set keys for multi-label models)."""
    from nbsvm.io.labels import membership

    if multilabel:              # every label of the keys is in the lexicon's classes
        return membership(classes, list(cache.labels))
    unknown = [label for label in cache.labels if label not in classes]
    if unknown:
        raise NBSVMError(f"label {unknown[0]!r} is not among the lexicon's classes {classes}",
                         path=shard)
    code = {label: i for i, label in enumerate(cache.labels)}
    return [code.get(classes[k], -1) for k in
            ([1] if len(classes) == 2 else range(len(classes)))]


def _epoch_on_shard(shard: str, index: int, reader: dict, hasher_settings: dict,
                    classes: list, multilabel: bool, remap, linear, backend, seed: int,
                    epoch: int):
    """One epoch over one shard, by the trainer's own epoch driver
    (:class:`~nbsvm.training.epochs.Epochs`), from the broadcast learner (its values and weights;
    ``backend``: the backend learners passed from the shard before). Returns the learner
    (the built-in one's arrays, its SGD scale folded; or the backend), the shard's
    documents and its loss sum."""
    import copy

    from nbsvm.training.epochs import Epochs
    from nbsvm.text.hashing import Hasher

    cache = _shard_cache(shard, reader, Hasher(**hasher_settings))
    positive = _shard_targets(cache, classes, multilabel, shard)
    # a worker shares broadcast objects between its tasks: train a copy
    linear = copy.deepcopy(linear) if backend is None else linear
    backend = copy.deepcopy(backend)
    events = [{"loss": 0.0, "docs": 0}]
    run = Epochs(linear, backend, epoch, lambda event: events.append(event))
    rng = np.random.default_rng([seed, epoch, index])
    run.replay(cache, positive, rng, epoch,
               cache.translated_groups(remap, rng, rewrite=False))
    loss_sum = events[-1]["loss"] * events[-1]["docs"]
    if backend is not None:
        return backend, cache.n_docs, loss_sum
    linear.coef()                       # fold the SGD scale: averaging needs plain weights
    return (linear.S_, linear.state_), cache.n_docs, loss_sum


def _calibrate_on_shard(shard: str, reader: dict, hasher_settings: dict, classes: list,
                        multilabel: bool, remap, linear, seed: int) -> float:
    """Bottou's eta0 for ``linear`` on a seeded sample of one shard
    (:mod:`nbsvm.learners.calibration`, as a single machine calibrates on its whole cache)."""
    from nbsvm.learners.calibration import calibrate_eta0, calibration_sample
    from nbsvm.text.hashing import Hasher

    cache = _shard_cache(shard, reader, Hasher(**hasher_settings))
    positive = _shard_targets(cache, classes, multilabel, shard)
    return calibrate_eta0(linear, calibration_sample(cache, positive, remap, seed))


def _predict_shard(shard: str, reader: dict, model_path: str, labeled: bool):
    from nbsvm.evaluation.evaluate import evaluate_documents, label_set_parts, predict_documents
    from nbsvm.io.readers import read_inputs
    from nbsvm.io.labels import known_labels

    clf = _cached_model(model_path)
    if labeled and clf.multilabel:      # sums, merged on the driver
        return label_set_parts(clf, _reader_docs(shard, dict(reader, empty_label=True)))
    if labeled:
        return evaluate_documents(clf, _reader_docs(shard, reader))
    import pandas as pd
    docs = read_inputs([_local_copy(shard)], fmt=reader.get("format", "auto"), labeled=False,
                       text_col=reader.get("text_col", "text"),
                       label_col=reader.get("label_col", "label"),
                       strict=reader.get("strict", False),
                       known_labels=known_labels(clf.classes_, clf.multilabel),
                       encoding=reader.get("encoding", "utf-8"))
    frames = list(predict_documents(clf, docs))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


_MODELS: dict = {}


def _cached_model(path: str):
    """A worker loads each model file once (keyed by path, size and mtime)."""
    from nbsvm.models.nbsvm import NBSVMClassifier

    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _MODELS:
        _MODELS.clear()
        _MODELS[key] = NBSVMClassifier.load(path)
    return _MODELS[key]


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
            raise NBSVMError(f"{what} failed on shard {shard}: {type(exc).__name__}: {exc} "
                             f"(nothing of this step was kept)") from None
    return client.gather(futures)


def _tree_reduce(client, futures, merge):
    while len(futures) > 1:
        nxt = [client.submit(merge, futures[i], futures[i + 1], pure=False)
               for i in range(0, len(futures) - 1, 2)]
        if len(futures) % 2:
            nxt.append(futures[-1])
        futures = nxt
    return futures[0]


def lexicon(client, shards: list[str], hasher, alpha: float = 1.0, reader: dict | None = None):
    """The NB lexicon of ``shards``, counted on the workers (see the module docstring)."""
    from nbsvm.lexicon.nblexicon import NBLexicon

    reader = dict(reader or {})
    futures = []
    for shard in shards:
        f = client.submit(_count_shard, shard, reader, hasher.settings(), pure=False)
        f._nbsvm_shard = shard
        futures.append(f)
    _gather(client, futures, "counting")
    merged = _tree_reduce(client, futures, _merge_counts).result()
    return NBLexicon.from_label_counts(hasher, alpha, merged)


def fit(client, shards: list[str], clf, reader: dict | None = None, lexicon_=None,
        callback: Callable[[dict], None] | None = None):
    """Train ``clf`` (an unfitted :class:`~nbsvm.NBSVMClassifier`) on ``shards``; returns
    ``clf`` fitted (no n-gram map for explanations).

    The built-in learner trains by iterative parameter mixing (every shard's epoch in
    parallel, then averaged). A backend learner (``clf.learner``) is passed from shard to
    shard instead, each epoch visiting the shards in order on their workers: exact
    sequential training over the shards (its parts cannot be averaged: Pegasos keeps a
    scaled vector, PA and MIRA running averages), with the hashing and the caches still
    spread over the workers."""
    notify = callback or (lambda event: None)
    reader = dict(reader or {})
    hasher = clf.validate()
    if clf.multilabel:          # the shards' lexicons count label sets; an empty one is none
        reader["empty_label"] = True
    t0 = time.perf_counter()
    lex = lexicon_ if lexicon_ is not None else lexicon(client, shards, hasher, clf.alpha, reader)
    if lex.hasher != hasher:
        raise NBSVMError(f"the lexicon was built with {lex.hasher.settings()} but the model "
                         f"asks for {hasher.settings()}")
    clf.forget()
    clf.start_from_lexicon(lex)
    notify({"stage": "lexicon done", "docs": int(lex.class_counts_.sum())})
    timings = {"lexicon_s": time.perf_counter() - t0}
    if clf.learner is not None:
        clf.backend_ = NBReduction(clf.learner, clf.linear_.n_outputs, clf.linear_.n_features,
                                   clf.lam, clf.seed)
    elif clf.setting("eta0") == "auto":     # Bottou's calibration on the first shard
        clf.eta0_ = clf.linear_.eta0 = client.submit(
            _calibrate_on_shard, shards[0], reader, hasher.settings(), list(clf.classes_),
            clf.multilabel, clf.column_of_, clf.linear_, clf.seed, pure=False).result()
        notify({"stage": "eta0", "eta0": clf.eta0_, "docs": 0})
    shared = {"remap": None}
    epochs = clf.setting("epochs")
    for epoch in range(1, epochs + 1):
        for attempt in range(1, EPOCH_ATTEMPTS + 1):
            try:
                if shared["remap"] is None:
                    shared["remap"] = client.scatter(clf.column_of_, hash=False)
                args = (reader, hasher.settings(), list(clf.classes_), clf.multilabel,
                        shared["remap"])
                n, loss_sum = (_passing_epoch if clf.learner else _mixing_epoch)(
                    client, shards, clf, args, epoch)
                break
            except NBSVMError:
                raise
            except Exception as e:       # a worker lost while broadcasting or gathering
                if attempt == EPOCH_ATTEMPTS:
                    raise NBSVMError(f"epoch {epoch} failed {attempt} times "
                                     f"({type(e).__name__}: {e}); nothing of it was kept and "
                                     f"no model was written") from None
                notify({"stage": "retry", "epoch": epoch, "docs": 0, "error": str(e)})
                shared["remap"] = None   # its copies may have gone with the worker
                client.wait_for_workers(1, timeout=60)
        notify({"stage": "epoch", "epoch": epoch, "epochs": epochs, "docs": n, "total": n,
                "loss": loss_sum / n})
    clf.n_docs_ = int(lex.class_counts_.sum())
    clf.mean_abs_coef_ = clf.linear_.mean_abs_coef()
    clf.ngram_map_ = {}
    timings["train_s"] = time.perf_counter() - t0 - timings["lexicon_s"]
    clf.timings_ = timings
    return clf


def _mixing_epoch(client, shards, clf, args, epoch) -> tuple[int, float]:
    """Every shard's epoch in parallel from the same weights, then their average."""
    linear = client.scatter(clf.linear_, hash=False)
    futures = []
    for i, shard in enumerate(shards):
        f = client.submit(_epoch_on_shard, shard, i, *args, linear, None, clf.seed, epoch,
                          pure=False)
        f._nbsvm_shard = shard
        futures.append(f)
    results = _gather(client, futures, f"epoch {epoch}")
    n = np.array([r[1] for r in results], dtype=np.float64)
    _mix(clf.linear_, [r[0] for r in results], n / n.sum())
    return int(n.sum()), sum(r[2] for r in results)


def _passing_epoch(client, shards, clf, args, epoch) -> tuple[int, float]:
    """The backend learner passed from shard to shard; kept only once every shard is done."""
    linear = client.scatter(clf.linear_, hash=False)     # the values; not trained
    backend, n, loss_sum = clf.backend_, 0, 0.0
    for i, shard in enumerate(shards):
        f = client.submit(_epoch_on_shard, shard, i, *args, linear, backend, clf.seed, epoch,
                          pure=False)
        f._nbsvm_shard = shard
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
    futures = []
    for shard in shards:
        f = client.submit(fn, shard, *args, pure=False)
        f._nbsvm_shard = shard
        futures.append(f)
    return _gather(client, futures, what)


def predict(client, shards: list[str], model_path: str, reader: dict | None = None):
    """One DataFrame of predictions per shard, in shard order."""
    return _map_shards(client, _predict_shard, shards, dict(reader or {}), str(model_path),
                       False, what="predicting")


def evaluate(client, shards: list[str], model_path: str, reader: dict | None = None) -> dict:
    """Metrics over all shards (confusion matrices summed, log loss averaged by documents)."""
    from nbsvm.evaluation.evaluate import label_set_report
    from nbsvm.evaluation.metrics import report

    reps = _map_shards(client, _predict_shard, shards, dict(reader or {}), str(model_path),
                       True, what="evaluating")
    if "sums" in reps[0]:                       # a multi-label model's sums
        return label_set_report(_cached_model(str(model_path)), reps)
    cm = sum(np.asarray(r["confusion_matrix"], dtype=np.int64) for r in reps)
    log_loss_sum = None
    if all("log_loss" in r for r in reps):
        log_loss_sum = sum(r["log_loss"] * r["n_docs"] for r in reps)
    return report(cm, reps[0]["classes"], log_loss_sum)
