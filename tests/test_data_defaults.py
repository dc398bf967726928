"""Data-dependent defaults (issue 14): ``min_df`` and the two-class AdaGrad ``eta0`` left at
None are read from the training cache after the first pass (nbsvm.config.data_default),
printed, and saved with the model."""
import tarfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import shared_datasets
from nbsvm import NBLexicon, NBSVMClassifier, NBSVMError
from nbsvm.cli import app
from nbsvm.config import PEEK_DOCS, SMALL_CORPUS_NGRAMS, data_default
from nbsvm.data.batches import Batch
from nbsvm.data.cache import CacheWriter, corpus_stats
from nbsvm.text.hashing import Hasher
from test_model import LABELS, NEW, TEXTS, THREE_LABELS, THREE_TEXTS

runner = CliRunner()


def test_corpus_stats_count_documents_buckets_and_the_median(tmp_path):
    lengths = [3, 0, 7, 1, 5, 5, 2]
    rng = np.random.default_rng(0)
    writer = CacheWriter(tmp_path / "c", Hasher(ngrams=1, n_bits=10))
    with writer:
        for part in (lengths[:4], lengths[4:]):
            ids = [rng.choice(1024, n, replace=False) for n in part]
            writer.add(Batch(np.concatenate(ids).astype(np.int32),
                             np.concatenate([[0], np.cumsum(part)]).astype(np.int64),
                             ["a"] * len(part)))
        cache = writer.close()
    # chunks smaller than the cache: the histogram adds up across them
    stats = corpus_stats(cache, chunk=3)
    assert stats == {"documents": 7, "ngrams": sum(lengths), "median_ngrams": 3}
    assert int(np.median(lengths)) == 3


def test_the_rules_by_hand():
    short, long_ = {"median_ngrams": 299}, {"median_ngrams": 300}
    assert data_default("min_df", {"ngrams": SMALL_CORPUS_NGRAMS - 1, **short}) == 1
    assert data_default("min_df", {"ngrams": SMALL_CORPUS_NGRAMS, **short}) == 2
    # a small corpus of long documents: its singletons are names, numbers and typos
    # (20ng-few, 600 messages of median 1,077 n-grams: 65.41 -> 71.13)
    assert data_default("min_df", {"ngrams": SMALL_CORPUS_NGRAMS - 1, **long_}) == 2
    assert data_default("min_df", {"ngrams": SMALL_CORPUS_NGRAMS, **long_}) == 2
    assert data_default("eta0", {"median_ngrams": 487}) == 0.02      # IMDB keeps its 0.02
    assert data_default("eta0", {"median_ngrams": 400}) == 0.02
    assert data_default("eta0", {"median_ngrams": 64}) == pytest.approx(0.02 * 6.25 ** 0.7)
    assert data_default("eta0", {"median_ngrams": 3}) == 0.5         # capped
    assert data_default("eta0", {"median_ngrams": 0}) == 0.5
    assert data_default("norm", {"median_ngrams": 3}) == "l2"         # MPQA's phrases
    assert data_default("norm", {"median_ngrams": 15}) == "l2"
    assert data_default("norm", {"median_ngrams": 16}) == "none"
    assert data_default("norm", {"median_ngrams": 64}) == "none"      # Subj's sentences
    assert data_default("char_ngrams", {"median_ngrams": 3}) == 4     # phrases, sentences
    assert data_default("char_ngrams", {"median_ngrams": 99}) == 4
    assert data_default("char_ngrams", {"median_ngrams": 100}) == 0
    assert data_default("char_ngrams", {"median_ngrams": 487}) == 0   # IMDB: words only
    with pytest.raises(ValueError):
        data_default("epochs", {})


