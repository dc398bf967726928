"""The record every text reader yields, and how a source is named in it.

A :class:`Document` is one labeled (or unlabeled) text with the file and line it came from;
:data:`STDIN` (``"-"``) is the name that means standard input where a file name is
expected, and :func:`_name` is how a source (a path, an open file or ``"-"``) is named in
documents and errors.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from typing import Any, Protocol, TypeAlias

    class Readable(Protocol):
        """An open file, text or binary: anything with ``read``."""

        def read(self) -> Any: ...

    #: What the line readers take: a path (``"-"``: standard input) or an open file.
    PathOrFile: TypeAlias = str | os.PathLike[str] | Readable


class Document(NamedTuple):
    """One document: its label (``None`` when unlabeled), text, where it came from, and its
    weight in training (``--weight-col``, ``sample_weight``: it scales the document's NB
    counts and its learner steps; 1 unless given)."""

    label: str | None
    text: str
    source: str
    line: int
    weight: float = 1.0


#: The largest document weight. Beyond it a document's steps and the summed counts leave
#: float range (a weight of 1e200 gave a model of inf and NaN).
MAX_WEIGHT = 1e9
#: What a weight may be, as the errors say it.
WEIGHTS_ARE = "weights are numbers from 0 to 1e9"


def plain_number(text: str) -> bool:
    """ASCII without ``_``: Python's int() and float() also read ``1_000`` as 1000 and
    other scripts' digits (fullwidth ``１``) as numbers, which no data file means."""
    return text.isascii() and "_" not in text


def weight_of(value: object) -> tuple[float, str | None]:
    """``(weight, problem)`` of a weight field (``--weight-col``): a number or a number's
    text, from 0 to :data:`MAX_WEIGHT`; ``problem`` a sentence when it is not one (weight 1 then).

    >>> weight_of("2.5"), weight_of(0), weight_of("-1")[1], weight_of("1_0")[1]
    ((2.5, None), (0.0, None), 'the weight is -1.0: weights are numbers from 0 to 1e9', "the weight is '1_0', not a number")
    """
    if isinstance(value, bool):  # (JSON's true: a weight of 1 by accident, not a number)
        return 1.0, f"the weight is {value!r}, not a number ({WEIGHTS_ARE})"
    if value is None or (isinstance(value, str) and not value.strip()):
        return 1.0, f"no weight ({WEIGHTS_ARE})"
    try:
        if isinstance(value, str) and not plain_number(value):
            raise ValueError(value)
        weight = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError) as e:  # (400 digits overflow a float)
        shown = repr(value) if len(repr(value)) <= 24 else repr(value)[:20] + "..."
        if isinstance(e, OverflowError):
            return 1.0, f"the weight is {shown}: {WEIGHTS_ARE}"
        return 1.0, f"the weight is {shown}, not a number"
    if not 0 <= weight <= MAX_WEIGHT:  # NaN fails both
        return 1.0, f"the weight is {weight!r}: {WEIGHTS_ARE}"
    return weight, None


#: The name that means standard input where a file name is expected.
STDIN = "-"


def _name(src) -> str:
    if hasattr(src, "read"):
        return str(getattr(src, "name", "<stream>"))
    return "<stdin>" if isinstance(src, str) and src == STDIN else str(src)


def rereadable_or_none(
    docs: Iterable[Document] | Callable[[], Iterable[Document]],
) -> Callable[[], Iterable[Document]] | None:
    """As :func:`rereadable`, None for a one-shot iterator."""
    if callable(docs):
        return docs
    return None if iter(docs) is docs else (lambda: iter(docs))


def rereadable(
    docs: Iterable[Document] | Callable[[], Iterable[Document]],
    why: str = "this mode reads the training data more than once",
) -> Callable[[], Iterable[Document]]:
    """A callable giving the documents afresh each time: ``docs`` itself when callable, a
    list's iterator, else an error saying ``why`` a one-shot iterator will not do."""
    if callable(docs):
        return docs
    if iter(docs) is docs:
        raise NBSVMError(
            f"{why}: pass a list or a callable returning the documents, not a one-shot iterator"
        )
    return lambda: iter(docs)


def read_once(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` gives its content once: standard input (``-``), or a pipe, FIFO,
    socket or terminal by any name (``/dev/stdin`` piped, ``<(...)``'s ``/dev/fd/63``). A
    second read finds what the first left (a peek at the first documents took 2,300 of
    30,000 piped reviews and the model trained on the rest, silently) or waits forever
    for a writer (a FIFO)."""
    if str(path) == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # not there (said when it is read), or not a path
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def missing_input(path: str, where: str = "") -> NBSVMError:
    """The error for an input ``path`` that does not exist: a symbolic link that loops or
    whose target is gone is said as such (a loop read as 'no such file'). ``where``: the
    option that named it (`` (--test)``)."""
    import errno
    import os

    why = "no such file or folder"
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as e:
            target = os.readlink(path)
            why = (
                "a loop of symbolic links"
                if e.errno == errno.ELOOP
                else f"a symbolic link to {target!r}, which does not exist"
            )
    return NBSVMError(why + where, path=path)


DECIMAL = re.compile(r"([+-]?)(0|[1-9][0-9]*)(?:\.([0-9]*))?")


def number_key(label: str) -> tuple[str, str] | None:
    """The key of a label that is a decimal number as people write one (``0`` and ``0.0``
    from one column that pandas wrote with and without a missing value; ``+1`` and ``1``;
    ``1.50`` and ``1.5``), else None: ``01``, ``1e3``, ``1_000``, other scripts' digits and
    long ids are names, compared as written.

    >>> number_key("+1.50"), number_key("1.5"), number_key("01"), number_key("-0.0")
    (('number', '1.5'), ('number', '1.5'), None, ('number', '0'))
    """
    m = DECIMAL.fullmatch(label)
    if m is None:
        return None
    sign, whole, fraction = m.groups()
    fraction = (fraction or "").rstrip("0")
    text = whole + ("." + fraction if fraction else "")
    return ("number", "-" + text if sign == "-" and text != "0" else text)
