#!/usr/bin/env python
"""Start-up and small jobs: whole processes of the commands people run from the shell,
beside the floor this machine allows (the interpreter alone, then with numpy).

Each command is one process from start to exit (``nbsvm`` as installed, the venv's entry
point): ``--help``, ``--version``, ``info`` of a model, an argument error (``--n-bits 99``,
exit status 2), ``predict`` of 10 IMDB test reviews to a CSV file, ``train`` of 200 and
``eval`` of 200 reviews. The model is trained on the IMDB training reviews with the
defaults first (not timed), nbsvm's modules are compiled to bytecode as an install does,
and a warm-up round loads every kernel from numba's cache, so the figures are a user's
second run on, not a first compile. Rounds alternate the
commands (a drift of the machine's load touches them alike); medians of ``--runs``
(min-max). Targets: issue 37's 0.15 s for help, info and argument errors, 0.5 s for a
prediction of 10 documents.

    python pipelines/startup.py [--runs 5]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import NBSVM, PY, positive, run_measured, script_parser  # noqa: E402
from _report import ROOT, start, write_results  # noqa: E402

TARGETS = {"help": 0.15, "info": 0.15, "argument error": 0.15, "predict 10 docs": 0.5}


def review_lines(folder: Path, n: int, labeled: bool) -> str:
    """``n`` reviews of an aclImdb split, pos and neg alternating, as lines (``label<TAB>``
    first where ``labeled``)."""
    names = {c: sorted((folder / c).glob("*.txt")) for c in ("pos", "neg")}
    lines = []
    for i in range(n):
        label = ("pos", "neg")[i % 2]
        text = " ".join(names[label][i // 2].read_text(encoding="utf-8").split())
        lines.append(f"{label}\t{text}" if labeled else text)
    return "\n".join(lines) + "\n"


def commands(data: Path, work: Path) -> list[tuple[str, list[str], int]]:
    """(name, command, exit status) of every timed command, after training their model."""
    model = work / "imdb.npz"
    train = [NBSVM, "train", str(data / "train"), "-o", str(model), "-q"]
    subprocess.run(train, check=True, stdout=subprocess.DEVNULL)
    # bytecode, as pip writes it at install (an editable install or PYTHONDONTWRITEBYTECODE
    # would compile nbsvm's sources again in every process: 0.1-0.2 s)
    package = Path(__import__("nbsvm").__file__).parent
    subprocess.run([PY, "-m", "compileall", "-q", str(package)], check=True)
    ten, small = work / "ten.txt", work / "small.txt"
    ten.write_text(review_lines(data / "test", 10, labeled=False), encoding="utf-8")
    small.write_text(review_lines(data / "test", 200, labeled=True), encoding="utf-8")
    out = str(work / "out")
    return [
        ("python -c pass (floor)", [PY, "-c", "pass"], 0),
        ("python -c 'import numpy' (floor)", [PY, "-c", "import numpy"], 0),
        ("help", [NBSVM, "--help"], 0),
        ("version", [NBSVM, "--version"], 0),
        ("info", [NBSVM, "info", str(model)], 0),
        ("argument error", [NBSVM, "train", str(small), "-o", out + ".npz", "--n-bits", "99"], 2),
        ("predict 10 docs", [NBSVM, "predict", str(ten), "-m", str(model), "-o", out + ".csv"], 0),
        ("train 200 docs", [NBSVM, "train", str(small), "-o", out + ".npz", "-q"], 0),
        ("eval 200 docs", [NBSVM, "eval", str(small), "-m", str(model)], 0),
    ]


def measure(todo: list[tuple[str, list[str], int]], runs: int, warm_up: int = 1) -> pd.DataFrame:
    """One row a command: medians (min-max) of ``runs`` rounds after ``warm_up`` rounds."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in todo}
    for rnd in range(warm_up + runs):
        for name, cmd, status in todo:
            # (no peak memory: a child's counts its parent's pages before it executes)
            seconds = run_measured([cmd], expect=status)["seconds"]
            measured = rnd >= warm_up  # warm-up: kernels loaded from the cache, files read
            if measured:
                times[name].append(seconds)
            label = f"run {rnd - warm_up + 1}" if measured else "warm-up"
            print(f"{label}: {name}: {seconds:.3f} s")
    rows = []
    for name, _, _ in todo:
        secs = times[name]
        median = statistics.median(secs)
        target = TARGETS.get(name)
        rows.append(
            {
                "command": name,
                "median s": round(median, 3),
                "min s": round(min(secs), 3),
                "max s": round(max(secs), 3),
                "target s": "" if target is None else target,
                "met": "" if target is None else ("yes" if median < target else "no"),
            }
        )
    return pd.DataFrame(rows)


def cpu_name() -> str:
    """The processor's model name (Linux), for the configuration: start-up times move with
    the machine, so the results say which one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return next(line.split(":", 1)[1].strip() for line in fh if "model name" in line)
    except (OSError, StopIteration):
        return "unknown"


def main(argv=None) -> None:
    ap = script_parser(__doc__)
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--runs", type=positive, default=5)
    ap.add_argument("--warm-up", type=int, default=1, help="rounds before the measured ones")
    ap.add_argument("--out", default=None, help="results folder (default results/)")
    args = ap.parse_args(argv)
    machine = {"cpus": os.cpu_count(), "cpu": cpu_name(), "python": sys.version.split()[0]}
    argv = [__file__, *(argv if argv is not None else sys.argv[1:])]
    config = start("startup", {**vars(args), **machine}, argv)
    with tempfile.TemporaryDirectory(prefix="nbsvm-startup-") as tmp:
        frame = measure(commands(Path(args.data), Path(tmp)), args.runs, args.warm_up)
    print(frame.to_string(index=False))
    write_results(
        "startup",
        frame,
        "Start-up and small jobs, whole processes",
        notes=[" ".join(__doc__.split("\n\n")[1].split())],
        config=config,
        out=Path(args.out) if args.out else None,
    )


if __name__ == "__main__":
    main()