def test_a_fit_takes_them_from_its_data_and_equals_the_same_values_given():
    clf = NBSVMClassifier(ngrams=2, n_bits=12, epochs=3, seed=1).fit(TEXTS, LABELS)
    assert clf.data_defaulted() == ["min_df", "char_ngrams", "eta0", "norm"]
    assert clf.setting("char_ngrams") == clf.hasher_.char_ngrams == 4     # short reviews
    corpus = clf.corpus_
    assert corpus["documents"] == len(TEXTS)
    min_df, eta0, norm = clf.setting("min_df"), clf.setting("eta0"), clf.setting("norm")
    assert (min_df, eta0, norm) == (1, data_default("eta0", corpus),
                                    data_default("norm", corpus))
    given = NBSVMClassifier(ngrams=2, n_bits=12, epochs=3, seed=1, min_df=min_df,
                            eta0=eta0, norm=norm, char_ngrams=4).fit(TEXTS, LABELS)
    assert given.data_defaulted() == []
    assert np.array_equal(clf.decision_function(NEW), given.decision_function(NEW))


def test_given_values_and_other_tasks_are_not_overridden():
    clf = NBSVMClassifier(ngrams=2, n_bits=12, epochs=2, min_df=2, eta0=0.05,
                          norm="none", char_ngrams=0).fit(TEXTS, LABELS)
    assert clf.data_defaulted() == [] and clf.setting("min_df") == 2
    assert clf.setting("eta0") == 0.05
    three = NBSVMClassifier(ngrams=2, n_bits=12, epochs=2).fit(THREE_TEXTS, THREE_LABELS)
    assert three.data_defaulted() == ["min_df", "char_ngrams"]   # eta0 'auto', norm l2
    assert three.setting("eta0") == "auto" and three.setting("norm") == "l2"
    sgd = NBSVMClassifier(ngrams=2, n_bits=12, epochs=2, optimizer="sgd").fit(TEXTS, LABELS)
    assert sgd.data_defaulted() == ["min_df", "char_ngrams", "norm"]
    assert sgd.setting("eta0") == 0.02


def test_without_a_first_pass_the_fixed_defaults_apply():
    clf = NBSVMClassifier(ngrams=2, n_bits=12)
    clf.partial_fit(TEXTS, LABELS, classes=sorted(set(LABELS)))
    assert "corpus_" not in vars(clf) and clf.data_defaulted() == []
    assert clf.setting("min_df") == 2 and clf.setting("eta0") == 0.02
    assert clf.setting("norm") == "none"


def test_a_small_corpus_gets_character_4grams_whatever_its_length():
    """Fewer documents than the peek holds (it read them all): character 4-grams beside the
    words, long texts too (make robustness's few-documents shapes, config.py); a corpus
    the peek did not hold whole, or a peek of a part of it, decides by the median alone."""
    assert data_default("char_ngrams", {"median_ngrams": 500, "documents": PEEK_DOCS - 1}) == 4
    assert data_default("char_ngrams", {"median_ngrams": 500, "documents": PEEK_DOCS}) == 0
    assert data_default("char_ngrams", {"median_ngrams": 500, "documents": None}) == 0
    assert data_default("char_ngrams", {"median_ngrams": 500}) == 0
    assert data_default("char_ngrams", {"median_ngrams": 99, "documents": None}) == 4


