#!/usr/bin/env python
"""File size, load time and accuracy of quantized models (``results/quantize.md``).

The IMDB (trigrams, 2**24 buckets) and 20 Newsgroups (bydate) models are trained with the
defaults, then ``nbsvm quantize`` writes each setting and ``nbsvm eval`` scores it on the
test set. Load time is the median of five ``NBSVMClassifier.load`` calls in this process.

    python pipelines/quantize.py [--seed 0]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from _harness import script_parser
from _report import ROOT, start, write_results
from bench_20ng import folders

from nbsvm import NBSVMClassifier, datasets

NBSVM = Path(sys.executable).parent / "nbsvm"
SETTINGS = [
    ("original (float32, AdaGrad sums)", None),
    ("float32, no sums", ["--dtype", "float32"]),
    ("float16", ["--dtype", "float16"]),
    ("int8", ["--dtype", "int8"]),
    ("int8, keep 50%", ["--dtype", "int8", "--keep", "0.5"]),
    ("int8, keep 20%", ["--dtype", "int8", "--keep", "0.2"]),
    ("int8, keep 5%", ["--dtype", "int8", "--keep", "0.05"]),
]


def load_seconds(path: Path) -> float:
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        NBSVMClassifier.load(path)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_quiet(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def setting_row(corpus: str, name: str, path: Path, test: Path, extra: list[str]) -> dict:
    """One model (``path``) scored on ``test``: its size, load time and accuracy."""
    rep = json.loads(
        subprocess.run(
            [str(NBSVM), "eval", "-m", str(path), str(test), "--json", *extra],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    return {
        "corpus": corpus,
        "setting": name,
        "MB": path.stat().st_size / 2**20,
        "load_s": load_seconds(path),
        "accuracy_pct": 100 * rep["accuracy"],
        "log_loss": rep.get("log_loss"),
    }


def main(argv=None):
    ap = script_parser(__doc__, seed=True)
    args = ap.parse_args(argv)
    imdb = ROOT / "data" / "aclImdb"
    if not (imdb / "train" / "pos").is_dir():
        sys.exit(f"IMDB not found at {imdb}: run make data-imdb")
    archive = datasets.archive("20newsgroups")  # sha256 checked
    config = start(
        "quantize",
        {
            "imdb": imdb,
            "20newsgroups": archive,
            "seed": args.seed,
            "settings": [name for name, _ in SETTINGS],
        },
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="nbsvm-quantize-") as tmp:
        tmp = Path(tmp)
        ng_train, ng_test = folders(archive, tmp / "20ng")
        corpora = {
            "IMDB": (imdb / "train", imdb / "test", []),
            "20NG": (ng_train, ng_test, ["--encoding", "latin-1"]),
        }
        for corpus, (train, test, extra) in corpora.items():
            original = tmp / f"{corpus}.npz"
            train_cmd = [str(NBSVM), "train", str(train), "-o", str(original), "-q"]
            run_quiet([*train_cmd, "--seed", str(args.seed), *extra])
            for name, options in SETTINGS:
                path = original
                if options is not None:
                    path = tmp / f"{corpus}-{len(rows)}.npz"
                    run_quiet([str(NBSVM), "quantize", str(original), "-o", str(path), *options])
                rows.append(setting_row(corpus, name, path, test, extra))
                print(rows[-1], flush=True)
    write_results(
        "quantize",
        pd.DataFrame(rows),
        "Quantized models: size, load time and accuracy",
        notes=[
            "Each model trained with the defaults; `nbsvm quantize "
            "MODEL -o OUT --dtype D [--keep S]` then `nbsvm eval`."
        ],
        config=config,
    )


if __name__ == "__main__":
    main()
