"""A learner's file is sized by what it learned, not by its feature space: named features
hashed into ``2**n_bits`` columns leave most weights zero, and a learned array that is
mostly zeros is kept as its nonzero entries (6 features at ``--n-bits 27`` wrote 1 GB).
Loading gives back the very arrays; a crafted file is refused, and so is a dense size
beyond the memory available, before anything is allocated."""
import numpy as np
import pytest

from nbsvm import NBSVMError, memory
from nbsvm.io.npzfile import load_npz, save_npz
from nbsvm.learners import persistence
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.registry import ALGORITHMS
from testhelpers import run_cli

NAMED = "".join(
    f"{y} height:{h} weight:{w} {c}:1\n"
    for y, h, w, c in [(1, 1.5, 2, "red"), (-1, 0.5, 1, "blue"), (1, 1.7, 2.2, "red"),
                       (-1, 0.4, 0.9, "blue"), (1, 1.4, 1.9, "green"), (-1, 0.6, 1.1, "blue")]
)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_learn_of_named_features_writes_what_it_learned(tmp_path):
    data = tmp_path / "named.txt"
    data.write_text(NAMED)
    for name, learner in (("sgd", "sgd"), ("pa", "pa")):
        out = tmp_path / f"{name}.npz"
        r = run_cli("learn", data, "--format", "named", "--n-bits", "22", "--algorithm",
                    learner, "-o", out)
        assert r.returncode == 0, r.stderr
        # weights for the 5 buckets used (tests/test_learn_columns.py): 2**22 float64
        # weights (and for PA their sums) would be 32-64 MB to load
        assert "features: 5 used of 4,194,304" in r.stdout, r.stdout
        assert out.stat().st_size < 20_000, out.stat().st_size
        r = run_cli("info", out)
        assert r.returncode == 0 and "memory to load: about" in r.stdout, r.stderr
        loaded = r.stdout.split("memory to load: about")[1].split()
        assert loaded[1] in ("B", "KB"), loaded
        r = run_cli("predict", "-m", out, data, "-o", tmp_path / f"{name}.csv")
        assert r.returncode == 0, r.stderr


def test_a_learner_over_a_wide_space_keeps_its_nonzero_weights(tmp_path, monkeypatch):
    """A learner fitted in Python over 2**22 columns, of which 5 are used, writes their
    entries alone (format 4), loads them back dense and predicts the same; written dense
    (format 2) it takes 32 MB."""
    from scipy import sparse

    from nbsvm.learners.linear import SGDClassifier

    X = sparse.csr_matrix((np.ones(6), [3, 70, 4_000_000, 3, 9, 70], [0, 2, 3, 4, 5, 6]),
                          shape=(5, 1 << 22))
    learner = SGDClassifier(average=False).fit(X, [0, 1, 0, 1, 0])
    learner.save(tmp_path / "sparse.npz")
    assert (tmp_path / "sparse.npz").stat().st_size < 20_000
    monkeypatch.setattr(persistence, "SPARSE_MIN_BYTES", 1 << 62)
    learner.save(tmp_path / "dense.npz")
    assert (tmp_path / "dense.npz").stat().st_size > 32 << 20
    back = [OnlineLearner.load(tmp_path / f"{k}.npz") for k in ("sparse", "dense")]
    assert all(np.array_equal(b.decision_function(X), learner.decision_function(X)) for b in back)
    # format 4 only where nonzero entries are kept: older versions say to upgrade
    assert load_npz(tmp_path / "sparse.npz", "learner")[0]["format_version"] == 4
    assert load_npz(tmp_path / "dense.npz", "learner")[0]["format_version"] == 2
    r = run_cli("info", tmp_path / "sparse.npz")
    assert "memory to load: about 32.0 MB" in r.stdout.replace("  ", " ").replace("  ", " ")


@pytest.mark.parametrize("name", [n for n in ALGORITHMS if n != "ovr"])
def test_every_learner_reads_back_the_arrays_it_saved(name, tmp_path):
    """Every learner's arrays, fitted on 200,000 columns of which a few are used, come back
    equal from the file, and the file is small."""
    rng = np.random.default_rng(0)
    n, d = 60, 200_000
    cols = rng.integers(0, 50, size=(n, 4)) * 997
    from scipy import sparse

    X = sparse.csr_matrix((np.ones(n * 4), cols.ravel(), np.arange(0, n * 4 + 1, 4)), shape=(n, d))
    y = np.arange(n) % 3
    algorithm = ALGORITHMS[name]
    learner = algorithm.load()(**algorithm.fixed)
    if learner.task == "regression":
        learner.fit(X, y.astype(float))
    elif learner.task == "multilabel":
        learner.fit(X, [[int(v)] for v in y])
    elif learner.task == "binary":
        learner.fit(X, y % 2)
    else:
        learner.fit(X, y)
    path = tmp_path / "learner.npz"
    learner.save(path)
    assert path.stat().st_size < 200_000
    again = OnlineLearner.load(path)
    before, after = learner.state_arrays(), again.state_arrays()
    assert before.keys() == after.keys()
    for key in before:
        assert before[key].dtype == after[key].dtype and np.array_equal(before[key], after[key])
    score = "predict" if learner.task == "regression" else "decision_function"
    assert np.array_equal(getattr(learner, score)(X), getattr(again, score)(X))


