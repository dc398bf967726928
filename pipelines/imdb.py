#!/usr/bin/env python
"""IMDB (Maas et al. 2011) with NBSVM: lexicon, train and eval through the real CLI.

Prints the full configuration and the command that reproduces the run first, then each
stage's output, and at the end the test accuracy with per-stage wall time and peak RSS
(each stage is its own process, measured with ``os.wait4``).

    python pipelines/imdb.py                      # the defaults (trigrams, 2**24 buckets)
    python pipelines/imdb.py --ngrams 2 --n-bits 22
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from nbsvm.config import DEFAULTS  # noqa: E402


def run_stage(name: str, cmd: list[str]) -> dict:
    print(f"\n$ {shlex.join(cmd)}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    sys.stdout.write(out)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{name} failed with exit status {code}")
    return dict(stage=name, seconds=seconds, peak_mb=usage.ru_maxrss / 1024, output=out)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--out", default=str(ROOT / "models"))
    for key in ("ngrams", "n_bits", "epochs", "seed"):
        ap.add_argument("--" + key.replace("_", "-"), type=int, default=DEFAULTS[key])
    for key in ("eta0", "lam", "beta", "alpha"):
        ap.add_argument(
            "--" + ("lambda" if key == "lam" else key), dest=key, type=float, default=DEFAULTS[key]
        )
    ap.add_argument("--loss", default=DEFAULTS["loss"])
    ap.add_argument("--optimizer", default=DEFAULTS["optimizer"])
    ap.add_argument("--interpolate", default=DEFAULTS["interpolate"])
    args = ap.parse_args(argv)
    return args


def show_configuration(args, argv) -> None:
    print("configuration:")
    for k, v in vars(args).items():
        print(f"  {k} = {v}")
    print(
        "reproduce with:\n  "
        + shlex.join([sys.executable, "pipelines/imdb.py"] + (argv or sys.argv[1:]))
    )


def flags(*pairs) -> list[str]:
    """``("--x", 1), ("--y", "a")`` as ``["--x", "1", "--y", "a"]``."""
    return [str(x) for pair in pairs for x in pair]


def stage_commands(args, nbsvm: str, train: Path, test: Path, lex: Path, model: Path) -> dict:
    """The commands of the three stages: lexicon, train and eval."""
    lexicon = flags(("--ngrams", args.ngrams), ("--n-bits", args.n_bits), ("--alpha", args.alpha))
    training = flags(
        ("--lexicon", lex),
        ("--loss", args.loss),
        ("--optimizer", args.optimizer),
        ("--epochs", args.epochs),
        ("--eta0", args.eta0),
        ("--lambda", args.lam),
        ("--beta", args.beta),
        ("--interpolate", args.interpolate),
        ("--seed", args.seed),
        ("--output", model),
    )
    return {
        "lexicon": [nbsvm, "lexicon", str(train), *lexicon, "--output", str(lex), "--quiet"],
        "train": [nbsvm, "train", str(train), *training, "--quiet"],
        "eval": [nbsvm, "eval", str(test), "--model", str(model), "--quiet"],
    }


def summary(stages: list[dict]) -> None:
    acc = re.search(r"accuracy: ([0-9.]+)%", stages[-1]["output"]).group(1)
    print("\nsummary")
    print(f"  test accuracy: {acc}%   (NBSVM-XL 91.88%, Mesnil et al. 91.87%, NBSVM-bi 91.22%)")
    print(f"  {'stage':<8} {'wall s':>8} {'peak RSS MB':>12}")
    for s in stages:
        print(f"  {s['stage']:<8} {s['seconds']:8.2f} {s['peak_mb']:12.0f}")
    print(
        f"  {'total':<8} {sum(s['seconds'] for s in stages):8.2f} "
        f"{max(s['peak_mb'] for s in stages):12.0f}"
    )


def main(argv=None):
    args = parse_args(argv)
    nbsvm = str(Path(sys.executable).parent / "nbsvm")
    train, test = Path(args.data) / "train", Path(args.data) / "test"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tag = f"imdb-{args.ngrams}gram-{args.n_bits}b"
    lex, model = out / f"{tag}.lex.npz", out / f"{tag}.npz"
    show_configuration(args, argv)
    commands = stage_commands(args, nbsvm, train, test, lex, model)
    summary([run_stage(name, cmd) for name, cmd in commands.items()])


if __name__ == "__main__":
    main()
