"""NBSVMClassifier: fitting, scores, interpolation, persistence and broken model files."""
import math

import numpy as np
import pytest

from nbsvm.config import NEW_TOKENIZER
import nbsvm.io.npzfile as persist
from nbsvm import NBLexicon, NBSVMClassifier, NBSVMError
from nbsvm.config import data_default
from nbsvm.io.document import Document
from nbsvm.text.hashing import Hasher

from naive import (model_file_arrays, naive_adagrad_epoch, naive_buckets, naive_doc_freq,
                   naive_ratio_vector, naive_ratios, naive_sgd_epoch, rel_gap)

TOL = 1e-5          # float32 state against the float64 references (see test_online.py)

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
    """w.x + b, x the document's ratios (divided by their L2 norm when the model scales
    rows to unit norm: by default with more than two classes)."""
    ids = _x(text, clf)
    dot = sum(float(clf.coef_[k, i]) * float(clf.ratios_[k, i]) for i in ids)
    if clf.unit_rows():
        norm = math.sqrt(sum(float(clf.ratios_[k, i]) ** 2 for i in ids))
        dot = dot / norm if norm else 0.0
    return dot + float(clf.intercept_[k])


def _dot_tol(clf, text, k=0):
    """Rounding allowance for a score over ``text``: the kernels sum float32 products
    ``w_i * r_i`` (each within 2**-24 of the exact product) in float64."""
    mag = sum(abs(float(clf.coef_[k, i]) * float(clf.ratios_[k, i])) for i in _x(text, clf))
    return 2.0 ** -23 * (mag + abs(float(clf.intercept_[k]))) + 1e-12


@pytest.fixture(scope="module")
def binary_clf():
    return NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=8, eta0=0.5, lam=1e-4, min_df=2).fit(
        TEXTS, LABELS)


@pytest.fixture(scope="module")
def three_clf():
    return NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=8, eta0=0.5, lam=1e-4, loss="log").fit(
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
    # min_df = 2 (the default for large corpora): buckets of a single training document get
    # ratio 0 (norms unchanged)
    assert binary_clf.min_df == 2
    docs = [naive_buckets(t, 2, 10) for t in TEXTS]
    classes, ref = naive_ratios(docs, LABELS, 1 << 10, min_df=2)
    np.testing.assert_allclose(binary_clf.ratios_, np.array(ref), rtol=1e-6, atol=1e-6)
    df = naive_doc_freq(docs)
    assert binary_clf.n_seen_buckets_ == len(df)                  # every seen bucket counts
    kept = sorted(i for i, n in df.items() if n >= 2)
    assert np.flatnonzero(binary_clf.ratios_[0]).tolist() == kept
    assert 0 < len(kept) < len(df)


def test_decision_function_is_w_dot_r_plus_b(binary_clf):
    clf = binary_clf
    s = clf.decision_function(NEW)
    assert s.shape == (len(NEW),)
    for text, v in zip(NEW, s):
        assert abs(v - _linear(clf, text)) <= _dot_tol(clf, text)
    assert max(abs(v) for v in s) > 0.5
    assert s[3] == clf.intercept_[0]                          # unseen words: only the bias
    assert clf.predict(NEW).tolist() == [("pos" if v > 0 else "neg") for v in s]


def test_predict_proba_is_sigmoid_of_scores(binary_clf):
    s = binary_clf.decision_function(NEW)
    p = binary_clf.predict_proba(NEW)
    assert p.shape == (len(NEW), 2)
    np.testing.assert_allclose(p[:, 1], 1 / (1 + np.exp(-s)), rtol=1e-12)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)


def test_training_equals_naive_sgd_over_seeded_shuffles():
    """Without a lexicon every epoch visits a fresh rng.permutation(n) from default_rng(seed)."""
    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=8, epochs=3, eta0=0.3, lam=1e-2, loss="hinge",
                          optimizer="sgd", seed=7, norm="none").fit(TEXTS, LABELS)
    docs = [naive_buckets(t, 1, 8) for t in TEXTS]
    ys = [1.0 if l == "pos" else -1.0 for l in LABELS]
    rng = np.random.default_rng(7)
    w, b, t = [0.0] * 256, 0.0, 0
    unshuffled = ([0.0] * 256, 0.0, 0)
    for epoch in range(3):
        order = rng.permutation(len(TEXTS))
        w, b, t, _ = naive_sgd_epoch(docs, ys, order, clf.ratios_[0], w, b, t, 0.3, 1e-2, "hinge")
        unshuffled = naive_sgd_epoch(docs, ys, range(len(TEXTS)), clf.ratios_[0], *unshuffled,
                                     0.3, 1e-2, "hinge")[:3]
    w_unshuffled = unshuffled[0]
    assert rel_gap(clf.coef_[0], w) <= TOL
    assert abs(clf.intercept_[0] - b) <= TOL * max(1.0, abs(b))
    assert np.max(np.abs(w)) > 0.1
    assert rel_gap(clf.coef_[0], w_unshuffled) > 100 * TOL      # the shuffles matter


