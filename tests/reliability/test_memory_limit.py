"""``--max-memory`` bounds the measured peak (issue 17, item 8), on the real 20 Newsgroups
corpus (20 classes): the lexicon pass is checked before it starts and before each new class
gets its count row, the learner once the kept buckets are known; the peak resident memory
of the process (``wait4``) stays under the limit whether the run is refused or finishes."""
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import shared_datasets

NBSVM = Path(sys.executable).parent / "nbsvm"
ARCHIVE = shared_datasets() / "20newsgroups" / "20news-bydate.tar.gz"
GiB = 1 << 30


@pytest.fixture(scope="module")
def newsgroups_train(tmp_path_factory) -> Path:
    """20news-bydate-train as ``group<TAB>message`` lines (latin-1, white space folded)."""
    if not ARCHIVE.is_file():
        pytest.skip(f"20 Newsgroups not found at {ARCHIVE}")
    out = tmp_path_factory.mktemp("20ng") / "train.tsv"
    n = 0
    with tarfile.open(ARCHIVE, "r:gz") as tar, open(out, "w", encoding="utf-8") as fh:
        for member in tar:
            parts = member.name.split("/")
            if member.isfile() and len(parts) == 3 and parts[0] == "20news-bydate-train":
                text = tar.extractfile(member).read().decode("latin-1")
                fh.write(f"{parts[1]}\t{' '.join(text.split())}\n")
                n += 1
    assert n == 11314
    return out


def peak_run(args, tmp_path) -> tuple[int, str, int]:
    """Run ``nbsvm args``; return (exit code, stderr, peak RSS in bytes from wait4)."""
    err = tmp_path / "stderr.txt"
    with open(err, "w") as fh:
        proc = subprocess.Popen([str(NBSVM), *map(str, args)], stdout=subprocess.DEVNULL,
                                stderr=fh)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, err.read_text(), usage.ru_maxrss * 1024


def test_refused_during_the_lexicon_pass_under_the_limit(newsgroups_train, tmp_path):
    code, err, peak = peak_run(["train", newsgroups_train, "-o", tmp_path / "m.npz", "-q",
                                "--max-memory", "1G"], tmp_path)
    assert code == 2, err
    # stopped at the class whose count row would cross the limit, before allocating it
    assert "counting 13 classes needs about 1.0 GB, over --max-memory 1.0 GB" in err, err
    assert peak <= 1 * GiB, peak
    assert not (tmp_path / "m.npz").exists()


def test_a_run_within_the_limit_stays_under_it(newsgroups_train, tmp_path):
    limit = 1.6 * GiB
    code, err, peak = peak_run(["train", newsgroups_train, "-o", tmp_path / "m.npz", "-q",
                                "--ngrams", "1", "--epochs", "1", "--max-memory", "1.6G"],
                               tmp_path)
    assert code == 0, err
    assert peak <= limit, peak
    # and the estimate is not far above what was used (the bound is useful, not lavish)
    assert peak > 0.75 * limit, peak


def test_the_learner_check_refuses_after_the_pass_under_the_limit(newsgroups_train, tmp_path):
    # 20 count rows (1.25 GB + fixed) fit under 1.5G; the learner beside them does not
    code, err, peak = peak_run(["train", newsgroups_train, "-o", tmp_path / "m.npz", "-q",
                                "--max-memory", "1.5G"], tmp_path)
    assert code == 2, err
    assert "training needs about" in err and "over --max-memory 1.5 GB" in err, err
    assert peak <= 1.5 * GiB, peak
