"""calibrate='auto' (the default): a temperature fitted on a held-out tenth where the
probabilities need it (more than two classes, a rare class), nothing elsewhere; the labels
are the uncalibrated model's. Checked against the calibration done by hand, against
scikit-learn's log loss, and through the CLI on 20 Newsgroups subject lines."""
from __future__ import annotations

import json
import re
import tarfile

import numpy as np
import pytest
from typer.testing import CliRunner

from nbsvm import NBSVMClassifier
from nbsvm.cli import app
from nbsvm.learners.calibrator import Calibrator
from nbsvm.models.calibrate import held_out_scores, split
from tests.conftest import shared_datasets, synthetic

KW = dict(ngrams=1, n_bits=14, epochs=3)


def _events():
    seen = []
    return seen, seen.append


def _xy(docs):
    return [d.text for d in docs], [d.label for d in docs]


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_more_than_two_classes_get_the_temperature_fitted_by_hand():
    docs = synthetic(900, n_classes=4, seed=1)
    seen, callback = _events()
    clf = NBSVMClassifier(**KW).fit_documents(docs, callback=callback)
    plain = NBSVMClassifier(**KW, calibrate=None).fit_documents(docs)
    assert clf.calibrator_ is not None and plain.calibrator_ is None
    rep = clf.calibration_report_
    assert rep["method"] == "temperature (auto: 4 classes)" and 50 <= rep["held_out"] <= 130
    assert [e["stage"] for e in seen].count("calibrated") == 1
    # the same temperature as a copy trained without the held-out tenth, fitted by hand
    copy = NBSVMClassifier(**KW, calibrate=None).fit_documents(
        lambda: split(iter(docs), 0, held=False))
    scores, truth, _ = held_out_scores(copy, split(iter(docs), 0, held=True))
    by_hand = Calibrator("temperature", False).fit(scores, truth)
    texts, _ = _xy(synthetic(300, n_classes=4, seed=2))
    s = plain.decision_function(texts)
    assert np.allclose(clf.predict_proba(texts), by_hand.probabilities(s))
    # the labels and scores are the model trained on everything
    assert np.array_equal(clf.predict(texts), plain.predict(texts))
    assert np.array_equal(clf.decision_function(texts), s)


def test_calibrated_log_loss_beats_the_raw_probabilities():
    from sklearn.metrics import log_loss
    train, test = synthetic(1500, n_classes=4, seed=3, words=12), synthetic(600, 4, seed=4,
                                                                            words=12)
    x, y = _xy(test)
    raw = NBSVMClassifier(**KW, calibrate=None).fit_documents(train)
    auto = NBSVMClassifier(**KW).fit_documents(train)
    before = log_loss(y, np.clip(raw.predict_proba(x), 1e-15, 1), labels=raw.classes_)
    after = log_loss(y, auto.predict_proba(x), labels=auto.classes_)
    assert after < before and after < 1.0, (before, after)


@pytest.mark.parametrize("share, calibrated", [(0.5, False), (0.3, False), (0.15, True)])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_two_classes_only_when_one_is_rare(share, calibrated):
    rng = np.random.default_rng(0)
    docs = synthetic(3000, seed=5)
    pos = [d for d in docs if d.label == "pos"]
    neg = [d for d in docs if d.label == "neg"]
    n_pos = int(round(share * 1000))
    picked = pos[:n_pos] + neg[:1000 - n_pos]
    picked = [picked[i] for i in rng.permutation(len(picked))]
    clf = NBSVMClassifier(**KW).fit_documents(picked)
    assert (clf.calibrator_ is not None) == calibrated
    if calibrated:
        assert clf.calibration_report_["method"].startswith("temperature (auto: a class of 15")


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_skipped_where_it_cannot_or_should_not():
    docs = synthetic(900, n_classes=3, seed=6)
    seen, callback = _events()
    one_shot = NBSVMClassifier(**KW).fit_documents(iter(docs), callback=callback)
    assert one_shot.calibrator_ is None
    skipped = [e for e in seen if e["stage"] == "calibration skipped"]
    assert len(skipped) == 1 and "read twice" in skipped[0]["why"]
    for kw in (dict(keep_counts=True), dict(multilabel=False, learner="pa"),
               dict(calibrate=None)):
        assert NBSVMClassifier(**KW, **kw).fit_documents(docs).calibrator_ is None, kw
    # two classes, one rare, under 500 documents: the log loss's own probabilities stand
    rare = [d for d in synthetic(3000, seed=5) if d.label == "pos"][:60]
    rare += [d for d in synthetic(3000, seed=5) if d.label == "neg"][:340]
    assert NBSVMClassifier(**KW).fit_documents(rare).calibrator_ is None


