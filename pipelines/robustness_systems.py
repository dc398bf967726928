"""The systems of the robustness table, each returning (predicted labels, probabilities,
their classes), and the metrics every fold is scored with."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
from peers.fasttext_text import DEFAULTS as BENCH_DEFAULTS

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError

SYSTEMS = ("nbsvm defaults", "nbsvm auto", "baseline", "fastText defaults", "fastText bench")
FASTTEXT = ("fastText defaults", "fastText bench")
# make bench's fastText settings (results/tune_fasttext.md); the thread count stays
# fastText's default here, as for the other fastText row
BENCH_FASTTEXT = dict(BENCH_DEFAULTS)
BASELINE_NAME = "scikit-learn TF-IDF(1,2) + LinearSVC"
DISPLAY = {
    "baseline": BASELINE_NAME,
    "fastText defaults": "fastText (defaults, wordNgrams 2)",
    "fastText bench": "fastText (make bench's settings)",
}
QUICK_BUDGET = 3.0
EPS = 1e-15
COLUMNS = [
    "shape",
    "kind",
    "system",
    "folds",
    "n_train",
    "n_test",
    "classes",
    "accuracy",
    "accuracy_se",
    "macro_f1",
    "macro_f1_se",
    "log_loss",
    "log_loss_se",
    "zero_probability_pct",
    "seconds",
    "seconds_se",
    "calibration_seconds",
    "fold_accuracies",
    "auto_chosen",
    "auto_search_s_max",
    "auto_stopped_by_budget",
]


def nbsvm_defaults(train_x, train_y, test_x, seed, budget, no_spaces, work):
    clf = NBSVMClassifier(seed=seed).fit(train_x, train_y)
    return clf.predict(test_x), clf.predict_proba(test_x), list(clf.classes_), {}


def nbsvm_auto(train_x, train_y, test_x, seed, budget, no_spaces, work):
    clf = NBSVMClassifier(seed=seed, auto=True, time_budget=budget).fit(train_x, train_y)
    extra = {
        "auto_chosen": _describe(clf.auto_.get("changed", {})),
        "auto_search_s": float(clf.auto_.get("seconds", float("nan"))),
        "auto_stopped_by_budget": bool(clf.auto_.get("stopped_by_budget", False)),
    }
    predicted = clf.predict(test_x)
    try:
        proba = clf.predict_proba(test_x)
    except NBSVMError:  # the search chose a loss without probabilities (hinge)
        proba = None
    return predicted, proba, list(clf.classes_), extra


def _kw(settings: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def _describe(changed: dict) -> str:
    from nbsvm.models.auto import describe

    return describe(changed)


def vectorizer(no_spaces: bool):
    from sklearn.feature_extraction.text import TfidfVectorizer

    if no_spaces:
        return TfidfVectorizer(analyzer="char", ngram_range=(1, 3), sublinear_tf=True)
    return TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)


def baseline(train_x, train_y, test_x, seed, budget, no_spaces, work):
    """LinearSVC's labels (timed); the calibrated copy's probabilities (timed apart)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.svm import LinearSVC

    t0 = time.perf_counter()
    vec = vectorizer(no_spaces)
    xtr = vec.fit_transform(train_x)
    xte = vec.transform(test_x)
    predicted = LinearSVC().fit(xtr, train_y).predict(xte)
    t1 = time.perf_counter()
    calibrated = CalibratedClassifierCV(LinearSVC(), cv=3).fit(xtr, train_y)
    proba = calibrated.predict_proba(xte)
    extra = {"calibration_seconds": time.perf_counter() - t1, "_seconds": t1 - t0}
    return predicted, proba, list(calibrated.classes_), extra


def fasttext_line(text: str) -> str:
    from nbsvm.text.tokenize import tokenize

    return " ".join(tokenize(text))


def fasttext_system(train_x, train_y, test_x, seed, budget, no_spaces, work, settings=None):
    import fasttext

    path = Path(work) / "train.ft"
    with open(path, "w", encoding="utf-8") as f:
        for text, label in zip(train_x, train_y):
            f.write(f"__label__{label} {fasttext_line(text)}\n")
    model = fasttext.train_supervised(
        input=str(path), seed=seed, verbose=0, **(settings or {"wordNgrams": 2})
    )
    labels, probs = model.predict([fasttext_line(t) for t in test_x], k=-1)
    classes = sorted(set(train_y))
    column = {f"__label__{c}": i for i, c in enumerate(classes)}
    proba = np.zeros((len(test_x), len(classes)))
    for i, (names, p) in enumerate(zip(labels, probs)):
        for name, value in zip(names, p):
            proba[i, column[name]] = value
    predicted = [classes[j] for j in proba.argmax(axis=1)]
    return predicted, proba, classes, {}


RUN = {
    "nbsvm defaults": nbsvm_defaults,
    "nbsvm auto": nbsvm_auto,
    "baseline": baseline,
    "fastText defaults": fasttext_system,
    "fastText bench": lambda *a: fasttext_system(*a, settings=BENCH_FASTTEXT),
}


def log_loss(truth, proba, classes) -> float:
    """Mean negative log probability of the true class, rows normalized to sum 1 and the
    probability clipped to [1e-15, 1] (a class the system never saw gets 1e-15); NaN when
    the model gives no probabilities."""
    if proba is None:
        return float("nan")
    proba = np.asarray(proba, dtype=float)
    proba = proba / np.maximum(proba.sum(axis=1, keepdims=True), EPS)
    column = {c: i for i, c in enumerate(classes)}
    p = np.array([proba[i, column[t]] if t in column else 0.0 for i, t in enumerate(truth)])
    return float(-np.mean(np.log(np.clip(p, EPS, 1.0))))


def zero_probability_pct(truth, proba, classes) -> float:
    """The share (%) of documents whose true class got a probability under 1e-15 (each
    adds 34.5 / n to the log loss)."""
    if proba is None:
        return float("nan")
    proba = np.asarray(proba, dtype=float)
    column = {c: i for i, c in enumerate(classes)}
    p = np.array([proba[i, column[t]] if t in column else 0.0 for i, t in enumerate(truth)])
    return 100.0 * float(np.mean(p < EPS))


def scores(truth, predicted, proba, classes) -> dict:
    from sklearn.metrics import f1_score

    truth = [str(t) for t in truth]
    predicted = [str(p) for p in predicted]
    return {
        "accuracy": 100.0 * float(np.mean(np.asarray(truth) == np.asarray(predicted))),
        "macro_f1": 100.0 * float(f1_score(truth, predicted, average="macro")),
        "log_loss": log_loss(truth, proba, [str(c) for c in classes]),
        "zero_probability_pct": zero_probability_pct(truth, proba, [str(c) for c in classes]),
    }


def run_fold(system, fold, seed, budget, no_spaces) -> dict:
    train_x, train_y, test_x, test_y = fold
    with tempfile.TemporaryDirectory(prefix="nbsvm-robustness-") as work:
        t0 = time.perf_counter()
        predicted, proba, classes, extra = RUN[system](
            train_x, train_y, test_x, seed, budget, no_spaces, work
        )
        seconds = time.perf_counter() - t0
    seconds = extra.pop("_seconds", seconds)
    return {**scores(test_y, predicted, proba, classes), "seconds": seconds, **extra}
