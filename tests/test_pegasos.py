"""Pegasos against the plain-Python references, and on real RCV1 data."""
import numpy as np
import pytest

from conftest import random_rows, shared_datasets
from naive import naive_pegasos, naive_pegasos_batch
from nbsvm import NBSVMError
from nbsvm.io.sparse import read_svmlight
from nbsvm.learners.kernels.projected import _pegasos_batch_pass
from nbsvm.data.rows import SparseRows
from nbsvm.learners.pegasos import Pegasos

D = 12


def _problem(seed=0, n=40, d=D):
    rng = np.random.default_rng(seed)
    rows, indices, values, offsets = random_rows(rng, n, d)
    w_true = rng.normal(size=d)
    ys = np.array([1.0 if sum(w_true[i] * v for i, v in r.items()) > 0.3 else -1.0
                   for r in rows])
    labels = np.where(ys > 0, "spam", "ham")             # sorted: ham (-1) < spam (+1)
    return rows, (indices, values, offsets), ys, labels


@pytest.mark.parametrize("lam", [0.5, 0.05, 1e-3])
def test_pegasos_equals_naive_over_epochs(lam):
    rows, X, ys, labels = _problem()
    m = Pegasos(lam=lam)
    w, t = [0.0] * D, 0
    rng = np.random.default_rng(3)
    for epoch in range(4):
        order = rng.permutation(len(ys))
        m.partial_fit(X, labels, order=order)
        w, t, total, violations = naive_pegasos(rows, ys, order, w, t, lam)
        assert m.last_stats_["loss"] == pytest.approx(total, rel=1e-9, abs=1e-12)
        assert m.last_stats_["violations"] == violations
    assert m.state_[2] == t
    np.testing.assert_allclose(m.coef_, w, rtol=1e-9, atol=1e-12)
    assert m.intercept_ == 0.0
    # the projection was active for the strong lambda: ||w|| <= 1/sqrt(lam)
    assert np.linalg.norm(m.coef_) <= 1 / np.sqrt(lam) + 1e-9
    # a different lambda gives a clearly different model (the comparison can fail)
    other = Pegasos(lam=lam * 1.5)
    rng = np.random.default_rng(3)
    for epoch in range(4):
        other.partial_fit(X, labels, order=rng.permutation(len(ys)))
    assert np.max(np.abs(other.coef_ - m.coef_)) > 1e-3


def test_batch_kernel_with_k1_is_the_single_example_kernel():
    rows, (indices, values, offsets), ys, _ = _problem(seed=1)
    v, state = np.zeros(D), np.array([1.0, 0.0, 0.0, 0.0])
    w, t = [0.0] * D, 0
    for epoch in range(3):
        order = np.random.default_rng(epoch).permutation(len(ys))
        total = _pegasos_batch_pass(indices, values, offsets, ys, order, v, state, 0.05, 1, -1)
        w, t, ref_total, violations = naive_pegasos(rows, ys, order, w, t, 0.05)
        assert total == pytest.approx(ref_total, rel=1e-10)
    np.testing.assert_allclose(state[0] * v, w, rtol=0, atol=1e-10 * max(1, np.abs(w).max()))


