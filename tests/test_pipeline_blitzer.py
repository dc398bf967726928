"""`make blitzer` (pipelines/blitzer.py) on small hand-made inputs: the raw review reader
(nbsvm/io/blitzer.py), archive members, the deterministic split, the folds, the features.
No full runs: the real archives are never read here."""
import doctest
import io
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "pipelines"))

import blitzer  # noqa: E402
import blitzer_data  # noqa: E402
import blitzer_experiments  # noqa: E402
import blitzer_methods  # noqa: E402
import nbsvm.io.blitzer as raw_reader  # noqa: E402
from nbsvm.errors import NBSVMError  # noqa: E402
from nbsvm.io import read_reviews, review_members  # noqa: E402


def review(text="Great book.", title="Nice", rating="5.0", extra=""):
    """One record in the file's layout; a field given as None is left out."""
    fields = [("rating", rating), ("title", title), ("review_text", text)]
    lines = ["<review>", "<unique_id>", "id:1", "</unique_id>"]
    for name, value in fields:
        if value is not None:
            lines += [f"<{name}>", value, f"</{name}>"]
    return "\n".join(lines) + "\n" + extra + "</review>\n"


def reviews(text: str, name="books/positive.review", **kw):
    return list(read_reviews(io.StringIO(text), source=name, **kw))


# ---- the raw reader ------------------------------------------------------------------------

def test_records_entities_and_labels_from_the_file_name():
    docs = reviews(review("A &quot;must&quot; &amp; it&#8217;s &lt;fun&gt;", title="Tom &amp; me")
                   + review("Second\n\nparagraph."), name="x/books/positive.review")
    assert [d.label for d in docs] == ["positive", "positive"]
    assert docs[0].text == 'Tom & me\n\nA "must" & it\u2019s <fun>'
    assert docs[1].text == "Nice\n\nSecond\n\nparagraph."
    assert [d.line for d in docs] == [1, 15]          # the line of each <review>
    assert docs[0].source == "x/books/positive.review"


def test_missing_optional_field_is_skipped():
    doc, = reviews(review("Only the body.", title=None, rating=None),
                   name="books/negative.review")
    assert (doc.label, doc.text) == ("negative", "Only the body.")


def test_missing_review_text_names_file_and_line():
    text = review() + review(text=None)
    with pytest.raises(NBSVMError, match=r"^books/positive.review:15: review has no "
                                         r"<review_text>"):
        reviews(text)


@pytest.mark.parametrize("text, where, message", [
    ("<review>\n<title>\nx\n</review>\n", 4, "<title> .opened on line 2. is not closed"),
    ("<review>\nstray words\n</review>\n", 2, "text outside a field"),
    ("<review>\n<title>\nx\n</title>\n", 4, "end of file inside <review> opened on line 1"),
    ("<review>\n<review_text>\nx\n", 3, "end of file inside <review_text> opened on line 2"),
    ("hello\n", 1, "expected <review>"),
    ("</review>\n", 1, "expected <review>"),
    ("<review>\n<title>\na\n</title>\n<title>\nb\n</title>\n</review>\n", 5, "appears twice"),
])
def test_malformed_records_name_file_and_line(text, where, message):
    with pytest.raises(NBSVMError, match=rf"^bad.review:{where}: .*{message}"):
        reviews(text, name="bad.review", label="positive")


def test_wrapper_lines_and_non_utf8_bytes():
    data = ("<data>\n" + review("caf\u00e9 ok") + "</data>\n").encode("utf-8")
    data = data.replace("caf\u00e9".encode("utf-8"), b"caf\xe9")       # a latin-1 byte
    doc, = read_reviews(io.BytesIO(data), source="dvd/positive.review")
    assert doc.text == "Nice\n\ncaf\ufffd ok"


def test_labels_from_rating_explicit_or_none():
    text = review(rating="4.0") + review(rating="2.0")
    assert [d.label for d in reviews(text, name="all.review")] == ["positive", "negative"]
    assert [d.label for d in reviews(text, label="rating")] == ["positive", "negative"]
    assert [d.label for d in reviews(text, label="pos")] == ["pos", "pos"]
    assert [d.label for d in reviews(text, label=None)] == [None, None]
    with pytest.raises(NBSVMError, match=r"all.review:1: rating 3.0 is neither"):
        reviews(review(rating="3.0"), name="all.review")
    with pytest.raises(NBSVMError, match="unknown review field"):
        reviews(review(), fields=("body",))


