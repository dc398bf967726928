"""Memory prefetch for the kernels' example loop: examples are visited in a random order,
so each one's row, offset and label are a cache miss away; the kernels ask for them ahead
(a hint only, results do not change). :func:`_prefetch_example` serves explicit rows,
:func:`_prefetch_next_rows` NBSVM's table rows.
"""

from __future__ import annotations

from numba import njit

from nbsvm._prefetch import prefetch_row

# Examples are visited in a random order, so each one's row, offset and label are a
# cache miss away; the kernels ask for them ahead (``_prefetch_example``): the offset and
# label a few examples ahead, the row of the next example (whose offset has arrived by then).
# On an RCV1-shaped corpus this makes an epoch about 3x faster (pipelines/rcv1.py).
OFFSETS_AHEAD = 6


@njit(cache=True, nogil=True, inline="always")
def _prefetch_example(indices, values, offsets, y, order, k):
    """Prefetch what step ``k + 1`` (row) and step ``k + OFFSETS_AHEAD`` (offset, label)
    will read; a hint only, results do not change."""
    n = order.shape[0]
    if k + OFFSETS_AHEAD < n:
        ahead = order[k + OFFSETS_AHEAD]
        prefetch_row(offsets, ahead)
        prefetch_row(y, ahead)
    if k + 1 < n:
        d = order[k + 1]
        for j in range(offsets[d], offsets[d + 1], 8):  # 8 entries per cache line
            prefetch_row(indices, j)
            prefetch_row(values, j)


TABLE_PREFETCH = 32  # table rows: state rows prefetched this many non-zeros ahead


@njit(cache=True, nogil=True, inline="always")
def _prefetch_next_rows(ids, offsets, order, k, S):
    """Table rows, while example ``order[k - 1]`` updates: prefetch the state rows of the
    first ids of example ``order[k]``, the ids of ``order[k + 1]`` and the offset of
    ``order[k + 4]`` (examples come in random order, so each is a cache miss away)."""
    n = order.shape[0]
    if k + 4 < n:
        prefetch_row(offsets, order[k + 4])
    if k + 1 < n:
        d = order[k + 1]
        for j in range(offsets[d], min(offsets[d + 1], offsets[d] + 2 * TABLE_PREFETCH), 16):
            prefetch_row(ids, j)  # 16 int32 ids per cache line
    if k < n:
        d = order[k]
        lo = offsets[d]
        hi = min(offsets[d + 1], lo + TABLE_PREFETCH)
        for j in range(lo, hi):
            prefetch_row(S, ids[j])
