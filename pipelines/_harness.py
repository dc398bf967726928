"""What every benchmark shares: commands run as their own processes and timed from start
to exit with their peak RSS, medians and spreads, warm-up then interleaved rounds, and the
entry point that turns a library error into exit status 2."""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path


def script_parser(doc: str, seed: bool = False) -> argparse.ArgumentParser:
    """The argument parser of a pipeline script: the first paragraph of its docstring as
    the description and, with ``seed``, the ``--seed`` its runs take (default 0)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if seed:
        ap.add_argument("--seed", type=int, default=0)
    return ap


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--runs 0`` took the median of
    nothing, ``--shuffles 0`` an IndexError)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


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


def run_measured(cmds: list[list[str]], env=None, expect: int = 0) -> dict:
    """Run commands one after the other; wall time summed, peak RSS the largest. Each must
    exit with status ``expect`` (an argument error's 2, for one that times it)."""
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
        if code != expect:
            sys.exit(f"exit {code}, expected {expect}: {shlex.join(cmd)}\n{out[-3000:]}")
        peak = max(peak, usage.ru_maxrss / 1024)
        outputs.append(out)
    return dict(seconds=total, peak_mb=peak, output="\n".join(outputs))


def wait_for_compile_ahead(timeout: float = 120.0) -> None:
    """Wait until no process compiles nbsvm's kernels ahead (``nbsvm train`` on an empty
    numba cache starts one, which outlives it by a few seconds at most): a measured run
    after a cold one must not share the cores with it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                    running = running or b"nbsvm.workflows.compile_ahead" in fh.read()
            except OSError:
                continue
        if not running:
            return
        time.sleep(0.2)


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


# ---- the small benchmarks of 20 Newsgroups (bench_20ng.py, bench_multilabel.py) ----------

ROOT = Path(__file__).resolve().parents[1]


def archive_args(doc: str, archive: Path, name: str, argv=None):
    """``--archive`` (default ``archive``), ``--runs`` and ``--work``
    (``results/tmp/NAME``)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--archive", default=str(archive))
    ap.add_argument("--runs", type=positive, default=3)
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / name))
    return ap.parse_args(argv)


def announce_runs(name: str, args) -> None:
    """The configuration and the command that reproduces ``pipelines/NAME.py``."""
    print("configuration:", {"runs": args.runs, "archive": args.archive})
    print("reproduce:", shlex.join([PY, f"pipelines/{name}.py", "--runs", str(args.runs)]))


def timing_cells(results: list[dict], base: float) -> str:
    """``wall s | x base time | peak MB`` of a system's measured runs."""
    secs = [r["seconds"] for r in results]
    return (
        f"{spread(secs)} | {statistics.median(secs) / base:.2f} | "
        f"{spread([r['peak_mb'] for r in results], '{:.0f}')}"
    )


def write_runs_table(name: str, title: str, runs: int, table: str) -> None:
    """Print ``table`` and write it to ``results/NAME.md`` under ``title`` and the command."""
    print(table)
    out = ROOT / "results" / f"{name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        f"# {title}\n\n"
        f"`{shlex.join(['python', f'pipelines/{name}.py', '--runs', str(runs)])}`"
        f" ({runs} measured runs after a warm-up; medians, min-max)\n\n" + table + "\n"
    )


def archive_bench(name: str, doc: str, argv, archive: Path, **bench) -> None:
    """A benchmark of an archive's corpus (``pipelines/NAME.py``): parse the arguments,
    ``bench["unpack"](archive, work)`` into its train and test inputs,
    ``bench["systems"](train, test, work)`` (``(name, command)`` pairs), run them
    interleaved (``bench["score"]``, ``bench["describe"]``: see :func:`interleaved_runs`),
    and write the table under ``bench["title"]``: ``bench["header"]`` (its lines), a row a
    system of ``bench["cells"](results)`` then its times against the last system (the
    peer)."""
    args = archive_args(doc, archive, name, argv)
    work = Path(args.work)
    train, test = bench["unpack"](Path(args.archive), work)
    todo = [dict(name=n, cmd=cmd) for n, cmd in bench["systems"](train, test, work)]
    announce_runs(name, args)
    results = interleaved_runs(todo, args.runs, bench["score"], bench["describe"])
    reference = todo[-1]["name"]
    base = statistics.median(r["seconds"] for r in results[reference])
    lines = list(bench["header"])
    for s in todo:
        rs = results[s["name"]]
        lines.append(f"| {s['name']} | {bench['cells'](rs)} | {timing_cells(rs, base)} |")
    write_runs_table(name, bench["title"], args.runs, "\n".join(lines))
