"""Losses, the SGD/AdaGrad kernels and LinearSGD against plain-Python references."""
import math

import numpy as np
import pytest

from nbsvm.errors import NBSVMError
from nbsvm.learners import LOSSES, LinearSGD, resolve_loss
from nbsvm.learners.kernels import table as table_kernels
from nbsvm.learners.kernels.weight_tricks import FOLD_HIGH, FOLD_LOW
from testhelpers import random_rows, kernel_loss

from naive import naive_adagrad_epoch, naive_dloss, naive_loss, naive_sgd_epoch, rel_gap


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


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_numba_loss_kernel_matches_python(name):
    loss = LOSSES[name]
    pts = POINTS + [1.0, -1.0, 0.999999, 1.000001, 18.0, -18.0, 17.9, 18.1, -500.0, 500.0]
    for y in (1.0, -1.0):
        for p in pts:
            lk, dk = kernel_loss(loss.code, p, y)
            assert lk == pytest.approx(loss.loss(p, y), rel=1e-13, abs=1e-300), (name, p, y)
            assert dk == pytest.approx(loss.dloss(p, y), rel=1e-13, abs=1e-300), (name, p, y)


# -- SGD ------------------------------------------------------------------------------------
#
# The state is float32 (the scaled vector v = w * s for SGD, w and G for AdaGrad), so the
# learners are compared with the float64 definitions of naive.py to a float32-appropriate
# tolerance, relative to the size of the weights. Over these few epochs the observed gap is
# ~1e-7; TOL leaves a margin, and every comparison is paired with a control showing that a
# slightly wrong step size or lambda lands far outside it.

TOL = 1e-5


def new_learner(n_features, tables, **kw):
    m = LinearSGD(n_features, n_outputs=len(tables), **kw)
    for k, t in enumerate(tables):
        m.tables[k] = t
    return m


def test_state_layout_and_tables_view():
    sgd = LinearSGD(5, n_outputs=2, optimizer="sgd")
    ada = LinearSGD(5, n_outputs=3, optimizer="adagrad")
    assert sgd.S_.shape == (2, 5, 2) and ada.S_.shape == (3, 5, 3)   # value, weight, (G)
    assert sgd.S_.dtype == ada.S_.dtype == np.float32
    assert sgd.state_.tolist() == [[1.0, 0.0, 0.0]] * 2      # scale s = 1, bias, t
    assert ada.state_.tolist() == [[0.0, 0.0, 0.0]] * 3      # bias, t, G_bias
    sgd.tables[1] = np.arange(5)
    assert sgd.S_[1, :, 0].tolist() == [0, 1, 2, 3, 4]        # writes go into the state
    assert np.shares_memory(sgd.tables, sgd.S_)
    assert np.shares_memory(sgd.coef(), sgd.S_) and np.shares_memory(ada.coef(), ada.S_)