def crafted(tmp_path, change) -> str:
    """A saved learner's file with its sparse parts changed by ``change(header, arrays)``
    (checksum recomputed: the file is crafted, not damaged)."""
    from nbsvm.learners.linear import SGDClassifier
    from scipy import sparse

    X = sparse.csr_matrix(([1.0, 1.0], [3, 400_000], [0, 1, 2]), shape=(2, 500_000))
    learner = SGDClassifier().fit(X, [0, 1])
    path = tmp_path / "crafted.npz"
    learner.save(path)
    header, arrays = load_npz(path, "learner")
    change(header, arrays)
    save_npz(path, "learner", header, arrays)
    return path


@pytest.mark.parametrize("change, message", [
    (lambda h, a: a.update({"v_.nonzero_index": a["v_.nonzero_index"][::-1].copy()}),
     "nonzero indices out of order or beyond its shape"),
    (lambda h, a: a.update({"v_.nonzero_index": a["v_.nonzero_index"] + 10**6}),
     "nonzero indices out of order or beyond its shape"),
    (lambda h, a: a.update({"v_.nonzero_values": a["v_.nonzero_values"][:1]}),
     "bad nonzero entries"),
    (lambda h, a: a.pop("v_.nonzero_values"), "has a bad shape or parts"),
    (lambda h, a: h.update({"sparse": {"v_": [-1]}}), "has a bad shape or parts"),
    (lambda h, a: h.update({"sparse": ["v_"]}), "sparse must map array names to shapes"),
    (lambda h, a: a.update({"v_": np.full(500_000, 7.0)}), "kept both whole and by its nonzero"),
])
def test_crafted_sparse_parts_are_refused(tmp_path, change, message):
    path = crafted(tmp_path, change)
    with pytest.raises(NBSVMError, match=f"corrupted learner file: .*{message}"):
        OnlineLearner.load(path)


def test_a_dense_size_beyond_the_memory_available_is_refused_before_it_is_allocated(
        tmp_path, monkeypatch):
    path = crafted(tmp_path, lambda h, a: h.update({"sparse": {"v_": [1 << 36]}}))
    monkeypatch.setattr(memory, "available_bytes", lambda: 1 << 30)
    with pytest.raises(NBSVMError, match="loading the learner's v_ needs about 512.0 GB but "
                                         "only 1.0 GB is available") as caught:
        OnlineLearner.load(path)
    assert caught.value.path == str(path)


def test_a_mostly_nonzero_array_is_saved_whole_without_an_index_of_it():
    """The nonzero entries are counted before any index is made: a dense 32 MB array took
    a 32 MB index (8 bytes a nonzero) only to be saved whole."""
    import tracemalloc

    dense = np.random.default_rng(0).random(1 << 22)
    tracemalloc.start()
    try:
        kept, sparse = persistence.sparse_parts({"v_": dense})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sparse == {} and kept["v_"] is dense and peak < 1 << 20, peak


def test_the_dense_arrays_are_checked_together(tmp_path, monkeypatch):
    """Two arrays of 4 MB each fit 6 MB one at a time, not both: refused before either is
    allocated (each was checked alone)."""
    from nbsvm.learners.pa import PassiveAggressive
    from scipy import sparse

    X = sparse.csr_matrix(([1.0, 1.0], [3, 400_000], [0, 1, 2]), shape=(2, 500_000))
    PassiveAggressive().fit(X, [0, 1]).save(tmp_path / "pa.npz")
    header, _ = load_npz(tmp_path / "pa.npz", "learner")
    assert sorted(header["sparse"]) == ["accum_", "weights_"]
    monkeypatch.setattr(memory, "available_bytes", lambda: 6 << 20)
    with pytest.raises(NBSVMError, match="loading the learner's .*weights_.* needs about 7.6 MB"):
        OnlineLearner.load(tmp_path / "pa.npz")
    monkeypatch.setattr(memory, "available_bytes", lambda: 9 << 20)
    assert OnlineLearner.load(tmp_path / "pa.npz").weights_.shape == (1, 500_001)
