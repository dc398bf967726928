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

import random
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

Fold = tuple  # (train_texts, train_labels, test_texts, test_labels)


@dataclass(frozen=True)
class Shape:
    name: str
    kind: str
    description: str
    build: Callable[[int, bool], list]
    no_spaces: bool = False        # the baseline then reads character n-grams


# ---- corpora, read once per process ------------------------------------------------------

@lru_cache(maxsize=None)
def corpus(name: str, part: str | None = None) -> tuple[tuple, tuple]:
    """``(texts, labels)`` of a corpus part, in archive order (20 Newsgroups as latin-1,
    as the datasets module and ``make bench`` read it)."""
    from nbsvm import datasets
    encoding = "latin-1" if name == "20newsgroups" else "utf-8"
    docs = list(datasets.documents(name, part, encoding=encoding))
    return tuple(d.text for d in docs), tuple(d.label for d in docs)


@lru_cache(maxsize=None)
def rt2k() -> tuple[tuple, tuple, tuple]:
    """RT-2k's reviews, labels and ``cv###`` numbers."""
    from nbsvm import datasets
    texts, labels, numbers = [], [], []
    for d in datasets.documents("rt_polarity_2k"):
        texts.append(d.text)
        labels.append(d.label)
        numbers.append(int(re.search(r"/cv(\d{3})_", d.source).group(1)))
    return tuple(texts), tuple(labels), tuple(numbers)


@lru_cache(maxsize=None)
def blitzer_bodies() -> tuple[tuple, tuple, tuple]:
    """Every labeled Blitzer review's body (``<review_text>``, no title), its domain and
    its polarity, in archive order."""
    from nbsvm import datasets
    from nbsvm.io.blitzer import LABELS, read_reviews, review_members
    texts, domains, polarity = [], [], []
    path = datasets.archive("blitzer", "sorted_data_acl_labeled.tar.gz")
    for member, fh in review_members(path):
        stem = Path(member).stem
        if stem not in LABELS:
            continue
        domain = DOMAIN_NAMES.get(Path(member).parent.name, Path(member).parent.name)
        for doc in read_reviews(fh, label=stem, fields=("review_text",), source=member):
            texts.append(doc.text)
            domains.append(domain)
            polarity.append(stem)
    return tuple(texts), tuple(domains), tuple(polarity)


DOMAIN_NAMES = {"kitchen_&_housewares": "kitchen"}


# ---- text transformations -----------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
FIRST_SENTENCE_WORDS = 50


def first_sentence(text: str, max_words: int = FIRST_SENTENCE_WORDS) -> str:
    """The first sentence of ``text``: up to the first ``.``, ``!`` or ``?`` followed by white
    space, or the first line break, on one line, at most ``max_words`` words (a review
    without punctuation is otherwise one long "sentence").

    >>> first_sentence("Great blender.  Works well!\\nBuy it.")
    'Great blender.'
    >>> first_sentence("\\n\\nno full stop here\\nsecond line")
    'no full stop here'
    """
    for piece in _SENTENCE_END.split(text.strip()):
        words = piece.split()
        if words:
            return " ".join(words[:max_words])
    return ""


def subject_line(message: str) -> str:
    """The value of a news message's ``Subject:`` header (continuation lines joined), on one
    line; "" when the header block has none.

    >>> subject_line("From: a@b\\nSubject: Re: Clipper\\n chip\\n\\nbody\\nSubject: no")
    'Re: Clipper chip'
    """
    head = message.split("\n\n", 1)[0].split("\n")
    for i, line in enumerate(head):
        if line.lower().startswith("subject:"):
            value = [line[len("subject:"):]]
            for more in head[i + 1:]:
                if not more[:1].isspace():
                    break
                value.append(more)
            return " ".join(" ".join(value).split())
    return ""


_WHITE = re.compile(r"\s+")


def without_spaces(text: str) -> str:
    """``text`` with IMDB's ``<br />`` breaks and then every white-space character removed
    (Python's ``\\s``, Unicode included): a stand-in for a script written without spaces.

    >>> without_spaces("Not bad.<br /><br />A  fine\\tfilm.")
    'Notbad.Afinefilm.'
    """
    return _WHITE.sub("", text.replace("<br />", " "))