@pytest.mark.parametrize("loss", ["hinge", "log", "squared_hinge", "modified_huber"])
@pytest.mark.parametrize("lam, eta0", [(0.01, 0.1), (0.3, 0.5), (0.0, 0.2)])
def test_sgd_epochs_equal_naive(loss, lam, eta0):
    docs, ids, offsets, codes, table, order = make_problem(seed=1)
    m = new_learner(16, [table], loss=loss, optimizer="sgd", eta0=eta0, lam=lam)
    w, b, t = [0.0] * 16, 0.0, 0
    w32, b32 = [0.0] * 16, 0.0
    wrong_eta = ([0.0] * 16, 0.0, 0)
    wrong_lam = ([0.0] * 16, 0.0, 0)
    ys = ys_of(codes, 1)
    rng = np.random.default_rng(5)
    for epoch in range(3):
        o = order if epoch == 0 else rng.permutation(len(docs)).astype(np.int64)
        mean = m.epoch(ids, offsets, codes, o, positive=[1])
        w, b, t, total = naive_sgd_epoch(docs, ys, o, table, w, b, t, eta0, lam, loss)
        w32, b32, _, _ = naive_sgd_epoch(docs, ys, o, table, w32, b32, t - len(o), eta0, lam,
                                         loss, f32=True)
        wrong_eta = naive_sgd_epoch(docs, ys, o, table, *wrong_eta, eta0 * 1.05, lam, loss)[:3]
        wrong_lam = naive_sgd_epoch(docs, ys, o, table, *wrong_lam, eta0, lam + 0.02, loss)[:3]
        assert mean == pytest.approx(total / len(o), rel=TOL, abs=1e-9)
        assert m.state_[0, 2] == t                    # t counts updates over all epochs
    coef = m.coef()[0]                                # folds the scale into the vector
    assert m.state_[0, 0] == 1.0
    assert rel_gap(coef, w) <= TOL and rel_gap(m.intercept()[0], b) <= TOL
    assert np.any(np.asarray(w) != 0)
    if lam == 0.0:
        # no L2: the scale stays 1 and the float32 vector is updated in place, exactly as
        # the float32-storing reference does it
        assert np.array_equal(coef, np.asarray(w32, np.float32))
        assert m.intercept()[0] == b32
    else:
        assert rel_gap(coef, w32) <= TOL
    # controls: a 5% larger step or a larger lambda is far outside the tolerance
    assert rel_gap(coef, wrong_eta[0]) > 30 * TOL
    assert rel_gap(coef, wrong_lam[0]) > 30 * TOL


def test_sgd_hand_computed_docstring_example():
    ids = np.array([0, 1, 1, 2], np.int32)
    offsets = np.array([0, 2, 4])
    codes = np.array([1, 0], np.int32)
    m = LinearSGD(3, loss="hinge", eta0=0.5, lam=0.0)
    m.tables[:] = 1.0
    m.epoch(ids, offsets, codes, np.array([0, 1]), positive=[1])
    # doc 0 (y=+1, p=0): w0=w1=+0.5, b=+0.005 ; doc 1 (y=-1, p=0.505): w1=w2 -= 0.5, b=0
    assert m.coef()[0].tolist() == [0.5, 0.0, -0.5]
    assert m.intercept()[0] == pytest.approx(0.0, abs=1e-15)


def test_sgd_hand_computed_with_l2_scale():
    # one feature, x = 2, y = +1, hinge, eta0 = 0.5, lam = 0.2, two identical steps:
    # t=0: eta=0.5, p=0 -> w = (1-0.1)*0 + 0.5*2 = 1.0, b = 0.005
    # t=1: eta=0.5/1.1, p = 2*1 + 0.005 = 2.005 >= 1 -> no loss step, w = (1 - 0.2*eta) * 1
    m = LinearSGD(1, loss="hinge", eta0=0.5, lam=0.2)
    m.tables[0] = 2.0
    m.epoch(np.array([0], np.int32), np.array([0, 1]), np.array([1], np.int32),
            np.array([0, 0]), positive=[1])
    eta1 = 0.5 / 1.1
    s = (1 - 0.5 * 0.2) * (1 - eta1 * 0.2)            # w = s v
    assert m.state_[0].tolist() == pytest.approx([s, 0.005, 2.0], rel=1e-15)
    assert float(m.coef()[0, 0]) == pytest.approx(1.0 - eta1 * 0.2, rel=1e-7)
    assert m.state_[0, 0] == 1.0                     # coef() folded the scale


def test_sgd_bias_not_regularized_and_slow():
    # one example with no features: only the bias moves, by eta*0.01*g, no shrinkage of w
    ids = np.zeros(0, np.int32)
    offsets = np.array([0, 0, 0])
    codes = np.array([1, 1], np.int32)
    m = LinearSGD(4, loss="hinge", eta0=0.5, lam=0.1)
    m.tables[:] = 1.0
    m.epoch(ids, offsets, codes, np.array([0, 1]), positive=[1])
    eta_0, eta_1 = 0.5, 0.5 / (1 + 0.1 * 0.5 * 1)
    assert m.intercept()[0] == pytest.approx(0.01 * (eta_0 + eta_1), rel=1e-14)


