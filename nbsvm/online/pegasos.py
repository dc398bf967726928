"""Pegasos: primal estimated sub-gradient solver for the linear SVM.

Shalev-Shwartz, Singer & Srebro (ICML 2007); see
``../shared/references/pegasos-online-learning-clojure.md``. Minimizes
``lam/2 ||w||^2 + mean(max(0, 1 - y w.x))`` with steps ``1/(lam t)`` and projection onto the
ball of radius ``1/sqrt(lam)``. No bias term (as in the paper); append a constant feature
for one.
"""
from __future__ import annotations

import numpy as np

from ..errors import NBSVMError
from . import _kernels
from .rows import csr_dot


class Pegasos:
    """Binary linear SVM trained by Pegasos on CSR rows with explicit values.

    Parameters
    ----------
    n_features : int
    lam : float
        Regularization strength (lambda > 0).
    epochs : int
    seed : int
        Seeds the per-epoch shuffles.

    Examples
    --------
    >>> import numpy as np
    >>> indices = np.array([0, 1], np.int64); values = np.array([1.0, 1.0])
    >>> offsets = np.array([0, 1, 2]); y = np.array([1.0, -1.0])
    >>> m = Pegasos(2, lam=0.5, epochs=1).fit(indices, values, offsets, y)
    >>> m.predict(indices, values, offsets).tolist()
    [1.0, -1.0]
    """

    def __init__(self, n_features, lam=1e-4, epochs=10, seed=0):
        self.n_features = n_features
        self.lam = lam
        self.epochs = epochs
        self.seed = seed

    def _start(self):
        if not (np.isfinite(self.lam) and self.lam > 0):
            raise NBSVMError(f"lambda must be > 0 for Pegasos, got {self.lam!r}")
        self.v_ = np.zeros(self.n_features)
        self.state_ = np.array([1.0, 0.0, 0.0, 0.0])
        self.rng_ = np.random.default_rng(self.seed)

    def partial_fit(self, indices, values, offsets, y, order=None) -> "Pegasos":
        """One pass over the rows (in ``order``, default as given)."""
        if not hasattr(self, "v_"):
            self._start()
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_features):
            raise NBSVMError(f"feature indices must be in [0, {self.n_features})")
        y = np.ascontiguousarray(y, dtype=np.float64)
        if not np.all(np.isin(y, (-1.0, 1.0))):
            raise NBSVMError("Pegasos labels must be -1 or +1")
        order = np.arange(len(y)) if order is None else np.asarray(order, dtype=np.int64)
        self.last_loss_ = _kernels._pegasos_epoch(
            indices, np.ascontiguousarray(values, dtype=np.float64),
            np.ascontiguousarray(offsets, dtype=np.int64), y, order, self.v_, self.state_,
            float(self.lam)) / max(1, len(order))
        return self

    def fit(self, indices, values, offsets, y) -> "Pegasos":
        self._start()
        for _ in range(self.epochs):
            self.partial_fit(indices, values, offsets, y, self.rng_.permutation(len(y)))
        return self

    @property
    def coef_(self) -> np.ndarray:
        return self.v_ * self.state_[0]

    def decision_function(self, indices, values, offsets) -> np.ndarray:
        return csr_dot(self.coef_, indices, values, offsets)

    def predict(self, indices, values, offsets) -> np.ndarray:
        return np.where(self.decision_function(indices, values, offsets) >= 0, 1.0, -1.0)

    def objective(self, indices, values, offsets, y) -> float:
        """The primal SVM objective ``lam/2 ||w||^2 + mean hinge``."""
        margins = y * self.decision_function(indices, values, offsets)
        w = self.coef_
        return 0.5 * self.lam * float(w @ w) + float(np.maximum(0.0, 1.0 - margins).mean())