def test_adagrad_training_equals_naive_adagrad_over_seeded_shuffles(tmp_path):
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=8, epochs=3, eta0=0.1, lam=1e-3, loss="log",
                          optimizer="adagrad", seed=11, norm="none").fit(TEXTS, LABELS)
    docs = [naive_buckets(t, 2, 8) for t in TEXTS]
    ys = [1.0 if l == "pos" else -1.0 for l in LABELS]
    rng = np.random.default_rng(11)
    w, G, b, Gb = [0.0] * 256, [0.0] * 256, 0.0, 0.0
    other_seed = np.random.default_rng(12)
    w2, G2, b2, Gb2 = [0.0] * 256, [0.0] * 256, 0.0, 0.0
    for _ in range(3):
        w, G, b, Gb, _ = naive_adagrad_epoch(docs, ys, rng.permutation(len(TEXTS)),
                                             clf.ratios_[0], w, G, b, Gb, 0.1, 1e-3, "log")
        w2, G2, b2, Gb2, _ = naive_adagrad_epoch(docs, ys, other_seed.permutation(len(TEXTS)),
                                                 clf.ratios_[0], w2, G2, b2, Gb2, 0.1, 1e-3, "log")
    assert rel_gap(clf.coef_[0], w) <= TOL
    saved = model_file_arrays(clf, tmp_path / "m.npz")        # G_i by bucket, from the file
    G_saved = np.zeros(256)
    G_saved[saved["buckets"]] = saved["adagrad_sq"][0]
    assert rel_gap(G_saved, G) <= TOL and max(G) > 0
    assert saved["learner_state"][0, 1] == 3 * len(TEXTS)        # t
    assert saved["learner_state"][0, 2] == pytest.approx(Gb, rel=TOL)
    assert abs(clf.intercept_[0] - b) <= TOL * max(1.0, abs(b))
    assert np.max(np.abs(w)) > 0.05
    assert rel_gap(clf.coef_[0], w2) > 100 * TOL                # the seed matters


def test_training_with_lexicon_streams_first_epoch_in_input_order():
    lex = NBLexicon(Hasher(ngrams=1, n_bits=8, **NEW_TOKENIZER)).fit(TEXTS, LABELS)
    docs_in = [Document(l, t, "mem", i + 1) for i, (t, l) in enumerate(zip(TEXTS, LABELS))]
    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=8, epochs=3, eta0=0.3, lam=1e-2, loss="log", seed=3,
                          optimizer="sgd")
    clf.fit_documents(iter(docs_in), lexicon=lex)
    df = lex.counts().sum(axis=0)                              # min_df = 2 by default
    np.testing.assert_array_equal(clf.ratios_, np.where(df >= 2, lex.ratios(min_df=2), 0))
    docs = [naive_buckets(t, 1, 8) for t in TEXTS]
    ys = [1.0 if l == "pos" else -1.0 for l in LABELS]
    rng = np.random.default_rng(3)
    w, b, t, _ = naive_sgd_epoch(docs, ys, range(len(TEXTS)), clf.ratios_[0], [0.0] * 256,
                                 0.0, 0, 0.3, 1e-2, "log")
    # had the first epoch been shuffled too (as without a lexicon):
    w_all = naive_sgd_epoch(docs, ys, np.random.default_rng(3).permutation(len(TEXTS)),
                            clf.ratios_[0], [0.0] * 256, 0.0, 0, 0.3, 1e-2, "log")[0]
    for _ in range(2):
        w, b, t, _ = naive_sgd_epoch(docs, ys, rng.permutation(len(TEXTS)), clf.ratios_[0],
                                     w, b, t, 0.3, 1e-2, "log")
    assert rel_gap(clf.coef_[0], w) <= TOL
    assert abs(clf.intercept_[0] - b) <= TOL * max(1.0, abs(b))
    assert rel_gap(clf.coef_[0], w_all) > 100 * TOL


