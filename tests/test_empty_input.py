"""Empty in, empty out: a batch of no texts gives no predictions, of the shape a batch of one
would have with no rows, for every model kind (binary log, hinge, multi-class, multi-label,
a backend learner, calibrated) and every prediction method, in Python and through the real
server over HTTP (with and without top_k / threshold). A method that refuses a model (no
probabilities from hinge) refuses the empty batch with the same message. Before the fix,
hinge, multi-label and backend models failed with ``ValueError: cannot reshape array of
size 0`` (500 over HTTP)."""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.datasets import fixture
from nbsvm.errors import NBSVMError

from conftest import synthetic

NBSVM_BIN = [sys.executable, "-m", "nbsvm"]


def _lines(name: str):
    rows = [line.split("\t", 1) for line in
            fixture(name).read_text(encoding="utf-8").splitlines() if "\t" in line]
    return [t for _, t in rows], [label for label, _ in rows]


def _train(kind: str) -> NBSVMClassifier:
    """The small models of ``data/``, one per kind, as ``nbsvm train`` makes them."""
    if kind == "calibrated":            # calibration holds out a tenth: more documents
        docs = synthetic(300, n_classes=3, seed=1)
        return NBSVMClassifier(n_bits=14, seed=0, loss="hinge", calibrate="sigmoid").fit(
            [d.text for d in docs], [d.label for d in docs])
    file, params = {"binary": ("reviews.txt", {}), "hinge": ("reviews.txt", {"loss": "hinge"}),
                    "multiclass": ("topics.txt", {}),
                    "multilabel": ("tags.txt", {"multilabel": True}),
                    "backend": ("topics.txt", {"learner": "pa"})}[kind]
    X, y = _lines(file)
    if params.get("multilabel"):
        y = [label.split(",") for label in y]
    return NBSVMClassifier(n_bits=16, seed=0, **params).fit(X, y)


KINDS = ["binary", "hinge", "multiclass", "multilabel", "backend", "calibrated"]


@pytest.fixture(scope="module")
def models():
    return {kind: _train(kind) for kind in KINDS}


def _threshold(model) -> float:
    """A valid threshold: a probability, or a score for models without probabilities."""
    return 0.2 if model.has_proba() else 0.0


# every prediction method of NBSVMClassifier, and what the server builds its answers with
METHODS = {
    "decision_function": lambda m, X: m.decision_function(X),
    "predict": lambda m, X: m.predict(X),
    "predict_proba": lambda m, X: m.predict_proba(X),
    "predict_label_sets": lambda m, X: m.predict_label_sets(X),
    "predict_top_k": lambda m, X: m.predict_top_k(X),
    "predict_top_k(k=2, threshold)": lambda m, X: m.predict_top_k(X, 2, _threshold(m)),
    "labels_of": lambda m, X: m.labels_of(m.decision_function(X)),
    "label_mask": lambda m, X: m.label_mask(m.decision_function(X)),
    "proba_of": lambda m, X: m.proba_of(m.decision_function(X)),
    "class_values": lambda m, X: m.class_values(m.decision_function(X))[0],
    "top_k_of": lambda m, X: m.top_k_of(m.decision_function(X), 2, _threshold(m))[0],
    "serve.predictions": lambda m, X: _predictions(m, X),
    "serve.predictions(top_k, threshold)": lambda m, X: _predictions(m, X, 2, _threshold(m)),
}


def _predictions(model, X, top_k=None, threshold=None):
    from nbsvm.serve.scoring import predictions
    return predictions(model, list(X), top_k, threshold)


