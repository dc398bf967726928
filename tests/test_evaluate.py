"""Streaming evaluation: evaluate_documents, evaluate_cache and fit_and_evaluate."""
import math
import threading

import numpy as np
import pytest

from nbsvm import NBLexicon, NBSVMClassifier, NBSVMError
from nbsvm.evaluation.evaluate import evaluate_cache, evaluate_documents
from nbsvm.evaluation.heldout import fit_and_evaluate
from nbsvm.data.cache import CacheWriter
from nbsvm.data.batches import hash_batches
from nbsvm.io.document import Document
from nbsvm.io.labeled_lines import read_lines

from conftest import synthetic

SETTINGS = dict(ngrams=2, n_bits=16, hash_seed=1, eta0=0.05, lam=1e-4, epochs=3, seed=2)


def _hand_report(clf, docs):
    """Accuracy, confusion matrix and mean log loss from predict/predict_proba."""
    texts, labels = [d.text for d in docs], [d.label for d in docs]
    pred = clf.predict(texts)
    k = len(clf.classes_)
    cm = np.zeros((k, k), dtype=int)
    for t, p in zip(labels, pred):
        cm[clf.classes_.index(t), clf.classes_.index(p)] += 1
    out = dict(accuracy=float(np.mean(pred == np.array(labels, dtype=object))),
               confusion_matrix=cm.tolist())
    if clf.loss in ("log", "modified_huber"):
        proba = clf.predict_proba(texts)
        p_true = [min(1.0, max(1e-15, proba[i, clf.classes_.index(l)]))
                  for i, l in enumerate(labels)]
        out["log_loss"] = -sum(math.log(p) for p in p_true) / len(labels)
    return out


@pytest.mark.parametrize("kw, n_classes, with_lexicon", [
    (dict(optimizer="adagrad", loss="log"), 2, False),
    (dict(optimizer="sgd", loss="modified_huber", beta=0.5, interpolate="weights"), 3, True),
    (dict(optimizer="adagrad", loss="hinge", beta=0.7, interpolate="scores"), 2, True),
    # trains twice (nine tenths, then all): the test set was mapped to the first fit's
    # columns and scored the last one at chance (20NG: 4.97% against 87.56%)
    (dict(calibrate="temperature", min_df=2), 3, False),
])
@pytest.mark.slow  # make test-slow: four more trainings; log loss by batches is another test
def test_fit_and_evaluate_equals_fit_then_evaluate(tmp_path, kw, n_classes, with_lexicon):
    train = synthetic(3000, n_classes=n_classes, seed=10)
    test = synthetic(2600, n_classes=n_classes, seed=11)       # several scoring batches
    lex = None
    if with_lexicon:
        lex = NBLexicon(NBSVMClassifier(**SETTINGS)._hasher()).fit(
            [d.text for d in train], [d.label for d in train])
    a = NBSVMClassifier(cache_dir=str(tmp_path), **SETTINGS, **kw)
    docs = list if "calibrate" in kw else iter           # a mode that reads them twice
    rep_a = fit_and_evaluate(a, docs(train), iter(test), lexicon=lex)
    b = NBSVMClassifier(**SETTINGS, **kw).fit_documents(docs(train), lexicon=lex)
    rep_b = evaluate_documents(b, iter(test))
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    timings = rep_a.pop("timings")
    assert {"fit_s", "wait_test_hash_s", "eval_s"} <= set(timings)
    ll_a, ll_b = rep_a.pop("log_loss", None), rep_b.pop("log_loss", None)
    assert rep_a == rep_b                     # accuracy, confusion matrix, P/R/F1: identical
    assert (ll_a is None) == (ll_b is None)
    if ll_a is not None:          # (bit-for-bit equality: test_log_loss_independent_of_batching)
        assert ll_a == pytest.approx(ll_b, rel=1e-13)
        rep_a["log_loss"] = ll_a
    assert rep_a["n_docs"] == 2600
    assert ("log_loss" in rep_a) == (b.setting("loss") != "hinge" or b.calibrator_ is not None)
    hand = _hand_report(b, test)
    assert rep_a["accuracy"] == hand["accuracy"] > 0.8
    assert rep_a["confusion_matrix"] == hand["confusion_matrix"]
    if "log_loss" in hand:
        assert rep_a["log_loss"] == pytest.approx(hand["log_loss"], rel=1e-12)
    assert list(tmp_path.iterdir()) == []                          # temporary caches removed
    assert not [t for t in threading.enumerate() if t.name.startswith("nbsvm-") and t.is_alive()]


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_log_loss_independent_of_batching(tmp_path):
    """`nbsvm eval` (evaluate_documents) and `nbsvm train --test` (fit_and_evaluate, which
    scores a cache with evaluate_cache) must print the same log loss for the same model and
    test set. The per-document terms are identical, but they are summed per batch (batches of
    BATCH_DOCS documents against cache.batches(2048)) and the float64 partial sums are then
    added, so the totals can differ in the last bits, depending on the data."""
    train = synthetic(3000, seed=10)
    clf = NBSVMClassifier(optimizer="adagrad", loss="log", **SETTINGS).fit_documents(iter(train))
    mismatches = []
    for seed in range(11, 19):
        test = synthetic(2600, seed=seed)
        writer = CacheWriter(tmp_path / f"test{seed}", clf.hasher_)
        for batch in hash_batches(iter(test), clf.hasher_):
            writer.add(batch)
        from_cache = evaluate_cache(clf, writer.close())["log_loss"]
        from_docs = evaluate_documents(clf, iter(test))["log_loss"]
        assert from_cache == pytest.approx(from_docs, rel=1e-13)      # equal up to rounding
        if from_cache != from_docs:
            mismatches.append((seed, from_cache, from_docs))
    assert mismatches == []                                           # ... and bit for bit


