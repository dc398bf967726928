"""Seeded sampling and stratified folds for the robustness shapes: each shape's draws
depend on the seed and a salt of its own name, never on the order shapes run in."""

from __future__ import annotations

import numpy as np

Fold = tuple  # (train_texts, train_labels, test_texts, test_labels)

SALT = {
    "20ng-subjects": 1,
    "blitzer-domain": 2,
    "subj": 3,
    "mpqa": 4,
    "imdb": 5,
    "rt-2k": 6,
    "20ng": 7,
    "imdb-imbalanced": 8,
    "imdb-200": 9,
    "imdb-1000": 10,
    "imdb-no-spaces": 11,
    "subj-unicode": 3,
    "20ng-few": 12,
    "blitzer-few": 13,
    "20ng-authors": 14,
}  # the Unicode shape reuses Subj's folds


def rng_for(shape: str, seed: int, *more: int) -> np.random.Generator:
    return np.random.default_rng([seed, SALT[shape], *more])


def sample(labels, counts: dict, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``counts[label]`` documents of each label, drawn without replacement,
    shuffled together."""
    labels = np.asarray(labels, dtype=object)
    picked = [
        rng.choice(np.flatnonzero(labels == label), size=n, replace=False)
        for label, n in counts.items()
    ]
    return rng.permutation(np.concatenate(picked))


def stratified_folds(labels, k: int, rng: np.random.Generator) -> np.ndarray:
    """A fold number 0..k-1 for each document, every label spread evenly over the folds."""
    labels = np.asarray(labels, dtype=object)
    fold = np.empty(len(labels), dtype=int)
    for label in sorted(set(labels.tolist())):
        where = rng.permutation(np.flatnonzero(labels == label))
        fold[where] = np.arange(len(where)) % k
    return fold


def cross_validated(texts, labels, fold: np.ndarray, rng: np.random.Generator) -> list[Fold]:
    """The folds, each training part in a seeded random order (the test part in corpus
    order)."""
    texts = np.asarray(texts, dtype=object)
    labels = np.asarray(labels, dtype=object)
    out = []
    for f in sorted(set(fold)):
        train = rng.permutation(np.flatnonzero(fold != f))
        out.append(
            (
                list(texts[train]),
                list(labels[train]),
                list(texts[fold == f]),
                list(labels[fold == f]),
            )
        )
    return out


def split(train_x, train_y, test_x, test_y, rng: np.random.Generator) -> Fold:
    """One train / test split, the training part in a seeded random order."""
    order = rng.permutation(len(train_x))
    return ([train_x[i] for i in order], [train_y[i] for i in order], list(test_x), list(test_y))


def pick(texts, labels, index) -> tuple[list, list]:
    return [texts[i] for i in index], [labels[i] for i in index]
