"""How much memory training will take, checked before each large allocation.

State is sized by ``2**n_bits``, the kept buckets and the classes, never by the corpus, so
each stage's need is known before it allocates, and each is checked then:

1. before reading: the trainer's hashing pass counts two classes in two int32 rows of
   ``2**n_bits``; from a third class on, each bucket's documents in the first row only
   (:func:`hashing_bytes`);
2. after it, with the classes and kept buckets known exactly, before anything else is
   allocated (:func:`fit_bytes`): the bucket -> column map (that row, rewritten), each
   class's int32 counts by kept column, and the learner (``W`` = 12 bytes per kept bucket
   and output for AdaGrad, 8 for SGD);
3. :class:`~nbsvm.lexicon.nblexicon.NBLexicon` (``nbsvm lexicon``, ``--lexicon``) counts sparse
   (bucket, class) pairs: its memory follows the pairs the corpus holds, 12 bytes each
   (:mod:`nbsvm.lexicon.paircounts`), never classes x ``2**n_bits``.

Every figure includes :data:`FIXED_BYTES` for the interpreter, numba's kernels and the
buffers in flight.
"""

from __future__ import annotations

import mmap
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np

from nbsvm.errors import NBSVMError

# interpreter, numba and its kernels, pandas, the reader and hasher threads' batches, the
# 16 MB shuffle groups and a test set hashed alongside: measured 210-230 MB on IMDB
FIXED_BYTES = 240 << 20

# columns whose contributions are ranked at a time (nbsvm.evaluation.bucket_names)
STRONGEST_PART = 1 << 18

# arrays smaller than this stay in memory when a model is spilled (:func:`spilled`)
SPILL_MIN_BYTES = 1 << 20

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str | int | float) -> int:
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


#: where the kernel mounts the cgroup hierarchies, and where it names this process's groups
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
# a cgroup v1 limit at or above this is the kernel's "no limit" (2**63 - 1, page-rounded)
_NO_LIMIT = 1 << 62


def available_bytes() -> int | None:
    """The memory this process may still take: ``MemAvailable`` of ``/proc/meminfo`` (Linux),
    or less where a memory cgroup leaves less (:func:`cgroup_headroom`); None where neither
    can be read."""
    figures = [x for x in (_meminfo_available(), cgroup_headroom()) if x is not None]
    return min(figures) if figures else None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def cgroup_headroom(root: Path | None = None, proc_cgroup: Path | None = None) -> int | None:
    """Bytes left under the tightest memory limit of this process's cgroups and their
    ancestors (a container's ``--memory``, a systemd slice's ``MemoryMax``): the limit less
    what the group holds beyond the page cache the kernel can drop (its file cache less
    shared memory and dirty pages), cgroup v2 and v1 alike; None where no limit is set or none can be read. ``/proc/meminfo`` knows
    nothing of these limits: without them a run the machine could hold is killed by the
    kernel without a word. ``root`` and ``proc_cgroup`` default to :data:`CGROUP_ROOT` and
    :data:`PROC_CGROUP`."""
    root = CGROUP_ROOT if root is None else Path(root)
    try:
        lines = Path(PROC_CGROUP if proc_cgroup is None else proc_cgroup).read_text().splitlines()
    except OSError:
        return None
    figures = []
    try:
        for line in lines:
            number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
            if number == "0" and not controllers:  # v2: alone, or beside v1 as "unified"
                mount = root if (root / "cgroup.controllers").exists() else root / "unified"
                figures.append(_least_headroom(mount, path, V2_FILES))
            elif "memory" in controllers.split(","):
                figures.append(_least_headroom(root / "memory", path, V1_FILES))
    except OSError:  # a folder it may not look into, a name too long: no figure from it
        pass
    kept = [x for x in figures if x is not None]
    return min(kept) if kept else None


