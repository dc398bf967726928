"""What one training run reports to and is bounded by, handed down unchanged through the
modes that train more than once (:mod:`.modes`, :mod:`.calibrate`, :mod:`.thresholds`,
:mod:`.warm`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbsvm.models._types import Callback, MemoryLimit


@dataclass(frozen=True)
class FitRun:
    """``callback`` receives the run's progress events (``{"stage": ..., ...}``);
    ``max_memory`` (bytes or ``"2G"``) bounds what it allocates (None: the memory
    available)."""

    callback: Callback | None = None
    max_memory: MemoryLimit | None = None

    def notify(self, event: dict) -> None:
        """Pass ``event`` to the callback, if there is one."""
        if self.callback is not None:
            self.callback(event)
