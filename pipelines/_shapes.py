"""The shapes of text ``pipelines/robustness.py`` measures, built from the shared corpora
(``nbsvm.datasets.documents``: read from the checked archives, nothing unpacked).

Each shape is a :class:`Shape`: its name, its kind (short multi-class, long binary, ...),
a one-line description and a builder ``build(seed, quick) -> [(train_texts, train_labels,
test_texts, test_labels), ...]``, one tuple per fold. Every sample and fold assignment is
seeded (``numpy.random.default_rng([seed, salt])``, a salt per shape, so shapes do not share
draws) and drawn from the archives' document order, so a seed gives the same folds on any
machine. Every training part is in a seeded random order: the archives group documents by
class, and a learner that reads its input in order (fastText does not shuffle) would
otherwise see one class after the other. ``quick`` gives tiny sizes for the smoke test.

The text transformations are deterministic functions of the text and the seed:
:func:`first_sentence`, :func:`subject_line`, :func:`without_spaces`, :func:`unicode_heavy`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from _shape_corpora import blitzer_bodies, corpus, rt2k
from _shape_few import blitzer_few, ng_authors, ng_few
from _shape_folds import Fold, cross_validated, pick, rng_for, sample, split, stratified_folds
from _shape_text import first_sentence, subject_line, unicode_heavy, without_spaces


@dataclass(frozen=True)
class Shape:
    name: str
    kind: str
    description: str
    build: Callable[[int, bool], list]
    no_spaces: bool = False  # the baseline then reads character n-grams


# ---- the shapes -----------------------------------------------------------------------------


def ng_subjects(seed: int, quick: bool) -> list[Fold]:
    """20 Newsgroups, each message's ``Subject:`` line alone (bydate train / test)."""
    (tr, ytr), (te, yte) = corpus("20newsgroups", "train"), corpus("20newsgroups", "test")
    tr, te = [subject_line(t) for t in tr], [subject_line(t) for t in te]
    rng = rng_for("20ng-subjects", seed)
    if quick:
        i, j = rng.permutation(len(tr))[:400], rng.permutation(len(te))[:200]
        return [split(*pick(tr, ytr, i), *pick(te, yte, j), rng)]
    return [split(tr, ytr, te, yte, rng)]


BLITZER_PER_DOMAIN, BLITZER_FOLDS = 1000, 5


