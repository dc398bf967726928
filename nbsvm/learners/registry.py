"""One registry for every string option of the backend: algorithms (learners), losses,
schedules, penalties. The CLI, the Python API, the lazy imports of :mod:`nbsvm.learners`,
NBSVM's ``--learner`` on text (:mod:`nbsvm.learners.reduction`) and model files resolve names
here, so an unknown name always gets the same error listing what is allowed.

Adding a learner is a class file (an :class:`~nbsvm.learners.base.OnlineLearner`, plus its
numba kernel if it needs one) and one line of :data:`ALGORITHMS` (docs/contributing.md walks
through one). Learner classes are imported lazily (their module and class name) so that
importing the registry stays cheap.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from nbsvm.learners.base import OnlineLearner


@dataclass(frozen=True)
class Algorithm:
    """A learner of the backend, as ``--algorithm NAME`` names it.

    ``module`` and ``cls``: where its class lives (a module of ``nbsvm.learners``, or a
    dotted path to one of your own); ``fixed``: the
    parameters the name fixes (``adagrad`` is ``SGDClassifier`` with the AdaGrad schedule).
    ``on_text``: also trains on NBSVM's features (``nbsvm train --learner NAME``), where
    ``lam`` names its parameter that takes NBSVM's L2 strength (None: it has none);
    ``shared``: its outputs share one feature vector per document (a native multi-class or
    multi-label learner), instead of one-vs-rest on each class's own NB ratios;
    ``one_class``: it predicts one class per document (no label sets); ``batch``: it keeps
    its rows and solves when its weights are needed (the trainer makes one pass)."""

    module: str
    cls: str
    fixed: dict = field(default_factory=dict)
    on_text: bool = False
    lam: str | None = None
    shared: bool = False
    one_class: bool = False
    batch: bool = False

    @property
    def module_path(self) -> str:
        return self.module if "." in self.module else f"nbsvm.learners.{self.module}"

    def load(self) -> type[OnlineLearner]:
        """The class (its module imported now)."""
        return getattr(importlib.import_module(self.module_path), self.cls)


# --algorithm name -> its learner (one line per learner)
ALGORITHMS = {
    "sgd": Algorithm("linear", "SGDClassifier"),
    "sgd-regressor": Algorithm("linear", "SGDRegressor"),
    "adagrad": Algorithm("linear", "SGDClassifier", {"schedule": "adagrad"}),
    "pegasos": Algorithm("pegasos", "Pegasos", on_text=True, lam="lam"),
    "pa": Algorithm("pa", "PassiveAggressive", on_text=True),
    "mira": Algorithm("pa", "MIRA", on_text=True, shared=True, one_class=True),
    "multiclass-hinge": Algorithm(
        "multiclass", "MulticlassHinge", on_text=True, lam="lam", shared=True, one_class=True
    ),
    "ovr": Algorithm("multiclass", "OneVsRest"),
    "multilabel": Algorithm("multilabel", "MultilabelHinge", on_text=True, lam="lam", shared=True),
    "ogd": Algorithm("ogd", "OGDRegressor"),
    "dcd": Algorithm("dcd", "DualCD", on_text=True, lam="lam", batch=True),
}

# the names NBSVM's --learner takes for the backend's learners
TEXT_LEARNERS = tuple(name for name, a in ALGORITHMS.items() if a.on_text)
# names of the built-in learner: its optimizer, or its one-vs-rest outputs (the default shape)
BUILT_IN = ("adagrad", "sgd", "ovr")


def check_learner(name: str | None) -> None:
    """Refuse a ``--learner`` that is neither the built-in learner nor a backend learner
    on text (here, numpy-free: the command line says so before importing the library)."""
    if name is not None and name not in TEXT_LEARNERS and name not in BUILT_IN:
        raise NBSVMError(
            f"unknown learner {name!r}; allowed: {', '.join(BUILT_IN)} (the "
            f"built-in NBSVM learner) or {', '.join(TEXT_LEARNERS)} (the backend's)"
        )


def learner_modules() -> dict[str, str]:
    """Class names that may appear in a saved learner file, and where they live."""
    return {a.cls: a.module_path for a in ALGORITHMS.values()}


def learner_class(name: str, path: str | None = None) -> type[OnlineLearner]:
    """The learner class called ``name`` (as written in a model file's header)."""
    modules = learner_modules()
    if name not in modules:
        raise NBSVMError(
            f"unknown learner {name!r} in the model file; known: {', '.join(sorted(modules))}",
            path=path,
        )
    return getattr(importlib.import_module(modules[name]), name)


def make_learner(algorithm: str, **params: Any) -> OnlineLearner:
    """A learner for ``--algorithm NAME`` with ``params`` (the class's own parameter names)."""
    try:
        entry = ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        raise NBSVMError(
            f"unknown algorithm {algorithm!r}; allowed: {', '.join(ALGORITHMS)}"
        ) from None
    cls, fixed = entry.load(), entry.fixed
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


def resolve(kind: str, name: Any) -> Any:
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
