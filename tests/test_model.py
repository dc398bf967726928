"""NBSVMClassifier: fitting, scores, interpolation, persistence and broken model files."""
import math

import numpy as np
import pytest

import nbsvm.persist as persist
from nbsvm import NBLexicon, NBSVMClassifier, NBSVMError
from nbsvm.io.readers import Document
from nbsvm.text.hashing import Hasher

from naive import naive_adagrad_epoch, naive_buckets, naive_ratios, naive_sgd_epoch

POS = ["a great film, loved it", "great fun and a great cast", "loved the music!",
       "wonderful, moving and great", "a fun, touching story", "superb acting, loved it"]
NEG = ["an awful film", "awful, dull and boring", "the cast was dull", "boring; awful plot",
       "a dull, lifeless mess"]
TEXTS = POS + NEG
LABELS = ["pos"] * len(POS) + ["neg"] * len(NEG)

THREE_TEXTS = ["great film loved it", "great great fun", "loved it, fun", "wonderful story",
               "awful dull film", "boring awful", "dull mess",
               "the film was okay", "okay, not great not awful", "fine okay film", "okay okay"]
THREE_LABELS = ["pos"] * 4 + ["neg"] * 3 + ["mid"] * 4

NEW = ["great fun", "awful and dull", "okay film, loved the music", "never seen words",
       "", "Great FUN!!"]


def _x(text, clf):
    """Distinct buckets of ``text`` for ``clf`` (computed with the mmh3 reference)."""
    h = clf.hasher_
    return naive_buckets(text, h.ngrams, h.n_bits, h.seed, h.char_ngrams)


def _linear(clf, text, k=0):
    ids = _x(text, clf)
    return sum(float(clf.coef_[k, i]) * float(clf.ratios_[k, i]) for i in ids) + \
        float(clf.intercept_[k])


@pytest.fixture(scope="module")
def binary_clf():
    return NBSVMClassifier(ngrams=2, n_bits=10, epochs=8, eta0=0.5, l2=1e-4).fit(TEXTS, LABELS)


@pytest.fixture(scope="module")
def three_clf():
    return NBSVMClassifier(ngrams=2, n_bits=10, epochs=8, eta0=0.5, l2=1e-4).fit(
        THREE_TEXTS, THREE_LABELS)


def test_fit_predict_binary(binary_clf):
    clf = binary_clf
    assert clf.classes_ == ["neg", "pos"]
    assert clf.class_counts_.tolist() == [len(NEG), len(POS)]
    assert clf.n_docs_ == len(TEXTS)
    assert clf.predict(TEXTS).tolist() == LABELS
    assert clf.score(TEXTS, LABELS) == 1.0
    assert clf.predict(["great, loved it", "awful, dull"]).tolist() == ["pos", "neg"]


def test_ratios_are_the_naive_nb_ratios(binary_clf):
    docs = [naive_buckets(t, 2, 10) for t in TEXTS]
    classes, ref = naive_ratios(docs, LABELS, 1 << 10)
    np.testing.assert_allclose(binary_clf.ratios_, np.array(ref), rtol=1e-6, atol=1e-6)


def test_decision_function_is_w_dot_r_plus_b(binary_clf):
    clf = binary_clf
    s = clf.decision_function(NEW)
    assert s.shape == (len(NEW),)
    for text, v in zip(NEW, s):
        assert v == pytest.approx(_linear(clf, text), rel=1e-12, abs=1e-12)
    assert s[3] == pytest.approx(clf.intercept_[0])           # unseen words: only the bias
    assert clf.predict(NEW).tolist() == [("pos" if v > 0 else "neg") for v in s]


def test_predict_proba_is_sigmoid_of_scores(binary_clf):
    s = binary_clf.decision_function(NEW)
    p = binary_clf.predict_proba(NEW)
    assert p.shape == (len(NEW), 2)
    np.testing.assert_allclose(p[:, 1], 1 / (1 + np.exp(-s)), rtol=1e-12)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)


def test_training_equals_naive_sgd_over_seeded_shuffles():
    """Without a lexicon every epoch visits a fresh rng.permutation(n) from default_rng(seed)."""
    clf = NBSVMClassifier(ngrams=1, n_bits=8, epochs=3, eta0=0.3, l2=1e-2, loss="hinge",
                          optimizer="sgd", seed=7).fit(TEXTS, LABELS)
    docs = [naive_buckets(t, 1, 8) for t in TEXTS]
    ys = [1.0 if l == "pos" else -1.0 for l in LABELS]
    rng = np.random.default_rng(7)
    w, b, t = [0.0] * 256, 0.0, 0
    for _ in range(3):
        order = rng.permutation(len(TEXTS))
        w, b, t, _ = naive_sgd_epoch(docs, ys, order, clf.ratios_[0], w, b, t, 0.3, 1e-2, "hinge")
    np.testing.assert_allclose(clf.coef_[0], w, rtol=1e-10, atol=1e-12)
    assert clf.intercept_[0] == pytest.approx(b, rel=1e-10, abs=1e-14)