def _many_classes(n_classes, per_class, seed):
    """``per_class`` documents of each of ``n_classes`` classes in a shuffled order, each
    with four words of its class among 26 common ones."""
    from nbsvm.io.document import Document

    rng = np.random.default_rng(seed)
    common = [f"c{i}" for i in range(200)]
    labels = rng.permutation(np.repeat(np.arange(n_classes), per_class))
    return [Document(f"k{c}", " ".join(list(rng.choice([f"k{c}w{j}" for j in range(30)], 4))
                                       + list(rng.choice(common, 26))), "m", i + 1)
            for i, c in enumerate(labels)]


@pytest.mark.parametrize("fraction, counts", [(0.1, {2, 3}), (0.25, {7, 8})])
def test_the_held_out_part_holds_each_class_evenly(fraction, counts):
    """20 classes of 30 documents in a shuffled stream: each class holds out
    floor(29 * fraction + phase) of its documents, never its first, the same ones on every
    read. A random draw per document left some class out of the tenth in most seeds, and
    the calibration of 20 Newsgroups at 30 messages per group was skipped (test log loss
    6.11 against 1.48 calibrated)."""
    docs = _many_classes(20, 30, seed=0)
    for seed in range(10):
        held = list(split(iter(docs), seed, True, fraction))
        rest = list(split(iter(docs), seed, False, fraction))
        assert sorted(d.line for d in held + rest) == list(range(1, 601))
        assert [d.line for d in split(iter(docs), seed, True, fraction)] == [d.line for d in held]
        per_class = {d.label: 0 for d in docs}
        for d in held:
            per_class[d.label] += 1
        assert set(per_class.values()) <= counts, (seed, per_class)
        firsts = {d.label: d.line for d in reversed(docs)}
        assert not {d.line for d in held} & set(firsts.values())
    assert len(list(split(iter(docs), 0, True, 0.5, limit=40))) == 40


def test_few_documents_of_many_classes_are_calibrated():
    """12 classes of 20 documents: calibrated from 240 documents on (with more than two
    classes the modified Huber loss's own probabilities are clipped scores: exact zeros
    for the true class). Under 500 documents nothing was calibrated; the temperature fitted
    on the 12-24 held-out documents lowers the test log loss."""
    from sklearn.metrics import log_loss

    train, test = _many_classes(12, 20, seed=1), _many_classes(12, 40, seed=2)
    clf = NBSVMClassifier(**KW).fit_documents(train)
    raw = NBSVMClassifier(**KW, calibrate=None).fit_documents(train)
    assert clf.calibrator_ is not None and raw.calibrator_ is None
    assert clf.calibration_report_["method"] == "temperature (auto: 12 classes)"
    assert 12 <= clf.calibration_report_["held_out"] <= 24
    texts, y = _xy(test)
    p_raw, p = raw.predict_proba(texts), clf.predict_proba(texts)
    assert (p_raw == 0).any() and (p > 0).all()
    assert log_loss(y, p, labels=clf.classes_) < log_loss(
        y, np.clip(p_raw, 1e-15, 1), labels=raw.classes_)
    assert np.array_equal(clf.predict(texts), raw.predict(texts))


