"""The NB lexicon against the dense, loop-based reference of DESIGN.md."""
import math

import numpy as np
import pytest

from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document
from nbsvm.lexicon.build import build_lexicon
from nbsvm.lexicon.nblexicon import NBLexicon, nb_ratios
from nbsvm.text.hashing import Hasher

from naive import naive_buckets, naive_ratios

BINARY = [
    ("a great great film, loved it", "pos"),
    ("great fun and a great cast", "pos"),
    ("loved the music", "pos"),
    ("an awful film", "neg"),
    ("awful, dull and boring boring", "neg"),
    ("the cast was dull", "neg"),
    ("not great, not awful", "neg"),
]

THREE = [
    ("great film loved it", "pos"),
    ("great great fun", "pos"),
    ("awful dull film", "neg"),
    ("boring awful", "neg"),
    ("the film was okay", "mid"),
    ("okay, not great not awful", "mid"),
    ("fine okay film", "mid"),
    ("loved it, fun", "pos"),
]


def _naive(corpus, ngrams, n_bits, alpha):
    docs = [naive_buckets(t, ngrams, n_bits) for t, _ in corpus]
    return naive_ratios(docs, [l for _, l in corpus], 1 << n_bits, alpha)


@pytest.mark.parametrize("n_bits", [4, 12])      # 4 bits: many collisions
@pytest.mark.parametrize("alpha", [1.0, 0.5])
@pytest.mark.parametrize("ngrams", [1, 2])
def test_binary_ratios_equal_naive(n_bits, alpha, ngrams):
    lex = NBLexicon(Hasher(ngrams=ngrams, n_bits=n_bits), alpha=alpha)
    lex.fit([t for t, _ in BINARY], [l for _, l in BINARY])
    classes, ref = _naive(BINARY, ngrams, n_bits, alpha)
    assert lex.classes_ == classes == ["neg", "pos"]
    r = lex.ratios()
    assert r.shape == (1, 1 << n_bits)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r[0], np.array(ref[0]), rtol=1e-6, atol=1e-6)
    # unseen buckets are exactly zero
    seen = np.zeros(1 << n_bits, bool)
    for t, _ in BINARY:
        seen[naive_buckets(t, ngrams, n_bits)] = True
    assert np.all(r[0][~seen] == 0.0)
    assert lex.n_seen_ == int(seen.sum())


def test_binary_ratios_hand_computed():
    # 1-grams, two distinct words in distinct buckets; compute the ratios by hand.
    h = Hasher(ngrams=1, n_bits=10)
    lex = NBLexicon(h).fit(["good good", "good", "bad"], ["pos", "pos", "neg"])
    g, b = int(h.buckets("good")[0]), int(h.buckets("bad")[0])
    assert g != b
    # binarized: pos has good in 2 docs; neg has bad in 1 doc
    # p = [good: 1+2, bad: 1+0] -> norm 4 ; q = [good: 1+0, bad: 1+1] -> norm 3
    r = lex.ratios()[0]
    assert r[g] == pytest.approx(math.log((3 / 4) / (1 / 3)), rel=1e-6)
    assert r[b] == pytest.approx(math.log((1 / 4) / (2 / 3)), rel=1e-6)
    assert np.count_nonzero(r) == 2
    assert lex.counts().tolist()[0][b] == 1 and lex.counts().tolist()[1][g] == 2
    assert lex.class_counts_.tolist() == [1, 2]


def test_three_class_ratios_equal_naive_one_vs_rest():
    n_bits = 8
    lex = NBLexicon(Hasher(ngrams=2, n_bits=n_bits)).fit([t for t, _ in THREE],
                                                         [l for _, l in THREE])
    classes, ref = _naive(THREE, 2, n_bits, 1.0)
    assert lex.classes_ == classes == ["mid", "neg", "pos"]
    r = lex.ratios()
    assert r.shape == (3, 1 << n_bits)
    np.testing.assert_allclose(r, np.array(ref), rtol=1e-6, atol=1e-6)
    assert lex.class_counts_.tolist() == [3, 2, 3]


