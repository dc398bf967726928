"""Small jobs without the compiled kernels.

Importing numba and loading the first cached kernel costs 0.4-0.6 s per process, more than
the rest of ``nbsvm predict`` on ten documents. So the kernels load on first use, and until
they are loaded a process hashes, translates and scores its first :data:`PLAIN_BYTES` in
plain Python and numpy instead: the same ids (``mmh3``, the definition the kernels match)
and the same scores, bit for bit (sums in the kernels' order). Past that budget, or once
anything has loaded numba, the kernels run.
"""

from __future__ import annotations

import sys
import threading

#: work (bytes of text scaled by the keys they make, and bytes of bucket ids translated and
#: scored) a process does without the kernels, in all: about 115 IMDB reviews for a default
#: model (8.8 KB of work each), 0.1 s; numba's start-up and the first kernel's load take
#: 0.4-1.3 s. (256 KB, 30 reviews, sent ten long reviews to numba once character 4-grams
#: doubled their keys: a model of a small corpus has them.)
PLAIN_BYTES = 1 << 20

_spent = 0
_lock = threading.Lock()
_hash_plain = False


def hash_in_plain_python(on: bool = True) -> None:
    """Hash every text in plain Python from here on, whatever its size and numba's state
    (``on=False``: as the budget says). The process that compiles a first run's later
    kernels ahead (:mod:`nbsvm.workflows.compile_ahead`) hashes so: it must not compile
    the hashing kernel its parent is compiling at the same time."""
    global _hash_plain
    _hash_plain = on


def plain_hashing(n_bytes: int) -> bool:
    """Whether to hash ``n_bytes`` of work in plain Python: :func:`plain`, or
    :func:`hash_in_plain_python` said so."""
    return _hash_plain or plain(n_bytes)


def plain(n_bytes: int) -> bool:
    """Whether to do ``n_bytes`` of work in plain Python (counted against the budget):
    numba is not loaded yet and the work so far stays within :data:`PLAIN_BYTES`."""
    global _spent
    with _lock:
        if "numba" in sys.modules or _spent + n_bytes > PLAIN_BYTES:
            return False
        _spent += n_bytes
        return True
