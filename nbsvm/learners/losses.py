"""Every loss, defined once: its value and derivative as one compiled function that the numba
kernels call (:mod:`nbsvm.learners.kernels.losses`) and the Python objects of :data:`LOSSES`
wrap (as scikit-learn's ``_sgd_fast`` defines a loss once, and fastText's ``loss.cc`` keeps a
loss's forward pass and gradient together). Beside the binary ones, their multi-class forms
(softmax, Crammer-Singer hinge) and the passive-aggressive step of the hinge. This module
holds their names, codes and registry, and imports without numba: a small job never loads
it (:mod:`nbsvm._small_jobs`).

Binary losses are functions of the margin ``z = y * p`` (y in {-1, +1}); ``squared`` of the
residual ``p - y`` (regression). Each has a registry name and an integer code the kernels
switch on (``loss_dloss``). ``tests/naive.py`` holds plain references they are checked
against, with finite differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.config import CLASSIFICATION_LOSSES, MULTICLASS_LOSS_NAMES
from nbsvm.errors import NBSVMError
from nbsvm.learners.kernels.loss_codes import (
    HINGE,
    LOG,
    MODIFIED_HUBER,
    MULTICLASS_HINGE,
    RULE_PA,
    RULE_PA1,
    RULE_PA2,
    SOFTMAX,
    SQUARED,
    SQUARED_HINGE,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


# -- binary and regression losses: (loss, dloss/dp) of a score p for a target y --------------


@dataclass(frozen=True)
class Loss:
    """A loss by name: its kernel code, whether it gives probabilities, and its value and
    derivative as plain functions of ``(p, y)`` (the compiled definition above)."""

    name: str
    code: int
    has_proba: bool

    def loss(self, p: float, y: float) -> float:
        from nbsvm.learners.kernels.losses import loss_dloss

        return float(loss_dloss(self.code, float(p), float(y))[0])

    def dloss(self, p: float, y: float) -> float:
        """The derivative with respect to ``p``."""
        from nbsvm.learners.kernels.losses import loss_dloss

        return float(loss_dloss(self.code, float(p), float(y))[1])


LOSSES = {
    "hinge": Loss("hinge", HINGE, False),
    "log": Loss("log", LOG, True),
    "squared_hinge": Loss("squared_hinge", SQUARED_HINGE, False),
    "modified_huber": Loss("modified_huber", MODIFIED_HUBER, True),
    "squared": Loss("squared", SQUARED, False),
}

# Losses for margins (binary labels: config.CLASSIFICATION_LOSSES, the names the command line
# takes) and for real targets (regression).
REGRESSION_LOSSES = ("squared",)


def resolve_loss(name: str) -> Loss:
    try:
        return LOSSES[name]
    except (KeyError, TypeError):
        raise NBSVMError(f"unknown loss {name!r}; allowed: {', '.join(LOSSES)}") from None


# Losses of K scores at once (one per class) and the true class: the outputs are trained
# together, not one against the rest. Softmax: the multinomial log loss
# ``log sum_j exp(p_j) - p_y``; multiclass hinge (Crammer & Singer 2001):
# ``max(0, 1 + max_{j != y} p_j - p_y)``.
MULTICLASS_LOSSES = dict(zip(MULTICLASS_LOSS_NAMES, (SOFTMAX, MULTICLASS_HINGE), strict=True))


def multiclass_loss(name: str, scores: ArrayLike, target: ArrayLike) -> np.ndarray:
    """Per-row loss of ``scores`` (n, K) for true output indices ``target`` (n,)."""
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    target = np.ascontiguousarray(target, dtype=np.int64)
    from nbsvm.learners.kernels.losses import _multiclass_losses

    return _multiclass_losses(MULTICLASS_LOSSES[name], scores, target)


# The passive-aggressive form of the hinge (Crammer et al. 2006): the step that makes a
# violated hinge ``loss`` zero along a direction of squared norm ``norm2``; PA-I clips it at
# ``C``, PA-II softens it by ``1 / (2C)``. PA, MIRA and the multi-label hinge take it.
PA_RULES = {"pa": RULE_PA, "pa-i": RULE_PA1, "pa-ii": RULE_PA2}


def check_loss(name: object) -> None:
    """Raise unless ``name`` is a classification loss (margin or multi-class): what a text
    classifier trains with (the regression loss ``squared`` is for ``nbsvm learn``)."""
    if name not in MULTICLASS_LOSSES and name not in CLASSIFICATION_LOSSES:
        raise NBSVMError(
            f"unknown loss {name!r}; allowed: "
            f"{', '.join([*CLASSIFICATION_LOSSES, *MULTICLASS_LOSSES])}"
        )
