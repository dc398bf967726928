"""Input a careless or unusual writer makes (a helper's hunt): each read gives the documents
a file of the same bytes gives, or a one-line error naming the file (and line), never a
traceback or a document read wrongly."""
import io
import os
import threading
import time
import zipfile

import numpy as np
import pandas as pd
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.io.fasttext import read_fasttext
from nbsvm.io.labeled_lines import read_lines
from nbsvm.io.readers import read_inputs

LINES = "".join(f"{'pos' if i % 2 else 'neg'}\t{'good fine' if i % 2 else 'bad dull'} {i}\n"
                for i in range(40))


def test_a_fasttext_label_with_a_comma_is_refused_where_it_would_read_as_two():
    text = "__label__Arts,_Crafts glue paper\n__label__Sports ball goal\n"
    # a multi-label task (or a set of labels) would split 'Arts,_Crafts' in two: refused
    with pytest.raises(NBSVMError, match=r"<stream>:1: a label holds ','"):
        list(read_fasttext(io.BytesIO(text.encode()), strict=True, label_sets=True))
    with pytest.raises(NBSVMError, match=r":1: a label holds ','"):
        list(read_fasttext(io.BytesIO(b"__label__a __label__b,c x\n"), labeled=False,
                           strict=True))
    # a single-label task's class keeps it whole, as predict's true labels do
    one = [d.label for d in read_fasttext(io.BytesIO(text.encode()), several_labels=False)]
    assert one == ["Arts,_Crafts", "Sports"]
    true = [d.label for d in read_fasttext(io.BytesIO(text.encode()), labeled=False)]
    assert true == ["Arts,_Crafts", "Sports"]
    # a lexicon reads several labels a line, and its classes keep theirs whole too
    keys = [d.label for d in read_fasttext(io.BytesIO(text.encode()), several_labels=True)]
    assert keys == ["Arts,_Crafts", "Sports"]


def test_a_dataframe_column_named_twice_is_refused():
    """X['text'] of a frame with two 'text' columns is a frame, whose rows read as the
    column names: two documents called 'text' (and predict gave 2 answers for 4 rows)."""
    X = pd.DataFrame([["great film", "a"], ["awful film", "b"]], columns=["text", "text"])
    with pytest.raises(NBSVMError, match="'text' among them 2 times"):
        NBSVMClassifier(n_bits=12).fit(X, ["pos", "neg"])
    X = pd.DataFrame([["great", "pos", "neg"], ["awful", "neg", "pos"]],
                     columns=["text", "label", "label"])
    with pytest.raises(NBSVMError, match="'label' among them 2 times"):
        NBSVMClassifier(n_bits=12).fit(X, "label")
    # columns it does not read may repeat their names
    ok = pd.DataFrame([["great", 1, 2], ["awful", 3, 4]], columns=["text", "id", "id"])
    assert list(NBSVMClassifier(n_bits=12).fit(ok, ["pos", "neg"]).predict(ok)) == ["pos", "neg"]


def test_json_lines_read_a_field_once(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "good", "label": "pos"}\n'
                    '{"label": "pos", "text": "great", "label": "neg"}\n')
    with pytest.raises(NBSVMError, match=r"d\.jsonl:2: the field 'label' appears twice"):
        list(read_inputs([path], fmt="jsonl", strict=True))
    with pytest.raises(NBSVMError, match="--text-col names each column once"):
        list(read_inputs([path], fmt="jsonl", text_col=["text", "text"]))
    # a value "label", or a nested object's own 'label' keys, are not a second field
    path.write_text('{"text": "label", "label": "pos", "meta": {"label": 1, "label": 2}}\n')
    assert [(d.text, d.label) for d in read_inputs([path], fmt="jsonl", strict=True)] == [
        ("label", "pos")]