def test_ratio_alpha_override():
    lex = NBLexicon(Hasher(ngrams=1, n_bits=10), alpha=1.0).fit(
        [t for t, _ in BINARY], [l for _, l in BINARY])
    _, ref = _naive(BINARY, 1, 10, 0.25)
    np.testing.assert_allclose(lex.ratios(alpha=0.25)[0], ref[0], rtol=1e-6, atol=1e-6)


def test_nb_ratios_function_direct():
    pos = np.array([2, 0, 0, 1], np.int32)
    neg = np.array([0, 0, 3, 1], np.int32)
    r = nb_ratios(pos, neg, 1.0)
    # seen: 0, 2, 3 ; p = [3, 1, 2] / 6 ; q = [1, 4, 2] / 7
    exp = [math.log((3 / 6) / (1 / 7)), 0.0, math.log((1 / 6) / (4 / 7)),
           math.log((2 / 6) / (2 / 7))]
    np.testing.assert_allclose(r, exp, rtol=1e-6)
    assert r[1] == 0.0


def test_partial_fit_equals_fit():
    texts, labels = [t for t, _ in BINARY], [l for _, l in BINARY]
    a = NBLexicon(Hasher(ngrams=2, n_bits=10)).fit(texts, labels)
    b = NBLexicon(Hasher(ngrams=2, n_bits=10))
    b.partial_fit(texts[:3], labels[:3]).partial_fit(texts[3:], labels[3:])
    assert np.array_equal(a.counts(), b.counts())
    assert np.array_equal(a.ratios(), b.ratios())


@pytest.mark.parametrize("corpus", [BINARY, THREE], ids=["binary", "three"])
def test_save_load_round_trip(tmp_path, corpus):
    lex = NBLexicon(Hasher(ngrams=2, n_bits=9, char_ngrams=3, seed=11), alpha=0.7)
    lex.fit([t for t, _ in corpus], [l for _, l in corpus])
    path = tmp_path / "lex.npz"
    lex.save(path)
    back = NBLexicon.load(path)
    assert back.hasher == lex.hasher
    assert back.alpha == 0.7
    assert back.classes_ == lex.classes_
    assert np.array_equal(back.class_counts_, lex.class_counts_)
    assert np.array_equal(back.counts(), lex.counts())
    assert np.array_equal(back.ratios(), lex.ratios())
    assert back.n_seen_ == lex.n_seen_
    assert [p.name for p in tmp_path.iterdir()] == ["lex.npz"]


def test_load_garbage_and_missing_file(tmp_path):
    p = tmp_path / "x.npz"
    p.write_bytes(b"this is not a zip file at all" * 10)
    with pytest.raises(NBSVMError, match="x.npz"):
        NBLexicon.load(p)
    with pytest.raises(NBSVMError, match="no such file"):
        NBLexicon.load(tmp_path / "missing.npz")


def test_build_lexicon_on_documents_equals_fit():
    docs = [Document(l, t, "mem", i + 1) for i, (t, l) in enumerate(THREE)]
    events = []
    lex = build_lexicon(iter(docs), Hasher(ngrams=2, n_bits=8), alpha=1.0, callback=events.append)
    classes, ref = _naive(THREE, 2, 8, 1.0)
    assert lex.classes_ == classes
    np.testing.assert_allclose(lex.ratios(), np.array(ref), rtol=1e-6, atol=1e-6)
    assert events and events[-1] == {"stage": "lexicon", "docs": len(THREE)}


def test_build_lexicon_errors():
    with pytest.raises(NBSVMError, match="no labeled documents"):
        build_lexicon(iter([]), Hasher(n_bits=8))
    docs = [Document("pos", "a", "f.txt", 1), Document(None, "b", "f.txt", 2)]
    with pytest.raises(NBSVMError, match=r"f\.txt:2"):
        build_lexicon(iter(docs), Hasher(n_bits=8))


def test_single_class_and_unfitted_errors():
    lex = NBLexicon(Hasher(n_bits=6))
    with pytest.raises(NBSVMError, match="no documents"):
        lex.classes_
    lex.fit(["a b", "c"], ["pos", "pos"])
    with pytest.raises(NBSVMError, match="two classes"):
        lex.ratios()
    with pytest.raises(NBSVMError, match="alpha"):
        NBLexicon(Hasher(n_bits=6), alpha=0).fit(["a"], ["x"])


