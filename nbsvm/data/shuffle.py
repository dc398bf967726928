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


def block_groups(
    n_rows: int,
    total_bytes: int,
    rng: np.random.Generator | None,
    buffer_bytes: int = SHUFFLE_BUFFER_BYTES,
    block_bytes: int = SHUFFLE_BLOCK_BYTES,
) -> Iterator[list[tuple[int, int]]]:
    """One epoch's groups, each a list of row ranges ``(a, z)``: blocks of about
    ``block_bytes`` (a row taking ``total_bytes / n_rows``), in a random order (stored
    order with ``rng=None``), as many per group as fit ``buffer_bytes``."""
    if n_rows == 0:
        return
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