def _outcome(method, model, X):
    try:
        return method(model, X), None
    except NBSVMError as e:
        return None, str(e)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_empty_batch_gives_empty_answer_of_the_right_shape(models, kind, method):
    model, fn = models[kind], METHODS[method]
    one, one_error = _outcome(fn, model, ["a good film about food and sports"])
    for empty_input in ([], pd.DataFrame({"text": pd.Series([], dtype=object)})):
        if method.startswith("serve.") and not isinstance(empty_input, list):
            continue                    # the server's function takes a list of texts
        empty, error = _outcome(fn, model, empty_input)
        assert error == one_error       # refused alike (no probabilities), or answered
        if one_error is not None:
            continue
        if isinstance(one, np.ndarray):
            assert isinstance(empty, np.ndarray) and empty.shape == (0, *one.shape[1:])
        else:
            assert empty == []


def test_empty_shapes_spelled_out(models):
    """The shapes themselves, for the kinds that failed before."""
    assert models["hinge"].decision_function([]).shape == (0,)
    assert models["hinge"].predict_top_k([], 2, 0.0) == []
    ml = models["multilabel"]
    assert ml.predict([]).shape == (0, 4) and ml.predict([]).dtype == np.int64
    assert ml.predict_proba([]).shape == (0, 4) and ml.predict_label_sets([]) == []
    assert models["backend"].decision_function([]).shape == (0, 3)
    assert models["backend"].predict([]).shape == (0,)
    assert models["calibrated"].predict_proba([]).shape == (0, 3)


# ---- over HTTP ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    pytest.importorskip("fastapi")
    from test_serve import Server

    folder = tmp_path_factory.mktemp("empty_serve")
    specs = []
    for kind, model in models.items():
        model.save(folder / f"{kind}.npz")
        specs.append(f"{kind}={folder / kind}.npz")
    server = Server(*specs, log=folder / "server.log")
    yield server
    log = server.stop()
    assert "Traceback" not in log, log


@pytest.mark.parametrize("extra", [{}, {"top_k": 2}, {"threshold": None},
                                   {"top_k": 1, "threshold": None}],
                         ids=["plain", "top_k", "threshold", "top_k+threshold"])
@pytest.mark.parametrize("kind", KINDS)
def test_empty_batch_over_http(models, server, kind, extra):
    from test_serve import http  # one client: httpx.post() builds a TLS context each time

    if "threshold" in extra:
        extra = dict(extra, threshold=_threshold(models[kind]))
    for path, body in (("/predict", {"model": kind}), (f"/models/{kind}/predict", {})):
        r = http.post(server.url + path, json=dict(body, texts=[], **extra), timeout=30)
        assert r.status_code == 200, r.text
        assert r.json() == {"model": kind, "version": 1, "predictions": []}
        one = http.post(server.url + path, json=dict(body, texts=["good food"], **extra),
                        timeout=30)
        assert one.status_code == 200 and len(one.json()["predictions"]) == 1


def test_empty_batch_still_checks_the_threshold_over_http(server):
    """An empty batch is no way around the checks: a probability threshold of 7 is 422."""
    from test_serve import http

    r = http.post(server.url + "/predict", json={"texts": [], "model": "binary",
                                                   "threshold": 7}, timeout=30)
    assert r.status_code == 422 and "between 0 and 1" in r.text


# ---- nbsvm predict --------------------------------------------------------------------------

