"""Losses, the SGD/AdaGrad kernels and LinearSGD against plain-Python references."""
import math

import numpy as np
import pytest
from numba import njit

from nbsvm.errors import NBSVMError
from nbsvm.online import LOSSES, LinearSGD, resolve_loss
from nbsvm.online import _kernels
from nbsvm.online._kernels import SCALE_BOUND, _loss_dloss

from naive import naive_adagrad_epoch, naive_dloss, naive_loss, naive_sgd_epoch


# -- a small random sparse problem --------------------------------------------------------

def make_problem(n_features=16, n_docs=14, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    docs = [sorted(rng.choice(n_features, size=rng.integers(1, 7), replace=False).tolist())
            for _ in range(n_docs)]
    ids = np.concatenate([np.asarray(d, np.int32) for d in docs])
    offsets = np.zeros(n_docs + 1, np.int64)
    offsets[1:] = np.cumsum([len(d) for d in docs])
    codes = rng.integers(0, n_classes, size=n_docs).astype(np.int32)
    table = rng.uniform(-2.0, 2.0, size=n_features).astype(np.float32)
    order = rng.permutation(n_docs).astype(np.int64)
    return docs, ids, offsets, codes, table, order


def ys_of(codes, positive):
    return [1.0 if c == positive else -1.0 for c in codes]


def assert_close(a, b, tol=1e-12):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    assert np.max(np.abs(a - b)) <= tol * scale, (a, b)


# -- losses ---------------------------------------------------------------------------------

POINTS = [-25.0, -3.3, -0.7, 0.0, 0.4, 2.5, 25.0]   # margins z = y*p never at a kink


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("y", [1.0, -1.0])
def test_loss_derivative_by_central_differences(name, y):
    loss = LOSSES[name]
    h = 1e-6
    for p in POINTS:
        fd = (loss.loss(p + h, y) - loss.loss(p - h, y)) / (2 * h)
        d = loss.dloss(p, y)
        assert abs(fd - d) <= 1e-6 + 1e-6 * abs(d), (name, p, y, fd, d)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_values_match_independent_formulas(name):
    loss = LOSSES[name]
    for y in (1.0, -1.0):
        for p in POINTS + [1.0, -1.0, 0.999, 1.001, 18.5, -18.5]:
            assert loss.loss(p, y) == pytest.approx(naive_loss(name, p, y), rel=1e-7, abs=1e-12)
            assert loss.dloss(p, y) == pytest.approx(naive_dloss(name, p, y), rel=1e-7,
                                                     abs=1e-12)


def test_loss_hand_values():
    assert LOSSES["hinge"].loss(0.25, 1.0) == 0.75
    assert LOSSES["hinge"].dloss(0.25, -1.0) == 1.0
    assert LOSSES["log"].loss(0.0, 1.0) == pytest.approx(math.log(2.0))
    assert LOSSES["log"].dloss(0.0, 1.0) == pytest.approx(-0.5)
    assert LOSSES["squared_hinge"].loss(-1.0, 1.0) == 4.0
    assert LOSSES["squared_hinge"].dloss(-1.0, 1.0) == -4.0
    assert LOSSES["modified_huber"].loss(-3.0, 1.0) == 12.0
    assert LOSSES["modified_huber"].dloss(-3.0, 1.0) == -4.0
    assert LOSSES["modified_huber"].loss(0.5, 1.0) == 0.25
    # log loss stays finite far out (overflow guards)
    assert LOSSES["log"].loss(-1000.0, 1.0) == 1000.0
    assert LOSSES["log"].dloss(-1000.0, 1.0) == -1.0
    assert LOSSES["log"].loss(1000.0, 1.0) == 0.0
    assert resolve_loss("log").has_proba and not resolve_loss("hinge").has_proba
    with pytest.raises(NBSVMError, match="unknown loss"):
        resolve_loss("foo")


@njit
def _kernel_loss(kind, p, y):
    return _loss_dloss(kind, p, y)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_numba_loss_kernel_matches_python(name):
    loss = LOSSES[name]
    pts = POINTS + [1.0, -1.0, 0.999999, 1.000001, 18.0, -18.0, 17.9, 18.1, -500.0, 500.0]
    for y in (1.0, -1.0):
        for p in pts:
            lk, dk = _kernel_loss(loss.code, p, y)
            assert lk == pytest.approx(loss.loss(p, y), rel=1e-13, abs=1e-300), (name, p, y)
            assert dk == pytest.approx(loss.dloss(p, y), rel=1e-13, abs=1e-300), (name, p, y)


# -- SGD ------------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["hinge", "log", "squared_hinge", "modified_huber"])
@pytest.mark.parametrize("lam, eta0", [(0.01, 0.1), (0.3, 0.5), (0.0, 0.2)])
def test_sgd_epochs_equal_naive(loss, lam, eta0):
    docs, ids, offsets, codes, table, order = make_problem(seed=1)
    m = LinearSGD(16, loss=loss, optimizer="sgd", eta0=eta0, l2=lam)
    w, b, t = [0.0] * 16, 0.0, 0
    ys = ys_of(codes, 1)
    rng = np.random.default_rng(5)
    for epoch in range(3):
        o = order if epoch == 0 else rng.permutation(len(docs)).astype(np.int64)
        mean = m.epoch(ids, offsets, codes, o, [table], positive=[1])
        w, b, t, total = naive_sgd_epoch(docs, ys, o, table, w, b, t, eta0, lam, loss)
        assert mean == pytest.approx(total / len(o), rel=1e-12, abs=1e-15)
        assert m.state_[0, 2] == t                    # t counts updates over all epochs
        assert_close(m.intercept()[0], b)
        assert_close(m.coef()[0], w)                   # coef() folds the scale
    assert np.any(np.asarray(w) != 0)


def test_sgd_hand_computed_docstring_example():
    ids = np.array([0, 1, 1, 2], np.int32)
    offsets = np.array([0, 2, 4])
    codes = np.array([1, 0], np.int32)
    ones = np.ones(3, np.float32)
    m = LinearSGD(3, loss="hinge", eta0=0.5, l2=0.0)
    m.epoch(ids, offsets, codes, np.array([0, 1]), [ones], positive=[1])
    # doc 0 (y=+1, p=0): w0=w1=+0.5, b=+0.005 ; doc 1 (y=-1, p=0.505): w1=w2 -= 0.5, b=0
    assert m.coef()[0].tolist() == [0.5, 0.0, -0.5]
    assert m.intercept()[0] == pytest.approx(0.0, abs=1e-15)


def test_sgd_bias_not_regularized_and_slow():
    # one example with no features: only the bias moves, by eta*0.01*g, no shrinkage of w
    ids = np.zeros(0, np.int32)
    offsets = np.array([0, 0, 0])
    codes = np.array([1, 1], np.int32)
    m = LinearSGD(4, loss="hinge", eta0=0.5, l2=0.1)
    m.epoch(ids, offsets, codes, np.array([0, 1]), [np.ones(4, np.float32)], positive=[1])
    eta_0, eta_1 = 0.5, 0.5 / (1 + 0.1 * 0.5 * 1)
    assert m.intercept()[0] == pytest.approx(0.01 * (eta_0 + eta_1), rel=1e-14)


def test_sgd_multi_output_each_equals_naive():
    docs, ids, offsets, codes, table, order = make_problem(seed=2, n_classes=3)
    table2 = (np.asarray(table) * -0.5 + 0.25).astype(np.float32)
    tables = [table, table2, np.ones(16, np.float32)]
    m = LinearSGD(16, n_outputs=3, loss="log", eta0=0.2, l2=0.05)
    mean = m.epoch(ids, offsets, codes, order, tables, positive=[0, 1, 2])
    total = 0.0
    for k in range(3):
        w, b, t, tot = naive_sgd_epoch(docs, ys_of(codes, k), order, tables[k], [0.0] * 16,
                                       0.0, 0, 0.2, 0.05, "log")
        total += tot
        assert_close(m.coef()[k], w)
        assert_close(m.intercept()[k], b)
    assert mean == pytest.approx(total / (3 * len(order)), rel=1e-12)


@pytest.mark.parametrize("loss", ["hinge", "log"])
def test_sgd_scale_renormalization_path(loss):
    # lam*eta0 = 1 - 1e-5: after step 0 the scale is 1e5, and it keeps growing by
    # (1 + c t) / (1 + c (t-1)); it crosses SCALE_BOUND = 1e6 after about 10 steps.
    docs, ids, offsets, codes, table, _ = make_problem(seed=3, n_docs=12)
    order = np.concatenate([np.arange(12), np.arange(12)[::-1], np.arange(12)]).astype(np.int64)
    eta0, lam = 1.0, 1.0 - 1e-5
    m = LinearSGD(16, loss=loss, eta0=eta0, l2=lam)
    m.epoch(ids, offsets, codes, order, [table], positive=[1])
    s_unrenormalized, s_expected, resets = 1.0, 1.0, 0
    for t in range(len(order)):
        f = 1.0 - lam * eta0 / (1.0 + lam * eta0 * t)
        s_unrenormalized /= f
        s_expected /= f
        if s_expected > SCALE_BOUND:
            s_expected, resets = 1.0, resets + 1
    assert s_unrenormalized > SCALE_BOUND and resets >= 1   # the path is exercised
    assert m.state_[0, 0] == pytest.approx(s_expected, rel=1e-9)
    w, b, t, _ = naive_sgd_epoch(docs, ys_of(codes, 1), order, table, [0.0] * 16, 0.0, 0,
                                 eta0, lam, loss)
    assert_close(m.intercept()[0], b, tol=1e-10)
    assert_close(m.coef()[0], w, tol=1e-10)


def test_sgd_kernel_direct_renormalizes_state():
    # call the kernel itself with a scale just under the bound: one step pushes it over
    docs, ids, offsets, codes, table, order = make_problem(seed=4, n_docs=3)
    v = np.zeros(16)
    v[docs[0]] = 1.0
    s0 = SCALE_BOUND * 0.999
    state = np.array([s0, 0.0, 0.0])
    lam, eta0 = 0.01, 0.5
    _kernels._sgd_epoch(ids, offsets, codes, 1, np.array([0], np.int64), table, v, state, eta0,
                        lam, 0.01, LOSSES["hinge"].code)
    assert state[0] == 1.0
    w0 = [1.0 / s0 if i in docs[0] else 0.0 for i in range(16)]
    w, b, t, _ = naive_sgd_epoch(docs, ys_of(codes, 1), [0], table, w0, 0.0, 0, eta0, lam,
                                 "hinge")
    assert_close(v, w)
    assert state[1] == pytest.approx(b, abs=1e-15) and state[2] == 1.0


# -- AdaGrad --------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["hinge", "log", "modified_huber"])
@pytest.mark.parametrize("lam", [0.0, 0.05])
def test_adagrad_epochs_equal_naive(loss, lam):
    docs, ids, offsets, codes, table, order = make_problem(seed=6)
    m = LinearSGD(16, loss=loss, optimizer="adagrad", eta0=0.3, l2=lam)
    ys = ys_of(codes, 1)
    w, G, b, Gb = [0.0] * 16, [0.0] * 16, 0.0, 0.0
    w64, G64, b64, Gb64 = [0.0] * 16, [0.0] * 16, 0.0, 0.0
    rng = np.random.default_rng(0)
    for epoch in range(3):
        o = order if epoch == 0 else rng.permutation(len(docs)).astype(np.int64)
        mean = m.epoch(ids, offsets, codes, o, [table], positive=[1])
        # exact reference: G_i stored with the implementation's accumulator precision
        w, G, b, Gb, total = naive_adagrad_epoch(docs, ys, o, table, w, G, b, Gb, 0.3, lam,
                                                 loss, round_G=np.dtype(m.sq_.dtype).type)
        # the definition in exact float64 arithmetic: same up to float32 rounding of G
        w64, G64, b64, Gb64, _ = naive_adagrad_epoch(docs, ys, o, table, w64, G64, b64, Gb64,
                                                     0.3, lam, loss)
        assert mean == pytest.approx(total / len(o), rel=1e-12, abs=1e-15)
        assert_close(m.coef()[0], w)
        assert_close(m.sq_[0], G, tol=1e-7)     # stored as float32
        assert_close(m.intercept()[0], b)
        assert m.state_[0, 2] == pytest.approx(Gb, rel=1e-14)
        assert m.state_[0, 1] == len(o) * (epoch + 1)
        assert_close(m.coef()[0], w64, tol=1e-5)
        assert_close(m.intercept()[0], b64, tol=1e-5)


def test_adagrad_hand_computed_step():
    # one example x = {0: 2.0}, y = +1, hinge, lam = 0: g = -1, g0 = -2, G0 = 4,
    # w0 = 0.1 * 2 / sqrt(4) = 0.1 ; bias: Gb = 1, b = 0.1 * 1 / 1 = 0.1
    m = LinearSGD(2, loss="hinge", optimizer="adagrad", eta0=0.1, l2=0.0, eps=0.0)
    table = np.array([2.0, 5.0], np.float32)
    m.epoch(np.array([0], np.int32), np.array([0, 1]), np.array([1], np.int32),
            np.array([0]), [table], positive=[1])
    assert m.coef()[0].tolist() == pytest.approx([0.1, 0.0], abs=1e-15)
    assert m.intercept()[0] == pytest.approx(0.1, abs=1e-15)
    assert m.sq_[0].tolist() == [4.0, 0.0]


# -- validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("kw, msg", [
    (dict(loss="nope"), "unknown loss"),
    (dict(optimizer="adam"), "unknown optimizer"),
    (dict(eta0=0.0), "eta0"),
    (dict(eta0=float("nan")), "eta0"),
    (dict(l2=-1e-3), "lambda"),
    (dict(eta0=1.0, l2=1.0), "lambda \\* eta0"),
])
def test_linear_sgd_validation(kw, msg):
    with pytest.raises(NBSVMError, match=msg):
        LinearSGD(8, **kw)
