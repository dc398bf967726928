"""A model's history: what it was trained on and continued with, kept in its file so that
a served model that went on learning can be reproduced (``nbsvm info`` lists it).

Each entry is a small dict: ``event`` (``fit``, ``continue``, ``partial_fit``, ``learn``),
``documents``, the package version, and what the event adds (the input files of ``nbsvm
train``, the journal and its last sequence number for ``learn``). No clock time: the same
training writes the same file, byte for byte. Runs of
the same event in a row (``partial_fit`` batch after batch, ``learn`` over HTTP) are one
entry whose counts grow, so that a long-running server does not grow its header by a line
per batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbsvm._version import __version__

if TYPE_CHECKING:
    from nbsvm.models.nbsvm import NBSVMClassifier

#: events whose runs merge into one entry (calls and documents add up)
MERGED = ("partial_fit", "learn")


def record(model: NBSVMClassifier, event: str, documents: int, **fields: Any) -> None:
    """Add ``event`` over ``documents`` to ``model.history_`` (merged into the last entry
    when it is the same event of :data:`MERGED`; ``fields`` then replace its own)."""
    history = model.__dict__.setdefault("history_", [])
    last = history[-1] if history else None
    if last is not None and event in MERGED and last.get("event") == event:
        last.update(fields, calls=last.get("calls", 1) + 1)
        last["documents"] = int(last.get("documents", 0)) + int(documents)
        return
    entry = dict(event=event, documents=int(documents), version=__version__)
    if event in MERGED:
        entry["calls"] = 1
    entry.update(fields)
    history.append(entry)


def checked(value: object) -> list[dict]:
    """A history read from a file: a list of objects, each with an ``event``."""
    if not isinstance(value, list) or not all(
        isinstance(e, dict) and isinstance(e.get("event"), str) for e in value
    ):
        raise TypeError("history must be a list of objects with an event")
    return [dict(e) for e in value]


def describe(history: list[dict]) -> str:
    """One line per entry, for ``nbsvm info``."""
    lines = []
    for e in history:
        extra = ", ".join(
            f"{k} {v}" for k, v in e.items() if k not in ("event", "documents", "version")
        )
        lines.append(
            f"{e.get('event')}: {e.get('documents')} documents (nbsvm {e.get('version')})"
            + (f"; {extra}" if extra else "")
        )
    return "\n".join(lines)
