"""The scale corpus generator (issue 15, ``pipelines/make_corpus.py``): seeded, its
vocabulary follows the Heaps curve fitted on IMDB, its labels can be learned."""
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_datasets
from nbsvm import NBSVMClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
import corpus_generator  # noqa: E402
import corpus_model  # noqa: E402
import corpus_stats  # noqa: E402

IMDB = shared_datasets() / "imdb" / "aclImdb_labeled.tar.gz"
pytestmark = pytest.mark.skipif(not IMDB.exists(), reason=f"no IMDB at {IMDB}")


PER_CLASS = 2500


@pytest.fixture(scope="module")
def imdb_docs():
    """5,000 real IMDB reviews, tokenized as the generator's model reads them: the first
    2,500 of each of ``test/neg`` and ``test/pos``, which come first in the archive, so
    that the archive is read only up to them (all 50,000 reviews took 8 of the 15 s
    this fixture took, tokenizing them most of the rest)."""
    import re
    import tarfile
    wanted = re.compile(r"^aclImdb/test/(pos|neg)/[^/]+\.txt$")
    docs, counts = [], {"pos": 0, "neg": 0}
    with tarfile.open(IMDB, "r|gz") as tar:
        for member in tar:
            m = wanted.match(member.name)
            if m and counts[m.group(1)] < PER_CLASS:
                text = tar.extractfile(member).read().decode("utf-8")
                docs.append((corpus_model.tokenize(text), m.group(1)))
                counts[m.group(1)] += 1
                if min(counts.values()) == PER_CLASS:
                    break
    assert min(counts.values()) == PER_CLASS
    return docs


@pytest.fixture(scope="module")
def model(imdb_docs):
    return corpus_model.fit(imdb_docs, seed=0)


def lines(gen, n):
    return b"".join(gen.chunks(n)).decode("utf-8").splitlines()


def test_heaps_fit_by_hand():
    # every document: 10 words never seen before and 30 times "the", in any order V(n) = n/4
    # (+1 for "the"): beta 1, K 1/4
    docs = [([f"w{i}_{j}" for j in range(10)] + ["the"] * 30, "pos") for i in range(1000)]
    k, beta, points = corpus_model.heaps_fit(docs, seed=0)
    assert abs(beta - 1.0) < 0.01 and abs(k - 0.25) < 0.01
    assert points[-1].tolist() == [40_000, 10_001]


def test_the_model_counts_the_bigrams_of_each_class():
    docs = [("a b a".split(), "pos"), ("b b".split(), "neg"), ("a a c".split(), "pos")]
    m = corpus_model.fit(docs, seed=0)
    # seen twice or more: a (4), b (3); c once: the RARE slot (id 2), start id 3
    assert m.words[:2] == ["a", "b"] and m.words[2:] == ["c"] and m.n_common == 2
    rows = m.n_rows

    def bigrams(cls, prev):
        r = cls * rows + prev
        lo, hi = m.row_ptr[r], m.row_ptr[r + 1]
        counts = np.diff(np.concatenate([[0], m.next_cum[lo:hi]]))
        return dict(zip(m.next_ids[lo:hi].tolist(), counts.tolist()))

    pos, neg = corpus_model.CLASSES.index("pos"), corpus_model.CLASSES.index("neg")
    assert bigrams(pos, 3) == {0: 2}            # both pos documents start with a
    assert bigrams(pos, 0) == {0: 1, 1: 1, 2: 1}   # a a, a b, a c
    assert bigrams(pos, 1) == {0: 1}            # b a
    assert bigrams(neg, 3) == {1: 1} and bigrams(neg, 1) == {1: 1}
    assert m.uni_cum[pos].tolist() == [4, 5, 6] and m.uni_cum[neg].tolist() == [0, 2, 2]
    assert sorted(m.lengths.tolist()) == [2, 3, 3]


@pytest.mark.slow  # make test-slow: the generator is checked on one shape elsewhere
def test_generation_is_seeded(model):
    a = lines(corpus_generator.Generator(model, seed=1), 300)
    b = lines(corpus_generator.Generator(model, seed=1), 300)
    c = lines(corpus_generator.Generator(model, seed=2), 300)
    assert a == b and a != c and len(a) == 300
    for line in a:
        label, text = line.split("\t")
        assert label in ("pos", "neg") and text and "\t" not in text
    # every token is a word of the tokenizer: reading it again changes nothing
    assert all(corpus_model.tokenize(line.split("\t")[1]) == line.split("\t")[1].split(" ") for line in a)