def test_a_weight_too_large_for_a_float_is_a_bad_line(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_text('{"text": "good", "label": "pos", "w": 1' + "0" * 400 + "}\n")
    with pytest.raises(NBSVMError, match=r"w\.jsonl:1: .*weights are numbers from 0 to 1e9"):
        list(read_inputs([path], fmt="jsonl", weight_col="w", strict=True))


def test_parquet_that_pyarrow_cannot_read_is_named(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    twice = tmp_path / "twice.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["a"]), pa.array(["pos"]), pa.array(["x"])],
                                        names=["text", "label", "label"]), twice)
    with pytest.raises(NBSVMError, match="the column 'label' appears twice"):
        list(read_inputs([twice]))
    other = tmp_path / "other.parquet"  # a column it does not read may repeat its name
    pq.write_table(pa.Table.from_arrays([pa.array(["a"]), pa.array(["pos"]), pa.array([1]),
                                         pa.array([2])], names=["text", "label", "id", "id"]),
                   other)
    assert [d.label for d in read_inputs([other])] == ["pos"]
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"text": ["great good", "caf@ bad"], "label": ["pos", "neg"]}),
                   bad, compression="none", use_dictionary=False)
    bad.write_bytes(bad.read_bytes().replace(b"caf@", b"caf\xff"))
    with pytest.raises(NBSVMError, match="bad.parquet: cannot read as Parquet: .*not UTF-8"):
        list(read_inputs([bad]))


def test_zip_and_tar_tables_pandas_cannot_open_are_named(tmp_path):
    two = tmp_path / "two.csv.zip"
    with zipfile.ZipFile(two, "w") as z:
        z.writestr("a.csv", "label,text\npos,good\n")
        z.writestr("b.csv", "label,text\nneg,bad\n")
    empty = tmp_path / "empty.csv.zip"
    zipfile.ZipFile(empty, "w").close()
    broken = tmp_path / "broken.csv.zip"
    broken.write_bytes(b"PK\x03\x04 not a zip at all")
    import tarfile
    tar = tmp_path / "two.csv.tar"
    with tarfile.open(tar, "w") as t:
        for member in ("a.csv", "b.csv"):
            (tmp_path / member).write_text("label,text\npos,good\n")
            t.add(tmp_path / member, arcname=member)
    for path in (two, empty, broken, tar):
        with pytest.raises(NBSVMError, match=f"{path.name}: cannot read"):
            list(read_inputs([path], fmt="csv"))
    # a strict decoding error is still read_table's, naming its line
    cp = tmp_path / "cp.csv"
    cp.write_bytes(b"label,text\npos,caf\x81 good\n")
    with pytest.raises(NBSVMError, match=r"cp\.csv:2"):
        list(read_inputs([cp], fmt="csv", encoding="cp1252", strict=True))


