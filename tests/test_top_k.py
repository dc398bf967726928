"""The k best classes of a document (``predict_top_k``, ``nbsvm predict --top-k / --threshold``)
against a plain ranking of ``predict_proba`` (or of the scores, for losses without
probabilities), and ``classes_`` indexed by an array of positions as scikit-learn's is."""
import functools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError

from conftest import synthetic
from test_multilabel_text import newsgroups_multilabel  # noqa: F401 (the 20NG fixture)

NBSVM = Path(sys.executable).parent / "nbsvm"


def _fit(n_classes, **params):
    """A model of 600 synthetic documents and 50 of them to rank; fitted once per setting
    in this module (the tests only read it)."""
    return _fitted(n_classes, tuple(sorted(params.items())))


@functools.cache
def _fitted(n_classes, params):
    docs = synthetic(600, n_classes=n_classes, seed=3)
    clf = NBSVMClassifier(n_bits=14, seed=0, **dict(params)).fit([d.text for d in docs],
                                                                 [d.label for d in docs])
    return clf, [d.text for d in docs[:50]]


def _reference(clf, values, k, threshold, scores=None):
    """The plain recomputation: sort each row, best first, ties by score (``scores``, one
    per class), then by class order."""
    out = []
    for i, row in enumerate(values):
        tie = scores[i] if scores is not None else np.zeros(len(row))
        order = sorted(range(len(row)), key=lambda j: (-row[j], -tie[j], j))[:k]
        out.append([(clf.classes_[j], float(row[j])) for j in order
                    if threshold is None or row[j] >= threshold])
    return out


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("k, threshold", [(1, None), (2, None), (3, None), (9, None),
                                          (2, 0.3), (4, 0.05)])
def test_top_k_ranks_the_probabilities(n_classes, k, threshold):
    clf, X = _fit(n_classes)
    got = clf.predict_top_k(X, k, threshold)
    want = _reference(clf, clf.predict_proba(X), k, threshold)
    assert [[c for c, _ in row] for row in got] == [[c for c, _ in row] for row in want]
    for g, w in zip(got, want):
        assert [p for _, p in g] == pytest.approx([p for _, p in w], rel=1e-12)
    if threshold is None:
        assert [row[0][0] for row in got] == list(clf.predict(X))    # the top class is the label


def test_a_loss_without_probabilities_ranks_scores():
    clf, X = _fit(4, loss="hinge", calibrate=None)
    assert not clf.has_proba()
    got = clf.predict_top_k(X, 2, threshold=-0.5)
    want = _reference(clf, clf.decision_function(X), 2, -0.5)
    assert [[c for c, _ in r] for r in got] == [[c for c, _ in r] for r in want]
    two, X2 = _fit(2, loss="hinge", calibrate=None)
    s = two.decision_function(X2)
    want = _reference(two, np.column_stack([-s, s]), 2, None)      # two classes: -s, s
    assert [[c for c, _ in r] for r in two.predict_top_k(X2, 2)] == \
        [[c for c, _ in r] for r in want]


def test_classes_index_like_an_array():
    clf, X = _fit(4)
    P = clf.predict_proba(X)
    ranked = clf.classes_[np.argsort(-P, 1)]          # raised TypeError on a plain list
    assert ranked.shape == P.shape
    assert list(ranked[:, 0]) == list(clf.predict(X))
    assert clf.classes_ == sorted(set(clf.classes_))  # still compares as a list
    path = Path(pytest.importorskip("tempfile").mkdtemp()) / "m.npz"
    clf.save(path)
    assert NBSVMClassifier.load(path).classes_[np.array([1, 0])].tolist() == clf.classes_[1::-1]


def test_bad_k_and_threshold_say_what_is_allowed():
    clf, X = _fit(4)
    for k in (0, -1, 2.5, True):
        with pytest.raises(NBSVMError, match="positive whole number"):
            clf.predict_top_k(X, k)
    with pytest.raises(NBSVMError, match="between 0 and 1"):
        clf.predict_top_k(X, 2, threshold=1.5)
    with pytest.raises(NBSVMError, match="finite"):
        _fit(4, loss="hinge", calibrate=None)[0].predict_top_k(X, 2, threshold=float("nan"))