def test_evaluate_cache_equals_evaluate_documents(tmp_path):
    train, test = synthetic(1500, n_classes=3, seed=1), synthetic(2100, n_classes=3, seed=2)
    clf = NBSVMClassifier(**SETTINGS).fit_documents(iter(train))
    writer = CacheWriter(tmp_path / "test", clf.hasher_)
    for batch in hash_batches(iter(test), clf.hasher_):
        writer.add(batch)
    cache = writer.close()
    rep_cache, rep_docs = evaluate_cache(clf, cache), evaluate_documents(clf, iter(test))
    assert rep_cache.pop("log_loss") == pytest.approx(rep_docs.pop("log_loss"), rel=1e-13)
    assert rep_cache == rep_docs
    assert rep_cache["n_docs"] == 2100 and len(rep_cache["confusion_matrix"]) == 3


def test_evaluate_cache_refuses_other_settings_and_unknown_labels(tmp_path):
    train = synthetic(400, seed=1)
    clf = NBSVMClassifier(**SETTINGS).fit_documents(iter(train))
    other = NBSVMClassifier(**dict(SETTINGS, n_bits=15))._hasher()
    writer = CacheWriter(tmp_path / "a", other)
    writer.add(next(hash_batches(iter(train[:10]), other)))
    with pytest.raises(NBSVMError, match="other settings"):
        evaluate_cache(clf, writer.close())
    p = tmp_path / "test.txt"
    p.write_text("pos\tgreat\nneg\tawful\nmeh\tso so\n", encoding="utf-8")
    writer = CacheWriter(tmp_path / "b", clf.hasher_)
    for batch in hash_batches(read_lines(p), clf.hasher_):
        writer.add(batch)
    # a label the model does not know: every document with it is an error, and it is named
    rep = evaluate_cache(clf, writer.close())
    assert rep["unseen_labels"] == {"meh": 1} and rep["n_docs"] == 3
    assert rep["classes"] == clf.classes_ + ["meh"]
    assert rep["confusion_matrix"][-1][-1] == 0 and sum(rep["confusion_matrix"][-1]) == 1


def test_fit_and_evaluate_reports_test_file_errors_and_cleans_up(tmp_path):
    train = synthetic(1200, seed=3)
    bad = tmp_path / "test.txt"
    bad.write_text("pos\tfine\n" * 700 + "no tab here\n", encoding="utf-8")
    cache_dir = tmp_path / "caches"
    cache_dir.mkdir()
    clf = NBSVMClassifier(cache_dir=str(cache_dir), **SETTINGS)
    with pytest.raises(NBSVMError) as ei:
        fit_and_evaluate(clf, iter(train), read_lines(bad))
    assert (ei.value.path, ei.value.line) == (str(bad), 701)
    assert list(cache_dir.iterdir()) == []
    # a label of the test set that training never saw
    unk = tmp_path / "unk.txt"
    unk.write_text("pos\tfine\nweird\tlabel\n", encoding="utf-8")
    rep = fit_and_evaluate(clf, iter(train), read_lines(unk))
    assert rep["unseen_labels"] == {"weird": 1} and rep["n_docs"] == 2
    assert list(cache_dir.iterdir()) == []
    assert not [t for t in threading.enumerate() if t.name.startswith("nbsvm-") and t.is_alive()]


