"""Sparse (bucket, class) counts against dense counting, and the lexicon's memory with
many classes."""
import numpy as np
import pytest

from nbsvm.config import NEW_TOKENIZER
from nbsvm.lexicon import paircounts
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.lexicon.paircounts import PairCounts
from nbsvm.text.hashing import Hasher

from naive import naive_ratios


def _random_batches(rng, n_batches, n_codes, n_buckets):
    for _ in range(n_batches):
        n_docs = int(rng.integers(1, 40))
        docs = [np.unique(rng.integers(0, n_buckets, int(rng.integers(0, 12))))
                for _ in range(n_docs)]
        offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
        ids = np.concatenate(docs).astype(np.int32) if docs else np.zeros(0, np.int32)
        yield ids, offsets, rng.integers(0, n_codes, n_docs).astype(np.int32)


@pytest.mark.parametrize("flush_keys", [1, 7, 1 << 22])
def test_pair_counts_equal_dense_counts(monkeypatch, flush_keys):
    monkeypatch.setattr(paircounts, "FLUSH_KEYS", flush_keys)   # merges after every batch, or never
    rng = np.random.default_rng(flush_keys)
    dense = np.zeros((5, 300), np.int64)
    pc = PairCounts()
    for ids, offsets, codes in _random_batches(rng, 30, 5, 300):
        pc.add(ids, offsets, codes)
        for d, c in enumerate(codes):
            dense[c, ids[offsets[d]:offsets[d + 1]]] += 1
    order = np.array([3, 0, 4, 1, 2])
    buckets, rows = pc.rows(order)
    seen = np.flatnonzero(dense.sum(axis=0))
    assert buckets.tolist() == seen.tolist()
    assert np.array_equal(rows, dense[order][:, seen])
    assert np.array_equal(PairCounts.from_dense(dense.astype(np.int32)).rows(order)[1], rows)
    # a code left out of the rows is left out, not folded into another row
    assert np.array_equal(pc.rows(np.array([1]))[1], dense[[1]][:, seen])


