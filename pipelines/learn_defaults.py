#!/usr/bin/env python
"""A setting of ``nbsvm learn`` on every shape of data, beside its default and beside
scikit-learn (``results/learn_defaults.md``).

``learn`` reads features, not text: each shape of ``pipelines/_shapes.py`` (first fold) is
written as svmlight rows of binary word features (nbsvm's tokenizer; character 3-grams where
the text has no spaces), beside two shapes that are not text: RCV1's TF-IDF rows (2,000
training documents, the 500 of its small test file) and iris, unscaled (virginica against
the rest, 120 / 30 seeded). Every variant runs the real CLI (``nbsvm learn FILE -a ALG --loss
LOSS [VARIANT] --test FILE --json``); the baselines are scikit-learn's ``SGDClassifier``
(its defaults, the same loss) and ``LinearSVC`` on the same rows. A variant can reject a
default here, and earn a place as one only where it is not worse on any shape by more than
the noise.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import _shapes
import numpy as np
import pandas as pd
from _harness import script_parser
from _report import ROOT, start, write_results

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from nbsvm.datasets import prepare  # noqa: E402
from nbsvm.text.tokenize import char_ngrams, tokenize  # noqa: E402

LOSSES = ("hinge", "log")


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--shapes", default=",".join([*_shapes.SHAPES, "rcv1", "iris"]))
    ap.add_argument("--algorithms", default="sgd,adagrad", help="comma-separated -a values")
    ap.add_argument(
        "--variants",
        default="--eta0 0.1;--eta0 auto",
        help="semicolon-separated option strings; the first is the reference",
    )
    ap.add_argument("--quick", action="store_true", help="tiny folds (the smoke test)")
    ap.add_argument("--out", default=None, help="folder of the results (default: results/)")
    ap.add_argument("--name", default="learn_defaults", help="results/NAME.md and .csv")
    return ap.parse_args(argv)


def write_svmlight(path: Path, rows: list[dict], labels: list, vocab: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for feats, label in zip(rows, labels):
            ids = sorted((vocab.setdefault(k, len(vocab) + 1), v) for k, v in feats.items())
            f.write(f"{label} " + " ".join(f"{i}:{v:.7g}" for i, v in ids) + "\n")


def text_files(name: str, seed: int, quick: bool, folder: Path) -> tuple[Path, Path]:
    """The first fold of a text shape as svmlight files of binary word features."""
    shape = _shapes.SHAPES[name]
    train_x, train_y, test_x, test_y = shape.build(seed, quick)[0]
    codes = {c: i + 1 for i, c in enumerate(sorted(set(train_y) | set(test_y)))}

    def features(text):
        tokens = tokenize(text)
        keys = char_ngrams(tokens, 3) if shape.no_spaces else tokens
        return dict.fromkeys(keys, 1.0)

    vocab: dict = {}
    paths = folder / f"{name}.train", folder / f"{name}.test"
    for path, xs, ys in zip(paths, (train_x, test_x), (train_y, test_y)):
        write_svmlight(path, [features(t) for t in xs], [codes[y] for y in ys], vocab)
    return paths


def other_files(name: str, seed: int, quick: bool, folder: Path) -> tuple[Path, Path]:
    """RCV1's rows as they are, or iris (virginica against the rest)."""
    paths = folder / f"{name}.train", folder / f"{name}.test"
    if name == "rcv1":
        root = prepare("rcv1")
        for path, src in zip(paths, ("train2000.dat", "rcv1_small_test.data")):
            lines = (root / src).read_text().replace("|f ", "").splitlines()
            path.write_text("\n".join(lines[: 200 if quick else None]) + "\n")
        return paths
    rows = [r.split(",") for r in (prepare("iris") / "iris.data").read_text().split()]
    order = np.random.default_rng([seed, 7]).permutation(len(rows))
    feats = [{f"x{j}": float(v) for j, v in enumerate(rows[i][:4])} for i in order]
    labels = [1 if rows[i][4] == "Iris-virginica" else -1 for i in order]
    vocab: dict = {}
    write_svmlight(paths[0], feats[:120], labels[:120], vocab)
    write_svmlight(paths[1], feats[120:], labels[120:], vocab)
    return paths