def test_sgd_multi_output_each_equals_naive():
    docs, ids, offsets, codes, table, order = make_problem(seed=2, n_classes=3)
    table2 = (np.asarray(table) * -0.5 + 0.25).astype(np.float32)
    tables = [table, table2, np.ones(16, np.float32)]
    m = new_learner(16, tables, loss="log", eta0=0.2, lam=0.05)
    mean = m.epoch(ids, offsets, codes, order, positive=[0, 1, 2])
    total = 0.0
    for k in range(3):
        w, b, t, tot = naive_sgd_epoch(docs, ys_of(codes, k), order, tables[k], [0.0] * 16,
                                       0.0, 0, 0.2, 0.05, "log")
        total += tot
        assert rel_gap(m.coef()[k], w) <= TOL
        assert rel_gap(m.intercept()[k], b) <= TOL
        # output k learns against code k: a swapped positive class is far off
        w_other = naive_sgd_epoch(docs, ys_of(codes, (k + 1) % 3), order, tables[k],
                                  [0.0] * 16, 0.0, 0, 0.2, 0.05, "log")[0]
        assert rel_gap(m.coef()[k], w_other) > 100 * TOL
    assert mean == pytest.approx(total / (3 * len(order)), rel=TOL)


@pytest.mark.parametrize("loss", ["hinge", "log"])
def test_sgd_scale_renormalization_path(loss):
    # lam*eta0 = 1 - 1e-5: step 0 shrinks the scale (w = s v) to 1e-5 and step 1 below
    # FOLD_LOW, and it keeps shrinking by 1 - lam eta0 / (1 + lam eta0 t) afterwards,
    # crossing the bound again and again.
    docs, ids, offsets, codes, table, _ = make_problem(seed=3, n_docs=12)
    order = np.concatenate([np.arange(12), np.arange(12)[::-1], np.arange(12)]).astype(np.int64)
    eta0, lam = 1.0, 1.0 - 1e-5
    m = new_learner(16, [table], loss=loss, eta0=eta0, lam=lam)
    m.epoch(ids, offsets, codes, order, positive=[1])
    s_unrenormalized, s_expected, resets = 1.0, 1.0, 0
    for t in range(len(order)):
        f = 1.0 - lam * eta0 / (1.0 + lam * eta0 * t)
        s_unrenormalized *= f
        s_expected *= f
        if s_expected < FOLD_LOW or s_expected > FOLD_HIGH:
            s_expected, resets = 1.0, resets + 1
    assert (FOLD_LOW, FOLD_HIGH) == (1e-6, 1e6)
    assert s_unrenormalized < FOLD_LOW and resets >= 1     # the path is exercised
    assert m.state_[0, 0] == pytest.approx(s_expected, rel=1e-9)
    w, b, t, _ = naive_sgd_epoch(docs, ys_of(codes, 1), order, table, [0.0] * 16, 0.0, 0,
                                 eta0, lam, loss)
    assert rel_gap(m.intercept()[0], b) <= TOL
    assert rel_gap(m.coef()[0], w) <= TOL
    assert np.max(np.abs(w)) > 0.1                          # not trivially all zero


def test_sgd_kernel_direct_renormalizes_state():
    # call the kernel itself with a scale just over the lower bound: one step pushes it under
    docs, ids, offsets, codes, table, order = make_problem(seed=4, n_docs=3)
    S = np.zeros((16, 2), np.float32)
    S[:, 0] = table
    S[docs[0], 1] = 1.0
    s0 = FOLD_LOW * 1.001
    state = np.array([s0, 0.0, 0.0])
    lam, eta0 = 0.01, 0.5
    y = np.where(codes == 1, 1.0, -1.0)
    table_kernels._sgd_epoch(ids, offsets, y, np.zeros(0), np.array([0], np.int64), S, state, eta0,
                        lam, 0.01, LOSSES["hinge"].code, False)
    assert state[0] == 1.0
    w0 = [s0 if i in docs[0] else 0.0 for i in range(16)]
    w, b, t, _ = naive_sgd_epoch(docs, ys_of(codes, 1), [0], table, w0, 0.0, 0, eta0, lam,
                                 "hinge")
    assert rel_gap(S[:, 1], w) <= TOL
    assert np.max(np.abs(w)) > 0.1
    assert S[:, 0].tolist() == table.tolist()              # the values are not touched
    assert state[1] == pytest.approx(b, abs=1e-15) and state[2] == 1.0


