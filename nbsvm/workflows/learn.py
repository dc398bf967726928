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

The feature space is never sized by an index the user did not allow: svmlight indices must
fit ``n_features`` columns when it is given, else ``2**n_bits`` (``--n-bits``, default 20:
1,048,576 features), and never more than 2**31. An index beyond the limit is an error
naming its file and line and the ``--n-bits`` that would allow it, raised while the inputs
are read.

The settings needed to read the same format again are kept on the learner as scalar
attributes, which :meth:`~nbsvm.learners.base.OnlineLearner.save` writes to the model header:
``format_``, ``n_bits_`` (0: integer indices), ``hash_seed_``, ``index_base_`` and
``encoding_``.
Weights are kept for the columns the examples use alone (:func:`_kept_columns`) whenever
they use at most three quarters of the feature space: ``columns_`` (sorted) then maps each
weight to its feature index, and features the training data never had weigh 0 in
prediction, as they always did.

No printing here: progress goes to a callback.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from nbsvm.config import (
    DEFAULT_N_BITS,
    MAX_BITS,
    MIN_BITS,
    SHUFFLE_BLOCK_BYTES,
    SHUFFLE_BUFFER_BYTES,
)
from nbsvm.data.rowcache import RowCache, RowWriter
from nbsvm.data.rowencoder import (
    RowEncoder,
    file_format,
    is_hashed,
    read_rows,
    row_batches,
)
from nbsvm.data.store import cache_folder
from nbsvm.errors import Diverged, NBSVMError
from nbsvm.io.decoding import check_encoding
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.epochs import run_epoch
from nbsvm.learners.hints import divergence_hints
from nbsvm.memory import FIXED_BYTES, check_fit_memory

#: the share of the feature space at or below which the examples' columns are kept alone
COMPACT_SHARE = 0.75

if TYPE_CHECKING:
    import os

    from nbsvm.io.decoding import ReadStats
    from nbsvm.models.checkpoint import Checkpoint

    class SparseLearner(OnlineLearner):
        """An online learner :func:`learn_sparse` trained: what it records for ``eval`` and
        ``predict`` to read the same format again (saved in the model header)."""

        format_: str
        n_bits_: int
        hash_seed_: int
        index_base_: int
        encoding_: str
        n_train_: int
        columns_: np.ndarray  # only when it keeps some columns: each weight's feature index


