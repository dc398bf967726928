"""The project's own error types: every user-facing failure says what and where."""

from __future__ import annotations

import sys
from typing import TypeVar

_E = TypeVar("_E", bound=BaseException)


#: characters of a value a message quotes (a name given by a client can be megabytes)
SHOWN_CHARS = 80


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr`` of ``value`` for a message, cut to ``limit`` characters (``...`` after).

    >>> shown("x" * 100, 5), shown(1)
    ("'xxxxx'...", '1')
    """
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a NumPy scalar
        value = value.item()
    if not isinstance(value, str):  # a number or a bool as Python writes it: 1, not '1'
        text = repr(value)
        return text if len(text) <= limit else text[:limit] + "..."
    return repr(value[:limit]) + ("..." if len(value) > limit else "")


def shown_some(values: list, most: int = 3, limit: int = 40) -> str:
    """The first ``most`` of ``values``, each :func:`shown` within ``limit``, and how many
    more.

    >>> shown_some(["a", "b", "c", "d", "e"], 2)
    "'a', 'b' and 3 more"
    """
    head = ", ".join(shown(v, limit) for v in values[:most])
    return head + (f" and {len(values) - most} more" if len(values) > most else "")


class NBSVMError(Exception):
    """A problem with the user's input or settings.

    Parameters
    ----------
    message : str
        What is wrong, and where possible what is allowed.
    path : str, optional
        File the problem was found in.
    line : int, optional
        1-based line (or row) number inside ``path``.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        return where + self.message


def saved_untested(e: NBSVMError, output: object) -> NBSVMError:
    """``e``, a test set's error after the model was saved to ``output``, saying so: a
    script must not take the model for unchanged (train, learn and Dask's train alike)."""
    return NBSVMError(
        f"{e.message} (the model is trained and saved to {output}; the test set was not scored)",
        e.path,
        e.line,
    )


class NoDocuments(NBSVMError):
    """Nothing to train on once the documents were read (each empty, unlabeled or held
    out): said without the temporary cache's path, which names nothing of the user's."""

    def __init__(self, message: str = "no training documents"):
        super().__init__(message)


class NoneKept(NBSVMError):
    """``min_df`` keeps none of the buckets seen: a model would predict the class prior
    whatever the text (``--auto`` drops such a candidate and goes on)."""


class Diverged(NBSVMError):
    """A learner's state holds NaN or infinity (its steps blew up): ``state`` names the
    array (:meth:`~nbsvm.learners.persistence.PersistenceMixin.diverged`)."""

    def __init__(self, message: str, state: str = ""):
        super().__init__(message)
        self.state = state

    def __reduce__(self):  # (pickled by Dask from a worker; copied whole)
        return (type(self), (self.message, self.state))


class TestSetError(NBSVMError):
    """The test set could not be read or scored, once training had finished: the model is
    trained (``nbsvm train`` saves it before saying so)."""

    __test__ = False  # not a pytest test class, whatever its name


class NotFittedError(NBSVMError, ValueError, AttributeError):
    """A model or learner used before it was fitted: the one not-fitted error of every
    estimator. Like ``sklearn.exceptions.NotFittedError`` it is a ``ValueError`` and an
    ``AttributeError``; when scikit-learn is loaded, the error raised is also an instance
    of scikit-learn's class (see :func:`interop`)."""


_INTEROP: dict = {}


def interop(cls: type[_E]) -> type[_E]:
    """``cls``, or, if ``sklearn.exceptions`` is already imported, a subclass of both
    ``cls`` and scikit-learn's class of the same name, so that ``except NotFittedError``
    and warning filters written against scikit-learn see ours. scikit-learn is never
    imported here: without it loaded, nobody can be waiting for its classes."""
    sk = sys.modules.get("sklearn.exceptions")
    base = getattr(sk, cls.__name__, None) if sk is not None else None
    if not isinstance(base, type) or issubclass(cls, base):
        return cls
    key = (cls, base)
    if key not in _INTEROP:
        _INTEROP[key] = type(
            cls.__name__,
            (cls, base),
            {
                "__module__": cls.__module__,
                "__doc__": cls.__doc__,
                "__qualname__": cls.__qualname__,
                # pickled (e.g. from a worker process) by its plain class
                "__reduce__": lambda self: (_rebuild, (cls, self.args)),
            },
        )
    return _INTEROP[key]


def _rebuild(cls, args):
    return interop(cls)(*args)


def not_fitted(obj: object) -> NotFittedError:
    """The error for ``obj`` used before fitting (raise it)."""
    return interop(NotFittedError)(
        f"This {type(obj).__name__} instance is not fitted yet: call 'fit' (or load a "
        f"saved model) before using it"
    )