def test_evaluate_documents_needs_documents():
    clf = NBSVMClassifier(**SETTINGS).fit_documents(iter(synthetic(300)))
    with pytest.raises(NBSVMError, match="no documents"):
        evaluate_documents(clf, iter([]))
    with pytest.raises(NBSVMError, match=r"f\.txt:2: document has no label"):
        evaluate_documents(clf, iter([Document("pos", "a", "f.txt", 1),
                                      Document(None, "b", "f.txt", 2)]))


def test_correct_out_is_predict_against_the_label_document_by_document(tmp_path):
    """evaluate_cache(correct_out=...) gives, in the cache's order, whether clf.predict
    named each document's label (what --auto pairs between two models); a label the model
    never saw is an error."""
    train = synthetic(1500, seed=3)
    test = synthetic(700, seed=4)
    test[5] = test[5]._replace(label="never-seen")
    clf = NBSVMClassifier(**SETTINGS).fit_documents(iter(train))
    writer = CacheWriter(tmp_path / "test", clf.hasher_)
    for batch in hash_batches(iter(test), clf.hasher_):
        writer.add(batch)
    correct: list = []
    rep = evaluate_cache(clf, writer.close(), correct_out=correct)
    right = np.concatenate(correct)
    hand = np.array(clf.predict([d.text for d in test])) == np.array([d.label for d in test])
    assert right.dtype == bool and len(right) == 700 and not right[5]
    assert np.array_equal(right, hand)
    assert right.mean() == rep["accuracy"]


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_calibrated_fit_keeps_the_history_of_its_last_fit_only(tmp_path):
    """calibrate='temperature' trains on nine tenths, then on all: the epoch history and
    the per-epoch test scores are the last fit's, scored in its own columns."""
    from nbsvm.evaluation.heldout import EpochHistory

    train = synthetic(1500, n_classes=3, seed=12)
    test = synthetic(800, n_classes=3, seed=13)
    history = EpochHistory()
    a = NBSVMClassifier(cache_dir=str(tmp_path), calibrate="temperature", **SETTINGS)
    rep = fit_and_evaluate(a, lambda: iter(train), iter(test), history=history)
    b = NBSVMClassifier(calibrate="temperature", **SETTINGS).fit_documents(list(train))
    epochs = a.setting("epochs")
    assert sorted(history.loss) == list(range(1, epochs + 1))
    assert history.test_accuracy[epochs] == rep["accuracy"] == evaluate_documents(
        b, iter(test))["accuracy"] > 0.8
    assert all(v > 0.8 for v in history.test_accuracy.values())   # never at chance


def test_a_cache_dir_that_is_a_file_is_named_as_such(tmp_path):
    """It was FileExistsError: [Errno 17] File exists (whose file, and why, unsaid)."""
    not_a_folder = tmp_path / "reviews.txt"
    not_a_folder.write_text("pos\tfine\n")
    clf = NBSVMClassifier(cache_dir=str(not_a_folder), **SETTINGS)
    with pytest.raises(NBSVMError, match=r"cache_dir .*reviews.txt is not a folder"):
        clf.fit(["good", "bad"], ["pos", "neg"])
    assert not_a_folder.read_text() == "pos\tfine\n"
    # nbsvm train: refused before any document is read (it was after the whole hashing
    # pass; a FIFO's writer waited for it), and tune makes or refuses its folder as train
    from nbsvm.workflows.job import train_job
    from nbsvm.workflows.tune import tune

    def never_read():
        raise AssertionError("a document was read")

    with pytest.raises(NBSVMError, match=r"cache_dir .*reviews.txt is not a folder"):
        train_job(clf, [not_a_folder], never_read, tmp_path / "m.npz", {})
    pairs = [("good fun", "pos"), ("bad film", "neg")] * 20
    with pytest.raises(NBSVMError, match=r"cache_dir .*reviews.txt is not a folder"):
        tune(pairs, {"lam": [1e-4]}, SETTINGS, workdir=not_a_folder)
    tune(pairs, {"lam": [1e-4]}, SETTINGS, folds=2, workdir=tmp_path / "made" / "here")
    assert (tmp_path / "made" / "here").is_dir()


