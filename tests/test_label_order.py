"""Classes that are numbers order by value, as scikit-learn orders labels: ordered as text
('10' before '2'), classes_[1] and the score columns were not the ones scikit-learn's
metrics and scorers read, so a ROC AUC came out as 1 - AUC, without an error."""
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.io.labels import class_order

REVIEWS = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"


def _data():
    lines = REVIEWS.read_text(encoding="utf-8").splitlines()
    return [l.split("\t", 1)[1] for l in lines], [l.split("\t", 1)[0] for l in lines]


@pytest.mark.parametrize("names, order", [
    (["10", "2", "1"], ["1", "2", "10"]), (["-1", "1"], ["-1", "1"]),
    (["2.5", "10.0", "-0.5"], ["-0.5", "2.5", "10.0"]), (["1e-05", "0.001"], ["1e-05", "0.001"]),
    # names: as text
    (["+1", "-1"], ["+1", "-1"]), (["01", "2", "10"], ["01", "10", "2"]), (["10", "b"], ["10", "b"]),
    (["True", "False"], ["False", "True"]), (["nan", "1"], ["1", "nan"]), (["1", "1.0"], ["1", "1.0"]),
])
def test_class_order(names, order):
    assert class_order(names) == order


@pytest.mark.parametrize("pos, neg", [(10, 2), (2, 10), (3, 12)])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_numbers_as_labels_score_as_scikit_learn_expects(pos, neg):
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.model_selection import cross_val_score

    X, y = _data()
    numbers = np.array([pos if label == "pos" else neg for label in y])
    model = NBSVMClassifier(n_bits=16).fit(X, numbers)
    # classes_ as y gave them (scikit-learn's scorers look pos_label up in it), in value
    # order; class_names_ as text, what model files and the CLI use
    assert list(model.classes_) == np.unique(numbers).tolist()
    assert list(model.class_names_) == [str(v) for v in np.unique(numbers)]
    for scoring in ("f1", "precision", "average_precision"):  # pos_label=1 was not found
        f1 = cross_val_score(NBSVMClassifier(n_bits=16), np.array(X, dtype=object),
                             (numbers == pos).astype(int), cv=2, scoring=scoring,
                             error_score="raise")
        assert f1.min() > 0.5, (scoring, f1)
    by_name = NBSVMClassifier(n_bits=16).fit(X, y)
    auc = roc_auc_score(numbers, model.decision_function(X))
    assert auc > 0.99 and auc == pytest.approx(roc_auc_score(np.array(y) == "pos",
                                                             by_name.decision_function(X)))
    assert log_loss(numbers, model.predict_proba(X)) < 0.1
    scores = cross_val_score(NBSVMClassifier(n_bits=16), np.array(X, dtype=object), numbers,
                             cv=2, scoring="roc_auc")
    assert scores.min() > 0.5, scores             # 1 - AUC when the columns were swapped
    logs = cross_val_score(NBSVMClassifier(n_bits=16), np.array(X, dtype=object), numbers,
                           cv=2, scoring="neg_log_loss")   # found its column by classes_ ==
    assert np.all(np.isfinite(logs))


