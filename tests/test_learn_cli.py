"""``nbsvm learn`` / ``eval`` / ``predict`` with the backend learners, on the real RCV1 and
Blitzer files and on small hand-made svmlight, multi-label, named-feature and regression
files; the library behind them (``nbsvm.workflows.learn``)."""
import gzip
import io
import json
import math
import re
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from conftest import shared_datasets
from testhelpers import blitzer_books
from naive import naive_hashed_row
from nbsvm import NBSVMError
from nbsvm.cli import app
from nbsvm.io.sparse import read_named, read_svmlight
from nbsvm.data.rowcache import RowWriter
from nbsvm.data.rowencoder import RowEncoder
from nbsvm.evaluation.sparse import evaluate_sparse, load_learner, predict_sparse
from nbsvm.io.npzfile import model_file_kind
from nbsvm.workflows.learn import learn_sparse
from nbsvm.learners.options import learner_class_for, make_learner_from_options
from nbsvm.learners.base import OnlineLearner
from nbsvm.data.rows import SparseRows
from test_cli import assert_clean_error, assert_ok, assert_out_of_range

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def need(algorithm):
    """Skip when the learner behind ``--algorithm`` is not in this build yet."""
    try:
        learner_class_for(algorithm)
    except NBSVMError as e:
        pytest.skip(str(e))


def printed(output, name):
    """The number after ``name: `` on its own line (``%`` dropped)."""
    m = re.search(rf"^{re.escape(name)}: ([-+\d.e]+)%?$", output, re.M)
    assert m, (name, output)
    return float(m.group(1))


# ---- data -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rcv1(tmp_path_factory):
    root = shared_datasets() / "rcv1"
    train, vw = root / "train2000.dat.gz", root / "vw_rcv1_small.tar.gz"
    if not (train.is_file() and vw.is_file()):
        pytest.skip(f"RCV1 files not found in {root}")
    tmp = tmp_path_factory.mktemp("rcv1")
    with tarfile.open(vw) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("rcv1_small_test.data"))
        (tmp / "rcv1_small_test.data").write_bytes(tar.extractfile(member).read())
    return train, tmp / "rcv1_small_test.data"


@pytest.fixture(scope="module")
def blitzer(tmp_path_factory):
    """Books: the first 300 reviews of each polarity to train, the next 100 to test."""
    tmp = tmp_path_factory.mktemp("blitzer")
    train, test = [], []
    for polarity in ("positive", "negative"):
        lines = blitzer_books(polarity)
        (tmp / f"train_{polarity}.review").write_text("".join(lines[:300]), "latin-1")
        (tmp / f"test_{polarity}.review").write_text("".join(lines[300:400]), "latin-1")
        train.append(tmp / f"train_{polarity}.review")
        test.append(tmp / f"test_{polarity}.review")
    return train, test


