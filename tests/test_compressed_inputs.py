"""Compressed inputs are read by their suffix (.gz, .bz2, .xz), and a file whose first bytes
say it is compressed under another name, an archive or not text is refused: read as lines,
an .xz file trained a model whose classes were bytes of compressed data, with exit 0."""
import bz2
import gzip
import re
import lzma
import subprocess
import sys
from pathlib import Path

import pytest

from nbsvm.errors import NBSVMError
from nbsvm.io import read_inputs

NBSVM = Path(sys.executable).parent / "nbsvm"
REVIEWS = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"


def _docs(path, **kw):
    return [(d.label, d.text) for d in read_inputs([str(path)], **kw)]


@pytest.mark.parametrize("suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress),
                                              (".xz", lzma.compress), (".XZ", lzma.compress)])
def test_compressed_files_read_as_their_text(tmp_path, suffix, compress):
    path = tmp_path / f"reviews.txt{suffix}"
    path.write_bytes(compress(REVIEWS.read_bytes()))
    assert _docs(path) == _docs(REVIEWS)
    assert _docs(path, labeled=False, fmt="plain-lines") == _docs(REVIEWS, labeled=False, fmt="plain-lines")


@pytest.mark.parametrize("head, says", [
    (gzip.compress(b"pos\tgood\n", mtime=0), "gzip-compressed data: name it .gz"),
    (bz2.compress(b"pos\tgood\n"), "bzip2-compressed data: name it .bz2"),
    (lzma.compress(b"pos\tgood\n"), "xz-compressed data: name it .xz"),
    (b"PK\x03\x04\x14\x00\x00\x00", "a zip archive"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "a PNG image"),
], ids=["gzip", "bzip2", "xz", "zip", "png"])  # fixed names: every xdist worker collects the same
def test_files_that_are_not_text_are_refused_saying_what_they_are(tmp_path, head, says):
    path = tmp_path / "data.txt"
    path.write_bytes(head)
    with pytest.raises(NBSVMError, match=f"data.txt: not a text file: {says}"):
        _docs(path)


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz"])
def test_a_tar_archive_is_named_as_one(tmp_path, suffix):
    """Blitzer's sorted_data_acl_labeled.tar.gz given without --format blitzer was 'looks
    like UTF-16 or UTF-32 text without a byte order mark ... iconv'."""
    import io
    import tarfile
    folder = tmp_path / "pos"
    folder.mkdir()
    (folder / "a.txt").write_text("a great film\n")
    path = tmp_path / f"data{suffix}"
    with tarfile.open(path, "w:gz" if suffix.endswith("gz") else "w") as tar:
        tar.add(folder, arcname="pos")
    with pytest.raises(NBSVMError, match=f"data{re.escape(suffix)}: not a text file: a tar "
                                         "archive: extract it first .*--format blitzer"):
        _docs(path)


@pytest.mark.parametrize("text", ["BZh\tthe label is BZh\nPKx\tand this one PKx\n",
                                  "%PDF-1.7\tfiles are great\nBZh9\tis a nice header\n",
                                  "BZh9\tis a nice header, caf\u00e9\n"])
def test_text_that_starts_like_a_signature_is_still_text(tmp_path, text):
    path = tmp_path / "sig.txt"
    path.write_text(text, encoding="utf-8")
    assert _docs(path) == [tuple(line.split("\t")) for line in text.splitlines()]


@pytest.mark.slow  # make test-slow: compressed files are read elsewhere
def test_pipes_are_read_whole_and_compressed_standard_input_is_refused(tmp_path):
    """The check read a pipe's first block from a second open and the reader lost it:
    predict on <(cat file) dropped documents, with exit 0."""
    model = tmp_path / "m.npz"
    subprocess.run([str(NBSVM), "train", str(REVIEWS), "--n-bits", "16", "-o", str(model), "-q"],
                   check=True, capture_output=True)
    big = tmp_path / "big.txt"
    big.write_bytes(REVIEWS.read_bytes() * 50)      # 2,000 documents, several pipe buffers
    for command in (f"{NBSVM} predict -m {model} - < {big}",
                    f"cat {big} | {NBSVM} predict -m {model} /dev/stdin",
                    f"{NBSVM} predict -m {model} <(cat {big})"):
        out = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
        assert out.returncode == 0, (command, out.stderr)
        assert len(out.stdout.splitlines()) == 2001, command
    out = subprocess.run(["bash", "-c", f"gzip -c {REVIEWS} | {NBSVM} predict -m {model} -"],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "<stdin>: not a text file: gzip" in out.stderr, out.stderr


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_model_given_as_input_is_refused(tmp_path):
    model = tmp_path / "m.npz"
    subprocess.run([str(NBSVM), "train", str(REVIEWS), "--n-bits", "16", "-o", str(model), "-q"],
                   check=True, capture_output=True)
    copy = tmp_path / "test.txt"
    copy.write_bytes(model.read_bytes())
    out = subprocess.run([str(NBSVM), "eval", str(copy), "-m", str(model)], capture_output=True,
                         text=True)
    assert out.returncode != 0 and "not a text file: a zip archive" in out.stderr, out.stderr