def test_adagrad_training_equals_naive_adagrad_over_seeded_shuffles():
    clf = NBSVMClassifier(ngrams=2, n_bits=8, epochs=3, eta0=0.1, l2=1e-3, loss="log",
                          optimizer="adagrad", seed=11).fit(TEXTS, LABELS)
    docs = [naive_buckets(t, 2, 8) for t in TEXTS]
    ys = [1.0 if l == "pos" else -1.0 for l in LABELS]
    rng = np.random.default_rng(11)
    w, G, b, Gb = [0.0] * 256, [0.0] * 256, 0.0, 0.0
    for _ in range(3):
        w, G, b, Gb, _ = naive_adagrad_epoch(docs, ys, rng.permutation(len(TEXTS)),
                                             clf.ratios_[0], w, G, b, Gb, 0.1, 1e-3, "log",
                                             round_G=np.float32)
    np.testing.assert_allclose(clf.coef_[0], w, rtol=1e-10, atol=1e-12)
    assert clf.intercept_[0] == pytest.approx(b, rel=1e-10, abs=1e-14)


def test_training_with_lexicon_streams_first_epoch_in_input_order():
    lex = NBLexicon(Hasher(ngrams=1, n_bits=8)).fit(TEXTS, LABELS)
    docs_in = [Document(l, t, "mem", i + 1) for i, (t, l) in enumerate(zip(TEXTS, LABELS))]
    clf = NBSVMClassifier(ngrams=1, n_bits=8, epochs=3, eta0=0.3, l2=1e-2, loss="log", seed=3,
                          optimizer="sgd")
    clf.fit_documents(iter(docs_in), lexicon=lex)
    np.testing.assert_array_equal(clf.ratios_, lex.ratios())
    docs = [naive_buckets(t, 1, 8) for t in TEXTS]
    ys = [1.0 if l == "pos" else -1.0 for l in LABELS]
    rng = np.random.default_rng(3)
    w, b, t, _ = naive_sgd_epoch(docs, ys, range(len(TEXTS)), clf.ratios_[0], [0.0] * 256,
                                 0.0, 0, 0.3, 1e-2, "log")
    for _ in range(2):
        w, b, t, _ = naive_sgd_epoch(docs, ys, rng.permutation(len(TEXTS)), clf.ratios_[0],
                                     w, b, t, 0.3, 1e-2, "log")
    np.testing.assert_allclose(clf.coef_[0], w, rtol=1e-10, atol=1e-12)


def test_lexicon_with_other_hasher_refused():
    lex = NBLexicon(Hasher(ngrams=1, n_bits=9)).fit(TEXTS, LABELS)
    clf = NBSVMClassifier(ngrams=1, n_bits=8)
    with pytest.raises(NBSVMError, match="lexicon was built with"):
        clf.fit_documents(iter([Document("pos", "x", "m", 1)]), lexicon=lex)


# -- interpolation ----------------------------------------------------------------------------

def test_interpolate_scores_hand_formula():
    beta = 0.6
    clf = NBSVMClassifier(ngrams=2, n_bits=10, epochs=4, eta0=0.5, beta=beta,
                          interpolate="scores").fit(TEXTS, LABELS)
    prior = math.log(len(POS) / len(NEG))
    s = clf.decision_function(NEW)
    for text, v in zip(NEW, s):
        nb = prior + sum(float(clf.ratios_[0, i]) for i in _x(text, clf))
        assert v == pytest.approx(beta * _linear(clf, text) + (1 - beta) * nb, rel=1e-12,
                                  abs=1e-12)
    # beta = 0: pure NB score
    clf.set_params(beta=0.0)
    assert clf.decision_function(["never seen words"])[0] == pytest.approx(prior, rel=1e-12)


def test_interpolate_weights_hand_formula():
    beta = 0.25
    clf = NBSVMClassifier(ngrams=2, n_bits=10, epochs=4, eta0=0.5, beta=beta,
                          interpolate="weights").fit(TEXTS, LABELS)
    seen = sorted({i for t in TEXTS for i in naive_buckets(t, 2, 10)})
    mean_abs = sum(abs(float(clf.coef_[0, i])) for i in seen) / len(seen)
    assert clf.mean_abs_coef_[0] == pytest.approx(mean_abs, rel=1e-12)
    s = clf.decision_function(NEW)
    for text, v in zip(NEW, s):
        ref = sum(((1 - beta) * mean_abs + beta * float(clf.coef_[0, i])) * float(clf.ratios_[0, i])
                  for i in _x(text, clf)) + float(clf.intercept_[0])
        assert v == pytest.approx(ref, rel=1e-12, abs=1e-12)


