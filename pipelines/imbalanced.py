#!/usr/bin/env python
"""Class weights on imbalanced data: IMDB with one positive review for nine negative ones
(``results/imbalanced.md``).

Each split keeps all 12,500 negative reviews and a seeded ninth as many positives (1,388);
``nbsvm train`` runs with and without ``--class-weight``, and scikit-learn's TF-IDF(1,2) +
LinearSVC / LogisticRegression with and without ``class_weight="balanced"`` in the same
run. Reported on the equally imbalanced test split: accuracy, macro F1 and the positive
(minority) class's recall and precision.

    python pipelines/imbalanced.py [--seed 0] [--ratio 9]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from _harness import positive, script_parser
from _report import ROOT, start, write_results

NBSVM = Path(sys.executable).parent / "nbsvm"
VARIANTS = [
    [],
    ["--class-weight", "pos=3"],
    ["--class-weight", "balanced"],
    ["--class-weight", "balanced", "--loss", "hinge"],
    ["--class-weight", "balanced", "--norm", "l2"],
    ["--class-weight", "balanced", "--auto"],
    ["--class-weight", "balanced", "--auto", "--auto-metric", "macro_f1"],
]


def write_split(imdb: Path, split: str, out: Path, ratio: int, seed: int) -> int:
    """label<TAB>text lines of ``split``: every negative, ``n_neg // ratio`` positives."""
    rng = random.Random(seed)
    neg = sorted((imdb / split / "neg").glob("*.txt"))
    pos = rng.sample(sorted((imdb / split / "pos").glob("*.txt")), len(neg) // ratio)
    rows = [("neg", p) for p in neg] + [("pos", p) for p in pos]
    rng.shuffle(rows)
    with open(out, "w", encoding="utf-8") as f:
        for label, p in rows:
            text = p.read_text(encoding="utf-8").replace("\t", " ").replace("\n", " ")
            f.write(f"{label}\t{text}\n")
    return len(pos)


def figures(truth, predicted) -> dict:
    from nbsvm.evaluation.metrics import confusion_matrix, report

    classes = ["neg", "pos"]
    index = {c: i for i, c in enumerate(classes)}
    rep = report(
        confusion_matrix([index[t] for t in truth], [index[p] for p in predicted], 2), classes
    )
    return {
        "accuracy": rep["accuracy"],
        "macro_f1": rep["macro_f1"],
        "pos_recall": rep["per_class"]["pos"]["recall"],
        "pos_precision": rep["per_class"]["pos"]["precision"],
    }


def run_nbsvm(folder: Path, options: list[str], seed: int) -> dict:
    model = folder / "model.npz"
    t0 = time.perf_counter()
    subprocess.run(
        [
            str(NBSVM),
            "train",
            str(folder / "train.txt"),
            "-o",
            str(model),
            "-q",
            "--seed",
            str(seed),
            *options,
        ],
        check=True,
    )
    rep = json.loads(
        subprocess.run(
            [str(NBSVM), "eval", "-m", str(model), str(folder / "test.txt"), "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    return {
        "accuracy": rep["accuracy"],
        "macro_f1": rep["macro_f1"],
        "pos_recall": rep["per_class"]["pos"]["recall"],
        "pos_precision": rep["per_class"]["pos"]["precision"],
        "seconds": time.perf_counter() - t0,
    }


def run_sklearn(folder: Path, seed: int) -> list[tuple[str, dict]]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    def read(name):
        labels, texts = [], []
        with open(folder / name, encoding="utf-8") as f:
            for line in f:
                label, text = line.rstrip("\n").split("\t", 1)
                labels.append(label)
                texts.append(text)
        return texts, labels

    (X, y), (Xt, yt) = read("train.txt"), read("test.txt")
    t0 = time.perf_counter()
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    A, B = vec.fit_transform(X), vec.transform(Xt)
    vectorize_s = time.perf_counter() - t0  # counted in every row's seconds
    out = []
    for name, make in (
        ("LinearSVC", lambda cw: LinearSVC(class_weight=cw, random_state=seed)),
        (
            "LogisticRegression(C=10)",
            lambda cw: LogisticRegression(C=10, class_weight=cw, max_iter=1000),
        ),
    ):
        for cw in (None, "balanced"):
            t0 = time.perf_counter()
            predicted = make(cw).fit(A, y).predict(B)
            row = figures(yt, predicted)
            row["seconds"] = time.perf_counter() - t0 + vectorize_s
            label = f"scikit-learn TF-IDF(1,2) + {name}" + (", balanced" if cw else "")
            out.append((label, row))
    return out


def main(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--ratio", type=positive, default=9, help="negatives per positive")
    args = ap.parse_args(argv)
    imdb = ROOT / "data" / "aclImdb"
    if not (imdb / "train" / "pos").is_dir():
        sys.exit(f"IMDB not found at {imdb}: run make data-imdb")
    config = start(
        "imbalanced",
        {
            "data": imdb,
            "seed": args.seed,
            "ratio": args.ratio,
            "nbsvm variants": [" ".join(v) or "(defaults)" for v in VARIANTS],
        },
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="nbsvm-imbalanced-") as tmp:
        folder = Path(tmp)
        n_pos = [
            write_split(imdb, s, folder / f"{s}.txt", args.ratio, args.seed)
            for s in ("train", "test")
        ]
        print(f"positives: train {n_pos[0]}, test {n_pos[1]} (12,500 negatives each)")
        for options in VARIANTS:
            name = "nbsvm train " + (" ".join(options) or "(defaults)")
            rows.append(dict(model=name, **run_nbsvm(folder, options, args.seed)))
            print(rows[-1], flush=True)
        try:
            for name, row in run_sklearn(folder, args.seed):
                rows.append(dict(model=name, **row))
                print(rows[-1], flush=True)
        except ImportError:
            print("scikit-learn not installed: its rows are left out (make install-bench)")
    frame = pd.DataFrame(rows)
    write_results(
        "imbalanced",
        frame,
        "Class weights on IMDB with one positive for nine negatives",
        notes=[
            f"Each split: 12,500 negative reviews and {n_pos[0]:,} / {n_pos[1]:,} "
            "positives (seeded sample); figures on the imbalanced test split. "
            "`pos` is the minority class. Seconds: nbsvm's train and eval commands "
            "(processes included); scikit-learn's vectorizing, fit and predict."
        ],
        config=config,
    )


if __name__ == "__main__":
    main()
