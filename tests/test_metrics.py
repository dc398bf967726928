"""Metrics from a confusion matrix, against hand-computed values."""
import numpy as np
import pytest

from nbsvm.evaluation.metrics import confusion_matrix, report, report_table


def test_confusion_matrix_counts():
    cm = confusion_matrix(np.array([0, 0, 1, 1, 2, 2, 2]), np.array([0, 1, 1, 1, 2, 0, 2]), 3)
    assert cm.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 2]]


def test_report_hand_values():
    # rows true, columns predicted
    cm = np.array([[1, 1, 0], [0, 2, 0], [1, 0, 2]])
    r = report(cm, ["a", "b", "c"], log_loss_sum=3.5)
    assert r["n_docs"] == 7 and r["accuracy"] == pytest.approx(5 / 7)
    # a: P = 1/2, R = 1/2 ; b: P = 2/3, R = 1 ; c: P = 1, R = 2/3
    assert r["per_class"]["a"] == pytest.approx(dict(precision=0.5, recall=0.5, f1=0.5,
                                                     support=2))
    assert r["per_class"]["b"]["precision"] == pytest.approx(2 / 3)
    assert r["per_class"]["b"]["f1"] == pytest.approx(0.8)
    assert r["per_class"]["c"]["recall"] == pytest.approx(2 / 3)
    assert r["macro_precision"] == pytest.approx((0.5 + 2 / 3 + 1) / 3)
    assert r["macro_f1"] == pytest.approx((0.5 + 0.8 + 0.8) / 3)
    assert r["log_loss"] == pytest.approx(0.5)
    t = report_table(r)
    assert list(t.columns) == ["metric", "class", "value"]
    assert t.loc[t.metric == "accuracy", "value"].item() == pytest.approx(5 / 7)
    assert t.loc[t.metric == "confusion[true=c,pred=a]", "value"].item() == 1


def test_report_class_never_predicted():
    r = report(np.array([[2, 0], [3, 0]]), ["neg", "pos"])
    assert r["per_class"]["pos"] == dict(precision=0.0, recall=0.0, f1=0.0, support=3)
    assert r["accuracy"] == pytest.approx(0.4)
    assert "log_loss" not in r


# -- multi-label and regression ---------------------------------------------------------------

from nbsvm.evaluation.metrics import (add_sums, hamming_loss, mean_absolute_error,  # noqa: E402
                           mean_squared_error, multilabel_counts, multilabel_f1,
                           multilabel_report, r2_score, regression_report, regression_sums,
                           add_regression_sums,
                           subset_accuracy)

# 4 documents x 3 labels; rows true / predicted
Y_TRUE = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
Y_PRED = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 0, 0]])


def test_multilabel_hand_values():
    # wrong decisions: doc0 label2 (missed), doc1 label2 (spurious) -> 2 of 12
    assert hamming_loss(Y_TRUE, Y_PRED) == pytest.approx(2 / 12)
    assert subset_accuracy(Y_TRUE, Y_PRED) == pytest.approx(2 / 4)
    # label a: tp 2; b: tp 2; c: tp 0, fp 1, fn 1 -> micro P = R = 4/5
    micro, macro = multilabel_f1(Y_TRUE, Y_PRED)
    assert micro == pytest.approx(0.8)
    assert macro == pytest.approx((1 + 1 + 0) / 3)
    r = multilabel_report(multilabel_counts(Y_TRUE, Y_PRED), ["a", "b", "c"])
    assert r["per_class"]["c"] == dict(precision=0.0, recall=0.0, f1=0.0, support=1)
    assert r["per_class"]["a"]["support"] == 2 and r["micro_precision"] == pytest.approx(0.8)
    t = report_table(r)
    assert t.loc[t.metric == "hamming_loss", "value"].item() == pytest.approx(2 / 12)
    assert t.loc[(t.metric == "f1") & (t["class"] == "a"), "value"].item() == 1.0


