"""Blitzer et al.'s raw .review files as an input format (issue 18, item 8): a domain
folder, the sorted_data_acl folder, its .tar.gz and single files, read by train, eval and
predict without conversion."""
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import shared_datasets
from nbsvm.io.readers import detect_format, read_inputs

NBSVM = Path(sys.executable).parent / "nbsvm"
ARCHIVE = shared_datasets() / "blitzer_mds" / "sorted_data_acl_labeled.tar.gz"


@pytest.fixture(scope="module")
def sorted_data(tmp_path_factory):
    if not ARCHIVE.is_file():
        pytest.skip(f"Blitzer archive not found at {ARCHIVE}")
    root = tmp_path_factory.mktemp("blitzer")
    with tarfile.open(ARCHIVE) as tar:
        members = [m for m in tar.getmembers()
                   if m.name.split("/")[1:2] in (["books"], ["dvd"])]
        tar.extractall(root, members=members, filter="data")
    return root / "sorted_data_acl"


def test_detected_and_read_from_folders_files_and_the_archive(sorted_data, tmp_path):
    books = sorted_data / "books"
    assert detect_format(books) == detect_format(sorted_data) == "blitzer"
    assert detect_format(books / "positive.review") == "blitzer"
    docs = list(read_inputs([books]))
    assert len(docs) == 2000 and {d.label for d in docs} == {"positive", "negative"}
    assert docs[0].source.endswith("books/negative.review") and docs[0].line == 1
    assert len(list(read_inputs([sorted_data]))) == 4000             # both domains
    unlabeled = tmp_path / "unlabeled.review"
    unlabeled.write_text("<review>\n<review_text>\nok\n</review_text>\n</review>\n")
    assert [d.label for d in read_inputs([unlabeled], labeled=False)] == [None]


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_train_on_a_domain_eval_on_another(sorted_data, tmp_path):
    model = tmp_path / "books.npz"
    out = subprocess.run([str(NBSVM), "train", str(sorted_data / "books"), "-o", str(model),
                          "-q", "--n-bits", "20"], capture_output=True, text=True, check=True)
    assert "documents: 2000" in out.stdout and "negative (1000), positive (1000)" in out.stdout
    rep = json.loads(subprocess.run([str(NBSVM), "eval", "-m", str(model),
                                     str(sorted_data / "dvd"), "--json"], capture_output=True,
                                    text=True, check=True).stdout)
    assert rep["n_docs"] == 2000 and rep["accuracy"] > 0.75          # cross-domain
    subprocess.run([str(NBSVM), "predict", str(sorted_data / "dvd" / "positive.review"), "-m",
                    str(model), "-o", str(tmp_path / "p.csv")], check=True,
                   capture_output=True)
    assert (tmp_path / "p.csv").read_text().count("\n") == 1001


@pytest.mark.slow  # make test-slow: the reader is checked on folders and files elsewhere
def test_the_archive_itself_with_format_blitzer(tmp_path):
    if not ARCHIVE.is_file():
        pytest.skip("no Blitzer archive")
    out = subprocess.run([str(NBSVM), "train", str(ARCHIVE), "--format", "blitzer", "-o",
                          str(tmp_path / "m.npz"), "-q", "--n-bits", "18", "--epochs", "2"],
                         capture_output=True, text=True, check=True)
    assert "documents: 8000" in out.stdout


def test_class_folders_of_review_files_stay_folders_and_domains_interleave(sorted_data,
                                                                         tmp_path):
    corpus = tmp_path / "corp"
    for label in ("pos", "neg"):
        (corpus / label).mkdir(parents=True)
        for i in range(3):
            (corpus / label / f"{i}.review").write_text(f"{label} words {i}")
    assert detect_format(corpus) == "folders"
    labels = [d.label for d in read_inputs([sorted_data / "books"])][:6]
    assert labels == ["negative", "positive"] * 3


def test_a_domain_folders_kept_cache_follows_its_files(sorted_data, tmp_path):
    from nbsvm.data.cachestore import input_identity
    import shutil
    domain = tmp_path / "books"
    shutil.copytree(sorted_data / "books", domain)
    before = input_identity(domain)
    text = (domain / "positive.review").read_text(encoding="utf-8", errors="replace")
    (domain / "positive.review").write_text(text[:len(text) // 2], encoding="utf-8")
    assert input_identity(domain) != before
