"""Imported by the benchmark scripts before anything maps the shared libraries (importing
nbsvm maps numba's llvmlite; the pages of a library some process has mapped cannot be
dropped): settles them once, see :func:`_harness.settle_shared_libraries`."""

from __future__ import annotations

from _harness import settle_shared_libraries

SETTLED = settle_shared_libraries()