def test_lexicon_with_other_hasher_refused():
    lex = NBLexicon(Hasher(ngrams=1, n_bits=9)).fit(TEXTS, LABELS)
    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=8)
    with pytest.raises(NBSVMError, match="lexicon was built with"):
        clf.fit_documents(iter([Document("pos", "x", "m", 1)]), lexicon=lex)


# -- interpolation ----------------------------------------------------------------------------

def test_interpolate_scores_hand_formula():
    beta = 0.6
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=4, eta0=0.5, beta=beta,
                          interpolate="scores").fit(TEXTS, LABELS)
    prior = math.log(len(POS) / len(NEG))
    s = clf.decision_function(NEW)
    for text, v in zip(NEW, s):
        nb = prior + sum(float(clf.ratios_[0, i]) for i in _x(text, clf))
        assert abs(v - (beta * _linear(clf, text) + (1 - beta) * nb)) <= _dot_tol(clf, text)
    assert abs(s[0] - _linear(clf, NEW[0])) > 1e-3           # the NB part does count
    # beta = 0: pure NB score
    clf.set_params(beta=0.0)
    assert clf.decision_function(["never seen words"])[0] == pytest.approx(prior, rel=1e-12)


def test_interpolate_weights_hand_formula():
    beta = 0.25
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=4, eta0=0.5, beta=beta,
                          interpolate="weights", norm="none").fit(TEXTS, LABELS)
    df = naive_doc_freq([naive_buckets(t, 2, 10) for t in TEXTS])
    seen = sorted(i for i, n in df.items() if n >= clf.setting("min_df"))
    # the mean is over the buckets the model keeps (here: exactly the non-zero ratios)
    assert np.flatnonzero(clf.ratios_[0]).tolist() == seen
    mean_abs = sum(abs(float(clf.coef_[0, i])) for i in seen) / len(seen)
    assert clf.mean_abs_coef_[0] == pytest.approx(mean_abs, rel=1e-12)
    all_buckets = sum(abs(float(c)) for c in clf.coef_[0]) / clf.coef_.shape[1]
    assert abs(mean_abs - all_buckets) > 1e-3 * mean_abs        # not over all buckets
    s = clf.decision_function(NEW)
    for text, v in zip(NEW, s):
        ids = _x(text, clf)
        ref = sum(((1 - beta) * mean_abs + beta * float(clf.coef_[0, i])) * float(clf.ratios_[0, i])
                  for i in ids) + float(clf.intercept_[0])
        tol = _dot_tol(clf, text) + 1e-12 * sum(abs(float(clf.ratios_[0, i])) for i in ids)
        assert abs(v - ref) <= tol


# -- multi-class ------------------------------------------------------------------------------

def test_three_classes(three_clf):
    clf = three_clf
    assert clf.classes_ == ["mid", "neg", "pos"]
    assert clf.ratios_.shape == (3, 1 << 10) and clf.coef_.shape == (3, 1 << 10)
    s = clf.decision_function(NEW)
    assert s.shape == (len(NEW), 3)
    for j, text in enumerate(NEW):
        for k in range(3):
            assert abs(s[j, k] - _linear(clf, text, k)) <= _dot_tol(clf, text, k)
    pred = clf.predict(NEW)
    assert pred.tolist() == [clf.classes_[k] for k in np.argmax(s, axis=1)]
    assert clf.score(THREE_TEXTS, THREE_LABELS) >= 10 / 11
    p = clf.predict_proba(NEW)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    sig = 1 / (1 + np.exp(-s))
    np.testing.assert_allclose(p, sig / sig.sum(axis=1, keepdims=True), rtol=1e-12)


def test_three_classes_score_interpolation_prior():
    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=9, epochs=2, beta=0.0).fit(THREE_TEXTS, THREE_LABELS)
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


def test_model_files_that_name_the_l2_strength_l2_still_load(tmp_path):
    """Files written before the L2 strength took the backend's name (``lam``) said ``l2``."""
    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=10, epochs=2, lam=3e-3).fit(TEXTS, LABELS)
    clf.save(tmp_path / "new.npz")
    header, arrays = persist.load_npz(tmp_path / "new.npz", "model")
    header["params"]["l2"] = header["params"].pop("lam")
    for key in ("kind", "format_version", "checksum"):
        header.pop(key, None)
    persist.save_npz(tmp_path / "old.npz", "model", header, arrays)
    back = NBSVMClassifier.load(tmp_path / "old.npz")
    assert back.lam == 3e-3
    assert np.array_equal(back.decision_function(NEW), clf.decision_function(NEW))