def write_multilabel(path, n, seed):
    """Labels a, b, c; label j is present when feature block j carries signal."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        labels = [c for c in "abc" if rng.random() < 0.4] or ["a"]
        feats = {}
        for j, c in enumerate("abc"):
            if c in labels:
                for i in rng.choice(5, size=2, replace=False):
                    feats[1 + 5 * j + int(i)] = 1.0
        for i in rng.choice(range(16, 30), size=3, replace=False):     # noise
            feats[int(i)] = round(float(rng.random()), 3)
        lines.append(",".join(labels) + " " + " ".join(f"{i}:{v}" for i, v in sorted(feats.items())))
    path.write_text("\n".join(lines) + "\n")
    return path


def write_named(path, n, seed):
    """Three topics with words of their own plus shared noise words (``label name:value``)."""
    rng = np.random.default_rng(seed)
    vocab = {"sports": ["goal", "team", "match", "coach", "league"],
             "politics": ["vote", "senate", "law", "party", "policy"],
             "science": ["atom", "cell", "gene", "physics", "lab"]}
    noise = [f"w{i}" for i in range(40)] + ["naïve", "a:b"]
    lines = []
    for _ in range(n):
        topic = list(vocab)[int(rng.integers(3))]
        words = list(rng.choice(vocab[topic], size=2, replace=False)) + \
            list(rng.choice(noise, size=4, replace=False))
        lines.append(topic + " " + " ".join(f"{w}:{int(rng.integers(1, 4))}" for w in words))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_regression(path, n, seed, w=(0.5, -0.25, 0.75, 0.2)):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        x = rng.random(len(w))
        lines.append(f"{float(np.dot(w, x)) + 0.01 * rng.normal():.6f} " +
                     " ".join(f"{i + 1}:{v:.5f}" for i, v in enumerate(x)))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def regression_files(tmp_path):
    return write_regression(tmp_path / "reg_train.svm", 400, 0), \
        write_regression(tmp_path / "reg_test.svm", 100, 1)


# ---- the real corpora -----------------------------------------------------------------------

def test_rcv1_pegasos_learn_eval_predict(rcv1, tmp_path):
    need("pegasos")
    train, test = rcv1
    model = tmp_path / "m.npz"
    r = run("learn", train, "--algorithm", "pegasos", "--lambda", "1e-4", "--epochs", "10",
            "--output", model)
    assert_ok(r)
    epochs = re.findall(r"^epoch (\d+)/10  examples 2,000 .*\d+\.\d\ds$", r.output, re.M)
    assert epochs == [str(e) for e in range(1, 11)], r.output
    assert "examples: 2000" in r.output and "features: 13,104 used of 47,138" in r.output
    r = run("eval", test, "--model", model)
    assert_ok(r)
    accuracy = printed(r.output, "accuracy")
    print(f"RCV1 (train2000 -> VW test 500) Pegasos accuracy: {accuracy:.2f}%")
    # LinearSVC (no intercept) on the same split: 89.0% at C = 1 / (lambda n) = 5, 90.2% at C = 1
    assert accuracy >= 88.0
    m = load_learner(model)
    assert (m.format_, m.index_base_, m.n_bits_, m.n_train_) == ("svmlight", 1, 0, 2000)
    assert m.classes_ == ["-1", "1"]
    rep = json.loads(run("eval", test, "--model", model, "--json").stdout)
    assert rep["n_docs"] == 500 and 100 * rep["accuracy"] == pytest.approx(accuracy, abs=0.005)
    out = tmp_path / "p.csv"
    assert_ok(run("predict", test, "--model", model, "--output", out))
    df = pd.read_csv(out, dtype={"true_label": str, "label": str})
    assert list(df.columns) == ["source", "line", "true_label", "label", "score_1"]
    assert len(df) == 500 and (df["label"] == df["true_label"]).mean() == pytest.approx(
        rep["accuracy"])
    assert ((df["score_1"] > 0) == (df["label"] == "1")).all()


@pytest.mark.slow  # make test-slow: learn runs on RCV1 elsewhere
def test_rcv1_sgd_with_bottous_eta0_calibration(rcv1, tmp_path):
    """`nbsvm learn --eta0 auto`: the backend's SGD runs the search NBSVM's own learner
    runs (nbsvm/learners/eta0.py), on a seeded sample of its first data (the choice itself
    is checked in tests/test_linear.py)."""
    train, test = rcv1
    model = tmp_path / "m.npz"
    r = run("learn", train, "--algorithm", "sgd", "--loss", "log", "--lambda", "1e-4",
            "--eta0", "auto", "--epochs", "5", "--output", model, "--json")
    assert_ok(r)
    chosen = json.loads(r.stdout)["eta0_chosen"]
    assert chosen > 0 and math.log2(chosen) == int(math.log2(chosen))
    m = load_learner(model)
    assert m.eta0 == "auto" and m.eta0_ == chosen
    rep = json.loads(run("eval", test, "--model", model, "--json").stdout)
    print(f"RCV1 SGD log, eta0 auto = {chosen}: accuracy {100 * rep['accuracy']:.2f}%")
    assert rep["accuracy"] >= 0.88
    r = run("learn", train, "--algorithm", "sgd", "--eta0", "fast", "--output",
            tmp_path / "x.npz")
    assert r.exit_code != 0 and "--eta0 must be a positive number or auto" in r.output


@pytest.mark.slow  # make test-slow: learn runs on RCV1 elsewhere
def test_blitzer_books_slice(blitzer, tmp_path):
    need("sgd")
    train, test = blitzer
    model = tmp_path / "books.npz"
    r = run("learn", *train, "--algorithm", "sgd", "--loss", "hinge", "--lambda", "1e-4",
            "--epochs", "5", "--n-bits", "18", "--test", test[0], "--test", test[1],
            "--output", model)
    assert_ok(r)
    accuracy = printed(r.output, "accuracy")
    print(f"Blitzer books (600 train, 200 test) SGD hinge accuracy: {accuracy:.2f}%")
    assert accuracy >= 65.0
    assert "classes: negative, positive" in r.output
    m = load_learner(model)
    assert (m.format_, m.n_bits_, m.hash_seed_) == ("blitzer", 18, 0)
    # weights for the buckets the reviews use alone, each bucket's column in columns_
    assert m.n_features_in_ == m.columns_.size < 1 << 18 and m.columns_[-1] < 1 << 18
    r = run("eval", *test, "--model", model, "-q")
    assert_ok(r)
    assert printed(r.output, "accuracy") == accuracy
    # predict reads reviews without their #label# too
    bare = tmp_path / "bare.review"
    bare.write_text("".join(re.sub(r" #label#:\S+", "", line) + "\n"
                            for line in test[0].read_text("latin-1").splitlines()[:5]))
    out = tmp_path / "p.csv"
    assert_ok(run("predict", bare, "--model", model, "-o", out))
    df = pd.read_csv(out)
    assert list(df.columns) == ["source", "line", "label", f"score_{m.classes_[1]}"]
    assert len(df) == 5
    assert_clean_error(run("eval", bare, "--model", model), f"{bare}:1:", "no '#label#")


# ---- hand-made files --------------------------------------------------------------------------

def test_multilabel_svmlight(tmp_path):
    need("multilabel")
    train = write_multilabel(tmp_path / "ml_train.svm", 600, 0)
    test = write_multilabel(tmp_path / "ml_test.svm", 200, 1)
    model = tmp_path / "ml.npz"
    assert_ok(run("learn", train, "--algorithm", "multilabel", "--epochs", "10", "-o", model))
    r = run("eval", test, "--model", model)
    assert_ok(r)
    hamming = printed(r.output, "Hamming loss")
    micro, macro = printed(r.output, "micro F1"), printed(r.output, "macro F1")
    print(f"multi-label Hamming loss {hamming:.4f}, micro F1 {micro:.4f}, macro F1 {macro:.4f}")
    assert hamming <= 0.15 and micro >= 0.8 and macro >= 0.8
    m = load_learner(model)
    assert m.task == "multilabel" and m.classes_ == ["a", "b", "c"]
    rep = json.loads(run("eval", test, "--model", model, "--json").stdout)
    assert rep["hamming_loss"] == pytest.approx(hamming, abs=5e-5)
    out = tmp_path / "ml.csv"
    assert_ok(run("predict", test, "--model", model, "-o", out))
    df = pd.read_csv(out, keep_default_na=False)
    assert list(df.columns) == ["source", "line", "true_label", "label"] and len(df) == 200
    wrong = sum(len(set(t.split(",")) ^ set(p.split(",") if p else []))
                for t, p in zip(df.true_label, df.label))
    assert wrong / (200 * 3) == pytest.approx(rep["hamming_loss"])


@pytest.mark.parametrize("algorithm", ["multiclass-hinge", "mira"])
def test_named_features_multiclass(tmp_path, algorithm):
    need(algorithm)
    train = write_named(tmp_path / "topics_train.txt", 300, 0)
    test = write_named(tmp_path / "topics_test.txt", 100, 1)
    model = tmp_path / "topics.npz"
    assert_ok(run("learn", train, "--algorithm", algorithm, "--format", "named", "--n-bits",
                  "12", "--epochs", "5", "-o", model, "-q"))
    r = run("eval", test, "--model", model)           # the model knows its format
    assert_ok(r)
    assert printed(r.output, "accuracy") >= 95.0
    m = load_learner(model)
    assert m.format_ == "named" and m.classes_ == ["politics", "science", "sports"]
    out = tmp_path / "topics.csv"
    assert_ok(run("predict", test, "--model", model, "-o", out))
    df = pd.read_csv(out)
    assert list(df.columns) == ["source", "line", "true_label", "label", "score"]
    rows = list(read_named(test))
    X = RowEncoder("named", 12, columns=m.columns_).encode(rows)  # buckets -> weight columns
    assert df["label"].tolist() == list(m.predict(SparseRows(*X, m.n_features_in_)))


@pytest.mark.parametrize("algorithm, options", [
    ("ogd", ["--eta0", "1.0", "--radius", "10"]),
    ("sgd-regressor", ["--eta0", "0.5", "--lambda", "1e-6"]),
])
def test_regression(regression_files, tmp_path, algorithm, options):
    need(algorithm)
    train, test = regression_files
    model = tmp_path / "reg.npz"
    r = run("learn", train, "--algorithm", algorithm, *options, "--epochs", "20", "-o", model)
    assert_ok(r)
    losses = [float(x) for x in re.findall(r"mean loss (\S+)", r.output)]
    assert len(losses) == 20 and losses[-1] < losses[0]
    r = run("eval", test, "--model", model)
    assert_ok(r)
    mse, mae = printed(r.output, "MSE"), printed(r.output, "MAE")
    print(f"{algorithm} regression: MSE {mse:.3g}, MAE {mae:.3g}")
    assert mse < 0.01 and mae < 0.08
    out = tmp_path / "reg.csv"
    assert_ok(run("predict", test, "--model", model, "-o", out))
    df = pd.read_csv(out)
    assert list(df.columns) == ["source", "line", "true_label", "prediction"]
    assert np.mean((df.prediction - df.true_label) ** 2) == pytest.approx(mse, rel=1e-3)


# ---- errors -------------------------------------------------------------------------------------

def test_unknown_algorithm(regression_files, tmp_path):
    r = run("learn", regression_files[0], "--algorithm", "svm9000", "-o", tmp_path / "m.npz")
    assert r.exit_code == 2
    assert_clean_error(r, "unknown algorithm 'svm9000'", "allowed:", "ogd")


@pytest.mark.parametrize("option, value, message", [
    ("--hash-seed", "-1", "0<=x<=4294967295"),
    ("--hash-seed", "5000000000", "0<=x<=4294967295"),
    ("--seed", "-1", "x>=0"),
])
@pytest.mark.parametrize("fmt", ["svmlight", "named"])
def test_impossible_seeds_are_refused_and_the_model_kept(tmp_path, option, value, message, fmt):
    """--hash-seed -1 on svmlight input wrote a model every command then called
    corrupted, over the good one; on named input, and --seed -1, a traceback."""
    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n-1 2:1\n" if fmt == "svmlight" else "pos great:1\nneg bad:1\n")
    model = tmp_path / "m.npz"
    assert_ok(run("learn", data, "--format", fmt, "-o", model, "-q"))
    before = model.read_bytes()
    r = run("learn", data, "--format", fmt, "-o", model, "-q", option, value)
    assert_out_of_range(r, option, value, message)  # (the library's check: test_learn_columns)
    assert model.read_bytes() == before


def test_an_unknown_format_is_the_only_line(regression_files, tmp_path):
    """learn printed 'learner: SGDClassifier()' before the --format error."""
    r = run("learn", regression_files[0], "--format", "vw", "-o", tmp_path / "m.npz")
    assert_clean_error(r, "unknown sparse format 'vw'", "allowed: auto, svmlight")
    assert "learner:" not in r.output and not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("estimator", ["mira", "multilabel", "ovr", "ogd"])
def test_a_one_vs_rest_estimator_that_is_not_binary_is_refused_before_reading(
        regression_files, tmp_path, estimator):
    """The error came after the data was read, and named the input file."""
    r = run("learn", regression_files[0], "-a", "ovr", "--estimator", estimator,
            "-o", tmp_path / "m.npz")
    assert_clean_error(r, f"--algorithm ovr needs a binary --estimator; {estimator!r} is")
    assert str(regression_files[0]) not in r.output and "read" not in r.output.split("error")[0]


@pytest.mark.parametrize("argv, message", [
    (["-a", "pegasos", "--lambda", "0"], "lambda (lam) must be > 0 for Pegasos, got 0.0"),
    (["-a", "ovr", "--estimator", "pegasos", "--lambda", "0"], "lambda (lam) must be > 0"),
    (["-a", "dcd", "--lambda", "0"], "lambda (lam) must be a finite number > 0"),
    (["-a", "mira", "--C", "0"], "C must be a finite number > 0, got 0.0"),
    (["-a", "ogd", "--radius", "-2"], "radius must be a number > 0, got -2.0"),
])
def test_a_parameter_the_learner_cannot_take_is_refused_before_reading(tmp_path, argv, message):
    """Each was refused only once the whole input had been read (into the cache), and
    ``--lambda`` was named ``lam``. The input here is malformed on its second line: a
    refusal that names it read the file first."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n1 x\n", encoding="utf-8")
    r = run("learn", data, *argv, "-o", tmp_path / "m.npz")
    assert_clean_error(r, message)
    assert "d.svm" not in r.output and not (tmp_path / "m.npz").exists()


