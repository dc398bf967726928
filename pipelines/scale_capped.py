"""nbsvm under a memory cap (a cgroup v1 limit): the same model trained with and without
the cap, to show that a bounded memory changes the time, not the model."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import numpy as np
from _harness import run_measured, stage
from _peers import nbsvm_train

CGROUP = Path("/sys/fs/cgroup/memory/nbsvm-scale-cap")


def cgroup_available() -> str | None:
    """None when a memory cgroup can be made here, else why not."""
    parent = CGROUP.parent
    if not (parent / "memory.limit_in_bytes").exists():
        return f"no cgroup v1 memory controller at {parent}"
    try:
        CGROUP.mkdir(exist_ok=True)
        (CGROUP / "memory.limit_in_bytes").write_text(str(1 << 40))
    except OSError as e:
        return f"cannot make {CGROUP}: {e}"
    return None


def run_capped(cmd: list[str], limit_mb: int) -> dict:
    """``cmd`` inside the cgroup limited to ``limit_mb`` (page cache counted, no swap on
    this machine); its time, peak RSS, and the cgroup's peak charge and failcnt (how many
    times the limit made the kernel reclaim)."""
    (CGROUP / "memory.limit_in_bytes").write_text(str(limit_mb << 20))
    for name in ("memory.max_usage_in_bytes", "memory.failcnt"):
        (CGROUP / name).write_text("0")
    procs = str(CGROUP / "cgroup.procs")

    def enter():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=enter
    )
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    return dict(
        exit=code,
        seconds=seconds,
        peak_mb=usage.ru_maxrss / 1024,
        output=out,
        cgroup_peak_mb=int((CGROUP / "memory.max_usage_in_bytes").read_text()) / 2**20,
        failcnt=int((CGROUP / "memory.failcnt").read_text()),
    )


def same_model(a: Path, b: Path) -> tuple[bool, int]:
    """Whether two model files hold the same arrays bit for bit, and how many arrays."""
    with np.load(a) as x, np.load(b) as y:
        if sorted(x.files) != sorted(y.files):
            return False, len(x.files)
        return all(
            x[k].dtype == y[k].dtype
            and x[k].shape == y[k].shape
            and x[k].tobytes() == y[k].tobytes()
            for k in x.files
        ), len(x.files)


def capped(train: Path, test: Path, work: Path, limit_mb: int) -> dict:
    why = cgroup_available()
    if why:
        return dict(blocked=why)

    def cmd(out):
        return nbsvm_train(train, test, out, "--threads", "1", "--cache-dir", str(work))

    free = run_measured([cmd(work / "uncapped.npz")])
    cap = run_capped(cmd(work / "capped.npz"), limit_mb)
    CGROUP.rmdir()
    if cap["exit"] != 0:
        return dict(limit_mb=limit_mb, exit=cap["exit"], output=cap["output"][-2000:])
    equal, n_arrays = same_model(work / "uncapped.npz", work / "capped.npz")
    return dict(
        limit_mb=limit_mb,
        cache_mb=stage(free["output"], "feature cache MB"),
        uncapped_s=free["seconds"],
        uncapped_peak_mb=free["peak_mb"],
        capped_s=cap["seconds"],
        capped_peak_rss_mb=cap["peak_mb"],
        cgroup_peak_mb=cap["cgroup_peak_mb"],
        failcnt=cap["failcnt"],
        same_model=equal,
        arrays=n_arrays,
        capped_training_s=stage(cap["output"], "training seconds"),
    )