def test_save_is_atomic_when_interrupted(tmp_path, binary_clf, monkeypatch):
    path = tmp_path / "m.npz"
    binary_clf.save(path)
    before = path.read_bytes()

    other = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=8, epochs=1).fit(TEXTS, LABELS)
    real_open = persist.zipfile.ZipFile.open
    calls = []

    def open_then_interrupt(self, name, mode="r", *a, **k):
        calls.append(name)
        if mode == "w" and len(calls) == 3:      # two arrays written, Ctrl-C in the third
            raise KeyboardInterrupt
        return real_open(self, name, mode, *a, **k)

    monkeypatch.setattr(persist.zipfile.ZipFile, "open", open_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        other.save(path)
    assert len(calls) == 3
    monkeypatch.undo()

    def replace_interrupted(*a, **k):           # everything written, Ctrl-C at the rename
        raise KeyboardInterrupt

    monkeypatch.setattr(persist.os, "replace", replace_interrupted)
    with pytest.raises(KeyboardInterrupt):
        other.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]
    other.save(path)                            # and an uninterrupted save does replace it
    assert path.read_bytes() != before
    assert np.array_equal(NBSVMClassifier.load(path).coef_, other.coef_)


@pytest.fixture
def saved(tmp_path, binary_clf):
    path = tmp_path / "model.npz"
    binary_clf.save(path)
    return path


def test_corrupted_model_flipped_bytes(saved):
    """Flipped bytes inside any array's data (or its .npy header) are found: every member in
    turn, 8 bytes in the middle of its data. (Bytes of a zip local header that zipfile never
    reads, such as its date, change nothing that is loaded.)"""
    import struct
    import zipfile

    good = saved.read_bytes()
    with zipfile.ZipFile(saved) as zf:
        infos = zf.infolist()
    assert len(infos) >= 5
    for info in infos:
        name_len, extra_len = struct.unpack("<HH", good[info.header_offset + 26:
                                                        info.header_offset + 30])
        start = info.header_offset + 30 + name_len + extra_len
        mid = start + max(0, info.file_size // 2 - 4)
        data = bytearray(good)
        for i in range(mid, min(mid + 8, start + info.file_size)):
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
        NBSVMClassifier(char_ngrams=0, n_bits=8, beta=1.5).fit(["a", "b"], ["x", "y"])
    with pytest.raises(NBSVMError, match="unknown interpolation"):
        NBSVMClassifier(char_ngrams=0, n_bits=8, interpolate="both").fit(["a", "b"], ["x", "y"])
    with pytest.raises(NBSVMError, match="two classes"):
        NBSVMClassifier(char_ngrams=0, n_bits=8).fit(["a", "b"], ["x", "x"])
    with pytest.raises(NBSVMError, match="no training documents"):
        NBSVMClassifier(char_ngrams=0, n_bits=8).fit([], [])
    with pytest.raises(NBSVMError, match="unknown parameter"):
        NBSVMClassifier().set_params(gamma=1)


def test_hinge_has_no_probabilities():
    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=8, epochs=2, loss="hinge").fit(TEXTS, LABELS)
    with pytest.raises(NBSVMError, match="no probabilities"):
        clf.predict_proba(["great"])


