"""pipelines/rcv1.py and rcv1_full.py on small inputs: the data loading (VW tar member,
svmlight file), the RCV1_FULL conversion of synthetic files in the original formats, the
synthetic RCV1-shaped generator and the Pegasos replay. No full runs."""
import gzip
import io
import sys
import tarfile

import numpy as np
import pytest

from conftest import REPO, shared_datasets
from nbsvm.errors import NBSVMError
from nbsvm.io.sparse import read_svmlight

sys.path.insert(0, str(REPO / "pipelines"))
import rcv1_data  # noqa: E402
import rcv1_fetch  # noqa: E402
import rcv1_full  # noqa: E402
import rcv1_objective  # noqa: E402
import rcv1_pegasos  # noqa: E402
import rcv1_prepare  # noqa: E402
import rcv1_small  # noqa: E402
import rcv1_synthetic  # noqa: E402

SVM = "1 1:0.6 3:0.8\n-1 2:1.0\n1 1:0.8 4:0.6\n"


def _tar(path, members: dict):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


# ---- data loading -------------------------------------------------------------------------------

def test_svmlight_file_reads_one_based_rows(tmp_path):
    path = tmp_path / "train.dat.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(SVM)
    X, y = rcv1_data.read_svmlight_file(path)
    assert y.tolist() == ["1", "-1", "1"]
    assert X.indices.tolist() == [0, 2, 1, 0, 3] and X.offsets.tolist() == [0, 2, 3, 5]
    assert X.n_features == rcv1_data.N_FEATURES
    assert np.allclose(X.sq_norms(), 1.0)


def test_vw_tar_member_skips_the_namespace(tmp_path):
    tar = _tar(tmp_path / "vw.tar.gz", {"test/rcv1_small_test.data": "1 |f 2:0.6 5:0.8\n"
                                                                      "-1 |f 1:1\n"})
    X, y = rcv1_data.read_tar_member(tar, "rcv1_small_test.data")
    assert y.tolist() == ["1", "-1"] and X.indices.tolist() == [1, 4, 0]
    with pytest.raises(NBSVMError, match="no member 'nothing.dat'"):
        rcv1_data.read_tar_member(tar, "nothing.dat")


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(NBSVMError, match="file not found"):
        rcv1_data.read_svmlight_file(tmp_path / "missing.dat")
    bad = tmp_path / "bad.dat"
    bad.write_text("2 1:1\n")
    with pytest.raises(NBSVMError, match="labels are 1 / -1"):
        rcv1_data.read_svmlight_file(bad)
    wide = tmp_path / "wide.dat"
    wide.write_text(f"1 {rcv1_data.N_FEATURES + 1}:1\n")
    with pytest.raises(NBSVMError, match="beyond the 47236"):
        rcv1_data.read_svmlight_file(wide)


def test_small_split_concatenates_and_counts_overlap(tmp_path):
    with gzip.open(tmp_path / rcv1_data.TRAIN_FILE, "wt") as fh:
        fh.write(SVM)
    _tar(tmp_path / rcv1_data.VW_TAR, {"a/rcv1_small.dat": "-1 |f 2:1.0\n1 |f 7:1\n",
                                  "b/rcv1_small_test.data": "1 |f 1:0.6 3:0.8\n-1 |f 9:1\n"})
    d = rcv1_data.load_small(tmp_path)
    assert len(d["y"]) == 5 and d["y"].tolist() == ["1", "-1", "1", "-1", "1"]
    assert d["X"].offsets.tolist() == [0, 2, 3, 5, 6, 7] and d["X"].indices[-1] == 6
    assert d["overlap"] == dict(train_rows=5, train_distinct=4, test_rows=2, test_in_train=1)


@pytest.mark.skipif(not (shared_datasets() / "rcv1" / rcv1_data.VW_TAR).is_file(),
                    reason="shared RCV1 data not found")
def test_shared_vw_test_member_has_500_rows():
    X, y = rcv1_data.read_tar_member(shared_datasets() / "rcv1" / rcv1_data.VW_TAR, rcv1_data.VW_TEST)
    assert len(y) == 500 and int((y == "1").sum()) == 245


# ---- objective and eta0 calibration -------------------------------------------------------------

def test_primal_leaves_the_bias_unregularized():
    from nbsvm.data.rows import as_rows
    X = as_rows(np.array([[1.0, 0.0], [0.0, 1.0]]))
    y = np.array(["1", "-1"])
    w = np.array([2.0, 0.0])
    # margins 2 + 0.5 and -(0 + 0.5): hinge 0 and 1.5
    assert rcv1_objective.primal(w, 0.5, X, y, 0.1, "hinge") == pytest.approx(0.05 * 4 + 0.75)


# ---- Pegasos replay ------------------------------------------------------------------------------