# -- AdaGrad --------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["hinge", "log", "modified_huber", "squared_hinge"])
@pytest.mark.parametrize("lam", [0.0, 0.05])
def test_adagrad_epochs_equal_naive(loss, lam):
    docs, ids, offsets, codes, table, order = make_problem(seed=6)
    m = new_learner(16, [table], loss=loss, optimizer="adagrad", eta0=0.3, lam=lam)
    ys = ys_of(codes, 1)
    ref = ([0.0] * 16, [0.0] * 16, 0.0, 0.0)        # exact float64 definition
    ref32 = ([0.0] * 16, [0.0] * 16, 0.0, 0.0)      # float32 storage and arithmetic
    wrong_eta = ([0.0] * 16, [0.0] * 16, 0.0, 0.0)
    wrong_lam = ([0.0] * 16, [0.0] * 16, 0.0, 0.0)
    rng = np.random.default_rng(0)
    for epoch in range(3):
        o = order if epoch == 0 else rng.permutation(len(docs)).astype(np.int64)
        mean = m.epoch(ids, offsets, codes, o, positive=[1])
        *ref, total = naive_adagrad_epoch(docs, ys, o, table, *ref, 0.3, lam, loss)
        ref32 = naive_adagrad_epoch(docs, ys, o, table, *ref32, 0.3, lam, loss, f32=True)[:4]
        wrong_eta = naive_adagrad_epoch(docs, ys, o, table, *wrong_eta, 0.303, lam, loss)[:4]
        wrong_lam = naive_adagrad_epoch(docs, ys, o, table, *wrong_lam, 0.3, lam + 0.03,
                                        loss)[:4]
        assert mean == pytest.approx(total / len(o), rel=TOL, abs=1e-9)
        assert m.state_[0, 1] == len(o) * (epoch + 1)
    w, G, b, Gb = ref
    for rw, rG, rb, rGb in (ref, ref32):
        assert rel_gap(m.coef()[0], rw) <= TOL
        assert rel_gap(m.S_[0, :, 2], rG) <= TOL
        assert rel_gap(m.intercept()[0], rb) <= TOL
        assert m.state_[0, 2] == pytest.approx(rGb, rel=TOL)
    assert np.all(m.S_[0, :, 0] == table)             # values untouched
    assert np.max(np.abs(w)) > 0.05 and max(G) > 0
    assert rel_gap(m.coef()[0], wrong_eta[0]) > 30 * TOL
    assert rel_gap(m.coef()[0], wrong_lam[0]) > 30 * TOL


def test_adagrad_hand_computed_step():
    # one example x = {0: 2.0}, y = +1, hinge, lam = 0: g = -1, g0 = -2, G0 = 4,
    # w0 = 0.1 * 2 / sqrt(4) = 0.1 ; bias: Gb = 1, b = 0.1 * 1 / 1 = 0.1
    m = LinearSGD(2, loss="hinge", optimizer="adagrad", eta0=0.1, lam=0.0, eps=0.0)
    m.tables[0] = [2.0, 5.0]
    m.epoch(np.array([0], np.int32), np.array([0, 1]), np.array([1], np.int32),
            np.array([0]), positive=[1])
    # float32 with fastmath (the step may use an approximate 1/sqrt): within a few ulps
    assert m.coef()[0].tolist() == [pytest.approx(0.1, rel=1e-6), 0.0]
    assert m.intercept()[0] == pytest.approx(0.1, abs=1e-15)
    assert m.S_[0, :, 2].tolist() == [4.0, 0.0]
    assert m.state_[0].tolist() == [pytest.approx(0.1, abs=1e-15), 1.0, 1.0]


