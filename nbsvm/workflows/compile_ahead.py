"""A first run's later kernels compiled ahead, by a second process.

Where numba's cache is empty (a fresh install), ``nbsvm train`` compiles every kernel it
runs, one after the other: the hashing kernel first (5 s on a 2-core AMD EPYC), then
counting, the epochs, naming the strongest n-grams and scoring (9 s more), while the
second core idles. :func:`start` runs this module beside it (and beside ``nbsvm lexicon``,
the first of ``make imdb``'s commands): a process that trains tiny models with the same
settings through the same code, so that it compiles the later kernels with the types the
real run gives them, into the cache both processes share, while the first process
compiles the hashing kernel. The first then loads what it finds
there (numba writes each cache file whole, under a temporary name). The tiny models hash
in plain Python (:func:`nbsvm._small_jobs.hash_in_plain_python`): the second process
never compiles the hashing kernel its parent is compiling. Nothing it does is needed: a
kernel it has not compiled in time, the parent compiles itself, as before.
``NBSVM_COMPILE_AHEAD=0`` turns it off; so do one core and ``NUMBA_DISABLE_JIT``.

``python -m nbsvm.workflows.compile_ahead --defaults`` (:func:`compile_defaults`, run by
``make install``) compiles the default settings' kernels before any run.

This module imports nothing heavy until its process runs (the command line imports it).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: the cache index of the kernel every training runs, whose presence says the cache is warm
_PROBE = "table._adagrad_epoch-*.nbi"
_WORDS = "good fun film bad dull plot great acting awful mess".split()
#: the tiny models' hash space at most: the kernels' types do not depend on it, their memory
#: does (a 2**31-bucket model would take 8.7 GB and a minute beside the real training)
TINY_BITS = 16
_OFF = {"0", "false", "no", "off"}
#: the processes started (a Popen dropped while its process runs is a ResourceWarning)
_started: list[subprocess.Popen] = []


def cache_folders() -> list[Path]:
    """Where numba keeps the training kernels' cache, found without importing numba:
    ``$NUMBA_CACHE_DIR``'s folder for them, else beside the package's sources or, where
    those are read-only, the user's cache folder (numba's own rule: the source folder's
    name and the SHA-1 of its path)."""
    # as numba names it: the path the module was imported by, made absolute, links kept
    source = Path(os.path.abspath(__file__)).parents[1] / "learners" / "kernels"
    hashed = f"{source.name}_{hashlib.sha1(str(source).encode()).hexdigest()}"
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        return [Path(root) / hashed]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    return [source / "__pycache__", user / hashed]


def kernels_cached() -> bool:
    """Whether numba has this machine's compiled kernels on disk (the training kernel's
    index in one of :func:`cache_folders`)."""
    return any(any(folder.glob(_PROBE)) for folder in cache_folders())


def wanted() -> bool:
    """Whether a second process could help: not turned off (``NBSVM_COMPILE_AHEAD`` 0,
    false, no or off), numba compiles (no ``NUMBA_DISABLE_JIT``), a second core."""
    if os.environ.get("NBSVM_COMPILE_AHEAD", "1").strip().lower() in _OFF:
        return False
    if os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0"):
        return False
    return len(os.sched_getaffinity(0)) >= 2


def start(params: dict[str, Any]) -> subprocess.Popen | None:
    """Start the second process for a training with ``params`` (NBSVMClassifier's) where
    it is :func:`wanted` and the kernels are not cached; None otherwise. It is not waited
    for: it ends with its parent (see :func:`main`)."""
    try:
        if not wanted() or kernels_cached():
            return None
        settings = json.dumps({k: v for k, v in params.items() if k != "cache_dir"})
        process = subprocess.Popen(
            # -P: the working folder is not on its path (a json.py there would run)
            [sys.executable, "-P", "-m", "nbsvm.workflows.compile_ahead", settings],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, TypeError, ValueError):  # settings that are not JSON; no process
        return None
    _started.append(process)
    return process


def tiny_corpus(n_classes: int, multilabel: bool) -> tuple[list[str], list[Any]]:
    """120 short texts whose label is their first word (label sets: and a second label on
    every third)."""
    texts, labels = [], []
    for i in range(120):
        label = f"c{i % n_classes}"
        words = [_WORDS[(i * 7 + j * 3) % len(_WORDS)] for j in range(12)]
        texts.append(" ".join([label, *words]))
        labels.append([label, "extra"] if multilabel and i % 3 == 0 else label)
    return texts, labels


def compile_for(
    params: dict[str, Any],
    keep_going: Callable[[], bool] = lambda: True,
    n_classes: Sequence[int] = (2, 3),
) -> list[int]:
    """Train tiny models with ``params`` (one epoch, no search), hashing in plain Python,
    and score with them: two classes, then three (the parent's number is not known yet; two
    is the commonest), while ``keep_going()``. Returns the numbers of classes done."""
    from nbsvm import _small_jobs
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.models.settings import NO_SEARCH

    settings = dict(params, epochs=1, **NO_SEARCH)
    settings["n_bits"] = min(int(settings.get("n_bits") or TINY_BITS), TINY_BITS)
    multilabel = bool(settings.get("multilabel"))
    if isinstance(settings.get("class_weight"), dict):  # its classes are not the tiny ones
        settings["class_weight"] = None if multilabel else "balanced"  # (as weights go)
    done = []
    _small_jobs.hash_in_plain_python()
    try:
        for n in n_classes:
            if not keep_going():
                break
            texts, labels = tiny_corpus(n, multilabel)
            # counting, the epochs, naming, then scoring (eval, --test, predict)
            NBSVMClassifier(**settings).fit(texts, labels).decision_function(texts)
            done.append(n)
    finally:
        _small_jobs.hash_in_plain_python(False)
    return done


def compile_defaults() -> float:
    """Compile the kernels of a first run with the default settings into numba's cache now
    (``python -m nbsvm.workflows.compile_ahead --defaults``; ``make install`` runs it
    beside the test tools' install). A child process trains tiny two-class models
    (:func:`compile_for`: counting, the epochs, naming, scoring) while this one compiles the
    hashing kernel and ``nbsvm lexicon``'s counting, then trains the three-class ones.
    Returns the seconds it took (12 s on a 2-core EPYC, after which ``nbsvm train`` of Subj
    compiles nothing and takes 0.6 s). An error, or the child's, is raised."""
    start_time = time.perf_counter()
    # two classes there (11.6 s: naming the strongest n-grams 5.5 of it), three here after
    # the hashing (5.3 s) and the lexicon: both end about together, and a kernel both use
    # is in the cache before the second needs it
    child = subprocess.Popen(
        [sys.executable, "-P", "-m", "nbsvm.workflows.compile_ahead", "--tiny", "2"],
        stdin=subprocess.DEVNULL,
    )
    try:
        import numba  # noqa: F401  (loaded: tiny texts run the kernels, not plain Python)

        from nbsvm.io.document import Document
        from nbsvm.lexicon.build import build_lexicon
        from nbsvm.models.nbsvm import NBSVMClassifier

        texts, labels = tiny_corpus(2, False)
        docs = [
            Document(y, text, "compile", i + 1) for i, (text, y) in enumerate(zip(texts, labels))
        ]
        lexicon = build_lexicon(docs, NBSVMClassifier().validate(), 1.0)  # hashing, counting
        with tempfile.TemporaryDirectory(prefix="nbsvm-compile-") as folder:
            lexicon.save(Path(folder) / "lexicon.npz")  # merging the counts into rows
        _rank_lookups()
        compile_for({}, n_classes=(3,))
    except BaseException:  # (Ctrl-C too) the child goes with it
        child.terminate()
        child.wait()
        raise
    if child.wait() != 0:
        raise RuntimeError(f"the two-class models' process failed (exit {child.returncode})")
    return time.perf_counter() - start_time


def _rank_lookups() -> None:
    """The rank table's lookups (:func:`~nbsvm.data.translate.rank_map`), which corpora
    with more n-grams than a quarter of the buckets take and tiny models never do."""
    import numpy as np

    from nbsvm.data.translate import rank_map, translate_in_range

    remap = np.where(np.arange(256) % 3 == 0, np.arange(256) // 3, -1).astype(np.int32)
    ids = np.arange(256, dtype=np.int32)
    translate_in_range(ids, np.array([0, 100, 256], dtype=np.int64), remap, rank_map(remap))


def hold_lock(path: str) -> bool:
    """Take an exclusive lock on the file ``path`` for the rest of this process (the system
    drops it when the process ends, however it ends); False where another process holds
    it. ``make install``'s compilation holds one, and the make targets that run nbsvm wait
    for it (a pid file could name a process that ended, or another one since)."""
    import fcntl

    fh = open(path, "a")  # noqa: SIM115  (kept open: the lock lives as long as the file)
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        return False
    _locks.append(fh)
    return True


_locks: list = []


def command(argv: list[str]) -> int:
    """``--defaults [--lock FILE]``: :func:`compile_defaults` (with FILE locked, nothing
    when another compilation holds it), one line said, exit 1 on failure; ``--tiny N...``:
    :func:`compile_for` the default settings at N classes, errors raised; else the second
    process of a run (:func:`main`)."""
    if argv[:1] == ["--tiny"]:
        compile_for({}, n_classes=[int(n) for n in argv[1:]])
        return 0
    if argv[:1] != ["--defaults"]:
        main(argv)
        return 0
    if argv[1:2] == ["--lock"] and not hold_lock(argv[2]):
        print("nbsvm: the kernels are being compiled by another process")
        return 0
    try:
        seconds = compile_defaults()
    except Exception as e:  # the install goes on: a first run compiles what it needs
        print(
            f"nbsvm: the kernels were not compiled ahead ({type(e).__name__}: {e}); "
            "a first run compiles them"
        )
        return 1
    print(f"nbsvm: kernels compiled into numba's cache in {seconds:.1f} s")
    return 0


def main(argv: list[str]) -> None:
    """The second process: quiet, at a lower priority than its parent, never failing
    loudly (its work is an optimization), and done once its parent is (it ends within the
    tiny model it was training: 0.4-0.5 s after `nbsvm train` of Subj on a 2-core EPYC)."""
    parent = os.getppid()
    try:
        os.nice(5)
    except OSError:
        pass
    try:
        compile_for(json.loads(argv[0]) if argv else {}, lambda: os.getppid() == parent)
    except Exception:  # a setting tiny data cannot take: the parent compiles the rest
        pass


if __name__ == "__main__":
    sys.exit(command(sys.argv[1:]))
