"""Metrics from a confusion matrix, against hand-computed values."""
import numpy as np
import pytest

from nbsvm.metrics import confusion_matrix, report, report_table


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
