"""docs/contributing.md's worked example: a learner is a class file and one registry line.
The perceptron of that page, written out as a module of its own and registered with one
``Algorithm`` line, trains through ``nbsvm learn``'s option path and ``make_learner``,
learns a separable problem, and saves and loads through the registry."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm.learners import registry
from nbsvm.learners.options import make_learner_from_options

PAGE = Path(__file__).resolve().parents[1] / "docs" / "contributing.md"


def _example() -> str:
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(r"<!-- learner-example -->\n```python\n(.*?)```", text, re.S)
    assert m, "docs/contributing.md lost its learner example"
    return m.group(1)


@pytest.fixture
def perceptron(tmp_path, monkeypatch):
    package = tmp_path / "my_learners"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "perceptron.py").write_text(_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.ALGORITHMS, "perceptron",
                        registry.Algorithm("my_learners.perceptron", "Perceptron"))
    yield
    sys.modules.pop("my_learners.perceptron", None)
    sys.modules.pop("my_learners", None)


def test_the_documented_perceptron_trains_saves_and_loads(perceptron, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    w = np.array([2.0, -1.0, 0.5, 0.0, 1.0])
    y = np.where(X @ w > 0, "pos", "neg")
    model = make_learner_from_options("perceptron", {"--epochs": 20, "--seed": 1})
    assert type(model).__name__ == "Perceptron" and model.epochs == 20
    model.fit(X, y)
    assert model.score(X, y) >= 0.97        # separable through the origin
    # the same as the update rule by hand, one pass in the seeded order
    one = registry.make_learner("perceptron", epochs=1, seed=0).partial_fit(
        X[:50], y[:50], order=np.arange(50))
    by_hand = np.zeros(5)
    for x, label in zip(X[:50], y[:50]):
        sign = 1.0 if label == "pos" else -1.0
        if sign * (by_hand @ x) <= 0.0:
            by_hand += sign * x
    assert np.allclose(one.coef_, by_hand)
    model.save(tmp_path / "p.npz")
    loaded = registry.learner_class("Perceptron").load(tmp_path / "p.npz")
    assert np.array_equal(loaded.coef_, model.coef_)
    assert list(loaded.predict(X[:20])) == list(model.predict(X[:20]))