def learn_accuracy(
    train: Path, test: Path, algorithm: str, loss: str, variant: str, multi: bool
) -> float:
    """``nbsvm learn`` run as a user runs it (one-vs-rest of ``algorithm`` with more than two
    classes); its accuracy on ``test``."""
    out = train.with_suffix(".npz")
    learner = ["-a", "ovr", "--estimator", algorithm] if multi else ["-a", algorithm]
    command = [sys.executable, "-m", "nbsvm", "learn", str(train), *learner]
    command += ["--loss", loss, *shlex.split(variant), "-o", str(out)]
    command += ["--test", str(test), "-q", "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{shlex.join(command)} failed: {done.stderr}")
    return 100 * json.loads(done.stdout)["accuracy"]


def baselines(train: Path, test: Path, seed: int) -> dict:
    from sklearn.datasets import load_svmlight_files
    from sklearn.linear_model import SGDClassifier
    from sklearn.svm import LinearSVC

    x_train, y_train, x_test, y_test = load_svmlight_files([str(train), str(test)])
    for x in (x_train, x_test):  # scikit-learn's SGD takes 32-bit indices only
        x.indices, x.indptr = x.indices.astype(np.int32), x.indptr.astype(np.int32)
    out = {}
    for loss in LOSSES:
        sgd = SGDClassifier(loss={"log": "log_loss"}.get(loss, loss), random_state=seed)
        out[f"scikit-learn SGD {loss}"] = 100 * sgd.fit(x_train, y_train).score(x_test, y_test)
    svc = LinearSVC(random_state=seed).fit(x_train, y_train)
    out["scikit-learn LinearSVC"] = 100 * svc.score(x_test, y_test)
    return out


def shape_rows(name: str, args, variants: list[str], folder: Path) -> list[dict]:
    build = other_files if name in ("rcv1", "iris") else text_files
    train, test = build(name, args.seed, args.quick, folder)
    multi = len({line.split(" ", 1)[0] for line in train.read_text().splitlines()}) > 2
    rows = []
    for algorithm in args.algorithms.split(","):
        for loss in LOSSES:
            scores = [learn_accuracy(train, test, algorithm, loss, v, multi) for v in variants]
            for variant, score in zip(variants, scores):
                rows.append(
                    {
                        "shape": name,
                        "algorithm": algorithm,
                        "loss": loss,
                        "variant": variant,
                        "accuracy": round(score, 2),
                        "vs_reference": round(score - scores[0], 2),
                    }
                )
    for system, score in baselines(train, test, args.seed).items():
        rows.append({"shape": name, "algorithm": system, "loss": "", "variant": ""})
        rows[-1].update({"accuracy": round(score, 2), "vs_reference": np.nan})
    return rows


def main(argv=None):
    args = parse_args(argv)
    config = start(args.name, vars(args), [__file__, *(sys.argv[1:] if argv is None else argv)])
    variants = args.variants.split(";")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.shapes.split(","):
            rows += shape_rows(name, args, variants, Path(tmp))
            print(pd.DataFrame(rows[-1 - 2 * len(variants) * 2 :]).to_string(index=False))
    frame = pd.DataFrame(rows)
    learned = frame[frame["variant"] != ""]
    wide = learned.pivot_table(
        index=["shape", "algorithm", "loss"], columns="variant", values="accuracy", sort=False
    ).reset_index()
    notes = [
        f"Accuracy (%) on each shape's test part; vs_reference: minus `{variants[0]}`. "
        "The first fold of each text shape, binary word features.",
    ]
    for v in variants[1:]:
        diff = learned[learned["variant"] == v]["vs_reference"]
        notes.append(
            f"`{v}` minus `{variants[0]}`: {int((diff > 0).sum())} higher, "
            f"{int((diff < 0).sum())} lower of {len(diff)}; worst {diff.min():+.2f}, "
            f"best {diff.max():+.2f}, median {diff.median():+.2f} points."
        )
    out = Path(args.out) if args.out else None
    write_results(
        args.name,
        frame,
        title="nbsvm learn's settings on every shape of data, beside scikit-learn",
        notes=notes,
        extra_tables={"Accuracy by variant": wide},
        config=config,
        out=out,
    )
    return frame


if __name__ == "__main__":
    main()