def test_partial_fit_reads_char_ngrams_from_its_first_batch_as_fit_reads_its_first_documents():
    """partial_fit kept char_ngrams at 0 where fit, on the same short texts, added
    character 4-grams: one model's settings, two feature spaces."""
    short = [t.split()[0] + " " + t.split()[-1] for t in TEXTS]   # a few words each
    for texts, chars in ((short, 4), (TEXTS, None)):
        fitted = NBSVMClassifier(ngrams=2, n_bits=12).fit(texts, LABELS)
        grown = NBSVMClassifier(ngrams=2, n_bits=12)
        grown.partial_fit(texts, LABELS, classes=sorted(set(LABELS)))
        assert grown.char_ngrams_ == fitted.char_ngrams_ == (chars or fitted.char_ngrams_)
        assert grown.hasher_ == fitted.hasher_ == grown.lexicon_.hasher
        grown.partial_fit(texts[:10], LABELS[:10])      # later batches keep it
        assert grown.hasher_ == fitted.hasher_
    given = NBSVMClassifier(ngrams=2, n_bits=12, char_ngrams=0)
    assert given.partial_fit(short, LABELS, classes=sorted(set(LABELS))).hasher_.char_ngrams == 0
    # a first call that failed, or held no document, decides nothing: the first batch does
    grown = NBSVMClassifier(ngrams=2, n_bits=12)
    for bad in (([], []), (short, None)):
        with pytest.raises(NBSVMError):
            grown.partial_fit(*bad, classes=sorted(set(LABELS)))
    long = [t + " " + " ".join(f"x{i}" for i in range(120)) for t in TEXTS]
    grown.partial_fit(long, LABELS, classes=sorted(set(LABELS)))
    # fit on a corpus past the peek (not small): 0, as partial_fit's first batch gives
    copies = PEEK_DOCS // len(long) + 1
    fitted = NBSVMClassifier(ngrams=2, n_bits=12).fit(long * copies, LABELS * copies)
    assert grown.hasher_ == fitted.hasher_ and fitted.char_ngrams_ == 0
    # fit reads a small corpus whole and adds character 4-grams (config.FEW_DOCUMENTS);
    # partial_fit cannot know that its first batch is the whole corpus: the median decides
    assert NBSVMClassifier(ngrams=2, n_bits=12).fit(long, LABELS).char_ngrams_ == 4


def test_saved_models_keep_what_the_defaults_were_read_from(tmp_path):
    clf = NBSVMClassifier(ngrams=2, n_bits=12, epochs=2).fit(TEXTS, LABELS)
    clf.save(tmp_path / "m.npz")
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    assert back.corpus_ == clf.corpus_
    assert [back.setting(k) for k in ("min_df", "eta0", "norm")] == \
        [clf.setting(k) for k in ("min_df", "eta0", "norm")]
    assert np.array_equal(back.decision_function(NEW), clf.decision_function(NEW))


@pytest.fixture(scope="module")
def subj_tsv(tmp_path_factory):
    """Pang & Lee's subjectivity sentences (real data), 2,000 of each class."""
    archive = shared_datasets() / "subj" / "subj.tar.gz"
    if not archive.is_file():
        pytest.skip(f"{archive} not found")
    lines = []
    with tarfile.open(archive) as tar:
        for member, label in (("subj.objective", "obj"), ("subj.subjective", "subj")):
            data = tar.extractfile(member).read().decode("latin-1").splitlines()
            lines += [f"{label}\t{t.strip()}" for t in data[:2000]]
    path = tmp_path_factory.mktemp("subj") / "subj.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_cli_prints_and_reports_the_data_defaults(tmp_path, subj_tsv):
    out = runner.invoke(app, ["train", str(subj_tsv), "-o", str(tmp_path / "m.npz")])
    assert out.exit_code == 0, out.output
    # Subj's sentences (under 100 word n-grams each in the peek): character 4-grams too, which
    # raise the median of the n-grams per document that eta0 follows
    assert "data-dependent defaults: min_df 1, char_ngrams 4, eta0 0.0423, norm none" \
        in out.output
    assert "eta0 (from the data): 0.0423" in out.output
    assert "char_ngrams (from the data): 4" in out.output
    out = runner.invoke(app, ["train", str(subj_tsv), "-o", str(tmp_path / "m.npz"),
                              "--min-df", "2", "--eta0", "0.02", "--norm", "none",
                              "--char-ngrams", "0", "--json"])
    assert out.exit_code == 0 and "data_defaults" not in out.output


