"""Folders as users have them (issue 13, item 4): the 20 Newsgroups bydate folders, one
sub-folder per group and one message per file with no suffix, read directly by the real CLI,
with ``--encoding latin-1`` or the default UTF-8 (invalid bytes replaced and counted)."""
import json
import os
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


@pytest.mark.slow  # make test-slow: another real-data run covers the command
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
    # at 80 columns a 20-class confusion matrix is listed, not cut (issue 18, item 7)
    r = subprocess.run([str(NBSVM), "eval", str(test), "-m", str(model), "--encoding",
                        "latin-1", "-q"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, COLUMNS="80"))
    assert "20 classes do not fit in 80 columns" in r.stdout
    largest = max((n, t, p) for t, row in zip(rep["classes"], rep["confusion_matrix"])
                  for p, n in zip(rep["classes"], row) if t != p)
    assert f"{largest[0]:>6,}  {largest[1]} -> {largest[2]}" in r.stdout
    assert all(len(line) <= 80 for line in r.stdout.splitlines()[:40])
    # explain: every class of the multi-class model, each row naming its class
    rows = json.loads(subprocess.run([str(NBSVM), "explain", "-m", str(model), "--top", "3",
                                      "--json"], capture_output=True, text=True,
                                     check=True).stdout)
    assert sorted({r["class"] for r in rows}) == sorted(TRAIN_COUNTS)
    assert all(r["direction"] == "positive" for r in rows) and len(rows) == 60
    one = json.loads(subprocess.run([str(NBSVM), "explain", "-m", str(model), "--top", "3",
                                     "--json", "--class", "sci.space"], capture_output=True,
                                    text=True, check=True).stdout)
    assert {r["class"] for r in one} == {"sci.space"}
    # many texts from standard input: one JSON line each, with the predicted class
    texts = ["the hockey playoffs and the goalie", "my windows driver crashed again"]
    out = subprocess.run([str(NBSVM), "explain", "-m", str(model), "--text", "-", "--json"],
                         input="\n".join(texts) + "\n", capture_output=True, text=True,
                         check=True).stdout.splitlines()
    clf = NBSVMClassifier.load(model)
    predicted = clf.predict(texts)
    assert [json.loads(x)["class"] for x in out] == list(predicted)
    assert [json.loads(x)["line"] for x in out] == [1, 2]


@pytest.mark.slow  # make test-slow: another real-data run covers train; replacing invalid bytes is checked in test_strict_text
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