@pytest.mark.parametrize("kind, options", [("binary", []), ("multilabel", ["--top-k", "2"]),
                                           ("backend", ["--top-k", "2"])])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_predict_cli_on_an_empty_file_is_one_clean_line(models, tmp_path, kind, options):
    """``nbsvm predict`` on an empty file says so in one line (exit 2), no traceback, for
    the kinds whose Python API failed on empty input."""
    path = tmp_path / f"{kind}.npz"
    models[kind].save(path)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    r = subprocess.run([*NBSVM_BIN, "predict", str(empty), "-m", str(path), *options, "-q"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "no documents" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


@pytest.mark.parametrize("method", ["sigmoid", "isotonic", "temperature"])
def test_the_calibrator_maps_an_empty_batch(method):
    """``Calibrator.probabilities([])`` is ``(0, K)`` like any batch (it was unshapeable)."""
    from nbsvm.learners.calibrator import Calibrator
    rng = np.random.default_rng(0)
    for k in (1, 3):
        scores = rng.normal(size=(40, k))
        truth = np.eye(max(k, 2))[rng.integers(0, max(k, 2), 40)][:, -k:]
        cal = Calibrator(method).fit(scores, truth)
        one = cal.probabilities(scores[:1])
        for empty in ([], np.zeros((0, k))):
            out = cal.probabilities(empty)
            assert out.shape == (0, one.shape[1]) and out.dtype == one.dtype


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel", "keep_counts"])
def test_min_df_above_every_bucket_is_an_error_not_a_prior_only_model(task, tmp_path):
    """It used to save a model of 0 buckets that predicted the prior whatever the text."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data"
    name = {"multiclass": "topics.txt", "multilabel": "tags.txt"}.get(task, "reviews.txt")
    pairs = [line.split("\t", 1) for line in (data / name).read_text().splitlines()]
    X = [t for _, t in pairs]
    y = [lab.split(",") if task == "multilabel" else lab for lab, _ in pairs]
    clf = NBSVMClassifier(n_bits=16, min_df=1000, multilabel=task == "multilabel",
                          keep_counts=task == "keep_counts")
    with pytest.raises(NBSVMError, match=r"no n-gram is kept: min_df=1000 .* buckets seen"):
        clf.fit(X, y)
    assert NBSVMClassifier(n_bits=16, min_df=2, multilabel=task == "multilabel").fit(X, y)


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_documents_that_are_all_empty_are_an_error_not_a_prior_only_model(task, tmp_path):
    """Documents without a word (the text in another column, say) trained a model of the
    class prior alone, saved without a word (a helper's hunt)."""
    y = {"binary": ["pos", "neg"] * 3, "multiclass": ["a", "b", "c"] * 2,
         "multilabel": [["a"], ["a", "b"], ["b"]] * 2}[task]
    clf = NBSVMClassifier(n_bits=12, multilabel=task == "multilabel")
    with pytest.raises(NBSVMError, match="every document is empty"):
        clf.fit(["", " ", "\t", "", "  ", ""], y)
    if task != "binary":
        return
    f = tmp_path / "e.txt"
    f.write_text("pos\t \nneg\t\npos\t \nneg\t \n")
    from typer.testing import CliRunner

    from nbsvm.cli import app
    r = CliRunner().invoke(app, ["train", str(f), "-o", str(tmp_path / "m.npz")])
    assert r.exit_code == 2 and "every document is empty" in r.stderr, r.output
    assert not (tmp_path / "m.npz").exists()


def test_holding_out_almost_every_document_still_trains_each_class():
    """validation_fraction 0.99 held out every document ('/tmp/nbsvm-cache-XXXX/train: no
    training documents', then 'no training documents: validation_fraction 0.99'); each
    class's first document now trains."""
    X = [f"doc {i} good" if i % 2 else f"doc {i} bad" for i in range(40)]
    y = ["pos" if i % 2 else "neg" for i in range(40)]
    clf = NBSVMClassifier(n_bits=12, early_stopping=True, validation_fraction=0.99).fit(X, y)
    assert 2 <= clf.n_docs_ <= 4 and clf.n_docs_ + clf.validation_["held_out"] == 40


def test_predict_of_a_learn_model_on_an_empty_file_is_refused_as_text_is(tmp_path):
    """A learn model wrote a 0-byte file (no header) for an empty input, exit 0."""
    from nbsvm.learners import SGDClassifier
    from nbsvm.evaluation.sparse import predict_sparse
    from nbsvm.errors import NBSVMError

    model = SGDClassifier(epochs=1).fit(np.eye(3), [0, 1, 0])
    model.format_, model.n_bits_, model.hash_seed_, model.index_base_ = "svmlight", 0, 0, 0
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    with pytest.raises(NBSVMError, match="empty.svm: no examples found"):
        list(predict_sparse(model, empty, fmt="svmlight"))
