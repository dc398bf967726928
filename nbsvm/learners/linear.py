"""Linear models trained by stochastic gradient descent on sparse rows: binary
classification (:class:`SGDClassifier`) and regression (:class:`SGDRegressor`).

A learner is assembled from small parts chosen by name (see :mod:`.registry`): a loss
(:mod:`.losses`), a step-size schedule (:mod:`.schedules`) and a penalty
(:mod:`.regularizers`), plus an optional ball projection and weight averaging. The
minimized objective is ``lam2/2 ||w||^2 + lam1 ||w||_1 + mean loss(w.x + b, y)`` with
``(lam1, lam2)`` the penalty's split of ``lam`` (the bias ``b`` is not regularized).
The shared parameters, state and kernel calls are in :mod:`._linear_sgd`; the numba
kernels are in :mod:`.kernels.linear`.

References: Bottou (2012), "Stochastic gradient descent tricks"; Duchi, Hazan & Singer
(2011), AdaGrad; Tsuruoka, Tsujii & Ananiadou (2009) and Langford, Li & Zhang (2009) for
L1; Xu (2011) and Polyak & Juditsky (1992) for averaging.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbsvm._params import store_params
from nbsvm.compat import UnavailableMethod, available_if
from nbsvm.learners._linear_sgd import _LinearSGD
from nbsvm.learners.losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES

_PARAMS_DOC = """
    loss : str
        {losses}
    schedule : {{'optimal', 'constant', 'invsqrt', 'pegasos', 'adagrad'}}
        Step sizes (:mod:`nbsvm.learners.schedules`); ``t`` counts updates over all epochs.
        'optimal' is Bottou's ``eta0 / (1 + lam eta0 t)``; 'adagrad' is per coordinate.
    penalty : {{'l2', 'l1', 'elasticnet', 'none'}}
        Regularizer (:mod:`nbsvm.learners.regularizers`): all of ``lam`` on L2, on L1, split
        by ``l1_ratio``, or none.
    lam : float
        Regularization strength lambda (>= 0; > 0 for schedule 'pegasos').
    l1_ratio : float
        Share of ``lam`` on L1 for 'elasticnet' (in [0, 1]; default 0.15).
    l1_method : {{'cumulative', 'truncated'}}
        How L1 is applied lazily: Tsuruoka et al.'s cumulative penalty (as scikit-learn) or
        Langford et al.'s truncated gradient.
    eta0 : float, 'auto' or None
        Initial (or constant) step size, > 0; not used by 'pegasos'. With a global
        schedule ``eta0 * lam2 < 1`` is required. ``'auto'``: Bottou's calibration
        (:mod:`nbsvm.learners.eta0`) on a seeded sample of the first data, kept in
        ``eta0_``. {eta0_default}
    epochs : int
        Passes made by :meth:`fit`, each over a new seeded permutation.
    average : bool or int
        Predict with the average of the iterates (ASGD): True averages from the first
        update, an integer ``n`` from update ``n`` on, False not at all.
    fit_intercept : bool
        Learn an unregularized bias ``b``.
    bias_rate : float
        The bias step relative to the weights' ({bias_rate} by default{bias_why}).
    radius : float or None
        Project the weights onto the ball ``||w|| <= radius`` after every step (not with
        'adagrad'); None for no projection.
    eps : float
        AdaGrad's ``eps`` in ``eta0 / sqrt(G_i + eps)``.
    seed : int
        Seeds the per-epoch shuffles of :meth:`fit`."""


class SGDClassifier(_LinearSGD):
    __doc__ = (
        """Binary linear classifier trained by SGD (labels: any two strings; the
    second in sorted order is the positive class).

    Parameters
    ----------"""
        + _PARAMS_DOC.format(
            losses="'hinge' (SVM), 'log' (logistic regression), 'squared_hinge' or "
            "'modified_huber'.",
            bias_rate="0.01",
            bias_why=", Bottou's svmsgd; 1 gives scikit-learn's dense update",
            eta0_default="None (the default): ``'auto'`` with every schedule but\n"
            "        'pegasos'. Against a fixed 0.1 on 14 shapes of data\n"
            "        (results/learn_defaults.md) it is higher in 41 of 56 settings, median\n"
            "        +0.6 points, lower by at most 1.9 on text.",
        )
        + """

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.2], [0.1, 1.0]])
    >>> clf = SGDClassifier(loss="log", eta0=0.5, epochs=20).fit(X, ["a", "b", "a", "b"])
    >>> clf.predict(X).tolist()
    ['a', 'b', 'a', 'b']
    >>> clf.predict_proba(X[:1]).round(2).tolist()
    [[0.96, 0.04]]
    """
    )
    task = "binary"
    _losses = CLASSIFICATION_LOSSES

    def __init__(
        self,
        loss="hinge",
        schedule="optimal",
        penalty="l2",
        lam=1e-4,
        l1_ratio=0.15,
        l1_method="cumulative",
        eta0=None,
        epochs=5,
        average=False,
        fit_intercept=True,
        bias_rate=0.01,
        radius=None,
        eps=1e-8,
        seed=0,
    ):
        store_params(self, locals())

    def _has_proba(self):
        if self.loss not in ("log", "modified_huber"):
            raise UnavailableMethod(
                f"predict_proba needs loss 'log' or 'modified_huber', not {self.loss!r}"
            )

    @available_if(_has_proba)
    def predict_proba(self, X: Any) -> np.ndarray:
        """``(n, 2)`` class probabilities (columns in ``classes_`` order): the sigmoid of
        the score for 'log', ``(clip(score, -1, 1) + 1) / 2`` for 'modified_huber'
        (Zhang 2004). Only with these losses: with another, ``hasattr(model,
        'predict_proba')`` is False."""
        if self.loss == "log":
            p1 = 1.0 / (1.0 + np.exp(-np.clip(self.decision_function(X), -500, 500)))
        else:
            p1 = (np.clip(self.decision_function(X), -1.0, 1.0) + 1.0) / 2.0
        return np.column_stack([1.0 - p1, p1])


class SGDRegressor(_LinearSGD):
    __doc__ = (
        """Linear regression trained by SGD on real targets.

    Parameters
    ----------"""
        + _PARAMS_DOC.format(
            losses="'squared' (``(p - y)^2 / 2``).",
            bias_rate="1",
            bias_why="",
            eta0_default="0.01 by default.",
        )
        + """

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> reg = SGDRegressor(schedule="constant", eta0=0.1, lam=0.0, epochs=300).fit(
    ...     X, [1.0, -2.0, -1.0])
    >>> reg.predict(X).round(2).tolist()
    [1.0, -2.0, -1.0]
    """
    )
    task = "regression"
    _losses = REGRESSION_LOSSES

    def __init__(
        self,
        loss="squared",
        schedule="invsqrt",
        penalty="l2",
        lam=1e-4,
        l1_ratio=0.15,
        l1_method="cumulative",
        eta0=0.01,
        epochs=5,
        average=False,
        fit_intercept=True,
        bias_rate=1.0,
        radius=None,
        eps=1e-8,
        seed=0,
    ):
        store_params(self, locals())