def learn_sparse(
    learner: OnlineLearner,
    inputs: str | Path | Iterable[str | os.PathLike[str]],
    fmt: str = "auto",
    n_bits: int = DEFAULT_N_BITS,
    hash_seed: int = 0,
    index_base: int | str = "auto",
    epochs: int | None = None,
    seed: int = 0,
    n_features: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    callback: Callable[[dict], None] | None = None,
    buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
    block_bytes: int = SHUFFLE_BLOCK_BYTES,
    max_memory: int | str | None = None,
    strict: bool = False,
    stats: ReadStats | None = None,
    checkpoint: Checkpoint | None = None,
    encoding: str = "utf-8",
) -> SparseLearner:
    """Train ``learner`` afresh on sparse files for ``epochs`` passes (default: the
    learner's own ``epochs``, else 1).

    svmlight indices must fit ``n_features`` columns when it is given, else ``2**n_bits``
    (an error naming the file and line of the first index beyond, while reading); the
    model has the largest index + 1 columns (``n_features`` when given), or the columns
    the examples use alone (``columns_``, :func:`_kept_columns`).
    Once the input has been read (the number of features and classes is then known), the
    learner's weights (``n_outputs x columns`` float64, twice with averaging) are
    checked against ``max_memory`` and the memory available before they are allocated.

    ``callback`` receives ``{"stage": "cache", "examples": n}`` while the inputs are read and
    ``{"stage": "epoch", "epoch", "epochs", "examples", "loss", "mistakes", "seconds"}``
    after every epoch (``loss``: mean training loss before each update; ``mistakes``: count;
    either missing when the learner does not report it). ``learner.history_`` keeps them.
    Invalid UTF-8 in the inputs is replaced and counted in ``stats`` (a
    :class:`~nbsvm.io.readers.ReadStats`), or refused with ``strict``; ``encoding``: an
    ASCII-compatible codec of the feature names.

    ``checkpoint`` (:class:`~nbsvm.models.checkpoint.Checkpoint`): the learner and the
    shuffling generator are saved after every ``checkpoint.every`` epochs (event
    ``{"stage": "checkpoint", "epoch", "path"}``); with ``checkpoint.resume`` training
    continues after the saved epoch (event ``{"stage": "resumed", "epoch"}``), giving the
    model an uninterrupted run gives.
    """
    inputs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    formats, epochs = _check_settings(learner, inputs, fmt, index_base, epochs, seed)
    encoder = RowEncoder(formats[0], n_bits, hash_seed)
    limit = None if encoder.hashed else _index_limit(n_bits, n_features)
    encoding = check_encoding(encoding)  # its canonical name, kept in the model
    settings = _resume_settings(  # other encodings, other columns: no resuming across
        learner, format=formats, n_bits=n_bits, hash_seed=hash_seed, index_base=index_base,
        n_features=n_features, buffer_bytes=buffer_bytes, block_bytes=block_bytes,
        encoding=encoding,
    )  # fmt: skip
    folder = cache_folder(cache_dir, "nbsvm-learn-")  # made when missing, as train makes it
    cache = None
    try:
        source = _Source(inputs, formats, encoder, index_base, strict, stats, encoding, limit)
        cache, widest = _read_into_cache(folder / "rows", learner.task, source, callback)
        base, shift, width = _feature_width(cache, encoder, index_base, n_features, widest, limit)
        columns, shift, width = _kept_columns(cache, shift, width)
        classes = _classes_fitting(learner, cache, width, max_memory)
        _start_afresh(learner, columns)
        rng = np.random.default_rng(seed)
        history = _resume(learner, checkpoint, settings, epochs, rng, callback)

        def groups():
            return cache.shuffled_blocks(rng, width, shift, buffer_bytes, block_bytes)

        run = (learner, classes, epochs, cache.n_rows, inputs[0])
        _run_epochs(run, groups, history, rng, settings, checkpoint, callback)
    finally:
        if cache is not None:
            cache.close()
        shutil.rmtree(folder, ignore_errors=True)
    learner.history_ = history
    return _with_format(learner, formats[0], encoder, base, encoding, cache.n_rows)


def _resume_settings(learner: OnlineLearner, **reading: Any) -> dict:
    """What a checkpoint must match to be resumed: the learner, its parameters and how the
    inputs were read."""
    return {"learner": type(learner).__name__, **learner.get_params(), **reading}


def _start_afresh(learner: OnlineLearner, columns: np.ndarray | None) -> None:
    """Drop what ``learner`` learned before, as fit does; set the columns it keeps before
    the first checkpoint, so that each holds them."""
    for name in [k for k in vars(learner) if k.endswith("_") and not k.startswith("__")]:
        delattr(learner, name)
    if columns is not None:
        cast("SparseLearner", learner).columns_ = columns


def _kept_columns(cache: RowCache, shift: int, width: int) -> tuple[np.ndarray | None, int, int]:
    """``(columns, shift, width)`` the learner trains on: when the examples use at most
    :data:`COMPACT_SHARE` of the ``width`` columns, the cache renumbered as positions among
    those they use (``columns``: their 0-based indices, sorted; no shift), else all of
    them (``columns`` None). Its weights are then sized by what the data uses, not by
    ``2**n_bits``: 20NG's 20 groups as named features at the default ``--n-bits`` 20 held
    345 MB of weights for the 108,511 buckets they use (34 MB now)."""
    # (a pass over the cache to save a few columns is not worth it; no column: nothing to do)
    if not 0 < cache.n_columns <= COMPACT_SHARE * width:
        return None, shift, width
    return cache.compact() - shift, 0, cache.n_columns


