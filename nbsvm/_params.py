"""scikit-learn's parameter protocol for every nbsvm estimator (no sklearn import): the
parameters are the arguments of ``__init__``, which only stores them."""

from __future__ import annotations

import inspect
from typing import Any, Self

from nbsvm.errors import NBSVMError


class Params:
    """``get_params`` / ``set_params`` / ``repr`` over the arguments of ``__init__``."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {p: getattr(self, p) for p in self._param_names()}

    def set_params(self, **params: Any) -> Self:
        names = self._param_names()
        for k, v in params.items():
            if k not in names:
                raise NBSVMError(f"unknown parameter {k!r}; allowed: {', '.join(names)}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        """As scikit-learn prints estimators: the parameters that differ from their
        defaults (``NBSVMClassifier(ngrams=2)``; ``NBSVMClassifier()`` for the defaults)."""
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        args = ", ".join(
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if not _same(v, defaults.get(k, inspect.Parameter.empty))
        )
        return f"{type(self).__name__}({args})"


def _same(value, default) -> bool:
    """Whether a parameter holds its default: equal values (``1`` as ``1.0``, numpy
    scalars as Python numbers), but ``True`` is not ``1``; an array is never a default."""
    if value is default:
        return True
    if isinstance(value, bool) or isinstance(default, bool):
        return False
    try:
        return bool(value == default)
    except Exception:  # arrays and the like: shown
        return False


def store_params(estimator: Params, args: dict) -> None:
    """Set each parameter of ``estimator`` (an argument of its ``__init__``) as the
    attribute of its name, unchanged and in signature order: scikit-learn's rule that
    ``__init__`` only stores its parameters, written once. ``args`` is that ``__init__``'s
    ``locals()``, taken first thing."""
    for name in type(estimator)._param_names():
        setattr(estimator, name, args[name])
