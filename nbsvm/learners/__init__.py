"""The shared online-learning backend: losses, schedules, penalties, kernels and learners
over sparse rows.

The learners are imported on first use (``from nbsvm.learners import MIRA``), so that the
NBSVM command line does not pay for modules it does not need.
"""

from nbsvm.learners.losses import LOSSES, resolve_loss
from nbsvm.learners.registry import ALGORITHMS
from nbsvm.learners.sgd import OPTIMIZERS, LinearSGD

# name -> the module it lives in: every learner of the registry, and the rest of the API
_LAZY = {
    **{a.cls: a.module_path for a in ALGORITHMS.values()},
    "OnlineLearner": "nbsvm.learners.base",
    "SparseRows": "nbsvm.data.rows",
    "as_rows": "nbsvm.data.rows",
    "make_learner": "nbsvm.learners.registry",
    "resolve": "nbsvm.learners.registry",
}

__all__ = ["LOSSES", "resolve_loss", "LinearSGD", "OPTIMIZERS", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
