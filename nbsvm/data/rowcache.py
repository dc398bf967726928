"""``nbsvm learn``'s training cache: examples as CSR rows with explicit values, and their
targets by task, on disk (:mod:`nbsvm.data.store`), replayed in block-shuffled groups
(:mod:`nbsvm.data.shuffle`) exactly as the text cache is.

The folder holds ``indices.i64``, ``values.f64``, ``offsets.i64``, ``columns.i64`` (the
distinct indices, sorted) and, by task, ``codes.i32`` (class codes in order of first
appearance), ``targets.f64`` (regression) or ``label_offsets.i64`` + ``label_codes.i32``
(multi-label), plus ``meta.json``. :meth:`RowCache.compact` renumbers the indices as
positions among the distinct ones, so that a learner holds weights for the columns its
examples use alone (named features hashed into ``2**n_bits`` columns use a few of them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.config import SHUFFLE_BLOCK_BYTES, SHUFFLE_BUFFER_BYTES
from nbsvm.data.rows import SparseRows
from nbsvm.data.shuffle import block_groups, group_order
from nbsvm.data.store import ArrayReader, ArrayWriter
from nbsvm.data.translate import check_ids
from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from nbsvm.io.sparse import SparseRow

ROWS: dict[str, type] = {"indices.i64": np.int64, "values.f64": np.float64, "offsets.i64": np.int64}
TARGETS: dict[str, dict[str, type]] = {
    "regression": {"targets.f64": np.float64},
    "multilabel": {"label_offsets.i64": np.int64, "label_codes.i32": np.int32},
}
CODES: dict[str, type] = {"codes.i32": np.int32}
COLUMNS = "columns.i64"
#: indices renumbered at a time by :meth:`RowCache.compact` (8 MB of them)
COMPACT_CHUNK = 1 << 20


class DistinctValues:
    """The distinct values of the integer arrays added, sorted: each array's are set aside
    and merged in once they outnumber those merged before (or a million), so that memory
    stays about twice what is kept and the work about ``n log n`` over the values added."""

    def __init__(self) -> None:
        self._merged = np.zeros(0, np.int64)
        self._parts: list[np.ndarray] = []
        self._pending = 0

    def add(self, values: np.ndarray) -> None:
        if not values.size:
            return
        part = np.unique(values)
        self._parts.append(part)
        self._pending += part.size
        if self._pending > max(COMPACT_CHUNK, self._merged.size):
            self._merge()

    def _merge(self) -> None:
        if self._parts:
            self._merged = np.unique(np.concatenate([self._merged, *self._parts]))
            self._parts, self._pending = [], 0

    def sorted(self) -> np.ndarray:
        self._merge()
        return self._merged


def one_label(record: SparseRow) -> str:
    """The single label of a sparse record (a clear error naming its line otherwise)."""
    if not record.labels:
        raise NBSVMError(
            "no label: the line starts with a blank, then a feature (a multi-label file's "
            "empty label set, as scikit-learn writes it: --algorithm multilabel reads it)",
            path=record.source,
            line=record.line,
        )
    if len(record.labels) != 1:
        raise NBSVMError(
            f"expected one label, found {len(record.labels)} "
            f"({','.join(record.labels)}); multi-label examples need --algorithm multilabel",
            path=record.source,
            line=record.line,
        )
    return record.labels[0]


def regression_target(record: SparseRow) -> float:
    """A record's label as a finite number."""
    label = one_label(record)
    try:
        y = float(label)
    except ValueError:
        y = float("nan")
    if not np.isfinite(y):
        raise NBSVMError(
            f"regression target is not a finite number: {label!r}",
            path=record.source,
            line=record.line,
        )
    return y


