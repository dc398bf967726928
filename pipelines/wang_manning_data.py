"""The corpora of Wang & Manning's table read with their protocol: each as (texts, labels,
fold of each document) or (train, test)."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import numpy as np


def _members(archive: Path):
    with tarfile.open(archive) as tar:
        for m in tar:
            if m.isfile():
                yield m.name, tar.extractfile(m).read()


def rt2k(root: Path):
    texts, labels, folds = [], [], []
    for name, data in _members(root / "rt_polarity_2k" / "txt_sentoken.tar.gz"):
        m = re.search(r"(pos|neg)/cv(\d{3})_", name)
        if m:
            texts.append(data.decode("utf-8"))
            labels.append(m.group(1))
            folds.append(int(m.group(2)) // 100)
    return texts, labels, np.asarray(folds)


def _sentences(archive: Path, files: dict, seed: int):
    texts, labels = [], []
    for name, data in _members(archive):
        label = files.get(Path(name).name)
        if label is not None:
            # one per line (not splitlines: latin-1 \x85 is a line break to it); the few
            # blank phrases count, as in the published totals
            lines = data.decode("latin-1").split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            texts += [line.strip() for line in lines]
            labels += [label] * len(lines)
    folds = np.random.default_rng(seed).permutation(len(texts)) % 10
    return texts, labels, folds


def subj(root: Path, seed: int):
    return _sentences(
        root / "subj" / "subj.tar.gz", {"subj.objective": "obj", "subj.subjective": "subj"}, seed
    )


def mpqa(root: Path, seed: int):
    return _sentences(root / "mpqa" / "mpqa.tar.gz", {"mpqa.pos": "pos", "mpqa.neg": "neg"}, seed)


def imdb(root: Path):
    parts = {"train": ([], []), "test": ([], [])}
    for name, data in _members(root / "imdb" / "aclImdb_labeled.tar.gz"):
        m = re.search(r"aclImdb/(train|test)/(pos|neg)/[^/]+\.txt$", name)
        if m:
            parts[m.group(1)][0].append(data.decode("utf-8"))
            parts[m.group(1)][1].append(m.group(2))
    return parts["train"], parts["test"]


def strip_headers(message: str) -> str:
    """The body of a news message: what follows the first blank line."""
    head, sep, body = message.partition("\n\n")
    return body if sep else message


def newsgroups(root: Path, groups=None):
    parts = {"train": ([], []), "test": ([], [])}
    for name, data in _members(root / "20newsgroups" / "20news-bydate.tar.gz"):
        m = re.search(r"20news-bydate-(train|test)/([^/]+)/[^/]+$", name)
        if m and (groups is None or m.group(2) in groups):
            parts[m.group(1)][0].append(data.decode("latin-1"))
            parts[m.group(1)][1].append(m.group(2))
    return parts["train"], parts["test"]
