"""Streaming batches (reader thread), the binary feature cache, and training from the cache
against training by hand from the same pieces."""
import functools
import threading
import time

import numpy as np
import pytest

from nbsvm import NBLexicon, NBSVMClassifier, NBSVMError
from nbsvm.data.batches import hash_batch, hash_batches
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.io.document import Document
from nbsvm.io.labeled_lines import read_lines
from nbsvm.learners import LinearSGD
from nbsvm.text.hashing import Hasher

from conftest import synthetic
from naive import model_file_arrays, naive_buckets
from testhelpers import first_epoch_kept, kept_cache

HASHER = Hasher(ngrams=2, n_bits=16, char_ngrams=0, seed=3)


def reader_threads():
    """The pipeline's threads still alive (reader, hasher: all named 'nbsvm-...')."""
    return [t for t in threading.enumerate() if t.name.startswith("nbsvm-") and t.is_alive()]


def wait_for_readers(timeout=2.0):
    deadline = time.monotonic() + timeout
    for t in reader_threads():
        t.join(max(0.0, deadline - time.monotonic()))
    return reader_threads()


# -- hash_batches: the reader thread --------------------------------------------------------

def test_hash_batches_equal_hashing_in_the_calling_thread():
    docs = synthetic(1100, n_classes=3)
    batches = list(hash_batches(iter(docs), HASHER, batch_docs=250))
    assert [len(b) for b in batches] == [250] * 4 + [100]
    assert [l for b in batches for l in b.labels] == [d.label for d in docs]
    assert [l for b in batches for l in b.lines] == list(range(1, 1101))
    assert all(s == "mem.txt" for b in batches for s in b.sources)
    assert batches[2].where(7) == {"path": "mem.txt", "line": 508}
    whole = hash_batch(docs, HASHER)
    assert np.array_equal(np.concatenate([b.ids for b in batches]), whole.ids)
    for b in batches:
        assert b.offsets[0] == 0 and b.offsets.dtype == np.int64 and b.ids.dtype == np.int32
    for j in (0, 333, 1099):
        b, i = batches[j // 250], j % 250
        assert b.ids[b.offsets[i]:b.offsets[i + 1]].tolist() == naive_buckets(docs[j].text, 2, 16, 3)
    assert list(hash_batches(iter([]), HASHER)) == []
    assert wait_for_readers() == []


def test_hash_batches_gate_holds_back_the_second_hasher():
    """The test set hashed beside single-threaded epochs: one hasher until the gate opens
    (someone waits for the cache), then both; the batches are those without a gate, in
    order, and the stream ends only once every hasher has, so after the gate opens."""
    docs = synthetic(1100, n_classes=3)
    gate = threading.Event()
    seen = []
    stream = hash_batches(iter(docs), HASHER, batch_docs=100, hashers=2, gate=gate)
    for batch in stream:
        seen.append(batch)
        assert threading.current_thread().name == "MainThread"
        if len(seen) == 11:  # every batch came from the first hasher alone
            assert not gate.is_set()
            threading.Timer(0.2, gate.set).start()
    assert gate.is_set()  # (the end waited for the second hasher)
    plain = list(hash_batches(iter(docs), HASHER, batch_docs=100, hashers=2))
    assert [b.lines for b in seen] == [b.lines for b in plain]
    assert np.array_equal(np.concatenate([b.ids for b in seen]),
                          np.concatenate([b.ids for b in plain]))
    assert wait_for_readers() == []


def test_hash_batches_translate_buckets_to_columns():
    # with a bucket -> column map, ids become columns in the same order, unmapped dropped
    docs = synthetic(700, seed=5)
    rng = np.random.default_rng(0)
    remap = np.full(1 << 16, -1, np.int32)
    chosen = np.sort(rng.choice(1 << 16, size=20_000, replace=False))
    remap[chosen] = np.arange(chosen.size, dtype=np.int32)
    batches = list(hash_batches(iter(docs), HASHER, batch_docs=300, remap=remap))
    assert [len(b) for b in batches] == [300, 300, 100]
    n_dropped = 0
    for j, doc in enumerate(docs):
        b, i = batches[j // 300], j % 300
        ref = naive_buckets(doc.text, 2, 16, 3)
        want = [int(remap[x]) for x in ref if remap[x] >= 0]
        n_dropped += len(ref) - len(want)
        assert b.ids[b.offsets[i]:b.offsets[i + 1]].tolist() == want
    assert n_dropped > 1000
    assert wait_for_readers() == []


def test_hash_batches_reading_error_surfaces_in_the_consumer(tmp_path):
    p = tmp_path / "big.txt"
    lines = [f"{'pos' if i % 2 else 'neg'}\tdocument number {i} is fine" for i in range(1, 6001)]
    lines[4999] = "line 5000 has no tab at all"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = []
    caller = threading.current_thread()
    with pytest.raises(NBSVMError) as ei:
        for batch in hash_batches(read_lines(p), HASHER, batch_docs=1000):
            assert threading.current_thread() is caller
            got.append(len(batch))
    assert ei.value.path == str(p) and ei.value.line == 5000
    assert str(ei.value).startswith(f"{p}:5000: ") and "TAB" in str(ei.value)
    assert got == [1000] * 4                 # every complete batch before the bad line
    assert wait_for_readers() == []


def test_hash_batches_error_from_any_iterator_is_reraised_as_is():
    class Boom(Exception):
        pass

    def docs():
        for i in range(700):
            yield Document("a", f"text {i}", "gen", i + 1)
        raise Boom("from the reader thread")

    n = 0
    with pytest.raises(Boom, match="from the reader thread"):
        for batch in hash_batches(docs(), HASHER, batch_docs=300):
            n += len(batch)
    assert n == 600
    assert wait_for_readers() == []


def _endless():
    i = 0
    while True:
        i += 1
        yield Document("pos" if i % 2 else "neg", f"endless document {i} with words", "inf", i)


def test_closing_early_stops_the_reader_promptly():
    gen = hash_batches(_endless(), HASHER, batch_docs=100)
    first = next(gen)
    assert len(first) == 100
    t0 = time.monotonic()
    gen.close()
    assert time.monotonic() - t0 < 2.0
    assert wait_for_readers(1.0) == []

    for batch in hash_batches(_endless(), HASHER, batch_docs=100):    # break out of a loop
        break
    assert wait_for_readers(1.0) == []


def test_error_in_the_consumer_stops_the_reader():
    def consume():
        for batch in hash_batches(_endless(), HASHER, batch_docs=50):
            if batch.lines[0] > 200:
                raise RuntimeError("consumer failed")

    with pytest.raises(RuntimeError, match="consumer failed"):
        consume()
    assert wait_for_readers(2.0) == []


def test_training_with_unknown_label_stops_cleanly(tmp_path):
    # a label the lexicon does not know, deep into the stream: error names file:line,
    # the reader thread ends and the cache folder is removed
    docs = synthetic(3000)
    lex = NBLexicon(HASHER).fit([d.text for d in docs], [d.label for d in docs])
    docs[2100] = Document("surprise", "some text", "mem.txt", 2101)
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, hash_seed=3, split_scripts=False, long_words=0, epochs=2, cache_dir=str(tmp_path))
    with pytest.raises(NBSVMError, match=r"mem\.txt:2101: unknown label 'surprise'"):
        clf.fit_documents(iter(docs), lexicon=lex)
    assert wait_for_readers(2.0) == []
    assert list(tmp_path.iterdir()) == []


# -- the feature cache ----------------------------------------------------------------------

LABELED = [("neg", "an awful film"), ("neg", "dull"), ("pos", "a great film, loved it"),
           ("neg", ""), ("mid", "okay I guess"), ("pos", "Café 東京!"), ("mid", "fine fine"),
           ("pos", "great great great"), ("neg", "awful, awful <br /> dull"), ("mid", "meh."),
           ("pos", "wonderful"), ("neg", "boring; plot")] * 3


@pytest.fixture
def labeled_file(tmp_path):
    p = tmp_path / "data.txt"
    p.write_text("".join(f"{l}\t{t}\n" for l, t in LABELED), encoding="utf-8")
    return p


def _write_cache(folder, path, hasher=HASHER, batch_docs=7):
    writer = CacheWriter(folder, hasher)
    codes = [writer.add(b) for b in hash_batches(read_lines(path), hasher, batch_docs=batch_docs)]
    return writer, np.concatenate(codes)


def test_cache_round_trip(tmp_path, labeled_file):
    folder = tmp_path / "cache" / "train"
    writer, codes = _write_cache(folder, labeled_file)
    assert not folder.exists()                          # published only by close()
    cache = writer.close()
    assert cache.folder == folder and folder.is_dir()
    refs = [naive_buckets(t, 2, 16, 3) for _, t in LABELED]
    ids = np.concatenate([np.asarray(r, np.int32) for r in refs])
    offsets = np.cumsum([0] + [len(r) for r in refs])
    assert cache.n_docs == len(LABELED) and cache.n_ids == ids.size
    assert cache.labels == ["neg", "pos", "mid"]         # order of first appearance
    assert cache.first_seen == [{"path": str(labeled_file), "line": 1},
                                {"path": str(labeled_file), "line": 3},
                                {"path": str(labeled_file), "line": 5}]
    assert cache.hasher == HASHER
    want_codes = [cache.labels.index(l) for l, _ in LABELED]
    assert codes.tolist() == want_codes
    # the documented on-disk format: three raw little-endian arrays
    assert np.array_equal(np.fromfile(folder / "ids.i32", dtype="<i4"), ids)
    assert np.array_equal(np.fromfile(folder / "offsets.i64", dtype="<i8"), offsets)
    assert np.fromfile(folder / "labels.i32", dtype="<i4").tolist() == want_codes
    # read back: all rows, a range, and batches of any size
    got_ids, got_offsets, got_codes = cache.rows(0, cache.n_docs)
    assert np.array_equal(got_ids, ids) and np.array_equal(got_offsets, offsets)
    assert got_codes.tolist() == want_codes
    part_ids, part_offsets, part_codes = cache.rows(5, 9)
    assert part_offsets.tolist() == (offsets[5:10] - offsets[5]).tolist()
    assert np.array_equal(part_ids, ids[offsets[5]:offsets[9]])
    assert part_codes.tolist() == want_codes[5:9]
    for chunk in (1, 5, 8192):
        batches = list(cache.batches(chunk))
        assert [len(b) for b in batches] == \
            [min(chunk, cache.n_docs - s) for s in range(0, cache.n_docs, chunk)]
        assert np.array_equal(np.concatenate([b.ids for b in batches]), ids)
        assert [int(c) for b in batches for c in b.labels] == want_codes
        for b in batches:
            assert b.offsets[0] == 0 and b.offsets[-1] == b.ids.size
    # reopened from disk: the same
    again = FeatureCache(folder)
    assert (again.n_docs, again.n_ids, again.labels, again.first_seen, again.hasher) == \
        (cache.n_docs, cache.n_ids, cache.labels, cache.first_seen, cache.hasher)
    assert np.array_equal(again.rows(0, again.n_docs)[0], ids)
    again.close()
    cache.close()
    assert not list(tmp_path.rglob("*.nbsvm-tmp*"))
    assert sorted(p.name for p in folder.iterdir()) == \
        ["ids.i32", "labels.i32", "meta.json", "offsets.i64", "weights.f64"]


def test_cache_close_replaces_an_older_cache(tmp_path, labeled_file):
    folder = tmp_path / "c"
    _write_cache(folder, labeled_file)[0].close().close()
    writer = CacheWriter(folder, HASHER)
    writer.add(hash_batch([Document("x", "only one", "m", 1)], HASHER))
    cache = writer.close()
    assert cache.n_docs == 1 and cache.labels == ["x"]
    assert cache.rows(0, 1)[0].tolist() == naive_buckets("only one", 2, 16, 3)
    assert not list(tmp_path.rglob("*.nbsvm-tmp*"))


def test_empty_cache(tmp_path):
    cache = CacheWriter(tmp_path / "e", HASHER).close()
    assert cache.n_docs == 0 and cache.n_ids == 0 and cache.labels == []
    assert list(cache.batches()) == []
    assert list(cache.shuffled_groups(np.random.default_rng(0))) == []


def test_cache_abort_leaves_nothing(tmp_path, labeled_file):
    writer, _ = _write_cache(tmp_path / "c", labeled_file)
    writer.abort()
    assert list(tmp_path.iterdir()) == [labeled_file]


@pytest.mark.parametrize("name, cut", [("ids.i32", 4), ("ids.i32", 1), ("offsets.i64", 8),
                                       ("labels.i32", 4)])
def test_truncated_cache_is_refused(tmp_path, labeled_file, name, cut):
    folder = tmp_path / "c"
    _write_cache(folder, labeled_file)[0].close().close()
    p = folder / name
    p.write_bytes(p.read_bytes()[:-cut])
    with pytest.raises(NBSVMError, match=f"truncated feature cache \\({name}\\)") as ei:
        FeatureCache(folder)
    assert ei.value.path == str(folder)


def test_damaged_cache_is_refused(tmp_path, labeled_file):
    folder = tmp_path / "c"
    _write_cache(folder, labeled_file)[0].close().close()
    offsets = np.fromfile(folder / "offsets.i64", dtype="<i8")
    offsets[0] = 3
    offsets.tofile(folder / "offsets.i64")
    with pytest.raises(NBSVMError, match="corrupted feature cache"):
        FeatureCache(folder)
    (folder / "meta.json").write_text("{not json")
    with pytest.raises(NBSVMError, match="unusable feature cache"):
        FeatureCache(folder)
    (folder / "meta.json").unlink()
    with pytest.raises(NBSVMError, match="unusable feature cache"):
        FeatureCache(folder)


@pytest.mark.parametrize("buffer_bytes, block_bytes", [(16 << 20, 256 << 10), (2000, 400),
                                                       (1, 1)])
def test_shuffled_groups_visit_every_document_once(tmp_path, buffer_bytes, block_bytes):
    docs = synthetic(900, n_classes=3, seed=4, words=8, unique=True)
    writer = CacheWriter(tmp_path / "c", HASHER)
    for b in hash_batches(iter(docs), HASHER, batch_docs=128):
        writer.add(b)
    cache = writer.close()
    all_ids, all_offsets, all_codes = cache.rows(0, cache.n_docs)
    want = sorted((tuple(all_ids[all_offsets[d]:all_offsets[d + 1]]), int(all_codes[d]))
                  for d in range(cache.n_docs))
    orders = []
    for epoch in range(2):
        rng = np.random.default_rng(epoch)
        seen, groups = [], 0
        for ids, offsets, codes, order, _ in cache.shuffled_groups(rng, buffer_bytes, block_bytes):
            groups += 1
            n = len(offsets) - 1
            assert sorted(order.tolist()) == list(range(n)) and order.dtype == np.int64
            assert len(codes) == n and offsets[0] == 0 and offsets[-1] == len(ids)
            seen += [(tuple(ids[offsets[d]:offsets[d + 1]]), int(codes[d])) for d in order]
            if buffer_bytes == 16 << 20:
                assert n == cache.n_docs                  # it all fits: one permutation
        assert sorted(seen) == want
        assert groups == 1 if buffer_bytes == 16 << 20 else groups > 5
        orders.append(seen)
        # the same seed gives the same visiting order
        again = [(tuple(ids[offsets[d]:offsets[d + 1]]), int(codes[d]))
                 for ids, offsets, codes, order, _ in
                 cache.shuffled_groups(np.random.default_rng(epoch), buffer_bytes, block_bytes)
                 for d in order]
        assert again == seen
    assert orders[0] != orders[1]                        # another seed, another order


# -- training from the cache = training by hand from the same pieces ------------------------

def _same_saved_state(clf, learner, path):
    """The model file holds exactly the by-hand learner's state (scalars, AdaGrad sums)."""
    saved = model_file_arrays(clf, path)
    assert np.array_equal(saved["learner_state"], learner.state_)
    if learner.optimizer == "adagrad":
        assert np.array_equal(saved["adagrad_sq"], learner.S_[:, saved["buckets"], 2])
        assert np.count_nonzero(saved["adagrad_sq"]) > 1000


def _by_hand(docs, lex, tmp, *, optimizer, loss, eta0, lam, epochs, seed, shuffle_kw, min_df,
             norm=None):
    """Stream into a cache, epoch 1 in input order, then seeded shuffled replays; a dense
    learner over all buckets whose values are the lexicon's ratios, 0 below min_df (rows
    scaled to unit norm with ``norm='l2'``, or by default with more than two classes)."""
    hasher = lex.hasher
    keep = lex.counts().sum(axis=0) >= min_df
    cache = kept_cache(docs, hasher, keep, tmp / "by-hand")
    classes = lex.classes_
    n_out = 1 if len(classes) == 2 else len(classes)
    m = LinearSGD(1 << hasher.n_bits, n_outputs=n_out, loss=loss, optimizer=optimizer,
                  eta0=eta0, lam=lam, unit=norm == "l2" or (norm is None and n_out > 1))
    m.tables[:] = np.where(keep, lex.ratios(min_df=min_df), 0)
    code = {label: i for i, label in enumerate(cache.labels)}
    positive = [code[classes[1]]] if n_out == 1 else [code[c] for c in classes]
    ids, offsets, codes = cache.rows(0, cache.n_docs)
    m.epoch(ids, offsets, codes, np.arange(cache.n_docs), positive)
    rng = np.random.default_rng(seed)
    for _ in range(2, epochs + 1):
        for ids, offsets, codes, order, _ in cache.shuffled_groups(rng, **shuffle_kw):
            m.epoch(ids, offsets, codes, order, positive)
    cache.close()
    return m


@pytest.mark.parametrize("optimizer, loss, n_classes, min_df", [
    ("sgd", "hinge", 2, 2), ("adagrad", "log", 2, 1),
    # three classes: over 1.5 s each (make test-slow)
    pytest.param("sgd", "log", 3, 1, marks=pytest.mark.slow),
    pytest.param("adagrad", "modified_huber", 3, 3, marks=pytest.mark.slow)])
# make test-slow: many groups per batch (one group stays in make test; CI runs both)
@pytest.mark.parametrize("groups", ["one", pytest.param("many", marks=pytest.mark.slow)])
def test_training_from_cache_equals_training_by_hand(tmp_path, monkeypatch, optimizer, loss,
                                                     n_classes, min_df, groups):
    docs = synthetic(5000, n_classes=n_classes, seed=n_classes)
    lex = NBLexicon(HASHER).fit([d.text for d in docs], [d.label for d in docs])
    shuffle_kw = {} if groups == "one" else dict(buffer_bytes=60_000, block_bytes=9_000)
    if shuffle_kw:
        monkeypatch.setattr(FeatureCache, "shuffled_groups",
                            functools.partialmethod(FeatureCache.shuffled_groups, **shuffle_kw))
    kw = dict(optimizer=optimizer, loss=loss, eta0=0.05, lam=1e-4, epochs=4, seed=17,
              min_df=min_df)
    # the model smooths with its own alpha (the lexicon's counts, not its alpha, are used)
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, hash_seed=3, split_scripts=False, long_words=0, cache_dir=str(tmp_path), alpha=lex.alpha, **kw)
    clf.fit_documents(iter(docs), lexicon=lex)
    ref = _by_hand(docs, lex, tmp_path, shuffle_kw=shuffle_kw, **kw)
    assert np.array_equal(clf.ratios_, ref.tables)
    assert np.array_equal(clf.coef_, ref.coef())                 # bit for bit
    assert np.array_equal(clf.intercept_, ref.intercept())
    _same_saved_state(clf, ref, tmp_path / "model.npz")
    assert np.count_nonzero(clf.coef_) > 1000
    # and the seed matters: another seed for the replays gives other weights
    other = _by_hand(docs, lex, tmp_path, shuffle_kw=shuffle_kw, **dict(kw, seed=18))
    assert not np.array_equal(clf.coef_, other.coef())
    assert clf.score([d.text for d in docs], [d.label for d in docs]) > 0.9
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["by-hand"]  # fit's cache gone


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_training_with_a_lexicon_of_other_documents(tmp_path, optimizer):
    # the lexicon saw only part of the vocabulary: buckets it never saw have ratio 0 and can
    # carry no weight, so the result is still that of the by-hand dense learner, bit for bit
    docs = synthetic(3000, seed=21)
    part = [d for d in docs[:1000] if "w1" not in d.text.split()]
    lex = NBLexicon(HASHER).fit([d.text for d in part], [d.label for d in part])
    assert lex.n_seen_ < NBLexicon(HASHER).fit([d.text for d in docs],
                                               [d.label for d in docs]).n_seen_
    kw = dict(optimizer=optimizer, loss="log", eta0=0.05, lam=1e-4, epochs=3, seed=4, min_df=1)
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, hash_seed=3, split_scripts=False, long_words=0, **kw).fit_documents(iter(docs),
                                                                                 lexicon=lex)
    ref = _by_hand(docs, lex, tmp_path, shuffle_kw={}, **kw)
    assert np.array_equal(clf.ratios_, ref.tables)
    assert np.array_equal(clf.coef_, ref.coef())
    assert np.array_equal(clf.intercept_, ref.intercept())
    unseen = lex.ratios()[0] == 0
    assert np.all(clf.coef_[0, unseen] == 0)
    w1 = HASHER.buckets("w1")[0]
    assert unseen[w1] and clf.decision_function(["w1"])[0] == clf.intercept_[0]
    _same_saved_state(clf, ref, tmp_path / "model.npz")


