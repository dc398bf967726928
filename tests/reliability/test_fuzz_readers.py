"""Property-based fuzzing of every reader (issue 6, item 1).

Every reader gets near-valid inputs (valid lines of its format, then mutated: random bytes,
NUL, CRLF / CR, BOM, invalid UTF-8, huge numbers, nan/inf, missing TABs and colons, empty
fields, very long tokens) and plain random bytes. The property (``fuzz.expect``): the input
parses, or raises ``NBSVMError`` naming the file (and a line >= 1 when it gives one); never
another exception. Budgets are small (``make fuzz`` runs the long, coverage-guided version).
"""
import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fuzz
from nbsvm.errors import NBSVMError
from nbsvm.io import (read_aclimdb, read_inputs, read_lines, read_reviews, read_svmlight,
                      read_table, read_blitzer, review_members)

FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ------------------------------------------------------------------------------ strategies

words = st.sampled_from(["great", "awful", "film", "a_b", "Café", "東京", "x" * 5000, "",
                         "\x00", "\ufeff", "é", ":", "#", "|f", "qid:3"])
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                    st.integers(-2**70, 2**70).map(str),
                    st.sampled_from(["nan", "inf", "-inf", "1e999", "1_0", "0x10", "", "٣",
                                     "9" * 5000, "+1", "-0", ".5", "1e-400"]))
labels = st.sampled_from(["pos", "neg", "1", "-1", "+1", "1,3", ",", "", " ", "a b", "\t"])


def line_of(*parts):
    return st.tuples(*parts).map(lambda t: "".join(t))


feature = line_of(st.one_of(numbers, words), st.sampled_from([":", "", "::"]), numbers)
svm_line = line_of(labels, st.just(" "),
                   st.lists(feature, max_size=5).map(" ".join),
                   st.sampled_from(["", " # comment", " #"]))
named_line = line_of(labels, st.just(" "),
                     st.lists(line_of(words, st.just(":"), numbers), max_size=5).map(" ".join))
blitzer_line = line_of(st.lists(line_of(words, st.sampled_from([":", ""]), numbers),
                                max_size=5).map(" ".join),
                       st.sampled_from([" #label#:positive", " #label#:", "", "#label#:negative"]))
tab_line = line_of(labels, st.sampled_from(["\t", "", "\t\t", " "]),
                   st.lists(words, max_size=4).map(" ".join))
csv_line = line_of(st.lists(st.one_of(words, labels, st.just('"a, ""b"""'), st.just('"open')),
                            min_size=0, max_size=4).map(lambda f: ",".join(f)))
review_line = st.sampled_from(["<review>", "</review>", "<rating>", "</rating>", "5.0", "3.0",
                               "nan", "1e999", "<title>", "</title>", "<review_text>",
                               "</review_text>", "text &amp; more", "&#99999999;", "<data>",
                               "<unknown>", "</title", "<>", "", "x" * 5000])

MUTATIONS = st.sampled_from([b"\x00", b"\xef\xbb\xbf", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\t",
                             b":", b"#", b"\r", b"\n", b"\r\n", b" ", b"nan", b"inf", b"-",
                             b"9" * 40, b"a" * 10_000, b",", b'"', b"<review>"])


@st.composite
def near_valid(draw, line, header=None):
    """Valid-looking lines of one format, joined by a random line end, then mutated."""
    lines = draw(st.lists(line, max_size=6))
    if header is not None:
        lines = [draw(header)] + lines
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    data = bytearray((end.join(lines) + draw(st.sampled_from(["", end]))).encode("utf-8"))
    if draw(st.booleans()):
        data[:0] = b"\xef\xbb\xbf"
    for _ in range(draw(st.integers(0, 4))):
        pos = draw(st.integers(0, len(data)))
        if draw(st.booleans()) or not data:
            data[pos:pos] = draw(st.one_of(MUTATIONS, st.binary(max_size=6)))
        else:
            del data[pos:pos + draw(st.integers(1, 8))]
    return bytes(data)


def inputs(line, header=None):
    return st.one_of(near_valid(line, header), st.binary(max_size=200))


# ------------------------------------------------------------------------------ properties

