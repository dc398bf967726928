"""NBSVMClassifier and NBFeatures inside scikit-learn (issue 7, item 1), and pandas input.

scikit-learn is a test-only dependency: nbsvm never imports it unless scikit-learn itself
asks for tags, which is checked in a fresh interpreter.
"""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import synthetic
from nbsvm import NBSVMClassifier, NBSVMError
from nbsvm.models.transform import NBFeatures

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone                               # noqa: E402
from sklearn.linear_model import LogisticRegression          # noqa: E402
from sklearn.model_selection import GridSearchCV             # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline         # noqa: E402
from sklearn.preprocessing import FunctionTransformer        # noqa: E402

DOCS = synthetic(900, seed=1)
TEXTS = [d.text for d in DOCS]
LABELS = [d.label for d in DOCS]


def _lower(texts):
    return [t.lower() for t in texts]


@pytest.mark.parametrize("est", [NBSVMClassifier(n_bits=14, epochs=2, beta=0.5),
                                 NBFeatures(ngrams=2, n_bits=12, min_df=2)],
                         ids=["NBSVMClassifier", "NBFeatures"])
def test_clone_and_params_round_trip(est):
    params = est.get_params()
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert type(est)().set_params(**params).get_params() == params
    with pytest.raises(NBSVMError, match="unknown parameter 'bogus'; allowed: "):
        est.set_params(bogus=1)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_grid_search_over_a_pipeline_keeps_integer_labels():
    y = np.array([1 if label == "pos" else 0 for label in LABELS])
    pipe = Pipeline([("lower", FunctionTransformer(_lower)),
                     ("nbsvm", NBSVMClassifier(n_bits=14, epochs=2))])
    grid = {"nbsvm__ngrams": [1, 2], "nbsvm__beta": [0.5, 1.0]}
    search = GridSearchCV(pipe, grid, cv=3, scoring="accuracy", error_score="raise")
    search.fit(TEXTS[:600], y[:600])
    scores = search.cv_results_["mean_test_score"]
    assert len(scores) == 4 and np.isfinite(scores).all() and scores.max() > 0.75
    assert search.best_params_ in [dict(nbsvm__ngrams=n, nbsvm__beta=b)
                                   for n in (1, 2) for b in (0.5, 1.0)]
    predicted = search.predict(TEXTS[600:])
    assert predicted.dtype.kind == "i" and set(predicted) <= {0, 1}    # ints in, ints out
    assert search.score(TEXTS[600:], y[600:]) > 0.75


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_cross_val_predict_and_stacking_read_classes_shape():
    """classes_ had no .shape: cross_val_predict(method='predict_proba') and
    StackingClassifier raised AttributeError inside scikit-learn."""
    from sklearn.ensemble import StackingClassifier
    from sklearn.model_selection import cross_val_predict

    X, y = TEXTS[:300], np.array(LABELS[:300])
    est = NBSVMClassifier(n_bits=14, epochs=2)
    proba = cross_val_predict(est, X, y, cv=3, method="predict_proba")
    assert proba.shape == (300, 2) and np.allclose(proba.sum(axis=1), 1)
    scores = cross_val_predict(est, X, y, cv=3, method="decision_function")
    assert scores.shape == (300,) and np.mean((scores > 0) == (y == "pos")) > 0.75
    stack = StackingClassifier([("a", est), ("b", NBSVMClassifier(n_bits=14, ngrams=1))],
                               final_estimator=LogisticRegression(), cv=3).fit(X, y)
    assert stack.score(TEXTS[300:600], LABELS[300:600]) > 0.75


def test_dataframe_series_and_column_names():
    df = pd.DataFrame({"review": TEXTS, "sentiment": LABELS})
    a = NBSVMClassifier(n_bits=14, epochs=2).fit(df, "sentiment", text_col="review")
    b = NBSVMClassifier(n_bits=14, epochs=2).fit(df["review"], df["sentiment"])
    c = NBSVMClassifier(n_bits=14, epochs=2).fit(df[["review"]], df["sentiment"].to_numpy())
    for m in (b, c):
        assert np.array_equal(a.coef_, m.coef_)
    assert a.score(df, text_col="review", label_col="sentiment") == \
        b.score(TEXTS, LABELS)
    assert list(a.predict(df, text_col="review")) == list(b.predict(TEXTS))
    with pytest.raises(NBSVMError, match=r"no text column 'text' in the DataFrame; it has "
                                         r"\['review', 'sentiment'\]"):
        NBSVMClassifier(n_bits=14).fit(df, "sentiment")
    with pytest.raises(NBSVMError, match="no label column 'label'"):
        NBSVMClassifier(n_bits=14).fit(df, text_col="review")
    with pytest.raises(NBSVMError, match="X has 900 documents but y has 3 labels"):
        NBSVMClassifier(n_bits=14).fit(TEXTS, LABELS[:3])
    # several text columns with a missing cell: a TypeError (pandas 3), or the word 'nan'
    # among the features (pandas 2)
    two = pd.DataFrame({"title": ["a", None, "c"], "body": ["x", "y", "z"], "label": LABELS[:3]})
    with pytest.raises(NBSVMError, match=r"X\[1\] has no text in column 'title'"):
        NBSVMClassifier(n_bits=14).fit(two, text_col=["title", "body"])


