"""Inputs that used to be misread without a word (issue 17, items 5-7 and 9), through the
real CLI: a header row, repeated --text-col, unlabeled lines and TABs in predict, the format
names, malformed lines (--skip-bad-lines) and labels a model does not know in eval. The
typer app runs in this process (tests/reliability/test_outputs.py starts the installed
command, where the process itself matters)."""
import json

import numpy as np
import pandas as pd
import pytest


from nbsvm import NBSVMClassifier
from nbsvm.io.formats import COLUMN_SEPARATOR
from nbsvm.text.tokenize import tokenize
from testhelpers import run_cli as run, model_content

GOOD = ["great fun film", "loved every minute", "a wonderful cast", "great acting"]
BAD = ["awful dull film", "hated every minute", "a terrible cast", "awful acting"]


def labeled_lines(n=40) -> str:
    return "".join(f"pos\t{GOOD[i % 4]} {i}\nneg\t{BAD[i % 4]} {i}\n" for i in range(n))


@pytest.fixture
def model(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text(labeled_lines())
    r = run("train", train, "-o", tmp_path / "m.npz", "--n-bits", "12", "--epochs", "2", "-q")
    assert r.returncode == 0, r.stderr
    return tmp_path / "m.npz"


def predictions(stdout: str) -> pd.DataFrame:
    from io import StringIO
    return pd.read_csv(StringIO(stdout), keep_default_na=False, dtype={"true_label": str})


# ---- item 5: a header row --------------------------------------------------------------

def test_header_row_is_skipped_and_said(tmp_path):
    data = tmp_path / "h.tsv"
    data.write_text("label\ttext\n1\tgood\n0\tbad\n")
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q")
    assert r.returncode == 0, r.stderr
    assert f"note: {data}:1: skipped a header line (label / text" in r.stderr
    clf = NBSVMClassifier.load(tmp_path / "m.npz")
    assert clf.classes_ == ["0", "1"] and list(clf.class_counts_) == [1, 1]
    # the same data without the header gives the same model, byte for byte
    plain = tmp_path / "plain.tsv"
    plain.write_text("1\tgood\n0\tbad\n")
    assert run("train", plain, "-o", tmp_path / "p.npz", "--n-bits", "10", "-q").returncode == 0
    assert model_content(tmp_path / "p.npz") == model_content(tmp_path / "m.npz")


def test_classes_of_one_document_are_named_with_their_line(tmp_path):
    """A header of names nbsvm does not know ('rating<TAB>review') trained as a third class
    of one document, and text<TAB>label lines as a class per document, without a word:
    each is named with the line it came from (the swap even with -q)."""
    header = tmp_path / "header.txt"
    header.write_text("rating\treview\n" + "".join(
        f"pos\tgreat film {i}\nneg\tawful film {i}\n" for i in range(30)))
    r = run("train", header, "-o", tmp_path / "h.npz", "--n-bits", "12")
    assert r.returncode == 0, r.stderr
    squeezed = "".join(r.stderr.split())  # rich folds long paths anywhere
    assert "".join((f"note: 1 of 3 classes holds one document: 'rating' ({header} line 1): a "
                    "header line (--label-col and --text-col naming its columns skip it), or a "
                    "label to check?").split()) in squeezed
    swapped = tmp_path / "swapped.txt"
    swapped.write_text("".join(f"great film {i}\tpos\nawful film {i}\tneg\n" for i in range(30)))
    r = run("train", swapped, "-o", tmp_path / "s.npz", "--n-bits", "12", "-q")
    text = "".join(r.stderr.split())
    assert r.returncode == 0 and "note:60of60classesholdonedocumenteach:'awfulfilm0'(" in text
    assert "and57more:isthetextwherethelabelshouldbe?" in text, text
    # a corpus without such classes says nothing of them
    r = run("train", header, "-o", tmp_path / "h2.npz", "--n-bits", "12", "--label-col", "rating",
            "--text-col", "review")
    assert r.returncode == 0 and "skipped a header line" in r.stderr
    assert "hold one document" not in r.stderr and "holds one document" not in r.stderr
    # a class left one document by --valid's split is said as such, not as a header line
    six = tmp_path / "six.txt"
    six.write_text("pos\tgood\nneg\tbad\npos\tgreat\nneg\tawful\npos\tfine\nneg\tdull\n")
    r = run("train", six, "-o", tmp_path / "v.npz", "--n-bits", "12", "--valid", "0.6")
    squeezed = "".join(r.stderr.split())
    assert "inthepartleftfortrainingafter--valid0.6heldouttherest" in squeezed, r.stderr
    assert "headerline" not in squeezed


def test_header_of_other_columns_is_refused_with_the_way_to_read_it(tmp_path):
    data = tmp_path / "h3.tsv"
    data.write_text("id\tlabel\ttext\n1\tpos\tgood\n2\tneg\tbad\n")
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q")
    assert r.returncode == 2
    assert (f"{data}:1: the first line looks like a header row (columns: id, label, text); "
            "read the file as a table with --format tsv") in r.stderr
    ok = run("train", data, "--format", "tsv", "-o", tmp_path / "m.npz", "--n-bits", "10", "-q")
    assert ok.returncode == 0, ok.stderr
    assert NBSVMClassifier.load(tmp_path / "m.npz").classes_ == ["neg", "pos"]


# ---- item 6: repeated --text-col ---------------------------------------------------------

def test_repeated_text_col_joins_the_columns(tmp_path):
    rows = [("pos", f"Title {GOOD[i % 4]}", f"body {i} {GOOD[(i + 1) % 4]}") for i in range(20)]
    rows += [("neg", f"Title {BAD[i % 4]}", f"body {i} {BAD[(i + 1) % 4]}") for i in range(20)]
    csv = tmp_path / "t.csv"
    pd.DataFrame(rows, columns=["label", "title", "body"]).to_csv(csv, index=False)
    both, body = tmp_path / "both.npz", tmp_path / "body.npz"
    common = ["--n-bits", "12", "--epochs", "2", "-q"]
    assert run("train", csv, "--text-col", "title", "--text-col", "body", "-o", both,
               *common).returncode == 0
    assert run("train", csv, "--text-col", "body", "-o", body, *common).returncode == 0
    assert both.read_bytes() != body.read_bytes()
    # equal to training on the joined text: "title | body"
    joined = tmp_path / "joined.txt"
    joined.write_text("".join(f"{lab}\t{t}{COLUMN_SEPARATOR}{b}\n" for lab, t, b in rows))
    assert run("train", joined, "-o", tmp_path / "j.npz", *common).returncode == 0
    texts = ["Title great fun | body 3", "awful acting"]
    assert np.array_equal(NBSVMClassifier.load(both).decision_function(texts),
                          NBSVMClassifier.load(tmp_path / "j.npz").decision_function(texts))
    # the separator is a token of its own, so no bigram joins the end of the title to
    # the start of the body
    assert tokenize("fun" + COLUMN_SEPARATOR + "body") == ["fun", "|", "body"]
    dup = run("train", csv, "--text-col", "body", "--text-col", "body", "-o", both, *common)
    assert dup.returncode == 2 and "--text-col names each column once" in dup.stderr


# ---- item 7: unlabeled lines, TABs in documents, format names --------------------------

def test_predict_reads_unlabeled_lines(tmp_path, model):
    texts = tmp_path / "unlabeled.txt"
    texts.write_text("a great film\nhated every minute\nneg\tawful acting\n"
                     "my\tdocument\twith tabs\n")
    r = run("predict", texts, "-m", model, "-q")
    assert r.returncode == 0, r.stderr
    got = predictions(r.stdout)
    assert list(got["line"]) == [1, 2, 3, 4]
    assert list(got["true_label"]) == ["", "", "neg", ""]
    assert "1 line with a TAB whose first field is not one of the model's classes" in r.stderr
    # the line with TABs is one document, whole: the same score as read by plain-lines
    plain = run("predict", texts, "-m", model, "--format", "plain-lines", "-q")
    whole = predictions(plain.stdout)
    assert got["score_pos"][3] == whole["score_pos"][3]
    assert got["score_pos"][0] == whole["score_pos"][0]
    assert "true_label" not in whole.columns


def test_labeled_format_on_unlabeled_text_names_plain_lines(tmp_path, model):
    texts = tmp_path / "unlabeled.txt"
    texts.write_text("a great film\n")
    for cmd in (["predict", texts, "-m", model, "--format", "labeled-lines"],
                ["train", texts, "-o", tmp_path / "x.npz"]):
        r = run(*cmd, "-q")
        assert r.returncode == 2
        assert f"{texts}:1: expected 'label<TAB>text', found no TAB" in r.stderr
        assert "--format plain-lines" in r.stderr


def test_old_format_names_are_aliases(tmp_path, model):
    texts = tmp_path / "t.txt"
    texts.write_text("pos\tgreat fun\nneg\tawful dull\n")
    new = run("predict", texts, "-m", model, "--format", "labeled-lines", "-q").stdout
    assert run("predict", texts, "-m", model, "--format", "lines", "-q").stdout == new
    assert run("predict", texts, "-m", model, "--format", "text", "-q").stdout == \
        run("predict", texts, "-m", model, "--format", "plain-lines", "-q").stdout
    r = run("predict", texts, "-m", model, "--format", "nonsense", "-q")
    assert r.returncode == 2
    assert "unknown format 'nonsense'; allowed: auto" in r.stderr and "plain-lines" in r.stderr


# ---- item 9: malformed lines and labels the model does not know -----------------------

def test_skip_bad_lines_counts_and_names_them(tmp_path):
    data = tmp_path / "train.txt"
    lines = labeled_lines(20).splitlines()
    lines[3] = "no tab on this line"
    lines[10] = "\tempty label"
    lines[25] = "another line without a tab"
    data.write_text("\n".join(lines) + "\n")
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q")
    assert r.returncode == 2
    assert f"{data}:4: expected 'label<TAB>text', found no TAB" in r.stderr
    assert "--skip-bad-lines skips such lines" in r.stderr
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q", "--skip-bad-lines")
    assert r.returncode == 0, r.stderr
    assert "skipped 3 malformed lines (--skip-bad-lines)" in r.stderr
    for where in (f"{data}:4: expected", f"{data}:11: empty label", f"{data}:26: expected"):
        assert where in r.stderr
    assert NBSVMClassifier.load(tmp_path / "m.npz").n_docs_ == 37
    for cmd in ("eval", "predict"):
        r = run(cmd, data, "-m", tmp_path / "m.npz", "-q", "--skip-bad-lines",
                *(["--format", "labeled-lines"] if cmd == "predict" else []))
        assert r.returncode == 0, r.stderr
        assert "skipped 3 malformed lines" in r.stderr


def test_rows_after_a_quoted_multi_line_field_are_named_by_their_line(tmp_path):
    """A quoted field's line breaks count: the row after a 4-line field was called line 3
    (its record number), not line 6; predict's line column counted the same way."""
    from nbsvm.io.tables import read_table

    data = tmp_path / "t.csv"
    data.write_text('label,text\npos,"a\nb\nc\nd"\n,good\n"ne\ng","fine\nday"\npos,"x"\n')
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q")
    assert r.returncode == 2 and f"{data}:6: empty label in column 'label'" in r.stderr, r.stderr
    data.write_text('label,text\npos,"a\nb\nc\nd"\nneg,good\n"ne\ng","fine\nday"\npos,x\n')
    assert [d.line for d in read_table(data)] == [2, 6, 7, 10]
    # a row of empty fields is a row (reported), a blank or spaces-only line is skipped as
    # pandas skips it (counting blank lines dropped such rows without a word)
    data.write_text('text,label\ngreat,pos\n\n   \n,\n"",""\nawful,neg\n')
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q", "--skip-bad-lines")
    assert r.returncode == 0 and "skipped 2 malformed lines" in r.stderr, r.stderr
    data.write_text('text\ngreat movie\n\n""\nawful film\n')
    assert [d.text for d in read_table(data, label_col=None)] == ["great movie", "", "awful film"]


def test_skip_bad_rows_of_a_csv(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("label,text\npos,great fun\nneg,awful,extra field\n,no label\n"
                    "neg,awful dull\n")
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q")
    assert r.returncode == 2 and f"{data}:3" in r.stderr
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q", "--skip-bad-lines")
    assert r.returncode == 0, r.stderr
    assert "skipped 2 malformed lines" in r.stderr
    assert f"{data}:3: malformed row (expected 2 fields, saw 3)" in r.stderr
    assert f"{data}:4: empty label in column 'label'" in r.stderr


SHORT = ("label,text\npos,great fun\nneg,awful at first\nand dull to the end\n"
         "pos,\n\"neg\",\"quoted\nbreak\"\n")


@pytest.mark.parametrize("shape", ["lf", "crlf", "cr", "gz", "utf16", "tsv-no-header"])
def test_a_row_with_too_few_fields_is_malformed(tmp_path, shape):
    """pandas pads a short row with empty fields: a review broken by an unquoted line
    break trained as a document of class 'and dull to the end' with no text. Read again by
    the csv module, the row is named as malformed; an empty field (``pos,``) and a quoted
    line break are not, in every line-end, compression and encoding the reader takes."""
    import gzip

    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.tables import read_table

    text, name, kw = SHORT, "t.csv", {}
    if shape == "tsv-no-header":
        text, name = text.replace(",", "\t").split("\n", 1)[1], "t.tsv"
        kw = {"sep": "\t", "text_col": "2", "label_col": "1"}
    raw = text.encode()
    if shape == "crlf":
        raw = raw.replace(b"\n", b"\r\n")
    elif shape == "cr":
        raw = raw.replace(b'"quoted\nbreak"', b'"quoted break"').replace(b"\n", b"\r")
    elif shape == "utf16":
        raw = text.encode("utf-16")
    elif shape == "gz":
        raw, name = gzip.compress(raw), name + ".gz"
    data = tmp_path / name
    data.write_bytes(raw)
    line = 3 if shape == "tsv-no-header" else 4
    first = "the rows have" if shape == "tsv-no-header" else "the header has"
    with pytest.raises(Exception, match=rf"{name}:{line}: too few fields \(1; {first} 2\)"):
        list(read_table(data, **kw))
    stats = ReadStats(skip_bad=True)
    docs = [(d.label, d.text) for d in read_table(data, stats=stats, **kw)]
    broken = "quoted break" if shape == "cr" else "quoted\nbreak"
    assert docs == [("pos", "great fun"), ("neg", "awful at first"), ("pos", ""), ("neg", broken)]
    assert stats.bad_lines == 1


def test_too_few_fields_through_the_cli_and_where_they_cannot_be_told(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text(SHORT)
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q")
    assert r.returncode == 2 and f"{data}:4: too few fields" in r.stderr, r.stderr
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q", "--skip-bad-lines")
    assert r.returncode == 0 and "skipped 1 malformed line" in r.stderr, r.stderr
    assert NBSVMClassifier.load(tmp_path / "m.npz").classes_.tolist() == ["neg", "pos"]
    # a quoted white-space line is a row to both (it was taken for a blank line, which
    # stopped the counting: 'broken' trained as a class with --skip-bad-lines), an unquoted
    # one is blank to both
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.tables import read_table

    data.write_text('label,text\npos,good\n" "\n,fine\nbroken\n \nneg,bad\nworse\n')
    stats = ReadStats(skip_bad=True)
    assert [(d.text, d.label) for d in read_table(data, stats=stats, label_optional=True,
                                                  empty_label=True)] \
        == [("good", "pos"), ("fine", None), ("bad", "neg")]
    # (line numbers count the blank line 6 as wc -l does: 'worse' is line 8)
    assert [e.split(": ", 1)[0] for e in stats.bad_examples] == [f"{data}:{n}" for n in (3, 5, 8)]
    r = run("train", data, "-o", tmp_path / "m.npz", "--n-bits", "10", "-q", "--skip-bad-lines")
    assert r.returncode == 0 and "skipped 4 malformed lines" in r.stderr, r.stderr
    assert NBSVMClassifier.load(tmp_path / "m.npz").classes_.tolist() == ["neg", "pos"]
    # a quoted empty line is a row to both (it was taken for a blank line: the rows after
    # it were counted one off, 'pos,' called short and 'pos' not)
    data.write_text('label,text\npos,good\n""\n,x\npos,\npos\n')
    stats = ReadStats(skip_bad=True)
    assert [(d.label, d.text, d.line) for d in read_table(data, stats=stats)] == \
        [("pos", "good", 2), ("pos", "", 5)]
    assert [e.split(": ", 1)[1][:14] for e in stats.bad_examples] == \
        ["too few fields", "empty label in", "too few fields"]
    # a BOM before a file without a header row: the first fields compare as pandas reads
    data.write_bytes('\ufeffpos,\nneg,bad\npos\n'.encode())
    with pytest.raises(Exception, match=r"t.csv:3: too few fields \(1; the rows have 2\)"):
        list(read_table(data, text_col="2", label_col="1"))


def test_predict_reads_a_row_without_its_last_label_field_as_unlabelled(tmp_path):
    """Unlabelled rows of a text,label file that leave off the label field were read by
    predict as unlabelled documents; the short-row check stopped them. A row short of
    more than that last field is still malformed."""
    from nbsvm.io.tables import read_table

    data = tmp_path / "p.csv"
    data.write_text("text,label\ngood fun film,pos\nawful dull mess\ngreat cast\n")
    assert [(d.text, d.label) for d in read_table(data, label_optional=True,
                                                  empty_label=True)] == \
        [("good fun film", "pos"), ("awful dull mess", None), ("great cast", None)]
    with pytest.raises(Exception, match="p.csv:3: too few fields"):
        list(read_table(data))  # training: every row has its label
    data.write_text("id,text,label\n1,good fun film,pos\n2\n")
    with pytest.raises(Exception, match="p.csv:3: too few fields"):
        list(read_table(data, label_optional=True, empty_label=True))


def test_eval_counts_unknown_labels_as_errors(tmp_path, model):
    data = tmp_path / "test.txt"
    docs = [("pos", "great fun film"), ("neg", "awful dull film"), ("meh", "great but dull"),
            ("pos", "awful acting"), ("meh", "a film")]
    data.write_text("".join(f"{lab}\t{text}\n" for lab, text in docs))
    r = run("eval", data, "-m", model, "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    clf = NBSVMClassifier.load(model)
    predicted = clf.predict([t for _, t in docs])
    correct = sum(p == lab for p, (lab, _) in zip(predicted, docs))
    assert rep["n_docs"] == 5 and rep["accuracy"] == correct / 5
    assert rep["unseen_labels"] == {"meh": 2}
    assert rep["per_class"]["meh"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 2}
    assert rep["classes"] == ["neg", "pos", "meh"]
    # log loss over the documents of known labels only
    known = [(lab, t) for lab, t in docs if lab != "meh"]
    proba = clf.predict_proba([t for _, t in known])
    expected = -np.mean([np.log(proba[i, clf.classes_.index(lab)])
                         for i, (lab, _) in enumerate(known)])
    assert rep["log_loss"] == pytest.approx(expected, rel=1e-6)
    text = run("eval", data, "-m", model)
    assert "labels the model does not know, counted as errors: meh (2)" in text.stdout


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_table_read_once_says_its_short_rows_could_not_be_checked(tmp_path):
    """Standard input cannot be read again to count a row's fields: a text cut by an
    unquoted line break trained as a class of its own without a word. Now a note (printed
    with -q too) names the first row that ends in an empty field; a file given by name is
    checked, and a trailing label column left empty by predict is no such row."""
    import subprocess
    import sys
    from pathlib import Path

    nbsvm = Path(sys.executable).parent / "nbsvm"
    text = SHORT.replace('"neg","quoted\nbreak"', "neg,fine")
    r = subprocess.run([str(nbsvm), "train", "-", "--format", "csv", "-o", tmp_path / "m.npz",
                        "--n-bits", "10", "-q"], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "note: <stdin> cannot be read again" in r.stderr and "(the first: line 4)" in r.stderr
    # the other note: 3 classes calibrate, which a stream read once cannot
    assert r.stderr.count("note:") == 2 and "note: probabilities not calibrated" in r.stderr
    r = subprocess.run([str(nbsvm), "predict", "--model", tmp_path / "m.npz", "-", "--format",
                        "csv", "-q"], input="text,label\ngreat fun,pos\nno label,\n",
                       capture_output=True, text=True)
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr


def test_a_table_of_another_separator_says_so(tmp_path):
    """Excel in a European locale writes ';': the header was one column 'text;label' and
    the error said to choose columns with --text-col / --label-col, which no choice fixes."""
    p = tmp_path / "semi.csv"
    p.write_text("text;label\ngood film;pos\nbad film;neg\n")
    r = run("train", p, "-o", tmp_path / "m.npz")
    assert r.returncode == 2
    assert "its header is one field holding ';': a file separated by ';' is read as one " \
        "column" in " ".join(r.stderr.split())


def test_a_table_piped_as_lines_is_said(tmp_path, model):
    """`cat data.csv | nbsvm predict -m m.npz -` read the header, the quoted rows and the
    label cells as documents without a word; a note says what to give."""
    from typer.testing import CliRunner

    from nbsvm.cli import app

    def piped(text):
        return CliRunner().invoke(app, ["predict", "-m", str(model), "-"], input=text)

    r = piped('text,label\n"great film, really",1\n')
    assert r.exit_code == 0, r.output
    assert "'text,label' looks like a table's header: these lines are read as documents" \
        in " ".join(r.stderr.split())
    r = piped("text, and more of it\nanother line\n")
    assert r.exit_code == 0 and "looks like a table's header" not in r.stderr


def test_sub_folders_of_a_class_folder_are_said_to_be_skipped(tmp_path):
    """A class folder's documents are its own files: a nested layout (pos/2019/*.txt) was
    read as an empty or smaller class without a word (scikit-learn's load_files raises)."""
    for label, nested in (("pos", True), ("neg", False)):
        folder = tmp_path / "data" / label / ("2019" if nested else "")
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(3):
            (folder / f"{i}.txt").write_text(f"{label} words {i}")
        (tmp_path / "data" / label / "top.txt").write_text(f"{label} top")
    r = run("train", tmp_path / "data", "-o", tmp_path / "m.npz", "--min-df", "1", "-q")
    assert r.returncode == 0, r.stderr
    assert "skipped 1 sub-folder(s) (2019): a class folder's documents are its own files" \
        in " ".join(r.stderr.split())


def test_vowpal_wabbit_lines_are_named(tmp_path):
    """A VW file ('1 |f great film') was refused as a line without a TAB, or read with
    --label-sep ' ' with its namespace marks as words, without naming the format."""
    p = tmp_path / "data.vw"
    p.write_text("1 |f great film\n-1 |f awful dull\n1 2.0 |f superb\n-1 |f bad plot\n")
    r = run("train", p, "-o", tmp_path / "m.npz", "--min-df", "1", "-q")
    assert r.returncode == 2
    assert f"{p}:1: expected 'label<TAB>text', found a Vowpal Wabbit line" in r.stderr
    r = run("train", p, "-o", tmp_path / "m.npz", "--min-df", "1", "-q", "--label-sep", " ")
    assert r.returncode == 0 and f"{p}:1: a Vowpal Wabbit line: its namespace marks" \
        in " ".join(r.stderr.split()), r.stderr
    # space-separated lines of another kind say nothing of it
    p.write_text("DESC:manner How did serfdom develop ?\nHUM:ind Who wrote it ?\n")
    r = run("train", p, "-o", tmp_path / "m.npz", "--min-df", "1", "-q", "--label-sep", " ")
    assert "Vowpal Wabbit" not in r.stderr


def test_label_sets_trained_as_classes_are_said(tmp_path):
    """A multi-label file trained without --multilabel learned 'pos,neg' as a class of its
    own beside 'pos' and 'neg', without a word (fastText refuses such labels): a note names
    them, even with -q; a name holding a comma whose parts recur nowhere is not one, and
    --multilabel learns each label."""
    from types import SimpleNamespace
    from nbsvm.models.fitting import label_set_classes_event
    sets = tmp_path / "sets.txt"
    sets.write_text(labeled_lines(10) + "".join(f"pos,neg\tgreat cast, awful plot {i}\n"
                                                for i in range(5)))
    r = run("train", sets, "-o", tmp_path / "m.npz", "--n-bits", "12", "-q")
    assert r.returncode == 0, r.stderr
    assert ("note: 1 of 3 classes read as label sets ('pos,neg'): each is a class of its own; "
            "--multilabel learns each label") in " ".join(r.stderr.split())
    r = run("train", sets, "-o", tmp_path / "ml.npz", "--n-bits", "12", "--multilabel", "-q")
    assert r.returncode == 0 and "label sets" not in r.stderr, r.stderr
    # from a lexicon the classes are the lexicon's: said the same (it was silent; a
    # helper's hunt)
    lex = tmp_path / "lex.npz"
    assert run("lexicon", sets, "-o", lex, "--n-bits", "12").returncode == 0
    r = run("train", sets, "--lexicon", lex, "-o", tmp_path / "l.npz", "-q")
    assert r.returncode == 0, r.stderr
    assert "note: 1 of 3 classes read as label sets ('pos,neg')" in " ".join(r.stderr.split())

    def event(*classes):
        return label_set_classes_event(SimpleNamespace(multilabel=False, class_names_=classes))
    assert event("x", "y, x")["sets"] == 1 and event("a", "b", "a,b", "c,d")["shown"] == ["a,b"]
    # names: no part of them a class of its own (a reviewer's cases)
    assert event("New York, NY", "Boston, MA") is None and event("pos", "neg") is None
    assert event("Portland, OR", "Portland, ME") is None and event("Smith, John", "Smith, Jane") is None
    # fit says it too, as a warning
    with pytest.warns(UserWarning, match=r"1 of 3 classes read as label sets \('pos,neg'\)"):
        NBSVMClassifier(n_bits=10).fit(GOOD + BAD + ["great, awful"], ["pos"] * 4 + ["neg"] * 4
                                       + ["pos,neg"])