def _pegasos_rows(n=300, seed=0):
    rng = np.random.default_rng(seed)
    from conftest import random_rows
    _, indices, values, offsets = random_rows(rng, n, 50, sizes=(3, 8))
    from nbsvm.data.rows import SparseRows
    X = SparseRows(indices.astype(np.int64), values, offsets.astype(np.int64), 50)
    norms = np.sqrt(X.sq_norms())
    X.values = X.values / np.repeat(norms, np.diff(X.offsets))
    y = np.where(rng.random(n) < 0.5, "1", "-1")
    return X, y


def test_blog_replay_counts_before_each_report():
    X, y = _pegasos_rows()
    table = rcv1_pegasos.blog_replay(X, y, 1e-4)
    assert [r["updates"] for r in table] == [100, 200, 300]
    # w starts empty: the first example always violates; errors count step - 1 examples
    assert all(1 <= r["violations"] <= r["updates"] - 1 for r in table)
    assert table[0]["rate"] == table[0]["violations"] / 100


def test_nbsvm_replay_is_the_learner_run_in_blocks():
    X, y = _pegasos_rows()
    table = rcv1_pegasos.nbsvm_replay(X, y, 1e-4)
    whole = rcv1_pegasos.Pegasos(lam=1e-4).partial_fit(X, y)          # one pass, file order
    assert table[-1]["updates"] == 300
    assert table[-1]["violations"] == int(whole.state_[3])
    assert table[-1]["features"] == int(np.count_nonzero(whole.coef_))
    frame = rcv1_pegasos.pegasos_table(X, y, 1e-4, rows=3)
    assert frame["published_violations"].tolist() == [64, 123, 175]
    assert frame["nbsvm_violations"].tolist() == [r["violations"] for r in table]


@pytest.mark.skipif(not (shared_datasets() / "rcv1" / rcv1_data.TRAIN_FILE).is_file(),
                    reason="shared RCV1 data not found")
def test_blog_replay_reproduces_the_published_table_on_train2000():
    records = []
    for r in read_svmlight(shared_datasets() / "rcv1" / rcv1_data.TRAIN_FILE, index_base=1):
        records.append(r)
        if len(records) == 300:
            break
    X, y = rcv1_data.rows_from_records(records)
    table = rcv1_pegasos.blog_replay(X, y, 1e-4)
    assert [(r["features"], r["violations"]) for r in table] == \
        [(p[1], p[2]) for p in rcv1_pegasos.PEGASOS_PUBLISHED[:3]]


# ---- synthetic RCV1-shaped corpus ----------------------------------------------------------------

@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_synthetic_corpus_has_the_requested_shape():
    d = rcv1_synthetic.synthetic_rcv1(3000, 500, seed=1, n_features=5000, mean_nnz=40.0)
    X = d["X"]
    nnz = np.diff(X.offsets)
    assert len(X) == 3000 and len(d["Xt"]) == 500 and X.n_features == 5000
    assert abs(nnz.mean() - 40.0) < 2.0                       # distinct features per row
    assert np.allclose(X.sq_norms(), 1.0)
    for a, b in zip(X.offsets[:50], X.offsets[1:51]):          # sorted, distinct per row
        assert np.all(np.diff(X.indices[a:b]) > 0)
    df = np.bincount(X.indices, minlength=5000)
    assert df[:10].mean() > 20 * max(df[-1000:].mean(), 1e-9)   # Zipf: head >> tail
    assert 0.42 < np.mean(d["y"] == "1") < 0.53 and abs(d["flipped"] - 0.05) < 0.015
    again = rcv1_synthetic.synthetic_rcv1(3000, 500, seed=1, n_features=5000, mean_nnz=40.0)
    assert np.array_equal(again["X"].values, X.values) and np.array_equal(again["y"], d["y"])


def test_synthetic_rule_is_learnable():
    d = rcv1_synthetic.synthetic_rcv1(4000, 1000, seed=2, n_features=3000, mean_nnz=30.0, planted=0.05)
    m = rcv1_small.SGDClassifier(loss="hinge", lam=1e-4, eta0=0.5, epochs=5).fit(d["X"], d["y"])
    assert np.mean(m.predict(d["Xt"]) != d["yt"]) < 0.25


# ---- RCV1_FULL conversion on files in the original formats --------------------------------------

QRELS = "C15 1 1\nCCAT 1 1\nGCAT 2 1\nCCAT 3 1\nE11 10 1\nCCAT 11 1\nM14 12 1\n"
TOKENS_TRAIN = ".I 1\n.W\nbank rate rate\ncut\n\n.I 2\n.W\nvote bank\n"
TOKENS_TEST = [".I 10\n.W\nrate rate rate bank\n", ".I 11\n.W\nvote unknownword\n",
               ".I 12\n.W\nrate cut\n", ".I 13\n.W\nonlyunknown\n"]


def _write_gz(path, text):
    with gzip.open(path, "wt") as fh:
        fh.write(text)