def test_multilabel_sums_add_over_batches_and_match_sklearn():
    from sklearn import metrics as sk
    rng = np.random.default_rng(0)
    T, P = rng.random((60, 5)) < 0.3, rng.random((60, 5)) < 0.3
    total = None
    for a in range(0, 60, 17):
        total = add_sums(total, multilabel_counts(T[a:a + 17], P[a:a + 17]))
    r = multilabel_report(total, list("abcde"))
    assert r["hamming_loss"] == pytest.approx(sk.hamming_loss(T, P))
    assert r["subset_accuracy"] == pytest.approx(sk.accuracy_score(T, P))
    assert r["micro_f1"] == pytest.approx(sk.f1_score(T, P, average="micro"))
    assert r["macro_f1"] == pytest.approx(sk.f1_score(T, P, average="macro", zero_division=0))


def test_regression_hand_values():
    y, p = [1.0, 2.0, 4.0], [2.0, 2.0, 2.0]
    # errors 1, 0, -2: SSE 5, SAE 3; mean 7/3, SST = 1 + 4 + 16 - 49/3 = 14/3
    assert mean_squared_error(y, p) == pytest.approx(5 / 3)
    assert mean_absolute_error(y, p) == pytest.approx(1.0)
    assert r2_score(y, p) == pytest.approx(1 - 5 / (14 / 3))
    total = add_regression_sums(regression_sums(y[:1], p[:1]), regression_sums(y[1:], p[1:]))
    r = regression_report(total)
    assert r["n_docs"] == 3 and r["mse"] == pytest.approx(5 / 3) and r["task"] == "regression"
    assert r["r2"] == pytest.approx(1 - 5 / (14 / 3))
    assert np.isnan(r2_score([2.0, 2.0], [1.0, 3.0]))              # constant target
    t = report_table(r)
    assert t.loc[t.metric == "mae", "value"].item() == pytest.approx(1.0)


@pytest.mark.parametrize("offset", [0.0, 1e6, 1e8])
def test_r2_of_targets_far_from_zero_matches_sklearn_in_any_batching(offset):
    """R^2 was nan for targets 1e6 +- 1: the total sum of squares was taken as
    sum(y^2) - sum(y)^2 / n, which loses every digit there."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    y = offset + rng.normal(size=1000)
    p = y + 0.5 * rng.normal(size=1000)
    want = sklearn_metrics.r2_score(y, p)
    assert r2_score(y, p) == pytest.approx(want, rel=1e-9)
    total = None
    for i in range(0, 1000, 37):
        total = add_regression_sums(total, regression_sums(y[i:i + 37], p[i:i + 37]))
    assert regression_report(total)["r2"] == pytest.approx(want, rel=1e-6)
    assert np.isnan(r2_score([offset] * 4, [offset, offset, offset, offset + 1]))


def test_labels_the_model_does_not_know_keep_exact_metrics_in_a_bounded_matrix(tmp_path):
    """An ID column read as labels made every document a label the model does not know:
    the report's square matrix grew as their number squared (15,000: over 3 GB). The
    metrics stay scikit-learn's over every label; the matrix shows SHOWN_UNSEEN of them."""
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
    from nbsvm.evaluation.metrics import SHOWN_UNSEEN, report
    rng = np.random.default_rng(0)
    classes = ["a", "b", "c"]
    truth = list(rng.choice(classes, 300)) + [f"id{i}" for i in range(120)]
    pred = list(rng.choice(classes, len(truth)))
    cm = np.zeros((3, 3), np.int64)
    unseen = {}
    for t, p in zip(truth, pred):
        if t in classes:
            cm[classes.index(t), classes.index(p)] += 1
        else:
            unseen.setdefault(t, np.zeros(3, np.int64))[classes.index(p)] += 1
    r = report(cm, classes, unseen=unseen)
    labels = classes + list(unseen)
    assert r["accuracy"] == pytest.approx(accuracy_score(truth, pred))
    for name, fn in (("f1", f1_score), ("precision", precision_score),
                     ("recall", recall_score)):
        assert r[f"macro_{name}"] == pytest.approx(
            fn(truth, pred, labels=labels, average="macro", zero_division=0))
    assert len(r["per_class"]) == 123
    assert len(r["classes"]) == 3 + SHOWN_UNSEEN + 1 == len(r["confusion_matrix"])
    assert r["classes"][-1] == f"({120 - SHOWN_UNSEEN} more labels the model does not know)"
    assert sum(map(sum, r["confusion_matrix"])) == len(truth)
    assert r["confusion_matrix"][-1][:3] == sum(
        (unseen[k] for k in list(unseen)[SHOWN_UNSEEN:]), np.zeros(3, np.int64)).tolist()
