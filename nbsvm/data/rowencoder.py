"""Sparse-feature files as rows for the backend learners: which format a file is, its
records read in batches, and their encoding as CSR rows (integer indices kept; string
feature names hashed to ``2**n_bits`` columns with ``mmh3.hash(name, hash_seed,
signed=False) & (2**n_bits - 1)``, values of colliding names summed)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.config import DEFAULT_N_BITS, MAX_BITS, MAX_HASH_SEED, MIN_BITS
from nbsvm.errors import NBSVMError
from nbsvm.io.sparse import (
    SPARSE_FORMATS,
    detect_sparse_format,
    empty_label_set,
    read_blitzer,
    read_named,
    read_svmlight,
)

if TYPE_CHECKING:
    import os

    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.document import PathOrFile
    from nbsvm.io.sparse import SparseRow

BATCH_ROWS = 4096  # examples per streaming batch (cache writes, eval, predict)
#: feature values per streaming batch at most: wide rows cut a batch sooner (4,096 rows of
#: 100,000 features each would hold 6.5 GB as read, twice that encoded)
BATCH_ENTRIES = 1 << 20


def is_hashed(fmt: str) -> bool:
    return fmt in ("blitzer", "named")


def check_sparse_format(fmt: str) -> str:
    """``fmt``, when it names a sparse format or ``"auto"``; else an error naming them."""
    if fmt != "auto" and fmt not in SPARSE_FORMATS:
        raise NBSVMError(
            f"unknown sparse format {fmt!r}; allowed: auto, {', '.join(SPARSE_FORMATS)}"
        )
    return fmt


def file_format(path: str | os.PathLike[str], fmt: str = "auto", default: str | None = None) -> str:
    """``fmt`` unless ``"auto"``: then ``blitzer`` for ``*.review``, else ``default`` (a
    model's own format) or ``svmlight``."""
    if check_sparse_format(fmt) != "auto":
        return fmt
    detected = detect_sparse_format(path)
    return detected if detected == "blitzer" or default is None else default


def model_file_format(path: str | os.PathLike[str], fmt: str, trained: str) -> str:
    """:func:`file_format` of ``path`` for a model trained on ``trained`` files; refused
    where the one has integer indices and the other hashed names."""
    f = file_format(path, fmt, default=trained)
    if is_hashed(f) != is_hashed(trained):
        raise NBSVMError(
            f"the model was trained on {trained} files "
            f"({'hashed names' if is_hashed(trained) else 'integer indices'}); "
            f"cannot read this file as {f}",
            path=str(path),
        )
    return f


def _starts_with_label(text: str) -> bool | None:
    """Whether a line starts with a label (a token without ``:``, not a Vowpal Wabbit
    ``|f`` marker); None where it cannot tell: a blank, then a feature (svmlight's empty
    label set as scikit-learn writes it, or an unlabeled line indented)."""
    if empty_label_set(text):
        return None
    first = text.split()[0]
    return ":" not in first and not first.startswith("|")


def _first_told(lines) -> tuple[bool | None, bool]:
    """:func:`_starts_with_label` of the first line that tells (None if none does), and
    whether there was a line at all (not a comment)."""
    seen = False
    for text, _, _ in lines:
        seen = True
        told = _starts_with_label(text)
        if told is not None:
            return told, True
    return None, seen


def has_labels(path: PathOrFile, fmt: str) -> bool:
    """Whether to read the file as labeled: its first line that tells starts with a label
    (:func:`_starts_with_label`; lines that cannot tell, all of them: unlabeled);
    standard input's first lines are looked at in its buffer."""
    if fmt == "blitzer":
        return False  # #label# is optional then, and kept when present
    from nbsvm.io.sparse import _lines

    if path == "-":  # its first lines, looked at in the buffer without consuming it
        import io
        import sys

        from nbsvm.io.decoding import _peek

        head = _peek(sys.stdin.buffer)  # one buffer: the first lines, the last maybe cut
        # its whole lines decide (a cut '34:1' is '34'); where it holds none, its first
        # line as it is (a stream of one line without its end, a line longer than it)
        whole = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1] or head
        told, seen = _first_told(_lines(io.BytesIO(whole), comments=fmt != "named"))
        if told is not None or seen:  # (lines that cannot tell, all of them: unlabeled)
            return bool(told)
        if head.strip():
            raise NBSVMError(
                "cannot tell from standard input whether its lines start with a label (no "
                f"example in its first {len(head):,} bytes); give a file",
                path="<stdin>",
            )
        return False  # nothing to read: no examples either way

    return bool(_first_told(_lines(path, comments=fmt != "named"))[0])