def _with_format(learner, fmt: str, encoder, base, encoding: str, n_rows: int) -> SparseLearner:
    """``learner`` with what eval and predict need to read its format again (saved in the
    header)."""
    trained = cast("SparseLearner", learner)
    trained.format_ = fmt
    trained.n_bits_ = encoder.n_bits if encoder.hashed else 0
    trained.hash_seed_ = encoder.hash_seed
    trained.index_base_ = int(base)
    trained.encoding_ = encoding
    trained.n_train_ = int(n_rows)
    return trained


def _classes_fitting(learner, cache, width: int, max_memory) -> list | None:
    """The classes in the cache (None for regression), once the learner's dense weights
    over ``width`` features are known to fit ``max_memory`` and the memory available."""
    classes = None if learner.task == "regression" else sorted(cache.names)
    # classes is None for regression only
    n_outputs = 1 if learner.task in ("binary", "regression") else len(cast(list, classes))
    copies = learner.state_copies()  # weights, average, AdaGrad's sums...
    check_fit_memory(
        FIXED_BYTES + n_outputs * (width + 1) * 8 * copies,
        max_memory,
        what=f"{type(learner).__name__} with {n_outputs} output(s) x {width:,} features",
    )
    return classes


def _run_epochs(run: tuple, groups, history: list, rng, settings, checkpoint, callback) -> None:
    """The epochs after those in ``history`` (``run``: the learner, its classes, the epochs
    asked, the rows, the first input's name), each appended to it and reported; a
    checkpoint saved when due; stopped early when the learner has converged."""
    learner, classes, epochs, n_rows, source = run
    for epoch in range(len(history) + 1, epochs + 1):
        try:
            history.append(_epoch(learner, groups(), classes, epoch, epochs, n_rows, source))
        except Diverged as e:  # (a block's partial_fit: said with the options' names)
            raise _diverged(learner, epoch, learner.diverged() or e.state, "") from None
        if callback:
            callback(dict(history[-1]))
        try:  # NaN or infinity from here on: stop before anything is saved
            learner.settle()  # (an exact solver solves now)
        except Diverged as e:
            loss = f" (mean loss {history[-1].get('loss', float('nan')):g})"
            raise _diverged(learner, epoch, learner.diverged() or e.state, loss) from None
        if learner._converged():
            break
        if checkpoint is not None and checkpoint.due(epoch, epochs):
            checkpoint.save_learner(learner, settings, epoch, rng, history)
            if callback:
                callback({"stage": "checkpoint", "epoch": epoch, "path": str(checkpoint.path)})


def _diverged(learner, epoch: int, bad: str, loss: str) -> NBSVMError:
    """The error of a run whose state (``bad``) blew up in ``epoch``, with the options
    that could help."""
    *first, last = ["scale the feature values down", *divergence_hints(learner)]
    return NBSVMError(
        f"training diverged in epoch {epoch}: the learned state ({bad}) is no longer "
        f"finite{loss}; " + (f"{', '.join(first)} or {last}" if first else last)
    )


