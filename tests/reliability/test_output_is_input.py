"""An output never replaces an input (issue 33, item 1), through the real CLI: every command
refuses an output that is the same file (device and inode, links followed) as an input, the
model, a --test file, the --init model or the lexicon it reads, or a file inside an input
folder, before it reads anything; the files it names are left byte for byte.

The CLI runs in this process (:func:`testhelpers.run_cli`, the typer app the console script
runs): each refusal is an exit status and a message, nothing a child process would change."""
import os
from pathlib import Path

import pytest

from testhelpers import run_cli as run, write_class_folders

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("same_file")
    (d / "in.txt").write_bytes((REPO / "data" / "reviews.txt").read_bytes())
    r = run("train", d / "in.txt", "--n-bits", "16", "--min-df", "1", "-q", "-o", d / "m.npz")
    assert r.returncode == 0, r.stderr
    r = run("lexicon", d / "in.txt", "--n-bits", "16", "-o", d / "lex.npz")
    assert r.returncode == 0, r.stderr
    (d / "tiny.svm").write_bytes((REPO / "data" / "tiny.svm").read_bytes())
    (d / "test.txt").write_bytes((REPO / "data" / "reviews.txt").read_bytes())
    os.symlink(d / "in.txt", d / "link.txt")
    os.symlink(d / "m.npz", d / "mlink.npz")
    return d


CASES = {
    "predict -o input": ["predict", "{d}/in.txt", "-m", "{d}/m.npz", "-o", "{d}/in.txt"],
    "predict -o model": ["predict", "{d}/in.txt", "-m", "{d}/m.npz", "-o", "{d}/m.npz"],
    "predict -o link to input": ["predict", "{d}/in.txt", "-m", "{d}/m.npz", "-o", "{d}/link.txt"],
    "predict -o input, model by link": ["predict", "{d}/in.txt", "-m", "{d}/mlink.npz",
                                        "-o", "{d}/m.npz"],
    "train -o input": ["train", "{d}/in.txt", "-o", "{d}/in.txt"],
    "train -o --test file": ["train", "{d}/in.txt", "--test", "{d}/test.txt", "-o",
                             "{d}/test.txt"],
    "train -o --init model": ["train", "{d}/in.txt", "--init", "{d}/m.npz", "-o", "{d}/m.npz"],
    "train -o --lexicon": ["train", "{d}/in.txt", "--lexicon", "{d}/lex.npz", "-o", "{d}/lex.npz"],
    "train --plot input": ["train", "{d}/in.txt", "-o", "{d}/new.npz", "--plot", "{d}/link.txt"],
    "eval -o model": ["eval", "{d}/in.txt", "-m", "{d}/m.npz", "-o", "{d}/m.npz"],
    "eval -o input": ["eval", "{d}/in.txt", "-m", "{d}/m.npz", "-o", "{d}/in.txt"],
    "explain --html model": ["explain", "-m", "{d}/m.npz", "--text", "great", "--html",
                             "{d}/m.npz"],
    "quantize -o model": ["quantize", "{d}/m.npz", "-o", "{d}/mlink.npz"],
    "lexicon -o input": ["lexicon", "{d}/in.txt", "-o", "{d}/in.txt"],
    "tune -o input": ["tune", "{d}/in.txt", "-o", "{d}/link.txt"],
    "learn -o input": ["learn", "{d}/tiny.svm", "--algorithm", "pegasos", "-o", "{d}/tiny.svm"],
    "learn -o --test file": ["learn", "{d}/tiny.svm", "--algorithm", "pegasos", "--test",
                             "{d}/test.txt", "-o", "{d}/test.txt"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_output_that_is_a_read_file_is_refused(d, case):
    before = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.is_symlink()}
    args = [a.format(d=d) for a in CASES[case]]
    r = run(*args)
    assert r.returncode == 2, (case, r.stdout, r.stderr)
    assert "of this command: writing it would replace what is read" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    after = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.is_symlink()}
    assert after == before, case


def test_an_output_inside_an_input_folder_is_refused(tmp_path):
    corpus = tmp_path / "corpus"
    write_class_folders(corpus)
    target = corpus / "pos" / "0.txt"
    r = run("train", corpus, "-o", target, "--min-df", "1", "-q")
    assert r.returncode == 2 and "is an input" in r.stderr, r.stderr
    assert target.read_text() == "pos review number 0"


@pytest.mark.parametrize("command", ["train", "lexicon"])
def test_an_output_named_dash_is_refused_not_written_over_a_file_named_dash(tmp_path, command,
                                                                            monkeypatch):
    """'-' is standard input when read and was a file named '-' when written (predict's
    -o - alone is standard output): `train ./- -o -` replaced the training data by the
    model. Refused, the file left as it was; ./- names such a file, checked as any."""
    data = tmp_path / "-"
    data.write_bytes((REPO / "data" / "reviews.txt").read_bytes())
    before = data.read_bytes()
    monkeypatch.chdir(tmp_path)
    r = run(command, "./-", "-o", "-", "-q")
    assert r.returncode == 2 and "--output -: this output is a file, not standard output" \
        in r.stderr, r.stderr
    assert data.read_bytes() == before
    if command == "train":
        r = run(command, "./-", "-o", "./-", "-q")
        assert r.returncode == 2 and "is an input" in r.stderr, r.stderr
    assert data.read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(d):
    r = run("eval", d / "in.txt", "-m", d / "m.npz", "-o", d / "r.png", "--plot", d / "r.png")
    assert r.returncode == 2 and "name the same file" in r.stderr, r.stderr
    assert not (d / "r.png").exists()


def test_other_outputs_are_still_written(d, tmp_path):
    """The check refuses only what is read: a new file and an unrelated old one are
    written as before."""
    old = tmp_path / "old.csv"
    old.write_text("old\n")
    for out in (tmp_path / "new.csv", old):
        r = run("predict", d / "in.txt", "-m", d / "m.npz", "-o", out, "-q")
        assert r.returncode == 0, r.stderr
        assert out.read_text().startswith("source,line,true_label,label")


def test_the_same_column_for_text_and_label_is_refused_before_the_model_loads(d):
    """``--text-col 2 --label-col 2`` (issue 33, item 12): refused on the command line, even
    when the model named does not exist, with one line and no traceback."""
    for args in (["predict", d / "in.txt", "-m", d / "missing.npz"],
                 ["eval", d / "in.txt", "-m", d / "missing.npz"],
                 ["lexicon", d / "in.txt", "-o", d / "lex2.npz"],
                 ["tune", d / "in.txt"]):
        r = run(*args, "--format", "csv", "--text-col", "2", "--label-col", "2")
        assert r.returncode == 2, (args, r.stderr)
        assert "--text-col and --label-col both name column '2'" in r.stderr
        assert "Traceback" not in r.stderr and "missing.npz" not in r.stderr


@pytest.mark.parametrize("command", [
    ["learn", "{repo}/data/tiny.svm", "-o", "{out}", "--test", "{out}"],
    ["train", "{repo}/data/reviews.txt", "-o", "{out}", "--test", "{out}", "--n-bits", "16"],
])
def test_a_new_output_named_as_a_file_the_command_reads_is_refused(tmp_path, command):
    """The output did not exist yet: learn trained, saved the model, then read it back as
    its --test file ('expected a label first, found feature PK...')."""
    out = tmp_path / "m.npz"
    r = run(*[a.format(repo=REPO, out=out) for a in command])
    assert r.returncode == 2 and "it would then be read" in r.stderr, r.stderr
    assert not out.exists()
