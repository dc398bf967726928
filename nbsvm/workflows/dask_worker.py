"""What Dask's workers run for :mod:`nbsvm.workflows.distributed`: a shard copied locally and
read, its hashed cache kept in the worker's folder, its counts, one epoch of the learner over
it, its eta0 calibration, and prediction with a model file loaded once per worker. Each
function takes and returns plain data, so the driver submits it by name."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    import pandas as pd

    from nbsvm.data.cache import FeatureCache
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.document import Document
    from nbsvm.learners.reduction import NBReduction
    from nbsvm.learners.sgd import LinearSGD
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.text.hashing import Hasher


#: what fsspec's stores tell of an object's content: size and times, the local store's
#: change time and inode, S3's ETag, Google's generation and checksums
IDENTITY_FIELDS = (
    "size",
    "mtime",
    "created",
    "ino",
    "LastModified",
    "ETag",
    "etag",
    "generation",
    "md5Hash",
    "crc32c",
)


def local_copy(shard: str) -> str:
    """A URL shard (``s3://``, ``gs://``, ``file://``, anything fsspec opens) copied once to
    this worker's local folder, named by the URL and what the store tells of its content
    (:data:`IDENTITY_FIELDS`: a changed object is fetched again); local paths are returned as they are."""
    if "://" not in shard:
        return shard
    import hashlib

    import fsspec
    from distributed import get_worker

    fs, path = fsspec.core.url_to_fs(shard)
    info = fs.info(path)
    # every field of the object's identity the store gives: a time alone (S3's is to the
    # second; a file:// rewritten with its mtime put back) kept serving the old download
    stamp = "|".join([shard, *(f"{k}={info.get(k)}" for k in IDENTITY_FIELDS if k in info)])
    folder = Path(get_worker().local_directory) / "nbsvm-downloads"
    folder.mkdir(parents=True, exist_ok=True)
    local = folder / (
        hashlib.sha256(stamp.encode()).hexdigest()[:24] + "-" + os.path.basename(path.rstrip("/"))
    )
    if not local.exists():
        tmp = local.with_name(local.name + f".{os.getpid()}.part")
        fs.get(path, str(tmp))
        os.replace(tmp, local)
    return str(local)


def reader_docs(shard: str, reader: dict, stats: ReadStats | None = None) -> Iterator[Document]:
    """The shard's documents as ``reader`` says; what reading met goes to ``stats`` (a
    malformed line's error names no --skip-bad-lines: Dask's runs have none)."""
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.readers import read_inputs

    if stats is None:
        stats = ReadStats(encoding=reader.get("encoding", "utf-8"), hint=False)
    shard = local_copy(shard)
    return read_inputs(
        [shard],
        stats=stats,
        fmt=reader.get("format", "auto"),
        text_col=reader.get("text_col", "text"),
        label_col=reader.get("label_col", "label"),
        strict=reader.get("strict", False),
        encoding=reader.get("encoding", "utf-8"),
        empty_label=reader.get("empty_label", False),
        label_sep=reader.get("label_sep", "\t"),
        # set for multi-label tasks (empty_label) and lexicons (several_labels)
        several_labels=reader.get("several_labels", reader.get("empty_label", False)),
    )


def first_documents(shards: list[str], reader: dict) -> list[Document]:
    """The corpus's first :data:`~nbsvm.config.PEEK_DOCS` documents, from the shards in
    order (what the peek of one machine's run reads); on a worker, which fetches URLs."""
    import itertools

    from nbsvm.config import PEEK_DOCS

    head: list[Document] = []
    for shard in shards:
        head += itertools.islice(reader_docs(shard, reader), PEEK_DOCS - len(head))
        if len(head) >= PEEK_DOCS:
            break
    return head


def shard_cache(
    shard: str, reader: dict, hasher: Hasher, stats: ReadStats | None = None
) -> FeatureCache:
    """The shard's hashed cache on this worker: kept in the worker's local folder, keyed by
    the shard's identity and the settings; built from the shard when missing (what that
    reading met goes to ``stats``)."""
    from distributed import get_worker

    from nbsvm.data.batches import hash_batches
    from nbsvm.data.cachestore import KeptCache

    root = Path(get_worker().local_directory) / "nbsvm-shards"
    kept = KeptCache(root, [local_copy(shard)], reader, hasher)
    cache = kept.open()
    if cache is None:
        writer = kept.writer()
        with writer:
            for batch in hash_batches(reader_docs(shard, reader, stats), hasher):
                writer.add(batch)
            cache = writer.close()
    return cache


def count_shard(shard: str, reader: dict, hasher_settings: dict) -> tuple[dict, dict]:
    """Binarized bucket counts of one shard, ``{label: (docs, buckets, counts)}``, and what
    reading it met (:func:`reading_notes`; nothing where its cache was kept from a run
    before, which reported it)."""
    from nbsvm.io.decoding import ReadStats
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.text.hashing import Hasher

    hasher = Hasher(**hasher_settings)
    stats = ReadStats(encoding=reader.get("encoding", "utf-8"), hint=False)
    cache = shard_cache(shard, reader, hasher, stats)
    lex = NBLexicon(hasher)
    for label in cache.labels:  # codes as the cache's (first appearance)
        lex.code_of(label)
    for batch in cache.batches(8192):
        lex.add_batch(batch.ids, batch.offsets, np.asarray(batch.labels, dtype=np.int32))
    return (lex.label_counts() if cache.n_docs else {}), reading_notes(stats)


def counts_of(counted: tuple[dict, dict]) -> dict:
    """:func:`count_shard`'s counts (what the tree reduction merges)."""
    return counted[0]


def notes_of(counted: tuple[dict, dict]) -> dict:
    """:func:`count_shard`'s reading notes."""
    return counted[1]


def shard_lengths(shard: str, reader: dict, hasher_settings: dict) -> tuple[np.ndarray, int]:
    """The shard's :func:`~nbsvm.data.cache.length_histogram` and n-gram occurrences (its
    cache is kept from the counting pass): summed, the corpus the data defaults read."""
    from nbsvm.data.cache import length_histogram
    from nbsvm.text.hashing import Hasher

    cache = shard_cache(shard, reader, Hasher(**hasher_settings))
    return length_histogram(cache), int(cache.n_ids)


def merge_counts(a: dict, b: dict) -> dict:
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


def shard_targets(
    cache: FeatureCache, classes: list, multilabel: bool, shard: str
) -> np.ndarray | list[int]:
    """Each output's positive class as a code of the shard's cache (a membership matrix
    of its label-set keys for multi-label models)."""
    from nbsvm.io.labels import label_set, membership

    if multilabel:  # a label the lexicon lacks was dropped from its documents' sets
        labels = {label for key in cache.labels for label in label_set(key)}
        unknown = sorted(labels - set(classes))
    else:
        unknown = [label for label in cache.labels if label not in classes]
    if unknown:
        raise NBSVMError(
            f"label {unknown[0]!r} is not among the lexicon's classes {classes}", path=shard
        )
    if multilabel:
        return membership(classes, list(cache.labels))
    code = {label: i for i, label in enumerate(cache.labels)}
    return [code.get(classes[k], -1) for k in ([1] if len(classes) == 2 else range(len(classes)))]


def shard_rows(shard: str, rows: dict) -> tuple[FeatureCache, np.ndarray | list[int]]:
    """The shard's cache and each output's targets in it. ``rows``: how the driver reads
    every shard (``reader``, ``hasher`` settings, the lexicon's ``classes``,
    ``multilabel``)."""
    from nbsvm.text.hashing import Hasher

    cache = shard_cache(shard, rows["reader"], Hasher(**rows["hasher"]))
    return cache, shard_targets(cache, rows["classes"], rows["multilabel"], shard)


def epoch_on_shard(
    shard: str,
    index: int,
    rows: dict,
    remap: np.ndarray,
    linear: LinearSGD,
    backend: NBReduction | None,
    seed: int,
    epoch: int,
) -> tuple[NBReduction | tuple[np.ndarray, np.ndarray], int, float]:
    """One epoch over one shard, by the trainer's own epoch driver
    (:class:`~nbsvm.learners.epochs.Epochs`), from the broadcast learner (its values and weights;
    ``backend``: the backend learners passed from the shard before). Returns the learner
    (the built-in one's arrays, its SGD scale folded; or the backend), the shard's
    documents and its loss sum."""
    import copy

    from nbsvm.learners.epochs import Epochs

    cache, positive = shard_rows(shard, rows)
    # a worker shares broadcast objects between its tasks: train a copy
    linear = copy.deepcopy(linear) if backend is None else linear
    backend = copy.deepcopy(backend)
    events = [{"loss": 0.0, "docs": 0}]
    run = Epochs(linear, backend, epoch, lambda event: events.append(event))
    rng = np.random.default_rng([seed, epoch, index])
    run.replay(cache, positive, rng, epoch, cache.translated_groups(remap, rng, rewrite=False))
    loss_sum = events[-1]["loss"] * events[-1]["docs"]
    if backend is not None:
        return backend, cache.n_docs, loss_sum
    linear.coef()  # fold the SGD scale: averaging needs plain weights
    return (linear.S_, linear.state_), cache.n_docs, loss_sum


def calibrate_on_shard(
    shard: str, rows: dict, remap: np.ndarray, linear: LinearSGD, seed: int
) -> float:
    """Bottou's eta0 for ``linear`` on a seeded sample of one shard
    (:mod:`nbsvm.learners.eta0`, as a single machine calibrates on its whole cache)."""
    from nbsvm.learners.eta0 import calibrate_eta0, calibration_sample

    cache, positive = shard_rows(shard, rows)
    return calibrate_eta0(linear, calibration_sample(cache, positive, remap, seed))


def predict_shard(
    shard: str, reader: dict, model_path: str, labeled: bool
) -> tuple[dict | pd.DataFrame, dict]:
    """The shard's predictions (or, ``labeled``, the counts and sums of its report) and
    what reading it met (:func:`reading_notes`), for the driver to report as one machine's
    run does."""
    from nbsvm.io.decoding import ReadStats

    stats = ReadStats(encoding=reader.get("encoding", "utf-8"), hint=False)  # (no skipping)
    return _predict_shard(shard, reader, model_path, labeled, stats), reading_notes(stats)


def reading_notes(stats: ReadStats) -> dict:
    """A shard's reading counts and notes, as plain values sent to the driver."""
    return {
        "replaced_bytes": stats.replaced_bytes,
        "replaced_docs": stats.replaced_docs,
        "notes": list(stats.notes),
    }


def _predict_shard(
    shard: str, reader: dict, model_path: str, labeled: bool, stats: ReadStats
) -> dict | pd.DataFrame:
    from nbsvm.evaluation.evaluate import evaluation_parts
    from nbsvm.evaluation.predict import predict_documents
    from nbsvm.io.labels import known_labels
    from nbsvm.io.readers import read_inputs

    clf = cached_model(model_path)
    if labeled:  # counts and sums, merged on the driver
        read = dict(reader, empty_label=True) if clf.multilabel else reader
        return evaluation_parts(clf, reader_docs(shard, read, stats))
    import pandas as pd

    local = local_copy(shard)
    docs = read_inputs(
        [local],
        fmt=reader.get("format", "auto"),
        labeled=False,
        text_col=reader.get("text_col", "text"),
        label_col=reader.get("label_col", "label"),
        strict=reader.get("strict", False),
        known_labels=known_labels(clf.class_names_, clf.multilabel),
        empty_label=clf.multilabel,  # '<TAB>text': an empty label set, as one machine reads it
        encoding=reader.get("encoding", "utf-8"),
        label_sep=reader.get("label_sep", "\t"),
        stats=stats,
    )
    frames = list(predict_documents(clf, docs, reader.get("top_k"), reader.get("threshold")))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if local != shard and "source" in out:  # the URL, not this worker's download
        out["source"] = out["source"].replace(local, shard)
    return out


MODELS: dict = {}


def cached_model(path: str) -> NBSVMClassifier:
    """A worker loads each model file once (keyed by path, size, mtime, and the inode's
    number and change time: a model replaced with its size and mtime put back, as cp -p
    or rsync -a do, kept predicting with the old one)."""
    from nbsvm.models.nbsvm import NBSVMClassifier

    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if key not in MODELS:
        MODELS.clear()
        MODELS[key] = NBSVMClassifier.load(path)
    return MODELS[key]
