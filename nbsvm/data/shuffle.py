"""The out-of-core shuffle both caches share: blocks of consecutive rows visited in a
random order, as many as fit a fixed buffer read together, their rows permuted.

When everything fits the buffer this is a full random permutation; otherwise memory stays
at the buffer whatever the corpus (Bottou's svmsgd shuffles in memory; Vowpal Wabbit not at
all). The generator's draws are the same for both caches: one permutation of the blocks per
epoch, then one permutation of each group's rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from nbsvm.config import SHUFFLE_BLOCK_BYTES, SHUFFLE_BUFFER_BYTES

#: What a row of a group takes besides its ids: its offset, class code, visiting order,
#: the permutation drawn for it and its target (int64, int32, int64, int64, float64).
ROW_BYTES = 48


def block_groups(
    n_rows: int,
    total_bytes: int,
    rng: np.random.Generator | None,
    buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
    block_bytes: int = SHUFFLE_BLOCK_BYTES,
    row_bytes: int = ROW_BYTES,
) -> Iterator[list[tuple[int, int]]]:
    """One epoch's groups, each a list of row ranges ``(a, z)``: blocks of about
    ``block_bytes`` (a row taking ``total_bytes / n_rows``, or ``row_bytes`` where that is
    more: rows of almost no ids), in a random order (stored order with ``rng=None``), as
    many per group as fit ``buffer_bytes``.

    >>> list(block_groups(10, 40, None, buffer_bytes=1000, block_bytes=100))
    [[(0, 10)]]
    >>> groups = list(block_groups(1000, 0, None, buffer_bytes=4800, block_bytes=480))
    >>> len(groups), groups[0][:2]
    (10, [(0, 10), (10, 20)])
    """
    if n_rows == 0:
        return
    # (rows of no ids, a million empty documents, were one group of every row: memory grew
    # with the corpus, 35-43 bytes a document)
    total_bytes = max(total_bytes, n_rows * row_bytes)
    per_row = max(1.0, total_bytes / n_rows)
    block = n_rows if total_bytes <= buffer_bytes else max(1, int(block_bytes / per_row))
    starts = np.arange(0, n_rows, block, dtype=np.int64)
    per_group = max(1, int(buffer_bytes // max(1.0, per_row * block)))
    blocks = np.arange(len(starts)) if rng is None else rng.permutation(len(starts))
    for g in range(0, len(blocks), per_group):
        yield [
            (int(starts[b]), min(int(starts[b]) + block, n_rows)) for b in blocks[g : g + per_group]
        ]


def group_order(rng: np.random.Generator | None, n: int) -> np.ndarray:
    """The order a group's ``n`` rows are visited in (stored order with ``rng=None``)."""
    return np.arange(n, dtype=np.int64) if rng is None else rng.permutation(n).astype(np.int64)