def test_partial_fit_refuses_other_classes_and_says_when_the_lexicon_is_frozen(tmp_path):
    """A later call's classes=[...] with a class added was ignored (scikit-learn refuses
    it); a model loaded without its counts learned no new n-gram from partial_fit, without
    a word (now a warning; a model with keep_counts grows its lexicon, silently)."""
    import warnings

    X, y = ["great film", "loved it", "awful film", "hated it"], ["pos", "pos", "neg", "neg"]
    grown = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=12, min_df=1)
    grown.partial_fit(X, y, classes=["pos", "neg"]).partial_fit(X, y, classes=["neg", "pos"])
    with pytest.raises(NBSVMError, match=r"classes=\['neg', 'neutral', 'pos'\] is not the same"):
        grown.partial_fit(X, y, classes=["pos", "neg", "neutral"])
    grown.save(tmp_path / "m.npz")
    for model, warned in ((grown, False), (NBSVMClassifier.load(tmp_path / "m.npz"), True),
                          (NBSVMClassifier(char_ngrams=0, n_bits=12, keep_counts=True).fit(X, y),
                           False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.partial_fit(X, y)
        assert [str(w.message)[:34] for w in caught] == \
            ["this model's NB lexicon is frozen "] * warned
        assert not warned or caught[0].filename == __file__  # the caller's line
    with warnings.catch_warnings(record=True) as caught:  # a refused call: no warning first
        warnings.simplefilter("always")
        with pytest.raises(NBSVMError, match="is not the same"):
            NBSVMClassifier.load(tmp_path / "m.npz").partial_fit(X, y, classes=["a", "b", "c"])
    assert caught == []


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_partial_fit_after_load_continues_exactly(tmp_path, optimizer):
    """The learner state (SGD scale/bias/t, AdaGrad accumulators) travels with the model."""
    X = ["a great film", "great fun", "an awful film", "awful, dull", "fine film", "dull mess"]
    y = ["pos", "pos", "neg", "neg", "pos", "neg"]
    live = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=12, optimizer=optimizer, epochs=3).fit(X, y)
    live.save(tmp_path / "m.npz")
    loaded = NBSVMClassifier.load(tmp_path / "m.npz")
    loaded.save(tmp_path / "m2.npz")                  # re-saving a loaded model keeps its state
    reloaded = NBSVMClassifier.load(tmp_path / "m2.npz")
    for _ in range(2):
        live.partial_fit(X, y)
        reloaded.partial_fit(X, y)
    assert np.array_equal(live.decision_function(X), reloaded.decision_function(X))
    fresh = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=12, optimizer=optimizer, epochs=3).fit(X, y)
    assert not np.array_equal(fresh.decision_function(X), reloaded.decision_function(X))


# -- the learned state is a view of the learner; what the model file holds -------------------

@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_learned_state_properties_are_read_only(optimizer):
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=2, optimizer=optimizer,
                          norm="none").fit(TEXTS, LABELS)
    for name in ("coef_", "ratios_", "intercept_"):
        with pytest.raises(AttributeError):
            setattr(clf, name, np.zeros(3))
    assert clf.coef_.shape == clf.ratios_.shape == (1, 1 << 10)
    assert clf.coef_.dtype == clf.ratios_.dtype == np.float32
    assert clf.intercept_.shape == (1,)
    assert np.count_nonzero(clf.coef_) > 10
    # they are the state the scores come from: a one-word text scores w_i * r_i + b
    (i,) = _x("great", clf)
    assert clf.decision_function(["great"])[0] == pytest.approx(
        float(clf.coef_[0, i]) * float(clf.ratios_[0, i]) + float(clf.intercept_[0]), rel=1e-6)
    with pytest.raises(NBSVMError, match="not fitted"):
        NBSVMClassifier().coef_


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
@pytest.mark.parametrize("corpus", ["binary", "three"])
@pytest.mark.parametrize("min_df", [1, 2, 3])
def test_ratios_equal_the_lexicon_for_both_optimizers(optimizer, corpus, min_df):
    # the model's ratios are the lexicon's (counted in one streaming pass, whatever the
    # optimizer), zeroed for buckets of fewer than min_df documents
    texts, labels = (TEXTS, LABELS) if corpus == "binary" else (THREE_TEXTS, THREE_LABELS)
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=9, epochs=1, optimizer=optimizer, alpha=0.5,
                          min_df=min_df).fit(texts, labels)
    lex = NBLexicon(Hasher(ngrams=2, n_bits=9), alpha=0.5).fit(texts, labels)
    df = lex.counts().sum(axis=0)
    assert np.array_equal(clf.ratios_, np.where(df >= min_df, lex.ratios(min_df=min_df), 0))
    assert clf.n_seen_buckets_ == lex.n_seen_
    assert clf.class_counts_.tolist() == lex.class_counts_.tolist()
    _, ref = naive_ratios([naive_buckets(t, 2, 9) for t in texts], labels, 1 << 9, 0.5,
                          min_df=min_df)
    np.testing.assert_allclose(clf.ratios_, np.array(ref), rtol=1e-6, atol=1e-6)
    assert np.count_nonzero(clf.ratios_) > 5


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_min_df_drops_rare_buckets_from_the_model(tmp_path, optimizer):
    texts = TEXTS + ["superb acting, a unique masterpiece"]
    labels = LABELS + ["pos"]
    kw = dict(ngrams=2, n_bits=12, epochs=4, eta0=0.3, optimizer=optimizer)
    one = NBSVMClassifier(char_ngrams=0, min_df=1, **kw).fit(texts, labels)
    two = NBSVMClassifier(char_ngrams=0, min_df=2, **kw).fit(texts, labels)
    df = naive_doc_freq([naive_buckets(t, 2, 12) for t in texts])
    (unique,) = _x("masterpiece", two)
    assert df[unique] == 1
    # min_df=1 keeps the word of one document, min_df=2 ignores it entirely
    assert one.ratios_[0, unique] != 0 and one.coef_[0, unique] != 0
    assert two.ratios_[0, unique] == 0 and two.coef_[0, unique] == 0
    assert two.decision_function(["masterpiece"])[0] == two.intercept_[0]
    assert one.decision_function(["masterpiece"])[0] != one.intercept_[0]
    assert two.n_seen_buckets_ == one.n_seen_buckets_ == len(df)
    # the model file keeps exactly the buckets of >= min_df documents
    for clf, min_df in ((one, 1), (two, 2)):
        buckets = model_file_arrays(clf, tmp_path / f"m{min_df}.npz")["buckets"]
        assert buckets.tolist() == sorted(i for i, n in df.items() if n >= min_df)
        back = NBSVMClassifier.load(tmp_path / f"m{min_df}.npz")
        assert back.min_df == min_df
        assert np.array_equal(back.decision_function(NEW + texts), clf.decision_function(NEW + texts))