class RowWriter:
    """Append encoded records to a new cache folder; :meth:`close` publishes it."""

    def __init__(self, folder, task: str):
        self.task = task
        self._out = ArrayWriter(folder, {**ROWS, **TARGETS.get(task, CODES), COLUMNS: np.int64})
        self.folder = self._out.folder
        self.names: list[str] = []  # class names in order of first appearance
        self._code: dict[str, int] = {}
        self.n_rows = self.nnz = self.n_labels = 0
        self.min_index: int | None = None
        self.max_index = -1
        self._columns = DistinctValues()
        self._out.write("offsets.i64", np.zeros(1))
        if task == "multilabel":
            self._out.write("label_offsets.i64", np.zeros(1))

    def code_of(self, label: str) -> int:
        code = self._code.get(label)
        if code is None:
            code = self._code[label] = len(self.names)
            self.names.append(label)
        return code

    def add(
        self, records: list, indices: np.ndarray, values: np.ndarray, offsets: np.ndarray
    ) -> None:
        """Append ``records`` whose features the encoder made ``(indices, values, offsets)``."""
        if indices.size:
            lo, hi = int(indices.min()), int(indices.max())
            self.min_index = lo if self.min_index is None else min(self.min_index, lo)
            self.max_index = max(self.max_index, hi)
            self._columns.add(indices)
        self._out.write("indices.i64", indices)
        self._out.write("values.f64", values)
        self._out.write("offsets.i64", offsets[1:] + self.nnz)
        if self.task == "regression":
            self._out.write("targets.f64", [regression_target(r) for r in records])
        elif self.task == "multilabel":
            codes = [self.code_of(label) for r in records for label in dict.fromkeys(r.labels)]
            counts = np.array([len(dict.fromkeys(r.labels)) for r in records], np.int64)
            self._out.write("label_codes.i32", codes)
            self._out.write("label_offsets.i64", np.cumsum(counts) + self.n_labels)
            self.n_labels += len(codes)
        else:
            self._out.write("codes.i32", [self.code_of(one_label(r)) for r in records])
        self.n_rows += len(records)
        self.nnz += int(offsets[-1])

    def close(self) -> RowCache:
        columns = self._columns.sorted()
        self._out.write(COLUMNS, columns)
        self._out.publish(
            {
                "task": self.task,
                "names": self.names,
                "n_rows": self.n_rows,
                "nnz": self.nnz,
                "n_labels": self.n_labels,
                "min_index": self.min_index,
                "max_index": self.max_index,
                "n_columns": int(columns.size),
            }
        )
        return RowCache(self.folder)

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self._out.abort()
        return False


