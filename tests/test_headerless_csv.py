"""Headerless CSV read by column number (issue 18, items 6 and 8), as AG News ships it
(``class,title,description``): ``--text-col 2 --text-col 3 --label-col 1``."""
import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.io import read_inputs

NBSVM = Path(sys.executable).parent / "nbsvm"


def test_columns_by_number_read_rows_without_a_header(tmp_path):
    path = tmp_path / "ag.csv"
    path.write_text('3,"Wall St. Bears","Short-sellers, again."\n4,"Mars","NASA lands"\n',
                    encoding="utf-8")
    docs = list(read_inputs([str(path)], text_col=["2", "3"], label_col="1"))
    assert [(d.label, d.text, d.line) for d in docs] == [
        ("3", "Wall St. Bears | Short-sellers, again.", 1), ("4", "Mars | NASA lands", 2)]
    assert [d.label for d in read_inputs([str(path)], text_col="3", labeled=False)] == [None] * 2
    with pytest.raises(NBSVMError, match="no column 5: the rows have 3 fields"):
        list(read_inputs([str(path)], text_col="5", label_col="1"))
    with pytest.raises(NBSVMError, match="number the label's column too"):
        list(read_inputs([str(path)], text_col="3"))
    with pytest.raises(NBSVMError, match="count from 1"):
        list(read_inputs([str(path)], text_col="0", label_col="1"))


@pytest.mark.slow  # make test-slow: the header's detection is checked in process
def test_the_cli_trains_the_same_model_with_or_without_a_header(imdb_slice, tmp_path):
    docs = list(read_inputs([str(imdb_slice / "train")]))
    rows = [(d.label, d.text.split(".")[0][:60], d.text) for d in docs]
    plain, named = tmp_path / "ag_like.csv", tmp_path / "named.csv"
    with open(plain, "w", newline="", encoding="utf-8") as a, \
            open(named, "w", newline="", encoding="utf-8") as b:
        csv.writer(a).writerows(rows)
        w = csv.writer(b)
        w.writerow(["label", "title", "body"])
        w.writerows(rows)
    runs = {"plain": (plain, ["--text-col", "2", "--text-col", "3", "--label-col", "1"]),
            "named": (named, ["--text-col", "title", "--text-col", "body"])}
    for name, (path, cols) in runs.items():
        r = subprocess.run([str(NBSVM), "train", str(path), *cols, "--n-bits", "18", "-o",
                            str(tmp_path / f"{name}.npz"), "-q"], capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr
    test = [d.text for d in read_inputs([str(imdb_slice / "test")])][:300]
    a, b = (NBSVMClassifier.load(tmp_path / f"{k}.npz") for k in runs)
    np.testing.assert_array_equal(a.decision_function(test), b.decision_function(test))


def test_a_long_first_row_after_blank_lines_is_the_row_skipped(tmp_path):
    # pandas skips lines by a count with the blank ones: skipping line 1 dropped a blank
    # line, and the long row, reported as skipped, was read (its extra field dropped)
    from nbsvm.io.decoding import ReadStats
    path = tmp_path / "p.csv"
    path.write_text("\n  \n1,title,desc,extra\n2,t2,d2\n1,t3,d3\n")
    stats = ReadStats(skip_bad=True)
    docs = read_inputs([path], text_col=["2", "3"], label_col="1", stats=stats)
    assert [(d.label, d.text, d.line) for d in docs] == [("2", "t2 | d2", 4), ("1", "t3 | d3", 5)]
    assert stats.bad_examples == [f"{path}:3: malformed row (expected 3 fields, saw 4)"]


@pytest.mark.parametrize("header, col", [("label,text,label", "label"),
                                         ("label,text,text", "text")])
def test_a_column_named_twice_in_the_header_is_refused_when_read(tmp_path, header, col):
    """'label,text,label' trained on the first label column without a word (pandas names
    the second 'label.1'; a helper's hunt). A repeated name the command does not read
    is left alone."""
    p = tmp_path / "t.csv"
    p.write_text(f"{header}\npos,good film,neg\nneg,bad film,pos\n")
    with pytest.raises(NBSVMError, match=f"the header names column '{col}' 2 times") as e:
        list(read_inputs([p]))
    assert e.value.line == 1 and e.value.path == str(p)
    p.write_text("label,text,other,other\npos,good film,x,z\nneg,bad film,y,z\n")
    assert [d.label for d in read_inputs([p])] == ["pos", "neg"]


@pytest.mark.parametrize("rows, line", [
    ("good film,pos\nbad film,neg\n\"unterminated film,pos\nfine,pos\n", 4),
    ("\ngood film,pos\n\"multi\nline\",neg\n\"unterminated film,pos\nfine,pos\n", 6),
    ("".join(f"row {i},pos\n" for i in range(3000)) + "\"unterminated,pos\nmore,neg\n", 3002),
])
def test_a_quote_never_closed_is_named_at_its_line(tmp_path, rows, line):
    """pandas' 'EOF inside string starting at row 3' named no line, and its row was not
    the file's (a helper's hunt): the line the quote opens on, blank lines and quoted line
    breaks counted."""
    p = tmp_path / "t.csv"
    p.write_text("text,label\n" + rows)
    with pytest.raises(NBSVMError, match="a quote opened in this row is never closed") as e:
        list(read_inputs([p]))
    assert e.value.line == line and e.value.path == str(p)
