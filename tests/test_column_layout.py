"""The learner's columns when nearly every bucket is kept (issue 15: memory flat at a million
documents): every bucket is its own column, with no bucket -> column map, the counts' pages
go back to the OS as the ratios are filled, and saving and naming the strongest buckets work
part by part. Each is checked against the compact layout or a whole-array reference."""
import mmap

import numpy as np
import pytest

import nbsvm.evaluation.bucket_names as bucket_names
import nbsvm.models.columns as columns
import nbsvm.models.modelfile as modelfile
from conftest import synthetic
from nbsvm import NBSVMClassifier
from nbsvm.data.translate import mapped_buckets
from nbsvm.evaluation.bucket_names import _strongest, ngram_map_of, strongest_columns
from nbsvm.evaluation.contributions import contributions
from nbsvm.models.columns import _release, dense_columns
from nbsvm.memory import releasable_int32

DOCS = synthetic(600, seed=7)
TEXTS = [d.text for d in DOCS]
LABELS = [d.label for d in DOCS]
PROBES = TEXTS[:50] + ["", "w1 w2 w3", "nothing seen here"]


def _fit(monkeypatch, dense, **kw):
    """The same fit with the layout forced (the rule itself is tested below)."""
    monkeypatch.setattr(columns, "dense_columns", lambda *a: dense)
    return NBSVMClassifier(ngrams=2, n_bits=14, epochs=3, min_df=3, **kw).fit(TEXTS, LABELS)