def test_option_the_algorithm_does_not_take(regression_files, tmp_path):
    r = run("learn", regression_files[0], "--algorithm", "ogd", "--lambda", "0.1", "--C", "2",
            "-o", tmp_path / "m.npz")
    assert r.exit_code == 2
    assert_clean_error(r, "--algorithm ogd does not take --lambda, --C",
                       "it takes: --eta0, --radius, --epochs, --seed")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("line, needle", [
    ("0.5 1:0.3 2:abc", "bad feature value in '2:abc'"),
    ("0.5 1:0.3 x:1", "feature index is not an integer"),
    ("0.5 1:0.3 7", "expected index:value"),
    ("soon 1:0.3", "regression target is not a finite number: 'soon'"),
])
def test_malformed_line(tmp_path, line, needle):
    path = tmp_path / "bad.svm"
    path.write_text("0.1 1:0.5 2:0.25\n0.2 2:1\n" + line + "\n")
    r = run("learn", path, "--algorithm", "ogd", "-o", tmp_path / "m.npz")
    assert r.exit_code == 2
    assert_clean_error(r, f"{path}:3:", needle)
    assert not (tmp_path / "m.npz").exists()


def test_eval_errors_name_the_file_and_line(regression_files, tmp_path):
    model = tmp_path / "m.npz"
    assert_ok(run("learn", regression_files[0], "--algorithm", "ogd", "-o", model, "-q"))
    bad = tmp_path / "bad_test.svm"
    bad.write_text("0.3 1:0.5\n0.1 0:0.5\n")          # index 0 in a 1-based model
    r = run("eval", bad, "--model", model)
    assert r.exit_code == 2
    assert_clean_error(r, f"{bad}:2:", "below the 1-based minimum")
    named = tmp_path / "x.review"
    named.write_text("great:1 #label#:positive\n")
    assert_clean_error(run("eval", named, "--model", model), "trained on svmlight files")


# ---- the library: cache, shuffle, hashing, model files ----------------------------------------

def test_hashing_sums_colliding_keys_as_the_reference():
    rows = list(read_named(io.StringIO("x good:1 bad:2 good:0.5 ugly:4\ny naïve:1\n")))
    for n_bits in (1, 3, 20):
        indices, values, offsets = RowEncoder("named", n_bits, hash_seed=7).encode(rows)
        for d, row in enumerate(rows):
            expected = naive_hashed_row(row.keys, row.values, n_bits, 7)
            got = dict(zip(indices[offsets[d]:offsets[d + 1]].tolist(),
                           values[offsets[d]:offsets[d + 1]].tolist()))
            assert got == pytest.approx(expected)
            assert sorted(got) == indices[offsets[d]:offsets[d + 1]].tolist()


def test_epochs_over_a_small_buffer_see_every_example_once(tmp_path):
    path = write_regression(tmp_path / "r.svm", 300, 2)
    events = []
    kw = dict(epochs=3, seed=5, buffer_bytes=2000, block_bytes=500)
    a = learn_sparse(make_learner_from_options("ogd", {}), path, callback=events.append, **kw)
    b = learn_sparse(make_learner_from_options("ogd", {}), path, **kw)
    c = learn_sparse(make_learner_from_options("ogd", {}), path, **{**kw, "seed": 6})
    epochs = [e for e in events if e["stage"] == "epoch"]
    assert [e["examples"] for e in epochs] == [300] * 3 and a.t_ == 900
    assert a.state_[2] == 900                         # the kernel's own step count
    assert np.array_equal(a.coef_, b.coef_) and not np.array_equal(a.coef_, c.coef_)
    assert [e["epoch"] for e in a.history_] == [1, 2, 3]
    # the groups stay within the buffer (plus at most one block) and cover the data once
    records = list(read_svmlight(path, 1))
    with RowWriter(tmp_path / "rows", "regression") as writer:
        writer.add(records, *RowEncoder("svmlight").encode(records))
    cache = writer.close()
    seen = []
    for rows, y, order in cache.shuffled_blocks(np.random.default_rng(0), 4, 0, 2000, 500):
        assert rows.indices.nbytes + rows.values.nbytes <= 2000 + 500
        assert sorted(order.tolist()) == list(range(len(rows)))
        seen += y.tolist()
    truth = [float(line.split()[0]) for line in path.read_text().splitlines()]
    assert sorted(seen) == sorted(truth) and seen != truth


def test_predict_unlabeled_svmlight(regression_files, tmp_path):
    m = learn_sparse(make_learner_from_options("ogd", {}), regression_files[0])
    bare = tmp_path / "bare.svm"
    bare.write_text("1:0.5 3:1\n2:0.25\n")
    frame = pd.concat(predict_sparse(m, bare))
    assert list(frame.columns) == ["source", "line", "prediction"]
    np.testing.assert_allclose(frame.prediction, [0.5 * m.coef_[0] + m.coef_[2],
                                                  0.25 * m.coef_[1]])