def test_the_eta0_sample_is_visited_in_drawn_order_not_stored_order(tmp_path):
    """A corpus stored class by class (a tar of class folders) must not feed the eta0 trial
    pass one class after the other: that picked eta0 badly (20NG from the tarball: 85.82%
    instead of 86.67%)."""
    from nbsvm.learners.eta0 import calibration_sample
    h = Hasher(ngrams=1, n_bits=10)
    writer = CacheWriter(tmp_path / "c", h)
    with writer:
        for label in ("a", "b"):                         # 200 of a, then 200 of b
            ids = np.arange(400, dtype=np.int32) % 1000
            writer.add(Batch(ids, np.arange(0, 401, 2, dtype=np.int64), [label] * 200))
        cache = writer.close()
    codes = calibration_sample(cache, [1], None, seed=0, n_sample=100)[2]
    changes = int(np.count_nonzero(np.diff(codes)))
    assert set(codes.tolist()) == {0, 1} and changes > 20    # mixed, not two runs
    picks = np.random.default_rng(1).choice(400, size=100, replace=False)
    assert codes.tolist() == (picks >= 200).astype(int).tolist()


@pytest.mark.slow  # over 1.5 s (make test-slow; CI runs it after make test)
def test_the_peek_is_not_a_read_the_cli_reports(tmp_path):
    # the first 2,000 documents are peeked before the hashing pass (through the inputs' peek,
    # which reports nothing): the malformed lines and
    # the progress belong to the reads that go to the end, counted once
    rows = ["label,text"] + [f"{'pos' if i % 2 else 'neg'},{'good fun' if i % 2 else 'dull'}"
                             f" film {i % 7}" for i in range(60000)]
    rows.insert(101, "pos,too,many")
    rows.insert(59001, "neg,also,too,many")
    data = tmp_path / "d.csv"
    data.write_text("\n".join(rows) + "\n")
    out = runner.invoke(app, ["train", str(data), "-o", str(tmp_path / "m.npz"), "-q",
                              "--skip-bad-lines", "--n-bits", "14"])
    assert out.exit_code == 0, out.output
    assert "skipped 2 malformed lines" in out.output, out.output


def test_lexicon_reads_char_ngrams_auto_as_train_does(tmp_path):
    """nbsvm lexicon refused auto and counted words only, so lexicon + train --lexicon
    trained another model than train on short texts (train adds character 4-grams)."""
    reviews = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"
    for extra in ([], ["--char-ngrams", "auto"]):
        result = CliRunner().invoke(app, ["lexicon", str(reviews), "-o", str(tmp_path / "l.npz"),
                                          "--n-bits", "14", *extra])
        assert result.exit_code == 0, result.output
        assert NBLexicon.load(tmp_path / "l.npz").hasher.char_ngrams == 4
    result = CliRunner().invoke(app, ["train", str(reviews), "-o", str(tmp_path / "m.npz"),
                                      "--n-bits", "14", "-q"])
    lex_model = CliRunner().invoke(app, ["train", str(reviews), "-o", str(tmp_path / "l.m.npz"),
                                         "--lexicon", str(tmp_path / "l.npz"), "-q"])
    a, b = NBSVMClassifier.load(tmp_path / "m.npz"), NBSVMClassifier.load(tmp_path / "l.m.npz")
    assert result.exit_code == lex_model.exit_code == 0
    assert a.hasher_ == b.hasher_ and np.array_equal(a.ratios_, b.ratios_)


# ---- alpha: 1 with two classes, 0.5 with more and multi-label (results/smoothing.md) ----

