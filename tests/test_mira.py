"""Multi-class MIRA / PA against the plain-Python reference, averaging, separable data."""
import numpy as np
import pytest

from conftest import random_rows
from naive import naive_mira
from nbsvm import NBSVMError
from nbsvm.online.pa import MIRA


def _problem(seed=0, n=60, d=10, k=3, noise=0.0):
    rng = np.random.default_rng(seed)
    W_true = rng.normal(size=(k, d))
    rows, indices, values, offsets = random_rows(rng, n, d, sizes=(2, 6))
    ys = []
    for row in rows:
        x = np.zeros(d)
        x[list(row)] = list(row.values())
        label = int(np.argmax(W_true @ x))
        if rng.random() < noise:
            label = int(rng.integers(k))
        ys.append(label)
    return rows, indices, values, offsets, ys


def _dense(W, d):
    return np.array([[Wk.get(i, 0.0) for i in range(d)] for Wk in W])


@pytest.mark.parametrize("variant, C", [("mira", 1.0), ("pa-i", 0.05), ("pa-ii", 0.1)])
def test_mira_equals_naive_with_averaging(variant, C):
    rows, indices, values, offsets, ys = _problem(noise=0.2)
    labels = [f"c{y}" for y in ys]
    m = MIRA(10, variant=variant, C=C, epochs=3, seed=4).fit(indices, values, offsets, labels)
    W, history = [dict() for _ in range(3)], []
    rng = np.random.default_rng(4)
    mistakes = []
    for _ in range(len(m.mistakes_per_epoch_)):
        W, mk = naive_mira(rows, ys, rng.permutation(len(ys)), W, history, C, variant)
        mistakes.append(mk)
    assert m.mistakes_per_epoch_ == mistakes
    np.testing.assert_allclose(m.W_, _dense(W, 10), rtol=1e-10, atol=1e-12)
    mean = (np.zeros((3, 10)) + sum(_dense(h, 10) for h in history)) / (len(history) + 1)
    np.testing.assert_allclose(m.coef_, mean, rtol=1e-9, atol=1e-12)     # w_0 .. w_T
    last = MIRA(10, variant=variant, C=C, epochs=3, seed=4, average=False)
    last.fit(indices, values, offsets, labels)
    np.testing.assert_array_equal(last.coef_, m.W_)
    assert np.max(np.abs(m.coef_ - m.W_)) > 1e-3                          # averaging matters


def test_mira_separable_reaches_zero_mistakes_and_stops():
    rows, indices, values, offsets, ys = _problem(seed=1, n=80, d=20, k=4)
    m = MIRA(20, epochs=200).fit(indices, values, offsets, [str(y) for y in ys])
    assert m.mistakes_per_epoch_[-1] == 0
    assert len(m.mistakes_per_epoch_) < 200               # stopped after a clean pass
    assert all(x > 0 for x in m.mistakes_per_epoch_[:-1])
    assert m.mistakes_per_epoch_[0] > 0
    # updates with margin < 1 still happen in a mistake-free pass, so the final iterate is
    # not guaranteed to separate every example; it must be close
    m.average = False
    assert np.mean(m.predict(indices, values, offsets) == np.array([str(y) for y in ys])) >= 0.95


def test_mira_rejects_bad_settings():
    rows, indices, values, offsets, ys = _problem()
    with pytest.raises(NBSVMError, match="unknown variant"):
        MIRA(10, variant="pa-iii").fit(indices, values, offsets, ys)
    with pytest.raises(NBSVMError, match="two classes"):
        MIRA(10).fit(indices, values, offsets, ["a"] * len(ys))
    with pytest.raises(NBSVMError, match="C must be"):
        MIRA(10, variant="pa-i", C=0).fit(indices, values, offsets, ys)
