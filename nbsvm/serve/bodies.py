"""Request bodies bounded before their items are validated.

pydantic validates every item of a list and every key of an object, and gives one error for
each that is wrong: a 2 MB body of a million numbers where texts belong made a million
errors, a 94 MB answer and a minute in which the event loop answered nobody. So each request
model first looks at the parsed JSON as a whole (:func:`bounded`): a list longer than the
batch the app takes is a 413 before any item is looked at, labels of a wrong type are one
error at the first, and a body of many unknown keys is one error naming a few. What is left
gives at most :data:`MAX_ERRORS` errors in an answer (:func:`error_list`).

Before that, the JSON itself is bounded (:class:`BoundedBodyRoute`): 8 MB of nested empty
lists is 2.7 million Python lists, which ``json.loads`` took 2.1 s to make and 0.4 s to
free, on the event loop, while every other client waited. A body over
:data:`OFF_LOOP_BYTES` is parsed in the thread pool, one at a time per worker, and a body of
more JSON values than any request holds is refused before it is parsed (413): ``json.loads``
holds the GIL while it makes the objects, so a thread alone would not free the loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Sequence
from contextvars import ContextVar
from typing import Any

import anyio
import numpy as np
from fastapi import HTTPException, Request
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from nbsvm.io.decoding import valid_unicode

#: The texts one request may hold in the app answering it (``--max-batch``): set for each
#: request before its body is validated (:func:`batch_limit`), read by :func:`bounded`.
BATCH_LIMIT: ContextVar[int] = ContextVar("nbsvm_batch_limit", default=1000)
MAX_ERRORS = 20  # errors listed in one 422 answer; the rest counted
LABEL_SCALARS = (str, bool, int, float)
#: JSON values a body may hold for each text of the batch it may carry (``--max-batch``),
#: and at least :data:`MIN_VALUES`: the text, its labels (a multi-label model's dozens), its
#: weight, and room for the other fields; a value is a key, an item, a scalar or a
#: container. 50,000 values (the default batch) of nested empty lists parse in 40 ms
VALUES_A_TEXT, MIN_VALUES = 50, 1000
#: digits of an integer in a body: 1,900 integers of 4,300 digits are 2,000 values that
#: took json.loads 0.4 s (a JSON integer here is a count or a label)
MAX_INT_DIGITS = 100
#: the scope key under which :class:`BoundedBodyRequest` leaves why a body is not JSON
JSON_ERROR_KEY = "nbsvm.json_error"
#: Bodies at least this large are counted and parsed in the thread pool: 64 KB of the
#: slowest JSON to parse holds the event loop 17 ms
OFF_LOOP_BYTES = 64 << 10


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
    string, number, bool nor a list of them one error naming the first; a body of too
    many values (:class:`TooManyValues`) is 413."""
    if isinstance(data, TooManyValues):
        raise data.refusal()
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


class TooManyValues:
    """What :func:`parse_bounded` gives for a body of more than ``most`` JSON values,
    unparsed: the request model's validator (:func:`bounded`) answers it with 413, once
    the route's dependencies (``/learn``'s token) have been checked."""

    def __init__(self, most: int):
        self.most = most

    def refusal(self) -> HTTPException:
        return HTTPException(
            413,
            f"the body holds more than {self.most:,} JSON values; a request holds at most "
            f"{self.most:,} ({VALUES_A_TEXT} for each text of --max-batch, at least "
            f"{MIN_VALUES:,})",
        )


def parse_bounded(body: bytes, most: int) -> Any:
    """``body`` parsed as JSON, or :class:`TooManyValues` without parsing it when it would
    hold more than ``most`` JSON values (:func:`values_bound`, over its UTF-8 bytes). JSON
    that does not parse raises as ``json.loads`` does (FastAPI answers it)."""
    counted = counted_body(body, most)
    return counted if isinstance(counted, TooManyValues) else loads(counted)


def counted_body(body: bytes, most: int) -> bytes | TooManyValues:
    """``body`` as UTF-8 when it holds at most ``most`` JSON values, else
    :class:`TooManyValues`."""
    encoding = json.detect_encoding(body)
    if encoding not in ("utf-8", "utf-8-sig"):
        # UTF-16 / UTF-32, which json.loads takes too: counted as UTF-8, where a byte under
        # 0x80 is always its ASCII character (in UTF-16 an escaped quote is 5C 00 22 00, and
        # a character's byte may be a quote's: counted as they are, the strings went wrong
        # and 1.3 million lists passed as 4 values). Decoded as json.loads decodes them.
        body = body.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
    return TooManyValues(most) if values_bound(body, most) > most else body


