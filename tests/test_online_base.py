"""The learner contract: input conversion, label encoding, saving, the registry's errors."""
import numpy as np
import pytest

from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.data.rows import as_rows
from nbsvm.learners.registry import make_learner, resolve
from nbsvm.io.npzfile import load_npz, save_npz


def test_as_rows_accepts_dense_tuple_and_scipy_alike():
    dense = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    a = as_rows(dense)
    b = as_rows((np.array([1, 0, 2]), np.array([2.0, 1.0, 3.0]), np.array([0, 1, 3])), 3)

    class CSR:            # the attributes as_rows reads from a scipy.sparse matrix
        indptr, indices, data, shape = a.offsets, a.indices, a.values, (2, 3)

    c = as_rows(CSR())
    for rows in (a, b, c):
        assert rows.indices.tolist() == [1, 0, 2] and rows.values.tolist() == [2.0, 1.0, 3.0]
        assert rows.offsets.tolist() == [0, 1, 3] and rows.n_features == 3
    assert a.take([1]).indices.tolist() == [0, 2] and a.sq_norms().tolist() == [4.0, 10.0]
    with pytest.raises(NBSVMError, match="out of range"):
        as_rows(dense, n_features=2)
    with pytest.raises(NBSVMError, match="finite"):
        as_rows(np.array([[np.nan]]))
    # a row past nnz (a segmentation fault in fit) or ending before it starts (overlapping
    # rows trained on, then a numpy error in predict)
    values = np.ones(3)
    for offsets in ([0, 1000, 3], [0, 2, 1, 3], [0, -1, 3]):
        with pytest.raises(NBSVMError, match="never decrease"):
            as_rows((np.array([0, 2, 1]), values, np.array(offsets)), 3)
    from nbsvm.learners import SGDClassifier
    with pytest.raises(NBSVMError, match="never decrease"):
        SGDClassifier(epochs=1).fit((np.array([0, 2, 1]), values, np.array([0, 1000, 3])), [0, 1])


def test_empty_arrays_and_numpy_scalars_are_saved(tmp_path):
    save_npz(tmp_path / "e.npz", "learner", {}, {"empty": np.zeros(0), "x": np.ones(2)})
    _, arrays = load_npz(tmp_path / "e.npz", "learner")
    assert arrays["empty"].shape == (0,) and arrays["x"].tolist() == [1.0, 1.0]
    m = make_learner("pa", epochs=1).fit(np.eye(3), ["a", "b", "a"])
    m.extra_count_ = np.int64(7)                       # a numpy scalar: saved as a number
    m.save(tmp_path / "m.npz")
    back = OnlineLearner.load(tmp_path / "m.npz")
    assert back.extra_count_ == 7 and type(back.extra_count_) is int
    assert back.predict(np.eye(3)).tolist() == m.predict(np.eye(3)).tolist()
    m.bad_ = object()
    with pytest.raises(NBSVMError, match="cannot save"):
        m.save(tmp_path / "bad.npz")


def test_registry_errors_name_what_is_allowed():
    with pytest.raises(NBSVMError, match="allowed: sgd, sgd-regressor, adagrad"):
        make_learner("svm")
    with pytest.raises(NBSVMError, match="does not take radius; it takes"):
        make_learner("mira", radius=1.0)
    with pytest.raises(NBSVMError, match="fixes schedule = 'adagrad'"):
        make_learner("adagrad", schedule="optimal")
    assert make_learner("adagrad", schedule="adagrad").schedule == "adagrad"
    with pytest.raises(NBSVMError, match="unknown schedule 'fast'; allowed: constant"):
        resolve("schedule", "fast")


def test_learners_import_from_the_package():
    import nbsvm.learners as online
    from nbsvm.learners.pa import MIRA

    assert online.MIRA is MIRA and online.make_learner is make_learner
    assert set(online.__all__) >= {"SGDClassifier", "Pegasos", "MulticlassHinge", "OGDRegressor"}
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        online.Nope