def test_index_base_and_unseen_indices(tmp_path):
    train = tmp_path / "zero.svm"
    train.write_text("1.0 0:1 2:1\n0.5 1:1\n")
    m = learn_sparse(make_learner_from_options("ogd", {"--eta0": 0.5}), train, epochs=30)
    assert m.index_base_ == 0 and m.n_features_in_ == 3
    test = tmp_path / "wide.svm"
    test.write_text("1.0 0:1 2:1 9:5\n")               # index 9 was never seen: weight 0
    frame = next(predict_sparse(m, test))
    assert frame.prediction[0] == pytest.approx(m.coef_[0] + m.coef_[2])
    with pytest.raises(NBSVMError, match="index base"):
        learn_sparse(make_learner_from_options("ogd", {}), train, index_base=2)
    (tmp_path / "one.svm").write_text("1.0 1:1 9:5\n")
    m1 = learn_sparse(make_learner_from_options("ogd", {}), tmp_path / "one.svm", index_base=1)
    # indices 1..9 -> 0..8, of which two are used: their weights alone
    assert m1.index_base_ == 1 and m1.n_features_in_ == 2 and m1.columns_.tolist() == [0, 8]


def test_model_file_round_trip(regression_files, tmp_path):
    model = tmp_path / "m.npz"
    m = learn_sparse(make_learner_from_options("ogd", {"--eta0": 0.8, "--radius": 5.0}),
                     regression_files[0], epochs=2, seed=3)
    m.save(model)
    assert model_file_kind(model) == "learner"
    back = OnlineLearner.load(model)
    for name in ("format_", "n_bits_", "hash_seed_", "index_base_", "n_train_", "t_",
                 "n_features_in_", "classes_"):
        assert getattr(back, name) == getattr(m, name), name
    assert back.get_params() == m.get_params() == dict(eta=0.8, radius=5.0, epochs=2, seed=3)
    assert evaluate_sparse(back, regression_files[1]) == evaluate_sparse(m, regression_files[1])
    assert model_file_kind(tmp_path / "missing.npz") is None
    (tmp_path / "junk.npz").write_text("not a zip")
    assert model_file_kind(tmp_path / "junk.npz") is None
    assert_clean_error(run("eval", regression_files[1], "--model", tmp_path / "junk.npz"),
                       "junk.npz")


def test_unavailable_learner_is_a_clear_error(monkeypatch):
    from nbsvm.learners import registry
    monkeypatch.setitem(registry.ALGORITHMS, "ogd2", registry.Algorithm("nothing", "X"))
    with pytest.raises(NBSVMError, match="not available in this build"):
        make_learner_from_options("ogd2", {})


# every algorithm: trains through the pipeline, saves, loads, predicts the same
ALGORITHM_DATA = {
    "sgd": "binary", "adagrad": "binary", "pegasos": "binary", "pa": "binary",
    "mira": "multiclass", "multiclass-hinge": "multiclass", "ovr": "multiclass",
    "multilabel": "multilabel", "ogd": "regression", "sgd-regressor": "regression",
}


@pytest.mark.parametrize("algorithm", list(ALGORITHM_DATA))
def test_every_algorithm_round_trips(tmp_path, algorithm):
    need(algorithm)
    task = ALGORITHM_DATA[algorithm]
    if task == "multilabel":
        train = write_multilabel(tmp_path / "train.svm", 200, 3)
    elif task == "regression":
        train = write_regression(tmp_path / "train.svm", 200, 3)
    else:
        train = write_named(tmp_path / "train.txt", 200, 3)
        if task == "binary":                      # two of the three topics
            lines = [l for l in train.read_text().splitlines() if not l.startswith("science")]
            train.write_text("\n".join(lines) + "\n")
    fmt = "named" if train.suffix == ".txt" else "svmlight"
    model = tmp_path / "m.npz"
    r = run("learn", train, "--algorithm", algorithm, "--format", fmt, "--n-bits", "10",
            "--epochs", "3", "--seed", "2", "-o", model)
    assert_ok(r)
    assert len(re.findall(r"^epoch \d/3 ", r.output, re.M)) >= 1
    m = load_learner(model)
    assert m.task == task and m.format_ == fmt and m.n_train_ > 0
    # the same run in the library gives the same model; loading keeps its predictions
    ref = learn_sparse(make_learner_from_options(algorithm, {"--epochs": 3, "--seed": 2}),
                       train, fmt=fmt, n_bits=10, epochs=3, seed=2)
    records = list(read_named(train) if fmt == "named" else read_svmlight(train, 1))
    encoder = RowEncoder(fmt, 10, n_features=m.n_features_in_,
                         columns=getattr(m, "columns_", None))
    X = SparseRows(*encoder.encode(records), m.n_features_in_)
    score = "predict" if m.task == "regression" else "decision_function"   # regressors: none
    np.testing.assert_array_equal(getattr(m, score)(X), getattr(ref, score)(X))
    assert evaluate_sparse(m, train) == evaluate_sparse(ref, train)
    frames = pd.concat(predict_sparse(m, train))
    assert len(frames) == len(records)


def test_one_vs_rest_refuses_what_its_binary_learner_fixes():
    # adagrad fixes its schedule: asking ovr's adagrad learners for another one is refused
    # up front (before any data is read), naming the options that are taken
    from nbsvm.learners.options import make_learner_from_options

    with pytest.raises(NBSVMError, match="does not take --schedule"):
        make_learner_from_options("ovr", {"--estimator": "adagrad", "--schedule": "optimal"})
    m = make_learner_from_options("ovr", {"--estimator": "adagrad", "--eta0": 0.5})
    assert m.estimator_params == {"eta0": 0.5}


@pytest.mark.parametrize("algorithm, lines", [
    ("sgd-regressor", [f"{2 * x:.3f} 1:{x:.3f} 2:{1000 - x:.3f}" for x in range(1, 400, 2)]),
    ("ogd", ["1 1:1e150", "-1 2:1e150", "1 1:1e150"]),  # larger values are refused as read
    ("ogd", ["1 1:1e100", "-1 2:1e100", "1 1:3e100"]),
])
def test_a_diverged_run_stops_with_an_error_and_saves_nothing(tmp_path, algorithm, lines):
    """Steps that blew up (features in the hundreds, or 1e100) used to be saved: 'mean
    loss nan' for every epoch, then a file every loader refused as corrupted."""
    data = tmp_path / "x.svm"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "m.npz"
    r = run("learn", data, "-a", algorithm, "-o", out, "-q")
    assert r.exit_code != 0 and not out.exists()
    assert "training diverged in epoch 1" in r.output, r.output


def test_a_diverged_run_names_the_options_its_learner_takes(tmp_path):
    """Pegasos diverging said 'lower --eta0', which pegasos refuses: each learner's hint is
    of the options it takes."""
    from nbsvm.learners.hints import divergence_hints

    data = tmp_path / "x.svm"
    data.write_text("1 1:1 2:1\n-1 3:1\n1 1:0.5\n-1 3:1 2:0.1\n")
    r = run("learn", data, "-a", "pegasos", "--lambda", "1e-300", "-o", tmp_path / "m.npz", "-q")
    assert r.exit_code == 2 and "training diverged in epoch 1" in r.output, r.output
    assert r.output.rstrip().endswith("scale the feature values down or raise --lambda")
    hints = {a: divergence_hints(make_learner_from_options(a, {}))
             for a in ("pegasos", "sgd", "pa", "ogd", "multiclass-hinge")}
    assert hints == {"pegasos": ["raise --lambda"], "sgd": ["lower --eta0", "raise --lambda"],
                     "pa": ["lower --C"], "ogd": ["lower --eta0"],
                     "multiclass-hinge": ["lower --eta0", "raise --lambda"]}
    assert divergence_hints(make_learner_from_options("ovr", {"--estimator": "sgd"})) == \
        ["lower --eta0", "raise --lambda"]
    # one-vs-rest: its binary learners' arrays are checked each epoch (they were only at
    # the save, whose hint named eta0 to pegasos too)
    data.write_text("a 1:1 2:1\nb 3:1\nc 1:0.5\na 3:1 2:0.1\n")
    r = run("learn", data, "-a", "ovr", "--estimator", "pegasos", "--lambda", "1e-300",
            "-o", tmp_path / "o.npz", "-q")
    assert r.exit_code == 2 and "training diverged in epoch 1: the learned state (est" \
        in r.output and r.output.rstrip().endswith("or raise --lambda"), r.output