@pytest.mark.parametrize("bad", [0, -1, 2.5, "2", True])
def test_min_df_validated(bad):
    with pytest.raises(NBSVMError, match="min_df"):
        NBSVMClassifier(char_ngrams=0, n_bits=8, min_df=bad).fit(["a", "b"], ["x", "y"])


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_model_file_arrays_and_dtypes(tmp_path, optimizer):
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=3, optimizer=optimizer,
                          lam=1e-3).fit(THREE_TEXTS, THREE_LABELS)
    arrays = model_file_arrays(clf, tmp_path / "m.npz")
    buckets = arrays["buckets"]
    used = np.flatnonzero(np.any(clf.ratios_ != 0, axis=0) | np.any(clf.coef_ != 0, axis=0))
    seen = {i for t in THREE_TEXTS for i in naive_buckets(t, 2, 10)}
    # seen buckets only, each once, sorted; every bucket with a ratio or a weight is there
    assert buckets.dtype == np.int32 and np.all(np.diff(buckets) > 0)
    assert set(used.tolist()) <= set(buckets.tolist()) <= seen
    n = buckets.size
    for name in ("ratios", "coef"):
        assert arrays[name].dtype == np.float32 and arrays[name].shape == (3, n)
    assert np.array_equal(arrays["ratios"], clf.ratios_[:, buckets])
    assert np.array_equal(arrays["coef"], clf.coef_[:, buckets])
    state = arrays["learner_state"]
    assert state.dtype == np.float64 and state.shape == (3, 3)
    if optimizer == "adagrad":
        assert np.array_equal(state[:, 0], clf.intercept_)       # [bias, t, G_bias]
        assert np.all(state[:, 1] == 3 * len(THREE_TEXTS)) and np.all(state[:, 2] > 0)
        assert arrays["adagrad_sq"].dtype == np.float32 and arrays["adagrad_sq"].shape == (3, n)
        assert np.all(arrays["adagrad_sq"][arrays["coef"] != 0] > 0)
        assert np.all(arrays["adagrad_sq"] >= 0)
    else:
        assert "adagrad_sq" not in arrays
        assert np.all(state[:, 0] == 1.0)                      # [scale folded, bias, t]
        assert np.array_equal(state[:, 1], clf.intercept_)
        assert np.all(state[:, 2] == 3 * len(THREE_TEXTS))
    # load and save again: the same arrays, and the same model
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    again = model_file_arrays(back, tmp_path / "m2.npz")
    assert arrays.keys() == again.keys()
    for name in arrays:
        assert np.array_equal(arrays[name], again[name]), name
    assert np.array_equal(back.mean_abs_coef_, clf.mean_abs_coef_)
    assert np.array_equal(back.coef_, clf.coef_) and np.array_equal(back.ratios_, clf.ratios_)


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_partial_fit_after_load_with_weight_interpolation(tmp_path, optimizer):
    # the mean |w| used by interpolate='weights' follows the weights after a load too
    X = ["a great film", "great fun", "an awful film", "awful, dull", "fine film", "dull mess"]
    y = ["pos", "pos", "neg", "neg", "pos", "neg"]
    kw = dict(ngrams=2, n_bits=12, optimizer=optimizer, epochs=3, beta=0.4,
              interpolate="weights")
    live = NBSVMClassifier(char_ngrams=0, **kw).fit(X, y)
    live.save(tmp_path / "m.npz")
    loaded = NBSVMClassifier.load(tmp_path / "m.npz")
    before = loaded.mean_abs_coef_.copy()
    for _ in range(2):
        live.partial_fit(X, y)
        loaded.partial_fit(X, y)
    assert not np.array_equal(before, loaded.mean_abs_coef_)
    assert np.array_equal(live.mean_abs_coef_, loaded.mean_abs_coef_)
    assert np.array_equal(live.decision_function(X + NEW), loaded.decision_function(X + NEW))


