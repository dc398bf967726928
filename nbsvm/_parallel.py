"""Run a function over a few parts in threads (for compiled kernels that release the GIL)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np


def run_parts(work: Callable[[int], None], n_parts: int) -> None:
    """Call ``work(0) .. work(n_parts - 1)``: part 0 in the calling thread, the others in
    threads of their own; returns when all are done and re-raises the first error."""
    errors: list[BaseException] = []

    def guarded(i):
        try:
            work(i)
        except BaseException as e:  # re-raised in the caller below
            errors.append(e)

    workers = [threading.Thread(target=guarded, args=(i,)) for i in range(1, n_parts)]
    for w in workers:
        w.start()
    guarded(0)
    for w in workers:
        w.join()
    if errors:
        raise errors[0]


def two_ranges(n: int) -> np.ndarray:
    """Bounds splitting ``0..n`` in two, one range per thread (the kernels release the GIL)."""
    return np.linspace(0, n, 3).astype(np.int64)
