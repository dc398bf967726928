"""Pegasos: primal estimated sub-gradient solver for the linear SVM.

Shalev-Shwartz, Singer & Srebro, "Pegasos: Primal Estimated sub-GrAdient SOlver for SVM"
(ICML 2007); see ``../shared/references/pegasos-online-learning-clojure.md``. Minimizes
``lam/2 ||w||^2 + mean(max(0, 1 - y w.x))`` with steps ``1/(lam t)`` and projection onto
the ball of radius ``1/sqrt(lam)``, one example (``k = 1``) or a mini-batch of ``k`` at a
time. The kernel is ``projected._pegasos_batch_pass`` (``k = 1``: one example at a
time, as in the paper's basic algorithm).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from nbsvm._params import store_params
from nbsvm.data.rows import csr_dot
from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.kernels import projected


class Pegasos(OnlineLearner):
    """Binary linear SVM trained by Pegasos (labels: any two strings; the second in
    sorted order is the positive class).

    Parameters
    ----------
    lam : float
        Regularization strength lambda (> 0); steps are ``1/(lam t)``.
    epochs : int
        Passes made by :meth:`fit`, each over a new seeded permutation.
    k : int
        Mini-batch size (the paper's ``k``): each iteration takes ``k`` consecutive
        examples of the pass, checks all their margins against the same ``w`` and adds
        ``1/(lam t k) sum y x`` over the violators. ``t`` counts iterations, not examples.
    fit_intercept : bool
        Learn a bias the paper's way: as the weight of a constant feature of value 1, so it
        is regularized and projected like the other weights and the guarantees hold (the
        objective gains ``lam/2 b^2``). False (default) is the paper's unbiased model.
    seed : int
        Seeds the per-epoch shuffles of :meth:`fit`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> m = Pegasos(lam=0.5, epochs=1).fit(X, ["spam", "ham"])
    >>> m.predict(X).tolist()
    ['spam', 'ham']
    >>> round(m.objective(X, ["spam", "ham"]), 3)
    0.521
    """

    task = "binary"
    lam: float  # a parameter (stored by store_params, declared for mypy)

    def __init__(self, lam=1e-4, epochs=10, k=1, fit_intercept=False, seed=0):
        store_params(self, locals())

    def check_params(self) -> None:
        if not (isinstance(self.lam, numbers.Real) and np.isfinite(self.lam) and self.lam > 0):
            raise NBSVMError(f"lambda (lam) must be > 0 for Pegasos, got {self.lam!r}")
        if not (isinstance(self.k, numbers.Integral) and self.k >= 1):
            raise NBSVMError(f"the mini-batch size k must be an integer >= 1, got {self.k!r}")
        if not (isinstance(self.epochs, numbers.Integral) and self.epochs >= 1):
            raise NBSVMError(f"epochs must be an integer >= 1, got {self.epochs!r}")

    def fit(
        self, X: Any, y: Any, *, callback: Callable[[int, dict], object] | None = None
    ) -> Pegasos:
        self.check_params()
        return super().fit(X, y, callback=callback)

    def _init_state(self, n_features, n_outputs):
        self.check_params()
        # w = s * v; v[n_features] is the bias weight when fit_intercept
        self.v_ = np.zeros(n_features + (1 if self.fit_intercept else 0))
        self.state_ = np.array([1.0, 0.0, 0.0, 0.0])  # s, ||v||^2, t, violations

    def _pass(self, rows, y, order):
        self.check_params()
        with_bias = self.v_.shape[0] > self.n_features_in_
        before = self.state_[3]
        total = projected._pegasos_batch_pass(
            rows.indices,
            rows.values,
            rows.offsets,
            y,
            order,
            self.v_,
            self.state_,
            float(self.lam),
            int(self.k),
            self.n_features_in_ if with_bias else -1,
        )
        # "violations": margins below 1 (the examples that moved w), not sign mistakes
        return {"n": len(order), "loss": float(total), "violations": int(self.state_[3] - before)}

    @property
    def coef_(self) -> np.ndarray:
        return self.state_[0] * self.v_[: self.n_features_in_]

    @property
    def intercept_(self) -> float:
        if self.v_.shape[0] > self.n_features_in_:
            return float(self.state_[0] * self.v_[self.n_features_in_])
        return 0.0

    def _scores(self, rows) -> np.ndarray:
        return csr_dot(self.coef_, rows.indices, rows.values, rows.offsets) + self.intercept_

    def objective(self, X: Any, y: Any) -> float:
        """The primal SVM objective ``lam/2 (||w||^2 + b^2) + mean hinge`` on ``(X, y)``
        (``b = 0`` without intercept)."""
        margins = self._encode(y) * self.decision_function(X)
        w, b = self.coef_, self.intercept_
        return 0.5 * self.lam * (float(w @ w) + b * b) + float(
            np.maximum(0.0, 1.0 - margins).mean()
        )
