"""Multi-class MIRA / PA: the kernel against the plain-Python reference, label losses,
early stop on separable data, averaging on a real task, save/load and errors."""
import numpy as np
import pytest

from conftest import random_rows
from naive import NaiveLinear, hashed_blitzer, naive_class_rows, naive_mira_pass
from nbsvm import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.data.rows import SparseRows
from nbsvm.learners.pa import MIRA


def _problem(seed=0, n=60, d=10, k=3, noise=0.0):
    """Random sparse rows labelled by a planted linear rule, ``noise`` of them at random."""
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
    return rows, SparseRows(indices, values.astype(float), offsets, d), ys


def _run_naive(rows, ys, k, d, epochs, seed, step):
    """Replay ``fit``'s seeded shuffles with a reference pass; returns the model and the
    per-epoch (loss, mistakes)."""
    model, stats = NaiveLinear(k, d), []
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        stats.append(step(model, rng.permutation(len(ys))))
    return model, stats


def _check_against(m, model, stats):
    """Learner ``m`` (fitted) equals the reference: stats, last iterate, average."""
    assert [h["mistakes"] for h in m.history_] == [mistakes for _, mistakes in stats]
    np.testing.assert_allclose([h["loss"] for h in m.history_], [loss for loss, _ in stats],
                               rtol=1e-10)
    last = m.state_[0] * m.weights_
    np.testing.assert_allclose(last[:, :-1], model.W, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(last[:, -1], model.b, rtol=1e-10, atol=1e-12)
    W_avg, b_avg = model.average()
    np.testing.assert_allclose(m.coef_, W_avg, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.intercept_, b_avg, rtol=1e-9, atol=1e-12)


COST = [[0.0, 1.0, 3.0], [0.5, 0.0, 1.0], [2.0, 1.0, 0.0]]


@pytest.mark.parametrize("variant, C, update, bias, cost", [
    ("pa", 1.0, "max-loss", True, None), ("pa-i", 0.05, "max-loss", False, None),
    ("pa-ii", 0.1, "max-loss", True, COST), ("pa", 1.0, "prediction", True, COST),
    ("pa-i", 0.2, "prediction", False, None)])
def test_mira_kernel_equals_naive(variant, C, update, bias, cost):
    rows, X, ys = _problem(noise=0.2)
    labels = [f"c{y}" for y in ys]
    m = MIRA(label_loss=cost or "zero_one", variant=variant, C=C, update=update,
             fit_intercept=bias, epochs=4, seed=4).fit(X, labels)
    assert len(m.history_) == 4                                   # noisy: no early stop
    cost = cost or (1 - np.eye(3)).tolist()
    model, stats = _run_naive(rows, ys, 3, 10, 4, 4, lambda model, order: naive_mira_pass(
        model, rows, ys, order, cost, variant, C, bias, update))
    _check_against(m, model, stats)
    assert np.max(np.abs(m.coef_ - m.weights_[:, :-1])) > 1e-3    # averaging matters
    m.average = False
    np.testing.assert_array_equal(m.coef_, m.weights_[:, :-1])


@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("variant, update", [("pa-i", "max-loss"), ("pa", "prediction")])
def test_mira_on_the_joint_feature_map_equals_naive(unit, variant, update):
    """Each class sees the document through its own table (NBSVM's per-class ratios):
    ``phi(x, k) = T[k] o x``, unit-normed per class with ``unit``; the kernel against the
    reference on the per-class rows built by hand."""
    rows, X, ys = _problem(seed=3, noise=0.2)
    T = np.random.default_rng(7).normal(size=(3, 10))
    X.class_table, X.class_unit = T, unit
    m = MIRA(variant=variant, C=0.5, update=update, epochs=3, seed=2).fit(X, ys)
    joint = naive_class_rows(rows, T.tolist(), unit)
    model, stats = _run_naive(joint, ys, 3, 10, 3, 2, lambda model, order: naive_mira_pass(
        model, joint, ys, order, (1 - np.eye(3)).tolist(), variant, 0.5, True, update))
    _check_against(m, model, stats)
    # the scores are each class's row against its weights
    expected = [[model.score(k, x) for k in range(3)] for x in joint]
    m.average = False
    np.testing.assert_allclose(m.decision_function(X), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("update", ["max-loss", "prediction"])
def test_mira_separable_reaches_zero_mistakes_and_stops(update):
    rows, X, ys = _problem(seed=1, n=80, d=20, k=4)
    labels = [str(y) for y in ys]
    m = MIRA(update=update, epochs=200).fit(X, labels)
    mistakes = [h["mistakes"] for h in m.history_]
    print(f"\nMIRA ({update}) mistakes per epoch: {mistakes}")
    assert mistakes[-1] == 0 and all(x > 0 for x in mistakes[:-1])
    assert len(mistakes) < 200                                      # stopped after a clean pass
    m.average = False
    if update == "prediction":       # no update in the clean pass: the last iterate separates
        assert (m.predict(X) == np.array(labels)).all()
    else:                             # margin updates go on in a clean pass; it must be close
        assert np.mean(m.predict(X) == np.array(labels)) >= 0.95


def test_label_loss_forms_agree_and_shape_the_margin():
    classes = ["a", "b", "c"]
    forms = [{("a", "c"): 3.0, ("c", "a"): 2.0},
             {"a": {"c": 3.0}, "c": {"a": 2.0}},
             [[0, 1, 3], [1, 0, 1], [2, 1, 0]],
             lambda t, p: {("a", "c"): 3.0, ("c", "a"): 2.0}.get((t, p), float(t != p))]
    X = SparseRows(np.array([0, 1, 2]), np.ones(3), np.array([0, 1, 2, 3]), 3)
    costs = [MIRA(label_loss=f, epochs=1).fit(X, classes).cost_ for f in forms]
    for c in costs:
        np.testing.assert_array_equal(c, [[0, 1, 3], [1, 0, 1], [2, 1, 0]])
    # a larger cost demands a larger margin: after one example of class a, the gap to c
    # (cost 3) is three times the gap to b (cost 1) with the unclipped max-loss update
    one = SparseRows(np.array([0]), np.ones(1), np.array([0, 1]), 3)
    m = MIRA(label_loss=forms[0], fit_intercept=False, average=False, epochs=1)
    m.partial_fit(one, ["a"], classes=classes)
    s = m.decision_function(one)[0]
    assert s[0] - s[2] == pytest.approx(3.0) and s[0] - s[1] == pytest.approx(1.5)


def test_mira_rejects_bad_settings():
    _, X, ys = _problem()
    with pytest.raises(NBSVMError, match="unknown label_loss 'hamming'; allowed: zero_one"):
        MIRA(label_loss="hamming").fit(X, ys)
    with pytest.raises(NBSVMError, match="unknown variant"):
        MIRA(variant="pa-iii").fit(X, ys)
    with pytest.raises(NBSVMError, match="unknown update"):
        MIRA(update="sometimes").fit(X, ys)
    with pytest.raises(NBSVMError, match="two classes"):
        MIRA().fit(X, ["a"] * len(ys))
    for C in (0, -1.0, float("nan"), "big"):
        with pytest.raises(NBSVMError, match="C must be a finite number > 0"):
            MIRA(variant="pa-i", C=C).fit(X, ys)
    with pytest.raises(NBSVMError, match="3x3 cost matrix"):
        MIRA(label_loss=[[0, 1], [1, 0]]).fit(X, ys)
    with pytest.raises(NBSVMError, match="unknown class pair"):
        MIRA(label_loss={("0", "9"): 2.0}).fit(X, ys)
    with pytest.raises(NBSVMError, match="finite and >= 0"):
        MIRA(label_loss=lambda t, p: -1.0).fit(X, ys)


def test_mira_save_load_round_trip(tmp_path):
    _, X, ys = _problem(noise=0.2)
    labels = [f"c{y}" for y in ys]
    m = MIRA(label_loss=lambda t, p: 2.0 * (t != p), variant="pa-i", C=0.3, epochs=3)
    m.fit(X, labels)
    m.save(tmp_path / "mira.npz")
    loaded = OnlineLearner.load(tmp_path / "mira.npz")
    assert type(loaded) is MIRA and loaded.classes_ == m.classes_
    np.testing.assert_array_equal(loaded.decision_function(X), m.decision_function(X))
    assert loaded.predict(X).tolist() == m.predict(X).tolist()
    np.testing.assert_array_equal(loaded.cost_, m.cost_)
    # training goes on identically from the loaded state
    order = np.arange(len(labels))[::-1]
    m.partial_fit(X, labels, order=order)
    loaded.partial_fit(X, labels, order=order)
    np.testing.assert_array_equal(loaded.coef_, m.coef_)


def average_vs_last(make, noise=0.2, seeds=(0, 1, 2)):
    """Blitzer books vs dvd (predict the domain), seeded 75/25 splits with a share
    ``noise`` of the training labels flipped (test labels clean): test accuracy of the
    averaged model and of the last iterate of ``make(seed)``, per seed."""
    indices, values, offsets, domain, _ = hashed_blitzer()
    X = SparseRows(indices, values, offsets, 2**18)
    keep = np.flatnonzero((domain == "books") | (domain == "dvd"))
    results = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        perm = rng.permutation(keep)
        train, test = perm[:int(0.75 * len(perm))], perm[int(0.75 * len(perm)):]
        y = domain[train].copy()
        flip = rng.random(len(y)) < noise
        y[flip] = np.where(y[flip] == "books", "dvd", "books")
        m = make(seed).fit(X.take(train), y)
        averaged = np.mean(m.predict(X.take(test)) == domain[test])
        m.average = False
        results.append((averaged, np.mean(m.predict(X.take(test)) == domain[test])))
    return np.array(results)


@pytest.mark.slow  # make test-slow: MIRA's averaging is checked against the slow reference
def test_mira_average_beats_last_iterate_on_noisy_blitzer():
    clean = average_vs_last(lambda seed: MIRA(epochs=3, seed=seed), noise=0.0)
    noisy = average_vs_last(lambda seed: MIRA(epochs=3, seed=seed), noise=0.2)
    print(f"\nMIRA, Blitzer books vs dvd (1500/500), 3 passes, 3 splits; averaged / last "
          f"iterate test accuracy:\n  clean labels:       {clean.round(3).tolist()}\n"
          f"  20% labels flipped: {noisy.round(3).tolist()}")
    assert np.all(noisy[:, 0] >= noisy[:, 1] + 0.01)      # averaging wins on every split
    assert np.all(noisy[:, 0] >= 0.84)
    # on clean labels the two are close (the data are nearly separable): no harm done
    assert np.all(clean[:, 0] >= clean[:, 1] - 0.01) and np.all(clean[:, 0] >= 0.94)
