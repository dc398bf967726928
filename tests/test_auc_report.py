"""ROC AUC in the evaluation report (issue 18, item 9), counted in bounded memory
(:class:`~nbsvm.evaluation.metrics.AUCHistogram`), against scikit-learn's exact
``roc_auc_score`` on the same scores."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.evaluation.metrics import AUCHistogram, roc_auc
from nbsvm.io import read_inputs

from conftest import synthetic

metrics = pytest.importorskip("sklearn.metrics")
NBSVM = Path(sys.executable).parent / "nbsvm"


@pytest.mark.parametrize("seed", range(5))
def test_histogram_area_is_the_exact_area_up_to_same_bin_pairs(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    y = rng.integers(0, 2, n)
    s = rng.normal(0, 2, n) + 1.5 * y
    s[:50] = s[50:100]                                  # ties count one half, as exactly
    h = AUCHistogram(1)
    for part in np.array_split(np.arange(n), 7):        # batches add up
        h.add(s[part, None], y[part], binary=True)
    exact = metrics.roc_auc_score(y, s)
    assert roc_auc(y, s) == pytest.approx(exact, abs=1e-12)
    # bound: pairs of one positive and one negative in the same bin, counted one half
    same_bin = float(np.dot(h.pos[0], h.neg[0])) / (y.sum() * (n - y.sum()))
    assert abs(h.auc()[0] - exact) <= 0.5 * same_bin + 1e-12
    assert abs(h.auc()[0] - exact) < 1e-3


def test_one_sided_outputs_have_no_area():
    h = AUCHistogram(3)                 # no document of class 2: its output has no area
    h.add(np.array([[0.9, 0.2, 0.0], [0.3, 1.0, 0.5]]), np.array([0, 1]), binary=False)
    assert h.auc() == [1.0, 1.0, None]


def test_multiclass_report_per_class_and_macro():
    docs = synthetic(900, n_classes=4, seed=7)
    clf = NBSVMClassifier(n_bits=14, seed=0).fit_documents(iter(docs[:600]))
    from nbsvm.evaluation.evaluate import evaluate_documents
    rep = evaluate_documents(clf, iter(docs[600:]))
    S = clf.decision_function([d.text for d in docs[600:]])
    y = np.array([clf.classes_.index(d.label) for d in docs[600:]])
    for k, c in enumerate(clf.classes_):
        assert rep["per_class"][c]["roc_auc"] == pytest.approx(
            metrics.roc_auc_score(y == k, S[:, k]), abs=1e-3)
    assert rep["macro_roc_auc"] == pytest.approx(
        np.mean([rep["per_class"][c]["roc_auc"] for c in clf.classes_]), rel=1e-12)


@pytest.mark.slow  # make test-slow: another real-data run covers eval (test_e2e_imdb)
def test_eval_prints_and_reports_roc_auc_on_imdb(imdb_slice, tmp_path):
    """The real command on the IMDB slice: the text report prints ROC AUC and macro F1, the
    JSON report holds them, and the area equals scikit-learn's on the model's scores."""
    model = tmp_path / "m.npz"
    r = subprocess.run([str(NBSVM), "train", str(imdb_slice / "train"), "-o", str(model),
                        "--n-bits", "20", "-q"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(NBSVM), "eval", str(imdb_slice / "test"), "-m", str(model), "-q"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "ROC AUC: 0.9" in r.stdout and "macro F1: 0." in r.stdout
    r = subprocess.run([str(NBSVM), "eval", str(imdb_slice / "test"), "-m", str(model), "-q",
                        "--json"], capture_output=True, text=True, timeout=600)
    rep = json.loads(r.stdout)
    clf = NBSVMClassifier.load(model)
    docs = list(read_inputs([str(imdb_slice / "test")]))
    s = clf.decision_function([d.text for d in docs])
    exact = metrics.roc_auc_score([d.label == "pos" for d in docs], s)
    assert rep["roc_auc"] == pytest.approx(exact, abs=1e-4)
    assert 0.0 < rep["macro_f1"] <= 1.0