# -- multi-class ------------------------------------------------------------------------------

def test_three_classes(three_clf):
    clf = three_clf
    assert clf.classes_ == ["mid", "neg", "pos"]
    assert clf.ratios_.shape == (3, 1 << 10) and clf.coef_.shape == (3, 1 << 10)
    s = clf.decision_function(NEW)
    assert s.shape == (len(NEW), 3)
    for j, text in enumerate(NEW):
        for k in range(3):
            assert s[j, k] == pytest.approx(_linear(clf, text, k), rel=1e-12, abs=1e-12)
    pred = clf.predict(NEW)
    assert pred.tolist() == [clf.classes_[k] for k in np.argmax(s, axis=1)]
    assert clf.score(THREE_TEXTS, THREE_LABELS) >= 10 / 11
    p = clf.predict_proba(NEW)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    sig = 1 / (1 + np.exp(-s))
    np.testing.assert_allclose(p, sig / sig.sum(axis=1, keepdims=True), rtol=1e-12)


def test_three_classes_score_interpolation_prior():
    clf = NBSVMClassifier(ngrams=1, n_bits=9, epochs=2, beta=0.0).fit(THREE_TEXTS, THREE_LABELS)
    s = clf.decision_function(["never seen words"])[0]
    counts = {"mid": 4, "neg": 3, "pos": 4}
    exp = [math.log(counts[c] / (11 - counts[c])) for c in clf.classes_]
    np.testing.assert_allclose(s, exp, rtol=1e-12)


# -- persistence ------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(), dict(beta=0.5, interpolate="scores"),
                                dict(beta=0.3, interpolate="weights", loss="modified_huber"),
                                dict(optimizer="adagrad", char_ngrams=3, hash_seed=9)])
def test_save_load_bit_identical(tmp_path, kw):
    clf = NBSVMClassifier(ngrams=2, n_bits=11, epochs=3, **kw).fit(TEXTS, LABELS)
    path = tmp_path / "m.nbsvm"
    clf.save(path)
    back = NBSVMClassifier.load(path)
    assert np.array_equal(back.decision_function(NEW + TEXTS), clf.decision_function(NEW + TEXTS))
    assert back.get_params() == dict(clf.get_params(), cache_dir=None)
    assert back.classes_ == clf.classes_
    assert np.array_equal(back.class_counts_, clf.class_counts_)
    assert np.array_equal(back.coef_, clf.coef_) and np.array_equal(back.ratios_, clf.ratios_)
    assert list(tmp_path.iterdir()) == [path]          # atomic write left nothing behind


def test_save_load_three_classes(tmp_path, three_clf):
    path = tmp_path / "m3.npz"
    three_clf.save(path)
    back = NBSVMClassifier.load(path)
    assert np.array_equal(back.decision_function(NEW), three_clf.decision_function(NEW))
    assert back.predict(NEW).tolist() == three_clf.predict(NEW).tolist()


