"""The one module that knows every corpus (issue 19): its figures against each corpus's
README and file, unpacking, the document loaders, the fixtures in data/, and
``nbsvm datasets`` on real data."""
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO
from nbsvm import datasets
from nbsvm.errors import NBSVMError

NBSVM = Path(sys.executable).parent / "nbsvm"
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([\d,]+)\s*\|\s*`([0-9a-f]{64})`\s*\|")


def readme_figures(folder: Path) -> dict:
    """``{file: (bytes, sha256)}`` from a README's table rows ``| `file` | bytes | `sha` |``."""
    out = {}
    for line in (folder / "README.md").read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            out[m.group(1)] = (int(m.group(2).replace(",", "")), m.group(3))
    return out


@pytest.mark.parametrize("name", sorted(datasets.CORPORA))
def test_the_module_agrees_with_each_readme_and_file(name):
    corpus = datasets.CORPORA[name]
    folder = datasets.shared_root() / corpus.folder
    if not folder.is_dir():
        pytest.skip(f"no shared folder {folder}")
    figures = readme_figures(folder)
    for file, (size, sha) in corpus.files.items():
        assert figures[file] == (size, sha), (name, file)      # the README's own figures
        path = datasets.archive(name, file)                     # and the file matches them
        assert path.stat().st_size == size and datasets.sha256_of(path) == sha


def test_a_damaged_archive_is_refused_naming_it(tmp_path, monkeypatch):
    if not datasets.available("iris"):
        pytest.skip("no shared iris")
    (tmp_path / "iris").mkdir()
    good = datasets.archive("iris").read_bytes()
    (tmp_path / "iris" / "iris.data.gz").write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    monkeypatch.setenv("NBSVM_SHARED_DATASETS", str(tmp_path))
    with pytest.raises(NBSVMError, match="iris.data.gz.*sha256 mismatch"):
        datasets.archive("iris")
    with pytest.raises(datasets.MissingCorpus, match="mpqa.tar.gz not found"):
        datasets.archive("mpqa")
    with pytest.raises(NBSVMError, match="unknown corpus 'imbd'"):
        datasets.corpus("imbd")


def test_prepare_unpacks_once(tmp_path):
    if not datasets.available("mpqa"):
        pytest.skip("no shared mpqa")
    root = datasets.prepare("mpqa", tmp_path)
    assert sorted(p.name for p in root.iterdir()) == [".nbsvm-prepared", "mpqa.neg", "mpqa.pos"]
    assert sum(1 for _ in open(root / "mpqa.pos", "rb")) == 3312
    before = (root / "mpqa.pos").stat().st_mtime_ns
    assert datasets.prepare("mpqa", tmp_path) == root
    assert (root / "mpqa.pos").stat().st_mtime_ns == before          # not unpacked again


@pytest.mark.parametrize("name, part, n, classes", [
    ("subj", None, 10000, {"objective": 5000, "subjective": 5000}),
    ("rt_polarity_2k", None, 2000, {"pos": 1000, "neg": 1000}),
    ("blitzer", "kitchen_&_housewares", 2000, {"positive": 1000, "negative": 1000}),
    ("20newsgroups", "test", 7532, None),
])
@pytest.mark.slow  # make test-slow: the archives' readers on every corpus; datasets get runs elsewhere
def test_documents_from_the_archives(name, part, n, classes):
    if not datasets.available(name):
        pytest.skip(f"no shared {name}")
    docs = list(datasets.documents(name, part, encoding="latin-1"))
    counts = Counter(d.label for d in docs)
    assert len(docs) == n and (classes is None or dict(counts) == classes)
    if name == "20newsgroups":
        assert len(counts) == 20
    assert all(d.text and d.source for d in docs[:50])


