"""``--max-memory`` bounds the measured peak (issue 17, item 8), on the real 20 Newsgroups
corpus (20 classes): the hashing pass is checked before it starts, the counts by kept column
and the learner once the classes and kept buckets are known; the peak resident memory of the
process (``wait4``) stays under the limit whether the run is refused or finishes."""
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
            if n and parts[0] != "20news-bydate-train":
                break           # past the training part (listed first): the rest is test
            if member.isfile() and len(parts) == 3 and parts[0] == "20news-bydate-train":
                text = tar.extractfile(member).read().decode("latin-1")
                fh.write(f"{parts[1]}\t{' '.join(text.split())}\n")
                n += 1
    assert n == 11314
    return out


# wait4 in a small helper process: a child's peak RSS includes, across exec, the RSS of the
# process it was forked from, which here would be the whole pytest process
_PEAK = ("import os, subprocess, sys\n"
         "p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, "
         "stderr=open(sys.argv[1], 'w'))\n"
         "_, status, usage = os.wait4(p.pid, 0)\n"
         "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)\n")


def peak_run(args, tmp_path) -> tuple[int, str, int]:
    """Run ``nbsvm args``; return (exit code, stderr, peak RSS in bytes from wait4)."""
    err = tmp_path / "stderr.txt"
    out = subprocess.run([sys.executable, "-c", _PEAK, str(err), str(NBSVM), *map(str, args)],
                         capture_output=True, text=True, check=True, timeout=900)
    code, peak = map(int, out.stdout.split())
    return code, err.read_text(), peak


@pytest.mark.parametrize("limit_mb, message", [
    # before reading: the hashing pass needs one int32 row of 2**24 (64 MB) beside the
    # fixed part
    (250, "the hashing pass needs about 368.0 MB, over --max-memory 250.0 MB"),
    # after the pass: 20 classes x 1.08M kept columns, the map and the learner (counts in
    # its weights) do not fit; refused before either is allocated
    (420, "training needs about 475.2 MB, over --max-memory 420.0 MB"),
])
@pytest.mark.slow  # make test-slow: one long document refused under the limit is another test
def test_refused_under_the_limit(newsgroups_train, tmp_path, limit_mb, message):
    code, err, peak = peak_run(["train", newsgroups_train, "-o", tmp_path / "m.npz", "-q",
                                "--max-memory", f"{limit_mb}M"], tmp_path)
    assert code == 2, err
    assert message in err, err
    assert peak <= limit_mb << 20, peak
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_a_run_within_the_limit_stays_under_it(newsgroups_train, tmp_path):
    # the default trigrams, 20 classes: counted by kept column, not by 2**24 buckets
    limit = 560 << 20
    code, err, peak = peak_run(["train", newsgroups_train, "-o", tmp_path / "m.npz", "-q",
                                "--epochs", "1", "--max-memory", "560M"], tmp_path)
    assert code == 0, err
    assert peak <= limit, peak
    # and the estimate is not far above what was used (the bound is useful, not lavish)
    assert peak > 0.7 * limit, peak


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_one_long_document_is_refused_before_its_hashing_scratch(tmp_path):
    """Hashing a document takes scratch about 20 times its bytes: a 54 MB line peaked at
    870 MB under --max-memory 400M. It is refused, naming its line, before that scratch
    exists; within the limit it trains and the peak stays under it."""
    import random

    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 8)))
             for _ in range(20_000)]
    long_text = " ".join(rng.choices(words, k=1_500_000))   # 8 MB (one call draws them all)
    data = tmp_path / "long.txt"
    data.write_text(f"pos\tgood film\nneg\t{long_text}\nneg\tbad film\npos\tfine\n")
    args = ["train", data, "-o", tmp_path / "m.npz", "--n-bits", "16", "-q"]
    # (refused as it is read: a line over a twentieth of --max-memory less a run's 240 MB)
    code, err, peak = peak_run([*args, "--max-memory", "300M"], tmp_path)
    assert code == 2 and f"{data}:2: a line of more than 3.0 MB, a twentieth of --max-memory " \
        "less the 240.0 MB a run holds" in err, err
    assert peak < 300 * 2**20 and not (tmp_path / "m.npz").exists()
    code, err, peak = peak_run([*args, "--max-memory", "500M"], tmp_path)
    assert code == 0 and peak < 500 * 2**20, (err, peak)


@pytest.mark.parametrize("multilabel", [False, True])
def test_a_lexicon_of_many_classes_is_refused_before_its_counts_are_laid_out(
        tmp_path, monkeypatch, multilabel):
    # with --lexicon the counts of every class over the kept buckets were built first
    # (2,000 labels: 2 GB, or a MemoryError) and --max-memory refused after them
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.models import columns
    from testhelpers import run_cli
    rows = [f"{f'L{i % 40},L{(i + 7) % 40}' if multilabel else f'c{i % 40}'}\tw{i} w{i * 7} w{i % 13}"
            for i in range(400)]
    src = tmp_path / "d.txt"
    src.write_text("\n".join(rows) + "\n")
    assert run_cli("lexicon", src, "-o", tmp_path / "lex.npz", "-q").returncode == 0
    calls = []
    monkeypatch.setattr(NBLexicon, "compact", lambda *a, **k: calls.append("compact"))
    monkeypatch.setattr(columns, "label_set_counts", lambda *a, **k: calls.append("sets"))
    args = ["train", src, "--lexicon", tmp_path / "lex.npz", "-o", tmp_path / "m.npz", "-q",
            "--max-memory", "150M", *(["--multilabel"] if multilabel else [])]
    r = run_cli(*args)
    assert r.returncode == 2 and "over --max-memory 150.0 MB" in r.stderr, r.stderr
    assert calls == [] and not (tmp_path / "m.npz").exists()
