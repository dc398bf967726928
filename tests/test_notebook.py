"""What the Python API hands a notebook (issue 18, item 7): ``clf.evaluate`` and
``explain_text`` return dicts that render as HTML and give DataFrames, with the same
numbers as scikit-learn's metrics and as the CLI's JSON."""
import json

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.evaluation.explain import explain_text

from conftest import synthetic

metrics = pytest.importorskip("sklearn.metrics")


@pytest.fixture(scope="module")
def fitted():
    docs = synthetic(900, n_classes=3, seed=11)
    X, y = [d.text for d in docs], [d.label for d in docs]
    return NBSVMClassifier(n_bits=14, seed=0).fit(X[:600], y[:600]), X[600:], y[600:]


def test_evaluate_matches_scikit_learn(fitted):
    clf, X, y = fitted
    rep = clf.evaluate(X, y)
    pred = clf.predict(X)
    assert rep["accuracy"] == pytest.approx(metrics.accuracy_score(y, pred))
    assert rep["accuracy"] == pytest.approx(clf.score(X, y))
    assert rep["macro_f1"] == pytest.approx(metrics.f1_score(y, pred, average="macro"))
    P = clf.predict_proba(X)        # probabilities of exactly 0 clipped at 1e-15
    truth = [clf.classes_.index(v) for v in y]
    assert rep["log_loss"] == pytest.approx(
        np.mean(-np.log(np.clip(P[np.arange(len(y)), truth], 1e-15, 1))), rel=1e-12)
    P, R, F, S = metrics.precision_recall_fscore_support(y, pred, labels=clf.classes_)
    table = rep.per_class()
    np.testing.assert_allclose(table.loc[clf.classes_, "precision"], P)
    np.testing.assert_allclose(table.loc[clf.classes_, "recall"], R)
    np.testing.assert_array_equal(table.loc[clf.classes_, "support"], S)
    np.testing.assert_array_equal(rep.confusion().to_numpy(),
                                  metrics.confusion_matrix(y, pred, labels=clf.classes_))
    tidy = rep.frame()
    assert list(tidy.columns) == ["metric", "class", "value"]
    assert float(tidy[tidy.metric == "accuracy"].value.iloc[0]) == rep["accuracy"]
    assert json.loads(json.dumps(rep)) == json.loads(json.dumps(dict(rep)))    # still JSON


def test_evaluate_takes_a_dataframe_and_counts_unknown_labels(fitted):
    pd = pytest.importorskip("pandas")
    clf, X, y = fitted
    frame = pd.DataFrame({"review": X[:20], "tag": y[:19] + ["never-seen"]})
    rep = clf.evaluate(frame, "tag", text_col="review")
    assert rep["unseen_labels"] == {"never-seen": 1}
    with pytest.raises(Exception, match="20 documents but y has 19 labels"):
        clf.evaluate(X[:20], y[:19])


def test_report_and_explanation_render_as_html(fitted):
    clf, X, y = fitted
    page = clf.evaluate(X, y)._repr_html_()
    assert "<table" in page and "accuracy" in page and "confusion matrix" in page
    for c in clf.classes_:
        assert c in page
    e = explain_text(clf, X[0] + " <script>x</script>")
    assert e["constant"] + e.frame().contribution.sum() == pytest.approx(e["score"])
    shown = e._repr_html_()
    assert "<span" in shown and "<script>" not in shown and "&lt;script&gt;" in shown
