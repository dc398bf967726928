"""The systems of the scale benchmark: nbsvm and its peers as commands on the scale
corpus, and the floors every learner pays (reading the file, one bare epoch)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
from _harness import accuracy_of, run_measured
from _peers import FASTTEXT_NAME, VW_NAME, nbsvm_train, peer_script, vw_accuracy, vw_commands
from scale_corpus import peer_files


def systems(train: Path, test: Path, work: Path, threads: int) -> list[dict]:
    tr, te = peer_files(train, write=False), peer_files(test, write=False)
    convert = lambda: (peer_files(train), peer_files(test))  # noqa: E731
    vw_model, vw_pred = work / "vw.model", work / "vw.pred"
    nbsvm_options = ("--threads", str(threads), "--cache-dir", str(work))
    return [
        dict(
            name=f"nbsvm (threads {threads})",
            cmds=[nbsvm_train(train, test, work / "nbsvm.npz", *nbsvm_options)],
        ),
        dict(
            name=VW_NAME,
            cmds=vw_commands(tr["vw"], te["vw"], work, cache=True),
            accuracy=lambda r: vw_accuracy(vw_pred, te["vw"]),
            prepare=convert,
            cleanup=[work / "vw.cache", vw_model, vw_pred],
        ),
        dict(
            name=FASTTEXT_NAME,
            cmds=[peer_script("fasttext_text", tr["ft"], te["ft"], "--thread", "2")],
            prepare=convert,
        ),
    ]


def run_system(system: dict) -> dict:
    if "prepare" in system:  # the peer's input format, not timed
        system["prepare"]()
    r = run_measured(system["cmds"])
    r["accuracy"] = accuracy_of(system, r)
    for path in system.get("cleanup", []):
        Path(path).unlink(missing_ok=True)
    return r


def plain_read(path: Path) -> dict:
    """Bytes/s of reading ``path`` in 16 MB blocks: cold (its cached pages dropped first;
    the disk) and warm (from the page cache)."""
    out = {}
    for kind in ("cold", "warm"):
        fd = os.open(path, os.O_RDONLY)
        if kind == "cold":
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        t0 = time.perf_counter()
        n = 0
        while True:
            block = os.read(fd, 16 << 20)
            if not block:
                break
            n += len(block)
        os.close(fd)
        out[f"read_{kind}_mb_s"] = n / 2**20 / (time.perf_counter() - t0)
    return out


def bare_epoch(
    runs: int = 5, seed: int = 0, n_docs: int = 10_000, n_columns: int = 1 << 24
) -> dict:
    """Non-zeros per second of one AdaGrad epoch of the production kernel over 2**24
    columns in memory, nothing else (no cache reads, no translation, one thread): the
    ceiling of nbsvm's epochs on this machine. Median of ``runs``."""
    import statistics

    from bench_kernels import imdb_like, time_epochs

    from nbsvm.learners.kernels.table import _adagrad_epoch

    rng = np.random.default_rng(seed)
    ids, offsets, codes, n_columns = imdb_like(rng, n_docs=n_docs, n_columns=n_columns, per_doc=680)
    state = np.zeros((n_columns, 3), np.float32)
    state[:, 0] = rng.normal(0, 1, n_columns)
    order = rng.permutation(len(codes)).astype(np.int64)
    seconds = statistics.median(
        time_epochs(_adagrad_epoch, ids, offsets, codes, state, order, runs)
    )
    return {
        "bare_epoch_ns_per_nnz": 1e9 * seconds / len(ids),
        "bare_epoch_nnz_per_s": len(ids) / seconds,
    }