def test_adagrad_hand_computed_l2_step():
    # second step on the same example with lam = 0.5: p = 2*0.1 + 0.1 = 0.3 < 1 so g = -1,
    # g0 = -1*2 + 0.5*0.1 = -1.95, G0 = 4 + 3.8025, w0 = 0.1 + 0.1*1.95/sqrt(7.8025)
    m = LinearSGD(1, loss="hinge", optimizer="adagrad", eta0=0.1, lam=0.5, eps=0.0)
    m.tables[0] = 2.0
    m.epoch(np.array([0], np.int32), np.array([0, 1]), np.array([1], np.int32),
            np.array([0, 0]), positive=[1])
    assert float(m.S_[0, 0, 2]) == pytest.approx(4.0 + 1.95 ** 2, rel=1e-6)
    assert float(m.coef()[0, 0]) == pytest.approx(0.1 + 0.1 * 1.95 / math.sqrt(7.8025), rel=1e-6)
    assert m.intercept()[0] == pytest.approx(0.1 + 0.1 / math.sqrt(2.0), rel=1e-12)


# -- validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("kw, msg", [
    (dict(loss="nope"), "unknown loss"),
    (dict(optimizer="adam"), "unknown optimizer"),
    (dict(eta0=0.0), "eta0"),
    (dict(eta0=float("nan")), "eta0"),
    (dict(lam=-1e-3), "lambda"),
    (dict(eta0=1.0, lam=1.0), "lambda \\* eta0"),
])
def test_linear_sgd_validation(kw, msg):
    with pytest.raises(NBSVMError, match=msg):
        LinearSGD(8, **kw)


# -- Hogwild! AdaGrad ----------------------------------------------------------------------------

def _separable(n_docs=4000, n_features=64, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, size=n_docs).astype(np.int32)
    docs = []
    for c in codes:
        signal = rng.choice(np.arange(8) + 8 * c, size=2, replace=False)
        noise = rng.choice(np.arange(16, n_features), size=6, replace=False)
        docs.append(sorted(set(signal.tolist() + noise.tolist())))
    ids = np.concatenate([np.asarray(d, np.int32) for d in docs])
    offsets = np.zeros(n_docs + 1, np.int64)
    offsets[1:] = np.cumsum([len(d) for d in docs])
    return ids, offsets, codes


def test_hogwild_threads_learn_the_same_problem():
    ids, offsets, codes = _separable()
    order = np.arange(len(codes))
    one = LinearSGD(64, loss="log", optimizer="adagrad", eta0=0.1, lam=1e-4)
    two = LinearSGD(64, loss="log", optimizer="adagrad", eta0=0.1, lam=1e-4, threads=2)
    for m in (one, two):
        m.tables[:] = 1.0
        m.epoch(ids, offsets, codes, order, positive=[1])
    assert two.state_[0, 1] == one.state_[0, 1] == len(order)       # every example counted
    for m in (one, two):
        pred = (m.decision(ids, offsets)[:, 0] > 0).astype(int)
        assert np.mean(pred == codes) > 0.95
    # the weights are the same problem's solution, not bit-identical (two threads ran)
    assert not np.array_equal(two.S_, one.S_)
    assert rel_gap(two.coef()[0], one.coef()[0]) < 0.2
    assert np.all(np.sign(two.coef()[0, :16]) == np.sign(one.coef()[0, :16]))


def test_hogwild_small_calls_and_sgd_stay_single_threaded():
    # below 64 examples per thread, and for SGD always: bit-for-bit the single-threaded result
    ids, offsets, codes = _separable(n_docs=200)
    order = np.arange(200)
    for optimizer in ("adagrad", "sgd"):
        a = LinearSGD(64, optimizer=optimizer, eta0=0.1, lam=1e-4)
        b = LinearSGD(64, optimizer=optimizer, eta0=0.1, lam=1e-4, threads=4)
        for m in (a, b):
            m.tables[:] = 1.0
            m.epoch(ids, offsets, codes, order, positive=[1])
        assert np.array_equal(a.S_, b.S_) and np.array_equal(a.state_, b.state_)


