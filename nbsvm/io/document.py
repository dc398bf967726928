"""The record every text reader yields, and how a source is named in it.

A :class:`Document` is one labeled (or unlabeled) text with the file and line it came from;
:data:`STDIN` (``"-"``) is the name that means standard input where a file name is
expected, and :func:`_name` is how a source (a path, an open file or ``"-"``) is named in
documents and errors.
"""
from __future__ import annotations

from typing import NamedTuple


class Document(NamedTuple):
    """One document: its label (``None`` when unlabeled), text, and where it came from."""

    label: str | None
    text: str
    source: str
    line: int


#: The name that means standard input where a file name is expected.
STDIN = "-"


def _name(src) -> str:
    if hasattr(src, "read"):
        return str(getattr(src, "name", "<stream>"))
    return "<stdin>" if isinstance(src, str) and src == STDIN else str(src)
