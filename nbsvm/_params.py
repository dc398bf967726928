"""scikit-learn's parameter protocol for nbsvm's text estimators (no sklearn import)."""
from __future__ import annotations

from .errors import NBSVMError


class Params:
    """``get_params`` / ``set_params`` over the names in the class's ``_PARAMS``."""

    _PARAMS: tuple = ()

    def get_params(self, deep=True) -> dict:
        return {p: getattr(self, p) for p in self._PARAMS}

    def set_params(self, **params):
        for k, v in params.items():
            if k not in self._PARAMS:
                raise NBSVMError(f"unknown parameter {k!r}; allowed: {', '.join(self._PARAMS)}")
            setattr(self, k, v)
        return self