def test_a_test_file_the_model_cannot_read_is_refused_before_training(tmp_path):
    """learn x.svm --test y.review trained and saved, then failed: the formats (integer
    indices, hashed names) are known from the names before anything is read."""
    data, test, out = tmp_path / "x.svm", tmp_path / "y.review", tmp_path / "m.npz"
    data.write_text("1 1:1 2:1\n-1 3:1\n")
    test.write_text("great:2 #label#:1\nbad:1 #label#:-1\n")
    r = run("learn", data, "--test", test, "-o", out, "-q")
    assert r.exit_code == 2 and not out.exists(), r.output
    assert "y.review: the model was trained on svmlight files (integer indices); cannot " \
           "read this file as blitzer" in r.output
    assert "trained and saved" not in r.output


def test_multilabel_learns_scikit_learns_empty_label_sets(tmp_path):
    """dump_svmlight_file(multilabel=True) writes an example of no labels as ' 3:1': learn
    -a multilabel refused the file; a single-label learner refuses such a line."""
    data = tmp_path / "d.svm"
    data.write_text("0 1:1 3:1\n1 2:1\n0,1 1:1 2:1\n 3:1\n")
    r = run("learn", data, "-a", "multilabel", "-o", tmp_path / "m.npz", "--n-bits", "8", "-q")
    assert r.exit_code == 0, r.output
    r = run("eval", "-m", tmp_path / "m.npz", data, "--json")
    assert r.exit_code == 0 and json.loads(r.output)["n_docs"] == 4, r.output
    data.write_text("0 1:1 3:1\n1 2:1\n 3:1\n")
    r = run("learn", data, "-a", "pa", "-o", tmp_path / "p.npz", "-q")
    assert r.exit_code == 2 and "d.svm:3: no label: the line starts with a blank, then a " \
        "feature" in r.output, r.output


def test_a_learner_with_non_finite_state_is_never_saved(tmp_path):
    from nbsvm.learners.linear import SGDRegressor
    reg = SGDRegressor().fit(np.array([[1.0], [2.0]]), np.array([1.0, 2.0]))
    name, state = next((k, a) for k, a in reg.state_arrays().items() if a.dtype.kind == "f")
    state.flat[0] = np.nan
    with pytest.raises(NBSVMError, match="SGDRegressor diverged: .* not finite"):
        reg.save(tmp_path / "r.npz")
    assert not (tmp_path / "r.npz").exists()


def test_a_binary_models_score_column_names_its_class(tmp_path):
    """With +1/-1 labels the positive class (classes_[1], string order) is -1: the column
    'score' gave +1's documents negative scores without saying whose score it was."""
    data = tmp_path / "p.svm"
    data.write_text("+1 1:1\n-1 2:1\n+1 1:2\n-1 2:3\n")
    assert_ok(run("learn", data, "-o", tmp_path / "p.npz", "-q"))
    out = tmp_path / "p.csv"
    assert_ok(run("predict", data, "--model", tmp_path / "p.npz", "-o", out))
    df = pd.read_csv(out, dtype={"true_label": str, "label": str})
    assert list(df.columns) == ["source", "line", "true_label", "label", "score_-1"]
    assert ((df["score_-1"] > 0) == (df["label"] == "-1")).all()
    assert (df["label"] == df["true_label"]).all()


@pytest.mark.parametrize("options, refused", [
    (["-a", "sgd", "--l1", "0.5"], "with penalty 'l2' does not use --l1"),
    (["-a", "multiclass-hinge", "--schedule", "pegasos", "--eta0", "9"],
     "with schedule 'pegasos' does not use --eta0"),
    (["-a", "sgd", "--schedule", "pegasos", "--eta0", "1"], "does not use --eta0"),
    (["-a", "ovr", "--estimator", "sgd", "--l1", "0.3"], "ovr --estimator sgd with penalty 'l2'"),
    # an unknown name is said as such, not as an idle option (it was "with schedule 'foo'
    # does not use --eta0")
    (["-a", "sgd", "--schedule", "foo", "--eta0", "1"], "unknown schedule 'foo'; allowed:"),
    (["-a", "sgd", "--penalty", "nope", "--l1", "0.5"], "unknown penalty 'nope'; allowed:"),
])
def test_options_a_setting_makes_idle_are_refused(tmp_path, options, refused):
    """Accepted, they trained the default model: the same weights as without them."""
    from nbsvm.learners.options import make_learner_from_options
    from nbsvm.errors import NBSVMError
    flags = dict(zip(options[2::2], options[3::2]))
    with pytest.raises(NBSVMError, match=re.escape(refused)):
        make_learner_from_options(options[1], {k: (float(v) if k not in ("--schedule", "--estimator", "--penalty") else v) for k, v in flags.items()})
    # where they act, they are taken
    make_learner_from_options("sgd", {"--l1": 0.5, "--penalty": "elasticnet"})
    make_learner_from_options("multiclass-hinge", {"--eta0": 9.0, "--schedule": "constant"})
    make_learner_from_options("adagrad", {"--eta0": 0.1})


def test_a_number_label_written_two_ways_is_refused(tmp_path):
    """'+1' and '1' were two classes (a multi-class learner trained them apart without a
    word): refused, naming both and where each was first seen."""
    from nbsvm.io.sparse import read_svmlight

    data = tmp_path / "m.svm"
    data.write_text("+1 1:1 2:1\n-1 3:1\n1 1:1\n")
    with pytest.raises(NBSVMError, match=r"m.svm:3: label '1' is the number '\+1' \(first seen "
                                         r"at .*m.svm:1\) written another way"):
        list(read_svmlight(str(data)))
    data.write_text("+1 1:1\n-1 3:1\n+1 2:1\nfoo 2:1\n")    # one spelling each: read
    assert [r.labels for r in read_svmlight(str(data))] == [("+1",), ("-1",), ("+1",),
                                                             ("foo",)]  # (nan: refused)