def test_reader_docstring_examples():
    result = doctest.testmod(raw_reader, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
    result = doctest.testmod(blitzer_data, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ---- archives ------------------------------------------------------------------------------

def make_tar(path: Path, members: dict) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_one_member_from_a_tiny_tar_gz(tmp_path):
    archive = make_tar(tmp_path / "tiny.tar.gz", {
        "sorted_data_acl/books/positive.review": review("Loved it.") + review("Again."),
        "sorted_data_acl/README": "not a review"})
    members = [(name, list(read_reviews(fh))) for name, fh in review_members(archive)]
    assert [name for name, _ in members] == ["sorted_data_acl/books/positive.review"]
    docs = members[0][1]
    assert [d.text for d in docs] == ["Nice\n\nLoved it.", "Nice\n\nAgain."]
    assert docs[0].source == f"{archive}:sorted_data_acl/books/positive.review"
    assert {d.label for d in docs} == {"positive"}


def test_errors_inside_a_member_name_archive_member_and_line(tmp_path):
    archive = make_tar(tmp_path / "bad.tar.gz", {"d/dvd/negative.review": review() + "oops\n"})
    with pytest.raises(NBSVMError, match=r"bad.tar.gz:d/dvd/negative.review:15: expected"):
        for name, fh in review_members(archive):
            list(read_reviews(fh))
    with pytest.raises(NBSVMError, match="no such archive"):
        list(review_members(tmp_path / "missing.tar.gz"))
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(NBSVMError, match="cannot read the archive"):
        list(review_members(tmp_path / "junk.tar.gz"))


def tiny_archives(tmp_path, per_class=6, skip=()):
    """Both routes' archives with ``per_class`` reviews of each label in every domain; the
    i-th review of a file has text and features that name its domain, label and i."""
    raw, processed = {}, {}
    for domain in blitzer_data.DOMAINS:
        folder = blitzer_data.ARCHIVES["raw"].folders[domain]
        for label in blitzer_data.LABELS:
            word = "good" if label == "positive" else "bad"
            raw[f"sorted_data_acl/{folder}/{label}.review"] = "".join(
                review(f"{word} {domain} item{i}") for i in range(per_class))
            processed[f"processed_acl/{domain}/{label}.review"] = "".join(
                f"{word}:1 {domain}:2 item{i}:1 {word}_{domain}:1 #label#:{label}\n"
                for i in range(per_class))
    for name in skip:
        raw.pop(name)
    return (make_tar(tmp_path / "raw.tar.gz", raw),
            make_tar(tmp_path / "processed.tar.gz", processed))


@pytest.mark.parametrize("route", blitzer_data.ROUTES)
def test_load_route_and_the_deterministic_split(tmp_path, route):
    archives = dict(zip(blitzer_data.ROUTES, tiny_archives(tmp_path)))
    data = blitzer_data.load_route(archives[route], route, n_bits=12, ngrams=2, need=4)
    assert list(data) == list(blitzer_data.DOMAINS)
    books = data["books"]
    assert books.labels.tolist() == ["positive"] * 6 + ["negative"] * 6
    assert books.rows.n_features == 1 << 12 and len(books.rows) == 12
    assert (books.texts is not None) == (route == "raw")
    train, test = blitzer_experiments.split_domains(data, 4)
    assert len(train["dvd"]) == 8 and len(test["dvd"]) == 4
    if route == "raw":       # the first four of each file train, in file order
        assert train["books"].texts[:4] == [f"Nice\n\ngood books item{i}" for i in range(4)]
        assert test["books"].texts == ["Nice\n\ngood books item4", "Nice\n\ngood books item5",
                                       "Nice\n\nbad books item4", "Nice\n\nbad books item5"]
    every = blitzer_data.concat([train[d] for d in blitzer_data.DOMAINS])
    assert len(every) == 32 and len(every.rows) == 32
    assert np.array_equal(every.take(np.arange(8, 16)).rows.indices, train["dvd"].rows.indices)


def test_missing_members_and_short_files_are_clear_errors(tmp_path):
    raw, _ = tiny_archives(tmp_path, skip=["sorted_data_acl/kitchen_&_housewares/positive.review"])
    with pytest.raises(NBSVMError, match=r"no member sorted_data_acl/kitchen_&_housewares/"
                                         r"positive.review"):
        blitzer_data.load_route(raw, "raw", 12, 2, need=4)
    raw, _ = tiny_archives(tmp_path, per_class=3)
    with pytest.raises(NBSVMError, match=r"has 3 reviews; the split needs more than 4"):
        blitzer_data.load_route(raw, "raw", 12, 2, need=4)


def test_member_key_maps_folders_to_domains():
    raw = blitzer_data.ARCHIVES["raw"]
    assert blitzer_data.member_key("sorted_data_acl/kitchen_&_housewares/negative.review", raw) == \
        ("kitchen", "negative")
    assert blitzer_data.member_key("x/sorted_data_acl/dvd/positive.review", raw) == ("dvd", "positive")
    assert blitzer_data.member_key("sorted_data_acl/dvd/unlabeled.review", raw) is None
    assert blitzer_data.member_key("processed_acl/dvd/positive.review", raw) is None


# ---- splits --------------------------------------------------------------------------------

def test_first_per_class_takes_the_first_n_of_each_label_in_file_order():
    labels = np.array(["positive"] * 5 + ["negative"] * 5)
    train, test = blitzer_data.first_per_class(labels, 3)
    assert train.tolist() == [0, 1, 2, 5, 6, 7] and test.tolist() == [3, 4, 8, 9]
    mixed = np.array(["n", "p", "n", "p", "p", "n"])
    train, test = blitzer_data.first_per_class(mixed, 2)
    assert train.tolist() == [0, 1, 2, 3] and test.tolist() == [4, 5]


def test_stratified_folds_are_balanced_seeded_and_a_partition():
    labels = np.array(["positive"] * 10 + ["negative"] * 10)
    folds = blitzer_data.stratified_folds(labels, 5, seed=3)
    assert np.array_equal(folds, blitzer_data.stratified_folds(labels, 5, seed=3))
    assert not np.array_equal(folds, blitzer_data.stratified_folds(labels, 5, seed=4))
    for k in range(5):
        in_fold = labels[folds == k]
        assert (in_fold == "positive").sum() == 2 and (in_fold == "negative").sum() == 2
    with pytest.raises(NBSVMError, match="folds need"):
        blitzer_data.stratified_folds(labels[:12], 5, seed=0)      # only 2 negatives


def test_validation_split_is_a_stratified_quarter():
    labels = np.array(["positive"] * 8 + ["negative"] * 8)
    fit, val = blitzer_data.validation_split(labels, seed=0)
    assert len(val) == 4 and (labels[val] == "positive").sum() == 2
    assert sorted(np.concatenate([fit, val]).tolist()) == list(range(16))


# ---- features and the command line ---------------------------------------------------------

def test_class_ratios_sign_and_min_df():
    rows = blitzer_methods.SparseRows(np.array([0, 1, 0, 2, 1]), np.array([3.0, 1, 1, 1, 2]),
                              np.array([0, 2, 4, 5]), 4)
    labels = np.array(["positive", "positive", "negative"])
    r = blitzer_methods.class_ratios(rows, labels, min_df=1)
    # bucket 1 is in one document of each class: below the positive-only buckets 0 and 2
    assert r[0] > 0 and r[2] > 0 and r[1] < min(r[0], r[2]) and r[3] == 0   # 3: unseen
    assert blitzer_methods.class_ratios(rows, labels, min_df=2)[2] == 0           # one document
    weighted = blitzer_methods.nb_weighted(rows, r)
    assert weighted.values.tolist() == pytest.approx(r[rows.indices].tolist())


@pytest.mark.parametrize("argv, message", [
    (["--routes", "text"], "--routes takes"),
    (["--folds", "1"], "--folds >= 2"),
    (["--n-bits", "40"], "--n-bits must be in"),
])
def test_bad_arguments_are_clear_errors(argv, message, capsys):
    with pytest.raises(SystemExit):
        blitzer.parse_args(argv)
    assert message in capsys.readouterr().err


def test_a_missing_archive_is_a_clear_error(tmp_path, capsys):
    code = blitzer.main(["--raw-archive", str(tmp_path / "nope.tar.gz"), "--routes", "raw"])
    assert code == 2 and "nope.tar.gz: no such archive" in capsys.readouterr().err


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_tables_and_results_files_on_tiny_archives(tmp_path, capsys):
    """The whole flow on 12 reviews per domain (seconds, not the benchmark): every table is
    built, the published figures sit beside ours, and the tidy CSV has the agreed columns."""
    raw, processed = tiny_archives(tmp_path)
    code = blitzer.main(["--raw-archive", str(raw), "--processed-archive", str(processed),
                         "--train-per-class", "4", "--folds", "2", "--epochs", "2",
                         "--n-bits", "12", "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    assert code == 0
    assert printed.startswith("== blitzer: configuration") and "epoch 2/2:" in printed
    assert "NBSVM beats plain hinge SGD in" in printed
    assert "reproduce: .venv/bin/python pipelines/blitzer.py --raw-archive" in printed
    import pandas as pd
    frame = pd.read_csv(tmp_path / "out" / "blitzer.csv")
    assert list(frame.columns) == ["method", "route", "train_domain", "test_domain", "split",
                                   "accuracy"]
    ours = frame[frame.split == "8/4"]
    assert len(ours) == 4 * 5 * 4                     # methods x train rows x test domains
    assert set(frame.method) == {"NBSVM", "SGD hinge", "Blitzer et al. 2007", "Sol"}
    assert set(frame.split) >= {"2-fold mean", "2-fold std"}
    md = (tmp_path / "out" / "blitzer.md").read_text()
    assert "Blitzer et al. 2007 (1600/400)" in md and "train \\ test" in md


def test_a_truncated_processed_archive_is_a_clear_error(tmp_path):
    # reading a member of a damaged archive must name the archive, not end in a traceback
    from nbsvm.io import read_blitzer

    lines = "".join(f"w{i}:1 x{i}_y:2 #label#:positive\n" for i in range(20000))
    data = lines.encode()
    path = tmp_path / "processed.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("processed_acl/books/positive.review")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    whole = path.read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(NBSVMError, match="cut.tar.gz"):
        for _, member in review_members(cut):
            for _ in read_blitzer(member):
                pass
