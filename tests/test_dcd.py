"""The exact solver (nbsvm/learners/dcd.py, kernels in nbsvm/learners/kernels/dual.py):
one pass against the slow reference of tests/naive.py, the optimum against scikit-learn's
liblinear (LinearSVC, LogisticRegression(dual=True)) on the same explicit NB-weighted
rows, and the learner's contract (partial_fit keeps rows, save/load, errors)."""
import numpy as np
import pytest

from naive import naive_dcd_svm_pass, naive_dual_objective
from nbsvm.datasets import fixture
from nbsvm.errors import NBSVMError
from nbsvm.learners.dcd import LOSSES, DualCD
from nbsvm.learners.kernels import dual
from nbsvm.learners.registry import make_learner


def _nb_rows(name="reviews.txt"):
    """The fixture's texts as NB-weighted rows (NBFeatures: bigrams, ratios x binarized
    n-grams) and their labels."""
    from nbsvm.models.transform import NBFeatures
    lines = [line.split("\t", 1) for line in open(fixture(name), encoding="utf-8")]
    labels = [label for label, _ in lines]
    texts = [text.strip() for _, text in lines]
    X = NBFeatures(ngrams=2, n_bits=12).fit(texts, labels).transform(texts)
    return X, labels


def _random_rows(n=300, d=60, seed=0):
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, random_state=seed, format="csr")
    y = np.where(X @ rng.normal(size=d) + 0.05 * rng.normal(size=n) > 0, "pos", "neg")
    return X, y


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize("bias", [True, False])
def test_one_pass_equals_the_slow_reference_and_lowers_the_dual(loss, bias):
    import scipy.sparse as sp
    X, y = _random_rows(40, 12, seed=3)
    X = sp.csr_matrix(X)
    ys = np.where(y == "pos", 1.0, -1.0)
    rows = [dict(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                     X.data[X.indptr[i]:X.indptr[i + 1]].tolist())) for i in range(40)]
    C, order = 0.7, np.random.default_rng(1).permutation(40)
    kind = LOSSES[loss]
    alpha, w = np.zeros(40), np.zeros(13)
    qd = np.array([sum(v * v for v in r.values()) for r in rows]) + (1.0 if bias else 0.0)
    qd += 0.5 / C if loss == "squared_hinge" else 0.0
    a_ref, w_ref, b_ref = [0.0] * 40, [0.0] * 12, (0.0 if bias else None)
    before = naive_dual_objective(rows, ys, a_ref, C, loss, 1.0 if bias else 0.0)
    for _ in range(3):  # three passes, each from the last
        hi, lo = dual._svm_pass(X.indices, X.data, X.indptr.astype(np.int64), ys, order, C, kind,
                                qd, alpha, w, 1.0 if bias else 0.0, 12)
        a_ref, w_ref, b_ref, hi_ref, lo_ref = naive_dcd_svm_pass(rows, ys, order, a_ref, w_ref,
                                                                 b_ref, C, loss)
        assert np.allclose(alpha, a_ref, rtol=1e-12, atol=1e-14)
        assert np.allclose(w[:12], w_ref, rtol=1e-12, atol=1e-14)
        assert w[12] == pytest.approx(b_ref if bias else 0.0, abs=1e-12)
        assert (hi, lo) == pytest.approx((hi_ref, lo_ref), abs=1e-12)
        after = naive_dual_objective(rows, ys, a_ref, C, loss, 1.0 if bias else 0.0)
        assert after <= before + 1e-12  # coordinate descent never raises the dual
        before = after


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge", "log"])
@pytest.mark.parametrize("rows", ["nb", "random"])
def test_the_optimum_equals_liblinear_on_the_same_rows(loss, rows):
    """Equal primal objective to 1e-4 (relative) against scikit-learn's liblinear solving
    the same problem (C = 1 / (lam n); the bias a regularized constant feature, as
    ``intercept_scaling=1`` makes it there), solved tightly."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    X, y = _nb_rows() if rows == "nb" else _random_rows()
    n, lam = X.shape[0], 0.01
    C = 1.0 / (lam * n)
    m = DualCD(loss=loss, lam=lam, tol=1e-5, max_iter=20000).fit(X, y)
    assert m.converged_
    if loss == "log":
        sk = LogisticRegression(C=C, dual=True, solver="liblinear", tol=1e-10,
                                max_iter=100000).fit(X, y)
    else:
        sk = LinearSVC(C=C, loss=loss, dual=True, tol=1e-10, max_iter=1000000).fit(X, y)
    ref = DualCD(loss=loss, lam=lam).fit(X, y)
    ref.w_ = np.concatenate([sk.coef_.ravel(), sk.intercept_])  # liblinear's optimum
    ours, theirs = m.objective(X, y), ref.objective(X, y)
    assert ours == pytest.approx(theirs, rel=1e-4)
    assert np.mean(m.predict(X) == sk.predict(X)) >= 0.98


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_partial_fit_solves_every_row_given_so_far(loss):
    """Warm-started from the first half's solution: the log loss's dual pairs kept
    summing to the old C (C = 1/(lam n) shrinks as rows come), so it converged, and said
    so, to another optimum (objective 0.4167 against 0.4083)."""
    X, y = _random_rows()
    whole = DualCD(lam=0.01, tol=1e-6, loss=loss).fit(X, y)
    parts = DualCD(lam=0.01, tol=1e-6, loss=loss)
    parts.partial_fit(X[:150], y[:150], classes=["neg", "pos"])
    first = parts.coef_.copy()  # solved on the first half
    parts.partial_fit(X[150:], y[150:])
    assert not np.allclose(first, parts.coef_)
    assert parts.objective(X, y) == pytest.approx(whole.objective(X, y), rel=1e-5)
    assert parts.converged_
    assert np.abs(parts.decision_function(X) - whole.decision_function(X)).max() < 1e-3


def test_saved_and_loaded_predicts_the_same_and_refuses_to_continue(tmp_path):
    X, y = _nb_rows()
    m = make_learner("dcd", lam=0.01).fit(X, y)
    m.save(tmp_path / "dcd.npz")
    back = DualCD.load(tmp_path / "dcd.npz")
    assert np.array_equal(back.decision_function(X), m.decision_function(X))
    with pytest.raises(NBSVMError, match="cannot continue"):
        back.partial_fit(X, y)


@pytest.mark.parametrize("params, message", [
    (dict(loss="huber"), "unknown loss 'huber'; allowed: squared_hinge, hinge, log"),
    (dict(lam=0), r"lambda \(lam\) must be a finite number > 0"),
    (dict(tol=-1), "tol must be a finite number > 0"),
    (dict(max_iter=0), "max_iter must be an integer >= 1")])
def test_impossible_settings_say_what_is_allowed(params, message):
    X, y = _random_rows(20, 5)
    with pytest.raises(NBSVMError, match=message):
        DualCD(**params).fit(X, y)


def test_a_solver_pickled_before_it_kept_its_bound_continues():
    """_C (the last solve's bound) is new: a hinge model pickled without it raised
    AttributeError in partial_fit."""
    import pickle
    X, y = _random_rows()
    whole = DualCD(lam=0.01, tol=1e-6, loss="hinge").fit(X, y)
    parts = DualCD(lam=0.01, tol=1e-6, loss="hinge")
    parts.partial_fit(X[:150], y[:150], classes=["neg", "pos"])
    parts.coef_  # solved on the first half
    del parts.__dict__["_C"]
    parts = pickle.loads(pickle.dumps(parts))
    parts.partial_fit(X[150:], y[150:])
    assert parts.objective(X, y) == pytest.approx(whole.objective(X, y), rel=1e-5)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_stopping_at_max_iter_is_said_as_liblinear_says_it(tmp_path):
    """dcd stopped at max_iter without a word, its solution far from exact (objective 1.01
    where LinearSVC reaches 0.40, a hunter found): a warning names the passes, the gap and
    tol, and learn prints it as a note, even with -q. A converged fit says nothing."""
    import subprocess
    import sys
    import warnings
    X, y = _random_rows(200, 30)
    with pytest.warns(UserWarning, match=r"dcd stopped after 3 passes with its duality gap "
                                         r"\S+ above tol 1e-12"):
        m = DualCD(tol=1e-12, max_iter=3).fit(X, y)
    assert not m.converged_ and m.n_iter_ == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert DualCD(tol=1e-3, max_iter=10000).fit(X, y).converged_
    data = tmp_path / "empty.svm"
    data.write_text("1 3:1\n-1 2:1\n1\n-1 3:0\n1 3:1 2:0\n")
    r = subprocess.run([sys.executable, "-m", "nbsvm", "learn", str(data), "-a", "dcd", "-o",
                        str(tmp_path / "d.npz"), "-q"], capture_output=True, text=True)
    assert r.returncode == 0 and "note: dcd stopped after 1000 passes" in r.stderr, r.stderr
    assert "UserWarning" not in r.stderr


def test_learn_refuses_epochs_for_dcd(tmp_path):
    """learn -a dcd --epochs 3 kept every row three times (the same solution, three times
    the memory): refused, as the docs say dcd takes no epochs."""
    import subprocess
    import sys
    data = tmp_path / "a.svm"
    data.write_text("1 1:1\n-1 2:1\n1 1:2\n-1 2:3\n")
    r = subprocess.run([sys.executable, "-m", "nbsvm", "learn", str(data), "-a", "dcd", "--epochs",
                        "3", "-o", str(tmp_path / "d.npz")], capture_output=True, text=True)
    assert r.returncode == 2 and "DualCD takes no epochs" in r.stderr, r.stderr
    assert not (tmp_path / "d.npz").exists()


def test_only_nbsvms_own_user_warnings_become_notes(capsys, monkeypatch):
    """The CLI prints nbsvm's warnings as notes; numpy's RuntimeWarnings raised through
    nbsvm's lines, and other packages' warnings, keep Python's words (a reviewer's
    finding: 'note: overflow encountered in exp')."""
    import os
    import nbsvm.cli as cli
    inside = os.path.join(os.path.dirname(cli.__file__), "..", "learners", "dcd.py")
    shown = []
    monkeypatch.setattr(cli, "_SHOW_WARNING", lambda m, c, *a: shown.append(f"{c.__name__}: {m}"))
    cli._warning_as_note(UserWarning("dcd stopped"), UserWarning, inside, 1)
    cli._warning_as_note(RuntimeWarning("overflow encountered in exp"), RuntimeWarning, inside, 1)
    cli._warning_as_note(UserWarning("theirs"), UserWarning, "/elsewhere/nbsvm_contrib/x.py", 1)
    assert capsys.readouterr().err == "note: dcd stopped\n"
    assert shown == ["RuntimeWarning: overflow encountered in exp", "UserWarning: theirs"]


def test_one_vs_rest_of_dcd_saves_the_solved_weights_and_keeps_rows_once(tmp_path):
    """OneVsRest('dcd') saved each binary learner's state unsolved (dcd solves when its
    weights are first read): every weight 0, the file predicting one class (49.6% on three
    classes, 99.7% in memory). Its five epochs also kept every row five times (15,000 for
    3,000): a dcd learner stops a loop of epochs after one."""
    from nbsvm.learners.multiclass import OneVsRest

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3], axis=1)]
    m = OneVsRest("dcd").fit(X, y)
    assert [len(e._kept) for e in m.estimators_] == [1, 1, 1] and len(m.history_) == 1
    want = m.decision_function(X)
    m.save(tmp_path / "ovr.npz")
    back = OneVsRest.load(tmp_path / "ovr.npz")
    assert np.abs(back.decision_function(X)).max() > 0.5
    np.testing.assert_array_equal(back.decision_function(X), want)
    assert (back.predict(X) == y).mean() > 0.9
    # one binary learner alone, saved as its state (as a checkpoint of OneVsRest does)
    fresh = DualCD().partial_fit(X, y == "a", classes=[False, True])
    w = fresh.state_arrays()["w_"]  # solved when read: not the zeros it starts from
    assert np.abs(w).max() > 0.1 and np.array_equal(w[:-1], fresh.coef_)