def test_nbfeatures_values_are_the_nb_ratios_of_each_present_bucket():
    nb = NBFeatures(ngrams=2, n_bits=16, min_df=1)
    F = nb.fit_transform(TEXTS, LABELS)
    # the classifier's tokenizer and its character n-gram rule: the same features
    clf = NBSVMClassifier(ngrams=2, n_bits=16, min_df=1, epochs=1).fit(TEXTS, LABELS)
    assert nb.hasher_ == clf.hasher_ and nb.char_ngrams_ == clf.char_ngrams_ == 4
    assert np.array_equal(nb.ratios_[0], clf.ratios_[0, nb.buckets_].astype(np.float64))
    for i in range(0, 900, 97):                     # against the reference hasher
        cols = nb.column_of_[nb.hasher_.reference_buckets(TEXTS[i])]
        cols = cols[cols >= 0]
        expected = np.zeros(F.shape[1])
        expected[cols] = nb.ratios_[0, cols]
        assert np.array_equal(F[i].toarray()[0], expected)
    # min_df drops rare buckets, binary_values gives 1s
    nb2 = NBFeatures(ngrams=2, n_bits=16, min_df=3, binary_values=True).fit(TEXTS, LABELS)
    assert nb2.buckets_.size < nb.buckets_.size
    assert set(np.unique(nb2.transform(TEXTS[:50]).data)) == {1.0}
    assert len(nb.get_feature_names_out()) == F.shape[1]


def test_nbfeatures_of_text_without_spaces_are_the_classifiers():
    """NBFeatures tokenized as Hasher() does, without split_scripts: a Chinese review was
    one token, seen once, so transform gave documents no feature and a scikit-learn model
    on them 50% (the classifier 95%)."""
    from nbsvm.io.readers import read_inputs

    docs = list(read_inputs(["data/zh_reviews.txt"]))
    texts, labels = [d.text for d in docs], [d.label for d in docs]
    nb = NBFeatures(ngrams=2, n_bits=16).fit(texts, labels)
    clf = NBSVMClassifier(ngrams=2, n_bits=16, min_df=1, epochs=1).fit(texts, labels)
    assert nb.hasher_ == clf.hasher_ and nb.hasher_.split_scripts
    assert np.array_equal(nb.ratios_[0], clf.ratios_[0, nb.buckets_].astype(np.float64))
    assert nb.transform(["这部电影很好看", "服务太差了"]).getnnz(axis=1).min() > 3


def test_nbfeatures_with_a_scikit_learn_classifier_and_several_classes():
    pipe = make_pipeline(NBFeatures(ngrams=2, n_bits=16), LogisticRegression(max_iter=1000))
    pipe.fit(TEXTS[:700], LABELS[:700])
    assert pipe.score(TEXTS[700:], LABELS[700:]) > 0.85
    docs = synthetic(600, n_classes=3, seed=2)
    nb = NBFeatures(ngrams=1, n_bits=12).fit([d.text for d in docs], [d.label for d in docs])
    F = nb.transform([d.text for d in docs])
    assert F.shape == (600, 3 * nb.buckets_.size)       # one block of ratios per class
    names = nb.get_feature_names_out()
    assert names[0].startswith(f"{nb.classes_[0]}:bucket_")
    with pytest.raises(NBSVMError, match="not fitted"):
        NBFeatures().transform(["x"])


def test_nbfeatures_refuses_a_parameter_changed_since_fit():
    """set_params(ngrams=1) after fit left the fitted bigram hasher and ratios in place:
    transform gave the old features, silently. binary_values acts in transform: allowed."""
    nb = NBFeatures(ngrams=2, n_bits=12).fit(TEXTS[:200], LABELS[:200])
    before = nb.transform(TEXTS[:5])
    nb.set_params(binary_values=True)
    assert np.array_equal(nb.transform(TEXTS[:5]).toarray(), before.toarray() != 0)
    for change in (dict(ngrams=1), dict(n_bits=14), dict(min_df=2), dict(alpha=0.5)):
        moved = clone(nb).fit(TEXTS[:200], LABELS[:200]).set_params(**change)
        (name, value), = change.items()
        with pytest.raises(NBSVMError, match=f"changed since fit: {name} \\(.* at fit, "
                                             f"{value!r} now\\); fit again"):
            moved.transform(TEXTS[:5])
        assert moved.fit(TEXTS[:200], LABELS[:200]).transform(TEXTS[:5]).shape[0] == 5


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_importing_and_fitting_does_not_import_sklearn():
    code = ("import sys\nfrom nbsvm import NBSVMClassifier\nfrom nbsvm.models.transform import NBFeatures\n"
            "NBSVMClassifier(n_bits=10, epochs=1).fit(['good', 'bad'], ['p', 'n'])\n"
            "NBFeatures(n_bits=10).fit(['good', 'bad'], ['p', 'n'])\n"
            "assert 'sklearn' not in sys.modules, 'sklearn was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_one_parameter_protocol_and_one_not_fitted_error():
    """Every estimator's parameters are the arguments of its __init__ (read from the
    signature, no list kept beside it), and every one raises the same not-fitted error:
    an NBSVMError that scikit-learn's check_is_fitted users catch as theirs."""
    import inspect
    from sklearn.exceptions import NotFittedError as SkNotFittedError
    from nbsvm.errors import NotFittedError
    from nbsvm.learners.registry import make_learner
    for est in (NBSVMClassifier(), NBFeatures(), make_learner("pa")):
        names = [p for p in inspect.signature(type(est).__init__).parameters if p != "self"]
        assert list(est.get_params()) == names, type(est).__name__
        with pytest.raises(NBSVMError, match="unknown parameter 'bogus'; allowed: "):
            est.set_params(bogus=1)
    for call in (lambda: NBSVMClassifier().predict(["x"]),
                 lambda: NBFeatures().transform(["x"]),
                 lambda: make_learner("pa").predict(np.eye(2))):
        with pytest.raises(NotFittedError, match="is not fitted yet") as e:
            call()
        assert isinstance(e.value, SkNotFittedError) and isinstance(e.value, NBSVMError)
