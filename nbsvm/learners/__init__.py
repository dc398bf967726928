"""The shared online-learning backend: losses, schedules, penalties, kernels and learners
over sparse rows.

The learners are imported on first use (``from nbsvm.learners import MIRA``), so that the
NBSVM command line does not pay for modules it does not need.
"""

from nbsvm.learners.losses import LOSSES, resolve_loss
from nbsvm.learners.sgd import OPTIMIZERS, LinearSGD

_LAZY = {
    "OnlineLearner": "base",
    "SparseRows": "rows",
    "as_rows": "rows",
    "SGDClassifier": "linear",
    "SGDRegressor": "linear",
    "Pegasos": "pegasos",
    "PassiveAggressive": "pa",
    "MIRA": "pa",
    "MulticlassHinge": "multiclass",
    "OneVsRest": "multiclass",
    "MultilabelHinge": "multilabel",
    "OGDRegressor": "ogd",
    "make_learner": "registry",
    "resolve": "registry",
}

__all__ = ["LOSSES", "resolve_loss", "LinearSGD", "OPTIMIZERS", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