def test_a_held_out_tenth_without_a_class_calibrates_nothing():
    """2 positives in 802 documents, neither held out: the temperature fitted without them
    (6.1) pushed the probabilities to the extremes (test log loss 0.81 -> 3.17). Skipped,
    saying why; --calibrate given by hand is refused the same way."""
    from nbsvm import NBSVMError
    from nbsvm.io.document import Document

    rng = np.random.default_rng(1)
    neg, pos = "dull boring awful bad mess lifeless".split(), "great superb wonderful".split()
    docs = [Document("neg", " ".join(rng.choice(neg + ["the", "film"], 10)), "m", i + 1)
            for i in range(800)]
    docs += [Document("pos", " ".join(rng.choice(pos + ["the", "film"], 10)), "m", 801 + i)
             for i in range(2)]
    held = [d for d in split(iter(docs), 0, held=True)]
    assert not any(d.label == "pos" for d in held)              # the seeded draw of seed 0
    seen, callback = _events()
    clf = NBSVMClassifier(**KW).fit_documents(docs, callback=callback)
    assert clf.calibrator_ is None
    skipped = [e for e in seen if e["stage"] == "calibration skipped"]
    assert len(skipped) == 1 and "holds no document of class 'pos'" in skipped[0]["why"]
    with pytest.raises(NBSVMError, match="holds no document of class 'pos'"):
        NBSVMClassifier(**KW, calibrate="sigmoid").fit_documents(docs)


def test_a_saved_auto_calibrated_model_loads_with_it(tmp_path):
    docs = synthetic(900, n_classes=3, seed=7)
    clf = NBSVMClassifier(**KW).fit_documents(docs)
    clf.save(tmp_path / "m.npz")
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    texts, _ = _xy(docs[:50])
    assert back.calibrate == "auto"
    assert np.allclose(back.predict_proba(texts), clf.predict_proba(texts))
    assert back.calibration_report_["method"] == "temperature (auto: 3 classes)"


# -- the CLI on real data ---------------------------------------------------------------------

GROUPS = ("comp.graphics", "rec.autos", "sci.space", "talk.politics.guns", "sci.med")


@pytest.fixture(scope="module")
def subject_lines(tmp_path_factory):
    """20 Newsgroups subject lines of five groups, bydate train and test as TSV."""
    archive = shared_datasets() / "20newsgroups" / "20news-bydate.tar.gz"
    if not archive.is_file():
        pytest.skip(f"20 Newsgroups not found at {archive}")
    folder = tmp_path_factory.mktemp("subjects")
    files = {"20news-bydate-train": folder / "train.tsv", "20news-bydate-test": folder / "test.tsv"}
    handles = {k: open(v, "w", encoding="utf-8") for k, v in files.items()}
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                parts = member.name.split("/")
                if member.isfile() and len(parts) == 3 and parts[1] in GROUPS:
                    text = tar.extractfile(member).read().decode("latin-1")
                    m = re.search(r"^Subject:(.*)$", text, re.M)
                    subject = " ".join(m.group(1).split()) if m else ""
                    handles[parts[0]].write(f"{parts[1]}\t{subject}\n")
    finally:
        for h in handles.values():
            h.close()
    return files["20news-bydate-train"], files["20news-bydate-test"]


