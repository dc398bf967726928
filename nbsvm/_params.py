"""scikit-learn's parameter protocol for every nbsvm estimator (no sklearn import): the
parameters are the arguments of ``__init__``, which only stores them."""
from __future__ import annotations

import inspect

from nbsvm.errors import NBSVMError


class Params:
    """``get_params`` / ``set_params`` / ``repr`` over the arguments of ``__init__``."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]

    def get_params(self, deep=True) -> dict:
        return {p: getattr(self, p) for p in self._param_names()}

    def set_params(self, **params):
        names = self._param_names()
        for k, v in params.items():
            if k not in names:
                raise NBSVMError(f"unknown parameter {k!r}; allowed: {', '.join(names)}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