def test_eval_counts_labels_the_model_does_not_know_as_errors(tmp_path):
    """eval of a learn model refused a label it did not know ('label 7 is not among the
    model's classes'), where docs/cli.md says it counts as an error, as on text."""
    from sklearn.metrics import accuracy_score, f1_score

    train = tmp_path / "t.svm"
    rows = [f"{'1' if i % 2 else '-1'} 1:{i % 2} 2:{1 - i % 2} 3:0.5" for i in range(40)]
    train.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.npz"
    assert_ok(run("learn", train, "-o", model, "-q"))
    test = tmp_path / "u.svm"
    test.write_text("\n".join(rows[:10] + ["7 1:1 3:1", "8 2:1", "7 2:1"]) + "\n")
    rep = evaluate_sparse(load_learner(model), test)
    truth = [r.split()[0] for r in rows[:10]] + ["7", "8", "7"]
    pred = pd.concat(predict_sparse(load_learner(model), test))["label"].astype(str).tolist()
    labels = ["-1", "1", "7", "8"]
    assert rep["classes"] == labels and rep["unseen_labels"] == {"7": 2, "8": 1}
    assert rep["accuracy"] == accuracy_score(truth, pred)
    assert rep["macro_f1"] == pytest.approx(
        f1_score(truth, pred, labels=labels, average="macro", zero_division=0))
    r = run("eval", test, "--model", model)
    assert_ok(r)
    assert "labels the model does not know, counted as errors: 7 (2), 8 (1)" in r.output
    sets = tmp_path / "ml.svm"
    sets.write_text("\n".join(["1,2 1:1", "2 2:1", "1 1:1 2:0.1"] * 10) + "\n")
    ml = tmp_path / "ml.npz"
    assert_ok(run("learn", sets, "-a", "multilabel", "-o", ml, "-q"))
    unknown = tmp_path / "ml_u.svm"
    unknown.write_text("1,4 1:1\n2 2:1\n")
    rep = evaluate_sparse(load_learner(ml), unknown)
    assert rep["unseen_labels"] == {"4": 1} and rep["per_class"]["4"]["recall"] == 0.0
    assert rep["subset_accuracy"] == 0.5


def test_predict_and_eval_of_a_learn_model_read_standard_input(tmp_path):
    """predict - and eval - of a learn model said 'cannot tell from standard input whether
    its lines start with a label'; its first line is looked at in the buffer (in process:
    the runner's standard input is a file in memory)."""
    train = tmp_path / "t.svm"
    rows = [f"{'1' if i % 2 else '-1'} 1:{i % 2} 2:{1 - i % 2}" for i in range(20)]
    train.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.npz"
    assert_ok(run("learn", train, "-o", model, "-q"))

    def piped(args, text):
        r = runner.invoke(app, [str(a) for a in args], input=text.encode())
        assert r.exit_code == 0, r.output
        return r.stdout

    want = piped(["predict", train, "-m", model, "-q"], "")
    got = piped(["predict", "-", "-m", model, "-q"], train.read_text())
    assert got == want.replace(str(train), "<stdin>") and "true_label" in got
    bare = piped(["predict", "-", "-m", model, "-q"],
                 "".join(r.split(" ", 1)[1] + "\n" for r in rows))
    assert "true_label" not in bare
    assert json.loads(piped(["eval", "-", "-m", model, "--json"], train.read_text()))["n_docs"] == 20
    # comment lines are skipped as in a file: the first example decides
    commented = "# features only\n\n" + "".join(r.split(" ", 1)[1] + "\n" for r in rows)
    out = piped(["predict", "-", "-m", model, "-q"], commented)
    assert "true_label" not in out and len(out.splitlines()) == 21


def test_a_bad_test_file_says_the_model_was_saved(tmp_path):
    """learn --test with a malformed test file wrote the model and said only the test
    file's error: a script took the model for unchanged. Now it says so, as train does."""
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:1\n-1 2:nan\n")
    model = tmp_path / "l.npz"
    r = run("learn", Path(__file__).resolve().parents[1] / "data" / "tiny.svm", "--test", bad,
            "-o", model, "-q")
    assert_clean_error(r, "bad.svm:2: feature value is not finite in '2:nan' (the model is "
                          f"trained and saved to {model}; the test set was not scored)")
    assert OnlineLearner.load(model).n_train_ == 20


@pytest.mark.parametrize("command", ["eval", "predict"])
@pytest.mark.parametrize("options, named", [
    (["--text-col", "2"], "--text-col"),
    (["--label-col", "3", "--text-col", "1"], "--text-col, --label-col"),
    (["--label-sep", " "], "--label-sep"),
])
def test_text_reading_options_for_a_learn_model_are_refused(tmp_path, command, options, named):
    """They were ignored (every prediction as without them, exit 0): a user who meant
    another column got the default one's scores."""
    train = tmp_path / "t.svm"
    train.write_text("".join(f"{'1' if i % 2 else '-1'} 1:{i % 2} 2:{1 - i % 2}\n"
                             for i in range(10)))
    model = tmp_path / "m.npz"
    assert_ok(run("learn", train, "-o", model, "-q"))
    r = run(command, train, "-m", model, *options, "-o", tmp_path / "out.csv")
    assert_clean_error(r, f"{named}: options for reading text, for models of `nbsvm train`")
    assert not (tmp_path / "out.csv").exists()
    assert_ok(run(command, train, "-m", model, "-o", tmp_path / "out.csv"))  # without: fine


def test_text_given_to_a_learn_model_says_what_the_model_reads(tmp_path):
    """'reviews.txt:1: expected index:value, found 'A'' left a user who gave text to a
    `nbsvm learn` model guessing."""
    from pathlib import Path
    from typer.testing import CliRunner
    from nbsvm.cli import app
    REPO = Path(__file__).resolve().parents[1]
    model = tmp_path / "l.npz"
    runner = CliRunner()
    r = runner.invoke(app, ["learn", str(REPO / "data" / "tiny.svm"), "-a", "pegasos", "-o",
                            str(model), "-q"])
    assert r.exit_code == 0, r.output
    for cmd in ("predict", "eval"):
        r = runner.invoke(app, [cmd, str(REPO / "data" / "reviews.txt"), "-m", str(model)])
        assert r.exit_code == 2 and "text documents go to a model of nbsvm train" in r.output


def test_sparse_lines_are_read_as_written(tmp_path):
    """Silent misreadings of sparse lines: a named feature or label starting with '#' cut
    the rest of its line off as a comment (a line vanished from predict's output); a second
    VW namespace added its index 1 to the first's, and a namespace weight was ignored; '+1'
    in one file and '1' in another trained as two classes; regression targets 1 and 1.0
    were refused as two classes."""
    named = tmp_path / "n.txt"
    named.write_text("# a comment: with a colon\npos great:1\nneg bad:1\n#-----\n"
                     "pos #fun:1 great:1\n#general bad:1\n#\n#general\n")
    rows = list(read_named(str(named)))
    assert [(r.labels, r.keys, r.line) for r in rows[2:]] == [  # comment lines: none
        (("pos",), ["#fun", "great"], 5), (("#general",), ["bad"], 6), (("#general",), [], 8)]
    unlabelled = tmp_path / "u.named"
    unlabelled.write_text("good:1\n#great:1\n")
    assert [r.keys for r in read_named(str(unlabelled), labeled=False)] == [["good"], ["#great"]]
    first = tmp_path / "f.named"
    first.write_text("#general bad:1\n")  # a first line of data, labelled: predict keeps it
    from nbsvm.data.rowencoder import has_labels
    assert has_labels(str(first), "named")
    svm = tmp_path / "s.svm"
    svm.write_text("1 # a comment\n-1 2:1 # and another\n")
    assert [r.keys.tolist() for r in read_svmlight(str(svm), index_base=1)] == [[], [1]]
    for line in ("1 |a 1:1 |b 1:1\n", "1 |a:100 1:1\n"):
        (tmp_path / "v.vw").write_text(line)
        r = run("learn", tmp_path / "v.vw", "-o", tmp_path / "v.npz", "-q")
        assert_clean_error(r, "v.vw:1: Vowpal Wabbit namespaces are not kept")
    (tmp_path / "a.svm").write_text("+1 1:1\n-1 2:1\n")
    (tmp_path / "b.svm").write_text("1 1:1\n-1 2:1\n")
    r = run("learn", tmp_path / "a.svm", tmp_path / "b.svm", "-a", "mira", "-o",
            tmp_path / "ab.npz", "-q")
    assert_clean_error(r, "b.svm:1: label '1' is the number '+1' (first seen at")
    # eval refuses it against the model's classes too (it counted '+1' as a class the
    # model does not know, every example an error); predict keeps it as the true label
    assert_ok(run("learn", tmp_path / "b.svm", "-a", "mira", "-o", tmp_path / "b.npz", "-q"))
    r = run("eval", tmp_path / "a.svm", "-m", tmp_path / "b.npz", "-q")
    assert_clean_error(r, "a.svm:1: label '+1' is the number '1' (a class of the model)")
    assert_ok(run("eval", tmp_path / "b.svm", "-m", tmp_path / "b.npz", "-q"))
    assert_ok(run("predict", tmp_path / "a.svm", "-m", tmp_path / "b.npz", "-q"))
    (tmp_path / "r.svm").write_text("1.0 1:1\n1 2:1\n2.5 1:1 2:1\n")
    assert_ok(run("learn", tmp_path / "r.svm", "-a", "sgd-regressor", "-o", tmp_path / "r.npz",
                  "-q"))


