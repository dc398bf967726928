"""Streaming readers: label<TAB>text lines, aclImdb folders, CSV/TSV, dispatch."""
import io

import pytest

from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document
from nbsvm.io.folders import read_aclimdb
from nbsvm.io.labeled_lines import read_lines, read_text_lines
from nbsvm.io.readers import detect_format, read_inputs
from nbsvm.io.tables import read_table


# -- label<TAB>text lines ----------------------------------------------------------------

def test_read_lines_labels_text_and_line_numbers(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("pos\tgreat film\n\n   \nneg\tawful\tfilm\n neg \t padded label\n",
                 encoding="utf-8")
    docs = list(read_lines(p))
    assert docs == [
        Document("pos", "great film", str(p), 1),
        Document("neg", "awful\tfilm", str(p), 4),        # only the first TAB separates
        Document("neg", " padded label", str(p), 5),      # label stripped, text kept as is
    ]


def test_read_lines_bom_and_crlf(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes("\ufeffpos\tgood\r\nneg\tbad\r\n\r\npos\tcafé\r\n".encode("utf-8"))
    docs = list(read_lines(p))
    assert [(d.label, d.text, d.line) for d in docs] == \
        [("pos", "good", 1), ("neg", "bad", 2), ("pos", "café", 4)]


def test_read_lines_no_trailing_newline_and_stream():
    docs = list(read_lines(io.StringIO("pos\tgreat\nneg\tawful")))
    assert [(d.label, d.text) for d in docs] == [("pos", "great"), ("neg", "awful")]


def test_read_lines_missing_tab_names_file_and_line(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("pos\tok\n\nthis line has no tab\n", encoding="utf-8")
    with pytest.raises(NBSVMError) as ei:
        list(read_lines(p))
    assert ei.value.path == str(p) and ei.value.line == 3
    assert str(ei.value).startswith(f"{p}:3: ")
    assert "TAB" in str(ei.value)


def test_read_lines_empty_label(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("pos\tok\n  \tno label here\n", encoding="utf-8")
    with pytest.raises(NBSVMError, match=r"e\.txt:2: empty label"):
        list(read_lines(p))


def test_read_lines_missing_file_and_folder(tmp_path):
    with pytest.raises(NBSVMError, match="no such file"):
        list(read_lines(tmp_path / "nope.txt"))
    with pytest.raises(NBSVMError, match="folder"):
        list(read_lines(tmp_path))


def test_read_lines_invalid_utf8_replaced(tmp_path):
    p = tmp_path / "latin.txt"
    p.write_bytes(b"pos\tcaf\xe9 ok\n")
    (d,) = list(read_lines(p))
    assert d.label == "pos" and d.text == "caf\ufffd ok"


def test_read_text_lines_unlabeled(tmp_path):
    p = tmp_path / "u.txt"
    p.write_text("first doc\n\nsecond\tdoc with tab\n", encoding="utf-8")
    docs = list(read_text_lines(p))
    assert [(d.label, d.text, d.line) for d in docs] == \
        [(None, "first doc", 1), (None, "second\tdoc with tab", 3)]


# -- aclImdb folders ------------------------------------------------------------------------

def _acl(tmp_path):
    root = tmp_path / "aclImdb"
    split = root / "train"
    for label, names in {"pos": ["0_9.txt", "1_7.txt", "2_10.txt"],
                         "neg": ["0_1.txt", "1_2.txt"],
                         "unsup": ["0_0.txt"]}.items():
        (split / label).mkdir(parents=True)
        for n in names:
            (split / label / n).write_text(f"{label} review {n}<br />\n", encoding="utf-8")
    (split / "pos" / ".DS_Store").write_bytes(b"\x00hidden")   # hidden: not a document
    (split / "pos" / "sub").mkdir()                             # a folder: not a document
    (split / "urls_pos.txt").write_text("http://x")          # a file, not a label folder
    (split / "neg" / "3_1.txt").write_bytes("\ufeffbom review\r\n".encode("utf-8"))
    return root, split


def test_read_aclimdb_round_robin_and_unsup_skipped(tmp_path):
    root, split = _acl(tmp_path)
    docs = list(read_aclimdb(split))
    got = [(d.label, d.source.split("/")[-1]) for d in docs]
    # label folders in name order (neg, pos), files in name order, interleaved
    assert got == [("neg", "0_1.txt"), ("pos", "0_9.txt"),
                   ("neg", "1_2.txt"), ("pos", "1_7.txt"),
                   ("neg", "3_1.txt"), ("pos", "2_10.txt")]
    assert docs[0].text == "neg review 0_1.txt<br />"
    assert docs[4].text == "bom review"
    assert all(d.line == 1 for d in docs)
    assert all(d.label != "unsup" for d in docs)


def test_read_aclimdb_root_folder_error(tmp_path):
    root, _ = _acl(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NBSVMError, match="sub-folder per label"):
        list(read_aclimdb(empty))
    with pytest.raises(NBSVMError, match="aclImdb root"):
        list(read_aclimdb(root))
    with pytest.raises(NBSVMError, match="no such folder"):
        list(read_aclimdb(tmp_path / "missing"))


# -- CSV / TSV ------------------------------------------------------------------------------

def test_read_table_csv(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('id,text,label\n1,"great, really",pos\n2,awful,neg\n3,"multi word",  pos \n',
                 encoding="utf-8")
    docs = list(read_table(p))
    assert [(d.label, d.text, d.line) for d in docs] == \
        [("pos", "great, really", 2), ("neg", "awful", 3), ("pos", "multi word", 4)]
    assert all(d.source == str(p) for d in docs)


def test_read_table_tsv_custom_columns_and_unlabeled(tmp_path):
    p = tmp_path / "d.tsv"
    p.write_text("review\tsentiment\nnice one\tgood\nbad one\tbad\n", encoding="utf-8")
    docs = list(read_table(p, text_col="review", label_col="sentiment", sep="\t"))
    assert [(d.label, d.text) for d in docs] == [("good", "nice one"), ("bad", "bad one")]
    docs = list(read_table(p, text_col="review", label_col=None, sep="\t"))
    assert [(d.label, d.text) for d in docs] == [(None, "nice one"), (None, "bad one")]


def test_read_table_chunks_keep_row_numbers(tmp_path):
    p = tmp_path / "many.csv"
    p.write_text("text,label\n" + "".join(f"doc {i},{'ab'[i % 2]}\n" for i in range(25)))
    docs = list(read_table(p, chunksize=4))
    assert [d.line for d in docs] == list(range(2, 27))
    assert docs[-1].text == "doc 24" and docs[-1].label == "a"


def test_read_table_missing_column_error(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("body,label\nx,pos\n")
    with pytest.raises(NBSVMError, match=r"missing column.*'text'") as ei:
        list(read_table(p))
    assert str(p) in str(ei.value)


def test_read_table_empty_label_and_empty_file(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("text,label\nfine,pos\nno label,\n")
    with pytest.raises(NBSVMError, match=r"d\.csv:3: empty label"):
        list(read_table(p))
    e = tmp_path / "empty.csv"
    e.write_text("")
    with pytest.raises(NBSVMError, match="empty file"):
        list(read_table(e))


# -- dispatch -------------------------------------------------------------------------------

def test_detect_format(tmp_path):
    (tmp_path / "x.CSV").write_text("text,label\n")
    (tmp_path / "y.tsv").write_text("")
    assert detect_format(tmp_path) == "folders"
    assert detect_format(tmp_path / "x.CSV") == "csv"
    assert detect_format(tmp_path / "y.tsv") == "labeled-lines"


def test_read_inputs_dispatch_and_chaining(tmp_path):
    _, split = _acl(tmp_path)
    lines = tmp_path / "l.txt"
    lines.write_text("pos\tfrom lines\n")
    csv = tmp_path / "c.csv"
    csv.write_text("text,label\nfrom csv,neg\n")
    tsv = tmp_path / "t.tsv"
    tsv.write_text("text\tlabel\nfrom tsv\tpos\n")
    docs = list(read_inputs([str(lines), str(csv), str(split)]))
    assert [d.text for d in docs[:2]] == ["from lines", "from csv"]
    assert len(docs) == 2 + 6
    assert [(d.label, d.text) for d in read_inputs([tsv], fmt="tsv")] == [("pos", "from tsv")]
    # csv without labels keeps true labels when the column exists
    assert [d.label for d in read_inputs([csv], labeled=False)] == ["neg"]
    assert [d.text for d in read_inputs([lines], fmt="text")] == ["pos\tfrom lines"]


def test_read_inputs_errors(tmp_path):
    with pytest.raises(NBSVMError, match="unknown format 'xml'"):
        list(read_inputs([str(tmp_path)], fmt="xml"))
    with pytest.raises(NBSVMError, match="no such file or folder") as ei:
        list(read_inputs([str(tmp_path / "missing.txt")]))
    assert "missing.txt" in str(ei.value)


def test_read_inputs_unlabeled_empty_csv_is_an_nbsvm_error(tmp_path):
    # `nbsvm predict empty.csv` goes through read_inputs(labeled=False): an empty CSV must be
    # reported as an NBSVMError naming the file, like read_table does, not a pandas exception.
    e = tmp_path / "empty.csv"
    e.write_text("")
    with pytest.raises(NBSVMError, match="empty.csv"):
        list(read_inputs([str(e)], labeled=False))


@pytest.mark.parametrize("name, content", [("e.txt", ""), ("blank.txt", "\n  \n\n"),
                                           ("h.csv", "text,label\n")])
def test_read_inputs_empty_input_names_the_file(tmp_path, name, content):
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(NBSVMError, match="no documents") as ei:
        list(read_inputs([str(p)]))
    assert ei.value.path == str(p)
