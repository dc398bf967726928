"""Type aliases of the models' signatures: what the estimator's methods take.

Imported under ``TYPE_CHECKING`` only (by :mod:`nbsvm.models` and the packages above it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from nbsvm.io.document import Document

#: Texts: a sequence of strings, a numpy array or pandas Series of them, a one-column 2-D
#: array, or a DataFrame (its ``text_col``).
Texts: TypeAlias = Iterable[str] | np.ndarray | pd.Series | pd.DataFrame

#: Labels of any values (a sequence, array or Series), or, with a DataFrame ``X``, the name
#: of its label column.
LabelValues: TypeAlias = Iterable[Any] | np.ndarray | pd.Series | str

#: Training documents: an iterable of them, or a callable returning them afresh (read as
#: often as the fit needs).
Documents: TypeAlias = Iterable[Document] | Callable[[], Iterable[Document]]

#: Training documents that can be read again: a callable returning them afresh.
Reread: TypeAlias = Callable[[], Iterable[Document]]

#: A progress callback: receives one event dict (``{"stage": ..., ...}``) at a time.
Callback: TypeAlias = Callable[[dict], None]

#: A memory limit: bytes, or a size string such as ``"2G"`` (:func:`nbsvm.memory.parse_size`).
MemoryLimit: TypeAlias = int | str
