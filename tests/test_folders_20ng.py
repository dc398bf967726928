"""Folders as users have them (issue 13, item 4): the 20 Newsgroups bydate folders, one
sub-folder per group and one message per file with no suffix, read directly by the real CLI,
with ``--encoding latin-1`` or the default UTF-8 (invalid bytes replaced and counted)."""
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import shared_datasets
from nbsvm import NBSVMClassifier

NBSVM = Path(sys.executable).parent / "nbsvm"
ARCHIVE = shared_datasets() / "20newsgroups" / "20news-bydate.tar.gz"
# the per-group training counts of the dataset's README (identical to scikit-learn's)
TRAIN_COUNTS = {"alt.atheism": 480, "comp.graphics": 584, "comp.os.ms-windows.misc": 591,
                "comp.sys.ibm.pc.hardware": 590, "comp.sys.mac.hardware": 578,
                "comp.windows.x": 593, "misc.forsale": 585, "rec.autos": 594,
                "rec.motorcycles": 598, "rec.sport.baseball": 597, "rec.sport.hockey": 600,
                "sci.crypt": 595, "sci.electronics": 591, "sci.med": 594, "sci.space": 593,
                "soc.religion.christian": 599, "talk.politics.guns": 546,
                "talk.politics.mideast": 564, "talk.politics.misc": 465,
                "talk.religion.misc": 377}


@pytest.fixture(scope="module")
def bydate(tmp_path_factory) -> Path:
    if not ARCHIVE.is_file():
        pytest.skip(f"20 Newsgroups not found at {ARCHIVE}")
    root = tmp_path_factory.mktemp("20ng")
    with tarfile.open(ARCHIVE, "r:gz") as tar:
        tar.extractall(root, filter="data")
    return root


def invalid_utf8(folder: Path) -> tuple[int, int]:
    """(bytes that are not UTF-8, files that have any) under ``folder``, by Python's own
    decoder: ``surrogateescape`` turns each such byte into one lone surrogate."""
    n_bytes = n_files = 0
    for group in folder.iterdir():
        for path in group.iterdir():
            text = path.read_bytes().decode("utf-8", "surrogateescape")
            n = sum(1 for ch in text if "\udc80" <= ch <= "\udcff")
            n_bytes += n
            n_files += n > 0
    return n_bytes, n_files


def test_bydate_folders_train_and_eval_directly(bydate, tmp_path):
    train, test = bydate / "20news-bydate-train", bydate / "20news-bydate-test"
    model = tmp_path / "m.npz"
    r = subprocess.run([str(NBSVM), "train", str(train), "--encoding", "latin-1", "--ngrams",
                        "1", "--n-bits", "18", "--epochs", "3", "--loss", "hinge", "-o",
                        str(model), "-q"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "replaced" not in r.stderr                 # latin-1 decodes every byte
    clf = NBSVMClassifier.load(model)
    assert dict(zip(clf.classes_, map(int, clf.class_counts_))) == TRAIN_COUNTS
    r = subprocess.run([str(NBSVM), "eval", str(test), "-m", str(model), "--encoding",
                        "latin-1", "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["n_docs"] == 7532 and rep["accuracy"] > 0.80, rep["accuracy"]


def test_default_utf8_counts_what_it_replaces(bydate, tmp_path):
    # five groups of the training folder (links to them), among them the ones with the
    # most 8-bit bytes
    train = tmp_path / "five-groups"
    train.mkdir()
    for group in ("comp.os.ms-windows.misc", "misc.forsale", "rec.autos", "sci.crypt",
                  "soc.religion.christian"):
        (train / group).symlink_to(bydate / "20news-bydate-train" / group)
    n_bytes, n_files = invalid_utf8(train)
    assert n_files > 0
    r = subprocess.run([str(NBSVM), "lexicon", str(train), "--ngrams", "1", "--n-bits", "16",
                        "-o", str(tmp_path / "lex.npz"), "-q"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"replaced {n_bytes} invalid UTF-8 bytes in {n_files} documents" in r.stderr
    bad = subprocess.run([str(NBSVM), "lexicon", str(train), "--encoding", "utf-16",
                          "-o", str(tmp_path / "lex.npz"), "-q"], capture_output=True,
                         text=True, timeout=600)
    assert bad.returncode == 2
    assert "unknown or unusable --encoding 'utf-16'" in bad.stderr