def test_alpha_follows_the_number_of_classes_and_equals_the_value_given(tmp_path):
    from nbsvm.lexicon.nblexicon import NBLexicon

    kw = dict(ngrams=2, n_bits=12, epochs=2, min_df=1)
    for texts, labels, alpha in ((TEXTS, LABELS, 1.0), (THREE_TEXTS, THREE_LABELS, 0.5)):
        default = NBSVMClassifier(**kw).fit(texts, labels)
        given = NBSVMClassifier(alpha=alpha, **kw).fit(texts, labels)
        assert default.setting("alpha") == alpha
        assert np.array_equal(default.ratios_, given.ratios_)       # bit for bit
        assert np.array_equal(default.decision_function(NEW), given.decision_function(NEW))
        other = NBSVMClassifier(alpha=1.5 - alpha, **kw).fit(texts, labels)
        assert not np.array_equal(default.ratios_, other.ratios_)
        # by hand: the lexicon's ratios at that alpha over the kept columns
        lex = NBLexicon(default.hasher_, alpha=alpha).fit(texts, labels)
        want = lex.ratios()
        got = np.asarray(default.ratios_, dtype=np.float64).reshape(len(want), -1)
        if got.shape != want.shape:  # columns are the kept buckets
            got = np.zeros_like(want)
            got[:, default.column_buckets()] = np.asarray(default.ratios_).reshape(len(want), -1)
        assert np.allclose(got, want, atol=1e-6)
    sets = [[y] + (["x"] if i % 2 else []) for i, y in enumerate(THREE_LABELS)]
    multilabel = NBSVMClassifier(multilabel=True, **kw).fit(THREE_TEXTS, sets)
    assert multilabel.setting("alpha") == 0.5
    # kept counts and a growing lexicon smooth as the model does
    kept = NBSVMClassifier(keep_counts=True, **kw).fit(THREE_TEXTS, THREE_LABELS)
    assert kept.lexicon_.alpha == 0.5
    grown = NBSVMClassifier(**kw)
    grown.partial_fit(THREE_TEXTS, THREE_LABELS, classes=sorted(set(THREE_LABELS)))
    assert grown.lexicon_.alpha == 0.5
    kept.save(tmp_path / "m.npz")
    assert NBSVMClassifier.load(tmp_path / "m.npz").setting("alpha") == 0.5


def test_nbsvm_lexicon_smooths_by_its_classes_and_train_takes_it(tmp_path):
    from nbsvm.lexicon.nblexicon import NBLexicon

    three = tmp_path / "three.txt"
    three.write_text("".join(f"{y}\t{t}\n" for t, y in zip(THREE_TEXTS, THREE_LABELS)))
    two = tmp_path / "two.txt"
    two.write_text("".join(f"{y}\t{t}\n" for t, y in zip(TEXTS, LABELS)))
    for data, alpha in ((two, 1.0), (three, 0.5)):
        lex_path = tmp_path / f"{data.stem}.lex.npz"
        r = runner.invoke(app, ["lexicon", str(data), "-o", str(lex_path), "--n-bits", "12", "-q"])
        assert r.exit_code == 0, r.output
        assert NBLexicon.load(lex_path).alpha == alpha
        model = tmp_path / f"{data.stem}.npz"
        r = runner.invoke(app, ["train", str(data), "--lexicon", str(lex_path), "-o",
                                str(model), "-q"])
        assert r.exit_code == 0, r.output
        assert NBSVMClassifier.load(model).setting("alpha") == alpha
    r = runner.invoke(app, ["lexicon", str(three), "-o", str(tmp_path / "a.npz"), "--alpha",
                            "0.3", "--n-bits", "12", "-q"])
    assert r.exit_code == 0 and NBLexicon.load(tmp_path / "a.npz").alpha == 0.3


# ---- lambda: 1e-4, and 1e-5 for softmax over more than two classes (config.SOFTMAX_LAM) ----

@pytest.mark.parametrize("loss, texts, labels, lam", [
    ("softmax", THREE_TEXTS, THREE_LABELS, 1e-5),
    (None, THREE_TEXTS, THREE_LABELS, 1e-4),           # modified Huber keeps 1e-4
    ("softmax", TEXTS, LABELS, 1e-4),                  # two classes: the log loss
    (None, TEXTS, LABELS, 1e-4),
])
def test_lambda_follows_the_loss_and_classes_and_equals_the_value_given(
        tmp_path, loss, texts, labels, lam):
    kw = dict(ngrams=2, n_bits=12, epochs=2, min_df=1, loss=loss)
    default = NBSVMClassifier(**kw).fit(texts, labels)
    given = NBSVMClassifier(lam=lam, **kw).fit(texts, labels)
    assert default.setting("lam") == lam and default.linear_.lam == lam
    assert np.array_equal(default.decision_function(NEW), given.decision_function(NEW))
    other = NBSVMClassifier(lam=lam * 30, **kw).fit(texts, labels)
    assert not np.array_equal(default.decision_function(NEW), other.decision_function(NEW))
    default.save(tmp_path / "m.npz")
    loaded = NBSVMClassifier.load(tmp_path / "m.npz")
    assert loaded.setting("lam") == lam
    more = NBSVMClassifier(keep_counts=True, **kw).fit(texts, labels)
    more.continue_fit(texts, labels)                      # a continued fit keeps it
    assert more.setting("lam") == lam and more.lam == lam