def _check_settings(learner, inputs, fmt, index_base, epochs, seed) -> tuple[list, int]:
    """The inputs' formats and the number of epochs, checked; the learner's own ``epochs``
    and ``seed`` set to the loop's (for the record)."""
    if not inputs:
        raise NBSVMError("no training input given")
    formats = [file_format(p, fmt) for p in inputs]
    if len({is_hashed(f) for f in formats}) > 1:
        raise NBSVMError(
            "cannot mix svmlight files (integer indices) with named-feature files "
            f"in one training set: {', '.join(map(str, inputs))}"
        )
    if index_base not in ("auto", 0, 1):
        raise NBSVMError(f"index base must be 0, 1 or auto, got {index_base!r}")
    if epochs is None:
        epochs = int(getattr(learner, "epochs", 1) or 1)
    if int(epochs) < 1:
        raise NBSVMError(f"epochs must be >= 1, got {epochs}")
    if int(epochs) > 1 and "epochs" not in learner._param_names():
        # (dcd kept its rows once more each epoch: the same solution, N times the memory)
        raise NBSVMError(
            f"{type(learner).__name__} takes no epochs: it solves to its tolerance on the "
            f"rows it keeps (got epochs {epochs})"
        )
    if int(seed) < 0:  # numpy's generator refused it with a traceback
        raise NBSVMError(f"seed must be an integer >= 0, got {seed!r}")
    for name, value in (("epochs", int(epochs)), ("seed", int(seed))):
        if name in learner._param_names():
            setattr(learner, name, value)
    learner.check_params()  # before the inputs are read, not after
    return formats, int(epochs)


class _Source(NamedTuple):
    """What the inputs are and how they are read and encoded."""

    inputs: list
    formats: list[str]
    encoder: RowEncoder
    index_base: int | str
    strict: bool
    stats: Any
    encoding: str
    limit: tuple[int, int | None] | None


def _read_into_cache(
    folder: Path, task: str, source: _Source, callback: Callable[[dict], None] | None
) -> tuple[RowCache, tuple | None]:
    """Every input, encoded, into a new row cache (one pass, batch by batch), and where the
    largest svmlight index is (:func:`_widest`; None for hashed features). Indices are
    checked against ``limit`` columns batch by batch, so a file is refused at its first
    index beyond the limit, not after it was all read."""
    inputs, formats, encoder, index_base, strict, stats, encoding, limit = source
    widest = None
    # one table of number labels' spellings for all the files ('+1' in one, '1' in
    # another: two classes); regression targets keep none (1 and 1.0: one value)
    spellings: dict = {}
    with RowWriter(folder, task) as writer:
        for path, f in zip(inputs, formats):
            # auto index base: read as 0-based, shift later if no index 0 was seen
            reader = read_rows(
                path,
                f,
                labeled=True,
                index_base=0 if index_base == "auto" else index_base,
                strict=strict,
                stats=stats,
                encoding=encoding,
                spellings=spellings,
                targets=task == "regression",
                label_sets=task == "multilabel",
            )
            for batch in row_batches(reader):
                indices, values, offsets = encoder.encode(batch)
                if limit is not None and indices.size:
                    widest = _widest(batch, indices, offsets, widest, limit, index_base)
                writer.add(batch, indices, values, offsets)
                if callback:
                    callback({"stage": "cache", "examples": writer.n_rows})
        if writer.n_rows == 0:
            raise NBSVMError("no examples in the training input", path=", ".join(map(str, inputs)))
        return writer.close(), widest


def _index_limit(n_bits: int, n_features: int | None) -> tuple[int, int | None]:
    """``(columns, n_bits)``: how many columns svmlight indices must fit, ``n_features``
    when given (``n_bits`` None then), else ``2**n_bits``; never over ``2**31``. An index is
    a column of a dense weight vector (8 bytes an output), so without a limit a single
    stray index of 100,000,000 made a 763 MB model without a word."""
    if n_features is not None:
        if not 1 <= int(n_features) <= 1 << MAX_BITS:
            raise NBSVMError(f"n_features must be in 1..2**{MAX_BITS}, got {n_features}")
        return int(n_features), None
    if not MIN_BITS <= int(n_bits) <= MAX_BITS:
        raise NBSVMError(f"n_bits must be in {MIN_BITS}..{MAX_BITS}, got {n_bits}")
    return 1 << int(n_bits), int(n_bits)


