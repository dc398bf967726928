"""Passive-aggressive learning (Crammer, Dekel, Keshet, Shalev-Shwartz & Singer, "Online
Passive-Aggressive Algorithms", JMLR 2006): binary PA / PA-I / PA-II and multi-class MIRA,
both predicting with averaged weights by default.

See ``../shared/references/mira-classification-clojure.md``. Labels are any strings. The
weights are a dense ``(n_classes, n_features)`` float64 array (one row for binary PA), so
memory is ``8 * n_classes * n_features`` bytes, twice that with averaging (the average's
accumulator). With a hashed feature space ``n_features = 2**n_bits``: 4 classes over 2**18
buckets take 8 MiB, 16 MiB averaged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from nbsvm._params import store_params
from nbsvm.errors import NBSVMError
from nbsvm.learners.kernels import multi as K
from nbsvm.learners.losses import PA_RULES
from nbsvm.learners.multiclass import LinearOutputs, check_positive, choose

# step rules: unclipped, clipped at C (PA-I), softened by 1/(2C) (PA-II)
VARIANTS = PA_RULES  # the hinge's passive-aggressive steps (nbsvm.learners.losses)
# MIRA's choice of the rival class: the most violating one, or the predicted one on errors
UPDATES = {"max-loss": False, "prediction": True}
# named label losses: (true, predicted) -> cost
LABEL_LOSSES = {"zero_one": lambda true, predicted: float(true != predicted)}


class PassiveAggressive(LinearOutputs):
    """Binary passive-aggressive classifier (Crammer et al. 2006, PA / PA-I / PA-II).

    On an example with hinge loss ``l = max(0, 1 - y (w.x + b)) > 0``:
    ``w += tau y x``, ``b += tau y`` with ``tau = l / ||x||^2`` (PA), ``min(C, tau)``
    (PA-I) or ``l / (||x||^2 + 1/(2C))`` (PA-II); ``||x||^2`` counts the bias input 1.

    Parameters
    ----------
    variant : {'pa', 'pa-i', 'pa-ii'}
    C : float
        Aggressiveness of PA-I / PA-II (> 0).
    fit_intercept : bool
        Learn a bias.
    average : bool
        Predict with the average of all iterates (default) or the last one.
    epochs, seed : int
        Passes over the data and the seed of their shuffles.
    dtype : {'float64', 'float32'}
        Storage of the weights (and of the average's accumulator); each step computes in
        float64.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.5]])
    >>> m = PassiveAggressive(epochs=5).fit(X, ["pos", "neg", "pos"])
    >>> m.predict(X).tolist()
    ['pos', 'neg', 'pos']
    """

    variant: str  # parameters (stored by store_params, declared for mypy)
    C: float
    task = "binary"

    def __init__(
        self,
        variant="pa-i",
        C=1.0,
        fit_intercept=True,
        average=True,
        epochs=5,
        seed=0,
        dtype="float64",
    ):
        store_params(self, locals())

    def check_params(self) -> None:
        choose("variant", self.variant, VARIANTS)
        check_positive("C", self.C)

    def _pass(self, rows, y, order):
        self.check_params()
        Y = np.where(y > 0, 1, -1).astype(np.int8).reshape(-1, 1)
        return self._epoch(
            K._per_label_epoch,
            rows,
            Y,
            order,
            VARIANTS[self.variant],
            float(self.C),
            0.0,
            K.SCHED_CONSTANT,
            1.0,
            bool(self.fit_intercept),
        )


class MIRA(LinearOutputs):
    """Multi-class MIRA / passive-aggressive (Crammer et al. 2006), closed form for k = 1.

    Per example with true class ``y*`` and rival ``r``: if
    ``loss = label_loss(y*, r) - (s_y* - s_r) > 0``, then ``tau = loss / (2 ||x||^2)``
    (``||x||^2`` counting the bias input 1), ``w_y* += tau x`` and ``w_r -= tau x``; PA-I
    clips tau at ``C``, PA-II uses ``loss / (2 ||x||^2 + 1/(2C))``. Training stops after a
    pass without mistakes.

    Parameters
    ----------
    label_loss : str, dict, array or callable
        Cost of predicting ``r`` for ``y*`` (the margin to demand): ``'zero_one'``, a dict
        ``{(true, predicted): cost}`` or ``{true: {predicted: cost}}`` (pairs left out cost
        1), a ``(n_classes, n_classes)`` array in the order of the sorted classes, or a
        callable ``(true, predicted) -> cost``. Costs are finite and >= 0.
    variant : {'pa', 'pa-i', 'pa-ii'}
    C : float
        Aggressiveness of PA-I / PA-II (> 0).
    update : {'max-loss', 'prediction'}
        Rival: the class with the largest ``s_r + label_loss(y*, r)``, updating whenever the
        loss is positive (default; PA's max-loss update), or the best-scoring wrong class,
        updating only when it outscores ``y*`` (the prediction-based MIRA of the reference).
    fit_intercept, average, seed, dtype
        As in :class:`PassiveAggressive`, with a bias per class (averaging is Daume's
        trick).
    epochs : int
        At most this many passes (fewer once a pass makes no mistake).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.eye(3)
    >>> m = MIRA(epochs=10).fit(X, ["a", "b", "c"])
    >>> m.predict(X).tolist(), len(m.history_) < 10
    (['a', 'b', 'c'], True)
    """

    variant: str  # parameters (stored by store_params, declared for mypy)
    update: str
    C: float
    task = "multiclass"
    label_loss: Any  # a parameter (set by store_params)

    def __init__(
        self,
        label_loss="zero_one",
        variant="pa",
        C=1.0,
        update="max-loss",
        fit_intercept=True,
        average=True,
        epochs=10,
        seed=0,
        dtype="float64",
    ):
        store_params(self, locals())

    def check_params(self) -> None:
        choose("variant", self.variant, VARIANTS)
        choose("update", self.update, UPDATES)
        check_positive("C", self.C)

    def _init_state(self, n_features, n_outputs):
        super()._init_state(n_features, n_outputs)
        self.cost_ = cost_matrix(self.label_loss, self.classes_)

    def _pass(self, rows, y, order):
        self.check_params()
        return self._epoch(
            K._mira_epoch,
            rows,
            y,
            order,
            VARIANTS[self.variant],
            float(self.C),
            bool(self.fit_intercept),
            UPDATES[self.update],
            before=(self.cost_,),
        )

    def _converged(self):
        return self.last_stats_["mistakes"] == 0

    def save(self, path: str | os.PathLike[str]) -> None:
        # the model file's JSON header holds the parameters: a callable, tuple-keyed dict or
        # array label loss is written as the resolved cost matrix (same training behaviour)
        label_loss = self.label_loss
        if not isinstance(label_loss, str) and hasattr(self, "cost_"):
            self.label_loss = self.cost_.tolist()
        try:
            super().save(path)
        finally:
            self.label_loss = label_loss


def cost_matrix(label_loss: Any, classes: Sequence[Any]) -> np.ndarray:
    """``cost[i, j]``: the label loss of predicting ``classes[j]`` for ``classes[i]``.

    Examples
    --------
    >>> cost_matrix({("a", "b"): 2.0}, ["a", "b"]).tolist()
    [[0.0, 2.0], [1.0, 0.0]]
    >>> cost_matrix("hamming", ["a", "b"])
    Traceback (most recent call last):
    ...
    nbsvm.errors.NBSVMError: unknown label_loss 'hamming'; allowed: zero_one
    """
    n = len(classes)
    if isinstance(label_loss, str):
        label_loss = choose("label_loss", label_loss, LABEL_LOSSES)
    if callable(label_loss):
        cost = np.array([[label_loss(t, p) for p in classes] for t in classes], dtype=float)
    elif isinstance(label_loss, dict):
        cost = 1.0 - np.eye(n)
        index = {str(c): i for i, c in enumerate(classes)}  # classes match by name
        pairs = (
            [(t, p, v) for t, row in label_loss.items() for p, v in row.items()]
            if all(isinstance(v, dict) for v in label_loss.values())
            else [
                (*key, v)
                for key, v in label_loss.items()
                if isinstance(key, tuple) and len(key) == 2 or _bad_key(key)
            ]
        )
        for true, predicted, value in pairs:
            if str(true) not in index or str(predicted) not in index:
                raise NBSVMError(
                    f"label_loss names unknown class pair ({true!r}, "
                    f"{predicted!r}); classes: {', '.join(map(str, classes))}"
                )
            cost[index[str(true)], index[str(predicted)]] = value
    else:
        cost = np.array(label_loss, dtype=float)
        if cost.shape != (n, n):
            raise NBSVMError(
                f"label_loss must be a {n}x{n} cost matrix for classes "
                f"{', '.join(map(str, classes))}; got shape {cost.shape}"
            )
    if not np.all(np.isfinite(cost)) or np.any(cost < 0):
        raise NBSVMError("label_loss costs must be finite and >= 0")
    return np.ascontiguousarray(cost)


def _bad_key(key):
    raise NBSVMError(
        f"label_loss keys must be (true, predicted) pairs or class names mapping "
        f"to {{predicted: cost}} dicts; got {key!r}"
    )