@pytest.mark.parametrize("labels", [("10", "2"), ("1", "2", "9", "10")])
def test_continuing_a_model_that_ordered_numbers_as_text(monkeypatch, labels):
    """train --init / continue_fit take such a model's outputs by class name: two classes,
    the one output's bias changes sign (its ratios do too, so its weights stay); more, the
    outputs are permuted. The
    continued model equals one continued from the same model saved in value order (it was
    refused, and copied by position it would have scored every class as another)."""
    import nbsvm.lexicon.nblexicon as nblexicon

    X, y = _data()
    numbers = [labels[i % len(labels) // 2 * 2 + (label == "pos")] if len(labels) > 2
               else labels[label == "pos"] for i, label in enumerate(y)]
    monkeypatch.setattr(nblexicon, "class_order", lambda names: sorted(set(names)))
    old = NBSVMClassifier(n_bits=16, keep_counts=True, min_df=1, epochs=2).fit(X, numbers)
    monkeypatch.undo()
    assert list(old.classes_) == sorted(set(numbers)) != class_order(set(numbers))
    fresh = NBSVMClassifier(n_bits=16, keep_counts=True, min_df=1, epochs=2).fit(X, numbers)
    new_x, new_y = X[::3], numbers[::3]
    a, b = old.continue_fit(new_x, new_y), fresh.continue_fit(new_x, new_y)
    assert list(a.classes_) == list(b.classes_) == class_order(set(numbers))
    np.testing.assert_allclose(a.linear_.S_, b.linear_.S_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.linear_.state_, b.linear_.state_, rtol=1e-9, atol=1e-9)
    assert np.mean(a.predict(X).astype(str) == np.array(numbers)) == 1.0
    with pytest.raises(NBSVMError, match=r"saved model's classes \(.*\) differ"):
        from nbsvm.models.fitting import transfer_state
        other = NBSVMClassifier(n_bits=16, min_df=1).fit(X, [f"x{v}" for v in numbers])
        transfer_state(other, b)


@pytest.mark.parametrize("labels", [("10", "2"), ("1", "2", "9", "10")])
def test_partial_fit_of_a_model_that_ordered_numbers_as_text(monkeypatch, labels):
    """Such a model's lexicon now orders the classes by value: its count rows and ratios
    are taken by class name. Taken by position, one partial_fit of five right labels
    inverted the two-class model (training accuracy 1.0 -> 0.0), and serve --learn saved it."""
    import nbsvm.lexicon.nblexicon as nblexicon

    X, y = _data()
    numbers = [labels[i % len(labels) // 2 * 2 + (label == "pos")] if len(labels) > 2
               else labels[label == "pos"] for i, label in enumerate(y)]
    monkeypatch.setattr(nblexicon, "class_order", lambda names: sorted(set(names)))
    old = NBSVMClassifier(n_bits=16, keep_counts=True, min_df=1).fit(X, numbers)
    monkeypatch.undo()
    assert list(old.classes_) == sorted(set(numbers)) != old.lexicon_.classes_
    fresh = NBSVMClassifier(n_bits=16, keep_counts=True, min_df=1).fit(X, numbers)
    for model in (old, fresh):
        model.partial_fit(X[:5], numbers[:5])
        assert np.mean(model.predict(X).astype(str) == np.array(numbers)) == 1.0
    # the same counts and, class by class, the same ratios as the model in value order
    order = [list(old.classes_).index(c) for c in fresh.classes_]
    assert old.class_counts_[order].tolist() == fresh.class_counts_.tolist()
    if len(labels) == 2:
        np.testing.assert_allclose(old.ratios_, -fresh.ratios_, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_allclose(old.ratios_[order], fresh.ratios_, rtol=1e-6, atol=1e-6)


def test_classes_keep_their_type_through_a_model_file(tmp_path):
    X, y = _data()
    model = NBSVMClassifier(n_bits=16).fit(X, [label == "pos" for label in y])
    model.save(tmp_path / "m.npz")
    loaded = NBSVMClassifier.load(tmp_path / "m.npz")
    assert list(loaded.classes_) == [False, True] and list(loaded.class_names_) == ["False", "True"]
    assert loaded.classes_[1] is True and loaded.predict(X[:2]).dtype == bool


@pytest.mark.parametrize("labels", [[1, 1, "neg", "neg"], [["a", 1], ["a"], ["b"], ["b"]]])
def test_labels_that_mix_strings_and_numbers_are_refused(labels):
    """[1, 'neg'] trained as classes [1, 'neg'], predicted as an object array of both
    kinds; scikit-learn and the backend learners refuse the mix."""
    texts = ["a great film", "great fun", "an awful film", "dull"]
    with pytest.raises(NBSVMError, match=r"labels mix strings and numbers \((1 and 'neg'|'a' and 1)"):
        NBSVMClassifier(ngrams=1, n_bits=12, min_df=1, multilabel=isinstance(labels[0], list)
                        ).fit(texts, labels)


def test_strings_that_read_as_numbers_warn_that_scikit_learn_orders_them_as_text():
    """['10', '9'] as strings: classes_ ['9', '10'] (by value, as files are read), while
    scikit-learn's metrics take np.unique's ['10', '9']: ROC AUC 0.0 for a perfect model,
    without a word. Now a warning says so; numbers, and strings that order alike, give none."""
    import warnings

    texts = ["a great film", "great fun", "an awful film", "dull"] * 2
    for labels, warned in ((["10", "10", "9", "9"] * 2, True), ([10, 10, 9, 9] * 2, False),
                           (["1", "1", "2", "2"] * 2, False), (["pos", "pos", "neg", "neg"] * 2, False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            NBSVMClassifier(ngrams=1, n_bits=10, min_df=1).fit(texts, labels)
        assert [str(w.message)[:50] for w in caught if "read as numbers" in str(w.message)] == \
            ["y's labels are strings that read as numbers: class"] * warned


def test_labels_of_strings_and_bytes_are_named_so():
    """They were said to 'mix strings and numbers'."""
    with pytest.raises(NBSVMError, match=r"labels mix strings and bytes \(b'a' and 'b'"):
        NBSVMClassifier(ngrams=1, n_bits=12, min_df=1).fit(
            ["a great film", "great fun", "an awful film", "dull"], [b"a", "b", b"a", "b"])


def test_a_model_trained_from_a_file_scores_numbers_of_any_type(tmp_path):
    # a file's classes are names: y of floats (a pandas column with a NaN somewhere) or
    # bools scored 0.0 against '1' / '0', where a model fitted on ints scores them right
    texts, labels = _data()
    numbers = ["1" if label == "pos" else "0" for label in labels]
    src = tmp_path / "num.txt"
    src.write_text("".join(f"{y}\t{x}\n" for x, y in zip(texts, numbers)), encoding="utf-8")
    from testhelpers import run_cli
    assert run_cli("train", src, "-o", tmp_path / "m.npz", "--n-bits", "14", "-q").returncode == 0
    clf = NBSVMClassifier.load(tmp_path / "m.npz")
    fitted = NBSVMClassifier(n_bits=14).fit(texts, [int(y) for y in numbers])
    want = clf.score(texts, numbers)
    assert want > 0.9
    for y in ([int(v) for v in numbers], np.array(numbers, dtype=float),
              [v == "1" for v in numbers]):
        assert clf.score(texts, y) == want
        assert fitted.score(texts, y) == fitted.score(texts, [int(v) for v in numbers])


@pytest.mark.parametrize("labels", [
    [np.str_("pos"), "neg", "pos", np.str_("neg")],     # drawn with rng.choice beside literals
    [np.int64(1), 0, 1, np.int64(0)], [np.float32(1.0), 0.0, 1.0, np.float64(0.0)],
    [np.bool_(True), False, True, np.False_]])
def test_numpy_scalars_are_their_python_values(labels):
    # scikit-learn takes them: they were refused as "give the labels one type"
    texts, polarity = _data()
    # each class as a NumPy scalar and as a Python value, in turn (labels[0] / [2]: one
    # class, labels[1] / [3] the other)
    y = [labels[2 * (i % 2) + (p != "pos")] for i, p in enumerate(polarity)]
    clf = NBSVMClassifier(n_bits=14).fit(texts, y)
    assert len(clf.classes_) == 2
    plain = [v.item() if isinstance(v, np.generic) else v for v in y]
    assert clf.score(texts, y) == clf.score(texts, plain) > 0.9


def test_a_number_written_two_ways_among_string_labels_is_refused_as_on_the_command_line():
    """fit took '1' and '1.0' (or '+1' and '1') as two classes, where the command line
    refuses them in a file: a model trained in Python could not be evaluated on its own
    data. '01' stays a name, as on the command line."""
    import re
    texts = [f"good film {i}" for i in range(20)]
    for a, b in (("1", "1.0"), ("+1", "1"), ("-0", "0")):
        said = f"y holds '{a}' and '{b}' (y[1]), the same number written two ways"
        with pytest.raises(NBSVMError, match=re.escape(said)):
            NBSVMClassifier(n_bits=12).fit(texts, [a, b] * 10)
    model = NBSVMClassifier(n_bits=12).fit(texts, ["1", "01"] * 10)
    assert list(model.classes_) == ["01", "1"]
