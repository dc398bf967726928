"""SIGTERM and SIGHUP clean up as Ctrl-C does (issue 33, item 10), through the real CLI:
predict's hidden partial output beside ``-o``, train's feature cache under the temporary
folder and ``datasets get``'s unpacking folder are removed, an earlier output stays as it
was, and the exit status is the signal's (128 + signum) with one line and no traceback."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import shared_datasets
from testhelpers import write_long_corpus

NBSVM = Path(sys.executable).parent / "nbsvm"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """``big.txt``, a corpus that takes a while to train on or predict, and ``m.npz``, a
    model to predict with (trained on its first 600 documents: a model of the whole takes
    longer to make and predicts no slower or faster)."""
    d = tmp_path_factory.mktemp("terminate")
    write_long_corpus(d / "big.txt", n_docs=6000, signal=False)
    with open(d / "big.txt", encoding="utf-8") as fh:
        (d / "head.txt").write_text("".join(line for _, line in zip(range(600), fh)),
                                    encoding="utf-8")
    r = subprocess.run([str(NBSVM), "train", str(d / "head.txt"), "-o", str(d / "m.npz"),
                        "--n-bits", "16", "--epochs", "1", "-q"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return d


def _size(path) -> int:
    """A file's size; 0 once it is gone (the command's own probe and temporary files come
    and go between listing the folder and reading their size)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except FileNotFoundError:
        return 0


def _signal_when(proc, ready, signum, seconds=60):
    """Send ``signum`` once ``ready()`` holds (the command is in the middle of its work)."""
    deadline = time.monotonic() + seconds
    while not ready():
        assert proc.poll() is None, "the command ended before it could be signalled"
        assert time.monotonic() < deadline, "the command never reached the point to signal"
        time.sleep(0.02)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_predict_removes_its_partial_output(corpus, tmp_path, signum):
    out = tmp_path / "predictions.csv"
    out.write_text("earlier predictions\n")
    big = tmp_path / "big.txt"
    for _ in range(8):              # long enough to be caught while writing
        with open(big, "ab") as fh:
            fh.write((corpus / "big.txt").read_bytes())
    proc = subprocess.Popen([str(NBSVM), "predict", str(big), "-m", str(corpus / "m.npz"),
                             "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)

    def partial_written():
        return any(p.name != out.name and _size(p) > 0 for p in tmp_path.iterdir()
                   if p.name.startswith(".predictions.csv."))
    code, _, err = _signal_when(proc, partial_written, signum)
    assert code == 128 + signum, (code, err)
    assert "terminated" in err and "Traceback" not in err, err
    assert out.read_text() == "earlier predictions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt", "predictions.csv"]


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_train_removes_its_cache_from_the_temporary_folder(corpus, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([str(NBSVM), "train", str(corpus / "big.txt"), "-o",
                             str(tmp_path / "m.npz"), "--n-bits", "18", "--epochs", "5000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    code, out, err = _signal_when(proc, lambda: any(tmp.rglob("*")) and
                                  sum(_size(p) for p in tmp.rglob("*"))
                                  > 1 << 20, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, (code, err)
    assert "Traceback" not in err
    assert list(tmp.iterdir()) == []
    assert not (tmp_path / "m.npz").exists()
    assert not list(tmp_path.glob(".m.npz*"))


@pytest.mark.slow  # over 1.5 s (make test-slow; CI runs it after make test)
@pytest.mark.skipif(not (shared_datasets() / "imdb").is_dir(), reason="no shared IMDB archive")
def test_datasets_get_removes_its_unpacking_folder(tmp_path):
    # IMDB unpacks beside the --data folder (its archive holds aclImdb/); others inside it
    data = tmp_path / "data"
    proc = subprocess.Popen([str(NBSVM), "datasets", "get", "imdb", "--data", str(data)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def unpacking():
        return any(any(p.rglob("*.txt")) for p in tmp_path.rglob(".nbsvm-unpack-*"))
    code, _, err = _signal_when(proc, unpacking, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, (code, err)
    assert "Traceback" not in err
    assert not list(tmp_path.rglob(".nbsvm-unpack-*"))
    marker = data / "aclImdb" / ".nbsvm-prepared"  # not prepared: at most the mark of an
    assert not marker.exists() or marker.read_text() == "unpacking\n"  # unpack to take up
