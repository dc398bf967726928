"""Train, evaluate and apply the backend learners on sparse-feature files, out of core.

Inputs are svmlight/libsvm files (integer feature indices, kept as they are), Blitzer et al.'s
``processed_acl`` ``.review`` files and ``label name:value ...`` files (string feature names,
hashed to ``2**n_bits`` columns: ``mmh3.hash(name, hash_seed, signed=False) & (2**n_bits - 1)``,
values of colliding names summed).

Training streams the inputs once into a binary cache in a temporary folder (indices,
values, offsets and labels, written under temporary names), collecting the class names on
the way; then every epoch replays the cache in a seeded shuffle within a fixed memory budget
(blocks of consecutive examples in random order, gathered into a buffer and permuted there;
a full permutation whenever the cache fits the buffer) and calls
``learner.partial_fit(block, y, classes=..., order=...)``. Memory does not grow with the
corpus. Evaluation and prediction stream in batches.

The settings needed to read the same format again are kept on the learner as scalar
attributes, which :meth:`~nbsvm.learners.base.OnlineLearner.save` writes to the model header:
``format_``, ``n_bits_`` (0: integer indices), ``hash_seed_`` and ``index_base_``.
No printing here: progress goes to a callback.
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from nbsvm.config import MAX_BITS, MIN_BITS, SHUFFLE_BLOCK_BYTES, SHUFFLE_BUFFER_BYTES
from nbsvm.errors import NBSVMError
from nbsvm.memory import FIXED_BYTES, check_fit_memory
from nbsvm.data.features import check_ids
from nbsvm.training.epochs import run_epoch
from nbsvm.data.shuffle import block_groups, group_order
from nbsvm.io.sparse import SPARSE_FORMATS, detect_sparse_format, read_blitzer, read_named, read_svmlight
from nbsvm.evaluation.metrics import (add_sums, confusion_matrix, multilabel_counts, multilabel_report,
                      regression_report, regression_sums, report)
from nbsvm.learners.base import OnlineLearner, SparseRows

DEFAULT_N_BITS = 20
BATCH_ROWS = 4096            # examples per streaming batch (cache writes, eval, predict)

# CLI option -> the learner parameter names it may stand for (the first one a class takes)
OPTION_PARAMS = {
    "--loss": ("loss",),
    "--schedule": ("schedule",),
    "--penalty": ("penalty",),
    "--l1": ("l1", "l1_ratio"),
    "--lambda": ("lam",),
    "--eta0": ("eta0", "eta"),
    "--C": ("C",),
    "--radius": ("radius",),
    "--average": ("average",),
    "--estimator": ("estimator",),
}
# run by the epoch loop here; passed on too when the learner has them (for the record)
LOOP_PARAMS = {"--epochs": "epochs", "--seed": "seed"}


# ---- the learner from command-line options ------------------------------------------------

def learner_class_for(algorithm: str):
    """The class behind ``--algorithm NAME`` and its fixed parameters."""
    from nbsvm.learners.registry import ALGORITHMS, resolve
    resolve("algorithm", algorithm)                     # unknown name: the registry's error
    module, cls_name, fixed = ALGORITHMS[algorithm]
    try:
        cls = getattr(importlib.import_module(module), cls_name)
    except (ImportError, AttributeError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, OnlineLearner)):
        raise NBSVMError(f"--algorithm {algorithm} is not available in this build "
                         f"({module}.{cls_name} is missing or not an OnlineLearner)")
    return cls, fixed


def _option_map(cls, fixed: dict, loop: bool = True) -> dict:
    """CLI option -> the parameter of ``cls`` it sets (options ``cls`` does not take left out)."""
    takes = cls._param_names()
    options = list(OPTION_PARAMS.items())
    if loop:
        options += [(o, (p,)) for o, p in LOOP_PARAMS.items()]
    found = {}
    for option, candidates in options:
        for p in candidates:
            if p in takes and p not in fixed:
                found[option] = p
                break
    return found


def make_learner_from_options(algorithm: str, options: dict) -> OnlineLearner:
    """A learner for ``--algorithm`` from the options the user gave (``None``: not given).

    ``options`` maps CLI option names (``"--lambda"``...) to values. An option the algorithm
    does not take is an error that lists the options it does take. A wrapper with
    ``estimator_params`` (one-vs-rest) passes the options it does not take itself on to its
    binary learner (``--estimator``, by default its own default).

    Examples
    --------
    >>> make_learner_from_options("ogd", {"--eta0": 2.5, "--radius": 1.0, "--C": None})
    OGDRegressor(eta=2.5, radius=1.0, epochs=1, seed=0)
    >>> make_learner_from_options("ogd", {"--lambda": 1e-4})
    Traceback (most recent call last):
    ...
    nbsvm.errors.NBSVMError: --algorithm ogd does not take --lambda; it takes: --eta0, --radius, --epochs, --seed
    """
    import inspect

    from nbsvm.learners.registry import make_learner
    cls, fixed = learner_class_for(algorithm)
    option_of = _option_map(cls, fixed)
    given = {o: v for o, v in options.items() if v is not None}
    params = {option_of[o]: v for o, v in given.items() if o in option_of}
    inner = {}
    if "estimator_params" in cls._param_names():
        estimator = params.get("estimator")
        if estimator is None:
            estimator = inspect.signature(cls.__init__).parameters["estimator"].default
        # the binary learner's fixed settings (adagrad's schedule) cannot be set either
        inner = _option_map(*learner_class_for(estimator), loop=False)
        inner = {o: p for o, p in inner.items() if o not in option_of}
        passed = {inner[o]: v for o, v in given.items() if o in inner}
        if passed:
            params["estimator_params"] = passed
    refused = [o for o in given if o not in option_of and o not in inner and o not in LOOP_PARAMS]
    if refused:
        allowed = list(option_of) + list(inner) or ["(no options)"]
        raise NBSVMError(f"--algorithm {algorithm} does not take {', '.join(refused)}; it "
                         f"takes: {', '.join(allowed)}")
    return make_learner(algorithm, **params)


# ---- reading sparse files ---------------------------------------------------------------------

def is_hashed(fmt: str) -> bool:
    return fmt in ("blitzer", "named")


def file_format(path, fmt: str = "auto", default: str | None = None) -> str:
    """``fmt`` unless ``"auto"``: then ``blitzer`` for ``*.review``, else ``default`` (a
    model's own format) or ``svmlight``."""
    if fmt != "auto":
        if fmt not in SPARSE_FORMATS:
            raise NBSVMError(f"unknown sparse format {fmt!r}; allowed: auto, "
                             f"{', '.join(SPARSE_FORMATS)}")
        return fmt
    detected = detect_sparse_format(path)
    return detected if detected == "blitzer" or default is None else default


def _has_labels(path, fmt) -> bool:
    """Whether to read the file as labeled: its first line starts with a label (a token
    without ``:``)."""
    if fmt == "blitzer":
        return False                    # #label# is optional then, and kept when present
    if path == "-":
        raise NBSVMError("cannot tell from standard input whether its lines start with a "
                         "label (it cannot be read twice); give a file", path="<stdin>")
    from nbsvm.io.sparse import _lines
    for text, _, _ in _lines(path):
        return ":" not in text.split()[0]
    return False


def read_rows(path, fmt: str, labeled: bool = True, index_base=0, strict: bool = False,
              stats=None):
    """The reader of ``fmt`` over ``path``; ``strict`` refuses invalid UTF-8, ``stats`` (a
    :class:`~nbsvm.io.readers.ReadStats`) counts what was replaced."""
    if fmt == "svmlight":
        return read_svmlight(path, index_base=index_base, labeled=labeled, strict=strict,
                             stats=stats)
    if fmt == "blitzer":
        return read_blitzer(path, labeled=labeled, strict=strict, stats=stats)
    return read_named(path, labeled=labeled, strict=strict, stats=stats)


class RowEncoder:
    """Turns reader records into CSR arrays: hashes string keys, sums duplicate columns,
    and (for prediction) drops integer indices the model has never seen."""

    def __init__(self, fmt: str, n_bits: int = DEFAULT_N_BITS, hash_seed: int = 0,
                 n_features: int | None = None):
        self.fmt = fmt
        self.hashed = is_hashed(fmt)
        if self.hashed and not (MIN_BITS <= int(n_bits) <= MAX_BITS):
            raise NBSVMError(f"n_bits must be in {MIN_BITS}..{MAX_BITS}, got {n_bits}")
        self.n_bits, self.hash_seed = int(n_bits), int(hash_seed)
        self.mask = (1 << self.n_bits) - 1
        self.n_features = (1 << self.n_bits) if self.hashed else n_features

    def encode(self, records: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(indices, values, offsets)`` of ``records``, columns sorted within each row."""
        lengths = np.fromiter((len(r.values) for r in records), dtype=np.int64,
                              count=len(records))
        offsets = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if not records or offsets[-1] == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64), offsets
        values = np.concatenate([r.values for r in records]).astype(np.float64, copy=False)
        if self.hashed:
            import mmh3
            h, seed = mmh3.hash, self.hash_seed
            indices = np.fromiter((h(k, seed, signed=False) for r in records for k in r.keys),
                                  dtype=np.int64, count=int(offsets[-1])) & self.mask
        else:
            indices = np.concatenate([r.keys for r in records]).astype(np.int64, copy=False)
        rows = np.repeat(np.arange(len(records)), lengths)
        if not self.hashed and self.n_features is not None:      # unseen in training: weight 0
            keep = indices < self.n_features
            if not keep.all():
                rows, indices, values = rows[keep], indices[keep], values[keep]
        order = np.lexsort((indices, rows))
        rows, indices, values = rows[order], indices[order], values[order]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]) | (indices[1:] != indices[:-1])
        starts = np.flatnonzero(first)
        if len(starts) < len(rows):                             # colliding keys: sum values
            values = np.add.reduceat(values, starts)
            rows, indices = rows[starts], indices[starts]
        offsets = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(records)), out=offsets[1:])
        return indices, values, offsets


def _batches(records: Iterable, size: int = BATCH_ROWS) -> Iterator[list]:
    batch = []
    for r in records:
        batch.append(r)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# ---- labels ---------------------------------------------------------------------------------

def _one_label(record) -> str:
    if len(record.labels) != 1:
        raise NBSVMError(f"expected one label, found {len(record.labels)} "
                         f"({','.join(record.labels)}); multi-label examples need "
                         f"--algorithm multilabel", path=record.source, line=record.line)
    return record.labels[0]


def _target(record) -> float:
    label = _one_label(record)
    try:
        y = float(label)
    except ValueError:
        y = float("nan")
    if not np.isfinite(y):
        raise NBSVMError(f"regression target is not a finite number: {label!r}",
                         path=record.source, line=record.line)
    return y


# ---- the on-disk cache ----------------------------------------------------------------------

class RowCache:
    """Examples as raw arrays in a folder: ``indices.i64``, ``values.f64``, ``offsets.i64``
    and, by task, ``codes.i32`` (class codes in order of first appearance), ``targets.f64``
    (regression) or ``label_offsets.i64`` + ``label_codes.i32`` (multi-label).

    Files are written under ``*.part`` names and renamed once complete.
    """

    ARRAYS = {"indices": np.int64, "values": np.float64, "offsets": np.int64,
              "codes": np.int32, "targets": np.float64, "label_offsets": np.int64,
              "label_codes": np.int32}

    def __init__(self, folder, task: str):
        self.folder, self.task = Path(folder), task
        self.label_kind = {"regression": ("targets",),
                           "multilabel": ("label_offsets", "label_codes")}.get(task, ("codes",))
        self.names: list[str] = []            # class names in order of first appearance
        self._code: dict[str, int] = {}
        self.n_rows = self.nnz = self.n_labels = 0
        self.min_index, self.max_index = None, -1
        self._files = {}
        self._checked: set = set()      # blocks whose indices were checked (see _block)

    # writing
    def __enter__(self):
        for name in ("indices", "values", "offsets") + self.label_kind:
            self._files[name] = open(self.folder / f"{name}.part", "wb")
        self._write("offsets", np.zeros(1, np.int64))
        if self.task == "multilabel":
            self._write("label_offsets", np.zeros(1, np.int64))
        return self

    def __exit__(self, exc_type, exc, tb):
        for fh in self._files.values():
            fh.close()
        self._files = {}
        if exc_type is None:
            for name in ("indices", "values", "offsets") + self.label_kind:
                os.replace(self.folder / f"{name}.part", self.folder / f"{name}.bin")
        return False

    def _write(self, name, array):
        self._files[name].write(memoryview(np.ascontiguousarray(array, self.ARRAYS[name])))

    def code_of(self, label: str) -> int:
        code = self._code.get(label)
        if code is None:
            code = self._code[label] = len(self.names)
            self.names.append(label)
        return code

    def add(self, records: list, encoder: RowEncoder):
        indices, values, offsets = encoder.encode(records)
        if indices.size:
            lo, hi = int(indices.min()), int(indices.max())
            self.min_index = lo if self.min_index is None else min(self.min_index, lo)
            self.max_index = max(self.max_index, hi)
        self._write("indices", indices)
        self._write("values", values)
        self._write("offsets", offsets[1:] + self.nnz)
        if self.task == "regression":
            self._write("targets", np.array([_target(r) for r in records]))
        elif self.task == "multilabel":
            codes = [self.code_of(l) for r in records for l in dict.fromkeys(r.labels)]
            counts = np.array([len(dict.fromkeys(r.labels)) for r in records], np.int64)
            self._write("label_codes", np.array(codes, np.int32))
            self._write("label_offsets", np.cumsum(counts) + self.n_labels)
            self.n_labels += len(codes)
        else:
            self._write("codes", np.array([self.code_of(_one_label(r))
                                           for r in records], np.int32))
        self.n_rows += len(records)
        self.nnz += int(offsets[-1])

    # reading
    def _read(self, name, start, stop) -> np.ndarray:
        dtype = np.dtype(self.ARRAYS[name])
        out = np.empty(stop - start, dtype=dtype)
        if stop > start:
            with open(self.folder / f"{name}.bin", "rb") as fh:
                got = os.preadv(fh.fileno(), [memoryview(out).cast("B")], start * dtype.itemsize)
            if got != out.nbytes:
                raise NBSVMError(f"the training cache changed while in use ({name})",
                                 path=str(self.folder))
        return out

    def _corrupted(self, what):
        return NBSVMError(f"corrupted training cache: {what}", path=str(self.folder))

    def _check_offsets(self, off, total, name):
        """``off`` (read from the file) non-decreasing within ``[0, total]``."""
        if off.size and (off[0] < 0 or off[-1] > total or np.any(off[1:] < off[:-1])):
            raise self._corrupted(f"{name} out of order or beyond the data")

    def _check_codes(self, codes, name):
        if codes.size and (codes.min() < 0 or codes.max() >= len(self.names)):
            raise self._corrupted(f"{name} outside the {len(self.names)} labels")

    def labels(self, start, stop):
        """Labels of examples ``start..stop-1`` as the learner takes them (checked: one
        code per example, cheap next to the rows)."""
        if self.task == "regression":
            return self._read("targets", start, stop)
        names = np.asarray(self.names, dtype=object)
        if self.task == "multilabel":
            lo = self._read("label_offsets", start, stop + 1)
            self._check_offsets(lo, self.n_labels, "label offsets")
            codes = self._read("label_codes", int(lo[0]), int(lo[-1]))
            self._check_codes(codes, "label codes")
            lo = lo - lo[0]
            return [tuple(names[codes[a:z]]) for a, z in zip(lo[:-1], lo[1:])]
        codes = self._read("codes", start, stop)
        self._check_codes(codes, "label codes")
        return names[codes]

    def _block(self, a, z, n_features, shift):
        """Rows ``a..z-1``: ``(indices - shift, values, offsets from 0, labels)``. The
        offsets are checked on every read (one per row), the indices once per block and
        cache (one pass): they index the learner's weights in compiled code."""
        off = self._read("offsets", a, z + 1)
        self._check_offsets(off, self.nnz, "row offsets")
        indices = self._read("indices", int(off[0]), int(off[-1]))
        if shift:
            indices -= shift
        key = (a, z, n_features, shift)
        if key not in self._checked:
            if check_ids(indices, n_features) >= 0:
                raise self._corrupted(f"feature index outside [0, {n_features}) in rows "
                                      f"{a}..{z - 1}")
            self._checked.add(key)
        return (indices, self._read("values", int(off[0]), int(off[-1])), off - off[0],
                self.labels(a, z))

    def shuffled_blocks(self, rng: np.random.Generator, n_features: int, shift: int = 0,
                        buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
                        block_bytes: int = SHUFFLE_BLOCK_BYTES):
        """One epoch: ``(rows, labels, order)`` per group of blocks, within ``buffer_bytes``.

        Consecutive examples form blocks of about ``block_bytes``; the blocks are visited in
        a random order, as many as fit the buffer are read together and their examples
        permuted. ``shift`` is subtracted from the stored indices (1-based files).
        """
        for bounds in block_groups(self.n_rows, 16 * self.nnz + 8 * self.n_rows, rng,
                                   buffer_bytes, block_bytes):
            parts = [self._block(a, z, n_features, shift) for a, z in bounds]
            lengths = np.concatenate([np.diff(p[2]) for p in parts])
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            rows = SparseRows(np.concatenate([p[0] for p in parts]),
                              np.concatenate([p[1] for p in parts]), offsets, n_features)
            if self.task == "multilabel":
                labels = [y for p in parts for y in p[3]]
            else:
                labels = np.concatenate([p[3] for p in parts])
            yield rows, labels, group_order(rng, len(rows))


# ---- training -------------------------------------------------------------------------------

def learn_sparse(learner: OnlineLearner, inputs, fmt: str = "auto", n_bits: int = DEFAULT_N_BITS,
                 hash_seed: int = 0, index_base="auto", epochs: int | None = None, seed: int = 0,
                 n_features: int | None = None, cache_dir=None,
                 callback: Callable[[dict], None] | None = None,
                 buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
                 block_bytes: int = SHUFFLE_BLOCK_BYTES, max_memory=None,
                 strict: bool = False, stats=None) -> OnlineLearner:
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
    :class:`~nbsvm.io.readers.ReadStats`), or refused with ``strict``.
    """
    inputs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
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
    encoder = RowEncoder(formats[0], n_bits, hash_seed)
    folder = Path(tempfile.mkdtemp(prefix="nbsvm-learn-", dir=cache_dir))
    try:
        cache = RowCache(folder, learner.task)
        with cache:
            for path, f in zip(inputs, formats):
                # auto index base: read as 0-based, shift later if no index 0 was seen
                reader = read_rows(path, f, labeled=True,
                                   index_base=0 if index_base == "auto" else index_base,
                                   strict=strict, stats=stats)
                for batch in _batches(reader):
                    cache.add(batch, encoder)
                    if callback:
                        callback({"stage": "cache", "examples": cache.n_rows})
        if cache.n_rows == 0:
            raise NBSVMError("no examples in the training input",
                             path=", ".join(map(str, inputs)))
        base = shift = 0
        if not encoder.hashed:
            if index_base == "auto":      # read as 0-based: shift now if no index 0 was seen
                base = shift = 0 if cache.min_index == 0 else 1
            else:
                base = index_base         # the reader made the indices 0-based already
            seen = cache.max_index + 1 - shift
            if n_features is not None and n_features < seen:
                raise NBSVMError(f"feature index {cache.max_index} beyond n_features "
                                 f"{n_features}", path=", ".join(map(str, inputs)))
            width = max(seen, 1) if n_features is None else int(n_features)
        else:
            width = encoder.n_features
        classes = None if learner.task == "regression" else sorted(cache.names)
        n_outputs = 1 if learner.task in ("binary", "regression") else len(classes)
        copies = 2 if getattr(learner, "average", False) else 1
        check_fit_memory(FIXED_BYTES + n_outputs * (width + 1) * 8 * copies, max_memory,
                         what=f"{type(learner).__name__} with {n_outputs} output(s) x {width:,} "
                              "features")
        for name in [k for k in vars(learner) if k.endswith("_") and not k.startswith("__")]:
            delattr(learner, name)                              # start afresh, as fit does
        rng = np.random.default_rng(seed)
        history = []
        for epoch in range(1, int(epochs) + 1):
            t0 = time.perf_counter()

            def step(rows, labels, order):
                try:
                    learner.partial_fit(rows, labels, classes=classes, order=order)
                except NBSVMError as e:
                    if e.path is None:
                        raise NBSVMError(e.message, path=str(inputs[0])) from None
                    raise
                yield learner.last_stats_

            sums = run_epoch(cache.shuffled_blocks(rng, width, shift, buffer_bytes,
                                                   block_bytes), step)
            stats = {"stage": "epoch", "epoch": epoch, "epochs": int(epochs),
                     "examples": int(sums.get("n", cache.n_rows)),
                     "seconds": time.perf_counter() - t0}
            if "loss" in sums:
                stats["loss"] = float(sums["loss"]) / max(1, stats["examples"])
            if "mistakes" in sums:
                stats["mistakes"] = int(sums["mistakes"])
            history.append(stats)
            if callback:
                callback(dict(stats))
            if learner._converged():
                break
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    learner.history_ = history
    # what eval / predict need to read the same format again (saved in the header)
    learner.format_ = formats[0]
    learner.n_bits_ = encoder.n_bits if encoder.hashed else 0
    learner.hash_seed_ = encoder.hash_seed
    learner.index_base_ = int(base)
    learner.n_train_ = int(cache.n_rows)
    return learner


# ---- models from files, evaluation, prediction ------------------------------------------------

def model_file_kind(path) -> str | None:
    """The ``kind`` in a model file's header (``"learner"``, ``"model"``...), ``None`` if
    the file has no readable header (the loaders then say what is wrong)."""
    try:
        with zipfile.ZipFile(path) as zf, zf.open("__header__.npy") as fh:
            major, _ = np.lib.format.read_magic(fh)
            read_header = (np.lib.format.read_array_header_1_0 if major == 1
                           else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read_header(fh)
            if dtype != np.uint8 or len(shape) != 1 or shape[0] > (1 << 20):
                return None
            return json.loads(fh.read(shape[0]).decode("utf-8")).get("kind")
    except Exception:      # missing, not a zip, damaged: let the real loader report it
        return None


def load_learner(path) -> OnlineLearner:
    model = OnlineLearner.load(path)
    if not hasattr(model, "n_features_in_"):
        raise NBSVMError("the learner in this file was never trained", path=str(path))
    fmt, n_bits = getattr(model, "format_", "svmlight"), getattr(model, "n_bits_", 0)
    base, seed = getattr(model, "index_base_", 0), getattr(model, "hash_seed_", 0)
    hashed = is_hashed(fmt) if isinstance(fmt, str) and fmt in SPARSE_FORMATS else None
    if hashed is None or any(isinstance(v, bool) or not isinstance(v, int)
                             for v in (n_bits, base, seed)) or base not in (0, 1) \
            or not 0 <= seed < 2**32 \
            or (hashed and not (MIN_BITS <= (n_bits or DEFAULT_N_BITS) <= MAX_BITS
                                and 1 << (n_bits or DEFAULT_N_BITS) <= model.n_features_in_)):
        # hashed indices are < 2**n_bits_ and index the weights: they must fit
        raise NBSVMError(f"corrupted learner file: format_={fmt!r}, n_bits_={n_bits!r}, "
                         f"index_base_={base!r}, hash_seed_={seed!r} do not fit "
                         f"{model.n_features_in_} features", path=str(path))
    return model


def _model_encoder(model: OnlineLearner, path, fmt: str) -> tuple[str, RowEncoder]:
    trained = getattr(model, "format_", "svmlight")
    f = file_format(path, fmt, default=trained)
    if is_hashed(f) != is_hashed(trained):
        raise NBSVMError(f"the model was trained on {trained} files "
                         f"({'hashed names' if is_hashed(trained) else 'integer indices'}); "
                         f"cannot read this file as {f}", path=str(path))
    return f, RowEncoder(f, getattr(model, "n_bits_", 0) or DEFAULT_N_BITS,
                         getattr(model, "hash_seed_", 0), n_features=model.n_features_in_)


def _stream(model, inputs, fmt, labeled, batch_rows, strict=False, stats=None):
    """``(records, SparseRows)`` batches of every input, read with the model's settings."""
    inputs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    for path in inputs:
        f, encoder = _model_encoder(model, path, fmt)
        has_labels = labeled if labeled is not None else _has_labels(path, f)
        reader = read_rows(path, f, labeled=has_labels,
                           index_base=getattr(model, "index_base_", 0), strict=strict,
                           stats=stats)
        for records in _batches(reader, batch_rows):
            indices, values, offsets = encoder.encode(records)
            yield records, SparseRows(indices, values, offsets, model.n_features_in_)


def evaluate_sparse(model: OnlineLearner, inputs, fmt: str = "auto",
                    batch_rows: int = BATCH_ROWS,
                    callback: Callable[[dict], None] | None = None, strict: bool = False,
                    stats=None) -> dict:
    """Metrics of ``model`` on labeled sparse files, streaming in batches.

    Classification: :func:`nbsvm.evaluation.metrics.report` (accuracy, per-class P/R/F1, confusion);
    multi-label: :func:`~nbsvm.evaluation.metrics.multilabel_report`; regression:
    :func:`~nbsvm.evaluation.metrics.regression_report`. Every report has ``task``.
    """
    task, classes = model.task, list(getattr(model, "classes_", []))
    index = {c: i for i, c in enumerate(classes)}
    cm, sums, n = np.zeros((len(classes),) * 2, np.int64), None, 0

    def code(record, label):
        try:
            return index[label]
        except KeyError:
            raise NBSVMError(f"label {label!r} is not among the model's classes "
                             f"({', '.join(classes[:10])})", path=record.source,
                             line=record.line) from None

    for records, rows in _stream(model, inputs, fmt, True, batch_rows, strict, stats):
        if task == "regression":
            sums = add_sums(sums, regression_sums([_target(r) for r in records],
                                                  model.predict(rows)))
        elif task == "multilabel":
            truth = np.zeros((len(records), len(classes)), dtype=bool)
            for d, r in enumerate(records):
                for label in r.labels:
                    truth[d, code(r, label)] = True
            sums = add_sums(sums, multilabel_counts(truth, model.decision_function(rows) > 0))
        else:
            truth = np.array([code(r, _one_label(r)) for r in records], np.int64)
            pred = np.array([index[str(p)] for p in model.predict(rows)], np.int64)
            cm += confusion_matrix(truth, pred, len(classes))
        n += len(records)
        if callback:
            callback({"stage": "eval", "docs": n})
    if n == 0:
        raise NBSVMError("no examples to evaluate")
    if task == "regression":
        return regression_report(sums)
    if task == "multilabel":
        return multilabel_report(sums, classes)
    return dict(report(cm, classes), task=task)


def predict_sparse(model: OnlineLearner, inputs, fmt: str = "auto",
                   batch_rows: int = BATCH_ROWS, strict: bool = False,
                   stats=None) -> Iterator["pd.DataFrame"]:
    """One table per batch: ``source, line, [true_label,] label, score`` (classification;
    several labels joined by ``,``; ``score`` is the decision value of the predicted class,
    the only one for binary models, none for multi-label), or ``prediction`` for regression.
    Input labels, when the first batch has them, are copied to ``true_label`` (empty for
    examples without one)."""
    import pandas as pd
    classes = np.asarray(getattr(model, "classes_", []), dtype=object)
    with_truth = None               # decided on the first batch: every table has one header
    for records, rows in _stream(model, inputs, fmt, None, batch_rows, strict, stats):
        frame = {"source": [r.source for r in records], "line": [r.line for r in records]}
        if with_truth is None:
            with_truth = any(r.labels for r in records)
        if with_truth:
            frame["true_label"] = [",".join(r.labels) for r in records]
        scores = model.predict(rows) if model.task == "regression" else \
            model.decision_function(rows)
        if model.task == "regression":
            frame["prediction"] = scores
        elif model.task == "multilabel":
            frame["label"] = [",".join(classes[np.flatnonzero(s > 0)]) for s in scores]
        elif model.task == "binary" or scores.ndim == 1:    # two classes: one score
            frame["label"] = classes[(scores > 0).astype(np.int64)]
            frame["score"] = scores
        else:
            best = np.argmax(scores, axis=1)
            frame["label"] = classes[best]
            frame["score"] = scores[np.arange(len(best)), best]
        yield pd.DataFrame(frame)
