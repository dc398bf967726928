"""scikit-learn's error conventions without scikit-learn: the error for bad ``X`` or ``y``
(a ``ValueError``), the column-vector ``y`` warning, and methods that exist only with some
parameters (``available_if``: ``hasattr`` is False otherwise). ``NotFittedError`` is
:mod:`nbsvm.errors`' own, made an instance of scikit-learn's class by ``interop`` when
scikit-learn is loaded.
"""

from __future__ import annotations

from nbsvm.errors import NBSVMError, NotFittedError, interop  # noqa: F401 (re-exported)


class InputError(NBSVMError, ValueError):
    """Bad data given to a learner (``X`` or ``y``): an :class:`NBSVMError` that is also a
    ``ValueError``, the type scikit-learn's input validation raises."""


class DataConversionWarning(UserWarning):
    """A column vector ``y`` was given where a 1-d array was expected (scikit-learn's
    warning of the same name and meaning)."""


class UnavailableMethod(NBSVMError, AttributeError):
    """A method this learner does not offer with its current parameters (e.g.
    ``predict_proba`` with the hinge loss): an ``AttributeError``, so ``hasattr`` is False,
    as with scikit-learn's ``available_if``."""


class available_if:
    """Decorator: the method exists only when ``check(self)`` returns without raising
    (it raises :class:`UnavailableMethod` saying why). Accessed on the class, the plain
    function is returned."""

    def __init__(self, check):
        self.check = check

    def __call__(self, fn):
        self.fn = fn
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__
        return self

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        self.check(obj)
        return self.fn.__get__(obj, owner)