def test_cli_lambda_default_is_shown_and_a_negative_one_refused(tmp_path):
    three = tmp_path / "three.txt"
    three.write_text("".join(f"{y}\t{t}\n" for t, y in zip(THREE_TEXTS, THREE_LABELS)))
    model = tmp_path / "m.npz"
    r = runner.invoke(app, ["train", str(three), "--loss", "softmax", "--n-bits", "12",
                            "--epochs", "2", "-o", str(model), "-q"])
    assert r.exit_code == 0, r.output
    assert NBSVMClassifier.load(model).setting("lam") == 1e-5
    r = runner.invoke(app, ["train", str(three), "--lambda", "-1", "-o",
                            str(tmp_path / "n.npz"), "-q"])
    # refused while parsing (typer's range), and by the library for its callers
    assert r.exit_code == 2 and "'--lambda': -1.0 is not in the range x>=0.0" in r.output
    with pytest.raises(NBSVMError, match="lambda must be a non-negative number"):
        NBSVMClassifier(lam=-1.0).validate()


def test_tune_and_a_checkpoint_resolve_the_lambda_default_as_training_does(tmp_path):
    """nbsvm tune's reference candidate is the lambda an untuned model trains with; a
    checkpoint written when lambda left unset was recorded as 1e-4 resumes."""
    from nbsvm.models.checkpoint import Checkpoint
    from nbsvm.workflows.tune import reference_of

    grid = {"lam": [1e-4, 1e-5]}
    assert reference_of(grid, {"loss": "softmax"}, ["a", "b", "c"]) == {"lam": 1e-5}
    assert reference_of(grid, {"loss": "softmax"}, ["a", "b"]) == {"lam": 1e-4}
    assert reference_of(grid, {}, ["a", "b", "c"]) == {"lam": 1e-4}
    path = tmp_path / "m.checkpoint.npz"
    for loss, resumes in ((None, True), ("softmax", False)):
        written = dict(NBSVMClassifier(loss=loss).get_params(), lam=1e-4)
        path.unlink(missing_ok=True)  # an earlier run's checkpoint is refused without resume
        Checkpoint(path, every=1).write(written, 1, np.random.default_rng(0), {},
                                        {"x": np.zeros(1)})
        now = NBSVMClassifier(loss=loss).get_params()
        if resumes:
            assert Checkpoint(path, resume=True).read(now, 10) is not None
        else:   # softmax's unset lambda may be 1e-5 now: another setting
            with pytest.raises(NBSVMError, match=r"other settings \(lambda: 0.0001 there, default now\)"):
                Checkpoint(path, resume=True).read(now, 10)


