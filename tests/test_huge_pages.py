"""The counting store asks the OS for huge pages (as numpy does for its large arrays): its
counters are incremented at random, and on 4 KB pages nearly every increment missed the
TLB (nbsvm.memory.releasable_int32)."""

import mmap
from pathlib import Path

import pytest

from nbsvm.memory import releasable_int32

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping of this process that holds ``address``."""
    lines = Path("/proc/self/smaps").read_text().splitlines()
    inside = False
    for line in lines:
        head = line.split(" ", 1)[0]
        if "-" in head and not line.startswith(("VmFlags", " ")):
            try:
                lo, hi = (int(x, 16) for x in head.split("-"))
            except ValueError:
                continue
            inside = lo <= address < hi
        elif inside and line.startswith("VmFlags:"):
            return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(
    not hasattr(mmap, "MADV_HUGEPAGE") or not THP.exists(), reason="no transparent huge pages"
)
def test_the_counting_store_is_advised_huge_pages_and_still_releases_pages():
    mm, store = releasable_int32((2, 1 << 20))
    assert "hg" in _vm_flags(store.ctypes.data)  # MADV_HUGEPAGE, as /proc shows it
    store[1, :] = 7
    # pages handed back still read as zeros (a huge page is split, not kept)
    mm.madvise(mmap.MADV_DONTNEED, store.shape[1] * 4, store.shape[1] * 4)
    assert not store[1].any() and not store[0].any()
