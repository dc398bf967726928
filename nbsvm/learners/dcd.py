"""An exact solver for corpora that fit in memory: dual coordinate descent for the
L2-regularized linear SVM (squared or plain hinge) and logistic regression, liblinear's
algorithms (Hsieh et al. 2008; Yu, Huang & Lin 2011; kernels in :mod:`.kernels.dual`).

Where SGD runs a fixed number of epochs, this solves the problem to a tolerance: on a few
thousand documents it reaches the optimum that SGD only approaches (RT-2k: an exact L2-SVM
on the NB bigram features beats SGD's, ``results/feature_values.md``).

Training rows are kept (as float32 over the columns they touch) until the solver runs:
:meth:`DualCD.partial_fit` adds rows, and the problem over every row given so far is
solved, warm-started from the previous solution, when the weights are next needed. On
NBSVM's text features (``nbsvm train --learner dcd``) the trainer therefore makes one pass.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from nbsvm._params import store_params
from nbsvm.data.rows import SparseRows, csr_dot
from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.kernels import dual
from nbsvm.learners.multiclass import check_positive, choose

LOSSES = {"squared_hinge": dual.SQUARED_HINGE, "hinge": dual.HINGE, "log": dual.LOG}


class DualCD(OnlineLearner):
    """Binary linear classifier solved exactly by dual coordinate descent (labels: any two
    values; the second in sorted order is the positive class).

    Minimizes ``lam/2 (||w||^2 + b^2) + mean_i loss(y_i (w.x_i + b))``, which is
    liblinear's ``1/2 ||w||^2 + C sum_i loss`` with ``C = 1 / (lam n)`` for ``n`` rows
    (scikit-learn's ``LinearSVC(C=C)`` / ``LogisticRegression(C=C, dual=True,
    solver='liblinear')``); the bias, when fitted, is the weight of a constant feature of
    value 1 and regularized, as there.

    Parameters
    ----------
    loss : {'squared_hinge', 'hinge', 'log'}
        ``max(0, 1 - m)^2`` (the L2-loss SVM, liblinear's default), ``max(0, 1 - m)`` or
        ``log(1 + exp(-m))`` of the margin ``m``.
    lam : float
        Regularization strength (> 0), per row as in the SGD learners.
    tol : float
        Stop when the projected gradients' spread (SVM) or the largest gradient (log) over
        a pass is below ``tol`` (liblinear's ``eps``).
    max_iter : int
        Passes at most (each over a new seeded permutation); ``converged_`` says whether
        ``tol`` was reached.
    fit_intercept : bool
        Learn the (regularized) bias.
    seed : int
        Seeds the permutations.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.5]])
    >>> m = DualCD(lam=0.1).fit(X, ["pos", "neg", "pos"])
    >>> m.predict(X).tolist(), bool(m.converged_)
    (['pos', 'neg', 'pos'], True)
    """

    task = "binary"
    # the parameters (stored by store_params, declared for mypy)
    loss: str
    lam: float
    tol: float
    max_iter: int
    fit_intercept: bool
    seed: int

    def __init__(
        self, loss="squared_hinge", lam=1e-4, tol=1e-4, max_iter=1000, fit_intercept=True, seed=0
    ):
        store_params(self, locals())

    # -- parameters ------------------------------------------------------------------------
    def check_params(self) -> None:
        choose("loss", self.loss, LOSSES)
        check_positive("lambda (lam)", self.lam)
        check_positive("tol", self.tol)
        if not (isinstance(self.max_iter, numbers.Integral) and self.max_iter >= 1):
            raise NBSVMError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")

    # -- training --------------------------------------------------------------------------
    def _init_state(self, n_features: int, n_outputs: int) -> None:
        self.check_params()
        self.w_ = np.zeros(n_features + 1)  # w_[n_features]: the bias weight
        self.n_iter_ = 0
        self.converged_ = False
        self._kept: list[tuple] = []  # (indices, values, row lengths, targets) per call
        self._alpha = np.zeros(0)
        self._pending = False

    def fit(
        self, X: Any, y: Any, *, callback: Callable[[int, dict], object] | None = None
    ) -> DualCD:
        """Solve on ``(X, y)`` from scratch (``callback(pass, stats)`` after every pass of
        the solver). The base class keeps the rows (one pass: this learner has no
        ``epochs``); then they are solved."""
        super().fit(X, y)
        self._solve(callback)
        self.history_ = [dict(self.last_stats_)]
        return self

    def can_continue(self) -> bool:
        """A loaded model holds no training rows to solve again with new ones."""
        return hasattr(self, "_kept")

    def _pass(self, rows: SparseRows, y: np.ndarray, order: np.ndarray) -> dict:
        """Keep the rows in ``order`` (solved when the weights are next needed)."""
        if not hasattr(self, "_kept"):
            raise NBSVMError(
                "a loaded dcd model cannot continue: its training rows are not saved "
                "(train it again on all the data)"
            )
        kept = rows.take(order)
        self._kept.append(
            (
                kept.indices.astype(np.int32),
                kept.values.astype(np.float32),
                np.diff(kept.offsets),
                np.asarray(y, dtype=np.float64)[order],
            )
        )
        self._pending = True
        return {"n": len(order)}

    def _stacked(self) -> tuple[SparseRows, np.ndarray]:
        """The kept rows as one block (float64 values) and their targets."""
        lengths = np.concatenate([k[2] for k in self._kept])
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        rows = SparseRows(
            np.concatenate([k[0] for k in self._kept]),
            np.concatenate([k[1] for k in self._kept]).astype(np.float64),
            offsets,
            self.n_features_in_,
        )
        return rows, np.concatenate([k[3] for k in self._kept])

    def _dual_start(self, rows, y, C, kind, bias):
        """The dual variables (kept ones from the last solution; new rows at 0, or at
        C/1000 on both sides for the log loss), the diagonal ``qd`` and ``y alpha``.

        ``C = 1/(lam n)`` shrinks as rows are added: the kept variables are scaled to the
        new bound (the log loss's pairs must sum to C, the hinge's stay within it), or the
        solver, which moves each pair along its sum, converged to another optimum."""
        n = len(y)
        sq = rows.sq_norms() + bias * bias
        old = len(self._alpha) // (2 if kind == dual.LOG else 1)
        if kind == dual.LOG:
            alpha = np.empty(2 * n)
            pairs = self._alpha.reshape(old, 2)
            alpha[: 2 * old] = (pairs * (C / pairs.sum(axis=1, keepdims=True))).ravel()
            alpha[2 * old :: 2] = min(1e-3 * C, 1e-8)
            alpha[2 * old + 1 :: 2] = C - alpha[2 * old :: 2]
            return alpha, sq, alpha[::2] * y
        alpha = np.zeros(n)
        # (_C: the bound of the last solve; a model pickled before it was kept: the old n's)
        last_C = getattr(self, "_C", 1.0 / (float(self.lam) * max(old, 1)))
        alpha[:old] = self._alpha * (C / last_C if kind == dual.HINGE and old else 1.0)
        return alpha, sq + (0.5 / C if kind == dual.SQUARED_HINGE else 0.0), alpha * y

    def _solve(self, callback: Callable[[int, dict], object] | None = None) -> None:
        """Dual coordinate descent over every row kept, from the last solution, until the
        gap is below ``tol`` or ``max_iter`` passes."""
        self.check_params()
        rows, y = self._stacked()
        indices, values, offsets = rows.indices, rows.values, rows.offsets
        n = len(y)
        C = 1.0 / (float(self.lam) * n)
        bias, bias_index, kind = float(self.fit_intercept), self.n_features_in_, LOSSES[self.loss]
        alpha, qd, coef = self._dual_start(rows, y, C, kind, bias)
        w = np.zeros(self.n_features_in_ + 1)  # w = sum_i alpha_i y_i x_i
        np.add.at(w, indices, np.repeat(coef, np.diff(offsets)) * values)
        w[bias_index] = bias * coef.sum()
        rng = np.random.default_rng(self.seed)
        inner_eps = 1e-2  # the log loss's Newton tolerance, tightened as passes get cheap
        self.converged_ = False
        for it in range(1, int(self.max_iter) + 1):
            order = rng.permutation(n)
            if kind == dual.LOG:
                gap, newton = dual._log_pass(
                    indices, values, offsets, y, order, C, qd, alpha, w, bias, bias_index, inner_eps
                )
                if newton <= n // 10:
                    inner_eps = max(min(1e-8, float(self.tol)), 0.1 * inner_eps)
            else:
                hi, lo = dual._svm_pass(
                    indices, values, offsets, y, order, C, kind, qd, alpha, w, bias, bias_index
                )
                gap = hi - lo
            self.n_iter_ = it
            if callback is not None:
                callback(it, {"n": n, "gap": float(gap)})
            if gap < self.tol:
                self.converged_ = True
                break
        self._alpha, self._C, self.w_, self._pending = alpha, C, w, False
        self.last_stats_ = {"n": n, "passes": self.n_iter_, "converged": self.converged_}
        self._refuse_diverged()
        if not self.converged_:  # as liblinear and scikit-learn say it: not exact
            import warnings

            warnings.warn(
                f"dcd stopped after {self.n_iter_} passes with its duality gap {gap:.3g} "
                f"above tol {self.tol:g}: the solution is not the exact one (raise max_iter "
                "or tol; a larger lambda converges sooner)",
                UserWarning,
                stacklevel=2,
            )

    def settle(self) -> None:
        self._ready()  # (the solve checks what it solved)

    def diverged(self) -> str | None:
        # rows given and not yet solved have no weights to check: their solve checks them
        # (asking for the weights here solved the whole problem again after each
        # partial_fit block, and a one-vs-rest of it after each block and class)
        return None if getattr(self, "_pending", False) else super().diverged()

    def _ready(self) -> None:
        if getattr(self, "_pending", False):
            self._solve()

    def _converged(self) -> bool:
        # a pass keeps the rows it is given once more (the same solution, N times the
        # memory): a loop of epochs over this learner (OneVsRest's: 5 by default, which
        # kept 15,000 rows for 3,000) stops after one
        return True

    # -- the model -------------------------------------------------------------------------
    @property
    def coef_(self) -> np.ndarray:
        self._ready()
        return self.w_[: self.n_features_in_]

    @property
    def intercept_(self) -> float:
        self._ready()
        return float(self.w_[self.n_features_in_])

    def saved_parts(self) -> tuple[dict, dict]:
        self._ready()
        return super().saved_parts()

    def state_arrays(self) -> dict:
        # what a OneVsRest saves of its binary learners: the kept rows solved first (read
        # unsolved, a one-vs-rest model of dcd learners was saved with every weight 0)
        self._ready()
        return super().state_arrays()

    def state_scalars(self) -> dict:
        self._ready()
        return super().state_scalars()

    def _scores(self, rows: SparseRows) -> np.ndarray:
        return csr_dot(self.coef_, rows.indices, rows.values, rows.offsets) + self.intercept_

    def objective(self, X: Any, y: Any) -> float:
        """The primal objective minimized (the class docstring), on ``(X, y)``."""
        rows = self._rows(X, reset=False)
        margins = self._encode(self._targets(y, len(rows))) * self._scores(rows)
        if self.loss == "log":
            loss = np.logaddexp(0.0, -margins)
        else:
            loss = np.maximum(0.0, 1.0 - margins) ** (2 if self.loss == "squared_hinge" else 1)
        w, b = self.coef_, self.intercept_
        return 0.5 * float(self.lam) * (float(w @ w) + b * b) + float(loss.mean())