def test_a_missing_cache_dir_is_made_as_train_makes_it(tmp_path):
    """learn --cache-dir of a folder not made yet: 'error: FileNotFoundError: ...'."""
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    assert_ok(run("learn", data, "-o", tmp_path / "m.npz", "-q", "--cache-dir",
                  tmp_path / "not" / "yet"))
    assert (tmp_path / "not" / "yet").is_dir() and not list((tmp_path / "not" / "yet").iterdir())


def test_a_cache_dir_that_is_a_file_is_refused_by_name(tmp_path):
    """learn --cache-dir naming a file: 'error: FileExistsError: ...' (train named it)."""
    data, where = tmp_path / "d.svm", tmp_path / "a_file"
    data.write_text("1 1:1\n-1 2:1\n")
    where.write_text("")
    r = run("learn", data, "-o", tmp_path / "m.npz", "-q", "--cache-dir", where)
    assert_clean_error(r, f"cache_dir {where} is not a folder")


def test_one_vs_rest_epoch_lines_say_their_figures_are_summed(tmp_path):
    """ovr's epoch line printed 'mistakes 451' of 300 examples: the binary learners' own,
    summed. It says so; a multi-class learner's line (multi-class errors) does not."""
    rng = np.random.default_rng(1)
    data = tmp_path / "r.svm"
    data.write_text("".join(
        f"{rng.integers(10)} " + " ".join(f"{j}:{rng.random():.3f}"
                                          for j in sorted(rng.choice(50, 5, replace=False) + 1))
        + "\n" for _ in range(300)))
    r = run("learn", data, "-a", "ovr", "-o", tmp_path / "o.npz", "--epochs", "1")
    assert_ok(r)
    mistakes = int(re.search(r"mistakes (\d+)  \(summed over the 10 one-vs-rest learners\)",
                             r.output).group(1))
    assert mistakes > 0
    r = run("learn", data, "-a", "mira", "-o", tmp_path / "m.npz", "--epochs", "1")
    assert_ok(r)
    assert re.search(r"mistakes (\d+)  \d", r.output) and "summed over" not in r.output


def test_a_nan_label_is_refused_not_a_class(tmp_path):
    """svmlight rows labelled nan trained a class named 'nan' (the positive one of a
    binary model), where regression and the Python API refuse NaN."""
    import io

    from nbsvm.io.sparse import read_svmlight
    with pytest.raises(NBSVMError, match=r"label 'nan' is not a number \(NaN\)"):
        list(read_svmlight(io.StringIO("1 3:1\nnan 2:1\n"), index_base=1))
    path = tmp_path / "n.svm"
    path.write_text("nan 2:1\n1 3:1\nnan 2:1\n1 3:1 2:0.1\n")
    r = run("learn", path, "-o", tmp_path / "n.npz", "-q")
    assert r.exit_code != 0 and "n.svm:1: label 'nan' is not a number" in r.output


def test_features_past_the_models_are_noted_at_prediction(tmp_path):
    """Indices past the last one learn saw were dropped without a word (weight 0, as an
    unseen feature): predict and eval say how many, in how many rows."""
    train, far = tmp_path / "w.svm", tmp_path / "far.svm"
    train.write_text("1 1:1 2:0.5\n-1 3:1 4:2\n1 1:0.7 5:1\n-1 3:0.2 4:1\n")
    far.write_text("1 1:1 100:5\n-1 3:1 2000000:1\n-1 4:1\n")
    assert run("learn", train, "-o", tmp_path / "w.npz", "-q").exit_code == 0
    for command in ("predict", "eval"):
        r = run(command, far, "--model", tmp_path / "w.npz", "-q")
        assert r.exit_code == 0, r.output
        assert (f"{far}: 2 feature value(s) in 2 row(s) have indices past the model's last "
                "(5)") in " ".join(r.output.split())
    r = run("predict", train, "--model", tmp_path / "w.npz", "-q")
    assert "past the model's last" not in r.output


@pytest.mark.parametrize("kwargs, message", [
    ({"hash_seed": -1}, r"hash seed must be an integer in \[0, 2\*\*32\), got -1"),
    ({"hash_seed": 2**32}, r"hash seed must be an integer in \[0, 2\*\*32\)"),
    ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ({"n_bits": 32}, "n_bits must be in 1..31, got 32"),
])
def test_the_library_refuses_what_the_command_line_refuses_while_parsing(tmp_path, kwargs,
                                                                         message):
    """The same bounds (config.py) as learn's options, for callers of the library."""
    from nbsvm.learners.registry import make_learner
    from nbsvm.workflows.learn import learn_sparse
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n", encoding="utf-8")
    with pytest.raises(NBSVMError, match=message):
        learn_sparse(make_learner("sgd"), [data], **kwargs)
    with pytest.raises(NBSVMError, match=r"lambda \(lam\) must be a non-negative number"):
        learn_sparse(make_learner("sgd", lam=-1.0), [data])


@pytest.mark.parametrize("head, labeled", [
    (b" 1:1 2:1\n 3:1\n", False),              # every line indented: unlabeled, as a file
    (b" 3:1\n" * 1000 + b"34", False),          # the cut last line ('34' of '34:1') tells nothing
    (b" 3:1\n 4:1\n1,2 1:1\n", True),           # scikit-learn's empty sets, then a label
    (b"1 1:1 2:1", True),                       # one line without its end: as it is
    (b"3:1", False),                            # (one token: refused for a while)
    (b" 3:1\r" * 1000 + b"34", False),          # lone CRs end lines too
])
def test_standard_input_is_labeled_by_its_first_whole_line_that_tells(monkeypatch, head,
                                                                      labeled):
    """A review: an unlabeled indented file on standard input was refused ('cannot tell'),
    and the cut end of the peeked buffer decided (a '34' of '34:1' taken for a label)."""
    import nbsvm.io.decoding as decoding
    from nbsvm.data.rowencoder import has_labels

    monkeypatch.setattr(decoding, "_peek", lambda fh: head)
    assert has_labels("-", "svmlight") is labeled
    monkeypatch.setattr(decoding, "_peek", lambda fh: b"# only a comment\n")
    with pytest.raises(NBSVMError, match="cannot tell from standard input"):
        has_labels("-", "svmlight")