def test_fit_checks_its_input_before_counting_and_forgets_the_old_corpus():
    """A missing label became a class 'None'; a length mismatch registered its extra
    label before failing, so the next call counted a phantom third class; a single string
    was read as one document per character; alpha inf wrote a file nothing could load;
    a refit lexicon kept the corpus of the data it counted first (train --lexicon's
    defaults then came from that data)."""
    texts, labels = ["good fun", "bad dull", "great film", "awful plot"] * 3, ["pos", "neg"] * 6
    with pytest.raises(NBSVMError, match=r"y\[0\] is None"):
        NBLexicon(Hasher(n_bits=10)).fit(texts, [None] + labels[1:])
    grown = NBLexicon(Hasher(ngrams=1, n_bits=10), alpha=None)
    with pytest.raises(NBSVMError, match="X has 12 documents but y has 13 labels"):
        grown.partial_fit(texts, labels + ["oops"])
    assert grown.partial_fit(texts, labels).classes_ == ["neg", "pos"]
    assert grown.smoothing() == 1.0  # two classes' alpha, not three's
    with pytest.raises(NBSVMError, match="not a single string"):
        NBLexicon(Hasher(n_bits=10)).fit("good bad", "pnpnpnpn")
    for alpha in (float("inf"), True):
        with pytest.raises(NBSVMError, match="positive finite number"):
            NBLexicon(Hasher(n_bits=10), alpha=alpha).fit(texts, labels)
    assert NBLexicon(Hasher(n_bits=10), alpha=np.float32(0.5)).fit(texts, labels).classes_
    counted = build_lexicon([Document(y, t, "x", i) for i, (t, y) in enumerate(zip(texts, labels))],
                            Hasher(n_bits=10))
    assert counted.corpus_ is not None and counted.corpus_["documents"] == 12
    counted.fit(texts[:4], labels[:4])
    assert counted.corpus_ is None


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_lexicon_of_many_classes_is_written_as_pairs_and_reads_back_the_same(tmp_path):
    """A lexicon was written as a dense row of counts per class over every bucket seen:
    500 classes of short texts took 1.35 GB for 22 MB of non-zero counts (and `nbsvm
    lexicon` 1.5 GB of memory). Where most counts are zero it is written as pairs, and
    one-vs-rest ratios build rows over the kept buckets only."""
    from nbsvm import NBSVMClassifier
    from nbsvm.io.npzfile import load_npz

    rng = np.random.default_rng(0)
    vocab = [f"w{j}" for j in range(3000)]
    texts = [" ".join(rng.choice(vocab, 8)) for _ in range(1200)]
    labels = [f"c{i % 60}" for i in range(1200)]
    lex = NBLexicon(Hasher(ngrams=2, n_bits=16)).fit(texts, labels)
    path = tmp_path / "lex.npz"
    lex.save(path)
    header, arrays = load_npz(path, "lexicon")
    assert "pair_counts" in arrays and "counts" not in arrays
    # format 3, so that an older nbsvm says "written by a newer nbsvm", not "corrupted"
    assert header["format_version"] == 3
    NBLexicon(Hasher(ngrams=1, n_bits=12)).fit(["a b", "c d"], ["x", "y"]).save(
        tmp_path / "two.npz")
    assert load_npz(tmp_path / "two.npz", "lexicon")[0]["format_version"] == 2
    buckets, dense = lex.compact()
    assert arrays["pair_counts"].size == np.count_nonzero(dense)
    back = NBLexicon.load(path)
    assert back.classes_ == lex.classes_ and np.array_equal(back.compact()[1], dense)
    assert np.array_equal(back.class_counts_, lex.class_counts_)
    for min_df in (1, 2):
        kept, ratios = back.kept_ratios(min_df=min_df)
        df = dense.sum(axis=0)
        assert np.array_equal(kept, buckets[df >= min_df])
        rows = dense[:, df >= min_df].astype(np.float64)   # by hand: class against the rest
        total = rows.sum(axis=0)
        for k in (0, 17, 59):
            p = (rows[k] + 1.0) / (rows[k] + 1.0).sum()
            q = (total - rows[k] + 1.0) / (total - rows[k] + 1.0).sum()
            assert np.allclose(ratios[k], np.log(p / q), atol=1e-6)
    # a model that keeps its counts writes them so too, and trains on as before
    clf = NBSVMClassifier(n_bits=16, keep_counts=True, epochs=1, min_df=1).fit(texts, labels)
    clf.save(tmp_path / "m.npz")
    _, arrays = load_npz(tmp_path / "m.npz", "model")
    assert "lexicon_pair_counts" in arrays
    again = NBSVMClassifier.load(tmp_path / "m.npz")
    assert np.array_equal(again.lexicon_.compact()[1], clf.lexicon_.compact()[1])
    again.partial_fit(texts[:60], labels[:60])