@pytest.mark.slow  # make test-slow: the generator is checked on one shape elsewhere
def test_vocabulary_follows_the_fitted_heaps_curve(model):
    gen = corpus_generator.Generator(model, seed=0)
    checks = []
    for _ in range(8):                      # 40,000 documents, about 9M tokens
        for _ in gen.chunks(5000):
            pass
        checks.append((gen.tokens, gen.distinct_words))
    assert checks[-1][0] > 4 * model.lengths.sum()      # well beyond the fitted corpus
    for n, v in checks:
        curve = model.heaps_k * n ** model.heaps_beta
        assert abs(v - curve) / curve < 0.10, (n, v, curve)
    # and the words counted are the words written
    gen = corpus_generator.Generator(model, seed=0)
    text = lines(gen, 2000)
    words = {w for line in text for w in line.split("\t")[1].split(" ")}
    assert len(words) == gen.distinct_words


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_the_label_is_learnable(model):
    gen = corpus_generator.Generator(model, seed=0)
    train = [line.split("\t") for line in lines(gen, 4000)]
    test = [line.split("\t") for line in lines(gen, 2000)]
    clf = NBSVMClassifier(n_bits=20).fit([t for _, t in train], [y for y, _ in train])
    acc = np.mean(clf.predict([t for _, t in test]) == np.array([y for y, _ in test]))
    assert 0.45 < np.mean([y == "pos" for y, _ in train]) < 0.55
    assert acc > 0.75            # 4,000 reviews; 25,000 put a plain NB near IMDB's 87%
    stats = corpus_stats.corpus_stats([(t.split(" "), y) for y, t in train],
                           [(t.split(" "), y) for y, t in test], n_bits=20)
    assert stats["mnb_bi_accuracy"] > 70 and stats["documents"] == 4000


BLITZER = shared_datasets() / "blitzer_mds" / "sorted_data_acl_labeled.tar.gz"


@pytest.fixture(scope="module")
def blitzer_models():
    if not BLITZER.exists():
        pytest.skip(f"no Blitzer at {BLITZER}")
    by_domain = corpus_model.blitzer_train(shared_datasets())
    return by_domain, {d: corpus_model.fit(docs, seed=0) for d, docs in by_domain.items()}


@pytest.mark.slow  # make test-slow: the generator is checked on one shape elsewhere
def test_the_multi_domain_variant_is_fitted_per_domain(blitzer_models):
    by_domain, models = blitzer_models
    assert sorted(by_domain) == ["books", "dvd", "electronics", "kitchen"]
    for docs in by_domain.values():            # 1,000 positive and 1,000 negative each
        assert len(docs) == 2000 and sum(y == "pos" for _, y in docs) == 1000
    # each domain's own lengths and vocabulary: books' reviews are longer than kitchen's
    assert np.median(models["books"].lengths) > np.median(models["kitchen"].lengths)
    assert "book" in models["books"].words[:200] and "book" not in models["kitchen"].words[:200]


@pytest.mark.parametrize("labels", corpus_generator.MixedGenerator.LABELS)
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_multi_domain_generation_is_seeded_and_labelled(blitzer_models, labels):
    _, models = blitzer_models
    a = lines(corpus_generator.MixedGenerator(models, seed=3, labels=labels), 5000)
    assert a == lines(corpus_generator.MixedGenerator(models, seed=3, labels=labels), 5000)
    assert a != lines(corpus_generator.MixedGenerator(models, seed=4, labels=labels), 5000)
    assert len(a) == 5000 and all(line.count("\t") == 1 for line in a)
    got = {}
    for line in a:
        label = line.split("\t")[0]
        got[label] = got.get(label, 0) + 1
    want = {"sentiment": ["neg", "pos"], "domain": ["books", "dvd", "electronics", "kitchen"],
            "domain-sentiment": [f"{d}_{s}" for d in ("books", "dvd", "electronics", "kitchen")
                                 for s in ("neg", "pos")]}[labels]
    assert sorted(got) == want
    for n in got.values():                     # drawn uniformly: within 5 standard errors
        p = 1 / len(want)
        assert abs(n / 5000 - p) < 5 * (p * (1 - p) / 5000) ** 0.5
    with pytest.raises(ValueError, match="labels must be one of"):
        corpus_generator.MixedGenerator(models, labels="stars")


@pytest.mark.slow  # make test-slow: the generator is checked on one shape elsewhere
def test_the_domain_is_learnable(blitzer_models):
    """Each document speaks its domain's words: nbsvm tells the four domains apart."""
    _, models = blitzer_models
    gen = corpus_generator.MixedGenerator(models, seed=0, labels="domain")
    train = [line.split("\t") for line in lines(gen, 3000)]
    test = [line.split("\t") for line in lines(gen, 1000)]
    clf = NBSVMClassifier(n_bits=20).fit([t for _, t in train], [y for y, _ in train])
    acc = np.mean(clf.predict([t for _, t in test]) == np.array([y for y, _ in test]))
    assert acc > 0.80, acc
