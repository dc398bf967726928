"""Request bodies bounded before their items are validated.

pydantic validates every item of a list and every key of an object, and gives one error for
each that is wrong: a 2 MB body of a million numbers where texts belong made a million
errors, a 94 MB answer and a minute in which the event loop answered nobody. So each request
model first looks at the parsed JSON as a whole (:func:`bounded`): a list longer than the
batch the app takes is a 413 before any item is looked at, labels of a wrong type are one
error at the first, and a body of many unknown keys is one error naming a few. What is left
gives at most :data:`MAX_ERRORS` errors in an answer (:func:`error_list`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from contextvars import ContextVar
from typing import Any

from fastapi import HTTPException

from nbsvm.io.decoding import valid_unicode

#: The texts one request may hold in the app answering it (``--max-batch``): set for each
#: request before its body is validated (:func:`batch_limit`), read by :func:`bounded`.
BATCH_LIMIT: ContextVar[int] = ContextVar("nbsvm_batch_limit", default=1000)
MAX_ERRORS = 20  # errors listed in one 422 answer; the rest counted
LABEL_SCALARS = (str, bool, int, float)


def batch_limit(most: int) -> Callable[[], Coroutine[Any, Any, None]]:
    """A FastAPI dependency setting :data:`BATCH_LIMIT` to ``most`` for the request (the
    dependencies are solved before the body is validated)."""

    async def set_limit() -> None:
        BATCH_LIMIT.set(most)

    return set_limit


def field_names(model: type) -> set[str]:
    """The keys a request model takes: its fields' names and aliases."""
    fields = model.model_fields  # type: ignore[attr-defined]
    return set(fields) | {f.alias for f in fields.values() if f.alias}


def bounded(data: Any, fields: set[str], lists: tuple[str, ...]) -> Any:
    """The body of a request model's ``mode='before'`` validator: ``data`` unchanged when
    its size is bounded. A list named in ``lists`` longer than :data:`BATCH_LIMIT` is 413;
    more than :data:`MAX_ERRORS` keys outside ``fields`` one error; a label neither a
    string, number, bool nor a list of them one error naming the first."""
    if not isinstance(data, dict):
        return data
    unknown = [k for k in data if k not in fields]
    if len(unknown) > MAX_ERRORS:
        named = ", ".join(repr(valid_unicode(str(k))[:40]) for k in unknown[:3])
        raise ValueError(
            f"{len(unknown):,} unknown fields ({named}, ...); allowed: {', '.join(sorted(fields))}"
        )
    most = BATCH_LIMIT.get()
    for name in lists:
        value = data.get(name)
        if isinstance(value, list) and len(value) > most:
            raise HTTPException(413, f"{len(value):,} {name} in one request; at most {most:,}")
    if data.get("label") is not None:
        _check_labels("label", [data["label"]])
    if isinstance(data.get("labels"), list):
        _check_labels("labels", data["labels"])
    return data


def _check_labels(name: str, items: list) -> None:
    """Each label a scalar or a list of scalars."""
    for i, item in enumerate(items):
        for label in item if isinstance(item, list) else [item]:
            if not isinstance(label, LABEL_SCALARS):
                where = name if name == "label" else f"{name}[{i}]"
                raise ValueError(
                    f"{where}: a label is a string, a number, true or false, or a list of them"
                )


def error_list(errors: Sequence[Any]) -> list[dict]:
    """pydantic's errors as the answer lists them: where and what (never the input, which
    may hold what JSON cannot say back), the first :data:`MAX_ERRORS` and a count of the
    rest."""
    shown = [
        {
            "loc": [valid_unicode(str(part)) for part in e.get("loc", ())],
            "msg": valid_unicode(str(e.get("msg", ""))),
            "type": str(e.get("type", "")),
        }
        for e in errors[:MAX_ERRORS]
    ]
    if len(errors) > MAX_ERRORS:
        more = len(errors) - MAX_ERRORS
        shown.append({"loc": [], "msg": f"and {more:,} more errors", "type": "more_errors"})
    return shown