def test_multilabel_top_k_ranks_each_labels_own_probability():
    docs = synthetic(600, n_classes=4, seed=5)
    X = [d.text for d in docs]
    y = [[d.label, "any"] if i % 3 else [d.label] for i, d in enumerate(docs)]
    clf = NBSVMClassifier(n_bits=14, seed=0, multilabel=True).fit(X, y)
    got = clf.predict_top_k(X[:40], 3, threshold=0.5)
    want = _reference(clf, clf.predict_proba(X[:40]), 3, 0.5, clf.decision_function(X[:40]))
    assert [[c for c, _ in r] for r in got] == [[c for c, _ in r] for r in want]


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_cli_top_k_on_20_newsgroups(newsgroups_multilabel, tmp_path):  # noqa: F811
    """The real command on four 20NG groups (one class per group): the top-k columns equal
    predict_top_k; --threshold alone lists the classes above it; a bad value is refused."""
    train, test = newsgroups_multilabel / "train.tsv", newsgroups_multilabel / "test.tsv"
    model, out = tmp_path / "m.npz", tmp_path / "p.csv"
    r = subprocess.run([str(NBSVM), "train", str(train), "--n-bits", "18", "-o", str(model),
                        "-q"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(NBSVM), "predict", str(test), "-m", str(model), "--top-k", "2",
                        "-o", str(out), "-q"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    assert list(df.columns)[-4:] == ["top1_label", "top1_probability", "top2_label",
                                     "top2_probability"]
    clf = NBSVMClassifier.load(model)
    texts = [line.split("\t", 1)[1].rstrip("\n") for line in
             test.read_text(encoding="utf-8").splitlines(keepends=True)]
    want = clf.predict_top_k(texts, 2)
    assert df.top1_label.tolist() == [w[0][0] for w in want]
    assert df.top2_label.tolist() == [w[1][0] for w in want]
    np.testing.assert_allclose(df.top1_probability, [w[0][1] for w in want], rtol=1e-9)
    assert (df.top1_label == df.label).all()
    assert (df.top1_label == df.true_label).mean() > 0.85       # a working model
    r = subprocess.run([str(NBSVM), "predict", str(test), "-m", str(model), "--threshold",
                        "0.3", "-q"], capture_output=True, text=True, timeout=600)
    df = pd.read_csv(pd.io.common.StringIO(r.stdout))
    assert list(df.columns)[-8:-6] == ["top1_label", "top1_probability"]   # every class
    shown = df.filter(like="_probability").to_numpy(float)
    assert (shown[~np.isnan(shown)] >= 0.3).all()
    assert df.top1_label.notna().mean() > 0.95 and df.top4_label.isna().mean() > 0.9
    r = subprocess.run([str(NBSVM), "predict", str(test), "-m", str(model), "--threshold",
                        "2"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "between 0 and 1" in r.stderr and "Traceback" not in r.stderr


def test_tied_probabilities_rank_by_score_as_predict_does():
    """Modified Huber's probabilities are flat beyond a margin: top-1 took the first of the
    tied classes ('A') where predict took the higher score ('B'), so one output row gave
    two answers."""
    clf = NBSVMClassifier(ngrams=1, n_bits=8, epochs=1, loss="modified_huber",
                          calibrate=None).fit(["a x", "b y", "c z"] * 20, ["A", "B", "C"] * 20)
    S = np.array([[-1.5, -1.2, -3.0], [1.5, 2.5, -1.0]])
    values, _ = clf.class_values(S)
    assert values[0, 0] == values[0, 1] and values[1, 0] == values[1, 1]  # ties, really
    assert list(clf.labels_of(S)) == ["B", "B"]
    assert clf.top_k_of(S, 3)[0].tolist() == [[1, 0, 2], [1, 0, 2]]


def test_tied_calibrated_probabilities_name_one_class_everywhere():
    """An isotonic calibration is a step function: predict took the first tied class, top-1
    the higher score."""
    from nbsvm.datasets import fixture
    rows = [line.rstrip("\n").split("\t", 1) for line in open(fixture("topics.txt"))] * 5
    clf = NBSVMClassifier(calibrate="isotonic").fit([t for _, t in rows], [c for c, _ in rows])
    S = np.array([[50.0, 100.0, -50.0]])
    proba = clf.proba_of(S)
    assert proba[0, 0] == proba[0, 1]  # tied, really
    assert clf.labels_of(S)[0] == clf.classes_[clf.top_k_of(S, 1)[0][0, 0]] == "sports"


@pytest.mark.parametrize("threshold", ["0.3", True, [0.3], None])
def test_a_threshold_that_is_not_a_number_is_refused_by_name(threshold):
    """predict_top_k(texts, threshold='0.3') raised numpy's "ufunc 'isfinite' not
    supported" where a number out of range got 'threshold is a probability ...'."""
    model, texts = _fitted(3, ())
    if threshold is None:  # (no threshold: every class, best first)
        model.predict_top_k(texts[:2], 3)
        return
    said = f"threshold is a probability for this model: between 0 and 1, got {threshold!r}"
    with pytest.raises(NBSVMError) as e:
        model.predict_top_k(texts[:2], 2, threshold=threshold)
    assert e.value.message == said
