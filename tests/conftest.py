"""Shared test settings: where the real corpora live, and a small synthetic corpus."""
import os
from pathlib import Path

import re
import tarfile

import numpy as np
import pytest

from nbsvm import datasets
from nbsvm.io.document import Document

REPO = Path(__file__).resolve().parents[1]


def shared_datasets() -> Path:
    """Where the shared corpora are: :func:`nbsvm.datasets.shared_root` decides it, for the
    Makefile, the pipelines and the tests alike."""
    return datasets.shared_root()


SYNTHETIC_VOCAB = np.array([f"w{i}" for i in range(800)]
                           + ["great", "awful", "fine", "Café", "東京", "!", ","])


def synthetic(n_docs, n_classes=2, seed=0, words=30, unique=False):
    """Labeled documents with a learnable signal; labels in a scrambled first-seen order."""
    rng = np.random.default_rng(seed)
    # one array of the words (drawing from a list converted it to an array on every call:
    # most of this function's time), the same draws
    vocab = SYNTHETIC_VOCAB
    names = ["pos", "neg", "mid", "other"][:n_classes]
    docs = []
    for i in range(n_docs):
        c = int(rng.integers(0, n_classes))
        toks = rng.choice(vocab, size=words).tolist()
        toks[:4] = rng.choice(vocab[c * 50:c * 50 + 60], size=4).tolist()  # class-dependent words
        if unique:
            toks.append(f"doc{i}")
        docs.append(Document(names[c], " ".join(toks), "mem.txt", i + 1))
    return docs


def random_rows(rng, n: int, d: int, sizes=(1, 6), draw=None):
    """``n`` random sparse rows over ``d`` features, as dicts and as CSR arrays.

    Each row has ``rng.integers(*sizes)`` distinct sorted indices with values from
    ``draw(size)`` (standard normal by default). Returns ``(rows, indices, values, offsets)``.
    """
    import numpy as np

    draw = draw or (lambda size: rng.normal(size=size))
    rows, indices, values, offsets = [], [], [], [0]
    for _ in range(n):
        idx = np.sort(rng.choice(d, size=rng.integers(*sizes), replace=False))
        val = draw(len(idx))
        rows.append(dict(zip(idx.tolist(), val.tolist())))
        indices += idx.tolist()
        values += val.tolist()
        offsets.append(len(indices))
    return rows, np.array(indices), np.array(values), np.array(offsets)


IMDB_ARCHIVE = shared_datasets() / datasets.CORPORA["imdb"].folder / "aclImdb_labeled.tar.gz"
PER_FOLDER = 1000


@pytest.fixture(scope="session")
def imdb_slice(tmp_path_factory, worker_id):
    """aclImdb-style folder with the first 1000 reviews of train/{pos,neg} and test/{pos,neg}
    (read-only: shared by every test, and by the pytest-xdist workers of one run, the first
    of which reads the archive while the others wait: 5-9 s each)."""
    import fcntl

    if not IMDB_ARCHIVE.is_file():
        pytest.skip(f"IMDB archive not found at {IMDB_ARCHIVE}")
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if worker_id != "master" else base
    root = shared / "imdb_slice" / "aclImdb"
    with open(shared / "imdb_slice.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not root.is_dir():
            partial = shared / f"imdb_slice.{worker_id}.partial"
            _extract_imdb_slice(partial / "aclImdb")
            partial.rename(root.parent)
    return root


def _extract_imdb_slice(root: Path) -> None:
    wanted = {f"{s}/{l}": 0 for s in ("train", "test") for l in ("pos", "neg")}
    for key in wanted:
        (root / key).mkdir(parents=True)
    pattern = re.compile(r"^aclImdb/((?:train|test)/(?:pos|neg))/([^/]+\.txt)$")
    with tarfile.open(IMDB_ARCHIVE, "r|gz") as tar:
        for member in tar:
            m = pattern.match(member.name)
            if not m or not member.isfile() or wanted[m.group(1)] >= PER_FOLDER:
                continue
            data = tar.extractfile(member).read()
            (root / m.group(1) / m.group(2)).write_bytes(data)
            wanted[m.group(1)] += 1
            if all(n >= PER_FOLDER for n in wanted.values()):
                break
    assert all(n == PER_FOLDER for n in wanted.values()), wanted