def loads(body: bytes) -> Any:
    """``json.loads`` with integers of at most :data:`MAX_INT_DIGITS` digits and no key
    given twice in an object (json.loads kept the last: ``{"text": "a", "text": "b"}``
    scored "b", where an unknown field is refused)."""
    return json.loads(body, parse_int=_short_int, object_pairs_hook=_one_each)


class DuplicateKey(ValueError):
    """A key given twice in one JSON object of a body."""


def _one_each(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


class LongNumber(ValueError):
    """An integer of more than :data:`MAX_INT_DIGITS` digits in a body."""


def _short_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise LongNumber(f"{len(digits):,} digits")
    return int(digits)


def json_error_of(e: BaseException) -> str:
    """Why a body is not JSON, in words, from what parsing it raised (FastAPI only says it
    could not parse it)."""
    if isinstance(e, UnicodeDecodeError):
        return f"the body is not UTF-8 text ({e.reason} at byte {e.start})"
    if isinstance(e, RecursionError):
        return "the body's JSON is nested too deeply"
    if isinstance(e, LongNumber):
        return (
            "the body's JSON has an integer of more digits than a number takes here "
            f"(at most {MAX_INT_DIGITS})"
        )
    if isinstance(e, DuplicateKey):
        return f"the body's JSON gives the key {str(e)[:80]!r} twice in one object"
    if isinstance(e, ValueError):
        return f"the body is not JSON: {e}"
    return "the body could not be read as JSON"


def values_bound(body: bytes, most: int) -> int:
    """At least the number of JSON values in ``body``, UTF-8 (keys, items and containers; exact
    but for empty containers) if it is JSON: one for each ``,``, ``:``, ``[`` and ``{``
    outside strings, and the top value. Counted over the bytes, with no object made:
    ``json.loads`` holds the GIL while it makes them, in any thread. Bytes inside strings
    are only told apart (numpy, a few passes over the bytes) when counting every one of
    them gives more than ``most``."""
    marks = b",:[{"
    if sum(body.count(bytes([c])) for c in marks) + 1 <= most:
        return most  # within, strings and all
    a = np.frombuffer(body, dtype=np.uint8)
    quote = a == ord('"')
    backslash = a == ord("\\")
    quotes = np.flatnonzero(quote)
    if backslash.any() and quotes.size:  # a quote after an odd run of backslashes is escaped
        others = np.flatnonzero(~backslash)  # every quote among them
        before = others[np.maximum(np.searchsorted(others, quotes) - 1, 0)]
        run = np.where(quotes > others[0], quotes - before - 1, quotes)
        quote[quotes[run % 2 == 1]] = False
    outside = np.bitwise_xor.accumulate(quote.view(np.uint8)) == 0  # closing quotes too
    structural = np.isin(a, np.frombuffer(marks, dtype=np.uint8))
    return int(np.count_nonzero(structural & outside)) + 1


class BoundedBodyRequest(Request):
    """A request whose JSON body is parsed by :func:`parse_bounded`: in the thread pool
    when it is over :data:`OFF_LOOP_BYTES`, one such body at a time per worker (the others
    wait on the event loop, holding no thread); on the event loop otherwise."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            state = self.app.state
            most = max(MIN_VALUES, VALUES_A_TEXT * state.max_batch)
            try:
                if len(body) < OFF_LOOP_BYTES:
                    self._json = parse_bounded(body, most)
                else:  # counted beside others (numpy lets go of the GIL), parsed alone
                    counted = await run_in_threadpool(counted_body, body, most)
                    if isinstance(counted, TooManyValues):
                        self._json = counted
                    else:
                        async with state.parse_lock:
                            self._json = await run_in_threadpool(loads, counted)
            except json.JSONDecodeError:
                raise  # FastAPI says where
            except Exception as e:  # FastAPI's bare 400: why, said without parsing again
                self.scope[JSON_ERROR_KEY] = json_error_of(e)
                raise
        return self._json


class BoundedBodyRoute(APIRoute):
    """FastAPI's route, its requests :class:`BoundedBodyRequest` (the app's
    ``state.max_batch`` and ``state.parse_lock`` set by :func:`bounded_bodies`)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Any]]:
        handler = super().get_route_handler()

        async def bounded_handler(request: Request) -> Any:
            return await handler(BoundedBodyRequest(request.scope, request.receive))

        return bounded_handler


def bounded_bodies(app: Any, max_batch: int) -> None:
    """Every route added to ``app`` from now on parses its body by :func:`parse_bounded`,
    for a batch of at most ``max_batch`` texts."""
    app.state.max_batch = max_batch
    app.state.parse_lock = anyio.Lock()
    app.router.route_class = BoundedBodyRoute
