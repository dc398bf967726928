"""The shared online-learning backend: losses, schedules, penalties, kernels and learners
over sparse rows.

Everything but the registry is imported on first use (``from nbsvm.learners import MIRA``),
so that the NBSVM command line does not pay for modules it does not need.
"""

from nbsvm._lazy import lazy_exports
from nbsvm.learners.registry import ALGORITHMS

# name -> the module it lives in: every learner of the registry, and the rest of the API
_EXPORTS = {
    **{a.cls: a.module_path for a in ALGORITHMS.values()},
    "LOSSES": "nbsvm.learners.losses",
    "resolve_loss": "nbsvm.learners.losses",
    "LinearSGD": "nbsvm.learners.sgd",
    "OPTIMIZERS": "nbsvm.learners.sgd",
    "OnlineLearner": "nbsvm.learners.base",
    "SparseRows": "nbsvm.data.rows",
    "as_rows": "nbsvm.data.rows",
    "make_learner": "nbsvm.learners.registry",
    "resolve": "nbsvm.learners.registry",
}

__all__ = ["ALGORITHMS", *_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
