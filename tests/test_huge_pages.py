"""The counting store asks the OS for huge pages (as numpy does for its large arrays) when
the corpus is dense enough to touch every 4 KB page anyway: its counters are incremented
at random, and on 4 KB pages nearly every increment missed the TLB; for a small corpus a
2 MB page made resident for one count doubled the peak (nbsvm.memory.advise_huge_pages)."""

import mmap
import subprocess
import sys
from pathlib import Path

import pytest

from nbsvm.memory import advise_huge_pages, releasable_int32

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
ADVISED = (
    "import sys; from nbsvm.datasets import fixture; from nbsvm import NBSVMClassifier; "
    "import nbsvm.memory as m; real = m.advise_huge_pages; "
    "import nbsvm.models.counting as c; asked = []; "
    "c.advise_huge_pages = lambda *a: asked.append(real(*a)) or asked[-1]; "
    "lines = [l.split('\\t', 1) for l in open(fixture('reviews.txt'))]; "
    "NBSVMClassifier(n_bits=int(sys.argv[1])).fit([t for _, t in lines], [y for y, _ in lines]); "
    "print(asked)"
)


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
def test_a_dense_first_batch_asks_for_huge_pages_and_pages_are_still_released():
    mm, store = releasable_int32((2, 1 << 20))
    assert not advise_huge_pages(mm, (1 << 20) // 1024 - 1, 1 << 20)  # fewer ids than pages
    assert "hg" not in _vm_flags(store.ctypes.data)
    assert advise_huge_pages(mm, (1 << 20) // 1024, 1 << 20)
    assert "hg" in _vm_flags(store.ctypes.data)  # MADV_HUGEPAGE, as /proc shows it
    store[1, :] = 7
    # pages handed back still read as zeros (a huge page is split, not kept)
    mm.madvise(mmap.MADV_DONTNEED, store.shape[1] * 4, store.shape[1] * 4)
    assert not store[1].any() and not store[0].any()


@pytest.mark.skipif(
    not hasattr(mmap, "MADV_HUGEPAGE") or not THP.exists(), reason="no transparent huge pages"
)
def test_training_asks_for_huge_pages_only_where_the_corpus_fills_the_pages():
    """reviews.txt (40 documents, about 8,000 bucket ids): at 2**12 buckets every page is
    touched, at 2**24 a few thousand of 16,384 pages a row would be."""
    def asked(n_bits):
        out = subprocess.run([sys.executable, "-c", ADVISED, str(n_bits)], check=True,
                             capture_output=True, text=True).stdout
        return out.strip()

    assert asked(12) == "[True]" and asked(24) == "[False]"
