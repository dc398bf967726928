"""Multi-class passive-aggressive learning / MIRA (Crammer, Dekel, Keshet, Shalev-Shwartz &
Singer, JMLR 2006), with averaged weights for prediction.

See ``../shared/references/mira-classification-clojure.md``. Labels are any strings; the
weights are a dense ``(n_classes, n_features)`` array, so memory is
``2 * 8 * n_classes * n_features`` bytes (weights and the averaging accumulator).
"""
from __future__ import annotations

import numpy as np

from ..errors import NBSVMError
from . import _kernels
from .rows import csr_dot

VARIANTS = {"mira": 0, "pa-i": 1, "pa-ii": 2}


class MIRA:
    """Multi-class MIRA / PA on CSR rows with explicit values.

    Parameters
    ----------
    n_features : int
    variant : {'mira', 'pa-i', 'pa-ii'}
        Unclipped step, step clipped at ``C``, or softened by ``1/(2C)``.
    C : float
        Aggressiveness for PA-I / PA-II.
    epochs : int
        At most this many passes; training stops after a pass without mistakes.
    average : bool
        Predict with the averaged weights (default) or the last iterate.
    seed : int

    Examples
    --------
    >>> import numpy as np
    >>> indices = np.array([0, 1, 2]); values = np.ones(3); offsets = np.array([0, 1, 2, 3])
    >>> m = MIRA(3, epochs=5).fit(indices, values, offsets, ["a", "b", "c"])
    >>> m.predict(indices, values, offsets).tolist()
    ['a', 'b', 'c']
    """

    def __init__(self, n_features, variant="mira", C=1.0, epochs=10, average=True, seed=0):
        self.n_features = n_features
        self.variant = variant
        self.C = C
        self.epochs = epochs
        self.average = average
        self.seed = seed

    def fit(self, indices, values, offsets, labels) -> "MIRA":
        if self.variant not in VARIANTS:
            raise NBSVMError(f"unknown variant {self.variant!r}; allowed: {', '.join(VARIANTS)}")
        if not (np.isfinite(self.C) and self.C > 0):
            raise NBSVMError(f"C must be > 0, got {self.C!r}")
        labels = [str(label) for label in labels]
        self.classes_ = sorted(set(labels))
        if len(self.classes_) < 2:
            raise NBSVMError(f"need at least two classes, got {self.classes_}")
        index = {c: i for i, c in enumerate(self.classes_)}
        y = np.array([index[label] for label in labels], dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self.n_features):
            raise NBSVMError(f"feature indices must be in [0, {self.n_features})")
        values = np.ascontiguousarray(values, dtype=np.float64)
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.W_ = np.zeros((len(self.classes_), self.n_features))
        self.U_ = np.zeros_like(self.W_)
        self.state_ = np.array([1.0, 0.0, 0.0])
        self.mistakes_per_epoch_ = []
        rng = np.random.default_rng(self.seed)
        for _ in range(self.epochs):
            m = _kernels._mira_epoch(indices, values, offsets, y, rng.permutation(len(y)),
                                     self.W_, self.U_, self.state_, float(self.C),
                                     VARIANTS[self.variant])
            self.mistakes_per_epoch_.append(int(m))
            if m == 0:      # a pass without mistakes: the data are separated, stop
                break
        return self

    @property
    def coef_(self) -> np.ndarray:
        """The weights used to predict: averaged (``W - U / c``) or the last iterate."""
        return self.W_ - self.U_ / self.state_[0] if self.average else self.W_

    def decision_function(self, indices, values, offsets) -> np.ndarray:
        coef = self.coef_
        return np.stack([csr_dot(coef[k], indices, values, offsets)
                         for k in range(coef.shape[0])], axis=1)

    def predict(self, indices, values, offsets) -> np.ndarray:
        scores = self.decision_function(indices, values, offsets)
        return np.asarray(self.classes_, dtype=object)[np.argmax(scores, axis=1)]