def test_the_rule_picks_the_smaller_layout():
    # AdaGrad rows are 12 bytes: no map pays when fewer than a third of the buckets drop
    n = 1 << 24
    assert dense_columns(n, n - n // 3, 1, "adagrad") and not dense_columns(n, n // 2, 1, "adagrad")
    # SGD's 8-byte rows: up to half may drop
    assert dense_columns(n, n // 2, 1, "sgd") and not dense_columns(n, n // 2 - 1, 1, "sgd")
    # every dropped bucket costs a row per output
    assert not dense_columns(n, n - n // 3, 3, "adagrad")


@pytest.mark.parametrize("kw", [dict(), dict(optimizer="sgd", loss="hinge"), dict(norm="l2")],
                         ids=["adagrad", "sgd", "l2"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_buckets_as_columns_train_the_same_model(monkeypatch, kw):
    compact = _fit(monkeypatch, False, **kw)
    dense = _fit(monkeypatch, True, **kw)
    assert dense.column_of_ is None and compact.column_of_ is not None
    kept = np.flatnonzero(compact.column_of_ >= 0)
    assert 0 < kept.size < dense.n_seen_buckets_       # min_df drops some seen buckets
    S, T = dense.linear_.S_, compact.linear_.S_[:, compact.column_of_[kept]]  # by bucket
    # the same ratios, bit for bit; the dropped buckets' rows stay zero
    np.testing.assert_array_equal(S[0, kept, 0], T[0, :, 0])
    dropped = np.setdiff1d(np.arange(1 << 14), kept)
    assert not S[0, dropped].any()
    # the dropped buckets add zeros to each dot product: weights agree to rounding
    np.testing.assert_allclose(S[0, kept, 1], T[0, :, 1], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dense.decision_function(PROBES),
                               compact.decision_function(PROBES), rtol=1e-5, atol=1e-6)
    assert list(dense.predict(PROBES)) == list(compact.predict(PROBES))


def test_a_dense_model_saves_its_used_buckets_and_loads_the_same(monkeypatch, tmp_path):
    dense = _fit(monkeypatch, True)
    monkeypatch.setattr(modelfile, "SAVE_PART", 100)      # many parts, one not full
    dense.save(tmp_path / "m.npz")
    z = np.load(tmp_path / "m.npz")
    used = np.flatnonzero((dense.linear_.S_[0, :, 0] != 0) | (dense.linear_.S_[0, :, 1] != 0))
    np.testing.assert_array_equal(z["buckets"], used)
    np.testing.assert_array_equal(z["coef"][0], dense.linear_.S_[0, used, 1])
    np.testing.assert_array_equal(z["adagrad_sq"][0], dense.linear_.S_[0, used, 2])
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.decision_function(PROBES), dense.decision_function(PROBES))


def test_a_compact_model_saved_in_parts_stores_every_mapped_bucket(monkeypatch, tmp_path):
    compact = _fit(monkeypatch, False)
    monkeypatch.setattr(modelfile, "SAVE_PART", 64)
    compact.save(tmp_path / "m.npz")
    z = np.load(tmp_path / "m.npz")
    kept = np.flatnonzero(compact.column_of_ >= 0)
    np.testing.assert_array_equal(z["buckets"], kept)
    np.testing.assert_array_equal(z["ratios"][0], compact.linear_.S_[0, compact.column_of_[kept], 0])
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.decision_function(PROBES),
                                  compact.decision_function(PROBES))


def _mapped_by_loop(remap):
    """The slow reference: every bucket in order, kept where it maps to a column."""
    pairs = [(b, int(c)) for b, c in enumerate(remap) if c >= 0]
    buckets = np.array([b for b, _ in pairs], dtype=np.int32)
    cols = np.array([c for _, c in pairs], dtype=np.int32)
    return buckets, cols, cols.tolist() == list(range(len(cols)))


@pytest.mark.parametrize("shape", ["in_order", "gaps", "shuffled", "empty", "odd_size"])
def test_mapped_buckets_equal_a_loop_over_the_map(shape):
    rng = np.random.default_rng(3)
    n = 1001 if shape == "odd_size" else 1 << 12
    kept = np.sort(rng.choice(n, size=0 if shape == "empty" else n // 7, replace=False))
    remap = np.full(n, -1, dtype=np.int32)
    remap[kept] = np.arange(kept.size, dtype=np.int32)
    if shape == "gaps":  # quantize drops buckets: columns stay in order with holes
        remap[kept[::5]] = -1
    if shape == "shuffled":
        remap[kept] = rng.permutation(kept.size).astype(np.int32)
    got, want = mapped_buckets(remap), _mapped_by_loop(remap)
    for g, w in zip(got[:2], want[:2]):
        assert g.dtype == np.int32
        np.testing.assert_array_equal(g, w)
    assert got[2] == want[2] == (shape in ("in_order", "empty", "odd_size"))


def test_a_model_whose_columns_are_not_in_bucket_order_saves_each_bucket_its_own_row(
    monkeypatch, tmp_path
):
    # loading numbers columns in bucket order (saved as slices of the state); a map in any
    # other order (training's, hottest first, or this one) is gathered, and must give
    # each bucket its own column's row
    compact = _fit(monkeypatch, False)
    kept = np.flatnonzero(compact.column_of_ >= 0)
    order = np.random.default_rng(0).permutation(kept.size)
    shuffled = NBSVMClassifier(ngrams=2, n_bits=14, epochs=3, min_df=3).fit(TEXTS, LABELS)
    shuffled.column_of_[kept] = order.astype(np.int32)
    shuffled.linear_.S_[:, order, :] = compact.linear_.S_[:, compact.column_of_[kept], :]
    np.testing.assert_array_equal(shuffled.decision_function(PROBES),
                                  compact.decision_function(PROBES))
    monkeypatch.setattr(modelfile, "SAVE_PART", 64)
    shuffled.save(tmp_path / "m.npz")
    z = np.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(z["buckets"], kept)
    by_bucket = compact.linear_.S_[0, compact.column_of_[kept]]
    np.testing.assert_array_equal(z["ratios"][0], by_bucket[:, 0])
    np.testing.assert_array_equal(z["adagrad_sq"][0], by_bucket[:, 2])
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.decision_function(PROBES),
                                  compact.decision_function(PROBES))


@pytest.mark.parametrize("labels", ["binary", "three"])
def test_strongest_columns_in_parts_equal_the_whole_row(monkeypatch, labels):
    ys = LABELS if labels == "binary" else [str(i % 3) for i in range(len(TEXTS))]
    clf = NBSVMClassifier(ngrams=2, n_bits=12, epochs=2).fit(TEXTS, ys)
    C, _ = contributions(clf, np.float32)
    want = _strongest(C, 25)
    monkeypatch.setattr(bucket_names, "STRONGEST_PART", 37)
    bits = strongest_columns(clf, 25)
    got = np.unpackbits(bits.view(np.uint8), bitorder="little")[:C.shape[1]].astype(bool)
    np.testing.assert_array_equal(got, want)
    assert 25 <= got.sum() <= 2 * 25 * C.shape[0] + 10
    assert not np.unpackbits(bits.view(np.uint8), bitorder="little")[C.shape[1]:].any()


def test_names_of_columns_that_are_buckets_need_no_map():
    """The bitmap of chosen columns is the bitmap of buckets when columns are buckets."""
    clf = NBSVMClassifier(ngrams=2, n_bits=10, epochs=2).fit(TEXTS, LABELS)
    mask = np.zeros(1 << 10, dtype=bool)
    mask[[3, 64, 65, 700, 1023]] = True
    chosen = np.packbits(mask, bitorder="little").view(np.uint64)
    identity = np.arange(1 << 10, dtype=np.int32)
    assert ngram_map_of(chosen, None, clf.hasher_, TEXTS) == \
        ngram_map_of(chosen, identity, clf.hasher_, TEXTS)


def test_release_hands_back_only_whole_pages_inside_the_range():
    page = mmap.PAGESIZE
    row_len = 4 * page // 4                     # int32 entries: each row 4 pages
    mm, a = releasable_int32((2, row_len))
    a[:] = 7
    per_page = page // 4
    # entries 10 .. 2 pages + 5 of row 1: only its second page lies wholly inside
    _release(mm, row_len, 1, 10, 2 * per_page + 5)
    zero = np.flatnonzero(a[1] == 0)
    np.testing.assert_array_equal(zero, np.arange(per_page, 2 * per_page))
    assert (a[0] == 7).all()
    _release(mm, row_len, 0, 0, row_len)        # a whole row
    assert not a[0].any() and (a[1][:per_page] == 7).all()


@pytest.mark.parametrize("kw", [dict(min_df=1), dict(min_df=3, alpha=0.1), dict(weighting="binary"),
                                dict(norm="l2", beta=0.5)], ids=["min_df1", "min_df3", "binary", "l2"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_small_corpus_read_over_its_seen_buckets_trains_the_same_model(monkeypatch, kw):
    """Columns built from the seen buckets only (a few milliseconds) equal those built by
    scanning every bucket of the dense count rows (0.2 s at 2**24), bit for bit."""
    fits = {}
    for few in (64, 1 << 40):       # 600 documents of 30 words: 18,000 ids, 2**20 buckets
        monkeypatch.setattr(columns, "FEW_SEEN", few)
        fits[few] = NBSVMClassifier(ngrams=2, n_bits=20, epochs=3, **kw).fit(TEXTS, LABELS)
    seen, scanned = fits[64], fits[1 << 40]
    assert seen.n_seen_buckets_ == scanned.n_seen_buckets_ > 0
    np.testing.assert_array_equal(seen.column_of_, scanned.column_of_)
    np.testing.assert_array_equal(seen.linear_.S_, scanned.linear_.S_)
    np.testing.assert_array_equal(seen.intercept_, scanned.intercept_)


def test_seen_buckets_only_for_a_corpus_far_smaller_than_the_buckets(tmp_path):
    from nbsvm.data.cache import CacheWriter
    from nbsvm.data.batches import hash_batches
    from nbsvm.models.columns import FEW_SEEN, seen_buckets
    from nbsvm.text.hashing import Hasher

    hasher = Hasher(n_bits=16, ngrams=1)

    def cache_of(docs, name):
        writer = CacheWriter(tmp_path / name, hasher)
        for batch in hash_batches(docs, hasher):
            writer.add(batch)
        return writer.close()

    few, many = cache_of(DOCS[:20], "few"), cache_of(DOCS[:100], "many")
    ids = np.concatenate([b.ids for b in few.batches(7)])
    assert few.n_ids == ids.size and ids.size * FEW_SEEN < 1 << 16 <= many.n_ids * FEW_SEEN
    np.testing.assert_array_equal(seen_buckets(few, 16), np.unique(ids))
    assert seen_buckets(many, 16) is None


def _documents_per_bucket(clf, texts):
    """How many of ``texts`` hold each bucket, by hashing each one (the slow reference)."""
    df = np.zeros(1 << clf.hasher_.n_bits, dtype=np.int64)
    for t in texts:
        df[np.unique(clf.hasher_.buckets(t))] += 1
    return df


THREE = [("a", "b", "c")[i % 3] for i in range(len(TEXTS))]
SETS = [["a", "b"][: 1 + i % 2] if i % 3 else ["c"] for i in range(len(TEXTS))]


@pytest.mark.parametrize("labels", ["binary", "three", "label sets"])
def test_training_lays_its_hot_columns_out_first(monkeypatch, labels):
    """A fitted model's kept columns: first the hot ones, those held by the most documents
    (by powers of two) that fit in HOT_COLUMNS, then the others, each part in bucket
    order: checked against documents counted one by one. A model whose columns all fit
    keeps bucket order."""
    y = {"binary": LABELS, "three": THREE, "label sets": SETS}[labels]
    kw = dict(ngrams=2, n_bits=14, epochs=1, min_df=2, char_ngrams=0,
              multilabel=labels == "label sets")
    assert mapped_buckets(NBSVMClassifier(**kw).fit(TEXTS, y).column_of_)[2]
    monkeypatch.setattr(columns, "HOT_COLUMNS", 300)
    clf = NBSVMClassifier(**kw).fit(TEXTS, y)
    df = _documents_per_bucket(clf, TEXTS)
    kept = np.flatnonzero(clf.column_of_ >= 0)
    np.testing.assert_array_equal(kept, np.flatnonzero(df >= 2))
    bits = np.array([int(d).bit_length() for d in df[kept]])
    cut = min(b for b in range(64) if (bits >= b).sum() <= 300)
    hot = bits >= cut
    assert 100 < hot.sum() <= 300 < kept.size
    want = np.r_[kept[hot], kept[~hot]]
    np.testing.assert_array_equal(clf.column_of_[want], np.arange(kept.size))
    np.testing.assert_array_equal(clf.column_buckets(), want)


@pytest.mark.parametrize("labels", ["binary", "three", "label sets"])
def test_the_layout_changes_nothing_a_model_computes(monkeypatch, tmp_path, labels):
    """Hot columns first or every column in bucket order, the same arithmetic: the saved
    files hold the same arrays bit for bit (each bucket's row) and the models score the
    same."""
    y = {"binary": LABELS, "three": THREE, "label sets": SETS}[labels]
    kw = dict(ngrams=2, n_bits=14, epochs=3, min_df=2, multilabel=labels == "label sets")
    monkeypatch.setattr(columns, "HOT_COLUMNS", 300)  # (else every column is hot here)
    tiered = NBSVMClassifier(**kw).fit(TEXTS, y)
    monkeypatch.setattr(columns, "HOT_COLUMNS", 1 << 20)
    in_order = NBSVMClassifier(**kw).fit(TEXTS, y)
    assert mapped_buckets(in_order.column_of_)[2] and not mapped_buckets(tiered.column_of_)[2]
    np.testing.assert_array_equal(tiered.decision_function(PROBES),
                                  in_order.decision_function(PROBES))
    tiered.save(tmp_path / "tiered.npz")
    in_order.save(tmp_path / "in_order.npz")
    a, b = np.load(tmp_path / "tiered.npz"), np.load(tmp_path / "in_order.npz")
    assert sorted(a.files) == sorted(b.files)
    for name in a.files:
        if name != "__header__":  # (it holds the timings)
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_weighted_label_sets_from_counts_kept_lay_out_as_from_documents(monkeypatch):
    """Multi-label with weights and kept counts (the lexicon's path) lays its columns out by
    documents, as plain training does, not by the weights summed: sums below 1 crashed it
    (frexp's exponent below 0), and other sums gave another layout."""
    monkeypatch.setattr(columns, "HOT_COLUMNS", 300)
    weights = np.random.default_rng(4).uniform(0.05, 3, len(TEXTS))
    kw = dict(ngrams=2, n_bits=14, epochs=2, min_df=2, multilabel=True)
    plain = NBSVMClassifier(**kw).fit(TEXTS, SETS, sample_weight=weights)
    kept = NBSVMClassifier(keep_counts=True, **kw).fit(TEXTS, SETS, sample_weight=weights)
    assert not mapped_buckets(plain.column_of_)[2]  # (hot first)
    np.testing.assert_array_equal(plain.column_of_, kept.column_of_)
    np.testing.assert_array_equal(plain.ratios_, kept.ratios_)
    tiny = NBSVMClassifier(ngrams=1, n_bits=12, min_df=1, multilabel=True, keep_counts=True)
    tiny.fit(["good movie", "bad movie", "rare word here", "good plot", "bad plot"],
             [["a"], ["b"], ["a", "b"], ["a"], ["b"]], sample_weight=[1, 1, 0.25, 1, 1])


@pytest.mark.parametrize("first_hot", [300, 1 << 20], ids=["hot first", "bucket order"])
def test_a_checkpoint_resumes_a_hot_first_run_whatever_layout_wrote_it(
    monkeypatch, tmp_path, first_hot
):
    """A checkpoint keeps the state in bucket order: stopped after epoch 2 and resumed,
    training equals the uninterrupted run bit for bit, whether the interrupted run laid
    its columns out hot first or in bucket order (as before the hot columns: such a
    checkpoint put its weights in the wrong columns, which binary values, all 1, never
    showed)."""
    from nbsvm.models.checkpoint import Checkpoint

    class Stop(Exception):
        pass

    def stop_in_epoch_3(event):
        if event["stage"] == "epoch" and event["epoch"] == 3:
            raise Stop

    kw = dict(ngrams=2, n_bits=14, epochs=4, min_df=2, weighting="binary", seed=3)
    monkeypatch.setattr(columns, "HOT_COLUMNS", 300)
    full = NBSVMClassifier(**kw).fit(TEXTS, LABELS)
    monkeypatch.setattr(columns, "HOT_COLUMNS", first_hot)
    ck = Checkpoint(tmp_path / "ck.npz", every=1, identity={"data": 1})
    with pytest.raises(Stop):
        NBSVMClassifier(**kw).fit_documents(iter(DOCS), callback=stop_in_epoch_3, checkpoint=ck)
    monkeypatch.setattr(columns, "HOT_COLUMNS", 300)
    resumed = Checkpoint(tmp_path / "ck.npz", every=1, resume=True, identity={"data": 1})
    clf = NBSVMClassifier(**kw).fit_documents(iter(DOCS), checkpoint=resumed)
    assert resumed.resumed_from == 2 and not mapped_buckets(clf.column_of_)[2]
    np.testing.assert_array_equal(clf.linear_.S_, full.linear_.S_)
    np.testing.assert_array_equal(clf.decision_function(PROBES), full.decision_function(PROBES))