@pytest.mark.parametrize("threads", [0, 65, 2.5, "2"])
def test_threads_validated(threads):
    with pytest.raises(NBSVMError, match="threads"):
        LinearSGD(8, optimizer="adagrad", threads=threads)


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
@pytest.mark.parametrize("loss", ["hinge", "modified_huber", "log"])
def test_unit_rows_equal_naive(optimizer, loss):
    """unit=True: every row scaled to unit L2 norm, in training and in scoring (the naive
    references divide x by its norm); unit=False stays the unscaled learner."""
    docs, ids, offsets, codes, table, order = make_problem(seed=4)
    ys = ys_of(codes, 1)
    m = new_learner(16, [table], loss=loss, optimizer=optimizer, eta0=0.3, lam=0.01, unit=True)
    plain = new_learner(16, [table], loss=loss, optimizer=optimizer, eta0=0.3, lam=0.01)
    rng = np.random.default_rng(2)
    if optimizer == "sgd":
        w, b, t = [0.0] * 16, 0.0, 0
    else:
        w, G, b, Gb = [0.0] * 16, [0.0] * 16, 0.0, 0.0
    for epoch in range(3):
        o = order if epoch == 0 else rng.permutation(len(docs)).astype(np.int64)
        mean = m.epoch(ids, offsets, codes, o, positive=[1])
        plain.epoch(ids, offsets, codes, o, positive=[1])
        if optimizer == "sgd":
            w, b, t, total = naive_sgd_epoch(docs, ys, o, table, w, b, t, 0.3, 0.01, loss,
                                             unit=True)
        else:
            w, G, b, Gb, total = naive_adagrad_epoch(docs, ys, o, table, w, G, b, Gb, 0.3,
                                                     0.01, loss, unit=True)
        assert mean == pytest.approx(total / len(o), rel=TOL, abs=1e-9)
    assert rel_gap(m.coef()[0], w) <= TOL and rel_gap(m.intercept()[0], b) <= TOL
    assert rel_gap(plain.coef()[0], w) > 30 * TOL          # the scaling changes the model
    norms = np.array([np.sqrt(sum(float(table[i]) ** 2 for i in d)) for d in docs])
    expected = np.array([sum(w[i] * float(table[i]) for i in d) for d in docs]) / norms + b
    assert rel_gap(m.decision(ids, offsets)[:, 0], expected) <= TOL
    sums = m.table_sums(ids, offsets, unit=True)[:, 0]
    assert rel_gap(sums, [sum(float(table[i]) for i in d) / n for d, n in zip(docs, norms)]) \
        <= TOL


def test_outputs_in_parallel_equal_one_at_a_time(monkeypatch):
    """Outputs train side by side on the cores: bit for bit the model of one thread."""
    docs, ids, offsets, codes, table, order = make_problem(seed=6, n_classes=5)
    tables = [np.roll(table, k) for k in range(5)]
    models = []
    for cpus in (1, 2):
        monkeypatch.setattr("nbsvm.learners.sgd.os.cpu_count", lambda: cpus)
        m = new_learner(16, tables, loss="modified_huber", optimizer="sgd", eta0=0.3, lam=0.01)
        means = [m.epoch(ids, offsets, codes, order, positive=list(range(5))) for _ in range(3)]
        models.append((m.S_.copy(), m.state_.copy(), means))
    assert np.array_equal(models[0][0], models[1][0])
    assert np.array_equal(models[0][1], models[1][1]) and models[0][2] == models[1][2]


