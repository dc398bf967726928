"""Compile the kernels most tests use, once, into numba's cache (``make test`` runs this
from the source tree while the test tools install, before the pytest-xdist workers start).

Without it every worker compiles the same kernels on a fresh clone: both cores spend the
first half-minute of the suite compiling twice. Tests compile what this leaves out on
demand, as before; nothing here is checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nbsvm import NBSVMClassifier
from nbsvm.evaluation.explain import explain_text
from nbsvm.learners.dcd import DualCD
from nbsvm.learners.linear import SGDClassifier, SGDRegressor
from nbsvm.learners.multiclass import MulticlassHinge
from nbsvm.learners.multilabel import MultilabelHinge
from nbsvm.learners.ogd import OGDRegressor
from nbsvm.learners.pa import MIRA, PassiveAggressive
from nbsvm.learners.pegasos import Pegasos
from nbsvm.learners.registry import TEXT_LEARNERS

WORDS = "good fun film bad dull plot great acting awful mess 東京 café".split()


def corpus(n_docs: int, n_classes: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Random texts with a learnable label (its word first)."""
    rng = np.random.default_rng(seed)
    labels = [f"c{k}" for k in rng.integers(0, n_classes, n_docs)]
    texts = [f"{y} " + " ".join(rng.choice(WORDS, 12)) for y in labels]
    return texts, labels


def main() -> None:
    """The learners on arrays in a child process beside those on text: both cores compile
    (pip installing the test tools beside them takes one). A kernel both need is compiled by
    whichever comes first while the other works on its own (numba finds in the cache what
    the other process wrote): the text side starts with the built-in learner and the hashing,
    the array side with the backend learners' kernels (then the same learners on text, and
    document weights).
    Started together on the same work, both compiled the same kernels at once: 88 s, where
    170 s of compiling took place."""
    t0 = time.perf_counter()
    if sys.argv[1:] == ["--arrays"]:
        arrays()
        backends_on_text()
        weighted()
        return
    child = subprocess.Popen([sys.executable, __file__, "--arrays"])
    builtin_on_text()
    tokenizers_and_the_rest()
    child.wait()
    print(f"kernels compiled or loaded from numba's cache in {time.perf_counter() - t0:.1f} s")


def builtin_on_text() -> None:
    """The built-in learner's settings on text."""
    two, many = corpus(600, 2), corpus(600, 4)
    fit_on_text([
        ({}, two),
        ({}, many),
        (dict(loss="hinge", optimizer="sgd"), two),
        (dict(loss="softmax"), many),
        (dict(char_ngrams=4, split_scripts=True), two),
    ])


def fit_on_text(settings: list[tuple[dict, tuple]]) -> None:
    for kw, (texts, labels) in settings:
        clf = NBSVMClassifier(n_bits=12, epochs=2, **kw).fit(texts, labels)
        clf.predict(texts)
        if clf.has_proba():
            clf.predict_proba(texts)


def backends_on_text() -> None:
    """Every backend learner on text, and multi-label text."""
    many = corpus(600, 4)
    fit_on_text([(dict(learner=name), many) for name in TEXT_LEARNERS if name != "multilabel"])
    texts, labels = many
    sets = [[y, "extra"] if i % 3 == 0 else [y] for i, y in enumerate(labels)]
    for learner in (None, "multilabel"):
        NBSVMClassifier(n_bits=12, epochs=2, multilabel=True, learner=learner).fit(
            texts, sets
        ).predict(texts)


def tokenizers_and_the_rest() -> None:
    """The tokenizers, partial_fit and explanations."""
    two = corpus(600, 2)
    clf = NBSVMClassifier(n_bits=12, epochs=2).fit(*two)
    tokenizers = [dict(lowercase=False), dict(char_ngrams=4, char_min=2), dict(nfkc=True),
                  dict(long_words=8), dict(keep_counts=True)]
    texts, labels = two
    for kw in tokenizers:
        NBSVMClassifier(n_bits=12, epochs=1, **kw).fit(texts, labels)
    grown = NBSVMClassifier(n_bits=12)
    grown.partial_fit(texts[:300], labels[:300], classes=sorted(set(labels)))
    grown.partial_fit(texts[300:], labels[300:])
    explain_text(clf, texts[0])
    # NB scores beside the learner's (beta < 1); a model whose columns are its buckets saved
    NBSVMClassifier(n_bits=12, epochs=1, beta=0.5).fit(texts, labels).predict(texts)
    with tempfile.TemporaryDirectory(prefix="nbsvm-warm-") as folder:
        grown.save(Path(folder) / "grown.npz")


def weighted() -> None:
    """Document weights (float counts by kept column; a weighted counting lexicon)."""
    two, many = corpus(400, 2), corpus(400, 4)
    w = np.linspace(0.0, 2.0, 400)
    for texts, labels in (two, many):
        NBSVMClassifier(n_bits=12, epochs=1).fit(texts, labels, sample_weight=w)
        NBSVMClassifier(n_bits=12, epochs=1, keep_counts=True).fit(texts, labels, sample_weight=w)
        grown = NBSVMClassifier(n_bits=12)
        grown.partial_fit(texts, labels, classes=sorted(set(labels)), sample_weight=w)
    texts, labels = many
    sets = [[y, "extra"] if i % 3 == 0 else [y] for i, y in enumerate(labels)]
    NBSVMClassifier(n_bits=12, epochs=1, multilabel=True).fit(texts, sets, sample_weight=w)


def arrays() -> None:
    """The backend learners on dense and sparse arrays (``nbsvm learn``, the Python API)."""
    rng = np.random.default_rng(0)
    X = rng.random((300, 20))
    on_arrays(X)
    # make test starts this while the test tools install (scipy among them, with
    # scikit-learn): their marker file says when they are all in place
    installed, parent = Path(sys.prefix) / ".installed", os.getppid()
    while not installed.exists():
        if os.getppid() != parent:  # make test stopped (a failed install killed it)
            return
        time.sleep(0.5)
    from scipy import sparse

    on_arrays(X, sparse.csr_matrix(X))


def on_arrays(X: np.ndarray, X_: object = None) -> None:
    """Each backend learner on ``X_`` (``X`` itself by default), labels drawn from ``X``."""
    X_ = X if X_ is None else X_
    y = np.where(X[:, 0] > 0.5, "pos", "neg")
    three = np.array(["a", "b", "c"])[(X[:, 1] * 3).astype(int)]
    Pegasos(epochs=2).fit(X_, y).predict(X_)
    PassiveAggressive(epochs=2).fit(X_, y).predict(X_)
    MIRA(epochs=2).fit(X_, three).predict(X_)
    MulticlassHinge(epochs=2).fit(X_, three).predict(X_)
    MultilabelHinge(epochs=2).fit(X_, [[c] for c in three]).predict(X_)
    for loss in ("squared_hinge", "log"):  # (compiled, not solved: a few passes do)
        DualCD(loss=loss, max_iter=3, tol=1e9).fit(X_, y).predict(X_)
    OGDRegressor(epochs=2).fit(X_, X[:, 0]).predict(X_)
    # last: they share the built-in learner's kernels, which the text side compiles first
    for schedule in ("optimal", "adagrad"):
        SGDClassifier(schedule=schedule, epochs=2).fit(X_, y).objective(X_, y)
    SGDRegressor(epochs=2).fit(X_, X[:, 0]).predict(X_)


if __name__ == "__main__":
    main()
