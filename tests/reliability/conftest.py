"""The reliability suite (issue 6): hostile input, crafted files, interruptions.

``from conftest import synthetic`` inside this folder finds this module (pytest imports
each folder's conftest as ``conftest``), so the shared helpers of ``tests/conftest.py`` are
re-exported here; ``tests/naive.py`` is importable as ``naive``.
"""
import importlib.util
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

_spec = importlib.util.spec_from_file_location("_nbsvm_tests_conftest", TESTS / "conftest.py")
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

REPO = _shared.REPO
shared_datasets = _shared.shared_datasets
synthetic = _shared.synthetic
random_rows = _shared.random_rows
