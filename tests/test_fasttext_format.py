"""fastText's ``__label__NAME text`` lines as an input format (issue 18, item 8): parsed as
fastText reads them, and a corpus in that format trains the same model as the same corpus
in ``label<TAB>text`` lines."""
import functools
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from testhelpers import run_cli

from nbsvm import NBSVMClassifier
from nbsvm.io import read_inputs
from nbsvm.io.fasttext import read_fasttext
from testhelpers import check_bad_line

NBSVM = Path(sys.executable).parent / "nbsvm"


def test_labels_are_the_leading_label_words():
    text = ("__label__pos a great film\n\n"
            "__label__sports __label__news  the match, today  \n"
            "__label__x   __label__x\tdup\n")
    docs = list(read_fasttext(io.StringIO(text)))
    assert [(d.label, d.text, d.line) for d in docs] == [
        ("pos", "a great film", 1), ("news,sports", "the match, today", 3), ("x", "dup", 4)]


@pytest.mark.parametrize("line, says", [
    ("no label here", "found no __label__ at the start of the line"),
    ("__label__ empty", "an empty label"),
])
def test_malformed_lines_name_file_and_line(line, says):
    docs = check_bad_line(read_fasttext, "__label__a fine\n", line, says)
    assert [d.label for d in docs] == ["a"]


def test_unlabeled_lines_are_documents_when_predicting():
    docs = list(read_inputs([io.StringIO("__label__a one\ntwo three\n")], fmt="fasttext",
                            labeled=False))
    assert [(d.label, d.text) for d in docs] == [("a", "one"), (None, "two three")]


@pytest.mark.slow  # make test-slow: the reader of fastText lines is checked in process
def test_the_cli_trains_the_same_model_from_fasttext_lines(imdb_slice, tmp_path):
    """The IMDB slice written both ways: the two models score the test reviews the same."""
    tab, ft = tmp_path / "train.tsv", tmp_path / "train.ft"
    docs = list(read_inputs([str(imdb_slice / "train")]))
    with open(tab, "w", encoding="utf-8") as a, open(ft, "w", encoding="utf-8") as b:
        for d in docs:
            text = " ".join(d.text.split())
            a.write(f"{d.label}\t{text}\n")
            b.write(f"__label__{d.label} {text}\n")
    models = {}
    for name, path, fmt in (("tab", tab, "labeled-lines"), ("ft", ft, "fasttext")):
        models[name] = tmp_path / f"{name}.npz"
        r = subprocess.run([str(NBSVM), "train", str(path), "--format", fmt, "--n-bits", "18",
                            "-o", str(models[name]), "-q"], capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr
    test = [d.text for d in read_inputs([str(imdb_slice / "test")])][:300]
    a, b = (NBSVMClassifier.load(models[k]) for k in ("tab", "ft"))
    np.testing.assert_array_equal(a.decision_function(test), b.decision_function(test))
    assert a.score(test, [d.label for d in read_inputs([str(imdb_slice / "test")])][:300]) > 0.8


def test_a_fasttext_file_read_as_labeled_lines_names_its_format(tmp_path):
    """The error said 'found no TAB ... --format plain-lines', never --format fasttext."""
    from nbsvm import NBSVMError
    path = tmp_path / "g.ft"
    path.write_text("__label__pos good fun\n__label__neg bad\n")
    with pytest.raises(NBSVMError, match=r"g.ft:1: .*found a fastText line .*--format fasttext"):
        list(read_inputs([path]))
    assert [d.label for d in read_inputs([path], fmt="fasttext")] == ["pos", "neg"]


def test_several_labels_in_a_single_label_task_are_malformed(tmp_path):
    # the CLI of a single-label task refuses them, as NBSVMClassifier.fit refuses label
    # lists; they trained a class named "neg,pos" (and with --multilabel they are a set)
    text = "__label__pos __label__neg great but awful\n__label__x __label__x dup\n"
    single = functools.partial(read_fasttext, several_labels=False)
    check_bad_line(single, "__label__x __label__x dup\n", "__label__pos __label__neg great",
                   r"several labels \(__label__pos __label__neg\): a multi-label document")
    assert [d.label for d in read_fasttext(io.StringIO(text))] == ["neg,pos", "x"]
    src = tmp_path / "ft.txt"
    src.write_text(text + "__label__pos great film\n__label__neg awful movie\n")
    records = tmp_path / "l.jsonl"
    records.write_text('{"text": "great but awful", "label": ["pos", "neg"]}\n'
                       '{"text": "great film", "label": "pos"}\n'
                       '{"text": "awful movie", "label": ["neg"]}\n')
    # the installed command once, the rest in this process (no interpreter start each)
    for i, (path, fmt) in enumerate(((src, "fasttext"), (records, "jsonl"))):
        model = tmp_path / f"{fmt}.npz"
        args = ["train", path, "--format", fmt, "-o", model, "--n-bits", "12"]
        out = subprocess.run([str(NBSVM), *map(str, args)], capture_output=True, text=True) \
            if i == 0 else run_cli(*args)
        assert out.returncode == 2 and f"{path.name}:1:" in out.stderr, out.stderr
        assert "several labels" in out.stderr and not model.exists()
        multi = run_cli(*args, "--multilabel")
        assert multi.returncode == 0, multi.stderr
    # nbsvm lexicon reads them as train does: malformed, or with --multilabel label sets,
    # for train --multilabel --lexicon (they were counted without a word, 'neg,pos' a class)
    lexicon = tmp_path / "lex.npz"
    out = run_cli("lexicon", src, "--format", "fasttext", "-o", lexicon, "--n-bits", "12", "-q")
    assert out.returncode == 2 and "several labels" in out.stderr and not lexicon.exists()
    out = run_cli("lexicon", src, "--format", "fasttext", "-o", lexicon, "--n-bits", "12", "-q",
                  "--multilabel")
    assert out.returncode == 0, out.stderr
    out = run_cli("train", src, "--format", "fasttext", "--multilabel", "--lexicon", lexicon,
                  "-o", tmp_path / "ml.npz", "-q")
    assert out.returncode == 0, out.stderr
    # predict keeps such a line's labels as its true label set
    docs = list(read_inputs([src], fmt="fasttext", labeled=False, several_labels=False))
    assert docs[0].label == "neg,pos"