def test_save_is_atomic_when_interrupted(tmp_path, binary_clf, monkeypatch):
    path = tmp_path / "m.npz"
    binary_clf.save(path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(persist.np, "savez", boom)
    with pytest.raises(KeyboardInterrupt):
        NBSVMClassifier(ngrams=1, n_bits=8, epochs=1).fit(TEXTS, LABELS).save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


@pytest.fixture
def saved(tmp_path, binary_clf):
    path = tmp_path / "model.npz"
    binary_clf.save(path)
    return path


def test_corrupted_model_flipped_bytes(saved):
    data = bytearray(saved.read_bytes())
    mid = len(data) // 2
    for i in range(mid, mid + 16):
        data[i] ^= 0xFF
    saved.write_bytes(bytes(data))
    with pytest.raises(NBSVMError, match="model.npz"):
        NBSVMClassifier.load(saved)


@pytest.mark.parametrize("frac", [0.5, 0.9, 0.1])
def test_truncated_model(saved, frac):
    data = saved.read_bytes()
    saved.write_bytes(data[:int(len(data) * frac)])
    with pytest.raises(NBSVMError, match="model.npz"):
        NBSVMClassifier.load(saved)


@pytest.mark.parametrize("field, value", [(6, b"\x63\x00"),     # version needed to extract
                                          (8, b"\x01\x00"),     # flags: encrypted
                                          (10, b"\x55\x55")],   # compression method
                         ids=["version", "encrypted", "compression"])
def test_corrupted_zip_central_directory_fields(saved, field, value):
    # the same byte flips a disk error or a bad copy produces, placed in the zip central
    # directory entry of the first array: load must report a corrupted file, not crash
    data = bytearray(saved.read_bytes())
    cd = data.index(b"PK\x01\x02")
    data[cd + field:cd + field + 2] = value
    saved.write_bytes(bytes(data))
    with pytest.raises(NBSVMError, match="model.npz"):
        NBSVMClassifier.load(saved)


def test_single_byte_flips_fail_cleanly_or_change_nothing(saved):
    # flip one byte at a sample of positions: loading must fail cleanly or give the same scores
    good = NBSVMClassifier.load(saved).decision_function(NEW)
    data = saved.read_bytes()
    for pos in range(0, len(data), max(1, len(data) // 97)):
        bad = bytearray(data)
        bad[pos] ^= 0x55
        saved.write_bytes(bytes(bad))
        try:
            clf = NBSVMClassifier.load(saved)
        except NBSVMError:
            continue
        assert np.array_equal(clf.decision_function(NEW), good), pos


def test_lexicon_is_not_a_model(tmp_path):
    lex = NBLexicon(Hasher(ngrams=1, n_bits=8)).fit(TEXTS, LABELS)
    p = tmp_path / "lex.npz"
    lex.save(p)
    with pytest.raises(NBSVMError, match="expected an nbsvm model file, found kind 'lexicon'"):
        NBSVMClassifier.load(p)


def test_model_is_not_a_lexicon(saved):
    with pytest.raises(NBSVMError, match="expected an nbsvm lexicon file"):
        NBLexicon.load(saved)


def test_garbage_and_plain_npz(tmp_path):
    g = tmp_path / "garbage.npz"
    g.write_bytes(b"\x00\x01not a zip" * 100)
    with pytest.raises(NBSVMError, match="garbage.npz"):
        NBSVMClassifier.load(g)
    plain = tmp_path / "plain.npz"
    np.savez(plain, a=np.arange(3))
    with pytest.raises(NBSVMError, match="no header"):
        NBSVMClassifier.load(plain)
    with pytest.raises(NBSVMError, match="no such file"):
        NBSVMClassifier.load(tmp_path / "missing.npz")
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(NBSVMError, match="empty.npz"):
        NBSVMClassifier.load(empty)


# -- misc errors ------------------------------------------------------------------------------

def test_unfitted_and_bad_params():
    with pytest.raises(NBSVMError, match="not fitted"):
        NBSVMClassifier().predict(["x"])
    with pytest.raises(NBSVMError, match="beta"):
        NBSVMClassifier(n_bits=8, beta=1.5).fit(["a", "b"], ["x", "y"])
    with pytest.raises(NBSVMError, match="unknown interpolation"):
        NBSVMClassifier(n_bits=8, interpolate="both").fit(["a", "b"], ["x", "y"])
    with pytest.raises(NBSVMError, match="two classes"):
        NBSVMClassifier(n_bits=8).fit(["a", "b"], ["x", "x"])
    with pytest.raises(NBSVMError, match="no training documents"):
        NBSVMClassifier(n_bits=8).fit([], [])
    with pytest.raises(NBSVMError, match="unknown parameter"):
        NBSVMClassifier().set_params(gamma=1)


def test_hinge_has_no_probabilities():
    clf = NBSVMClassifier(ngrams=1, n_bits=8, epochs=2, loss="hinge").fit(TEXTS, LABELS)
    with pytest.raises(NBSVMError, match="no probabilities"):
        clf.predict_proba(["great"])


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_partial_fit_after_load_continues_exactly(tmp_path, optimizer):
    """The learner state (SGD scale/bias/t, AdaGrad accumulators) travels with the model."""
    X = ["a great film", "great fun", "an awful film", "awful, dull", "fine film", "dull mess"]
    y = ["pos", "pos", "neg", "neg", "pos", "neg"]
    live = NBSVMClassifier(ngrams=2, n_bits=12, optimizer=optimizer, epochs=3).fit(X, y)
    live.save(tmp_path / "m.npz")
    loaded = NBSVMClassifier.load(tmp_path / "m.npz")
    loaded.save(tmp_path / "m2.npz")                  # re-saving a loaded model keeps its state
    reloaded = NBSVMClassifier.load(tmp_path / "m2.npz")
    for _ in range(2):
        live.partial_fit(X, y)
        reloaded.partial_fit(X, y)
    assert np.array_equal(live.decision_function(X), reloaded.decision_function(X))
    fresh = NBSVMClassifier(ngrams=2, n_bits=12, optimizer=optimizer, epochs=3).fit(X, y)
    assert not np.array_equal(fresh.decision_function(X), reloaded.decision_function(X))