@pytest.mark.slow  # make test-slow: another real-data run covers train; calibration is checked in process
def test_cli_train_calibrates_subject_lines_by_default(subject_lines, tmp_path):
    train, test = subject_lines
    runner = CliRunner()
    r = runner.invoke(app, ["train", str(train), "--test", str(test), "-o",
                            str(tmp_path / "m.npz"), "--n-bits", "18"])
    assert r.exit_code == 0, r.output
    assert re.search(r"temperature \(auto: 5 classes\) calibration on [\d,]+ held-out "
                     r"documents", r.output), r.output
    r = runner.invoke(app, ["eval", str(test), "-m", str(tmp_path / "m.npz"), "--json"])
    assert r.exit_code == 0, r.output
    auto = json.loads(r.output)
    r = runner.invoke(app, ["train", str(train), "-o", str(tmp_path / "raw.npz"),
                            "--n-bits", "18", "--calibrate", "none", "-q"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["eval", str(test), "-m", str(tmp_path / "raw.npz"), "--json"])
    raw = json.loads(r.output)
    assert auto["accuracy"] == raw["accuracy"] > 0.6
    assert auto["log_loss"] < 1.0 < raw["log_loss"], (auto["log_loss"], raw["log_loss"])
    # from standard input: trained, not calibrated, and said so
    r = runner.invoke(app, ["train", "-", "-o", str(tmp_path / "stdin.npz"), "--n-bits", "18",
                            "-q"], input=train.read_text(encoding="utf-8"))  # said with -q too
    assert r.exit_code == 0, r.output
    assert "probabilities not calibrated (5 classes)" in r.output


def test_the_full_model_waits_on_disk_while_the_copy_trains():
    """memory.spilled: an array only its attribute refers to leaves memory for the block (the
    held-out copy trains meanwhile) and comes back equal; shared ones and small ones stay."""
    import weakref
    from nbsvm.memory import SPILL_MIN_BYTES, spilled

    class State:
        pass

    state = State()
    state.weights = np.random.default_rng(0).random(SPILL_MIN_BYTES // 4, dtype=np.float32)
    state.small = np.arange(10)
    state.shared = np.zeros(SPILL_MIN_BYTES, dtype=np.uint8)
    state.view = state.shared[::2]
    state.buffer = np.frombuffer(bytearray(SPILL_MIN_BYTES), dtype=np.uint8)
    expected = state.weights.copy()
    gone = weakref.ref(state.weights)
    with spilled(state) as moved:
        assert gone() is None                   # the array in memory was freed
        assert isinstance(state.weights, np.memmap) and not state.weights.flags.writeable
        assert isinstance(state.buffer, np.memmap)      # a view of a buffer only it holds
        assert moved >= expected.nbytes + SPILL_MIN_BYTES
        assert type(state.small) is np.ndarray and type(state.shared) is np.ndarray
    assert type(state.weights) is np.ndarray and state.weights.flags.writeable
    assert np.array_equal(state.weights, expected) and state.weights.dtype == np.float32
    assert state.view.base is state.shared


@pytest.mark.slow  # make test-slow: calibration is checked on synthetic data elsewhere
def test_nb_interpolated_scores_are_calibrated_on_real_sentences():
    """beta < 1 adds the NB part's summed log-count ratios to the scores: not log-odds, so
    calibrate='auto' fits a temperature (--auto chose beta 0.5 on a Subj fold and its log
    loss went from 0.20 to 0.67). On Subj sentences: the labels stay the model's, the log
    loss comes back under the uncalibrated model's and under that of beta 1."""
    from sklearn.metrics import log_loss
    archive = shared_datasets() / "subj" / "subj.tar.gz"
    if not archive.is_file():
        pytest.skip(f"{archive} not found")
    with tarfile.open(archive) as tar:
        sets = {label: tar.extractfile(member).read().decode("latin-1").splitlines()
                for member, label in (("subj.objective", "obj"), ("subj.subjective", "subj"))}
    rng = np.random.default_rng(0)
    train = [(t, label) for label, lines in sets.items() for t in lines[:1500]]
    train = [train[i] for i in rng.permutation(len(train))]
    x, y = zip(*train)
    tx = [t for lines in sets.values() for t in lines[1500:2000]]
    ty = [label for label, lines in sets.items() for _ in lines[1500:2000]]
    raw = NBSVMClassifier(beta=0.5, calibrate=None).fit(list(x), list(y))
    auto = NBSVMClassifier(beta=0.5).fit(list(x), list(y))
    one = NBSVMClassifier().fit(list(x), list(y))
    assert raw.calibrator_ is None and one.calibrator_ is None
    assert auto.calibration_report_["method"] == "temperature (auto: beta 0.5 (the NB part's " \
                                                 "scores are not log-odds))"
    assert np.array_equal(auto.predict(tx), raw.predict(tx))
    losses = {name: log_loss(ty, np.clip(m.predict_proba(tx), 1e-15, 1), labels=m.classes_)
              for name, m in (("raw", raw), ("auto", auto), ("one", one))}
    assert losses["auto"] < losses["raw"] and losses["auto"] < losses["one"] + 0.02, losses


def test_a_backend_learner_that_auto_chose_is_calibrated_and_one_given_by_hand_is_not():
    """--auto's model replaces the defaults, which give probabilities: when it chose the
    exact solver (margins only) calibrate='auto' fits a temperature on the held-out tenth;
    the same learner asked for by hand stays as it was (margins, no extra training)."""
    from nbsvm.models.calibrate import auto_calibrate, needs_calibration
    from nbsvm.models.run import FitRun
    docs = synthetic(400, seed=2)
    by_hand = NBSVMClassifier(learner="dcd", n_bits=14).fit_documents(lambda: iter(docs))
    assert needs_calibration(by_hand) is None and not by_hand.has_proba()
    chosen = NBSVMClassifier(learner="dcd", n_bits=14).fit_documents(lambda: iter(docs))
    chosen.auto_ = {"changed": {"learner": "dcd"}}
    assert needs_calibration(chosen) == "--auto chose learner dcd"
    events = []
    auto_calibrate(chosen, lambda: iter(docs), FitRun(events.append))
    assert chosen.has_proba() and events[-1]["stage"] == "calibrated"
    texts = [d.text for d in docs[:50]]
    p = chosen.predict_proba(texts)
    assert np.allclose(p.sum(axis=1), 1.0)
    # the labels stay the uncalibrated margins' (a temperature keeps their signs)
    assert list(chosen.predict(texts)) == list(by_hand.predict(texts))


def test_a_model_from_a_lexicon_of_other_classes_is_not_auto_calibrated_and_loads(tmp_path):
    """Auto calibration's held-out copy trained without the --lexicon: from a lexicon of
    more classes than the training data, the saved model's calibration did not fit its
    outputs and the file could not be loaded ('calibration sizes do not match the
    outputs'; a helper's hunt). threshold='auto' with a lexicon is refused for the same
    reason."""
    from nbsvm.datasets import fixture
    from nbsvm.errors import NBSVMError
    runner = CliRunner()
    lex, model = tmp_path / "lex.npz", tmp_path / "m.npz"
    assert runner.invoke(app, ["lexicon", str(fixture("topics.txt")), "--n-bits", "16",
                               "-o", str(lex)]).exit_code == 0
    rows = fixture("topics.txt").read_text().splitlines()
    part = tmp_path / "part.txt"
    part.write_text("".join(r + "\n" for r in rows if not r.startswith("tech")))
    r = runner.invoke(app, ["train", str(part), "--lexicon", str(lex), "-o", str(model)])
    assert r.exit_code == 0, r.output
    assert "probabilities not calibrated (3 classes): the training documents hold 2 of the " \
        "model's 3 classes (those of its --lexicon)" in " ".join(r.stderr.split())
    back = NBSVMClassifier.load(model)                 # loads: was a corrupted-file error
    assert back.calibrator_ is None and len(back.classes_) == 3
    texts = [r.split("\t", 1)[1] for r in rows]
    np.testing.assert_allclose(back.predict_proba(texts).sum(axis=1), 1.0)
    # the lexicon's own classes in the training data: calibrated as before
    r = runner.invoke(app, ["train", str(fixture("topics.txt")), "--lexicon", str(lex), "-o",
                            str(model), "-q"])
    assert r.exit_code == 0 and NBSVMClassifier.load(model).calibrator_ is not None, r.output
    from nbsvm.lexicon.nblexicon import NBLexicon
    with pytest.raises(NBSVMError, match="threshold='auto'.*cannot share a lexicon"):
        NBSVMClassifier(multilabel=True, threshold="auto", n_bits=16).fit_documents(
            [], lexicon=NBLexicon.load(lex))


def test_the_summary_says_the_class_counts_of_a_lexicon_are_its_own(tmp_path):
    """With --lexicon the class counts (the NB prior, balanced weights) are the lexicon's:
    'documents: 20' beside 'classes: food (10), sports (10), tech (10)' read as a
    contradiction (a helper's hunt)."""
    from nbsvm.datasets import fixture
    runner = CliRunner()
    lex = tmp_path / "lex.npz"
    assert runner.invoke(app, ["lexicon", str(fixture("topics.txt")), "--n-bits", "16",
                               "-o", str(lex)]).exit_code == 0
    rows = fixture("topics.txt").read_text().splitlines()
    part = tmp_path / "part.txt"
    part.write_text("".join(r + "\n" for r in rows if not r.startswith("tech")))
    r = runner.invoke(app, ["train", str(part), "--lexicon", str(lex), "-o",
                            str(tmp_path / "m.npz"), "-q"])
    assert r.exit_code == 0, r.output
    assert "classes (the lexicon's counts): food (10), sports (10), tech (10)" in r.stdout
    assert "documents: 20" in r.stdout
