"""How much memory training will take, checked before each large allocation.

State is sized by ``2**n_bits`` and the classes, never by the corpus, so each stage's need
is known before it allocates, and each is checked then, with what is known by then:

1. before reading: the lexicon pass counts documents per class and bucket in int32 rows,
   room for two classes (:func:`lexicon_bytes` with 2 classes);
2. during the pass, before each new class gets its count row (:func:`lexicon_bytes`, and
   the one row against the memory available); so a run with 20 classes stops at the class
   that would cross ``--max-memory``, not after the pass;
3. after the pass, with the classes and the kept buckets known exactly, before the learner
   is allocated (:func:`fit_bytes`): the count rows are still held while the learner's
   rows (``W`` = 16 bytes per kept bucket and output for AdaGrad, 8 for SGD) and the int32
   bucket-to-column map are filled; the counts are freed before the epochs.

Every figure includes :data:`FIXED_BYTES` for the interpreter, numba's kernels and the
buffers in flight.
"""
from __future__ import annotations

import mmap
import re

import numpy as np

from .errors import NBSVMError

# interpreter, numba and its kernels, batch buffers and the 16 MB shuffle groups in flight
FIXED_BYTES = 200 << 20

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text) -> int:
    """Bytes from ``"512M"``, ``"2G"``, ``"1.5GB"``, ``"300000000"`` (binary units).

    Examples
    --------
    >>> parse_size("2G"), parse_size("512MB"), parse_size(1000)
    (2147483648, 536870912, 1000)
    """
    if isinstance(text, (int, float)) and text > 0:
        return int(text)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)B?\s*", str(text), re.IGNORECASE)
    if not m or float(m.group(1)) <= 0:
        raise NBSVMError(f"bad memory size {text!r}: use a number with K, M, G or T, e.g. 2G")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def human(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def available_bytes() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` (Linux); None where it cannot be read."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def lexicon_bytes(n_bits: int, n_classes: int = 2) -> int:
    """Peak bytes of the lexicon pass: one int32 count row of ``2**n_bits`` per class
    (room for two from the start), plus :data:`FIXED_BYTES`.

    >>> human(lexicon_bytes(24)), human(lexicon_bytes(24, 20))
    ('328.0 MB', '1.4 GB')
    """
    return FIXED_BYTES + max(2, int(n_classes)) * (1 << int(n_bits)) * 4


def fit_bytes(n_bits: int, n_outputs: int = 1, optimizer: str = "adagrad",
              n_columns: int | None = None, n_classes: int = 2) -> int:
    """Peak bytes of training once the lexicon pass is done: the count rows of
    ``n_classes`` (still held while the learner is filled), the int32 bucket-to-column map
    (with two classes it overwrites a count row), and ``n_outputs`` learner rows per kept
    column (``n_columns``; every bucket when not known), plus :data:`FIXED_BYTES`.

    Examples
    --------
    >>> human(fit_bytes(24, n_columns=1_100_000))  # IMDB trigrams
    '344.8 MB'
    >>> human(fit_bytes(24, 20, n_columns=1_082_931, n_classes=20))   # 20 Newsgroups
    '1.8 GB'
    """
    buckets = 1 << int(n_bits)
    width = 16 if optimizer == "adagrad" else 8
    columns = buckets if n_columns is None else int(n_columns)
    counting = max(2, int(n_classes)) * buckets * 4
    column_map = 0 if n_classes <= 2 else buckets * 4
    return FIXED_BYTES + counting + column_map + int(n_outputs) * columns * width


def check_fit_memory(needed: int, max_memory=None, what: str = "training",
                     more: int | None = None) -> None:
    """Refuse, saying what to change, when ``needed`` bytes (the process's peak) exceed
    ``max_memory`` (bytes or a size string), or when the bytes about to be allocated
    (``more``; default ``needed``: nothing is held yet) exceed the memory available on this
    machine."""
    if max_memory is not None:
        limit = parse_size(max_memory)
        if needed > limit:
            raise NBSVMError(f"{what} needs about {human(needed)}, over --max-memory "
                             f"{human(limit)}: lower --n-bits (one bit less halves the "
                             "hashed state) or raise the limit")
    more = needed if more is None else more
    available = available_bytes()
    if available is not None and more > available:
        extra = " more" if more != needed else ""
        raise NBSVMError(f"{what} needs about {human(more)}{extra} but only {human(available)} "
                         "is available: lower --n-bits (one bit less halves the hashed state)")


def releasable_int32(shape) -> tuple[mmap.mmap, np.ndarray]:
    """A zeroed int32 array in anonymous memory whose pages can be handed back to the OS
    piece by piece (``mm.madvise(mmap.MADV_DONTNEED, start, length)``)."""
    n = int(np.prod(shape)) * 4
    mm = mmap.mmap(-1, max(n, 1))
    return mm, np.frombuffer(mm, dtype=np.int32, count=n // 4).reshape(shape)