def test_partial_fit_respects_min_df():
    """min_df is documented as 'keep only buckets seen in at least this many training
    documents'; a model grown by partial_fit should apply it too (to the counts so far),
    as fit does. Today partial_fit uses the lexicon's ratios unmasked."""
    X = TEXTS + ["a unique masterpiece"]
    y = LABELS + ["pos"]
    lex = NBLexicon(Hasher(ngrams=1, n_bits=12)).fit(X, y)
    df = lex.counts().sum(axis=0)
    fitted = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=12, min_df=2, epochs=1).fit(X, y)
    assert np.array_equal(fitted.ratios_, np.where(df >= 2, lex.ratios(min_df=2), 0))
    grown = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=12, min_df=2).partial_fit(X, y, classes=["neg", "pos"])
    (rare,) = _x("masterpiece", grown)
    assert df[rare] == 1
    assert grown.ratios_[0, rare] == 0
    assert np.array_equal(grown.ratios_, np.where(df >= 2, lex.ratios(min_df=2), 0))


def test_partial_fit_learns_before_every_declared_class_has_a_document():
    """classes=[...] naming a class with no document yet left every ratio 0 until it came:
    the learner saw empty rows and predicted one class (scikit-learn's SGDClassifier
    learns). The absent class has the smoothing's uniform counts, the others their ratios
    against the rest, as counted by hand."""
    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=12, alpha=1.0, epochs=1)
    for _ in range(5):
        clf.partial_fit(TEXTS, LABELS, classes=["neg", "pos", "rare"])
    docs = [_x(t, clf) for t in TEXTS]
    for k, c in enumerate(["neg", "pos", "rare"]):
        mine = [d for d, lab in zip(docs, LABELS) if lab == c] * 5  # counted at each call
        rest = [d for d, lab in zip(docs, LABELS) if lab != c] * 5
        ref = naive_ratio_vector(mine, rest, 1 << 12, kept_norms=True)
        np.testing.assert_allclose(clf.ratios_[k], ref, rtol=1e-5, atol=1e-6)
    assert list(clf.predict(TEXTS)) == LABELS
    assert list(clf.class_counts_) == [5 * len(NEG), 5 * len(POS), 0]


