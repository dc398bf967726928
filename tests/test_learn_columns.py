"""``nbsvm learn`` holds weights for the feature columns its examples use, not for the whole
feature space (the design's rule: state sized by what is kept, never classes x 2**n_bits):
named features hashed into 2**20 columns, five classes one-vs-rest, held 80 MB of weights
for 2,700 columns. The model keeps ``columns_`` (each weight's feature index) and predicts
exactly what the model over every column predicts."""

import mmh3
import numpy as np
import pandas as pd
import pytest

from nbsvm import NBSVMError
from nbsvm.data import rowcache
from nbsvm.data.rowcache import DistinctValues
from nbsvm.evaluation.sparse import load_learner, predict_sparse
from nbsvm.io.npzfile import load_npz, save_npz
from nbsvm.learners.options import make_learner_from_options
from nbsvm.models.checkpoint import Checkpoint
from nbsvm.workflows import learn
from nbsvm.workflows.learn import learn_sparse
from testhelpers import Stop, stop_at, write_task_rows

SHUFFLE = dict(buffer_bytes=4000, block_bytes=500)  # several groups per epoch
KIND = {"sgd": "binary", "adagrad": "binary", "pegasos": "binary", "pa": "binary",
        "dcd": "binary", "ovr": "multi", "mira": "multi", "multiclass-hinge": "multi",
        "multilabel": "ml", "sgd-regressor": "reg", "ogd": "reg"}


def _write(path, kind, n=300, seed=0, spread=7):
    """1-based rows whose indices are 1 + spread * j for j < 40: a seventh of the columns
    up to the largest are used."""
    return write_task_rows(path, kind, n, seed, spread, first=1)


def _distinct_columns(path):
    """The 0-based indices a 1-based svmlight file uses, read by hand."""
    return sorted({int(t.split(":")[0]) - 1 for line in path.read_text().splitlines()
                   for t in line.split()[1:]})


@pytest.mark.parametrize("algorithm", sorted(KIND))
def test_the_used_columns_alone_predict_as_every_column(tmp_path, monkeypatch, algorithm):
    kind = KIND[algorithm]
    train = _write(tmp_path / "train.svm", kind)
    # test rows: the training columns, columns in between never seen, and some beyond
    test = _write(tmp_path / "test.svm", kind, n=80, seed=1, spread=5)
    epochs = {"--lambda": 0.01} if algorithm == "dcd" else {"--epochs": 3}  # dcd: converges
    kept = learn_sparse(make_learner_from_options(algorithm, dict(epochs)), train, seed=2,
                        **SHUFFLE)
    assert kept.columns_.tolist() == _distinct_columns(train)  # 40 of 274
    assert kept.n_features_in_ == 40
    monkeypatch.setattr(learn, "COMPACT_SHARE", 0.0)  # every column, as before
    every = learn_sparse(make_learner_from_options(algorithm, dict(epochs)), train, seed=2,
                         **SHUFFLE)
    assert not hasattr(every, "columns_") and every.n_features_in_ == 274
    for model in (kept, every):
        model.save(tmp_path / "m.npz")
        got = pd.concat(predict_sparse(load_learner(tmp_path / "m.npz"), test))
        if model is kept:
            first = got
    pd.testing.assert_frame_equal(first, got, check_exact=True)


def test_named_features_hold_weights_for_their_buckets_alone(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(600)]
    lines = [f"c{i % 5} " + " ".join(f"{w}:1" for w in rng.choice(words, 8, replace=False))
             for i in range(500)]
    (tmp_path / "named.txt").write_text("\n".join(lines) + "\n")
    model = learn_sparse(make_learner_from_options("ovr", {"--epochs": 2}),
                         tmp_path / "named.txt", fmt="named", n_bits=20)
    buckets = sorted({mmh3.hash(t.split(":")[0], 0, signed=False) & (2**20 - 1)
                      for line in lines for t in line.split()[1:]})
    assert model.columns_.tolist() == buckets and model.n_features_in_ == len(buckets)
    weights = sum(a.nbytes for k, a in model.saved_parts()[1].items() if k != "columns_")
    # five binary learners over the buckets used (weights and their average, float64):
    # 2**20 columns would be 80 MB
    assert weights <= 5 * 4 * 8 * len(buckets), weights


def test_a_resumed_run_keeps_the_same_columns(tmp_path):
    data = _write(tmp_path / "train.svm", "multi")
    full = learn_sparse(make_learner_from_options("ovr", {"--epochs": 4}), data, seed=3,
                        **SHUFFLE)
    ck = tmp_path / "m.checkpoint.npz"
    with pytest.raises(Stop):
        learn_sparse(make_learner_from_options("ovr", {"--epochs": 4}), data, seed=3,
                     checkpoint=Checkpoint(ck, every=2, identity={"data": 1}),
                     callback=stop_at(3), **SHUFFLE)
    back = learn_sparse(make_learner_from_options("ovr", {"--epochs": 4}), data, seed=3,
                        checkpoint=Checkpoint(ck, every=2, resume=True, identity={"data": 1}),
                        **SHUFFLE)
    (ha, a), (hb, b) = full.saved_parts(), back.saved_parts()
    assert ha == hb and a.keys() == b.keys() and "columns_" in a
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("columns, says", [
    (lambda c: c[::-1].copy(), "increasing"),
    (lambda c: c[:-1], "increasing"),
    (lambda c: c.astype(np.int32), "int64"),
])
def test_a_crafted_column_list_is_refused(tmp_path, columns, says):
    model = learn_sparse(make_learner_from_options("sgd", {}), _write(tmp_path / "t.svm", "binary"))
    model.save(tmp_path / "m.npz")
    header, arrays = load_npz(tmp_path / "m.npz", "learner")
    arrays["columns_"] = columns(arrays["columns_"])
    save_npz(tmp_path / "bad.npz", "learner", header, arrays)
    with pytest.raises(NBSVMError, match=f"corrupted learner file.*{says}"):
        load_learner(tmp_path / "bad.npz")


def test_hashed_columns_beyond_the_feature_space_are_refused(tmp_path):
    (tmp_path / "n.txt").write_text("a x:1 y:1\nb z:1\n" * 20)
    model = learn_sparse(make_learner_from_options("sgd", {}), tmp_path / "n.txt", fmt="named",
                         n_bits=12)
    assert model.columns_[-1] >= 16  # buckets of 2**12: beyond 2**4
    model.n_bits_ = 4  # a crafted header
    model.save(tmp_path / "m.npz")
    with pytest.raises(NBSVMError, match="corrupted learner file"):
        load_learner(tmp_path / "m.npz")


def test_distinct_values_match_numpy(monkeypatch):
    monkeypatch.setattr(rowcache, "COMPACT_CHUNK", 50)  # many merges
    rng = np.random.default_rng(4)
    parts = [rng.integers(0, 10 ** rng.integers(1, 6), size=rng.integers(0, 300))
             for _ in range(60)]
    seen = DistinctValues()
    for p in parts:
        seen.add(p.astype(np.int64))
    assert np.array_equal(seen.sorted(), np.unique(np.concatenate(parts)))