def blitzer_domain(seed: int, quick: bool) -> list[Fold]:
    """Blitzer et al.'s four domains from the first sentence of each review's body: a seeded
    1,000 reviews per domain (500 positive, 500 negative), 5 stratified folds."""
    texts, domains, polarity = blitzer_bodies()
    per, k = (40, 2) if quick else (BLITZER_PER_DOMAIN, BLITZER_FOLDS)
    rng = rng_for("blitzer-domain", seed)
    key = np.asarray([f"{d}/{p}" for d, p in zip(domains, polarity)], dtype=object)
    index = sample(key, {c: per // 2 for c in sorted(set(key.tolist()))}, rng)
    x = [first_sentence(texts[i]) for i in index]
    y = [domains[i] for i in index]
    return cross_validated(x, y, stratified_folds(y, k, rng), rng)


SENTENCE_FOLDS = 5


def _sentences(name: str, shape: str, seed: int, quick: bool, transform=None) -> list[Fold]:
    texts, labels = corpus(name)
    rng = rng_for(shape, seed)
    k = 2 if quick else SENTENCE_FOLDS
    if quick:
        index = rng.permutation(len(texts))[:400]
        texts, labels = pick(texts, labels, index)
    if transform is not None:
        texts = [transform(t) for t in texts]
    return cross_validated(texts, labels, stratified_folds(labels, k, rng), rng)


def subj(seed: int, quick: bool) -> list[Fold]:
    """Subj: 5,000 subjective and 5,000 objective sentences, 5 stratified folds."""
    return _sentences("subj", "subj", seed, quick)


def mpqa(seed: int, quick: bool) -> list[Fold]:
    """MPQA: 10,603 opinion phrases (3 blank ones skipped by the reader), 5 stratified
    folds."""
    return _sentences("mpqa", "mpqa", seed, quick)


def subj_unicode(seed: int, quick: bool) -> list[Fold]:
    """Subj through :func:`unicode_heavy` (Cyrillic/Greek look-alikes, accented letters,
    emoji), on Subj's folds."""
    return _sentences(
        "subj", "subj-unicode", seed, quick, transform=lambda t: unicode_heavy(t, seed)
    )


def _imdb(
    shape: str, seed: int, n_train: dict, n_test: dict, draws: int = 1, transform=None
) -> list[Fold]:
    """IMDB: ``n_train`` / ``n_test`` reviews per label drawn from its train / test parts;
    ``draws`` training samples (each its own fold) against one test sample."""
    tr, ytr = corpus("imdb", "train")
    te, yte = corpus("imdb", "test")
    test_x, test_y = pick(te, yte, sample(yte, n_test, rng_for(shape, seed, 0)))
    if transform is not None:
        test_x = [transform(t) for t in test_x]
    folds = []
    for draw in range(draws):
        x, y = pick(tr, ytr, sample(ytr, n_train, rng_for(shape, seed, 1 + draw)))
        if transform is not None:
            x = [transform(t) for t in x]
        folds.append((x, y, list(test_x), list(test_y)))
    return folds


def imdb(seed: int, quick: bool) -> list[Fold]:
    """IMDB: a seeded 10,000 of the 25,000 training reviews (5,000 per class) and 10,000
    of the test reviews."""
    n = 150 if quick else 5000
    return _imdb("imdb", seed, {"neg": n, "pos": n}, {"neg": n, "pos": n})


def imdb_imbalanced(seed: int, quick: bool) -> list[Fold]:
    """IMDB with one positive for nine negatives: 4,500 + 500 training reviews, 4,500 + 500
    test reviews."""
    neg, pos = (270, 30) if quick else (4500, 500)
    return _imdb("imdb-imbalanced", seed, {"neg": neg, "pos": pos}, {"neg": neg, "pos": pos})


FEW_DRAWS = 3


def _imdb_few(n: int, shape: str, seed: int, quick: bool) -> list[Fold]:
    m = 100 if quick else 2500
    return _imdb(
        shape,
        seed,
        {"neg": n // 2, "pos": n // 2},
        {"neg": m, "pos": m},
        draws=2 if quick else FEW_DRAWS,
    )


def imdb_200(seed: int, quick: bool) -> list[Fold]:
    """200 IMDB training reviews (100 per class), three seeded draws, each tested on the
    same 5,000 test reviews (2,500 per class)."""
    return _imdb_few(40 if quick else 200, "imdb-200", seed, quick)


def imdb_1000(seed: int, quick: bool) -> list[Fold]:
    """1,000 IMDB training reviews (500 per class), three seeded draws, each tested on the
    same 5,000 test reviews."""
    return _imdb_few(100 if quick else 1000, "imdb-1000", seed, quick)


def imdb_no_spaces(seed: int, quick: bool) -> list[Fold]:
    """IMDB, 3,000 / 3,000 reviews (1,500 per class each) with every white-space character
    removed (:func:`without_spaces`)."""
    n = 100 if quick else 1500
    return _imdb(
        "imdb-no-spaces", seed, {"neg": n, "pos": n}, {"neg": n, "pos": n}, transform=without_spaces
    )


RT_FOLDS = 5


def rt_2k(seed: int, quick: bool) -> list[Fold]:
    """RT-2k: 2,000 movie reviews, 5 folds by ``cv###`` number (folds of 200 numbers, each
    fold 200 positive and 200 negative reviews; Wang & Manning use 10)."""
    texts, labels, numbers = rt2k()
    fold = np.asarray(numbers) // (1000 // RT_FOLDS)
    if quick:
        keep = np.flatnonzero(np.asarray(numbers) % 20 == 0)  # 100 reviews
        texts, labels = pick(texts, labels, keep)
        fold = np.asarray(numbers)[keep] // 500
    return cross_validated(texts, labels, fold, rng_for("rt-2k", seed))


def ng_full(seed: int, quick: bool) -> list[Fold]:
    """20 Newsgroups, whole messages with their headers (bydate train / test, latin-1)."""
    (tr, ytr), (te, yte) = corpus("20newsgroups", "train"), corpus("20newsgroups", "test")
    rng = rng_for("20ng", seed)
    if quick:
        i, j = rng.permutation(len(tr))[:400], rng.permutation(len(te))[:200]
        return [split(*pick(tr, ytr, i), *pick(te, yte, j), rng)]
    return [split(tr, ytr, te, yte, rng)]


SHAPES = {
    s.name: s
    for s in [
        Shape(
            "20ng-subjects",
            "short multi-class",
            "20 Newsgroups subject lines alone, 20 classes, bydate 11,314 / 7,532",
            ng_subjects,
        ),
        Shape(
            "blitzer-domain",
            "short multi-class",
            "Blitzer domain (books, dvd, electronics, kitchen) from each review's first "
            "sentence, 4 x 1,000 (half positive), 5 stratified folds",
            blitzer_domain,
        ),
        Shape("subj", "short binary", "Subj, 10,000 sentences, 5 stratified folds", subj),
        Shape("mpqa", "short binary", "MPQA, 10,603 phrases (3,310 pos), 5 stratified folds", mpqa),
        Shape(
            "imdb",
            "long binary",
            "IMDB, 10,000 / 10,000 (seeded, balanced) of 25,000 / 25,000",
            imdb,
        ),
        Shape("rt-2k", "long binary", "RT-2k, 2,000 reviews, 5 folds by cv### number", rt_2k),
        Shape(
            "20ng",
            "long multi-class",
            "20 Newsgroups whole messages with headers, bydate 11,314 / 7,532",
            ng_full,
        ),
        Shape(
            "imdb-imbalanced",
            "imbalanced",
            "IMDB 1 positive : 9 negative, 5,000 / 5,000 (500 / 500 positive)",
            imdb_imbalanced,
        ),
        Shape(
            "imdb-200",
            "few documents",
            "IMDB, 200 training reviews (100 per class), 3 seeded draws, 5,000 test reviews",
            imdb_200,
        ),
        Shape(
            "imdb-1000",
            "few documents",
            "IMDB, 1,000 training reviews (500 per class), 3 seeded draws, 5,000 test reviews",
            imdb_1000,
        ),
        Shape(
            "20ng-few",
            "few documents, many classes",
            "20 Newsgroups whole messages, 30 per group (600), 3 seeded draws, 3,000 test messages",
            ng_few,
        ),
        Shape(
            "blitzer-few",
            "few documents, many classes",
            "Blitzer domain from review bodies, 30 per domain (120), 3 seeded draws, 600 "
            "test reviews",
            blitzer_few,
        ),
        Shape(
            "20ng-authors",
            "few documents, many classes",
            "20 Newsgroups' authors from message bodies, 5 training messages each of the "
            "360 with 8 or more, up to 5 test messages each",
            ng_authors,
        ),
        Shape(
            "imdb-no-spaces",
            "no spaces",
            "IMDB without white space, 3,000 / 3,000 (balanced)",
            imdb_no_spaces,
            no_spaces=True,
        ),
        Shape(
            "subj-unicode",
            "Unicode-heavy",
            "Subj with Cyrillic/Greek look-alikes, accented letters and emoji, Subj's 5 folds",
            subj_unicode,
        ),
    ]
}
