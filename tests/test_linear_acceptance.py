"""Acceptance of the linear learners against scikit-learn (a test-only dependency) on RCV1.

(a) Pegasos and SGD-hinge reach the primal SVM objective ``lam/2 ||w||^2 + mean hinge``
    within 1% of LinearSVC's optimum on train2000, and their test error on VW's
    rcv1_small_test is within 1 point of LinearSVC's.
(b) SGD-log with a constant step follows scikit-learn's SGDClassifier weight for weight.

Run with ``pytest -s`` to see the numbers.
"""
import io
import tarfile

import numpy as np
import pytest

from conftest import shared_datasets
from nbsvm.io.sparse import read_svmlight
from nbsvm.data.rows import SparseRows
from nbsvm.learners.linear import SGDClassifier
from nbsvm.learners.pegasos import Pegasos

N_FEATURES = 47236          # RCV1 (LYRL2004 stems), 1-based in the files
LAM = 1e-4


def _rows(records):
    records = list(records)
    offsets = np.cumsum([0] + [len(r.keys) for r in records])
    X = SparseRows(np.concatenate([r.keys for r in records]),
                   np.concatenate([r.values for r in records]), offsets, N_FEATURES)
    return X, np.array([r.labels[0] for r in records])


@pytest.fixture(scope="module")
def rcv1():
    root = shared_datasets() / "rcv1"
    train, tar_path = root / "train2000.dat.gz", root / "vw_rcv1_small.tar.gz"
    for path in (train, tar_path):
        if not path.is_file():
            pytest.skip(f"{path} not found")
    X, y = _rows(read_svmlight(train, index_base=1))
    with tarfile.open(tar_path) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("rcv1_small_test.data"))
        text = io.TextIOWrapper(tar.extractfile(member), encoding="utf-8")
        Xt, yt = _rows(read_svmlight(text, index_base=1))      # "|f" namespaces are skipped
    assert (len(y), len(yt)) == (2000, 500)
    return X, y, Xt, yt


def _csr(X):
    import scipy.sparse as sp
    return sp.csr_matrix((X.values, X.indices, X.offsets), shape=(len(X), X.n_features))


def _objective(w, X, ys):
    return LAM / 2 * float(w @ w) + float(np.maximum(0.0, 1.0 - ys * (_csr(X) @ w)).mean())


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_pegasos_and_sgd_hinge_reach_the_svm_optimum(rcv1):
    from sklearn.svm import LinearSVC

    X, y, Xt, yt = rcv1
    n = len(y)
    ys = np.where(y == "1", 1.0, -1.0)
    # C = 1/(lam n) makes LinearSVC's 1/2 ||w||^2 + C sum hinge proportional to ours
    svc = LinearSVC(C=1.0 / (LAM * n), loss="hinge", fit_intercept=False, dual=True,
                    tol=1e-8, max_iter=200_000).fit(_csr(X), y)
    w_opt = svc.coef_.ravel()
    optimum = _objective(w_opt, X, ys)
    svc_error = float(np.mean(svc.predict(_csr(Xt)) != yt))
    print(f"\nLinearSVC: objective {optimum:.6f}, test error {100 * svc_error:.1f}%")

    learners = {
        "Pegasos (800 epochs)": Pegasos(lam=LAM, epochs=800, seed=1),
        "SGD hinge, optimal schedule, eta0 0.3 (600 epochs)": SGDClassifier(
            loss="hinge", schedule="optimal", lam=LAM, eta0=0.3, epochs=600,
            fit_intercept=False, seed=1),
    }
    for name, model in learners.items():
        model.fit(X, y)
        objective = model.objective(X, y)
        assert objective == pytest.approx(_objective(model.coef_, X, ys), rel=1e-12)
        gap = 100 * (objective - optimum) / optimum
        error = float(np.mean(model.predict(Xt) != yt))
        print(f"{name}: objective {objective:.6f}, gap {gap:.2f}%, "
              f"test error {100 * error:.1f}%")
        assert -1e-6 < gap < 1.0, name
        assert abs(error - svc_error) <= 0.01, name


@pytest.mark.parametrize("sparse", [False, True])
def test_sgd_log_constant_step_matches_sklearn_weight_for_weight(rcv1, sparse):
    """scikit-learn's update (``_sgd_fast``): ``wscale *= 1 - eta alpha`` before the
    gradient step ``w += -eta dloss x``; the intercept moves by ``-eta dloss`` times
    ``intercept_decay``: 1 for dense input, 0.01 for sparse (our ``bias_rate``)."""
    from sklearn.linear_model import SGDClassifier as SkSGD

    X, y, _, _ = rcv1
    X = X.take(np.arange(200))
    y = y[:200]
    columns, local = np.unique(X.indices, return_inverse=True)   # a small dense matrix
    Xs = SparseRows(local.astype(np.int64), X.values, X.offsets, len(columns))
    A = _csr(Xs) if sparse else _csr(Xs).toarray()
    eta0, alpha = 0.5, 1e-3
    sk = SkSGD(loss="log_loss", learning_rate="constant", eta0=eta0, alpha=alpha,
               penalty="l2", shuffle=False, fit_intercept=True, average=False)
    ours = SGDClassifier(loss="log", schedule="constant", eta0=eta0, lam=alpha, penalty="l2",
                         fit_intercept=True, bias_rate=0.01 if sparse else 1.0)
    worst = 0.0
    for step in range(3):
        sk.partial_fit(A, y, classes=np.array(["-1", "1"]))
        ours.partial_fit(Xs, y)
        diff = max(float(np.max(np.abs(sk.coef_.ravel() - ours.coef_))),
                   abs(float(sk.intercept_[0]) - ours.intercept_))
        worst = max(worst, diff)
    print(f"\nSGD-log vs scikit-learn ({'sparse' if sparse else 'dense'}, 600 steps): "
          f"max |weight difference| {worst:.2e}, max |w| {np.max(np.abs(ours.coef_)):.3f}, "
          f"intercept {ours.intercept_:.4f}")
    assert sk.classes_.tolist() == ours.classes_
    assert np.max(np.abs(ours.coef_)) > 0.1 and abs(ours.intercept_) > 1e-3
    assert worst < 1e-6
