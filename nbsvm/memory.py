"""How much memory training will take, checked before anything large is allocated.

State is sized by ``2**n_bits``, never by the corpus, so the need is known from the settings:
the lexicon pass counts documents per class and bucket (int32, two rows to start), then the
learner keeps one row of ``W`` float32 per kept bucket and output (``W`` = 4 for AdaGrad, 2
for SGD) beside the int32 bucket-to-column map. Before reading, every bucket is assumed
kept (an upper bound); when the lexicon pass is done the kept buckets are known and the
check is repeated with the exact figure.
"""
from __future__ import annotations

import re

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


def fit_bytes(n_bits: int, n_outputs: int = 1, optimizer: str = "adagrad",
              n_columns: int | None = None, n_classes: int = 2) -> int:
    """Peak bytes of training: the larger of the lexicon pass (``n_classes`` int32 count
    rows) and the epochs (the bucket map plus ``n_outputs`` state rows per column; every
    bucket when ``n_columns`` is not known yet), plus :data:`FIXED_BYTES`.

    Examples
    --------
    >>> human(fit_bytes(24))                       # before reading: every bucket kept
    '520.0 MB'
    >>> human(fit_bytes(24, n_columns=1_100_000))  # after the lexicon pass (IMDB trigrams)
    '328.0 MB'
    """
    buckets = 1 << int(n_bits)
    width = 16 if optimizer == "adagrad" else 8
    columns = buckets if n_columns is None else int(n_columns)
    counting = max(2, n_classes) * buckets * 4
    epochs = buckets * 4 + n_outputs * columns * width
    return FIXED_BYTES + max(counting, epochs)


def check_fit_memory(needed: int, max_memory=None, what: str = "training") -> None:
    """Refuse, saying what to change, when ``needed`` bytes exceed ``max_memory`` (bytes or
    a size string) or the memory available on this machine."""
    if max_memory is not None:
        limit = parse_size(max_memory)
        if needed > limit:
            raise NBSVMError(f"{what} needs about {human(needed)}, over --max-memory "
                             f"{human(limit)}: lower --n-bits (one bit less halves the "
                             "hashed state) or raise the limit")
    available = available_bytes()
    if available is not None and needed > available:
        raise NBSVMError(f"{what} needs about {human(needed)} but only {human(available)} "
                         "is available: lower --n-bits (one bit less halves the hashed state)")