@pytest.mark.parametrize("k, fit_intercept", [(3, False), (7, True), (1, True), (40, False)])
def test_minibatch_and_bias_equal_naive(k, fit_intercept):
    rows, X, ys, labels = _problem(seed=2, n=45)
    lam = 0.02
    m = Pegasos(lam=lam, k=k, fit_intercept=fit_intercept)
    w, b, t = [0.0] * D, (0.0 if fit_intercept else None), 0
    rng = np.random.default_rng(4)
    for epoch in range(5):
        order = rng.permutation(len(ys))
        m.partial_fit(X, labels, order=order)
        w, b, t, total, violations = naive_pegasos_batch(rows, ys, order, w, b, t, lam, k)
        assert m.last_stats_["loss"] == pytest.approx(total, rel=1e-10, abs=1e-12)
        assert m.last_stats_["violations"] == violations
    assert m.state_[2] == t == 5 * -(-45 // k)          # t counts mini-batches
    scale = max(1.0, np.abs(w).max())
    np.testing.assert_allclose(m.coef_, w, rtol=0, atol=1e-10 * scale)
    assert m.intercept_ == pytest.approx(b or 0.0, abs=1e-10 * scale)
    if fit_intercept:
        assert abs(m.intercept_) > 1e-3
        w_, b_ = m.coef_, m.intercept_
        margins = ys * m.decision_function(X)
        ref = lam / 2 * (w_ @ w_ + b_ * b_) + np.maximum(0, 1 - margins).mean()
        assert m.objective(X, labels) == pytest.approx(ref, rel=1e-12)


def test_pegasos_labels_and_prediction():
    rows, X, ys, labels = _problem()
    m = Pegasos(lam=0.01, epochs=20).fit(X, labels)
    assert m.classes_ == ["ham", "spam"]
    assert np.mean(m.predict(X) == labels) > 0.85
    assert np.array_equal(m.predict(X) == "spam", m.decision_function(X) > 0)


@pytest.mark.parametrize("params, match", [
    (dict(lam=0), r"lambda \(lam\) must be > 0"),
    (dict(lam=float("nan")), r"lambda \(lam\) must be > 0"),
    (dict(k=0), "mini-batch size k must be an integer >= 1"),
    (dict(epochs=0), "epochs must be an integer >= 1"),
])
def test_pegasos_rejects_bad_settings(params, match):
    rows, X, ys, labels = _problem()
    with pytest.raises(NBSVMError, match=match):
        Pegasos(**params).fit(X, labels)


def test_pegasos_rejects_bad_input():
    rows, X, ys, labels = _problem()
    with pytest.raises(NBSVMError, match="exactly two classes"):
        Pegasos().fit(X, ["a", "b", "c"] * 13 + ["a"])
    m = Pegasos().fit(X, labels)
    with pytest.raises(NBSVMError, match="out of range"):
        m.predict((np.array([D + 3]), np.array([1.0]), np.array([0, 1])))
    with pytest.raises(NBSVMError, match="unknown label"):
        m.partial_fit(X, ["eggs"] * len(labels))


def test_pegasos_on_rcv1_train2000():
    path = shared_datasets() / "rcv1" / "train2000.dat.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = list(read_svmlight(path))
    offsets = np.cumsum([0] + [len(r.keys) for r in rows])
    indices = np.concatenate([r.keys for r in rows])
    values = np.concatenate([r.values for r in rows])
    y = np.array([r.labels[0] for r in rows])
    train, test = slice(0, 1500), slice(1500, 2000)

    def part(s):
        a, z = offsets[s.start], offsets[s.stop]
        return SparseRows(indices[a:z], values[a:z], offsets[s.start:s.stop + 1] - a, 47236)

    m1 = Pegasos(lam=1e-4, epochs=1).fit(part(train), y[train])
    m10 = Pegasos(lam=1e-4, epochs=10).fit(part(train), y[train])
    obj1, obj10 = m1.objective(part(train), y[train]), m10.objective(part(train), y[train])
    assert obj10 < obj1 < 1.0           # more epochs, lower primal objective; beats w = 0
    acc = np.mean(m10.predict(part(test)) == y[test])
    majority = max(np.mean(y[test] == "1"), np.mean(y[test] == "-1"))
    assert acc > 0.85 and acc > majority + 0.3, (acc, majority)


def test_a_learner_class_loads_its_own_files_only(tmp_path):
    """SGDClassifier.load of a Pegasos file returned a Pegasos: code that then read
    SGDClassifier's attributes failed far from the cause."""
    from nbsvm.learners.base import OnlineLearner
    from nbsvm.learners.linear import SGDClassifier

    X, y = np.eye(4), [0, 1, 0, 1]
    Pegasos(epochs=2).fit(X, y).save(tmp_path / "p.npz")
    SGDClassifier(epochs=2).fit(X, y).save(tmp_path / "s.npz")
    assert type(OnlineLearner.load(tmp_path / "p.npz")) is Pegasos
    assert type(Pegasos.load(tmp_path / "p.npz")) is Pegasos
    assert type(SGDClassifier.load(tmp_path / "s.npz")) is SGDClassifier
    with pytest.raises(NBSVMError, match="holds a learner of class Pegasos, not SGDClassifier: "
                                         "load it with Pegasos.load or OnlineLearner.load"):
        SGDClassifier.load(tmp_path / "p.npz")
    with pytest.raises(NBSVMError, match="class SGDClassifier, not Pegasos"):
        Pegasos.load(tmp_path / "s.npz")