@pytest.mark.parametrize("optimizer, min_df, groups", [("sgd", 1, "one"), ("adagrad", 2, "one"),
                                                       ("adagrad", 2, "many"), ("sgd", 3, "many")])
def test_fit_without_lexicon_replays_every_epoch_from_the_cache(tmp_path, monkeypatch, optimizer,
                                                                min_df, groups):
    # without a lexicon the first pass only counts, and epochs 1..E are all shuffled replays
    # (AdaGrad counts a binary lexicon inside its own state; the result must not show it).
    # Epoch 1 visits the groups of the cache of buckets, dropping the buckets the model does
    # not keep, and the kept cache is rewritten in that visiting order for epochs 2..E.
    docs = synthetic(1500, seed=9)
    lex = NBLexicon(HASHER).fit([d.text for d in docs], [d.label for d in docs])
    shuffle_kw = {} if groups == "one" else dict(buffer_bytes=30_000, block_bytes=5_000)
    if shuffle_kw:
        monkeypatch.setattr(FeatureCache, "shuffled_groups",
                            functools.partialmethod(FeatureCache.shuffled_groups, **shuffle_kw))
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, hash_seed=3, split_scripts=False, long_words=0, optimizer=optimizer, loss="log",
                          eta0=0.05, lam=1e-4, epochs=3, seed=5,
                          min_df=min_df).fit_documents(iter(docs))
    seen = lex.counts().sum(axis=0)
    keep = seen >= min_df
    buckets = kept_cache(docs, HASHER, seen >= 1, tmp_path / "buckets")
    m = LinearSGD(1 << 16, loss="log", optimizer=optimizer, eta0=0.05, lam=1e-4)
    m.tables[:] = np.where(keep, lex.ratios(), 0)
    assert np.count_nonzero(m.tables) < lex.n_seen_ or min_df == 1
    positive = [buckets.labels.index(lex.classes_[1])]
    rng = np.random.default_rng(5)
    cache, n_groups = first_epoch_kept(m, buckets, keep, rng, positive, tmp_path / "kept",
                                       HASHER)
    assert (n_groups == 1) == (groups == "one")
    assert cache.labels == buckets.labels                # so the codes mean the same
    for _ in range(2):
        for ids, offsets, codes, order, _ in cache.shuffled_groups(rng):
            m.epoch(ids, offsets, codes, order, positive)
    assert np.array_equal(clf.ratios_, m.tables)
    assert np.array_equal(clf.coef_, m.coef())
    assert np.array_equal(clf.intercept_, m.intercept())
    _same_saved_state(clf, m, tmp_path / "model.npz")