@pytest.mark.parametrize("kind", ["softmax", "multiclass_hinge"])
@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
@pytest.mark.parametrize("unit", [False, True])
def test_multiclass_losses_train_the_outputs_together_as_the_reference(kind, optimizer, unit):
    from naive import naive_multiclass_epoch
    rng = np.random.default_rng(7)
    n, d, K = 60, 30, 3
    docs, ids, offsets = random_rows(rng, n, d, 8)
    codes = rng.integers(0, K + 1, n).astype(np.int32)      # code 3: no output (skipped)
    positive = [2, 0, 1]                                    # output k's class code
    target = np.array([positive.index(c) if c in positive else -1 for c in codes])
    order = rng.permutation(n)
    lam = 1e-3
    m = LinearSGD(d, n_outputs=K, loss=kind, optimizer=optimizer, eta0=0.1, lam=lam, unit=unit)
    m.tables[:] = rng.uniform(-2, 2, size=(K, d)).astype(np.float32)
    tables = m.tables.astype(np.float64).tolist()
    W, B, G, Gb, t, total = naive_multiclass_epoch(docs, target, order, tables,
                                                   [[0.0] * d] * K, [0.0] * K, 0.1, lam,
                                                   kind, optimizer, unit=unit)
    mean = m.epoch(ids, offsets, codes, order, positive)
    assert mean == pytest.approx(total / n, rel=1e-5)
    np.testing.assert_allclose(m.coef(), np.array(W), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m.intercept(), B, rtol=1e-4, atol=1e-7)
    assert m.state_[:, 2 if optimizer == "sgd" else 1].tolist() == [float(np.sum(target >= 0))] * K
    # a second epoch continues from the state (the schedule's t and the scale carry on)
    W, B, *_ = naive_multiclass_epoch(docs, target, order[::-1], tables, W, B, 0.1, lam,
                                      kind, optimizer, t=t, G=G, Gb=Gb, unit=unit)
    m.epoch(ids, offsets, codes, order[::-1], positive)
    np.testing.assert_allclose(m.coef(), np.array(W), rtol=1e-4, atol=1e-6)


def test_multiclass_losses_refuse_one_output_and_label_sets():
    with pytest.raises(NBSVMError, match="two or more outputs"):
        LinearSGD(5, n_outputs=1, loss="softmax")
    with pytest.raises(NBSVMError, match="unknown loss 'soft'.*softmax, multiclass_hinge"):
        LinearSGD(5, n_outputs=2, loss="soft")
    m = LinearSGD(5, n_outputs=2, loss="softmax")
    with pytest.raises(NBSVMError, match="margin loss"):
        m.epoch(np.zeros(1, np.int32), np.array([0, 1]), np.zeros(1, np.int32),
                np.array([0]), np.ones((2, 1), dtype=bool))


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
@pytest.mark.parametrize("loss", ["log", "hinge"])
def test_table_rows_and_explicit_rows_run_one_implementation(optimizer, loss):
    """NBSVM's learner (values in its float32 state) and the backend's SGDClassifier
    (explicit float64 values) are the two entries of one SGD / AdaGrad implementation:
    given the same values, rows, order and settings, they learn the same weights up to
    float32 storage, over several epochs."""
    from nbsvm.data.rows import SparseRows
    from nbsvm.learners.linear import SGDClassifier
    docs, ids, offsets, codes, table, order = make_problem(seed=8, n_docs=40)
    bias_rate = 0.01 if optimizer == "sgd" else 1.0
    m = LinearSGD(16, loss=loss, optimizer=optimizer, eta0=0.2, lam=0.01)
    m.tables[0] = table
    ref = SGDClassifier(loss=loss, schedule="optimal" if optimizer == "sgd" else "adagrad",
                        lam=0.01, eta0=0.2, bias_rate=bias_rate)
    rows = SparseRows(ids.astype(np.int64), table[ids].astype(np.float64), offsets, 16)
    y = np.where(codes == 1, 1, -1)
    rng = np.random.default_rng(2)
    for epoch in range(4):
        o = order if epoch == 0 else rng.permutation(len(codes)).astype(np.int64)
        m.epoch(ids, offsets, codes, o, positive=[1])
        ref.partial_fit(rows, y, classes=[-1, 1], order=o)
    assert np.max(np.abs(ref.coef_)) > 0.05
    np.testing.assert_allclose(m.coef()[0], ref.coef_, rtol=1e-5, atol=1e-6)
    assert m.intercept()[0] == pytest.approx(ref.intercept_, rel=1e-5, abs=1e-7)
