"""``weighting='binary'``: the NBSVM learner over plain binarized n-grams (every kept bucket
has feature value 1 instead of its NB ratio), checked against a learner built by hand from
the same pieces, through save / load, and its refusal of an NB interpolation."""
import numpy as np
import pytest

from nbsvm.config import NEW_TOKENIZER
from nbsvm import NBLexicon, NBSVMClassifier, NBSVMError
from nbsvm.learners import LinearSGD
from nbsvm.io.npzfile import load_npz
from nbsvm.text.hashing import Hasher

from conftest import synthetic
from testhelpers import first_epoch_kept, kept_cache

HASHER = Hasher(ngrams=2, n_bits=16, char_ngrams=0, seed=3, **NEW_TOKENIZER)
SETTINGS = dict(loss="log", eta0=0.05, lam=1e-4, epochs=3, seed=5, norm="none")


def _ones_learner(lex, keep, optimizer):
    """A dense learner over all buckets whose table is 1 on the kept buckets, else 0."""
    n_out = 1 if len(lex.classes_) == 2 else len(lex.classes_)
    m = LinearSGD(1 << HASHER.n_bits, n_outputs=n_out, optimizer=optimizer, loss="log",
                  eta0=SETTINGS["eta0"], lam=SETTINGS["lam"])
    m.tables[:] = keep
    return m


def _positive(lex, cache):
    code = {label: i for i, label in enumerate(cache.labels)}
    classes = lex.classes_
    return [code[classes[1]]] if len(classes) == 2 else [code[c] for c in classes]


def _by_hand_with_lexicon(docs, lex, tmp, optimizer, min_df):
    """fit_documents(lexicon=...): epoch 1 in input order, then seeded shuffled replays."""
    keep = lex.counts().sum(axis=0) >= min_df
    cache = kept_cache(docs, HASHER, keep, tmp / "kept")
    m = _ones_learner(lex, keep, optimizer)
    positive = _positive(lex, cache)
    ids, offsets, codes = cache.rows(0, cache.n_docs)
    m.epoch(ids, offsets, codes, np.arange(cache.n_docs), positive)
    rng = np.random.default_rng(SETTINGS["seed"])
    for _ in range(2, SETTINGS["epochs"] + 1):
        for ids, offsets, codes, order, _ in cache.shuffled_groups(rng):
            m.epoch(ids, offsets, codes, order, positive)
    return m


def _by_hand_without_lexicon(docs, lex, tmp, optimizer, min_df):
    """fit_documents() alone: every epoch a seeded shuffled replay of the cache of buckets,
    epoch 1 dropping the buckets below min_df and writing the kept cache for the others."""
    seen = lex.counts().sum(axis=0)
    keep = seen >= min_df
    buckets = kept_cache(docs, HASHER, seen >= 1, tmp / "buckets")
    m = _ones_learner(lex, keep, optimizer)
    positive = _positive(lex, buckets)
    rng = np.random.default_rng(SETTINGS["seed"])
    cache, _ = first_epoch_kept(m, buckets, keep, rng, positive, tmp / "kept", HASHER)
    for _ in range(2, SETTINGS["epochs"] + 1):
        for ids, offsets, codes, order, _ in cache.shuffled_groups(rng):
            m.epoch(ids, offsets, codes, order, positive)
    return m


def _binary_model(min_df=2, optimizer="adagrad", **kw):
    return NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, hash_seed=3, weighting="binary",
                           optimizer=optimizer, min_df=min_df, **dict(SETTINGS, **kw))


@pytest.mark.parametrize("with_lexicon, optimizer, n_classes, min_df", [
    (False, "adagrad", 2, 2), (False, "sgd", 2, 1), (True, "adagrad", 2, 3),
    (True, "sgd", 3, 2)])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_binary_weighting_equals_a_learner_over_ones(tmp_path, with_lexicon, optimizer,
                                                     n_classes, min_df):
    docs = synthetic(1500, n_classes=n_classes, seed=9)
    lex = NBLexicon(HASHER).fit([d.text for d in docs], [d.label for d in docs])
    clf = _binary_model(min_df, optimizer).fit_documents(iter(docs),
                                                         lexicon=lex if with_lexicon else None)
    by_hand = _by_hand_with_lexicon if with_lexicon else _by_hand_without_lexicon
    ref = by_hand(docs, lex, tmp_path, optimizer, min_df)
    keep = lex.counts().sum(axis=0) >= min_df
    assert np.array_equal(clf.ratios_, ref.tables)                # 1 on kept buckets, else 0
    assert np.array_equal(clf.ratios_[0] == 1.0, keep) and keep.sum() > 100
    assert np.array_equal(clf.coef_, ref.coef())                  # bit for bit
    assert np.array_equal(clf.intercept_, ref.intercept())
    assert clf.score([d.text for d in docs], [d.label for d in docs]) > 0.9


def test_binary_weighting_learns_other_weights_than_nb():
    docs = synthetic(800, seed=2)
    texts, labels = [d.text for d in docs], [d.label for d in docs]
    nb = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, hash_seed=3, min_df=2, **SETTINGS).fit(texts,
                                                                                   labels)
    binary = _binary_model().fit(texts, labels)
    assert nb.weighting == "nb" and NBSVMClassifier().weighting == "nb"    # the default
    assert not np.array_equal(nb.coef_, binary.coef_)
    assert np.array_equal(nb.ratios_ != 0, binary.ratios_ != 0)           # the same columns


def test_binary_model_round_trips_through_save_and_load(tmp_path):
    docs = synthetic(800, seed=4)
    texts, labels = [d.text for d in docs], [d.label for d in docs]
    clf = _binary_model().fit(texts, labels)
    path = tmp_path / "binary.npz"
    clf.save(path)
    header, arrays = load_npz(path, "model")
    assert header["params"]["weighting"] == "binary"
    assert np.all(arrays["ratios"] == 1.0)                 # every saved column is kept
    back = NBSVMClassifier.load(path)
    assert back.weighting == "binary" and back.get_params() == dict(clf.get_params(),
                                                                    cache_dir=None)
    assert np.array_equal(back.decision_function(texts), clf.decision_function(texts))
    assert np.array_equal(back.ratios_, clf.ratios_)


@pytest.mark.parametrize("beta", [0.0, 0.5, 0.99])
def test_binary_weighting_refuses_beta_below_one(beta):
    clf = _binary_model(beta=beta)
    with pytest.raises(NBSVMError, match="weighting='binary'.*beta must be 1"):
        clf.fit(["good film", "bad film"], ["pos", "neg"])


def test_unknown_weighting_is_refused():
    with pytest.raises(NBSVMError, match="unknown weighting 'tfidf'; allowed: nb, binary"):
        NBSVMClassifier(char_ngrams=0, weighting="tfidf").fit(["good film", "bad film"], ["pos", "neg"])


def test_partial_fit_with_binary_weighting_gives_ones_on_kept_buckets():
    docs = synthetic(600, seed=6)
    texts, labels = [d.text for d in docs], [d.label for d in docs]
    clf = _binary_model(min_df=2).partial_fit(texts, labels, classes=["neg", "pos"])
    seen = NBLexicon(HASHER).fit(texts, labels).counts().sum(axis=0)
    assert np.array_equal(clf.ratios_[0], (seen >= 2).astype(clf.ratios_.dtype))
