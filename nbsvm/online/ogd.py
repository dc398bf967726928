"""Online gradient descent for regression (Zinkevich 2003), with steps ``eta / sqrt(t)``
and projection onto an L2 ball of radius ``radius``, as in
``../shared/references/online-convex-optimization-haskell.md`` (square loss, gradient
``(w.x - y) x``, no intercept)."""
from __future__ import annotations

import numpy as np

from ..errors import NBSVMError
from . import _kernels


class OGDRegressor:
    """Projected online gradient descent on CSR rows with explicit values.

    After :meth:`partial_fit`, ``before_`` and ``after_`` hold the predictions for each
    visited example just before and just after its update (progressive validation and
    the note's "prediction made right after each update").

    Examples
    --------
    >>> import numpy as np
    >>> m = OGDRegressor(1, eta=0.5, radius=10.0)
    >>> for _ in range(50):
    ...     _ = m.partial_fit(np.array([0]), np.array([1.0]), np.array([0, 1]), np.array([2.0]))
    >>> round(float(m.coef_[0]), 2)
    2.0
    """

    def __init__(self, n_features, eta=1.0, radius=1.0):
        self.n_features = n_features
        self.eta = eta
        self.radius = radius

    def partial_fit(self, indices, values, offsets, y, order=None) -> "OGDRegressor":
        if not (np.isfinite(self.eta) and self.eta > 0):
            raise NBSVMError(f"eta must be > 0, got {self.eta!r}")
        if not (np.isfinite(self.radius) and self.radius > 0):
            raise NBSVMError(f"radius must be > 0, got {self.radius!r}")
        if not hasattr(self, "v_"):
            self.v_ = np.zeros(self.n_features)
            self.state_ = np.array([1.0, 0.0, 0.0])
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_features):
            raise NBSVMError(f"feature indices must be in [0, {self.n_features})")
        y = np.ascontiguousarray(y, dtype=np.float64)
        order = np.arange(len(y)) if order is None else np.asarray(order, dtype=np.int64)
        self.before_ = np.empty(len(order))
        self.after_ = np.empty(len(order))
        _kernels._ogd_epoch(indices, np.ascontiguousarray(values, dtype=np.float64),
                            np.ascontiguousarray(offsets, dtype=np.int64), y, order, self.v_,
                            self.state_, float(self.eta), float(self.radius), self.before_,
                            self.after_)
        return self

    @property
    def coef_(self) -> np.ndarray:
        return self.v_ * self.state_[0]