@settings(FAST, max_examples=20)
@given(st.one_of(near_valid(tab_line).map(gzip.compress),
                 near_valid(tab_line).map(lambda b: gzip.compress(b)[: max(1, len(b) // 2)]),
                 st.binary(max_size=100)))
def test_lines_gz(data):
    fuzz.t_lines_gz(data)


tsv_header = st.sampled_from(["label\ttext", "Class\tReview", "text\tlabel", "id\tlabel\ttext",
                              "label\t", "label\ttext\t", "y\tx", "pos\tgood"])


csv_header = st.sampled_from(["text,label", "label,text", "text", "a,b", "text,label,text", ""])


@settings(FAST, max_examples=30)
@given(inputs(csv_line, st.sampled_from(["label,title,body", "title,body", "body,title,label",
                                          "label,title"])))
def test_csv_skip_bad(data):
    fuzz.t_csv_skip_bad(data)


@settings(FAST, max_examples=30)
@given(inputs(csv_line, csv_header))
def test_csv(data):
    fuzz.t_csv(data)


@settings(FAST, max_examples=20)
@given(inputs(csv_line.map(lambda s: s.replace(",", "\t")),
              csv_header.map(lambda s: s.replace(",", "\t"))))
def test_tsv_unlabeled(data):
    fuzz.t_tsv_inputs(data)


@settings(FAST, max_examples=20)
@given(st.one_of(inputs(tab_line), inputs(csv_line, csv_header)))
def test_read_inputs_auto(data):
    fuzz.t_inputs_auto(data)


@settings(FAST, max_examples=20)
@given(st.lists(st.tuples(st.integers(0, 255), near_valid(tab_line)), max_size=5)
       .map(lambda parts: b"\x00\x00".join(bytes([b]) + d for b, d in parts)))
def test_aclimdb(data):
    fuzz.t_aclimdb(data)


# each line reader with lines of its format, near valid, or random bytes: (fuzz.py's check,
# the line strategy, the header strategy)
LINE_READERS = {
    "lines": (fuzz.t_lines, tab_line, None),
    "text_lines": (fuzz.t_text_lines, tab_line, None),
    "header_lines": (fuzz.t_header_lines, tab_line, tsv_header),
    "predict_lines": (fuzz.t_predict_lines, tab_line, tsv_header),
    "svmlight": (fuzz.t_svmlight, svm_line, None),
    "svmlight_unlabeled": (fuzz.t_svmlight_unlabeled, svm_line, None),
    "blitzer": (fuzz.t_blitzer, blitzer_line, None),
    "named": (fuzz.t_named, named_line, None),
    "reviews": (fuzz.t_reviews, review_line, None),
}


@pytest.mark.parametrize("name", list(LINE_READERS))
@FAST
@given(data=st.data())
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_line_readers(name, data):
    check, line, header = LINE_READERS[name]
    check(data.draw(inputs(line, header)))


@settings(FAST, max_examples=20)
@given(near_valid(review_line), st.integers(0, 400), st.binary(max_size=8))
def test_review_archive(review, cut, junk):
    """Valid, truncated and patched tar.gz archives of a fuzzed review file."""
    blob = fuzz._tar({"d/positive.review": review})
    if cut:
        blob = blob[: max(1, len(blob) - cut)]
    if junk:
        pos = cut % len(blob)
        blob = blob[:pos] + junk + blob[pos + len(junk):]
    fuzz.t_review_archive(blob)


# ------------------------------------------------------------------------------ regressions
# Each of these raised something other than NBSVMError before the fix in nbsvm/io/.

def _one(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_svmlight_index_beyond_int64_is_an_error_with_line(tmp_path):
    """Was OverflowError (Python int too large to convert to C long)."""
    p = _one(tmp_path, "x.svm", b"1 1:1\n1 99999999999999999999:1\n")
    with pytest.raises(NBSVMError, match="too large") as e:
        list(read_svmlight(p))
    assert (e.value.path, e.value.line) == (str(p), 2)
    row = next(read_svmlight(_one(tmp_path, "y.svm", b"1 9223372036854775808:2\n"), index_base=1))
    assert row.keys.tolist() == [2**63 - 1]          # the largest index still reads


@pytest.mark.parametrize("data", [b"junk", gzip.compress(b"pos\tgood\n" * 50, mtime=0)[:30]],
                         ids=["junk", "cut-gzip"])
def test_lines_corrupt_gz_is_an_error(tmp_path, data):
    """Was BadGzipFile / EOFError from read_lines (the sparse readers caught it already)."""
    p = _one(tmp_path, "x.txt.gz", data)
    with pytest.raises(NBSVMError, match="cannot read") as e:
        list(read_lines(p))
    assert e.value.path == str(p)


def test_table_corrupt_gz_is_an_error(tmp_path):
    """Was EOFError from pandas, for read_table and for read_inputs' header sniffing."""
    p = _one(tmp_path, "x.csv.gz", gzip.compress(b"text,label\n" + b"good,pos\n" * 50)[:25])
    for run in (lambda: list(read_table(p)),
                lambda: list(read_inputs([p], fmt="csv", labeled=False))):
        with pytest.raises(NBSVMError, match="cannot read") as e:
            run()
        assert e.value.path == str(p)


def test_table_parser_error_names_the_line(tmp_path):
    p = _one(tmp_path, "x.csv", b"text,label\ngood,pos\nbad,neg,extra\n")
    with pytest.raises(NBSVMError, match=r"malformed row \(expected 2 fields, saw 3\) "
                       r"\(--skip-bad-lines skips") as e:   # as skipping it says it
        list(read_table(p))
    assert (e.value.path, e.value.line) == (str(p), 3)
    p = _one(tmp_path, "q.csv", b'text,label\n"open quote,pos\n')   # a quote never closed
    with pytest.raises(NBSVMError, match="cannot parse as CSV: a quote opened in this row") as e:
        list(read_table(p))
    assert e.value.line == 2


def test_aclimdb_folder_named_like_a_review_is_not_a_document(tmp_path):
    """Was IsADirectoryError; a class folder's documents are its regular files, so a
    folder inside it (named like a review or not) and hidden files are not read."""
    (tmp_path / "pos" / "1_10.txt").mkdir(parents=True)
    (tmp_path / "pos" / ".DS_Store").write_bytes(b"\x00\x01")
    (tmp_path / "pos" / "53803").write_text("good, no suffix")
    (tmp_path / "neg").mkdir()
    (tmp_path / "neg" / "2_1.txt").write_text("bad")
    docs = list(read_aclimdb(tmp_path))
    assert [(d.label, d.text) for d in docs] == [("neg", "bad"), ("pos", "good, no suffix")]


def test_blitzer_bom_on_the_first_line_is_not_a_feature(tmp_path):
    """The BOM was read as part of the first feature name (the other readers drop it)."""
    p = _one(tmp_path, "x.review", "\ufeffgreat:2 #label#:positive\n".encode())
    assert next(read_blitzer(p)).keys == ["great"]


def test_reviews_corrupt_gz_is_an_error(tmp_path):
    blob = gzip.compress(b"<review>\n<review_text>\nok\n</review_text>\n</review>\n" * 40)
    bad = bytearray(blob)
    bad[len(bad) // 2] ^= 0xFF                      # damaged deflate data: zlib.error
    p = _one(tmp_path, "positive.review.gz", bytes(bad))
    with pytest.raises(NBSVMError) as e:
        list(read_reviews(p))
    assert e.value.path == str(p)


def test_review_members_garbage_is_an_error(tmp_path):
    p = _one(tmp_path, "x.tar.gz", b"\x1f\x8b\x08\x00" + bytes(range(60)))
    with pytest.raises(NBSVMError):
        for _, fh in review_members(p):
            list(read_reviews(fh))


def test_review_members_gzip_header_cut_short_is_an_error(tmp_path):
    """Was TypeError (ord() of an empty read in tarfile's stream mode); found by make fuzz."""
    p = _one(tmp_path, "x.tar.gz", b"\x1f\x8b\x08\x1f")     # the input make fuzz found
    with pytest.raises(NBSVMError, match="cannot read the archive") as e:
        for _, fh in review_members(p):
            list(read_reviews(fh))
    assert e.value.path == str(p)


def test_valid_inputs_unchanged(tmp_path):
    """The fixes keep what valid files read as."""
    p = _one(tmp_path, "a.svm", b"1,3 qid:7 1:0.5 4:2\n")
    row = next(read_svmlight(p))
    assert row.labels == ("1", "3") and row.keys.tolist() == [0, 3]
    assert np.allclose(row.values, [0.5, 2.0])
    docs = list(read_lines(_one(tmp_path, "b.txt.gz", gzip.compress(b"pos\tgood\r\nneg\tbad\n"))))
    assert [(d.label, d.text, d.line) for d in docs] == [("pos", "good", 1), ("neg", "bad", 2)]
