"""OGD regression against the reference, and the iris experiment of the OGD note."""
import gzip

import numpy as np
import pytest

from conftest import random_rows, shared_datasets
from naive import naive_ogd
from nbsvm import NBSVMError
from nbsvm.online.ogd import OGDRegressor


@pytest.mark.parametrize("eta, radius", [(0.3, 100.0), (2.0, 0.5)])
def test_ogd_equals_naive(eta, radius):
    rng = np.random.default_rng(0)
    rows, indices, values, offsets = random_rows(rng, 30, 8, sizes=(3, 4), draw=rng.random)
    y = rng.random(30)
    m = OGDRegressor(8, eta=eta, radius=radius)
    w, t = [0.0] * 8, 0
    for epoch in range(3):
        order = rng.permutation(30)
        m.partial_fit(indices, values, offsets, y, order)
        w, t, before, after = naive_ogd(rows, y, order, w, t, eta, radius)
        np.testing.assert_allclose(m.before_, before, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(m.after_, after, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.coef_, w, rtol=1e-9, atol=1e-12)
    assert np.linalg.norm(m.coef_) <= radius + 1e-9
    with pytest.raises(NBSVMError, match="eta"):
        OGDRegressor(8, eta=0).partial_fit(np.array(indices), np.array(values),
                                          np.array(offsets), y)


def test_ogd_iris_follows_the_note():
    path = shared_datasets() / "iris" / "iris.data.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = [line.split(",") for line in gzip.open(path, "rt").read().splitlines() if line.strip()]
    A = np.array([[float(v) for v in r[:4]] for r in rows])
    A = (A - A.min(0)) / (A.max(0) - A.min(0))           # every column scaled to [0, 1]
    X, y = A[:, :3], A[:, 3]
    w, *_ = np.linalg.lstsq(X, y, rcond=None)            # no intercept, as in the note
    best = np.mean((X @ w - y) ** 2)
    assert best == pytest.approx(0.0070, abs=2e-4)
    indices, values, offsets = np.tile(np.arange(3), 150), X.ravel(), np.arange(0, 451, 3)

    def median_final(eta, radius, which="after_"):
        finals = []
        for seed in range(20):
            order = np.random.default_rng(seed).permutation(150)
            m = OGDRegressor(3, eta=eta, radius=radius).partial_fit(indices, values, offsets, y,
                                                                   order)
            finals.append(np.mean((getattr(m, which) - y[order]) ** 2))
        return float(np.median(finals))

    tuned, bound_optimal, wide = (median_final(2.5, 1.0), median_final(0.722, 1.0),
                                  median_final(2.5, 100.0))
    assert tuned <= 1.25 * best                           # 1.09x at this commit
    assert bound_optimal >= 1.6 * best                    # "about twice": 2.02x
    assert wide > tuned                                   # radius 100 is worse than 1
    assert median_final(2.5, 1.0, "before_") > tuned      # progressive loss is higher
