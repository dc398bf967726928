"""The project's own error type: every user-facing failure says what and where."""
from __future__ import annotations


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
