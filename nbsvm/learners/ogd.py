"""Online gradient descent for regression (Zinkevich 2003), with steps ``eta / sqrt(t)``
and projection onto an L2 ball of radius ``radius``, as in
``../shared/references/online-convex-optimization-haskell.md`` (square loss, gradient
``(w.x - y) x``, no intercept; the note's lambda is ``radius``)."""

from __future__ import annotations

import numpy as np

from nbsvm._params import store_params
from nbsvm.data.rows import SparseRows, csr_dot
from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.kernels import projected


class OGDRegressor(OnlineLearner):
    """Projected online gradient descent on sparse rows (task ``"regression"``).

    Parameters
    ----------
    eta : float
        Step scale: step ``t`` (counted from 1 over all passes) is ``eta / sqrt(t)``.
    radius : float
        Radius of the L2 ball the weights are projected on after every step.
    epochs : int
        Passes made by :meth:`fit`.
    seed : int
        Seeds the per-pass shuffles of :meth:`fit`.

    After each pass, ``before_`` and ``after_`` hold the predictions for each visited
    example just before and just after its update (progressive validation, and the
    note's "prediction made right after each update"); ``last_stats_["loss"]`` sums the
    squared errors of the before-update predictions.

    Examples
    --------
    >>> import numpy as np
    >>> m = OGDRegressor(eta=0.5, radius=10.0)
    >>> for _ in range(50):
    ...     _ = m.partial_fit(np.array([[1.0, 0.0]]), [2.0])
    >>> round(float(m.coef_[0]), 2), m.predict(np.array([[0.5, 1.0]])).round(2).tolist()
    (2.0, [1.0])
    """

    task = "regression"
    eta: float  # parameters (stored by store_params, declared for mypy)
    radius: float
    # the last pass's predictions are diagnostics, not part of the model
    _transient = OnlineLearner._transient + ("before_", "after_")

    def __init__(self, eta=1.0, radius=1.0, epochs=1, seed=0):
        store_params(self, locals())

    def _init_state(self, n_features, n_outputs):
        self.v_ = np.zeros(n_features)  # w = s * v (projection rescales s)
        self.state_ = np.array([1.0, 0.0, 0.0])  # s, ||v||^2, t

    def check_params(self) -> None:
        for name in ("eta", "radius"):
            value = getattr(self, name)
            try:
                ok = bool(np.isfinite(float(value)) and float(value) > 0)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise NBSVMError(f"{name} must be a number > 0, got {value!r}")

    def _pass(self, rows: SparseRows, y, order) -> dict:
        self.check_params()
        self.before_ = np.empty(len(order))
        self.after_ = np.empty(len(order))
        projected._ogd_epoch(
            rows.indices,
            rows.values,
            rows.offsets,
            y,
            np.ascontiguousarray(order, dtype=np.int64),
            self.v_,
            self.state_,
            float(self.eta),
            float(self.radius),
            self.before_,
            self.after_,
        )
        err = self.before_ - y[order]
        return {"n": len(order), "loss": float(err @ err)}

    def _scores(self, rows: SparseRows) -> np.ndarray:
        return csr_dot(self.coef_, rows.indices, rows.values, rows.offsets)

    @property
    def coef_(self) -> np.ndarray:
        return self.v_ * self.state_[0]