def test_a_csv_of_blank_crlf_lines_is_empty_not_a_crash(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_bytes(b"\r\r\n")
    with pytest.raises(NBSVMError, match="blank.csv: no documents found"):
        list(read_inputs([path], fmt="csv"))


def test_a_pipe_whose_first_write_is_one_line_reads_as_the_file(tmp_path):
    """Whether lines end with lone CRs is decided on the first megabyte, as for a file:
    through a pipe whose writer sent a line with CRs inside alone, every line was split
    at its CRs (the next line 'found no TAB')."""
    first = b"pos\tgreat\rfun\rreally\rgood\n"
    path = tmp_path / "f.txt"
    path.write_bytes(first + LINES.encode())
    want = [(d.label, d.text) for d in read_lines(path)]
    r, w = os.pipe()

    def writer():
        with open(w, "wb", buffering=0) as out:
            out.write(first)
            time.sleep(0.3)
            out.write(LINES.encode())

    thread = threading.Thread(target=writer)
    thread.start()
    with open(r, "rb") as fh:
        got = [(d.label, d.text) for d in read_lines(fh)]
    thread.join()
    assert got == want and len(got) == 41 and got[0] == ("pos", "great fun really good")


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_learn_reads_a_compressed_blitzer_file_as_blitzer(tmp_path, suffix):
    """`nbsvm learn books.review.bz2` was read as svmlight ('expected a label first'): only
    .gz was taken off before the .review suffix was looked at."""
    import bz2
    import gzip
    import lzma
    import subprocess
    import sys
    rows = "".join(f"great:2 good_fun:1 #label#:positive\nbad:1 awful:2 #label#:negative\n"
                   for _ in range(10)).encode()
    path = tmp_path / f"books.review{suffix}"
    path.write_bytes({".gz": gzip, ".bz2": bz2, ".xz": lzma}[suffix].compress(rows))
    done = subprocess.run([sys.executable, "-m", "nbsvm", "learn", str(path), "-o",
                           str(tmp_path / "m.npz"), "-q"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.npz").exists()


def test_a_compressed_file_in_a_class_folder_is_refused_not_read_as_text(tmp_path):
    """fold/pos/1.txt.gz was read as a document of gzip bytes, with only a note of the
    bytes replaced; the line readers refuse such a file: so does the folder reader."""
    import gzip
    for label in ("pos", "neg"):
        (tmp_path / "fold" / label).mkdir(parents=True)
        (tmp_path / "fold" / label / "0.txt").write_text(f"a {label} review")
    (tmp_path / "fold" / "pos" / "1.txt.gz").write_bytes(gzip.compress(b"a great film " * 50))
    # (named .gz already: 'name it .gz', the line readers' hint, would not help)
    with pytest.raises(NBSVMError, match=r"1\.txt\.gz: not a text file: a compressed file: "
                                         "files in class folders are read as they are, not "
                                         "decompressed; decompress it or move it out"):
        list(read_inputs([tmp_path / "fold"]))
    (tmp_path / "fold" / "pos" / "1.txt.gz").rename(tmp_path / "fold" / "pos" / "1.txt")
    with pytest.raises(NBSVMError, match=r"1\.txt: not a text file: gzip-compressed data: "
                                         "name it .gz"):
        list(read_inputs([tmp_path / "fold"]))


def test_a_utf8_bom_is_dropped_from_a_table_whatever_the_encoding(tmp_path):
    """pandas drops a UTF-8 BOM for UTF-8 alone: with --encoding latin-1 it became 'ï»¿'
    in the first header (the label column 'missing') or the first label (a class of its
    own); the line readers drop it whatever the encoding."""
    named = tmp_path / "named.csv"
    named.write_bytes(b"\xef\xbb\xbflabel,text\npos,caf\xe9 good\nneg,bad\n")
    numbered = tmp_path / "numbered.csv"
    numbered.write_bytes(b"\xef\xbb\xbfpos,great\nneg,bad\n")
    got = [(d.label, d.text) for d in read_inputs([named], fmt="csv", encoding="latin-1")]
    assert got == [("pos", "caf\xe9 good"), ("neg", "bad")]
    got = [(d.label, d.text) for d in read_inputs([numbered], fmt="csv", encoding="latin-1",
                                                  text_col="2", label_col="1")]
    assert got == [("pos", "great"), ("neg", "bad")]
    got = [d.label for d in read_inputs([named], fmt="csv")]  # UTF-8: as before
    assert got == ["pos", "neg"]


def test_utf8_sig_is_read_as_utf8(tmp_path):
    """--encoding utf-8-sig (Python's name for UTF-8 with a byte order mark, what Excel
    writes) was refused as not ASCII-compatible: it is UTF-8, its BOM dropped."""
    lines = tmp_path / "a.txt"
    lines.write_bytes(b"\xef\xbb\xbfpos\tcaf\xc3\xa9 good\nneg\tbad\n")
    table = tmp_path / "a.csv"
    table.write_bytes(b"\xef\xbb\xbflabel,text\npos,caf\xc3\xa9 good\nneg,bad\n")
    for path in (lines, table):
        got = [(d.label, d.text) for d in read_inputs([path], encoding="utf-8-sig")]
        assert got == [("pos", "caf\xe9 good"), ("neg", "bad")]


def test_a_binary_file_in_a_class_folder_is_refused_in_any_encoding(tmp_path):
    """A .gz or PDF in a class folder is refused naming it under latin-1 too (which maps
    every byte: they were read as documents without a word); an executable is said to
    be one (it was 'UTF-16 or UTF-32 text without a byte order mark')."""
    import gzip
    for name, data, what in [("2.txt.gz", gzip.compress(b"pos\tgood\n" * 50), "compressed"),
                             ("doc.pdf", b"%PDF-1.4\n\xe2\xe3\xcf\xd3\n1 0 obj\n", "a PDF"),
                             ("prog", b"\x7fELF\x02\x01\x01\x00" + bytes(64), "ELF"),
                             ("z.zip", b"PK\x05\x06" + bytes(18), "empty zip")]:
        root = tmp_path / name.replace(".", "_")
        for label in ("pos", "neg"):
            (root / label).mkdir(parents=True)
            (root / label / "1.txt").write_text(f"{label} text")
        (root / "neg" / name).write_bytes(data)
        for encoding in ("utf-8", "latin-1", "cp1252"):
            with pytest.raises(NBSVMError, match=f"not a text file: .*{what}") as e:
                list(read_inputs([root], encoding=encoding))
            assert name in str(e.value)


def test_a_class_folder_name_is_stripped_and_odd_entries_are_noted(tmp_path):
    """'pos ' is the class 'pos', as a line's label ' pos ' is (it was a third class);
    a link to nothing and a FIFO in a class folder are skipped with a note (without one
    before)."""
    from nbsvm.io.decoding import ReadStats
    for label, text in (("pos", "a"), ("pos ", "b"), ("neg", "c")):
        (tmp_path / label).mkdir()
        (tmp_path / label / "1.txt").write_text(text)
    (tmp_path / "neg" / "broken").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "neg" / "fifo")
    stats = ReadStats()
    docs = list(read_inputs([tmp_path], stats=stats))
    assert sorted(d.label for d in docs) == ["neg", "pos", "pos"]
    assert any("skipped 2 entries that are not a file (broken, fifo" in n for n in stats.notes)


def test_a_first_line_longer_than_the_buffer_keeps_its_lone_crs(tmp_path):
    """A first line of more than a megabyte with lone CRs inside, then LF lines: one
    document (it was split at its CRs: three documents, two of them without a label; train
    failed at a 'line 2' no editor showed), from a file and from a pipe."""
    import subprocess
    import sys
    path = tmp_path / "long.txt"
    words = "word " * 230_000
    path.write_bytes(f"pos\tfirst part\rsecond part\r{words}\nneg\tshort second doc\n".encode())
    docs = list(read_inputs([path]))
    assert [d.label for d in docs] == ["pos", "neg"]
    assert docs[0].text.startswith("first part second part word")
    piped = subprocess.run(
        [sys.executable, "-c", "import sys; from nbsvm.io.readers import read_inputs; "
         "print(len(list(read_inputs(['-']))))"],
        input=path.read_bytes(), capture_output=True)
    assert piped.stdout.strip() == b"2", piped.stderr
    cr_file = tmp_path / "cr.txt"  # a file of CR line ends, of over a megabyte, still splits
    cr_file.write_bytes(b"".join(b"pos\t" + b"good film " * 100 + b"\r" for _ in range(2000)))
    assert len(list(read_inputs([cr_file]))) == 2000


def test_a_lone_cr_before_a_label_and_tab_is_noted():
    """Records of a CR-ended file joined to an LF-ended one are read as one line's text
    (documented); a note now says so, naming the line."""
    from nbsvm.io.decoding import ReadStats
    stats = ReadStats()
    text = "pos\tgreat film\nneg\tbad film\nneg\tawful\rpos\tlovely\rneg\tterrible\n"
    docs = list(read_lines(io.BytesIO(text.encode()), stats=stats))
    assert len(docs) == 3 and docs[2].text == "awful pos\tlovely neg\tterrible"
    assert any("<stream>:3: a lone CR followed by 'pos' and a TAB" in n for n in stats.notes)
    quiet = ReadStats()
    list(read_lines(io.BytesIO(b"pos\tgreat\rfilm\n"), stats=quiet))
    assert not quiet.notes


def test_a_class_folder_named_only_spaces_is_refused(tmp_path):
    """Stripped, its label was '' (a class no output names, and predict's empty labels),
    where a line's empty label is refused."""
    for label in ("pos", "  "):
        (tmp_path / label).mkdir()
        (tmp_path / label / "1.txt").write_text("text")
    with pytest.raises(NBSVMError, match="name is only spaces: a label cannot be empty"):
        list(read_inputs([tmp_path]))


@pytest.mark.parametrize("sep, quote", [("\t", ""), (",", '"')])
def test_a_table_whose_first_row_outgrows_the_head_keeps_its_lone_crs(tmp_path, sep, quote):
    """A headerless table whose first row is longer than the 64 KiB head, lone CRs
    inside: the CSV was one document instead of three, the TSV a 'malformed row' at a
    line no editor shows. Decided on up to 16 MB, as the line readers."""
    from nbsvm.io import tables
    text = "\r".join(["word " * (tables.HEAD_BYTES // 20)] * 8)
    path = tmp_path / ("a.tsv" if sep == "\t" else "a.csv")
    path.write_bytes(f"pos{sep}{quote}{text}{quote}\nneg{sep}bad film\npos{sep}good film\n"
                     .encode())
    docs = list(tables.read_table(path, sep=sep, text_col="2", label_col="1"))
    assert [d.label for d in docs] == ["pos", "neg", "pos"] and len(docs[0].text) > 100_000


def test_a_utf16_first_line_longer_than_the_buffer_keeps_its_lone_crs(tmp_path):
    """The UTF-16/32 reader decided CR line ends on one buffer too: a first line of 2.4 MB
    with lone CRs inside was split, and reading stopped at a 'line 2' without a TAB."""
    line = "\r".join(["word " * 60000] * 4)
    path = tmp_path / "wide.txt"
    path.write_bytes(("pos\t" + line + "\nneg\tbad film\npos\tgood film\n").encode("utf-16"))
    docs = list(read_lines(path))
    assert [d.label for d in docs] == ["pos", "neg", "pos"] and len(docs[0].text) == len(line)


def test_a_column_the_header_names_is_that_column_beside_repeats(tmp_path):
    """'text,label,text,text.1': --text-col text.1 read the second 'text' (renamed text.1
    as older pandas did), not the column named text.1; the repeat is text.2 now, as pandas
    3 names it."""
    from nbsvm.io.tables import read_table
    path = tmp_path / "d.csv"
    path.write_text("text,label,text,text.1\ngood,pos,second,named one\n")
    assert [d.text for d in read_table(path, text_col="text.1")] == ["named one"]
    assert [d.text for d in read_table(path, text_col="text.2")] == ["second"]


def test_an_empty_header_name_beside_its_literal_unnamed_is_named_as_pandas_names_it(tmp_path):
    """'a,,Unnamed: 1': the empty field is 'Unnamed: 1.1' and the column the header names
    'Unnamed: 1' is that one (--text-col read the empty-named column instead)."""
    from nbsvm.io.tables import read_table
    path = tmp_path / "u.csv"
    path.write_text("label,,Unnamed: 1\npos,empty named,literal\n")
    assert [d.text for d in read_table(path, text_col="Unnamed: 1")] == ["literal"]
    assert [d.text for d in read_table(path, text_col="Unnamed: 1.1")] == ["empty named"]
