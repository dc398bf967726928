"""One registry for every string option of the backend: algorithms, losses, schedules,
penalties. The CLI and the Python API resolve names here, so an unknown name always gets
the same error listing what is allowed.

Learner classes are imported lazily (``module:Class``) so that importing the registry stays
cheap.
"""

from __future__ import annotations

import importlib

from nbsvm.errors import NBSVMError

# --algorithm name -> (module, class, fixed parameters)
ALGORITHMS = {
    "sgd": ("nbsvm.learners.linear", "SGDClassifier", {}),
    "sgd-regressor": ("nbsvm.learners.linear", "SGDRegressor", {}),
    "adagrad": ("nbsvm.learners.linear", "SGDClassifier", {"schedule": "adagrad"}),
    "pegasos": ("nbsvm.learners.pegasos", "Pegasos", {}),
    "pa": ("nbsvm.learners.pa", "PassiveAggressive", {}),
    "mira": ("nbsvm.learners.pa", "MIRA", {}),
    "multiclass-hinge": ("nbsvm.learners.multiclass", "MulticlassHinge", {}),
    "ovr": ("nbsvm.learners.multiclass", "OneVsRest", {}),
    "multilabel": ("nbsvm.learners.multilabel", "MultilabelHinge", {}),
    "ogd": ("nbsvm.learners.ogd", "OGDRegressor", {}),
}

# Class names that may appear in a saved learner file, and where they live.
LEARNER_MODULES = {cls: module for module, cls, _ in ALGORITHMS.values()}


def learner_class(name, path=None):
    """The learner class called ``name`` (as written in a model file's header)."""
    module = LEARNER_MODULES.get(name)
    if module is None:
        raise NBSVMError(
            f"unknown learner {name!r} in the model file; known: "
            f"{', '.join(sorted(LEARNER_MODULES))}",
            path=path,
        )
    return getattr(importlib.import_module(module), name)


def make_learner(algorithm: str, **params):
    """A learner for ``--algorithm NAME`` with ``params`` (the class's own parameter names)."""
    try:
        module, cls_name, fixed = ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        raise NBSVMError(
            f"unknown algorithm {algorithm!r}; allowed: {', '.join(ALGORITHMS)}"
        ) from None
    cls = getattr(importlib.import_module(module), cls_name)
    allowed = cls._param_names()
    unknown = [k for k in params if k not in allowed]
    if unknown:
        raise NBSVMError(
            f"--algorithm {algorithm} does not take {', '.join(unknown)}; it "
            f"takes: {', '.join(allowed)}"
        )
    clash = [k for k, v in fixed.items() if k in params and params[k] != v]
    if clash:
        raise NBSVMError(
            f"--algorithm {algorithm} fixes "
            + ", ".join(f"{k} = {fixed[k]!r}" for k in clash)
            + "; another value needs another algorithm (e.g. sgd --schedule ...)"
        )
    return cls(**{**params, **fixed})


def _table(kind: str) -> dict:
    if kind == "loss":
        from nbsvm.learners.losses import LOSSES

        return LOSSES
    if kind == "schedule":
        from nbsvm.learners.schedules import SCHEDULES

        return SCHEDULES
    if kind == "penalty":
        from nbsvm.learners.regularizers import PENALTIES

        return PENALTIES
    if kind == "algorithm":
        return ALGORITHMS
    raise ValueError(kind)


def resolve(kind: str, name):
    """The registered object for ``name`` among ``kind`` ('loss', 'schedule', 'penalty',
    'algorithm'); an :class:`NBSVMError` listing the allowed names otherwise."""
    table = _table(kind)
    if not isinstance(name, str) and name in table.values():
        return name  # already an object
    try:
        return table[name]
    except (KeyError, TypeError):
        raise NBSVMError(f"unknown {kind} {name!r}; allowed: {', '.join(table)}") from None


def names(kind: str) -> list[str]:
    return list(_table(kind))