def test_an_error_in_the_first_epoch_stops_the_translation_thread(tmp_path, monkeypatch):
    # epoch 1 translates the cache in a thread; an error while training (here from the
    # progress callback) must stop that thread and leave no cache files behind
    monkeypatch.setattr(FeatureCache, "shuffled_groups",
                        functools.partialmethod(FeatureCache.shuffled_groups,
                                                buffer_bytes=30_000, block_bytes=5_000))
    docs = synthetic(1500, seed=9)
    seen = []

    def callback(event):
        if event["stage"] == "epoch":
            seen.append(event["docs"])
            if len(seen) == 2:
                raise RuntimeError("stop here")

    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, epochs=3, min_df=1, cache_dir=str(tmp_path))
    with pytest.raises(RuntimeError, match="stop here"):
        clf.fit_documents(iter(docs), callback=callback)
    assert not [t for t in threading.enumerate() if t.name == "nbsvm-translate"]
    assert list(tmp_path.iterdir()) == []


def test_one_epoch_does_not_rewrite_the_cache(tmp_path, monkeypatch):
    # with a single epoch nothing replays the translated cache, so it is not written
    writes = []
    original = FeatureCache.translated_groups

    def spy(self, remap, rng, rewrite=True, **kw):
        writes.append(rewrite)
        return original(self, remap, rng, rewrite=rewrite, **kw)

    monkeypatch.setattr(FeatureCache, "translated_groups", spy)
    docs = synthetic(600, seed=2)
    one = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, epochs=1, min_df=1).fit_documents(iter(docs))
    two = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=16, epochs=2, min_df=1).fit_documents(iter(docs))
    assert writes == [False, True]
    assert one.score([d.text for d in docs], [d.label for d in docs]) > 0.8
    assert two.score([d.text for d in docs], [d.label for d in docs]) > 0.8


