"""Class weights (issue 18, item 3): the weighted steps of every kernel against the plain
references in naive.py, 'balanced' against scikit-learn's formula, the NB lexicon left
alone, and ``train --class-weight`` on real IMDB reviews."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from naive import naive_adagrad_epoch, naive_multiclass_epoch, naive_sgd_epoch, rel_gap
from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.learners.sgd import LinearSGD
from nbsvm.models.learner_setup import class_weights, output_weights
from testhelpers import random_rows
from test_online import make_problem, new_learner, ys_of

NBSVM = Path(sys.executable).parent / "nbsvm"
TOL = 1e-5


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
@pytest.mark.parametrize("loss", ["hinge", "log", "modified_huber"])
def test_weighted_binary_steps_equal_naive(optimizer, loss):
    docs, ids, offsets, codes, table, order = make_problem(seed=3)
    pos_w, neg_w = 4.0, 0.5
    m = new_learner(16, [table], loss=loss, optimizer=optimizer, eta0=0.2, lam=0.01,
                    class_weight=np.array([[pos_w, neg_w]]))
    ys = ys_of(codes, 1)
    weights = [pos_w if y > 0 else neg_w for y in ys]
    mean = m.epoch(ids, offsets, codes, order, positive=[1])
    if optimizer == "sgd":
        w, b, _, total = naive_sgd_epoch(docs, ys, order, table, [0.0] * 16, 0.0, 0, 0.2, 0.01,
                                         loss, weights=weights)
        plain = naive_sgd_epoch(docs, ys, order, table, [0.0] * 16, 0.0, 0, 0.2, 0.01, loss)[0]
    else:
        w, _, b, _, total = naive_adagrad_epoch(docs, ys, order, table, [0.0] * 16, [0.0] * 16,
                                                0.0, 0.0, 0.2, 0.01, loss, f32=True,
                                                weights=weights)
        plain = naive_adagrad_epoch(docs, ys, order, table, [0.0] * 16, [0.0] * 16, 0.0, 0.0,
                                    0.2, 0.01, loss, f32=True)[0]
    assert mean == pytest.approx(total / len(order), rel=TOL)
    assert rel_gap(m.coef()[0], w) <= TOL and rel_gap(m.intercept()[0], b) <= TOL
    assert rel_gap(w, plain) > 100 * TOL           # the weights changed the steps


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_weighted_multiclass_steps_equal_naive(optimizer):
    rng = np.random.default_rng(2)
    n, d, K = 50, 24, 3
    docs, ids, offsets = random_rows(rng, n, d, 7)
    codes = rng.integers(0, K, n).astype(np.int32)
    order = rng.permutation(n)
    cw = np.array([[3.0, 1.0], [0.5, 1.0], [1.5, 1.0]])     # output o's class weight in [o, 0]
    m = LinearSGD(d, n_outputs=K, loss="softmax", optimizer=optimizer, eta0=0.1, lam=1e-3,
                  class_weight=cw)
    m.tables[:] = rng.uniform(-2, 2, size=(K, d)).astype(np.float32)
    W, B, _, _, _, total = naive_multiclass_epoch(
        docs, codes, order, m.tables.astype(np.float64).tolist(), [[0.0] * d] * K, [0.0] * K,
        0.1, 1e-3, "softmax", optimizer, weights=cw[:, 0].tolist())
    mean = m.epoch(ids, offsets, codes, order, [0, 1, 2])
    assert mean == pytest.approx(total / n, rel=1e-5)
    np.testing.assert_allclose(m.coef(), np.array(W), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m.intercept(), B, rtol=1e-4, atol=1e-7)


def test_unit_weights_train_the_same_model_bit_for_bit():
    docs, ids, offsets, codes, table, order = make_problem(seed=4)
    a = new_learner(16, [table], loss="log", optimizer="adagrad", eta0=0.2, lam=0.01)
    b = new_learner(16, [table], loss="log", optimizer="adagrad", eta0=0.2, lam=0.01,
                    class_weight=np.ones((1, 2)))
    for m in (a, b):
        m.epoch(ids, offsets, codes, order, positive=[1])
    assert np.array_equal(a.S_, b.S_) and np.array_equal(a.state_, b.state_)


TEXTS = ["good fine great", "great good", "bad awful", "awful bad poor", "bad dull",
         "poor awful dull", "dull bad", "good fun", "awful poor", "bad poor dull"]
LABELS = ["pos", "pos", "neg", "neg", "neg", "neg", "neg", "pos", "neg", "neg"]


def test_balanced_is_scikit_learns_formula_and_the_lexicon_is_unaffected():
    from sklearn.utils.class_weight import compute_class_weight
    plain = NBSVMClassifier(ngrams=1, n_bits=10, epochs=3).fit(TEXTS, LABELS)
    clf = NBSVMClassifier(ngrams=1, n_bits=10, epochs=3, class_weight="balanced").fit(TEXTS,
                                                                                     LABELS)
    ref = compute_class_weight("balanced", classes=np.array(["neg", "pos"]), y=np.array(LABELS))
    assert np.allclose(class_weights(clf), ref)
    assert np.allclose(output_weights(clf), [[ref[1], ref[0]]])
    assert np.array_equal(clf.ratios_, plain.ratios_)          # NB lexicon unaffected
    assert not np.array_equal(clf.coef_, plain.coef_)
    three = NBSVMClassifier(ngrams=1, n_bits=10, epochs=2, class_weight={"b": 2.0}).fit(
        ["x y", "y z", "z x", "x x"], ["a", "b", "c", "a"])
    assert output_weights(three).tolist() == [[1.0, 1.0], [2.0, 1.0], [1.0, 1.0]]


def test_class_weight_survives_save_and_partial_fit(tmp_path):
    clf = NBSVMClassifier(ngrams=1, n_bits=10, epochs=2, class_weight={"pos": 3}).fit(TEXTS,
                                                                                     LABELS)
    clf.save(tmp_path / "m.npz")
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    assert back.class_weight == {"pos": 3} and back.linear_.class_weight.tolist() == [[3, 1]]
    with pytest.raises(NBSVMError, match="partial_fit does not see"):
        NBSVMClassifier(class_weight="balanced").partial_fit(TEXTS, LABELS, classes=["neg", "pos"])


@pytest.mark.parametrize("bad, message", [
    ({"pos": -1}, "positive weights"), ("balance", "'balanced'"), ({"maybe": 2}, "not a class"),
])
def test_bad_class_weights_say_what_is_allowed(bad, message):
    with pytest.raises(NBSVMError, match=message):
        NBSVMClassifier(ngrams=1, n_bits=10, class_weight=bad).fit(TEXTS, LABELS)
    with pytest.raises(NBSVMError, match="learner 'pa' does not take it"):
        NBSVMClassifier(class_weight="balanced", learner="pa").fit(TEXTS, LABELS)


@pytest.fixture(scope="module")
def imbalanced(imdb_slice, tmp_path_factory):
    """The IMDB slice with one positive review for nine negative ones (train and test)."""
    root = tmp_path_factory.mktemp("imbalanced")
    for split in ("train", "test"):
        with open(root / f"{split}.txt", "w", encoding="utf-8") as f:
            for label, keep in (("neg", 900), ("pos", 100)):
                for p in sorted((imdb_slice / split / label).glob("*.txt"))[:keep]:
                    text = p.read_text(encoding="utf-8").replace("\t", " ").replace("\n", " ")
                    f.write(f"{label}\t{text}\n")
    return root


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_cli_balanced_raises_minority_recall(imbalanced, tmp_path):
    def run(*extra):
        model = tmp_path / "m.npz"
        subprocess.run([str(NBSVM), "train", str(imbalanced / "train.txt"), "-o", str(model),
                        "--n-bits", "18", "-q", *extra], check=True, capture_output=True)
        return json.loads(subprocess.run([str(NBSVM), "eval", "-m", str(model),
                                          str(imbalanced / "test.txt"), "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    before, after = run(), run("--class-weight", "balanced")
    assert after["per_class"]["pos"]["recall"] > before["per_class"]["pos"]["recall"] + 0.1
    assert after["macro_f1"] > before["macro_f1"]
    bad = subprocess.run([str(NBSVM), "train", str(imbalanced / "train.txt"), "-o",
                          str(tmp_path / "x.npz"), "--class-weight", "pos:5"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "name=weight pairs" in bad.stderr
    from nbsvm.cli.common import parse_class_weight  # a name twice: the last one won
    with pytest.raises(NBSVMError, match="gives 'pos' twice"):
        parse_class_weight("pos=3,neg=1,pos=4")


def test_numpy_weights_and_dask_refusals():
    clf = NBSVMClassifier(ngrams=1, n_bits=10, epochs=2,
                          class_weight={"pos": np.int64(3)}).fit(TEXTS, LABELS)
    assert output_weights(clf).tolist() == [[3.0, 1.0]]
    from nbsvm.workflows import distributed
    for kw in (dict(calibrate="sigmoid"), dict(keep_counts=True), dict(early_stopping=True)):
        with pytest.raises(NBSVMError, match="cannot run on Dask"):
            distributed.fit(None, ["x.txt"], NBSVMClassifier(**kw))


def test_a_key_equal_to_a_class_names_it():
    """{1.0: 3} and {np.float64(1): 3} weigh the class fitted on 1, {1: 3} the class of
    1.0, as scikit-learn's dict lookup finds them (they were refused as unknown classes);
    the same model as the key written as the class is."""
    texts = ["a great film", "great fun", "an awful film", "dull fun"] * 5
    kw = dict(n_bits=10, min_df=1, char_ngrams=0, calibrate=None, epochs=2)
    for y, as_fitted, other in [([1, 1, 0, 0] * 5, {1: 3}, {1.0: 3}),
                                ([1, 1, 0, 0] * 5, {1: 3}, {np.float64(1.0): 3}),
                                ([1.0, 1.0, 0.0, 0.0] * 5, {1.0: 3}, {1: 3})]:
        a = NBSVMClassifier(class_weight=as_fitted, **kw).fit(texts, y)
        b = NBSVMClassifier(class_weight=other, **kw).fit(texts, y)
        assert np.array_equal(a.coef_, b.coef_) and a.log_prior(0) == b.log_prior(0)
        assert not np.array_equal(a.coef_, NBSVMClassifier(**kw).fit(texts, y).coef_)
        b.set_params(class_weight=as_fitted)  # the same weights: still the fitted model's
        b.predict(texts)


def test_multilabel_prior_weighed_as_one_against_the_rest():
    """The same classes as single labels and as one-label sets train the same weights and
    ratios; with class_weight their NB priors (beta < 1) are weighed alike (the label sets'
    ignored it)."""
    texts = ["a great film", "great fun", "loved the cast", "a wonderful story", "great acting",
             "an awful film", "dull fun", "hated the cast", "a boring story", "awful acting"] * 4
    y = (["a"] * 3 + ["b"] * 4 + ["c"] * 3) * 4
    kw = dict(n_bits=10, min_df=1, char_ngrams=0, calibrate=None, epochs=3, optimizer="sgd",
              loss="modified_huber", eta0=0.1, norm="l2", alpha=0.5, beta=0.5,
              class_weight={"a": 5})
    single = NBSVMClassifier(**kw).fit(texts, y)
    sets = NBSVMClassifier(multilabel=True, **kw).fit(texts, [[v] for v in y])
    assert np.allclose(single.coef_, sets.coef_)
    assert [single.log_prior(k) for k in range(3)] == pytest.approx(
        [sets.log_prior(k) for k in range(3)], abs=1e-12)
    assert single.log_prior(0) > NBSVMClassifier(**dict(kw, class_weight=None)).fit(
        texts, y).log_prior(0)
    assert np.allclose(single.decision_function(texts), sets.decision_function(texts))
