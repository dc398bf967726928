"""Bottou's primal objective, test error and the batch optima of scikit-learn on the same
problem, and his eta0 calibration: what every RCV1 learner is measured against."""

from __future__ import annotations

import time

import numpy as np

from nbsvm.data.rows import SparseRows
from nbsvm.learners.eta0 import bottou_search
from nbsvm.learners.linear import SGDClassifier


def to_csr(X: SparseRows):
    import scipy.sparse as sp

    return sp.csr_matrix((X.values, X.indices, X.offsets), shape=(len(X), X.n_features))


def signs(y) -> np.ndarray:
    return np.where(np.asarray(y) == "1", 1.0, -1.0)


def primal(w, b, X: SparseRows, y, lam: float, loss: str) -> float:
    """Bottou's cost ``lam/2 ||w||^2 + mean loss(y (w.x + b))``: the bias is not
    regularized (his default ``-DREGULARIZED_BIAS=0``)."""
    z = signs(y) * (to_csr(X) @ w + b)
    losses = np.maximum(0.0, 1.0 - z) if loss == "hinge" else np.logaddexp(0.0, -z)
    return 0.5 * lam * float(w @ w) + float(losses.mean())


def test_error(w, b, X: SparseRows, y) -> float:
    """Fraction of sign mistakes (a score of 0 counts as negative, as ``predict``)."""
    return float(np.mean(np.where(to_csr(X) @ w + b > 0, 1.0, -1.0) != signs(y)))


def batch_optimum(X, y, Xt, yt, lam: float, loss: str, bias: bool) -> dict:
    """scikit-learn's solution of the same problem (C = 1/(lam n)).

    Hinge: liblinear's dual coordinate descent (``LinearSVC``); with a bias its constant
    feature is 3, so the bias penalty is ``lam/2 (b/3)^2`` (about 1e-8 here) and the problem
    is Bottou's (unregularized bias) to within that: a feature of 10 gives the same
    objective to 1e-10, at 10x the time; 30 no longer converges. Log: Newton-CG
    (``LogisticRegression``), whose intercept is not regularized (L-BFGS reaches the same
    objective to 1e-12 in 30x the time).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    n = len(y)
    C = 1.0 / (lam * n)
    if loss == "hinge":
        model = LinearSVC(
            C=C,
            loss="hinge",
            dual=True,
            fit_intercept=bias,
            intercept_scaling=3.0,
            tol=1e-8,
            max_iter=100_000,
        )
        name = "LinearSVC (liblinear dual CD)"
    else:
        model = LogisticRegression(
            C=C, solver="newton-cg", fit_intercept=bias, tol=1e-12, max_iter=100_000
        )
        name = "LogisticRegression (Newton-CG)"
    t0 = time.perf_counter()
    model.fit(to_csr(X), y)
    seconds = time.perf_counter() - t0
    sign = 1.0 if model.classes_[1] == "1" else -1.0  # classes sort as "-1", "1"
    w = sign * model.coef_.ravel()
    b = sign * float(model.intercept_[0]) if bias else 0.0
    return dict(
        method=name,
        seconds=seconds,
        objective=primal(w, b, X, y, lam, loss),
        test_error=test_error(w, b, Xt, yt),
        iterations=int(np.max(model.n_iter_)),
    )


def calibrate_eta0(X: SparseRows, y, loss: str, lam: float, seed: int, sample: int = 1000) -> float:
    """Bottou's ``determineEta0`` (nbsvm.learners.eta0.bottou_search): from eta 1, move by 2
    towards the constant step whose one pass over a sample of ``sample`` examples gives
    the lowest cost on that sample; return the lower end of the final bracket."""
    order = np.random.default_rng(seed).permutation(len(y))[:sample]
    Xs, ys = X.take(order), y[order]

    def cost(eta):
        if eta * lam >= 1.0:  # the learner refuses such a step
            return np.inf
        m = SGDClassifier(loss=loss, schedule="constant", eta0=eta, lam=lam, epochs=1)
        return m.partial_fit(Xs, ys).objective(Xs, ys)

    return bottou_search(cost)