def test_train_with_a_lexicon_reads_the_data_defaults_from_the_data_it_counted(tmp_path):
    """nbsvm lexicon records the corpus it counted; train --lexicon takes min_df, eta0 and
    norm from it as train alone does (it took the package defaults: min_df 2 kept 49 of
    the 188 buckets of reviews.txt, 90% training accuracy against 100%)."""
    from nbsvm.io import npzfile
    from nbsvm.lexicon.nblexicon import NBLexicon

    data = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"
    lex, alone, with_lex = (tmp_path / n for n in ("lex.npz", "alone.npz", "with.npz"))
    hashing = ["--ngrams", "1", "--n-bits", "18", "--char-ngrams", "0"]
    assert runner.invoke(app, ["lexicon", str(data), *hashing, "-o", str(lex), "-q"]).exit_code == 0
    assert NBLexicon.load(lex).corpus_ == {"documents": 40, "ngrams": 386, "median_ngrams": 10}
    r = runner.invoke(app, ["train", str(data), *hashing, "-o", str(alone), "-q"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["train", str(data), "--lexicon", str(lex), "-o", str(with_lex)])
    assert r.exit_code == 0, r.output
    assert "data-dependent defaults: min_df 1, eta0 0.265, norm l2" in r.output
    a, b = NBSVMClassifier.load(alone), NBSVMClassifier.load(with_lex)
    assert [b.setting(k) for k in ("min_df", "eta0", "norm")] == [1, a.setting("eta0"), "l2"]
    assert a.setting("min_df") == 1 and np.array_equal(a.column_buckets(), b.column_buckets())
    # --ngrams is the lexicon's, as the other hashing options: another value is refused
    r = runner.invoke(app, ["train", str(data), "--lexicon", str(lex), "--ngrams", "3",
                            "-o", str(tmp_path / "x.npz")])
    assert r.exit_code == 2 and "--ngrams" in r.output and not (tmp_path / "x.npz").exists()
    # a lexicon file of an earlier version (no corpus): the package defaults, said so
    header, arrays = npzfile.load_npz(lex, "lexicon")
    del header["corpus"]
    npzfile.save_npz(tmp_path / "old.npz", "lexicon", header, arrays)
    r = runner.invoke(app, ["train", str(data), "--lexicon", str(tmp_path / "old.npz"),
                            "-o", str(tmp_path / "o.npz")])
    assert r.exit_code == 0 and "does not record the data it counted" in r.output
    assert NBSVMClassifier.load(tmp_path / "o.npz").setting("min_df") == 2
    header["corpus"] = {"documents": 40, "ngrams": -1, "median_ngrams": 10}
    npzfile.save_npz(tmp_path / "bad.npz", "lexicon", header, arrays)
    with pytest.raises(NBSVMError, match="corrupted lexicon file: corpus must hold three counts"):
        NBLexicon.load(tmp_path / "bad.npz")


def test_a_lexicons_default_alpha_is_resolved_by_the_model_that_trains_on_it(tmp_path):
    """The file recorded the alpha of its classes as counted: label-set keys for
    multi-label (two keys: 1.0), so train --multilabel --lexicon took 1.0 where train alone
    takes the multi-label 0.5; a given --alpha is kept."""
    data = tmp_path / "ml.txt"
    data.write_text("food\tapple pie\nfood,health\tsalad greens\nfood\tcake sugar\n"
                    "food,health\tkale juice\nfood\tbread butter\nfood,health\toats berries\n")
    run = CliRunner().invoke
    for alpha, want in (([], 0.5), (["--alpha", "0.25"], 0.25)):
        assert run(app, ["lexicon", str(data), "-o", str(tmp_path / "l.npz"), "--n-bits", "12",
                         *alpha]).exit_code == 0
        assert run(app, ["train", str(data), "--multilabel", "--lexicon", str(tmp_path / "l.npz"),
                         "-o", str(tmp_path / "b.npz"), "-q"]).exit_code == 0
        assert NBSVMClassifier.load(tmp_path / "b.npz").setting("alpha") == want
    assert run(app, ["train", str(data), "--multilabel", "--n-bits", "12",
                     "-o", str(tmp_path / "c.npz"), "-q"]).exit_code == 0
    assert NBSVMClassifier.load(tmp_path / "c.npz").setting("alpha") == 0.5


def test_a_checkpoint_refused_for_a_calibration_turned_off_says_none(tmp_path):
    """--calibrate none (None) beside the default 'auto' read "calibrate: 'auto' there,
    default now", as if none were the default (a helper's hunt)."""
    from nbsvm.models.checkpoint import Checkpoint
    path = tmp_path / "m.checkpoint.npz"
    Checkpoint(path, every=1).write(NBSVMClassifier().get_params(), 1,
                                    np.random.default_rng(0), {}, {"x": np.zeros(1)})
    with pytest.raises(NBSVMError, match=r"\(calibrate: 'auto' there, none now\)"):
        Checkpoint(path, resume=True).read(NBSVMClassifier(calibrate=None).get_params(), 10)