# look-alikes of Latin letters in Cyrillic and Greek (same shape, other code points)
HOMOGLYPHS = {
    "a": "\u0430\u03b1", "c": "\u0441\u03f2", "d": "\u0501", "e": "\u0435\u03b5",
    "h": "\u04bb", "i": "\u0456\u03b9", "j": "\u0458", "k": "\u03ba", "n": "\u03b7",
    "o": "\u043e\u03bf", "p": "\u0440\u03c1", "s": "\u0455", "t": "\u03c4", "u": "\u03c5",
    "v": "\u03bd", "x": "\u0445\u03c7", "y": "\u0443\u03b3",
    "A": "\u0410\u0391", "B": "\u0412\u0392", "C": "\u0421", "E": "\u0415\u0395",
    "H": "\u041d\u0397", "I": "\u0406\u0399", "K": "\u041a\u039a", "M": "\u041c\u039c",
    "N": "\u039d", "O": "\u041e\u039f", "P": "\u0420\u03a1", "T": "\u0422\u03a4",
    "X": "\u0425\u03a7", "Y": "\u03a5", "Z": "\u0396",
}
# precomposed accented forms (NFC code points)
ACCENTED = {
    "a": "\u00e0\u00e1\u00e2\u00e3\u00e4\u00e5", "c": "\u00e7\u0107\u010d",
    "e": "\u00e8\u00e9\u00ea\u00eb\u0113", "i": "\u00ec\u00ed\u00ee\u00ef",
    "n": "\u00f1\u0144", "o": "\u00f2\u00f3\u00f4\u00f5\u00f6\u00f8", "s": "\u0161\u015b",
    "u": "\u00f9\u00fa\u00fb\u00fc", "y": "\u00fd\u00ff", "z": "\u017e\u017a",
    "A": "\u00c0\u00c1\u00c2\u00c4", "E": "\u00c8\u00c9\u00ca", "O": "\u00d3\u00d6",
    "U": "\u00da\u00dc",
}
EMOJI = ("\U0001F600", "\U0001F602", "\U0001F60D", "\U0001F622", "\U0001F621",
         "\U0001F44D", "\U0001F44E", "\U0001F525", "\U0001F3AC", "\u2764\ufe0f",
         "\U0001F914", "\U0001F389")
P_HOMOGLYPH, P_ACCENT, P_EMOJI = 0.3, 0.2, 0.1


def unicode_heavy(text: str, seed: int = 0) -> str:
    """``text`` with each letter that has one replaced by a Cyrillic or Greek look-alike
    with probability 0.3, else by an accented form with probability 0.2 (of the rest), and
    an emoji (one of twelve, drawn independently of the label) after a word with
    probability 0.1. Deterministic: the draws come from ``random.Random`` seeded by
    ``seed`` and the CRC-32 of the text, so the same sentence always gets the same
    spelling, and two occurrences of a word within it usually different ones.

    >>> unicode_heavy("the movie is great .") == unicode_heavy("the movie is great .")
    True
    >>> unicode_heavy("the movie is great .").isascii()
    False
    """
    rng = random.Random((seed << 32) ^ zlib.crc32(text.encode("utf-8")))
    out = []
    for ch in text:
        r = rng.random()
        if ch in HOMOGLYPHS and r < P_HOMOGLYPH:
            out.append(rng.choice(HOMOGLYPHS[ch]))
        elif ch in ACCENTED and r < P_HOMOGLYPH + P_ACCENT:
            out.append(rng.choice(ACCENTED[ch]))
        else:
            out.append(ch)
        if ch == " " and rng.random() < P_EMOJI:
            out.append(rng.choice(EMOJI) + " ")
    return "".join(out)


# ---- sampling and folds ---------------------------------------------------------------------

SALT = {"20ng-subjects": 1, "blitzer-domain": 2, "subj": 3, "mpqa": 4, "imdb": 5, "rt-2k": 6,
        "20ng": 7, "imdb-imbalanced": 8, "imdb-200": 9, "imdb-1000": 10, "imdb-no-spaces": 11,
        "subj-unicode": 3}       # the Unicode shape reuses Subj's folds