def test_fixtures_are_tracked_and_no_corpus_is():
    tracked = subprocess.run(["git", "ls-files", "data"], cwd=REPO, capture_output=True,
                             text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    assert sorted(tracked.stdout.split()) == ["data/README.md", "data/reviews.txt",
                                              "data/tags.txt", "data/tiny.svm",
                                              "data/topics.txt", "data/zh_reviews.txt"]
    for name in ("reviews.txt", "topics.txt", "tags.txt", "tiny.svm", "zh_reviews.txt"):
        assert datasets.fixture(name).stat().st_size < 8192


def test_cli_on_the_fixtures_and_the_list(tmp_path):
    """The quickstart of data/README.md: every fixture trains (the first as the installed
    command, the others in this process: no interpreter start each)."""
    from testhelpers import run_cli
    subprocess.run([str(NBSVM), "train", str(datasets.fixture("reviews.txt")), "--ngrams", "2",
                    "-o", str(tmp_path / "r.npz"), "--n-bits", "16", "-q"], check=True,
                   capture_output=True)
    runs = [["train", str(datasets.fixture("topics.txt")), "-o", str(tmp_path / "t.npz"),
             "--n-bits", "16", "-q"],
            ["train", str(datasets.fixture("tags.txt")), "--multilabel", "-o",
             str(tmp_path / "g.npz"), "--n-bits", "16", "-q"],
            ["learn", str(datasets.fixture("tiny.svm")), "--algorithm", "pegasos", "-o",
             str(tmp_path / "s.npz"), "-q"]]
    for args in runs:
        done = run_cli(*args)
        assert done.returncode == 0, (args, done.stderr)
    evaluated = run_cli("eval", "-m", tmp_path / "r.npz", datasets.fixture("reviews.txt"), "--json")
    assert json.loads(evaluated.stdout)["accuracy"] == 1.0     # it fits its own 40 reviews
    rows = json.loads(run_cli("datasets", "list", "--json").stdout)
    assert sorted(r["name"] for r in rows) == sorted(datasets.CORPORA)
    assert all(r["citation"] and r["licence"] for r in rows)
    # names and --data were accepted and ignored: every corpus was listed (in process)
    from typer.testing import CliRunner
    from nbsvm.cli import app
    listed = lambda *given: CliRunner().invoke(app, ["datasets", "list", *given, "--json"])  # noqa: E731
    assert [r["name"] for r in json.loads(listed("subj", "iris").stdout)] == ["iris", "subj"]
    for given, n in ((["all"], len(datasets.CORPORA)), (["iris", "iris"], 1)):
        assert len(json.loads(listed(*given).stdout)) == n, given
    for extra in (["imbd"], ["--data", str(tmp_path)]):
        bad = listed(*extra)
        assert bad.exit_code == 2 and ("unknown corpus" in bad.output or "--data" in bad.output)
    if datasets.available("iris"):
        out = subprocess.run([str(NBSVM), "datasets", "get", "iris", "--data", str(tmp_path)],
                             check=True, capture_output=True, text=True).stdout
        assert "sha256 checked" in out and "cite: R. A. Fisher" in out
        assert (tmp_path / "iris" / "iris.data").stat().st_size == 4551
    bad = subprocess.run([str(NBSVM), "datasets", "get", "imbd"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "unknown corpus 'imbd'" in bad.stderr


@pytest.mark.skipif(not datasets.available("iris"), reason="no shared iris archive")
def test_get_unpacks_again_what_went_missing_or_changed(tmp_path):
    """A marker is not trusted alone (issue 33, item 11): a deleted or cut file is unpacked
    again, through the CLI, and said."""
    nbsvm = Path(sys.executable).parent / "nbsvm"
    get = [str(nbsvm), "datasets", "get", "iris", "--data", str(tmp_path)]
    assert subprocess.run(get, capture_output=True, text=True).returncode == 0
    data = tmp_path / "iris" / "iris.data"
    whole = data.read_bytes()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def linked():  # a link to a folder: replaced, the folder it names kept (was an OSError)
        data.unlink()
        data.symlink_to(elsewhere, target_is_directory=True)

    for damage in (data.unlink, lambda: data.write_bytes(whole[:100]), linked):
        damage()
        r = subprocess.run(get, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert f"{data} is missing or changed: unpacking iris again" in r.stdout
        assert data.read_bytes() == whole
    assert elsewhere.is_dir() and not data.is_symlink()
    r = subprocess.run(get, capture_output=True, text=True)
    assert r.returncode == 0 and "unpacking" not in r.stdout      # whole: left as it is


def test_get_into_a_file_is_a_clear_error(tmp_path):
    nbsvm = Path(sys.executable).parent / "nbsvm"
    afile = tmp_path / "afile"
    afile.write_text("mine")
    r = subprocess.run([str(nbsvm), "datasets", "get", "iris", "--data", str(afile)],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert f"{afile}: is not a folder: --data needs a folder" in r.stderr
    assert "Errno" not in r.stderr and "Traceback" not in r.stderr
    assert afile.read_text() == "mine"


def test_get_into_a_link_loop_is_a_clear_error(tmp_path):
    """--data through a loop of links said the bare OSError ('error: OSError: [Errno 40]')."""
    nbsvm = Path(sys.executable).parent / "nbsvm"
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for data in (tmp_path / "a", tmp_path / "a" / "sub"):
        r = subprocess.run([str(nbsvm), "datasets", "get", "iris", "--data", str(data)],
                           capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
        assert (f"{data / 'iris'}: cannot make the corpus's folder (Too many levels of symbolic "
                "links): --data names a folder nbsvm can write in") in r.stderr
        assert "Errno" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_get_never_deletes_what_nbsvm_did_not_unpack(tmp_path):
    """A folder of the corpus's name that nbsvm did not make (no marker) was deleted and
    replaced, the user's own files in it with it (exit 0); unpacking again replaced whole
    folders, a file the user had put beside the corpus's went too."""
    if not datasets.available("rt_polarity_2k"):
        pytest.skip("no shared rt_polarity_2k")
    nbsvm = Path(sys.executable).parent / "nbsvm"
    get = [str(nbsvm), "datasets", "get", "rt_polarity_2k", "--data", str(tmp_path)]
    mine = tmp_path / "rt_polarity_2k" / "txt_sentoken" / "unsup" / "r1.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("my review")
    r = subprocess.run(get, capture_output=True, text=True)
    assert r.returncode == 2 and "was not unpacked by nbsvm" in r.stderr, r.stderr
    assert "move it away or give another --data" in r.stderr
    assert mine.read_text() == "my review" and sorted(mine.parent.parent.iterdir()) == [mine.parent]
    mine.unlink()
    mine.parent.rmdir()
    assert subprocess.run(get, capture_output=True, text=True).returncode == 0
    corpus = tmp_path / "rt_polarity_2k" / "txt_sentoken"
    notes = corpus / "NOTES.md"
    notes.write_text("mine")
    review = next((corpus / "pos").iterdir())
    whole = review.read_bytes()
    review.write_bytes(whole[:10])  # damaged: unpacked again, the notes kept
    r = subprocess.run(get, capture_output=True, text=True)
    assert r.returncode == 0 and "unpacking rt_polarity_2k again" in r.stdout, r.stderr
    assert review.read_bytes() == whole and notes.read_text() == "mine"
    assert "NOTES.md" not in (tmp_path / "rt_polarity_2k" / ".nbsvm-prepared").read_text()
    r = subprocess.run(get, capture_output=True, text=True)
    assert r.returncode == 0 and "unpacking" not in r.stdout
    (corpus / "pos").rename(tmp_path / "pos")  # a file in the way of a corpus folder: refused
    (corpus / "pos").write_text("in the way")
    r = subprocess.run(get, capture_output=True, text=True)
    assert r.returncode == 2 and "is in the way of the corpus's folder" in r.stderr
    assert (corpus / "pos").read_text() == "in the way"


def test_an_unpack_cut_short_is_taken_up_and_a_linked_folder_is_followed(tmp_path, monkeypatch):
    """An unpack that stopped half way (a missing archive, a full disk, SIGTERM) left a
    folder without nbsvm's marker, refused by every later get as not nbsvm's; a corpus
    folder that is a link to another disk was refused too (it was unpacked through)."""
    if not datasets.available("iris"):
        pytest.skip("no shared iris")
    real = datasets._unpack

    def fails(path, dest):
        real(path, dest)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(datasets, "_unpack", fails)
    with pytest.raises(OSError):
        datasets.prepare("iris", tmp_path / "d")
    monkeypatch.setattr(datasets, "_unpack", real)
    root = datasets.prepare("iris", tmp_path / "d")  # taken up again
    assert (root / "iris.data").stat().st_size > 0
    assert "unpacking" not in (root / ".nbsvm-prepared").read_text()
    elsewhere = tmp_path / "bigdisk" / "iris"
    elsewhere.mkdir(parents=True)
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "iris").symlink_to(elsewhere, target_is_directory=True)
    root = datasets.prepare("iris", tmp_path / "e")
    assert (root / "iris.data").is_file() and (elsewhere / "iris.data").is_file()
    assert (tmp_path / "e" / "iris").is_symlink()


def test_get_says_a_full_or_closed_standard_output_as_every_command_does(tmp_path):
    """A review: the unpack's OSError handling took standard output's own errors ('cannot
    unpack iris (No space left on device)' for > /dev/full, an error for a closed pipe)."""
    nbsvm = Path(sys.executable).parent / "nbsvm"
    get = [str(nbsvm), "datasets", "get", "iris", "--data"]
    with open("/dev/full", "w") as full:
        r = subprocess.run([*get, str(tmp_path / "a")], stdout=full, stderr=subprocess.PIPE,
                           text=True)
    assert r.returncode == 120, r.stderr
    assert "could not write the output (standard output): No space left" in r.stderr
    p = subprocess.Popen([*get, str(tmp_path / "b")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # nobody reads: the first line meets a closed pipe
    # SIGPIPE, as the shell says 141 (`| head`), with nothing said
    assert p.wait(timeout=60) in (-13, 141) and p.stderr.read() == ""
