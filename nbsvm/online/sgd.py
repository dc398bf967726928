"""Linear SGD and AdaGrad over lookup-valued sparse rows, one weight vector per output.

This is the state and the epoch driver; the arithmetic lives in :mod:`._kernels`.
"""
from __future__ import annotations

import numpy as np

from ..config import WEIGHT_DTYPE
from ..errors import NBSVMError
from . import _kernels
from .losses import resolve_loss

OPTIMIZERS = ("sgd", "adagrad")


class LinearSGD:
    """Binary (``n_outputs = 1``) or one-vs-rest (``n_outputs = K``) linear learner.

    Parameters
    ----------
    n_features : int
        Length of each weight vector (``2**n_bits``).
    n_outputs : int
        Weight vectors; output ``k`` treats label code ``positive[k]`` as +1.
    loss : str
        A name from :data:`nbsvm.online.LOSSES`.
    optimizer : {'sgd', 'adagrad'}
        SGD with Bottou's schedule ``eta0 / (1 + l2*eta0*t)`` and the scaled weight vector,
        or AdaGrad with per-coordinate steps.
    eta0, l2 : float
        Initial step size and L2 strength (lambda).
    bias_rate : float or None
        Bias step relative to the weights' (default 0.01 for SGD as in Bottou's svmsgd, 1 for
        AdaGrad, whose per-coordinate steps already adapt).

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([0, 1, 1, 2], np.int32); offsets = np.array([0, 2, 4])
    >>> codes = np.array([1, 0], np.int32); ones = np.ones(3, np.float32)
    >>> m = LinearSGD(3, loss="hinge", eta0=0.5, l2=0.0)
    >>> _ = m.epoch(ids, offsets, codes, np.array([0, 1]), [ones], positive=[1])
    >>> m.coef()[0].round(2).tolist()
    [0.5, 0.0, -0.5]
    """

    def __init__(self, n_features, n_outputs=1, loss="log", optimizer="sgd", eta0=0.05,
                 l2=1e-6, bias_rate=None, eps=1e-8):
        self.n_features = n_features
        self.n_outputs = n_outputs
        self.loss = loss
        self.optimizer = optimizer
        self.eta0 = eta0
        self.l2 = l2
        self.bias_rate = bias_rate
        self.eps = eps
        self._validate()
        shape = (n_outputs, n_features)
        self.v_ = np.zeros(shape, dtype=WEIGHT_DTYPE)
        if optimizer == "sgd":
            self.state_ = np.zeros((n_outputs, 3))
            self.state_[:, 0] = 1.0          # scale s
        else:
            self.sq_ = np.zeros(shape, dtype=np.float32)
            self.state_ = np.zeros((n_outputs, 3))

    def _validate(self):
        self._loss = resolve_loss(self.loss)
        if self.optimizer not in OPTIMIZERS:
            raise NBSVMError(f"unknown optimizer {self.optimizer!r}; allowed: {', '.join(OPTIMIZERS)}")
        if not (np.isfinite(self.eta0) and self.eta0 > 0):
            raise NBSVMError(f"eta0 must be a positive number, got {self.eta0!r}")
        if not (np.isfinite(self.l2) and self.l2 >= 0):
            raise NBSVMError(f"lambda (l2) must be >= 0, got {self.l2!r}")
        if self.optimizer == "sgd" and self.l2 * self.eta0 >= 1:
            raise NBSVMError(f"lambda * eta0 must be < 1 for SGD (got {self.l2 * self.eta0:g}): "
                             "the first L2 step would flip the weights' sign")

    def epoch(self, ids, offsets, codes, order, tables, positive) -> float:
        """Run the examples ``order`` once; return their mean loss (before each update)."""
        total = 0.0
        rate = self.bias_rate if self.bias_rate is not None else \
            (0.01 if self.optimizer == "sgd" else 1.0)
        order = np.ascontiguousarray(order, dtype=np.int64)
        for k in range(self.n_outputs):
            table = tables[k]
            if self.optimizer == "sgd":
                total += _kernels._sgd_epoch(ids, offsets, codes, int(positive[k]), order, table,
                                             self.v_[k], self.state_[k], float(self.eta0),
                                             float(self.l2), float(rate), self._loss.code)
            else:
                total += _kernels._adagrad_epoch(ids, offsets, codes, int(positive[k]), order,
                                                 table, self.v_[k], self.sq_[k], self.state_[k],
                                                 float(self.eta0), float(self.l2), float(rate),
                                                 self._loss.code, float(self.eps))
        return total / max(1, len(order) * self.n_outputs)

    def coef(self) -> np.ndarray:
        """The weights ``w`` (shape ``(n_outputs, n_features)``), a view of the state.

        For SGD the L2 scale is folded into the stored vector first (``v /= s; s = 1``),
        so no second ``2**n_bits`` array is allocated.
        """
        if self.optimizer == "sgd":
            for k in range(self.n_outputs):
                if self.state_[k, 0] != 1.0:
                    self.v_[k] /= self.state_[k, 0]
                    self.state_[k, 0] = 1.0
        return self.v_

    def intercept(self) -> np.ndarray:
        return self.state_[:, 1 if self.optimizer == "sgd" else 0].copy()
