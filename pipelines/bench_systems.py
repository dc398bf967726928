"""The systems of the IMDB trigram benchmark (pipelines/bench.py): nbsvm and its peers, each
as the commands that read, train, score and save, and how its accuracy is read."""

from __future__ import annotations

from pathlib import Path

from _harness import NBSVM, PY
from _peers import vw_accuracy
from _report import ROOT


def systems(files, work: Path, mesnil: bool) -> list[dict]:
    tr, te = files["train"], files["test"]
    model = str(work / "nbsvm.npz")
    out = [
        dict(
            name="nbsvm (threads 1, reproducible)",
            group="nbsvm",
            cmds=[
                [
                    NBSVM,
                    "train",
                    str(tr["raw"]),
                    "--test",
                    str(te["raw"]),
                    "-o",
                    model,
                    "--n-bits",
                    "24",
                    "--threads",
                    "1",
                    "-q",
                ]
            ],
        ),
        dict(
            name="nbsvm (threads 2, Hogwild)",
            group="nbsvm",
            cmds=[
                [
                    NBSVM,
                    "train",
                    str(tr["raw"]),
                    "--test",
                    str(te["raw"]),
                    "-o",
                    model,
                    "--n-bits",
                    "24",
                    "--threads",
                    "2",
                    "-q",
                ]
            ],
        ),
        dict(
            name="Vowpal Wabbit (--ngram 3 -b 26 logistic, 10 passes)",
            group="peer",
            cmds=[
                [
                    PY,
                    "-m",
                    "vowpalwabbit",
                    "-d",
                    str(tr["vw"]),
                    "--ngram",
                    "3",
                    "-b",
                    "26",
                    "--loss_function",
                    "logistic",
                    "--passes",
                    "10",
                    "-c",
                    "-k",
                    "--holdout_off",
                    "-f",
                    str(work / "vw.model"),
                    "--quiet",
                ],
                [
                    PY,
                    "-m",
                    "vowpalwabbit",
                    "-d",
                    str(te["vw"]),
                    "-t",
                    "-i",
                    str(work / "vw.model"),
                    "-p",
                    str(work / "vw.pred"),
                    "--quiet",
                ],
            ],
            accuracy=lambda r: vw_accuracy(work / "vw.pred", te["vw"]),
        ),
        dict(
            name="fastText (wordNgrams 2, dim 10, epoch 10, lr 0.5, 2 threads)",
            group="peer",
            cmds=[
                [
                    PY,
                    str(ROOT / "pipelines/peers/fasttext_text.py"),
                    str(tr["ft"]),
                    str(te["ft"]),
                    "--thread",
                    "2",
                ]
            ],
        ),
        dict(
            name="scikit-learn HashingVectorizer 2^24 + NB + SGD(log)",
            group="peer",
            cmds=[
                [
                    PY,
                    str(ROOT / "pipelines/peers/sklearn_nbsvm.py"),
                    str(tr["tok"]),
                    str(te["tok"]),
                    "--bits",
                    "24",
                ]
            ],
        ),
        dict(
            name="scikit-learn HashingVectorizer 2^26 + NB + SGD(log)",
            group="peer",
            cmds=[
                [
                    PY,
                    str(ROOT / "pipelines/peers/sklearn_nbsvm.py"),
                    str(tr["tok"]),
                    str(te["tok"]),
                    "--bits",
                    "26",
                ]
            ],
        ),
    ]
    if mesnil:
        out.append(
            dict(
                name="Mesnil-style NBSVM (exact vocabulary, liblinear)",
                group="peer",
                cmds=[
                    [
                        PY,
                        str(ROOT / "pipelines/peers/sklearn_nbsvm.py"),
                        str(tr["tok"]),
                        str(te["tok"]),
                        "--exact",
                    ]
                ],
            )
        )
    return out