def read_rows(
    path: PathOrFile,
    fmt: str,
    labeled: bool = True,
    index_base: int | str = 0,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
    spellings: dict | None = None,
    targets: bool = False,
    label_sets: bool = False,
) -> Iterator[SparseRow]:
    """The reader of ``fmt`` over ``path``; ``strict`` refuses invalid bytes, ``stats`` (a
    :class:`~nbsvm.io.readers.ReadStats`) counts what was replaced; ``encoding``: an
    ASCII-compatible codec for the feature names; ``spellings``, ``targets``: svmlight's
    number labels as first written, or regression targets
    (:func:`~nbsvm.io.sparse.read_svmlight`); ``label_sets``: a multi-label task (a named
    file's ``a,b`` is then a set; svmlight's always is)."""
    if fmt == "svmlight":
        return read_svmlight(
            path,
            index_base=index_base,
            labeled=labeled,
            strict=strict,
            stats=stats,
            encoding=encoding,
            spellings=spellings,
            targets=targets,
        )
    if fmt == "blitzer":
        return read_blitzer(path, labeled, strict, stats, encoding, spellings, targets)
    return read_named(path, labeled, strict, stats, encoding, spellings, targets, label_sets)


class RowEncoder:
    """Turns reader records into CSR arrays: hashes string keys, sums duplicate columns,
    and (for prediction) drops integer indices the model has never seen; with ``columns``
    (a model's ``columns_``: the sorted feature indices of its weights), each index becomes
    its position among them, and one not among them is dropped (it weighs 0)."""

    def __init__(
        self,
        fmt: str,
        n_bits: int = DEFAULT_N_BITS,
        hash_seed: int = 0,
        n_features: int | None = None,
        columns: np.ndarray | None = None,
    ):
        self.fmt = fmt
        self.hashed = is_hashed(fmt)
        if self.hashed and not (MIN_BITS <= int(n_bits) <= MAX_BITS):
            raise NBSVMError(f"n_bits must be in {MIN_BITS}..{MAX_BITS}, got {n_bits}")
        if (
            not 0 <= int(hash_seed) <= MAX_HASH_SEED
        ):  # svmlight's too: its model file would not load
            raise NBSVMError(f"hash seed must be an integer in [0, 2**32), got {hash_seed!r}")
        self.n_bits, self.hash_seed = int(n_bits), int(hash_seed)
        self.mask = (1 << self.n_bits) - 1
        self.n_features = (1 << self.n_bits) if self.hashed else n_features
        self.columns = columns
        self.dropped = 0  # feature values past n_features (prediction), and their rows
        self.dropped_rows = 0

    def encode(self, records: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(indices, values, offsets)`` of ``records``, columns sorted within each row."""
        lengths = np.fromiter((len(r.values) for r in records), dtype=np.int64, count=len(records))
        offsets = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if not records or offsets[-1] == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64), offsets
        values = np.concatenate([r.values for r in records]).astype(np.float64, copy=False)
        if self.hashed:
            import mmh3

            h, seed = mmh3.hash, self.hash_seed
            indices = (
                np.fromiter(
                    (h(k, seed, signed=False) for r in records for k in r.keys),
                    dtype=np.int64,
                    count=int(offsets[-1]),
                )
                & self.mask
            )
        else:
            indices = np.concatenate([r.keys for r in records]).astype(np.int64, copy=False)
        rows = np.repeat(np.arange(len(records)), lengths)
        if not self.hashed and self.n_features is not None:  # unseen in training: weight 0
            keep = indices < self.n_features
            if not keep.all():
                self.dropped += int((~keep).sum())
                self.dropped_rows += len(np.unique(rows[~keep]))
                rows, indices, values = rows[keep], indices[keep], values[keep]
        if self.columns is not None:  # positions keep the order: sorting below is the same
            rows, indices, values = _among(self.columns, rows, indices, values)
        order = np.lexsort((indices, rows))
        rows, indices, values = rows[order], indices[order], values[order]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]) | (indices[1:] != indices[:-1])
        starts = np.flatnonzero(first)
        if len(starts) < len(rows):  # colliding keys: sum values
            values = np.add.reduceat(values, starts)
            rows, indices = rows[starts], indices[starts]
        offsets = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(records)), out=offsets[1:])
        return indices, values, offsets


def _among(
    columns: np.ndarray, rows: np.ndarray, indices: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries whose index is one of the sorted ``columns``, the index replaced by its
    position there."""
    at = np.searchsorted(columns, indices)
    found = at < columns.size
    found[found] = columns[at[found]] == indices[found]
    return rows[found], at[found].astype(np.int64), values[found]


def batches(items: Iterable, size: int = BATCH_ROWS) -> Iterator[list]:
    """``items`` in lists of ``size``."""
    return _cut(items, size, lambda item: 0, 1)


def row_batches(
    rows: Iterable[SparseRow], size: int = BATCH_ROWS, entries: int = BATCH_ENTRIES
) -> Iterator[list]:
    """Sparse ``rows`` in lists of ``size``, or fewer where they reach ``entries`` feature
    values (a row wider than that is a list of its own)."""
    return _cut(rows, size, lambda row: len(row.keys), entries)


def _cut(items: Iterable, size: int, width: Callable[[Any], int], entries: int):
    batch: list = []
    held = 0
    for item in items:
        batch.append(item)
        held += width(item)
        if len(batch) == size or held >= entries:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch
