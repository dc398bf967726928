"""Labels given to fit as numbers keep their text order in classes_ (see the warning's
test); scikit-learn's metrics order them by value."""
from pathlib import Path

import pytest

from nbsvm import NBSVMClassifier

REVIEWS = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"


def _data():
    lines = REVIEWS.read_text(encoding="utf-8").splitlines()
    return [l.split("\t", 1)[1] for l in lines], [l.split("\t", 1)[0] for l in lines]


def test_numeric_labels_that_order_otherwise_as_text_are_warned_about():
    """classes_ follow the labels' text order ('10' before '2'); scikit-learn's metrics
    order them by value and read the score columns as the other class's (a ROC AUC of
    1 - AUC): until the order follows the values, fit says so."""
    X, y = _data()
    numbers = [10 if label == "pos" else 2 for label in y]
    with pytest.warns(UserWarning, match=r"ordered as text in classes_ \(10, 2\)"):
        model = NBSVMClassifier(n_bits=16).fit(X, numbers)
    assert list(model.classes_) == ["10", "2"] and model.predict(X[:1]).tolist() == [numbers[0]]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NBSVMClassifier(n_bits=16).fit(X, [1 if label == "pos" else -1 for label in y])
        NBSVMClassifier(n_bits=16).fit(X, y)
