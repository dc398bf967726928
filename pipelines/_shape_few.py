"""The shapes of few documents per class (``20ng-few``, ``blitzer-few``): long texts of many
classes, 30 training documents each, drawn three times against one test sample, where the
n-gram order read from the data (``nbsvm/config.py``) is measured."""

from __future__ import annotations

import re

from _shape_corpora import blitzer_bodies, corpus
from _shape_folds import Fold, pick, rng_for, sample

FEW_DRAWS = 3
FEW_PER_CLASS, FEW_TEST_PER_CLASS = 30, 150
AUTHOR_TRAIN, AUTHOR_TEST = 5, 5  # messages of each author


def _few_per_class(shape: str, train, test, seed: int, quick: bool) -> list[Fold]:
    """``FEW_PER_CLASS`` training documents of each class drawn from ``train`` (texts,
    labels), three seeded draws, against one sample of ``FEW_TEST_PER_CLASS`` per class of
    ``test``."""
    per, m = (6, 10) if quick else (FEW_PER_CLASS, FEW_TEST_PER_CLASS)
    (tr, ytr), (te, yte) = train, test
    test_x, test_y = pick(
        te, yte, sample(yte, dict.fromkeys(sorted(set(yte)), m), rng_for(shape, seed, 0))
    )
    return [
        pick(
            tr, ytr, sample(ytr, dict.fromkeys(sorted(set(ytr)), per), rng_for(shape, seed, 1 + d))
        )
        + (list(test_x), list(test_y))
        for d in range(2 if quick else FEW_DRAWS)
    ]


def ng_few(seed: int, quick: bool) -> list[Fold]:
    """20 Newsgroups whole messages, 30 training messages per group (600) drawn from bydate
    train three times, each tested on the same 150 per group (3,000) of bydate test."""
    return _few_per_class(
        "20ng-few", corpus("20newsgroups", "train"), corpus("20newsgroups", "test"), seed, quick
    )


def blitzer_few(seed: int, quick: bool) -> list[Fold]:
    """Blitzer domains from each review's whole body, 30 training reviews per domain (120)
    drawn three times from a seeded half of the archive, tested on 150 per domain (600)
    of the other half."""
    texts, domains, _ = blitzer_bodies()
    order = rng_for("blitzer-few", seed, 99).permutation(len(texts))
    half = len(order) // 2
    train = pick(texts, domains, order[:half])
    test = pick(texts, domains, order[half:])
    return _few_per_class("blitzer-few", train, test, seed, quick)


def ng_authors(seed: int, quick: bool) -> list[Fold]:
    """20 Newsgroups' authors (the ``From:`` line) from their message bodies alone,
    headers dropped: 5 training messages of every author with at least 8 (bydate train and
    test together), tested on up to 5 others of each; one seeded draw. Authorship, where
    phrases that recur across an author's messages carry the class."""
    by_author: dict[str, list[str]] = {}
    texts = corpus("20newsgroups", "train")[0] + corpus("20newsgroups", "test")[0]
    for text in texts:
        head, _, body = text.partition("\n\n")
        author = re.search(r"^From:\s*(.*)$", head, re.M)
        if author and body.strip():
            by_author.setdefault(author.group(1).strip().lower(), []).append(body)
    authors = sorted(a for a, m in by_author.items() if len(m) >= AUTHOR_TRAIN + 3)
    rng = rng_for("20ng-authors", seed, 0)
    train: tuple[list, list] = ([], [])
    test: tuple[list, list] = ([], [])
    for author in authors[:20] if quick else authors:
        messages = [by_author[author][i] for i in rng.permutation(len(by_author[author]))]
        train[0].extend(messages[:AUTHOR_TRAIN])
        train[1].extend([author] * AUTHOR_TRAIN)
        test[0].extend(messages[AUTHOR_TRAIN : AUTHOR_TRAIN + AUTHOR_TEST])
        test[1].extend([author] * len(messages[AUTHOR_TRAIN : AUTHOR_TRAIN + AUTHOR_TEST]))
    # shuffled: a learner that reads in order must not see one author after the other
    return [pick(*train, rng.permutation(len(train[0]))) + test]
