"""The reliability suite (issue 6): hostile input, crafted files, interruptions.

The shared helpers of ``tests/conftest.py`` and ``tests/naive.py`` are importable here too.
"""
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