def test_training_stopped_while_the_test_set_is_hashed_ends_at_once():
    """A review of the gate: the test set's first hasher done, the stream waited for the
    second's end, held back by the gate, and close() (an error, Ctrl-C, SIGTERM during the
    epochs of train --test) waited out its 10 s timeout and left both threads running.
    close() opens the gate: the error comes through at once, no thread left."""
    from nbsvm.evaluation.heldout import fit_and_evaluate

    class Boom(Exception):
        pass

    def stop_at_epoch_4(event):
        if event.get("stage") == "epoch" and event["epoch"] >= 4:
            time.sleep(0.3)  # the first test hasher finishes the small test set
            raise Boom

    # (2**22 buckets: mapped columns, whose test set is hashed from epoch 2 on; a dense
    # model hashes it before the epochs, every hasher at work)
    train, test = synthetic(2000, n_classes=2, seed=1), synthetic(200, n_classes=2, seed=2)
    t0 = time.perf_counter()
    with pytest.raises(Boom):
        fit_and_evaluate(NBSVMClassifier(n_bits=22, epochs=10, char_ngrams=0), iter(train),
                         iter(test), callback=stop_at_epoch_4)
    assert time.perf_counter() - t0 < 8
    assert wait_for_readers() == []
    assert not [t.name for t in threading.enumerate() if t.name.startswith("nbsvm-test")]
