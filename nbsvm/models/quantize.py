"""Smaller model files (fastText's ``quantize`` / ``.ftz``): drop the buckets that add least
to any score, and store the NB ratios and weights as float16, or as int8 with one scale per
output and array.

A bucket's weight in a score is its *contribution* ``c = r (beta w + (1 - beta) m)`` (``r``
its ratio, ``w`` its weight; ``m`` is 1 with ``interpolate='scores'``, the mean absolute
weight with ``'weights'``), as the model scores documents. :func:`quantize` marks a model
quantized in memory: the dropped buckets leave its column map, and :func:`encode` is what
:func:`~nbsvm.models.modelfile.save_model` applies to the ratios and weights it writes.
:func:`decode` turns them back into float32 on load. AdaGrad's sums are not written: a
quantized model predicts, explains and serves, but does not train further.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

import numpy as np

from nbsvm.data.translate import mapped_buckets
from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from nbsvm.models.nbsvm import NBSVMClassifier

DTYPES = {"float16": np.float16, "int8": np.int8, "float32": np.float32}


#: Contributions taken at once (outputs x columns: 16 MB of float32; a full ``(n_outputs,
#: n_columns)`` product and its absolute value held a 462 MB model's memory twice over).
CHUNK_VALUES = 1 << 22


def largest_contributions(clf: NBSVMClassifier, columns: np.ndarray) -> np.ndarray:
    """Each of ``columns``' largest ``|c|`` over the outputs, what :func:`quantize` ranks
    by (see the module docstring), taken a chunk of columns at a time."""
    learner = clf.linear_
    w = learner.coef()
    r = learner.S_[:, :, 0]
    rest = None
    if clf.beta != 1.0:
        rest = np.ones(learner.n_outputs) if clf.interpolate == "scores" else clf.mean_abs_coef_
    out = np.empty(columns.size, dtype=np.float64)
    step = max(1, CHUNK_VALUES // learner.n_outputs)
    for start in range(0, columns.size, step):
        part = columns[start : start + step]
        wc = w[:, part]
        if rest is not None:
            wc = clf.beta * wc + (1.0 - clf.beta) * rest[:, None]
        out[start : start + part.size] = np.abs(r[:, part] * wc).max(axis=0)
    return out


def quantize(
    clf: NBSVMClassifier, dtype: str = "int8", cutoff: float = 0.0, keep: float | None = None
) -> dict:
    """Mark ``clf`` (fitted, with a column map) to be saved quantized: buckets whose largest
    contribution is below ``cutoff``, or outside the ``keep`` share of the largest ones,
    leave the model; ratios and weights are written as ``dtype``. Returns what it did."""
    if dtype not in DTYPES:
        raise NBSVMError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if not (np.isfinite(cutoff) and cutoff >= 0):
        raise NBSVMError(f"cutoff must be a number >= 0, got {cutoff!r}")
    if keep is not None and not 0.0 < keep <= 1.0:
        raise NBSVMError(f"keep must be a share in (0, 1], got {keep!r}")
    clf.check_fitted()
    if clf.backend_learner is not None:
        raise NBSVMError(
            f"quantize stores the built-in learner's weights; learner {clf.learner!r} keeps its own"
        )
    if clf.column_of_ is None:
        raise NBSVMError("quantize needs a saved model (load it from its file)")
    buckets, columns, _ = mapped_buckets(clf.column_of_)
    size = largest_contributions(clf, columns)
    dropped = size < cutoff
    if keep is not None and columns.size:
        n_keep = int(np.ceil(keep * columns.size))
        order = np.argsort(-size, kind="stable")
        outside = np.ones(columns.size, dtype=bool)
        outside[order[:n_keep]] = False
        dropped |= outside
    if columns.size and dropped.all():
        raise NBSVMError(
            f"cutoff {cutoff:g} is above the largest contribution of every bucket "
            f"({float(size.max()):.4g}): none would be kept, and the model would predict the "
            "class prior whatever the text. Lower --cutoff"
        )
    if dtype == "float16" and columns.size:
        kept = columns[~dropped]
        top = max(float(largest_abs(clf, kept, c).max(initial=0.0)) for c in (0, 1))
        largest = float(np.finfo(np.float16).max)
        if top > largest:
            raise NBSVMError(
                f"a ratio or weight of {top:.4g} does not fit float16 (at most "
                f"{largest:g}): use --dtype int8"
            )
    clf.column_of_[buckets[dropped]] = -1
    names = clf.__dict__.get("ngram_map_")
    if names:  # the names of dropped buckets would only take room: 1 of 1,568 kept was 66%
        clf.ngram_map_ = {b: v for b, v in names.items() if clf.column_of_[b] >= 0}
    clf.__dict__.pop("lexicon_", None)  # kept counts serve further training: none here
    clf.quantized_ = {
        "dtype": dtype,
        "cutoff": float(cutoff),
        "keep": None if keep is None else float(keep),
        "buckets_kept": int(columns.size - dropped.sum()),
        "buckets_dropped": int(dropped.sum()),
    }
    return dict(clf.quantized_)


def scales(clf: NBSVMClassifier, field: int) -> np.ndarray:
    """Per output, int8's step for field ``field`` (0: ratios, 1: weights) of the kept
    columns: the largest ``|x|`` maps to 127."""
    learner = clf.linear_
    column_of = cast("np.ndarray", clf.column_of_)  # a quantized model has a column map
    columns = column_of[column_of >= 0]
    if columns.size == 0:
        return np.ones(learner.n_outputs)
    top = largest_abs(clf, columns, field)
    return np.where(top > 0, top / 127.0, 1.0)


def largest_abs(clf: NBSVMClassifier, columns: np.ndarray, field: int) -> np.ndarray:
    """Per output, the largest ``|x|`` of field ``field`` over ``columns``, a chunk of
    columns at a time (a copy of the field held the model's memory twice over)."""
    S = clf.linear_.S_
    top = np.zeros(S.shape[0])
    step = max(1, CHUNK_VALUES // S.shape[0])
    for start in range(0, columns.size, step):
        part = np.abs(S[:, columns[start : start + step], field])
        top = np.maximum(top, part.max(axis=1, initial=0.0))
    return top


def encode(piece: np.ndarray, dtype: str, scale: float) -> np.ndarray:
    """A part of one output's ratios or weights as stored."""
    if dtype == "int8":
        return np.clip(np.rint(piece / scale), -127, 127).astype(np.int8)
    return piece.astype(DTYPES[dtype])


def stored_dtype(header: object, path: str | os.PathLike[str]) -> np.dtype:
    """The dtype a model file quantized as its header says stores ratios and weights in
    (read straight into the float32 state, see :func:`scale_in_place`)."""
    dtype = header.get("dtype") if isinstance(header, dict) else None
    if dtype not in DTYPES:
        raise NBSVMError(
            "corrupted model file: quantized arrays do not match the header", path=str(path)
        )
    return np.dtype(DTYPES[dtype])


def scale_in_place(
    column: np.ndarray, header: dict, scale: np.ndarray | None, path: str | os.PathLike[str]
) -> None:
    """Stored ratios or weights read into the state, ``column`` (``(n_outputs, n)``, a
    view of it), decoded there: int8 steps times their output's scale, in float64 as they
    were encoded (float16 needs nothing more than the copy into float32)."""
    if header.get("dtype") != "int8":
        return
    scale = np.asarray(scale, dtype=np.float64)
    if scale.shape != (column.shape[0],) or not (np.isfinite(scale).all() and (scale > 0).all()):
        raise NBSVMError("corrupted model file: bad int8 scales", path=str(path))
    for k in range(column.shape[0]):  # a row at a time: no float64 copy of the state
        column[k] = column[k].astype(np.float64) * scale[k]
