"""``nbsvm serve``: models behind an HTTP API and a web page.

:mod:`~nbsvm.serve.registry` holds the models by name and swaps them atomically;
:mod:`~nbsvm.serve.scoring` turns a model's scores into the answers (plain data);
:mod:`~nbsvm.serve.limits` bounds bodies and counts requests; :mod:`~nbsvm.serve.app`
is the FastAPI application tying them together. Needs ``pip install 'nbsvm[serve]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI


def create_app(*args: Any, **kwargs: Any) -> FastAPI:
    """:func:`nbsvm.serve.app.create_app` (imported on use: FastAPI is an optional extra)."""
    from nbsvm.serve.app import create_app as create

    return create(*args, **kwargs)