def test_lexicon_multilabel_counts_empty_label_sets_as_train_does(tmp_path):
    """nbsvm lexicon refused a multi-label corpus's empty label sets ('<TAB>text': a
    negative of every label for train --multilabel), so such a corpus had no lexicon; with
    --multilabel it counts them, and train --multilabel --lexicon learns the NB ratios
    that train --multilabel counts itself."""
    from pathlib import Path

    from testhelpers import run_cli

    from nbsvm import NBSVMClassifier

    tags = Path(__file__).parents[1] / "data" / "tags.txt"
    src = tmp_path / "tags.txt"
    src.write_text(tags.read_text() + "\tA quiet day with nothing to report.\n"
                   "\tThe meeting was moved to Tuesday.\n")
    lexicon, direct, via = (tmp_path / n for n in ("lex.npz", "direct.npz", "via.npz"))
    out = run_cli("lexicon", src, "-o", lexicon, "--n-bits", "14", "-q")
    assert out.returncode == 2 and "empty label" in out.stderr and not lexicon.exists()
    out = run_cli("lexicon", src, "--multilabel", "-o", lexicon, "--n-bits", "14", "--json")
    assert out.returncode == 0, out.stderr
    import json

    assert json.loads(out.stdout)["classes"][""] == 2  # the empty set's documents
    for model, extra in ((direct, ()), (via, ("--lexicon", lexicon))):
        out = run_cli("train", src, "--multilabel", "--n-bits", "14", "-o", model, "-q", *extra)
        assert out.returncode == 0, out.stderr
    a, b = NBSVMClassifier.load(direct), NBSVMClassifier.load(via)
    assert a.class_names_ == b.class_names_ and np.array_equal(a.class_counts_, b.class_counts_)
    assert np.array_equal(a.ratios_, b.ratios_) and np.isfinite(b.ratios_).all()


def test_counts_above_their_class_documents_are_a_corrupted_file(tmp_path):
    """A lexicon whose class counts were edited (checksum signed again) below its bucket
    counts loaded, and training then failed with 'class has only documents of weight 0'
    or 'every document is empty', naming nothing of the file: refused when read."""
    import json
    from nbsvm.io.npzfile import checksum
    docs = [Document("pos", "good fun film", "<t>", 1), Document("neg", "bad dull film", "<t>", 2)]
    lex = build_lexicon(docs * 5, Hasher(ngrams=1, n_bits=10), 1.0)
    lex.save(tmp_path / "lex.npz")
    assert NBLexicon.load(tmp_path / "lex.npz").class_counts_.tolist() == [5, 5]
    z = np.load(tmp_path / "lex.npz", allow_pickle=False)
    arrays = {k: z[k] for k in z.files if k != "__header__"}
    header = json.loads(bytes(z["__header__"]).decode())
    header["class_counts"] = [0, 5]
    header.pop("checksum")
    header["checksum"] = checksum(arrays, header if header.get("format_version", 1) >= 2 else None)
    blob = np.frombuffer(json.dumps(header, sort_keys=True).encode(), dtype=np.uint8)
    np.savez(tmp_path / "edited.npz", __header__=blob, **arrays)
    with pytest.raises(NBSVMError, match="corrupted lexicon file: a bucket counted in more "
                                         "documents than its class has") as e:
        NBLexicon.load(tmp_path / "edited.npz")
    assert "edited.npz" in str(e.value)
