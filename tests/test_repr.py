"""Estimators print as scikit-learn's do (issue 18, item 7): only the parameters that differ
from their defaults, in a form that builds the same estimator again."""
import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.learners.registry import learner_class, learner_modules


@pytest.mark.parametrize("params, shown", [
    ({}, "NBSVMClassifier()"),
    ({"ngrams": 2}, "NBSVMClassifier(ngrams=2)"),
    ({"ngrams": 3, "alpha": None, "lam": 1e-5}, "NBSVMClassifier(lam=1e-05)"),  # defaults
    ({"alpha": 1}, "NBSVMClassifier(alpha=1)"),          # None (by the classes) is the default
    ({"seed": np.int64(0), "auto": True}, "NBSVMClassifier(auto=True)"),
    ({"multilabel": 0}, "NBSVMClassifier(multilabel=0)"),                     # 0 is not False
])
def test_nbsvm_prints_what_differs(params, shown):
    clf = NBSVMClassifier(**params)
    assert repr(clf) == shown
    again = eval(repr(clf), {"NBSVMClassifier": NBSVMClassifier})
    assert {k: v for k, v in again.get_params().items()} == \
        {k: (int(v) if isinstance(v, np.integer) else v) for k, v in clf.get_params().items()}


def test_every_backend_learner_prints_as_built():
    for name in learner_modules():
        cls = learner_class(name)
        try:
            m = cls()
        except TypeError:               # a reduction needs its base learner
            continue
        assert repr(m) == f"{cls.__name__}()", name
        rebuilt = eval(repr(m), {cls.__name__: cls})
        assert rebuilt.get_params() == m.get_params()


def test_sklearn_prints_a_pipeline_of_them():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.pipeline import make_pipeline
    from sklearn.base import clone
    clf = NBSVMClassifier(ngrams=2, n_bits=18)
    assert repr(clone(clf)) == "NBSVMClassifier(n_bits=18, ngrams=2)" or \
        repr(clone(clf)) == "NBSVMClassifier(ngrams=2, n_bits=18)"
    assert "NBSVMClassifier(ngrams=2, n_bits=18)" in repr(make_pipeline(clf))
