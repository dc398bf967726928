"""Pegasos against the plain-Python reference, and on real RCV1 data."""
import numpy as np
import pytest

from conftest import random_rows, shared_datasets
from naive import naive_pegasos
from nbsvm import NBSVMError
from nbsvm.io.sparse import read_svmlight
from nbsvm.online.pegasos import Pegasos


def _problem(seed=0, n=40, d=12):
    rng = np.random.default_rng(seed)
    rows, indices, values, offsets = random_rows(rng, n, d)
    w_true = rng.normal(size=d)
    ys = np.array([1.0 if sum(w_true[i] * v for i, v in r.items()) > 0 else -1.0 for r in rows])
    return rows, indices, values, offsets, ys


@pytest.mark.parametrize("lam", [0.5, 0.05, 1e-3])
def test_pegasos_equals_naive_over_epochs(lam):
    rows, indices, values, offsets, ys = _problem()
    m = Pegasos(12, lam=lam)
    w, t = [0.0] * 12, 0
    rng = np.random.default_rng(3)
    for epoch in range(4):
        order = rng.permutation(len(ys))
        m.partial_fit(indices, values, offsets, ys, order)
        w, t, total, mistakes = naive_pegasos(rows, ys, order, w, t, lam)
        assert m.last_loss_ == pytest.approx(total / len(ys), rel=1e-9, abs=1e-12)
    assert m.state_[2] == t
    np.testing.assert_allclose(m.coef_, w, rtol=1e-9, atol=1e-12)
    # the projection was active for the strong lambda: ||w|| <= 1/sqrt(lam)
    assert np.linalg.norm(m.coef_) <= 1 / np.sqrt(lam) + 1e-9
    # a different lambda gives a clearly different model (the comparison can fail)
    other = Pegasos(12, lam=lam * 1.5)
    rng = np.random.default_rng(3)
    for epoch in range(4):
        other.partial_fit(indices, values, offsets, ys, rng.permutation(len(ys)))
    assert np.max(np.abs(other.coef_ - m.coef_)) > 1e-3


def test_pegasos_rejects_bad_input():
    rows, indices, values, offsets, ys = _problem()
    with pytest.raises(NBSVMError, match="lambda"):
        Pegasos(12, lam=0).fit(indices, values, offsets, ys)
    with pytest.raises(NBSVMError, match="labels"):
        Pegasos(12).fit(indices, values, offsets, ys * 2)
    with pytest.raises(NBSVMError, match="feature indices"):
        Pegasos(5).fit(indices, values, offsets, ys)


def test_pegasos_on_rcv1_train2000():
    path = shared_datasets() / "rcv1" / "train2000.dat.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = list(read_svmlight(path))
    offsets = np.cumsum([0] + [len(r.keys) for r in rows])
    indices = np.concatenate([r.keys for r in rows])
    values = np.concatenate([r.values for r in rows])
    y = np.array([1.0 if r.labels[0] == "1" else -1.0 for r in rows])
    train, test = slice(0, 1500), slice(1500, 2000)

    def part(s):
        a, z = offsets[s.start], offsets[s.stop]
        return indices[a:z], values[a:z], offsets[s.start:s.stop + 1] - a
    m1 = Pegasos(47236, lam=1e-4, epochs=1).fit(*part(train), y[train])
    m10 = Pegasos(47236, lam=1e-4, epochs=10).fit(*part(train), y[train])
    obj1, obj10 = m1.objective(*part(train), y[train]), m10.objective(*part(train), y[train])
    assert obj10 < obj1 < 1.0           # more epochs, lower primal objective; beats w = 0
    acc = np.mean(m10.predict(*part(test), ) == y[test])
    majority = max(np.mean(y[test] == 1), np.mean(y[test] == -1))
    assert acc > 0.85 and acc > majority + 0.3, (acc, majority)   # 89.4% at this commit