def test_eval_reads_a_named_models_classes_as_learn_did(tmp_path):
    """A review: learn took the named label '1_0' for a name and '1e1' for a number; eval
    then refused the model's own training file ('1e1' is '1_0' written another way)."""
    data = tmp_path / "sp.named"
    data.write_text("1_0 a:1 b:1\n1e1 c:1 d:1\n1_0 a:1\n1e1 d:1\n")
    assert_ok(run("learn", data, "--format", "named", "-o", tmp_path / "m.npz", "-a", "pa", "-q"))
    r = run("eval", data, "--format", "named", "-m", tmp_path / "m.npz", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["n_docs"] == 4, r.output


def test_an_unfitted_one_vs_rest_has_not_diverged():
    from nbsvm.learners.registry import make_learner
    assert make_learner("ovr").diverged() is None  # (an AttributeError for a review)


def test_sparse_predict_keeps_true_labels_whose_first_rows_have_none(tmp_path):
    """A review: the true_label column was decided by the first batch's rows, so a
    multi-label file starting with empty label sets (' 3:1') lost it; batches are now cut
    by their feature values too, so a few wide rows make that first batch. The column is
    the file's: read as labeled."""
    from testhelpers import run_cli
    train = tmp_path / "train.svm"
    train.write_text("".join(f"{1 + i % 2},{1 + (i // 2) % 2} {1 + i % 5}:1 {6 + i % 3}:1\n"
                             for i in range(40)))
    ran = run_cli("learn", train, "-o", tmp_path / "m.npz", "-a", "multilabel", "-q")
    assert ran.returncode == 0, ran.stderr
    test = tmp_path / "test.svm"
    test.write_text(" 1:1 6:1\n 2:1\n1,2 1:1 7:1\n")
    model = load_learner(tmp_path / "m.npz")
    frames = list(predict_sparse(model, test, batch_rows=2))
    assert all("true_label" in f for f in frames)
    assert [lab for f in frames for lab in f["true_label"]] == ["", "", "1,2"]


def test_a_model_saved_from_python_must_say_where_its_indices_start(tmp_path):
    """A learner fitted in Python on load_svmlight_file's matrix (1-based file: columns
    shifted to 0) and saved was read by eval/predict as 0-based, every feature one column
    off (a hunt: 56.67% where Python scored 100%): refused until index_base_ is set."""
    from sklearn.datasets import load_svmlight_file
    from nbsvm.learners import PassiveAggressive
    rng = np.random.default_rng(0)
    lines = []
    for i in range(60):
        label = 1 if i % 2 else -1
        feats = sorted(rng.choice(np.arange(1, 50), size=4, replace=False) + 0)
        feats[0] = 1 + (i % 2)  # feature 1 or 2 tells the class
        lines.append(f"{label} " + " ".join(f"{f}:1" for f in sorted(set(feats))))
    data = tmp_path / "bin.svm"
    data.write_text("\n".join(lines) + "\n")
    X, y = load_svmlight_file(str(data))
    m = PassiveAggressive(epochs=20).fit(X.tocsr(), y.astype(int))
    assert (m.predict(X) == y).mean() == 1.0
    m.save(tmp_path / "py.npz")
    for command in ("eval", "predict"):
        r = run(command, data, "-m", tmp_path / "py.npz", "-q")
        assert r.exit_code == 2 and "does not say whether its feature indices start" in r.output
    m.index_base_ = 1
    m.save(tmp_path / "py1.npz")
    r = run("eval", data, "-m", tmp_path / "py1.npz", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["accuracy"] == 1.0


def test_a_learn_model_that_kept_columns_takes_the_files_matrix_in_python(tmp_path):
    """A model of nbsvm learn keeping the columns its data used (columns_) refused the
    file's own matrix in Python ('X has 41 features, but ... expecting 4') and took any
    4-column one: the file's columns are reduced to the kept ones, as the CLI reads it."""
    from sklearn.datasets import load_svmlight_file
    rng = np.random.default_rng(1)
    lines = []
    for i in range(200):
        a, b = rng.normal(size=2)
        label = 1 if a + b > 0 else -1
        lines.append(f"{label} 3:{a:.4f} {40 + (i % 2)}:{b:.4f}")
    data = tmp_path / "ctr.svm"
    data.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.npz"
    assert run("learn", data, "-a", "sgd", "-o", model, "-q").exit_code == 0
    m = OnlineLearner.load(model)
    assert m.columns_.tolist() == [2, 39, 40] and m.n_features_in_ == 3
    X, y = load_svmlight_file(str(data), zero_based=False)
    X = X.tocsr()
    assert X.shape[1] == 41
    with pytest.warns(UserWarning, match="as many columns as the model kept"):
        reduced_form = m.decision_function(X[:, m.columns_])
    assert np.array_equal(m.decision_function(X), reduced_form)
    assert np.array_equal(m.decision_function(X.toarray()), reduced_form)
    # narrower than the last kept column (a test file without feature 41): read as the CLI
    narrow = X[:, :40]
    reduced = np.column_stack([X[:, [2, 39]].toarray(), np.zeros(X.shape[0])])
    assert np.array_equal(m.decision_function(narrow), m.decision_function(reduced))
    predicted = pd.read_csv(io.StringIO(run("predict", data, "-m", model, "-q", "-o", "-").output))
    assert predicted["label"].astype(str).tolist() == [str(v) for v in m.predict(X)]


def test_blitzer_reviews_keep_their_true_labels_in_predict(tmp_path):
    """predict of .review files wrote no true_label though every line has its #label#
    (the format is read without requiring one)."""
    lines = blitzer_books("positive")[:40] + blitzer_books("negative")[:40]
    data = tmp_path / "b.review"
    data.write_text("".join(lines), encoding="latin-1")
    model = tmp_path / "m.npz"
    assert run("learn", data, "-a", "sgd", "-o", model, "-q").exit_code == 0
    out = pd.read_csv(io.StringIO(run("predict", data, "-m", model, "-q", "-o", "-").output))
    assert out["true_label"].tolist() == ["positive"] * 40 + ["negative"] * 40
    unlabeled = tmp_path / "u.review"
    unlabeled.write_text("".join(re.sub(r" ?#label#:\S+", "", l) for l in lines[:5]),
                         encoding="latin-1")
    out = pd.read_csv(io.StringIO(run("predict", unlabeled, "-m", model, "-q", "-o", "-").output))
    assert "true_label" not in out.columns and len(out) == 5


def test_float_classes_fitted_in_python_take_the_files_labels_by_value(tmp_path):
    """A learner fitted on load_svmlight_file's float y (classes -1.0, 1.0): eval refused
    the file's '-1' as the class '-1.0' written another way, where predict read it; both
    find the class by value now."""
    from sklearn.datasets import load_svmlight_file
    from nbsvm.learners import PassiveAggressive
    data = tmp_path / "f.svm"
    data.write_text("".join(f"{'1' if i % 2 else '-1'} {1 + i % 2}:1 {3 + i % 5}:0.5\n"
                            for i in range(40)))
    X, y = load_svmlight_file(str(data))
    m = PassiveAggressive(epochs=10).fit(X.tocsr(), y)
    assert m.classes_ == [-1.0, 1.0]
    m.index_base_ = 1
    m.save(tmp_path / "m.npz")
    r = run("eval", data, "-m", tmp_path / "m.npz", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["accuracy"] == 1.0


def test_learn_warns_of_a_file_given_twice_or_also_as_test(tmp_path):
    """As train does: an input given twice trained twice, a --test file among the inputs
    scored examples the model saw, both without a word."""
    data = tmp_path / "t.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} {1 + i % 2}:1\n" for i in range(40)))
    r = run("learn", data, tmp_path / "." / "t.svm", "--test", data, "-o", tmp_path / "m.npz",
            "-q")
    assert r.exit_code == 0
    assert f"warning: {data} is given twice: its examples train twice" in r.output
    assert f"warning: --test {data} is also a training input" in r.output