def _widest(batch, indices, offsets, widest, limit: tuple, index_base) -> tuple:
    """``(index, source, line)`` of the largest index read so far, this batch's included
    (one vectorized pass over its indices). An index past the ``limit`` columns whatever
    the base (``"auto"``: read as 0-based, one more allowed until the base is known) is an
    error here, naming its line."""
    pos = int(indices.argmax())
    top = int(indices[pos])
    if widest is not None and top <= widest[0]:
        return widest
    record = batch[int(np.searchsorted(offsets, pos, side="right")) - 1]
    widest = (top, record.source, record.line)
    auto = index_base == "auto"
    if top - auto >= limit[0]:
        raise _beyond_limit(widest, top - auto, 1 if auto else index_base, limit)
    return widest


def _beyond_limit(widest: tuple, column: int, base: int, limit: tuple) -> NBSVMError:
    """The error for the svmlight index at ``widest`` whose 0-based ``column`` does not fit
    the ``limit`` columns: which limit it is, and the ``--n-bits`` that allows the index."""
    _, source, line = widest
    columns, n_bits = limit
    bits = max(column.bit_length(), MIN_BITS)
    allowed = (
        f"beyond n_features {columns:,}"
        if n_bits is None
        else f"over the largest --n-bits {n_bits} allows, {columns - 1 + base:,}"
    )
    if bits > MAX_BITS:
        why = (
            f"is {allowed}, and over the largest any allows, {(1 << MAX_BITS) - 1 + base:,} "
            f"(svmlight indices are at most 2**{MAX_BITS}): renumber the features, or hash "
            "them into 2**n_bits columns with --format named"
        )
    elif n_bits is None:
        why = f"is {allowed} (counting from {base})"
    else:
        why = (
            f"is {allowed} (svmlight indices must fit 2**n_bits columns, counting from "
            f"{base}): pass --n-bits {bits} to allow {column + 1:,} columns (weights are "
            "kept for those the examples use), or renumber the features"
        )
    return NBSVMError(f"feature index {column + base} {why}", path=source, line=line)


def _feature_width(
    cache, encoder, index_base, n_features, widest=None, limit=None
) -> tuple[int, int, int]:
    """``(index base, shift subtracted from stored indices, number of features)``; the
    largest index (at ``widest``) checked against the ``limit`` columns
    (:func:`_index_limit`) now that the base is known."""
    if encoder.hashed:
        return 0, 0, encoder.n_features
    if index_base == "auto":  # read as 0-based: shift now if no index 0 was seen
        base = shift = 0 if cache.min_index == 0 else 1
    else:
        base, shift = index_base, 0  # the reader made the indices 0-based already
    seen = cache.max_index + 1 - shift
    if limit is not None and widest is not None and seen > limit[0]:
        raise _beyond_limit(widest, seen - 1, base, limit)
    return base, shift, max(seen, 1) if n_features is None else int(n_features)


def _resume(learner, checkpoint, settings, epochs, rng, callback) -> list:
    """The history of the epochs a checkpoint saved (its learner state and generator put
    back), or an empty one."""
    found = checkpoint.load_learner(settings, epochs) if checkpoint is not None else None
    if found is None:
        return []
    saved, epoch, header = found
    if type(saved) is not type(learner):
        raise NBSVMError(
            f"the checkpoint holds a {type(saved).__name__}, not a {type(learner).__name__}",
            path=str(checkpoint.path),
        )
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
        except Diverged:
            raise  # (said by the epochs' loop, with the options' names)
        except NBSVMError as e:
            if e.path is None:
                raise NBSVMError(e.message, path=str(source)) from None
            raise
        yield learner.last_stats_

    sums = run_epoch(groups, step)
    stats: dict[str, Any] = {
        "stage": "epoch",
        "epoch": epoch,
        "epochs": epochs,
        "examples": int(sums.get("n", n_rows)),
        "seconds": time.perf_counter() - t0,
    }
    if "loss" in sums:
        stats["loss"] = float(sums["loss"]) / max(1, stats["examples"])
    if "mistakes" in sums:
        stats["mistakes"] = int(sums["mistakes"])
    if hasattr(learner, "fit_outputs"):  # one-vs-rest: each binary learner's, summed
        stats["summed_over"] = len(learner.estimators_)
    return stats
