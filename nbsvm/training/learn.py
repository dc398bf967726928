"""``nbsvm learn``: train a backend learner on sparse-feature files, out of core.

Inputs are svmlight/libsvm files (integer feature indices, kept as they are), Blitzer et al.'s
``processed_acl`` ``.review`` files and ``label name:value ...`` files (string feature names,
hashed: :mod:`nbsvm.data.rowencoder`). Evaluation and prediction are in
:mod:`nbsvm.evaluation.sparse`, the learner from command-line options in
:mod:`nbsvm.learners.options`.

Training streams the inputs once into a binary cache in a temporary folder (indices,
values, offsets and labels, written under temporary names), collecting the class names on
the way; then every epoch replays the cache in a seeded shuffle within a fixed memory budget
(blocks of consecutive examples in random order, gathered into a buffer and permuted there;
a full permutation whenever the cache fits the buffer) and calls
``learner.partial_fit(block, y, classes=..., order=...)``. Memory does not grow with the
corpus.

The settings needed to read the same format again are kept on the learner as scalar
attributes, which :meth:`~nbsvm.learners.base.OnlineLearner.save` writes to the model header:
``format_``, ``n_bits_`` (0: integer indices), ``hash_seed_`` and ``index_base_``.
No printing here: progress goes to a callback.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from nbsvm.config import SHUFFLE_BLOCK_BYTES, SHUFFLE_BUFFER_BYTES
from nbsvm.data.rowcache import RowCache, RowWriter
from nbsvm.data.rowencoder import (DEFAULT_N_BITS, RowEncoder, batches, file_format, is_hashed,
                                   read_rows)
from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.memory import FIXED_BYTES, check_fit_memory
from nbsvm.training.epochs import run_epoch

if TYPE_CHECKING:
    from nbsvm.training.checkpoint import Checkpoint


def learn_sparse(learner: OnlineLearner, inputs, fmt: str = "auto", n_bits: int = DEFAULT_N_BITS,
                 hash_seed: int = 0, index_base="auto", epochs: int | None = None, seed: int = 0,
                 n_features: int | None = None, cache_dir=None,
                 callback: Callable[[dict], None] | None = None,
                 buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
                 block_bytes: int = SHUFFLE_BLOCK_BYTES, max_memory=None,
                 strict: bool = False, stats=None,
                 checkpoint: "Checkpoint | None" = None,
                 encoding: str = "utf-8") -> OnlineLearner:
    """Train ``learner`` afresh on sparse files for ``epochs`` passes (default: the
    learner's own ``epochs``, else 1).

    Once the input has been read (the number of features and classes is then known), the
    learner's dense weights (``n_outputs x n_features`` float64, twice with averaging) are
    checked against ``max_memory`` and the memory available before they are allocated.

    ``callback`` receives ``{"stage": "cache", "examples": n}`` while the inputs are read and
    ``{"stage": "epoch", "epoch", "epochs", "examples", "loss", "mistakes", "seconds"}``
    after every epoch (``loss``: mean training loss before each update; ``mistakes``: count;
    either missing when the learner does not report it). ``learner.history_`` keeps them.
    Invalid UTF-8 in the inputs is replaced and counted in ``stats`` (a
    :class:`~nbsvm.io.readers.ReadStats`), or refused with ``strict``; ``encoding``: an
    ASCII-compatible codec of the feature names.

    ``checkpoint`` (:class:`~nbsvm.training.checkpoint.Checkpoint`): the learner and the
    shuffling generator are saved after every ``checkpoint.every`` epochs (event
    ``{"stage": "checkpoint", "epoch", "path"}``); with ``checkpoint.resume`` training
    continues after the saved epoch (event ``{"stage": "resumed", "epoch"}``), giving the
    model an uninterrupted run gives.
    """
    inputs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    formats, epochs = _check_settings(learner, inputs, fmt, index_base, epochs, seed)
    encoder = RowEncoder(formats[0], n_bits, hash_seed)
    settings = {"learner": type(learner).__name__, **learner.get_params(), "format": formats,
                "n_bits": n_bits, "hash_seed": hash_seed, "index_base": index_base,
                "n_features": n_features, "buffer_bytes": buffer_bytes,
                "block_bytes": block_bytes}
    folder = Path(tempfile.mkdtemp(prefix="nbsvm-learn-", dir=cache_dir))
    cache = None
    try:
        cache = _read_into_cache(folder / "rows", learner.task, inputs, formats, encoder,
                                 index_base, strict, stats, callback, encoding)
        base, shift, width = _feature_width(cache, encoder, index_base, n_features, inputs)
        classes = None if learner.task == "regression" else sorted(cache.names)
        n_outputs = 1 if learner.task in ("binary", "regression") else len(classes)
        copies = 2 if getattr(learner, "average", False) else 1
        check_fit_memory(FIXED_BYTES + n_outputs * (width + 1) * 8 * copies, max_memory,
                         what=f"{type(learner).__name__} with {n_outputs} output(s) x {width:,} "
                              "features")
        for name in [k for k in vars(learner) if k.endswith("_") and not k.startswith("__")]:
            delattr(learner, name)                              # start afresh, as fit does
        rng = np.random.default_rng(seed)
        history = _resume(learner, checkpoint, settings, epochs, rng, callback)

        def groups():
            return cache.shuffled_blocks(rng, width, shift, buffer_bytes, block_bytes)

        for epoch in range(len(history) + 1, epochs + 1):
            history.append(_epoch(learner, groups(), classes, epoch, epochs, cache.n_rows,
                                  inputs[0]))
            if callback:
                callback(dict(history[-1]))
            if learner._converged():
                break
            if checkpoint is not None and checkpoint.due(epoch, epochs):
                checkpoint.save_learner(learner, settings, epoch, rng, history)
                if callback:
                    callback({"stage": "checkpoint", "epoch": epoch, "path": str(checkpoint.path)})
    finally:
        if cache is not None:
            cache.close()
        shutil.rmtree(folder, ignore_errors=True)
    learner.history_ = history
    # what eval / predict need to read the same format again (saved in the header)
    learner.format_ = formats[0]
    learner.n_bits_ = encoder.n_bits if encoder.hashed else 0
    learner.hash_seed_ = encoder.hash_seed
    learner.index_base_ = int(base)
    learner.n_train_ = int(cache.n_rows)
    return learner


def _check_settings(learner, inputs, fmt, index_base, epochs, seed) -> tuple[list, int]:
    """The inputs' formats and the number of epochs, checked; the learner's own ``epochs``
    and ``seed`` set to the loop's (for the record)."""
    if not inputs:
        raise NBSVMError("no training input given")
    formats = [file_format(p, fmt) for p in inputs]
    if len({is_hashed(f) for f in formats}) > 1:
        raise NBSVMError("cannot mix svmlight files (integer indices) with named-feature files "
                         f"in one training set: {', '.join(map(str, inputs))}")
    if index_base not in ("auto", 0, 1):
        raise NBSVMError(f"index base must be 0, 1 or auto, got {index_base!r}")
    if epochs is None:
        epochs = int(getattr(learner, "epochs", 1) or 1)
    if int(epochs) < 1:
        raise NBSVMError(f"epochs must be >= 1, got {epochs}")
    for name, value in (("epochs", int(epochs)), ("seed", int(seed))):
        if name in learner._param_names():
            setattr(learner, name, value)
    return formats, int(epochs)


def _read_into_cache(folder, task, inputs, formats, encoder, index_base, strict, stats,
                     callback, encoding="utf-8") -> RowCache:
    """Every input, encoded, into a new row cache (one pass, batch by batch)."""
    with RowWriter(folder, task) as writer:
        for path, f in zip(inputs, formats):
            # auto index base: read as 0-based, shift later if no index 0 was seen
            reader = read_rows(path, f, labeled=True,
                               index_base=0 if index_base == "auto" else index_base,
                               strict=strict, stats=stats, encoding=encoding)
            for batch in batches(reader):
                writer.add(batch, *encoder.encode(batch))
                if callback:
                    callback({"stage": "cache", "examples": writer.n_rows})
        if writer.n_rows == 0:
            raise NBSVMError("no examples in the training input",
                             path=", ".join(map(str, inputs)))
        return writer.close()


def _feature_width(cache, encoder, index_base, n_features, inputs) -> tuple[int, int, int]:
    """``(index base, shift subtracted from stored indices, number of features)``."""
    if encoder.hashed:
        return 0, 0, encoder.n_features
    if index_base == "auto":      # read as 0-based: shift now if no index 0 was seen
        base = shift = 0 if cache.min_index == 0 else 1
    else:
        base, shift = index_base, 0     # the reader made the indices 0-based already
    seen = cache.max_index + 1 - shift
    if n_features is not None and n_features < seen:
        raise NBSVMError(f"feature index {cache.max_index} beyond n_features "
                         f"{n_features}", path=", ".join(map(str, inputs)))
    return base, shift, max(seen, 1) if n_features is None else int(n_features)


def _resume(learner, checkpoint, settings, epochs, rng, callback) -> list:
    """The history of the epochs a checkpoint saved (its learner state and generator put
    back), or an empty one."""
    found = checkpoint.load_learner(settings, epochs) if checkpoint is not None else None
    if found is None:
        return []
    saved, epoch, header = found
    if type(saved) is not type(learner):
        raise NBSVMError(f"the checkpoint holds a {type(saved).__name__}, not a "
                         f"{type(learner).__name__}", path=str(checkpoint.path))
    for name, value in vars(saved).items():
        if name.endswith("_") and not name.startswith("__"):
            setattr(learner, name, value)
    checkpoint.restore_rng(header, rng)
    checkpoint.resumed_from = epoch
    if callback:
        callback({"stage": "resumed", "epoch": epoch})
    return list(header["history"])


def _epoch(learner, groups, classes, epoch: int, epochs: int, n_rows: int, source) -> dict:
    """One pass of ``learner.partial_fit`` over an epoch's shuffled groups; its stats."""
    t0 = time.perf_counter()

    def step(rows, labels, order):
        try:
            learner.partial_fit(rows, labels, classes=classes, order=order)
        except NBSVMError as e:
            if e.path is None:
                raise NBSVMError(e.message, path=str(source)) from None
            raise
        yield learner.last_stats_

    sums = run_epoch(groups, step)
    stats = {"stage": "epoch", "epoch": epoch, "epochs": epochs,
             "examples": int(sums.get("n", n_rows)), "seconds": time.perf_counter() - t0}
    if "loss" in sums:
        stats["loss"] = float(sums["loss"]) / max(1, stats["examples"])
    if "mistakes" in sums:
        stats["mistakes"] = int(sums["mistakes"])
    return stats
