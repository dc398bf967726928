"""The systems of the IMDB trigram benchmark (pipelines/bench.py): nbsvm and its peers, each
as the commands that read, train, score and save, and how its accuracy is read."""

from __future__ import annotations

from pathlib import Path

from _peers import FASTTEXT_NAME, VW_NAME, nbsvm_train, peer_script, vw_accuracy, vw_commands

SKLEARN = "scikit-learn HashingVectorizer 2^{bits} + NB + SGD(log)"


def systems(files, work: Path, mesnil: bool) -> list[dict]:
    tr, te = files["train"], files["test"]

    def nbsvm(threads: str) -> list[list[str]]:
        options = ("--n-bits", "24", "--threads", threads)
        return [nbsvm_train(tr["raw"], te["raw"], work / "nbsvm.npz", *options)]

    def sklearn(*options: str) -> list[list[str]]:
        return [peer_script("sklearn_nbsvm", tr["tok"], te["tok"], *options)]

    def vw_read(_result) -> float:
        return vw_accuracy(work / "vw.pred", te["vw"])

    fasttext = [peer_script("fasttext_text", tr["ft"], te["ft"], "--thread", "2")]
    # one row a system: name, group, commands and (where its output does not say) accuracy
    table = [
        ("nbsvm (threads 1, reproducible)", "nbsvm", nbsvm("1"), None),
        ("nbsvm (threads 2, Hogwild)", "nbsvm", nbsvm("2"), None),
        (VW_NAME, "peer", vw_commands(tr["vw"], te["vw"], work), vw_read),
        (FASTTEXT_NAME, "peer", fasttext, None),
        (SKLEARN.format(bits=24), "peer", sklearn("--bits", "24"), None),
        (SKLEARN.format(bits=26), "peer", sklearn("--bits", "26"), None),
    ]
    if mesnil:
        exact = "Mesnil-style NBSVM (exact vocabulary, liblinear)"
        table.append((exact, "peer", sklearn("--exact"), None))
    return [
        dict(name=name, group=group, cmds=cmds, **({"accuracy": read} if read else {}))
        for name, group, cmds, read in table
    ]
