"""What every benchmark shares: commands run as their own processes and timed from start
to exit with their peak RSS, medians and spreads, warm-up then interleaved rounds, and the
entry point that turns a library error into exit status 2."""

from __future__ import annotations

import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path


def settle_shared_libraries() -> int:
    """Drop the page-cache copies of the environment's shared libraries (every package's,
    the peers' included). A library pip has just written sits in the page cache in large
    folios, and mapping it then counts far more resident memory (about 60 MB more for
    llvmlite's 178 MB library) than the same library read back from disk, as it is on any
    machine where it was not installed a minute ago. Only clean cached pages are dropped."""
    n = 0
    for root, _, names in os.walk(sys.prefix):
        for name in names:
            if ".so" in name:
                try:
                    fd = os.open(os.path.join(root, name), os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    n += 1
                finally:
                    os.close(fd)
    return n


PY = sys.executable
NBSVM = str(Path(sys.executable).parent / "nbsvm")


def run_measured(cmds: list[list[str]], env=None) -> dict:
    """Run commands one after the other; wall time summed, peak RSS the largest."""
    total, peak, outputs = 0.0, 0.0, []
    for cmd in cmds:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        total += time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.exit(f"failed ({code}): {shlex.join(cmd)}\n{out[-3000:]}")
        peak = max(peak, usage.ru_maxrss / 1024)
        outputs.append(out)
    return dict(seconds=total, peak_mb=peak, output="\n".join(outputs))


def accuracy_of(system, result) -> float:
    if "accuracy" in system:
        return system["accuracy"](result)
    return float(re.search(r"accuracy: ([0-9.]+)%", result["output"]).group(1))


def stage(output: str, label: str):
    m = re.search(re.escape(label) + r": ([0-9.]+)", output)
    return float(m.group(1)) if m else None


def spread(values, fmt="{:.2f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def interleaved_runs(systems: list[dict], runs: int, score, describe) -> dict:
    """``{name: [result]}`` of ``runs`` measured rounds after a warm-up round, every system
    once per round (a drift of the machine's load then touches every system alike);
    ``score(system, result)`` adds its figures, ``describe(result)`` is its progress line."""
    results = {s["name"]: [] for s in systems}
    for rnd in range(runs + 1):  # round 0 warms up, interleaved runs after
        for s in systems:
            r = run_measured([s["cmd"]])
            score(s, r)
            if rnd:
                results[s["name"]].append(r)
            print(
                f"{'warm-up' if not rnd else f'run {rnd}'}: {s['name']}: {describe(r)}",
                flush=True,
            )
    return results


def run_script(main) -> None:
    """A script's entry point: exit with ``main()``'s status, or 2 after printing a library
    error (:class:`nbsvm.errors.NBSVMError`) as one line."""
    from nbsvm.errors import NBSVMError

    try:
        sys.exit(main())
    except NBSVMError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