def test_labels_keep_their_values_and_unknown_ones_refused():
    m = make_learner("pa", epochs=1).fit(np.eye(4), [1, -1, 1, -1])
    assert list(m.classes_) == [-1, 1]                  # as scikit-learn: np.unique(y)
    assert m.predict(np.eye(4)).dtype.kind == "i"          # predictions are the label values
    assert m._encode(np.array([1, -1])).tolist() == [1.0, -1.0]            # ints as "1"
    assert m._encode(["1", "-1"]).tolist() == [1.0, -1.0]
    assert m._encode(np.array(["1", 1], dtype=object)).tolist() == [1.0, 1.0]
    with pytest.raises(NBSVMError, match="unknown label '2'; this model knows: -1, 1"):
        m.partial_fit(np.eye(4)[:2], [1, 2])
    mc = make_learner("mira", epochs=1).fit(np.eye(3), ["b", "c", "a"])
    assert mc._encode(["c", "a", "b"]).tolist() == [2, 0, 1]
    with pytest.raises(NBSVMError, match="unknown label 'zz'"):
        mc._encode(["a", "zz"])


@pytest.mark.parametrize("name", ["mira", "sgd", "pa"])
def test_a_missing_label_is_refused_not_made_a_class(name):
    """MIRA().fit(X, [None, ..., 'a', ...]) made a class named 'None'."""
    from nbsvm.compat import InputError
    X = np.random.default_rng(0).random((8, 3))
    with pytest.raises(InputError, match="missing label"):
        make_learner(name).fit(X, [None] * 4 + ["a"] * 4)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_a_seed_that_is_no_count_is_refused_by_every_learner(seed):
    """SGDClassifier(seed=-1).fit raised numpy's 'expected non-negative integer' from
    inside its generator (seed=1.5 a TypeError), as NBSVMClassifier and nbsvm learn say."""
    from nbsvm.learners.registry import ALGORITHMS, make_learner

    X = np.eye(4)
    for name in ALGORITHMS:
        learner = make_learner(name, seed=seed) if "seed" in make_learner(name).get_params() else None
        if learner is None:
            continue
        y = [0.5, 1.5, 2.5, 3.5] if learner.task == "regression" else (
            [["a"], ["b"], ["a"], ["b"]] if learner.task == "multilabel" else [0, 1, 0, 1])
        with pytest.raises(NBSVMError, match=f"seed must be an integer >= 0, got {seed!r}"):
            learner.fit(X, y)


def test_labels_mixing_strings_and_numbers_in_a_list_are_refused():
    """y = [1, 'b', ...] as a list became the strings '1' and 'b' (numpy's conversion), and
    predict answered '1' for a 1 (an object array was refused already)."""
    from nbsvm.compat import InputError
    from nbsvm.learners.registry import make_learner

    X = np.eye(4)
    with pytest.raises(InputError, match=r"mixes strings and numbers \('b' and 1, y\[1\]\)"):
        make_learner("sgd").fit(X, [1, "b", 1, "b"])
    assert make_learner("sgd").fit(X, ["1", "b", "1", "b"]).classes_ == ["1", "b"]
    assert make_learner("pa").fit(X, [1, 2, 1, 2]).predict(X).tolist()[0] in (1, 2)


def test_later_partial_fit_classes_must_be_the_first_calls():
    """classes= on a later partial_fit naming other classes (or one more) was taken without
    a word; scikit-learn refuses it, and so do the learners now (the same list is fine)."""
    from nbsvm.compat import InputError
    from nbsvm.learners import MulticlassHinge, SGDClassifier
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.2], [0.1, 1.0]])
    y = ["n", "p", "n", "p"]
    for cls in (SGDClassifier, MulticlassHinge):
        m = cls().partial_fit(X, y, classes=["n", "p"])
        m.partial_fit(X, y, classes=["p", "n"])
        for other in (["n", "p", "z"], ["q", "r"]):
            with pytest.raises(InputError):
                m.partial_fit(X, y, classes=other)
        assert list(m.classes_) == ["n", "p"]


def test_fit_takes_no_weights_in_third_place():
    """fit(X, y, w), scikit-learn's sample_weight place, trained an epoch and then failed
    with "'list' object is not callable": the callback is keyword-only."""
    from nbsvm.learners import Pegasos, SGDClassifier
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.2], [0.1, 1.0]])
    for cls in (SGDClassifier, Pegasos):
        with pytest.raises(TypeError, match="positional"):
            cls().fit(X, [0, 1, 0, 1], [1.0, 2.0, 1.0, 1.0])
        seen = []
        cls(epochs=2).fit(X, [0, 1, 0, 1], callback=lambda e, s: seen.append(e))
        assert seen == [1, 2]
