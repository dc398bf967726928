#!/usr/bin/env python
"""Prediction throughput on IMDB test: ``nbsvm predict`` beside fastText's and Vowpal
Wabbit's prediction of the same 25,000 reviews, each a whole process from start to exit.

Each system first trains on IMDB train (not timed): nbsvm with its defaults, fastText with
the settings of ``pipelines/tune_fasttext.py``, Vowpal Wabbit as in ``make bench``. Then
every round runs each system's prediction once, the systems alternating; one warm-up
round, ``--runs`` measured ones, medians (min-max). nbsvm reads the raw reviews (its
reader and hasher threads tokenize them); the peers read them already tokenized by nbsvm's
tokenizer, so their times leave that work out. fastText's ``predict`` runs in one thread,
Vowpal Wabbit's test pass in one; nbsvm's in a reader thread and a hasher thread.
Documents/s and MB/s of each system's own input file. Written to
``results/predict_bench.md``.

    python pipelines/predict_bench.py [--runs 3]
"""

from __future__ import annotations

import shlex
import statistics
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import NBSVM, ROOT, interleaved_runs, positive, run_measured, script_parser, spread  # noqa: E402
from _peers import peer_script, prepare, vw_accuracy, vw_commands  # noqa: E402


def systems(files: dict, work: Path) -> list[dict]:
    """Each system's prediction command, its input and its accuracy, after training it."""
    test = files["test"]
    nbsvm_model, ft_model = work / "nbsvm.npz", work / "fasttext.bin"
    run_measured([[NBSVM, "train", str(files["train"]["raw"]), "-o", str(nbsvm_model), "-q"]])
    run_measured([peer_script("fasttext_predict", "train", files["train"]["ft"], ft_model)])
    run_measured(vw_commands(files["train"]["vw"], test["vw"], work)[:1])
    nbsvm_out = work / "nbsvm_predictions.csv"

    def nbsvm_accuracy(_result) -> float:
        frame = pd.read_csv(nbsvm_out)
        return 100.0 * float((frame["label"] == frame["true_label"]).mean())

    return [
        dict(
            name="nbsvm predict (defaults model)",
            cmd=[
                NBSVM,
                "predict",
                str(test["raw"]),
                "-m",
                str(nbsvm_model),
                "-o",
                str(nbsvm_out),
                "-q",
            ],  # fmt: skip
            input=test["raw"],
            accuracy=nbsvm_accuracy,
        ),
        dict(
            name="fastText predict (wordNgrams 2, dim 10)",
            cmd=peer_script("fasttext_predict", "predict", ft_model, test["ft"], work / "ft.pred"),
            input=test["ft"],
        ),
        dict(
            name="Vowpal Wabbit -t (--ngram 3 -b 26)",
            cmd=vw_commands(files["train"]["vw"], test["vw"], work)[1],
            input=test["vw"],
            accuracy=lambda _r: vw_accuracy(work / "vw.pred", test["vw"]),
        ),
    ]


def score(system: dict, result: dict) -> None:
    if "accuracy" in system:
        result["accuracy"] = system["accuracy"](result)
    else:
        line = next(x for x in result["output"].splitlines() if x.startswith("accuracy:"))
        result["accuracy"] = float(line.split()[1].rstrip("%"))


def table(todo: list[dict], results: dict, n_docs: int) -> str:
    lines = [
        "| system | accuracy | wall s | documents/s | MB/s of its input | peak MB |",
        "|---|---|---|---|---|---|",
    ]
    for s in todo:
        rs = results[s["name"]]
        seconds = statistics.median(r["seconds"] for r in rs)
        mb = Path(s["input"]).stat().st_size / 2**20
        lines.append(
            f"| {s['name']} | {statistics.median(r['accuracy'] for r in rs):.2f}% | "
            f"{spread([r['seconds'] for r in rs])} | {n_docs / seconds:,.0f} | "
            f"{mb / seconds:.1f} | {spread([r['peak_mb'] for r in rs], '{:.0f}')} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = script_parser(__doc__)
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--runs", type=positive, default=3)
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / "predict_bench"))
    ap.add_argument("--out", default=str(ROOT / "results"))
    args = ap.parse_args(argv)
    command = shlex.join(["python", "pipelines/predict_bench.py", *(argv or sys.argv[1:])])
    print("configuration:", vars(args), "\nreproduce:", command, flush=True)
    work = Path(args.work)
    files = prepare(Path(args.data), work)
    todo = systems(files, work)
    n_docs = sum(1 for _ in open(files["test"]["raw"], encoding="utf-8"))
    results = interleaved_runs(
        todo, args.runs, score, lambda r: f"{r['seconds']:.2f} s, {r['accuracy']:.2f}%"
    )
    text = table(todo, results, n_docs)
    print(text)
    out = Path(args.out) / "predict_bench.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        f"# Prediction throughput: {n_docs:,} IMDB test reviews, whole processes\n\n"
        f"`{command}` ({args.runs} measured runs after a warm-up; medians, min-max)\n\n"
        + "\n\n".join(p.replace("\n", " ") for p in __doc__.split("\n\n")[:2])
        + "\n\n"
        + text
        + "\n"
    )


if __name__ == "__main__":
    main()