# a group's limit, usage, and the memory.stat keys of its page cache, of the shared memory
# and of the dirty pages in it: the cache less those two is what the kernel drops before
# it kills (a corpus just read sits there: counting its inactive part only refused runs)
V2_FILES = ("memory.max", "memory.current", ("file", "shmem", "file_dirty"))
V1_FILES = (
    "memory.limit_in_bytes",
    "memory.usage_in_bytes",
    ("total_cache", "total_shmem", "total_dirty"),
)


def _least_headroom(mount: Path, path: str, files: tuple) -> int | None:
    """The least headroom of the group at ``mount``/``path`` and its ancestors up to
    ``mount``. A path the mount does not hold (a container sees its own group as the
    mount's root, named by the host's path) is the mount's root."""
    group = mount / path.strip("/")
    if not group.is_dir():
        group = mount
    least = None
    while True:
        headroom = _group_headroom(group, *files)
        if headroom is not None:
            least = headroom if least is None else min(least, headroom)
        if group == mount or group.parent == group:
            return least
        group = group.parent


def _group_headroom(
    group: Path, limit_file: str, usage_file: str, cache_keys: tuple[str, str, str]
) -> int | None:
    try:
        limit = (group / limit_file).read_text().strip()
        if limit == "max" or int(limit) >= _NO_LIMIT:
            return None
        usage = int((group / usage_file).read_text())
    except (OSError, ValueError):
        return None
    stat: dict[str, int] = {}
    try:
        for line in (group / "memory.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key in cache_keys:
                stat[key] = int(value)
    except (OSError, ValueError):
        stat = {}
    cache, shared, dirty = (stat.get(k, 0) for k in cache_keys)
    dropped = max(cache - shared - dirty, 0)
    return max(int(limit) - max(usage - dropped, 0), 0)


def hashing_bytes(n_bits: int) -> int:
    """Peak bytes of the trainer's hashing pass: two int32 rows of ``2**n_bits`` (the
    counts of two classes; from a third class on, the first row counts each bucket's
    documents and the second is released), plus :data:`FIXED_BYTES`.

    >>> human(hashing_bytes(24))
    '368.0 MB'
    """
    return FIXED_BYTES + 2 * (1 << int(n_bits)) * 4


#: Scratch bytes hashing one document takes per byte of its UTF-8 text (its n-gram ids,
#: the set that keeps them distinct, the normalized copy; the text itself is held as a str
#: and as bytes): 18 measured on one 6 MB line with character 4-grams, whole process.
SCRATCH_PER_BYTE = 20
#: Documents below this are not checked (a batch of them fits the fixed bytes).
CHECKED_DOCUMENT_BYTES = 1 << 20


#: ``--max-memory`` of this run less :data:`FIXED_BYTES` (:func:`set_budget`): what the
#: longest line read may take to hash (:func:`reading_bytes`); None: the memory available.
_BUDGET: int | None = None


def set_budget(max_memory: int | str | None) -> None:
    """Bound the lines this process reads by ``--max-memory`` (None: by the memory
    available alone): a line longer than it could be hashed in is refused as it is read,
    not after it was held whole (a 300 MB line took 1.4 GB under --max-memory 600M)."""
    global _BUDGET
    _BUDGET = None if max_memory is None else max(0, parse_size(max_memory) - FIXED_BYTES)


def reading_budget() -> int | None:
    """The budget :func:`set_budget` set (None: none)."""
    return _BUDGET


def reading_bytes() -> int | None:
    """What hashing the longest line read may take: the memory available, within the
    budget of :func:`set_budget`; None where neither is known."""
    available = available_bytes()
    if _BUDGET is None or available is None:
        return available if _BUDGET is None else _BUDGET
    return min(available, _BUDGET)


def check_document_bytes(n_bytes: int, max_memory: int | str | None = None) -> str | None:
    """Why one document of ``n_bytes`` (UTF-8) cannot be hashed within ``max_memory``
    (beside :data:`FIXED_BYTES`), or the memory available; None if it can. Memory grows
    with the longest document, not the corpus: a 54 MB line took 870 MB."""
    if n_bytes < CHECKED_DOCUMENT_BYTES:
        return None
    needed = SCRATCH_PER_BYTE * n_bytes
    if max_memory is not None:
        limit = parse_size(max_memory)
        if needed > limit - FIXED_BYTES:
            over = f"--max-memory {human(limit)} beside the {human(FIXED_BYTES)} a run holds"
            return _too_long(n_bytes, needed, over)
    available = available_bytes()
    if available is not None and needed > available:
        return _too_long(n_bytes, needed, "the memory available")
    return None


def _too_long(n_bytes: int, needed: int, over: str) -> str:
    return (
        f"a document of {human(n_bytes)}: hashing it needs about {human(needed)} "
        f"({SCRATCH_PER_BYTE} bytes a byte), over {over}: split it into documents"
    )


def row_width(optimizer: str) -> int:
    """Bytes of learner state per column and output: value, weight and (AdaGrad) the
    squared-gradient sum, float32 each."""
    return 12 if optimizer == "adagrad" else 8


def fit_bytes(
    n_bits: int,
    n_outputs: int = 1,
    optimizer: str = "adagrad",
    n_columns: int | None = None,
    n_classes: int = 2,
    cache_bytes: int = 0,
    column_map: bool = True,
    by_column: bool = True,
    best_copy: bool = False,
) -> int:
    """Peak bytes of training once the hashing pass is done, plus :data:`FIXED_BYTES`:
    the int32 bucket -> column map (``column_map``; none when every bucket is its own
    column) and ``n_outputs`` learner rows per column (``n_columns``; every bucket when not
    known) throughout; the feature cache's pages as the epochs map them (``cache_bytes``);
    and the larger of the two classes' int32 counts by kept column (``by_column``: counted
    from a cache and held while the ratios are filled in; with more classes they are
    counted in the learner's weight field; counts by bucket are the caller's to add) and
    the bitmap and float32 parts that name the strongest n-grams for explanations (beside
    the last epoch); with ``best_copy`` (early stopping), the best epoch's weights kept
    beside the learner's.

    Examples
    --------
    >>> human(fit_bytes(24, n_columns=1_100_000))  # IMDB trigrams (measured: 300-307 MB)
    '325.0 MB'
    >>> human(fit_bytes(24, n_columns=1 << 24, column_map=False, by_column=False))  # 1M (402)
    '436.0 MB'
    >>> human(fit_bytes(24, 20, "sgd", n_columns=1_082_931, n_classes=20))  # 20NG (499 MB)
    '471.4 MB'
    """
    buckets = 1 << int(n_bits)
    width = row_width(optimizer)
    columns = buckets if n_columns is None else int(n_columns)
    counts = 2 * columns * 4 if int(n_classes) <= 2 and by_column else 0
    contributions = columns // 8 + 2 * 4 * min(columns, STRONGEST_PART)
    return (
        FIXED_BYTES
        + buckets * 4 * bool(column_map)
        + int(n_outputs) * columns * width
        + (int(n_outputs) * columns * (width - 4) if best_copy else 0)  # all but the ratio
        + int(cache_bytes)
        + max(counts, contributions)
    )


def array_bytes(*objects: object) -> int:
    """Bytes of the numpy arrays among the attributes of ``objects`` (one level down)."""
    total = 0
    for obj in objects:
        for value in vars(obj).values():
            if isinstance(value, np.ndarray):
                total += value.nbytes
    return total


def check_fit_memory(
    needed: int,
    max_memory: int | str | None = None,
    what: str = "training",
    more: int | None = None,
    advice: str = "lower --n-bits (one bit less halves the hashed state)",
) -> None:
    """Refuse, saying what to change (``advice``), when ``needed`` bytes (the process's
    peak) exceed ``max_memory`` (bytes or a size string), or when the bytes about to be
    allocated (``more``; default ``needed``: nothing is held yet) exceed the memory
    available on this machine."""
    if max_memory is not None:
        limit = parse_size(max_memory)
        if needed > limit:
            advice = (
                "lower --n-bits (one bit less halves the hashed state) or raise the limit"
                if limit > FIXED_BYTES
                else f"raise the limit: any run takes about {human(FIXED_BYTES)} for the "
                "interpreter and the compiled kernels"
            )
            raise NBSVMError(
                f"{what} needs about {human(needed)}, over --max-memory {human(limit)}: {advice}"
            )
    more = needed if more is None else more
    available = available_bytes()
    if available is not None and more > available:
        extra = " more" if more != needed else ""
        raise NBSVMError(
            f"{what} needs about {human(more)}{extra} but only {human(available)} "
            f"is available: {advice}"
        )


def releasable_int32(shape: int | tuple[int, ...]) -> tuple[mmap.mmap, np.ndarray]:
    """A zeroed int32 array in anonymous memory whose pages can be handed back to the OS
    piece by piece (``mm.madvise(mmap.MADV_DONTNEED, start, length)``; they read as zeros
    afterwards). Private: a shared mapping (mmap's default) would only unmap such pages
    from the process, their memory still held."""
    n = int(np.prod(shape)) * 4
    mm = mmap.mmap(-1, max(n, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return mm, np.frombuffer(mm, dtype=np.int32, count=n // 4).reshape(shape)


def advise_huge_pages(mm: mmap.mmap, n_ids: int, n_counters: int) -> bool:
    """Ask for huge pages (where the OS gives them on request, as numpy asks for its large
    arrays) for ``mm``'s counters, about to be incremented at random, when the first
    ``n_ids`` increments are at least one for each 4 KB page of ``n_counters`` int32 (then
    the corpus touches every page anyway). On 4 KB pages nearly every increment missed the
    TLB (counting IMDB's 16 million n-grams into 2**24 buckets: 0.35 s, 0.18 s on 2 MB
    pages); for a smaller corpus a 2 MB page made resident for one count doubled the peak
    (40 documents at 2**26 buckets: 480 MB, 940 on huge pages). Returns whether asked."""
    if not hasattr(mmap, "MADV_HUGEPAGE") or n_ids * 1024 < n_counters:
        return False
    with suppress(OSError):  # a kernel without them: EINVAL
        mm.madvise(mmap.MADV_HUGEPAGE)
        return True
    return False


def _unshared(value: np.ndarray) -> bool:
    """Whether only the attribute holding ``value`` refers to it and to the memory under it
    (the arrays or buffer it is a view of)."""
    # references: the attribute, the caller's and this function's names, getrefcount's
    if sys.getrefcount(value) > 4:
        return False
    base = value.base
    while base is not None:
        # references: the view's ``base``, this name and getrefcount's argument
        if sys.getrefcount(base) > 3:
            return False
        base = getattr(base, "base", None)
    return True


@contextmanager
def spilled(*objects: object) -> Iterator[int]:
    """While the block runs, the large numpy arrays among the attributes of ``objects`` (one
    level down, :data:`SPILL_MIN_BYTES` and over) live in a temporary file, not in memory,
    and are read back after it: room for a second model trained meanwhile (the held-out copy
    of ``calibrate='auto'``) at the cost of writing and reading them once. Inside the block
    the attributes are read-only memory maps. Yields the bytes moved.

    Only arrays that nothing else refers to move (no view of them, no second name): one
    that is shared would stay in memory through its other references, and reading it back
    would part the two."""
    folder = Path(tempfile.mkdtemp(prefix="nbsvm-spill-"))
    moved: list[tuple[object, str, Path]] = []
    try:
        for n, obj in enumerate(objects):
            for name in list(vars(obj)):
                value = getattr(obj, name)
                if (
                    isinstance(value, np.ndarray)
                    and value.nbytes >= SPILL_MIN_BYTES
                    and _unshared(value)
                ):
                    path = folder / f"{n}-{len(moved)}.npy"
                    np.save(path, value, allow_pickle=False)
                    setattr(obj, name, np.load(path, mmap_mode="r", allow_pickle=False))
                    moved.append((obj, name, path))
            value = None
        yield sum(path.stat().st_size for _, _, path in moved)
    finally:
        for obj, name, path in moved:
            setattr(obj, name, np.load(path, allow_pickle=False))
        shutil.rmtree(folder, ignore_errors=True)
