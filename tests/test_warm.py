"""Continuing training from a saved model (issue 18, item 4): ``keep_counts``,
``continue_fit`` / ``train --init`` and ``partial_fit`` after ``load``, against one training
on all the documents (nbsvm/models/warm.py says what can be equal and what cannot)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.lexicon.nblexicon import NBLexicon

NBSVM = Path(sys.executable).parent / "nbsvm"


@pytest.fixture(scope="module")
def parts(imdb_slice):
    """Two halves of IMDB slice reviews, classes interleaved, and a test part."""
    def read(split, lo, hi):
        texts, labels = [], []
        files = {lab: sorted((imdb_slice / split / lab).glob("*.txt")) for lab in ("pos", "neg")}
        for i in range(lo, hi):
            for lab in ("pos", "neg"):
                texts.append(files[lab][i].read_text(encoding="utf-8"))
                labels.append(lab)
        return texts, labels
    return read("train", 0, 250), read("train", 250, 500), read("test", 0, 300)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_counts_and_ratios_equal_one_training_on_all(parts, tmp_path):
    (XA, yA), (XB, yB), (Xt, yt) = parts
    kw = dict(ngrams=2, n_bits=18, min_df=2, epochs=3)
    a = NBSVMClassifier(keep_counts=True, **kw).fit(XA, yA)
    a.save(tmp_path / "a.npz")
    b = NBSVMClassifier.load(tmp_path / "a.npz").continue_fit(XB, yB)
    one = NBSVMClassifier(keep_counts=True, **kw).fit(XA + XB, yA + yB)
    ref = NBLexicon(one.hasher_, alpha=1.0).fit(XA + XB, yA + yB)    # plain recount
    assert np.array_equal(b.lexicon_.counts(), ref.counts())
    assert b.class_counts_.tolist() == [500, 500] and b.n_docs_ == 1000
    assert np.array_equal(b.ratios_, one.ratios_)                  # same kept buckets, ratios
    assert np.array_equal(b.column_buckets(), one.column_buckets())
    # NB features: A's weights were learned on A's ratios, so the weights differ from one
    # run's; the model is as good
    assert not np.array_equal(b.coef_, one.coef_)
    assert b.score(Xt, yt) > one.score(Xt, yt) - 0.03
    assert b.score(Xt, yt) > a.score(Xt, yt) - 0.01


@pytest.mark.parametrize("optimizer", ["adagrad", "sgd"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_binary_features_one_ordered_epoch_equal_one_training(parts, optimizer):
    """Features that do not depend on the counts, the first epoch in order, one thread:
    A then B trains the very weights of one run over A then B (AdaGrad bit for bit; SGD
    up to the float32 rounding of folding its scale into the weights when A is saved)."""
    (XA, yA), (XB, yB), _ = parts
    kw = dict(ngrams=2, n_bits=18, min_df=1, weighting="binary", epochs=1, threads=1,
              eta0=0.1, norm="none", optimizer=optimizer)
    a = NBSVMClassifier(keep_counts=True, **kw).fit(XA, yA).continue_fit(XB, yB)
    one = NBSVMClassifier(keep_counts=True, **kw).fit(XA + XB, yA + yB)
    if optimizer == "adagrad":
        assert np.array_equal(a.coef_, one.coef_)
        assert np.array_equal(a.linear_.state_, one.linear_.state_)      # bias, t, G_bias
        assert np.array_equal(a.linear_.S_[0, :, 2], one.linear_.S_[0, :, 2])   # sums
    else:
        assert np.abs(a.coef_ - one.coef_).max() < 1e-5 * np.abs(one.coef_).max()
        assert a.linear_.state_[0, 2] == one.linear_.state_[0, 2]      # the step counter


def test_partial_fit_after_load_updates_the_counts(parts, tmp_path):
    (XA, yA), (XB, yB), (Xt, yt) = parts
    a = NBSVMClassifier(ngrams=1, n_bits=16, min_df=1, keep_counts=True).fit(XA, yA)
    a.save(tmp_path / "a.npz")
    b = NBSVMClassifier.load(tmp_path / "a.npz")
    b.partial_fit(XB, yB)
    ref = NBLexicon(b.hasher_, alpha=1.0).fit(XA + XB, yA + yB)
    assert b.class_counts_.tolist() == [500, 500]
    assert np.array_equal(b.ratios_[0], ref.ratios()[0] if ref.ratios().ndim == 2
                          else ref.ratios())
    assert b.score(Xt, yt) > 0.7
    plain = NBSVMClassifier.load(tmp_path / "a.npz")
    plain.__dict__.pop("lexicon_")          # a model without counts: the lexicon stays
    before = plain.ratios_.copy()
    plain.partial_fit(XB, yB)
    assert np.array_equal(plain.ratios_, before)


@pytest.mark.parametrize("first", ["pos", "neg", "sports"])
def test_partial_fit_right_after_fit_counts_each_class_as_its_own(first):
    """The lexicon of a fit numbers its classes as the data first met them; partial_fit
    counted each document under its class's index in the sorted classes_ instead, so with
    the first label other than classes_[0] the classes' counts were swapped (the model
    inverted after two calls)."""
    texts = ["a great film", "great fun", "an awful film", "dull and boring", "the match", "a goal"]
    labels = ["pos", "pos", "neg", "neg", "sports", "sports"]
    if first != "sports":           # two classes
        texts, labels = texts[:4], labels[:4]
    order = sorted(range(len(texts)), key=lambda i: labels[i] != first)
    X, y = [texts[i] for i in order], [labels[i] for i in order]
    model = NBSVMClassifier(ngrams=1, n_bits=16, min_df=1, keep_counts=True).fit(X, y)
    assert model.lexicon_.code_labels()[0] == first
    model.partial_fit(X, y)
    ref = NBLexicon(model.hasher_, alpha=model.lexicon_.alpha).fit(X + X, y + y)
    assert model.class_counts_.tolist() == ref.class_counts_.tolist() == [2 * y.count(c) for c in sorted(set(y))]
    got, want = model.lexicon_.compact(), ref.compact()
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert list(model.predict(X)) == y


def test_continuing_says_what_it_needs(parts, tmp_path):
    (XA, yA), (XB, yB), _ = parts
    plain = NBSVMClassifier(ngrams=1, n_bits=14).fit(XA, yA)
    with pytest.raises(NBSVMError, match="--keep-counts"):
        plain.continue_fit(XB, yB)
    kept = NBSVMClassifier(ngrams=1, n_bits=14, keep_counts=True).fit(XA, yA)
    with pytest.raises(NBSVMError, match="classes the model does not know: meh"):
        kept.continue_fit(XB[:3], ["pos", "neg", "meh"])
    with pytest.raises(NBSVMError, match="not available with auto"):
        NBSVMClassifier(keep_counts=True, auto=True).fit(XA, yA)


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_cli_init_continues_a_saved_model(imdb_slice, tmp_path):
    def lines(name, lo, hi):
        path = tmp_path / name
        with open(path, "w", encoding="utf-8") as f:
            for lab in ("pos", "neg"):
                for p in sorted((imdb_slice / "train" / lab).glob("*.txt"))[lo:hi]:
                    text = p.read_text(encoding="utf-8").replace("\t", " ").replace("\n", " ")
                    f.write(f"{lab}\t{text}\n")
        return path
    a_txt, b_txt = lines("a.txt", 0, 500), lines("b.txt", 500, 1000)
    a, ab = tmp_path / "a.npz", tmp_path / "ab.npz"
    subprocess.run([str(NBSVM), "train", str(a_txt), "-o", str(a), "--keep-counts", "-q",
                    "--n-bits", "20"], check=True, capture_output=True)
    run = subprocess.run([str(NBSVM), "train", str(b_txt), "--init", str(a), "-o", str(ab)],
                         check=True, capture_output=True, text=True)
    assert "continuing the saved model" in run.stderr and "documents: 2000" in run.stdout

    def accuracy(model):
        return json.loads(subprocess.run([str(NBSVM), "eval", "-m", str(model),
                                          str(imdb_slice / "test"), "--json"], check=True,
                                         capture_output=True, text=True).stdout)["accuracy"]
    assert accuracy(ab) > accuracy(a)
    bad = subprocess.run([str(NBSVM), "train", str(b_txt), "--init", str(a), "-o",
                          str(tmp_path / "x.npz"), "--auto"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--init" in bad.stderr


def test_cli_init_of_a_multilabel_model_reads_its_data_as_label_sets(tmp_path):
    """train --init of a multi-label model read the new file as one label a document unless
    --multilabel was given again: a document of no label ('\\ttext') was 'empty label
    before the TAB', and --skip-bad-lines, as the error advised, would have dropped the
    documents that are negatives of every label (a helper's hunt). The model's task reads
    the data; the result equals giving --multilabel."""
    from testhelpers import run_cli
    from nbsvm.datasets import fixture
    lines = fixture("tags.txt").read_text(encoding="utf-8").splitlines()
    first, more = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("\n".join(lines[:16]) + "\n")
    more.write_text("\n".join(lines[16:]) + "\n\tbake bread\n")
    base = tmp_path / "a.npz"
    assert run_cli("train", first, "--multilabel", "--keep-counts", "-o", base, "-q",
                   "--n-bits", "14").returncode == 0
    outs = []
    for extra in ([], ["--multilabel"]):
        out = tmp_path / f"b{len(extra)}.npz"
        r = run_cli("train", more, "--init", base, "-o", out, *extra)
        assert r.returncode == 0 and f"documents: {len(lines) + 1}" in r.stdout, r.stderr
        outs.append(NBSVMClassifier.load(out))
    texts = ["bake bread", "a football match", "fresh fruit and running"]
    assert np.array_equal(outs[0].decision_function(texts), outs[1].decision_function(texts))


def test_keep_counts_refuses_a_lexicon_argument(parts):
    (XA, yA), _, _ = parts
    from nbsvm.io.document import Document
    from nbsvm.lexicon.build import build_lexicon
    clf = NBSVMClassifier(ngrams=1, n_bits=14, keep_counts=True)
    docs = [Document(lab, t, "<t>", i) for i, (t, lab) in enumerate(zip(XA, yA))]
    with pytest.raises(NBSVMError, match="give the documents, not a lexicon"):
        clf.fit_documents(docs, lexicon=build_lexicon(docs, clf.validate()))


def test_a_backend_learner_with_every_bucket_a_column_reloads(parts, tmp_path):
    (XA, yA), _, (Xt, _) = parts
    clf = NBSVMClassifier(n_bits=12, learner="pa").fit(XA, yA)
    assert clf.column_of_ is None                 # columns are buckets (most are kept)
    clf.save(tmp_path / "pa.npz")
    back = NBSVMClassifier.load(tmp_path / "pa.npz")
    assert np.array_equal(back.decision_function(Xt[:40]), clf.decision_function(Xt[:40]))


def test_learning_into_a_keep_counts_model_is_refused_beyond_the_memory_available(monkeypatch):
    # its first batch gives it a column per bucket (2**n_bits x outputs: 1.5 GB for 10
    # classes at 24 bits), which grew without a check, a server's memory with it
    from conftest import synthetic
    from nbsvm import memory
    docs = synthetic(300, n_classes=3, seed=2)
    texts, labels = [d.text for d in docs], [d.label for d in docs]
    model = NBSVMClassifier(n_bits=16, keep_counts=True, calibrate=None).fit(texts, labels)
    before = model.decision_function(texts[:5]).copy()
    monkeypatch.setattr(memory, "available_bytes", lambda: 100 << 20)
    with pytest.raises(NBSVMError, match="learning into a model loaded with keep_counts needs"):
        model.partial_fit(texts[:3], labels[:3])
    assert np.array_equal(model.decision_function(texts[:5]), before)
    monkeypatch.setattr(memory, "available_bytes", lambda: None)
    model.partial_fit(texts[:3], labels[:3])  # (one column per bucket now)
    assert model.column_of_ is None


def test_keep_counts_with_tuned_thresholds_is_refused_before_reading():
    """--keep-counts --threshold auto read the inputs twice and kept counts only --init
    could use, which then refused the model (tuned thresholds): refused up front, as
    --keep-counts --calibrate is; the refusals name the options too."""
    with pytest.raises(NBSVMError, match=r"threshold='auto' \(--threshold auto\) is not "
                                         r"available with keep_counts \(--keep-counts\)"):
        NBSVMClassifier(multilabel=True, keep_counts=True, threshold="auto").fit(
            ["a b", "c d"], [["x"], ["y"]])
    with pytest.raises(NBSVMError, match=r"keep_counts \(--keep-counts\) is not available "
                                         r"with early_stopping \(--valid\)"):
        NBSVMClassifier(keep_counts=True, early_stopping=True).fit(["a b", "c d"], ["x", "y"])