def _original_files(folder, kind):
    folder.mkdir(parents=True, exist_ok=True)
    _write_gz(folder / "rcv1-v2.topics.qrels.gz", QRELS)
    if kind == "tokens":
        _write_gz(folder / "lyrl2004_tokens_train.dat.gz", TOKENS_TRAIN)
        for k, text in enumerate(TOKENS_TEST):
            _write_gz(folder / f"lyrl2004_tokens_test_pt{k}.dat.gz", text)
    else:
        _write_gz(folder / "lyrl2004_vectors_train.dat.gz", "1  2:0.3 5:0.4\n2  7:2\n")
        for k, text in enumerate(["10  3:1 1:1\n", "11  4:0.5\n", "12  2:3 9:4\n", ""]):
            _write_gz(folder / f"lyrl2004_vectors_test_pt{k}.dat.gz", text)
    return folder


def _lines(path):
    return [(r.labels[0], r.keys.tolist(), r.values) for r in read_svmlight(path, index_base=1)]


def test_tokens_route_is_bottous_prep(tmp_path):
    src = _original_files(tmp_path / "src", "tokens")
    stats = rcv1_prepare.prepare("tokens", src, tmp_path / "out")
    assert stats["n_features"] == 4                # bank, rate, cut, vote: the official train
    train = _lines(tmp_path / "out" / rcv1_prepare.TRAIN_NAME)
    test = _lines(tmp_path / "out" / rcv1_prepare.TEST_NAME)
    # training = the official test parts (doc 13 has no dictionary term: skipped)
    assert [t[0] for t in train] == ["-1", "1", "-1"]
    assert stats["train"]["skipped_empty"] == 1 and stats["train"]["positive"] == 1
    # df on the new training set (3 docs): bank 1, rate 2, cut 1, vote 1
    n, idf = 3, {1: np.log(3), 2: np.log(3 / 2), 3: np.log(3), 4: np.log(3)}
    v = np.array([(1 + np.log(1)) * idf[1], (1 + np.log(3)) * idf[2]])      # doc 10
    assert train[0][1] == [0, 1] and np.allclose(train[0][2], v / np.linalg.norm(v))
    assert train[1][1] == [3] and np.allclose(train[1][2], [1.0])             # doc 11: vote
    # test = the official training file, with the training idf; doc 1 is CCAT
    assert [t[0] for t in test] == ["1", "-1"]
    v1 = np.array([idf[1], (1 + np.log(2)) * idf[2], idf[3]])
    assert test[0][1] == [0, 1, 2] and np.allclose(test[0][2], v1 / np.linalg.norm(v1))
    for _, _, values in train + test:
        assert np.isclose(values @ values, 1.0)


def test_vectors_route_keeps_lyrl_tfidf_at_unit_length(tmp_path):
    src = _original_files(tmp_path / "src", "vectors")
    stats = rcv1_prepare.prepare("vectors", src, tmp_path / "out")
    assert stats["n_features"] == rcv1_prepare.VECTOR_FEATURES
    train = _lines(tmp_path / "out" / rcv1_prepare.TRAIN_NAME)
    assert [t[0] for t in train] == ["-1", "1", "-1"]            # docs 10, 11, 12
    assert train[0][1] == [0, 2] and np.allclose(train[0][2], [2 ** -0.5] * 2)
    assert np.allclose(train[2][2], [0.6, 0.8])
    test = _lines(tmp_path / "out" / rcv1_prepare.TEST_NAME)
    assert [t[0] for t in test] == ["1", "-1"] and np.allclose(test[0][2], [0.6, 0.8])


def test_missing_source_files_and_bad_lines_are_clear_errors(tmp_path):
    src = _original_files(tmp_path / "src", "vectors")
    (src / "lyrl2004_vectors_test_pt2.dat.gz").unlink()
    with pytest.raises(NBSVMError, match="missing in the source folder: "
                                         "lyrl2004_vectors_test_pt2.dat.gz"):
        rcv1_prepare.prepare("vectors", src, tmp_path / "out")
    bad = tmp_path / "bad.qrels"
    bad.write_text("CCAT one 1\n")
    with pytest.raises(NBSVMError, match="bad.qrels:1: expected '<topic> <docid> 1'"):
        rcv1_prepare.read_ccat(bad)


def test_network_failure_says_what_to_do(tmp_path):
    with pytest.raises(NBSVMError, match="cannot download rcv1-v2.topics.qrels.gz .*--source"):
        rcv1_fetch.fetch("tokens", None, tmp_path, bases=("http://127.0.0.1:9/",))
    assert not list(tmp_path.glob("*.part"))


def test_full_run_trains_out_of_core_on_the_converted_files(tmp_path):
    src = _original_files(tmp_path / "src", "tokens")
    rows = rcv1_full.run_full(tmp_path / "out", seed=0, kind="tokens", source=src)
    assert [r["method"] for r in rows][:3] == ["SGD hinge", "averaged SGD hinge",
                                               "Pegasos (no bias)"]
    assert [r["epochs"] for r in rows] == [5, 3, 5, 12, 8]
    for r in rows:
        assert r["objective"] > 0 and 0 <= r["test_error_pct"] <= 100