def test_many_class_lexicon_is_sparse_and_exact():
    corpus = [(f"w{i % 7} w{i % 11} common t{i}", f"c{i % 6}") for i in range(200)]
    h = Hasher(ngrams=2, n_bits=12)
    lex = NBLexicon(h, alpha=0.5).fit([t for t, _ in corpus], [l for _, l in corpus])
    assert not lex.dense
    docs = [sorted(set(h.buckets(t))) for t, _ in corpus]
    classes, ref = naive_ratios(docs, [l for _, l in corpus], 1 << 12, 0.5)
    assert lex.classes_ == classes
    np.testing.assert_allclose(lex.ratios(), np.array(ref), rtol=1e-6, atol=1e-6)
    _, ref3 = naive_ratios(docs, [l for _, l in corpus], 1 << 12, 0.5, min_df=3)
    np.testing.assert_allclose(lex.ratios(min_df=3), np.array(ref3), rtol=1e-6, atol=1e-6)
    dense = np.zeros((6, 1 << 12), np.int64)
    for d, (_, label) in zip(docs, corpus):
        dense[int(label[1:]), d] += 1
    assert np.array_equal(lex.counts(), dense)
    assert lex.n_seen_ == int(np.count_nonzero(dense.sum(axis=0)))
    # two classes counted in lent dense rows (as the trainer does), then a third: the
    # switch to pairs keeps every count
    from nbsvm.memory import releasable_int32
    mm, store = releasable_int32((2, 1 << 12))
    two = NBLexicon.counting_in(h, 0.5, store, mm)
    two.partial_fit([t for t, _ in corpus[:40]], ["a" if i % 2 else "b" for i in range(40)])
    assert two.dense and two.counts_in(store)
    before = two.counts()
    two.partial_fit(["w1 w2"], ["z"])
    assert not two.dense and not two.counts_in(store)
    after = two.counts()
    assert np.array_equal(after[:2], before)
    assert after[2].sum() == len(set(h.buckets("w1 w2")))


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_twenty_class_lexicon_memory_follows_pairs_not_classes(tmp_path):
    """20 classes at 2**26 buckets: dense rows would take 20 x 256 MB = 5 GB; the pairs
    seen take a few MB (the process peaks near the interpreter's own size)."""
    import subprocess
    import sys
    data = tmp_path / "many.tsv"
    rng = np.random.default_rng(0)
    with open(data, "w") as f:
        for i in range(2000):
            words = " ".join(f"w{j}" for j in rng.integers(0, 5000, 30))
            f.write(f"class{i % 20}\t{words}\n")
    cli = [sys.executable, "-c", "from nbsvm.cli import main; main()", "lexicon", str(data), "-o", str(tmp_path / "lex.npz"),
           "--n-bits", "26", "--ngrams", "2", "--quiet"]
    # a fresh parent whose only child is the CLI: its children's peak is the CLI's
    code = ("import resource, subprocess, sys\n"
            f"subprocess.run({cli!r}, check=True)\n"
            "print('PEAK', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    peak_mb = int(out.stdout.split("PEAK")[-1])
    assert peak_mb < 400, out.stdout
    lex = NBLexicon.load(tmp_path / "lex.npz")
    assert len(lex.classes_) == 20 and lex.class_counts_.sum() == 2000
    buckets, counts = lex.compact()
    assert counts.shape == (20, len(buckets)) and counts.sum() > 2000 * 30


@pytest.mark.parametrize("min_df", [1, 2])
def test_training_from_a_many_class_lexicon_equals_training_without(min_df):
    """A sparse lexicon's columns and ratios equal the trainer's own counts by kept column
    bit for bit (every sum is of integers). (The epochs differ by design: with a lexicon
    the first one streams in input order.)"""
    from nbsvm import NBSVMClassifier
    from nbsvm.io.document import Document
    corpus = [(f"w{i % 7} w{i % 11} common t{i % 13} x{i % 5}", f"c{i % 4}") for i in range(120)]
    docs = [Document(l, t, "mem", i + 1) for i, (t, l) in enumerate(corpus)]
    kw = dict(ngrams=2, n_bits=10, min_df=min_df, epochs=3, seed=1)
    plain = NBSVMClassifier(char_ngrams=0, **kw).fit_documents(iter(docs))
    lex = NBLexicon(Hasher(ngrams=2, n_bits=10, **NEW_TOKENIZER)).fit([t for t, _ in corpus],
                                                     [l for _, l in corpus])
    from_lex = NBSVMClassifier(char_ngrams=0, **kw).fit_documents(iter(docs), lexicon=lex)
    assert np.array_equal(plain.column_of_, from_lex.column_of_)
    assert np.array_equal(plain.ratios_, from_lex.ratios_)
    assert from_lex.n_seen_buckets_ == plain.n_seen_buckets_


@pytest.mark.parametrize("hot", [None, 20], ids=["in order", "hot first"])
@pytest.mark.parametrize("min_df", [1, 2])
def test_a_label_set_lexicon_gives_the_multilabel_columns_bit_for_bit(monkeypatch, min_df, hot):
    """A lexicon whose classes are label-set keys (as `nbsvm lexicon` or Dask's shards
    count them) gives a multi-label model the ratios its own counting by kept column
    gives: label k's counts are the sums over the keys that hold k; the columns laid out
    the same (``hot``: HOT_COLUMNS, which the 140 documents' columns all fit by default)."""
    from nbsvm import NBSVMClassifier
    from nbsvm.io.document import Document
    if hot is not None:
        monkeypatch.setattr("nbsvm.models.columns.HOT_COLUMNS", hot)
    keys = ["a", "a,b", "b", "b,c", "", "c,a", "c"]
    corpus = [(f"w{i % 7} w{i % 11} common t{i % 13} x{i % 5}", keys[i % 7]) for i in range(140)]
    docs = [Document(l, t, "mem", i + 1) for i, (t, l) in enumerate(corpus)]
    kw = dict(ngrams=2, n_bits=10, min_df=min_df, epochs=2, seed=1, multilabel=True)
    plain = NBSVMClassifier(char_ngrams=0, **kw).fit_documents(iter(docs))
    lex = NBLexicon(Hasher(ngrams=2, n_bits=10, **NEW_TOKENIZER)).fit([t for t, _ in corpus],
                                                     [l for _, l in corpus])
    from_lex = NBSVMClassifier(char_ngrams=0, **kw).fit_documents(iter(docs), lexicon=lex)
    assert from_lex.classes_ == plain.classes_ == ["a", "b", "c"]
    assert np.array_equal(plain.column_of_, from_lex.column_of_)
    kept = np.flatnonzero(plain.column_of_ >= 0)
    assert (plain.column_of_[kept] == np.arange(kept.size)).all() == (hot is None)
    assert np.array_equal(plain.ratios_, from_lex.ratios_)
    assert from_lex.class_counts_.tolist() == plain.class_counts_.tolist() == [60, 60, 60]