def test_a_test_label_spelled_as_a_model_class_is_refused(tmp_path):
    """A metrics hunt: a test label that differs from a class of the model only in its
    Unicode normalization, its case or a character that does not show was a label the
    model does not know (every document of it an error: 60% accuracy where all were right),
    printed like the model's own class; training refuses such pairs. Refused with the
    file and line; a label the model truly does not know still counts as an error."""
    import unicodedata
    from testhelpers import run_cli
    words = {"caf\u00e9": "coffee espresso latte", "tea": "green oolong chai"}
    lines = [f"{lab}\t{words[lab]} w{i % 7}" for i in range(60) for lab in words]
    (tmp_path / "train.txt").write_text("\n".join(lines) + "\n")
    ran = run_cli("train", tmp_path / "train.txt", "-o", tmp_path / "m.npz", "-q",
                  "--min-df", "1")
    assert ran.returncode == 0, ran.stderr
    spelled = {"nfd": unicodedata.normalize("NFD", "caf\u00e9"), "case": "Tea",
               "hidden": "tea\u200b"}
    for name, label in spelled.items():
        test = tmp_path / f"{name}.txt"
        other = "tea\tgreen chai" if name == "nfd" else "caf\u00e9\tcoffee latte"
        test.write_text(f"{other}\n{label}\tcoffee latte green chai\n")
        ran = run_cli("eval", test, "-m", tmp_path / "m.npz")
        assert ran.returncode == 2, (name, ran.stdout)
        assert f"{test.name}:2: label {label!r}" in ran.stderr and "a class of the model" in ran.stderr
        ran = run_cli("train", tmp_path / "train.txt", "--test", test, "-o",
                      tmp_path / f"{name}.npz", "-q", "--min-df", "1")
        assert f"{test.name}:2: label {label!r}" in ran.stderr, ran.stderr
    (tmp_path / "juice.txt").write_text("tea\tgreen chai\njuice\tcoffee latte\n")
    ran = run_cli("eval", tmp_path / "juice.txt", "-m", tmp_path / "m.npz")
    assert ran.returncode == 0 and "juice" in ran.stdout and "50.00%" in ran.stdout


def test_a_model_of_classes_spelled_alike_still_evaluates():
    """A review of the check above: the API takes classes 'A' and 'a' (and Dask's shards
    each check their own); seeding the check with such a model's classes refused every
    evaluation of it, early stopping's and auto's included. Only test labels the model
    does not know are checked."""
    texts = ["upper case words", "lower case words"] * 20
    clf = NBSVMClassifier(n_bits=10, min_df=1, char_ngrams=0).fit(texts, ["A", "a"] * 20)
    rep = clf.evaluate(texts, ["A", "a"] * 20)
    assert rep["accuracy"] == 1.0
    with pytest.raises(NBSVMError, match="in their width.*a class of the model"):
        clf.evaluate(texts[:2], ["A", "\uff41"])  # a fullwidth 'a': spelled as a class is


def test_a_test_set_error_between_epochs_keeps_the_trained_model():
    """A review: with a history (train --plot), the test set is scored after each epoch,
    inside the fit: its error (here a label spelled as a class) was raised there and the
    trained model thrown away, not saved as without --plot. The epochs go on; the error
    comes after the fit, as the test set's own."""
    from nbsvm.errors import TestSetError
    from nbsvm.evaluation.heldout import EpochHistory
    train = [Document(("tea", "coffee")[i % 2], ("green chai", "dark roast")[i % 2], "t", i + 1)
             for i in range(40)]
    test = [Document("Tea", "green chai", "test.txt", 1)]
    clf = NBSVMClassifier(n_bits=10, min_df=1, epochs=3, char_ngrams=0)
    with pytest.raises(TestSetError, match="test.txt:1: label 'Tea' differs only in case"):
        fit_and_evaluate(clf, iter(train), iter(test), history=EpochHistory())
    assert list(clf.predict(["green chai", "dark roast"])) == ["tea", "coffee"]