def rng_for(shape: str, seed: int, *more: int) -> np.random.Generator:
    return np.random.default_rng([seed, SALT[shape], *more])


def sample(labels, counts: dict, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``counts[label]`` documents of each label, drawn without replacement,
    shuffled together."""
    labels = np.asarray(labels, dtype=object)
    picked = [rng.choice(np.flatnonzero(labels == label), size=n, replace=False)
              for label, n in counts.items()]
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
        out.append((list(texts[train]), list(labels[train]),
                    list(texts[fold == f]), list(labels[fold == f])))
    return out


def split(train_x, train_y, test_x, test_y, rng: np.random.Generator) -> Fold:
    """One train / test split, the training part in a seeded random order."""
    order = rng.permutation(len(train_x))
    return ([train_x[i] for i in order], [train_y[i] for i in order], list(test_x),
            list(test_y))


def pick(texts, labels, index) -> tuple[list, list]:
    return [texts[i] for i in index], [labels[i] for i in index]


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
    return _sentences("subj", "subj-unicode", seed, quick,
                      transform=lambda t: unicode_heavy(t, seed))


def _imdb(shape: str, seed: int, n_train: dict, n_test: dict, draws: int = 1,
          transform=None) -> list[Fold]:
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
    return _imdb(shape, seed, {"neg": n // 2, "pos": n // 2}, {"neg": m, "pos": m},
                 draws=2 if quick else FEW_DRAWS)


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
    return _imdb("imdb-no-spaces", seed, {"neg": n, "pos": n}, {"neg": n, "pos": n},
                 transform=without_spaces)


RT_FOLDS = 5


def rt_2k(seed: int, quick: bool) -> list[Fold]:
    """RT-2k: 2,000 movie reviews, 5 folds by ``cv###`` number (folds of 200 numbers, each
    fold 200 positive and 200 negative reviews; Wang & Manning use 10)."""
    texts, labels, numbers = rt2k()
    fold = np.asarray(numbers) // (1000 // RT_FOLDS)
    if quick:
        keep = np.flatnonzero(np.asarray(numbers) % 20 == 0)       # 100 reviews
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


SHAPES = {s.name: s for s in [
    Shape("20ng-subjects", "short multi-class",
          "20 Newsgroups subject lines alone, 20 classes, bydate 11,314 / 7,532", ng_subjects),
    Shape("blitzer-domain", "short multi-class",
          "Blitzer domain (books, dvd, electronics, kitchen) from each review's first "
          "sentence, 4 x 1,000 (half positive), 5 stratified folds", blitzer_domain),
    Shape("subj", "short binary", "Subj, 10,000 sentences, 5 stratified folds", subj),
    Shape("mpqa", "short binary", "MPQA, 10,603 phrases (3,310 pos), 5 stratified folds",
          mpqa),
    Shape("imdb", "long binary", "IMDB, 10,000 / 10,000 (seeded, balanced) of 25,000 / 25,000",
          imdb),
    Shape("rt-2k", "long binary", "RT-2k, 2,000 reviews, 5 folds by cv### number", rt_2k),
    Shape("20ng", "long multi-class",
          "20 Newsgroups whole messages with headers, bydate 11,314 / 7,532", ng_full),
    Shape("imdb-imbalanced", "imbalanced",
          "IMDB 1 positive : 9 negative, 5,000 / 5,000 (500 / 500 positive)", imdb_imbalanced),
    Shape("imdb-200", "few documents",
          "IMDB, 200 training reviews (100 per class), 3 seeded draws, 5,000 test reviews",
          imdb_200),
    Shape("imdb-1000", "few documents",
          "IMDB, 1,000 training reviews (500 per class), 3 seeded draws, 5,000 test reviews",
          imdb_1000),
    Shape("imdb-no-spaces", "no spaces",
          "IMDB without white space, 3,000 / 3,000 (balanced)", imdb_no_spaces,
          no_spaces=True),
    Shape("subj-unicode", "Unicode-heavy",
          "Subj with Cyrillic/Greek look-alikes, accented letters and emoji, Subj's 5 folds",
          subj_unicode),
]}