def test_partial_fit_says_when_classes_are_strings_and_y_numbers():
    """partial_fit(X, [0, 1], classes=["0", "1"]) gave string classes_ and predictions,
    which accuracy_score refuses beside y ('Mix of label input types'); scikit-learn's
    SGDClassifier refuses the call. The first call's types stay (documented): said."""
    import warnings
    with pytest.warns(UserWarning, match=r"classes= are strings \('0', '1'\) and y numbers"):
        clf = NBSVMClassifier(n_bits=10).partial_fit(TEXTS, np.array([i % 2 for i in range(
            len(TEXTS))]), classes=["0", "1"])
    assert list(clf.classes_) == ["0", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NBSVMClassifier(n_bits=10).partial_fit(TEXTS, [i % 2 for i in range(len(TEXTS))],
                                               classes=[0, 1])
        NBSVMClassifier(n_bits=10).partial_fit(TEXTS, LABELS, classes=["neg", "pos"])


class _Payload:
    """Unpickling this would create a file: proof that loading executed code."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("kind", ["model", "lexicon"])
def test_loading_never_unpickles(tmp_path, kind):
    """A model or lexicon file with a pickled object array is refused, and not run."""
    import json
    import zipfile

    marker = tmp_path / "pwned"
    path = tmp_path / f"evil.{kind}.npz"
    header = np.frombuffer(json.dumps({"kind": kind, "format_version": 1}).encode(), np.uint8)
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload(marker)
    with zipfile.ZipFile(path, "w") as zf:
        for name, arr in (("__header__", header), ("coef", evil), ("counts", evil)):
            with zf.open(name + ".npy", "w") as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=True)
    loader = NBSVMClassifier.load if kind == "model" else NBLexicon.load
    with pytest.raises(NBSVMError, match=str(path)):
        loader(path)
    assert not marker.exists()


# -- settings that follow the number of classes ------------------------------------------------

def test_unset_settings_follow_the_number_of_classes():
    two = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=10, epochs=2).fit(TEXTS, LABELS)
    three = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=10).fit(THREE_TEXTS, THREE_LABELS)
    names = ("loss", "optimizer", "eta0", "epochs", "norm")
    # two classes with AdaGrad: eta0 and norm from the data (short texts here: larger steps,
    # unit rows)
    assert [two.setting(n) for n in names] == ["log", "adagrad",
                                               data_default("eta0", two.corpus_), 2, "l2"]
    assert [three.setting(n) for n in names] == ["modified_huber", "sgd", "auto", 5, "l2"]
    assert three.unit_rows() and two.unit_rows()
    longer = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=10, epochs=2).fit(
        [t + " " + " ".join(f"w{i}x{j}" for j in range(20)) for i, t in enumerate(TEXTS)],
        LABELS)
    assert longer.setting("norm") == "none" and not longer.unit_rows()
    assert three.linear_.S_.shape[2] == 2 and three.eta0_ > 0       # SGD state, calibrated
    assert three.get_params()["loss"] is None                        # the parameter stays unset
    # a setting given is kept whatever the classes
    pinned = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=10, loss="log", optimizer="adagrad", eta0=0.1,
                             epochs=3, norm="none").fit(THREE_TEXTS, THREE_LABELS)
    assert [pinned.setting(n) for n in names] == ["log", "adagrad", 0.1, 3, "none"]
    with pytest.raises(NBSVMError, match="follows the number of classes"):
        NBSVMClassifier().setting("loss")
    with pytest.raises(NBSVMError, match="unknown norm 'l1'; allowed: l2, none"):
        NBSVMClassifier(char_ngrams=0, norm="l1").fit(TEXTS, LABELS)


def test_models_saved_before_the_norm_option_load_without_it(tmp_path):
    from nbsvm.io.npzfile import load_npz, save_npz

    clf = NBSVMClassifier(char_ngrams=0, ngrams=1, n_bits=10, loss="log", optimizer="adagrad", eta0=0.1,
                          epochs=3, norm="none").fit(THREE_TEXTS, THREE_LABELS)
    clf.save(tmp_path / "new.npz")
    header, arrays = load_npz(tmp_path / "new.npz", "model")
    del header["params"]["norm"]                     # as written by earlier versions
    save_npz(tmp_path / "old.npz", "model", header, arrays)
    old = NBSVMClassifier.load(tmp_path / "old.npz")
    assert old.norm == "none" and not old.unit_rows()
    assert np.array_equal(old.decision_function(NEW), clf.decision_function(NEW))


def test_misuses_get_a_message_not_an_error_from_inside():
    """evaluate before fit: AttributeError 'class_names_'; explain_text of a list or None:
    'no attribute encode'; fit(texts, 'label') with a list X: 'X has 4 documents but y has 5
    labels' (the name read a label per character)."""
    from sklearn.exceptions import NotFittedError

    from nbsvm.evaluation.explain import explain_text

    clf = NBSVMClassifier(char_ngrams=0, n_bits=10, min_df=1)
    with pytest.raises(NotFittedError):
        clf.evaluate(TEXTS, LABELS)
    with pytest.raises(NBSVMError, match="y='label' names a column only when X is a DataFrame"):
        clf.fit(TEXTS, "label")
    clf.fit(TEXTS, LABELS)
    for text in (None, ["great"]):
        with pytest.raises(TypeError, match="explains one text"):
            explain_text(clf, text)