class RowCache:
    """A published row cache, read in blocks (offsets checked on every read, indices once
    per block: they index the learner's weights in compiled code)."""

    def __init__(self, folder) -> None:
        self.folder = Path(folder)
        try:
            meta = json.loads((self.folder / "meta.json").read_text())
            self.task, self.names = meta["task"], list(meta["names"])
            self.n_rows, self.nnz = int(meta["n_rows"]), int(meta["nnz"])
            self.n_labels = int(meta["n_labels"])
            self.min_index, self.max_index = meta["min_index"], int(meta["max_index"])
            self.n_columns = int(meta["n_columns"])
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
            raise NBSVMError(f"unusable training cache ({e})", path=str(self.folder)) from None
        sizes: dict[str, tuple[type, int]] = {
            "indices.i64": (np.int64, self.nnz),
            "values.f64": (np.float64, self.nnz),
            "offsets.i64": (np.int64, self.n_rows + 1),
            COLUMNS: (np.int64, self.n_columns),
        }
        if self.task == "regression":
            sizes["targets.f64"] = (np.float64, self.n_rows)
        elif self.task == "multilabel":
            sizes.update(
                {
                    "label_offsets.i64": (np.int64, self.n_rows + 1),
                    "label_codes.i32": (np.int32, self.n_labels),
                }
            )
        else:
            sizes["codes.i32"] = (np.int32, self.n_rows)
        self._files = ArrayReader(self.folder, sizes, "training cache")
        self._checked: set = set()  # blocks whose indices were checked

    def close(self) -> None:
        self._files.close()

    def columns(self) -> np.ndarray:
        """The distinct indices stored, sorted."""
        columns = self._files.read(COLUMNS, 0, self.n_columns)
        if columns.size and (columns[0] < 0 or np.any(columns[1:] <= columns[:-1])):
            raise self._files.corrupted("its distinct indices are not increasing")
        return columns

    def compact(self) -> np.ndarray:
        """Renumber the stored indices as their positions in :meth:`columns`, in place
        (one pass over them; their rows and values stay as they are); returns the columns,
        whose position is now each feature's index. A stored index that is not among them
        (a cache changed since it was written) is an error."""
        columns = self.columns()
        with open(self.folder / "indices.i64", "r+b") as fh:
            fd = fh.fileno()
            for start in range(0, self.nnz, COMPACT_CHUNK):
                stored = self._files.read(
                    "indices.i64", start, min(self.nnz, start + COMPACT_CHUNK)
                )
                at = np.searchsorted(columns, stored)
                if np.any(at >= columns.size) or np.any(
                    columns[np.minimum(at, columns.size - 1)] != stored
                ):
                    raise self._files.corrupted("an index that is not among its distinct ones")
                os.pwrite(fd, at.astype(np.int64).data.cast("B"), start * 8)
            os.fsync(fd)
        self.min_index, self.max_index = 0, int(columns.size) - 1
        self._checked.clear()
        return columns

    def _check_codes(self, codes, name):
        if codes.size and (codes.min() < 0 or codes.max() >= len(self.names)):
            raise self._files.corrupted(f"{name} outside the {len(self.names)} labels")

    def labels(self, start: int, stop: int) -> np.ndarray | list[tuple]:
        """Labels of examples ``start..stop-1`` as the learner takes them (checked: one
        code per example, cheap next to the rows)."""
        read = self._files.read
        if self.task == "regression":
            return read("targets.f64", start, stop)
        names = np.asarray(self.names, dtype=object)
        if self.task == "multilabel":
            lo = self._files.offsets("label_offsets.i64", start, stop, self.n_labels, "examples")
            codes = read("label_codes.i32", int(lo[0]), int(lo[-1]))
            self._check_codes(codes, "label codes")
            lo = lo - lo[0]
            return [tuple(names[codes[a:z]]) for a, z in zip(lo[:-1], lo[1:])]
        codes = read("codes.i32", start, stop)
        self._check_codes(codes, "label codes")
        return names[codes]

    def _block(self, a, z, n_features, shift):
        """Rows ``a..z-1``: ``(indices - shift, values, offsets from 0, labels)``."""
        off = self._files.offsets("offsets.i64", a, z, self.nnz, "examples")
        indices = self._files.read("indices.i64", int(off[0]), int(off[-1]))
        if shift:
            indices -= shift
        key = (a, z, n_features, shift)
        if key not in self._checked:
            if check_ids(indices, n_features) >= 0:
                raise self._files.corrupted(
                    f"feature index outside [0, {n_features}) in rows {a}..{z - 1}"
                )
            self._checked.add(key)
        return (
            indices,
            self._files.read("values.f64", int(off[0]), int(off[-1])),
            off - off[0],
            self.labels(a, z),
        )

    def shuffled_blocks(
        self,
        rng: np.random.Generator | None,
        n_features: int,
        shift: int = 0,
        buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
        block_bytes: int = SHUFFLE_BLOCK_BYTES,
    ) -> Iterator[tuple[SparseRows, list | np.ndarray, np.ndarray]]:
        """One epoch: ``(rows, labels, order)`` per group of blocks, within ``buffer_bytes``.

        Consecutive examples form blocks of about ``block_bytes``; the blocks are visited in
        a random order, as many as fit the buffer are read together and their examples
        permuted. ``shift`` is subtracted from the stored indices (1-based files).
        """
        for bounds in block_groups(
            self.n_rows, 16 * self.nnz + 8 * self.n_rows, rng, buffer_bytes, block_bytes
        ):
            parts = [self._block(a, z, n_features, shift) for a, z in bounds]
            lengths = np.concatenate([np.diff(p[2]) for p in parts])
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            rows = SparseRows(
                np.concatenate([p[0] for p in parts]),
                np.concatenate([p[1] for p in parts]),
                offsets,
                n_features,
            )
            labels: list | np.ndarray
            if self.task == "multilabel":
                labels = [y for p in parts for y in p[3]]
            else:
                labels = np.concatenate([p[3] for p in parts])
            yield rows, labels, group_order(rng, len(rows))
