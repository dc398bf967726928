"""Binary passive-aggressive (PA, PA-I, PA-II): the kernel against the plain-Python
reference, averaging on a real task, save/load and errors."""
import numpy as np
import pytest

from conftest import random_rows
from naive import NaiveLinear, naive_per_label_pass
from nbsvm import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.data.rows import SparseRows
from nbsvm.learners.pa import PassiveAggressive
from nbsvm.learners.registry import make_learner
from test_mira import _check_against, _run_naive, average_vs_last


def _problem(seed=0, n=50, d=12, noise=0.15):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    rows, indices, values, offsets = random_rows(rng, n, d, sizes=(1, 6))
    ys = [1 if sum(w[i] * v for i, v in r.items()) + 0.3 > 0 else -1 for r in rows]
    ys = [-y if rng.random() < noise else y for y in ys]
    return rows, SparseRows(indices, values.astype(float), offsets, d), ys


@pytest.mark.parametrize("variant, C, bias", [
    ("pa", 1.0, True), ("pa-i", 0.1, True), ("pa-ii", 0.5, False), ("pa-i", 2.0, False)])
def test_pa_kernel_equals_naive(variant, C, bias):
    rows, X, ys = _problem()
    labels = np.where(np.array(ys) > 0, "pos", "neg")        # 'pos' sorts last: positive
    m = PassiveAggressive(variant=variant, C=C, fit_intercept=bias, epochs=3, seed=7)
    m.fit(X, labels)
    model, stats = _run_naive(rows, ys, 1, 12, 3, 7, lambda model, order: naive_per_label_pass(
        model, rows, [[y] for y in ys], order, variant, C=C, bias=bias))
    _check_against(m, model, stats)
    W_avg, b_avg = model.average()
    x = np.zeros(12)
    x[list(rows[0])] = list(rows[0].values())
    assert m.decision_function(X.take([0]))[0] == pytest.approx(x @ W_avg[0] + b_avg[0])


def test_pa_is_registered_and_takes_any_two_labels():
    _, X, ys = _problem(noise=0.0)
    labels = np.where(np.array(ys) > 0, "yes", "no")
    m = make_learner("pa", C=0.5, epochs=10).fit(X, labels)
    assert isinstance(m, PassiveAggressive) and m.classes_ == ["no", "yes"]
    assert np.mean(m.predict(X) == labels) >= 0.9
    with pytest.raises(NBSVMError, match="exactly two classes"):
        PassiveAggressive().fit(X, ["a", "b", "c"] * (len(ys) // 3) + ["a"] * (len(ys) % 3))


def test_pa_rejects_bad_settings():
    _, X, ys = _problem()
    for C in (0.0, -2, float("inf"), None):
        with pytest.raises(NBSVMError, match="C must be a finite number > 0"):
            PassiveAggressive(C=C).fit(X, ys)
    with pytest.raises(NBSVMError, match="unknown variant 'pa-3'; allowed: pa, pa-i, pa-ii"):
        PassiveAggressive(variant="pa-3").fit(X, ys)


def test_pa_save_load_round_trip(tmp_path):
    _, X, ys = _problem()
    for average in (True, False):
        m = PassiveAggressive(variant="pa-ii", C=0.2, average=average, epochs=2).fit(X, ys)
        m.save(tmp_path / "pa.npz")
        loaded = OnlineLearner.load(tmp_path / "pa.npz")
        assert loaded.get_params() == m.get_params()
        np.testing.assert_array_equal(loaded.decision_function(X), m.decision_function(X))
        assert loaded.predict(X).tolist() == m.predict(X).tolist()
    loaded.average = True                 # trained without averaging: nothing to average
    with pytest.raises(NBSVMError, match="average=False"):
        loaded.predict(X)


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_pa_average_beats_last_iterate_on_noisy_blitzer():
    for epochs in (1, 3):
        noisy = average_vs_last(lambda seed: PassiveAggressive(epochs=epochs, seed=seed))
        print(f"\nPA-I, Blitzer books vs dvd (1500/500), 20% training labels flipped, "
              f"{epochs} pass(es), 3 splits; averaged / last: {noisy.round(3).tolist()}")
        assert np.all(noisy[:, 0] >= noisy[:, 1] + 0.01)
        assert np.all(noisy[:, 0] >= 0.84)
