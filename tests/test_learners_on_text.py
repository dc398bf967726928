"""``nbsvm train --learner NAME``: the shared backend's learners on NBSVM's text features
(nbsvm/learners/reduction.py). Each is checked against the same backend learner trained by hand on
explicit NB-valued rows, and through the real CLI on IMDB and 20 Newsgroups folders."""
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from conftest import synthetic
from testhelpers import shared_file
from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.evaluation.explain import explain_text
from nbsvm.learners.registry import make_learner
from nbsvm.learners.reduction import ON_TEXT, nb_rows
from test_model import LABELS, NEW, TEXTS, THREE_LABELS, THREE_TEXTS

NBSVM = Path(sys.executable).parent / "nbsvm"


def _bucket_rows(clf, texts, table_of, unit):
    """Each text's kept buckets (first occurrences, as the cache keeps them) as rows over
    all 2**n_bits buckets, valued by ``table_of`` (a dense vector by bucket, or None: 1)."""
    kept = clf.column_of_ >= 0
    ids, offsets = [], [0]
    for t in texts:
        b = clf.hasher_.buckets(t)
        b = b[kept[b]]
        ids.append(b)
        offsets.append(offsets[-1] + len(b))
    ids = np.concatenate(ids).astype(np.int32)
    return nb_rows(ids, np.asarray(offsets), table_of, unit, 1 << clf.hasher_.n_bits)


def _joint_rows(rows, ratios, unit):
    """``rows`` (binarized) seen by each class through its own ratios: the joint feature
    map of the native multi-class and multi-label learners, unit per class with ``unit``.
    The table is float32 as a model keeps it (the same values: the ratios are float32; a
    float64 table would compile the kernels once more, for these tests alone)."""
    rows.class_table, rows.class_unit = np.ascontiguousarray(ratios, dtype=np.float32), unit
    return rows


def _first_epoch_order(seed, n):
    rng = np.random.default_rng(seed)
    rng.permutation(1)                      # the one cache block's order
    return rng.permutation(n)


@pytest.mark.parametrize("name, texts, labels, norm", [
    ("pa", TEXTS, LABELS, "none"), ("pegasos", TEXTS, LABELS, "l2"),
    ("pa", THREE_TEXTS, THREE_LABELS, "l2"), ("mira", THREE_TEXTS, THREE_LABELS, "l2"),
    ("multiclass-hinge", THREE_TEXTS, THREE_LABELS, "none"), ("mira", TEXTS, LABELS, "none"),
    ("dcd", TEXTS, LABELS, "l2"), ("dcd", THREE_TEXTS, THREE_LABELS, "none")])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_backend_learner_on_nb_rows_equals_it_trained_by_hand(name, texts, labels, norm):
    clf = NBSVMClassifier(ngrams=2, n_bits=10, min_df=1, epochs=1, seed=4, learner=name,
                          norm=norm, lam=1e-3).fit(texts, labels)
    unit = norm == "l2"
    order = _first_epoch_order(4, len(texts))
    classes = clf.classes_
    params = {"seed": 4, **ON_TEXT.get(name, {}),
              **({"lam": 1e-3} if name in ("pegasos", "multiclass-hinge", "dcd") else {})}
    ratios = clf.ratios_.astype(np.float64)
    # dcd solves to its tolerance (1e-4): summed in another order (the cache's columns
    # against the buckets here), the two stop within it of the same optimum
    tol = dict(rtol=1e-4, atol=1e-4) if name == "dcd" else dict(rtol=1e-9, atol=1e-12)
    if len(classes) == 2:
        ref = make_learner(name, **params)
        y = np.array([int(v == classes[1]) for v in labels])
        if name in ("pa", "pegasos"):
            y = 2 * y - 1
        ref.partial_fit(_bucket_rows(clf, texts, ratios[0], unit), y,
                        classes=sorted(set(y.tolist())), order=order)
        expected = ref.decision_function(_bucket_rows(clf, NEW, ratios[0], unit))
        assert np.allclose(clf.decision_function(NEW), expected, **tol)
    elif name in ("pa", "dcd"):              # one-vs-rest, each class on its own ratios
        for k, c in enumerate(classes):
            ref = make_learner(name, **params)
            y = np.array([1 if v == c else -1 for v in labels])
            ref.partial_fit(_bucket_rows(clf, texts, ratios[k], unit), y, classes=[-1, 1],
                            order=order)
            expected = ref.decision_function(_bucket_rows(clf, NEW, ratios[k], unit))
            assert np.allclose(clf.decision_function(NEW)[:, k], expected, **tol)
    else:                                    # native multi-class: each class on its ratios
        ref = make_learner(name, **params)
        y = np.array([classes.index(v) for v in labels])
        ref.partial_fit(_joint_rows(_bucket_rows(clf, texts, None, False), ratios, unit), y,
                        classes=[0, 1, 2], order=order)
        expected = ref.decision_function(
            _joint_rows(_bucket_rows(clf, NEW, None, False), ratios, unit))
        assert np.allclose(clf.decision_function(NEW), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name, texts, labels", [
    ("pa", TEXTS, LABELS), ("pegasos", THREE_TEXTS, THREE_LABELS),
    ("mira", THREE_TEXTS, THREE_LABELS)])
def test_partial_fit_trains_a_backend_learner_on_the_growing_lexicon(name, texts, labels):
    """partial_fit with learner=NAME: the batch's NB rows over every bucket (the growing
    lexicon's columns), valued by the lexicon's ratios so far, one pass in batch order."""
    from nbsvm.lexicon.nblexicon import NBLexicon
    clf = NBSVMClassifier(ngrams=2, n_bits=10, min_df=1, seed=4, learner=name, norm="l2",
                          lam=1e-3)
    clf.partial_fit(texts, labels, classes=sorted(set(labels)))
    ratios = NBLexicon(clf.hasher_, alpha=clf.setting("alpha")).fit(texts, labels).ratios()
    ratios = ratios.astype(np.float64)
    n = 1 << 10
    ids, offsets = [], [0]
    for t in texts:
        b = clf.hasher_.buckets(t)
        ids.append(b)
        offsets.append(offsets[-1] + len(b))
    ids, offsets = np.concatenate(ids).astype(np.int32), np.asarray(offsets)
    new_ids = [clf.hasher_.buckets(t) for t in NEW]
    new_offsets = np.concatenate([[0], np.cumsum([len(b) for b in new_ids])])
    new_ids = np.concatenate(new_ids).astype(np.int32)
    # the learner as nbsvm builds it on text (reduction.ON_TEXT: float32 weights, ...)
    params = {"seed": 4, **ON_TEXT.get(name, {}), **({"lam": 1e-3} if name == "pegasos" else {})}
    order = np.arange(len(texts))
    classes = clf.classes_
    got = clf.decision_function(NEW)
    if name == "mira":              # native multi-class: each class on its own ratios
        ref = make_learner(name, **params)
        ref.partial_fit(_joint_rows(nb_rows(ids, offsets, None, False, n), ratios, True),
                        np.array([classes.index(v) for v in labels]),
                        classes=list(range(len(classes))), order=order)
        expected = ref.decision_function(
            _joint_rows(nb_rows(new_ids, new_offsets, None, False, n), ratios, True))
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-12)
        return
    for k in range(ratios.shape[0]):    # one learner per output, on its own ratios
        ref = make_learner(name, **params)
        positive = classes[1] if len(classes) == 2 else classes[k]
        ref.partial_fit(nb_rows(ids, offsets, ratios[k], True, n),
                        np.array([1 if v == positive else -1 for v in labels]),
                        classes=[-1, 1], order=order)
        expected = ref.decision_function(nb_rows(new_ids, new_offsets, ratios[k], True, n))
        assert np.allclose(got.reshape(len(NEW), -1)[:, k], expected, rtol=1e-9, atol=1e-12)
    # a second batch continues: the same learner, more updates
    clf.partial_fit(texts[:2], labels[:2])
    assert clf.n_docs_ == len(texts) + 2
    assert not np.array_equal(clf.decision_function(NEW), got)


@pytest.mark.parametrize("name", ["pa", "pegasos", "mira", "multiclass-hinge", "dcd"])
def test_saved_backend_models_load_and_predict_the_same(tmp_path, name):
    for texts, labels in ((TEXTS, LABELS), (THREE_TEXTS, THREE_LABELS)):
        clf = NBSVMClassifier(ngrams=2, n_bits=10, epochs=3, learner=name).fit(texts, labels)
        clf.save(tmp_path / "m.npz")
        back = NBSVMClassifier.load(tmp_path / "m.npz")
        assert back.learner == name
        assert np.array_equal(back.decision_function(NEW), clf.decision_function(NEW))
        assert not back.has_proba()
        with pytest.raises(NBSVMError, match="gives margins, not probabilities"):
            back.predict_proba(NEW)
        # a loaded model explains itself as the trained one does
        assert explain_text(back, NEW[0]) == explain_text(clf, NEW[0])
        assert back.ngram_map_ == clf.ngram_map_


def test_backend_learner_mistakes_are_refused():
    # the backend's names in the registry's order
    with pytest.raises(NBSVMError, match="unknown learner 'svm'; allowed: adagrad, sgd, ovr "
                                         "\\(the built-in NBSVM learner\\) or pegasos, pa, mira, "
                                         "multiclass-hinge, multilabel, dcd \\(the backend's\\)"):
        NBSVMClassifier(learner="svm").fit(TEXTS, LABELS)
    with pytest.raises(NBSVMError, match="interpolate='weights' needs the built-in"):
        NBSVMClassifier(learner="pa", beta=0.5, interpolate="weights").fit(TEXTS, LABELS)
    with pytest.raises(NBSVMError, match="optimizer 'sgd', not 'adagrad'"):
        NBSVMClassifier(learner="sgd", optimizer="adagrad").fit(TEXTS, LABELS)
    with pytest.raises(NBSVMError, match="'ovr' trains one output per class"):
        NBSVMClassifier(learner="ovr", loss="softmax").fit(THREE_TEXTS, THREE_LABELS)
    with pytest.raises(NBSVMError, match="needs multi-label data"):
        NBSVMClassifier(learner="multilabel").fit(THREE_TEXTS, THREE_LABELS)


@pytest.mark.parametrize("name, message", [
    ("pegasos", r"lambda \(lam\) must be > 0 for Pegasos"),
    ("dcd", r"lambda \(lam\) must be a finite number > 0"),
    ("multiclass-hinge", r"schedule 'pegasos' \(1 / \(lam t\)\) needs lam > 0"),
])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_lambda_the_backend_learner_cannot_take_is_refused_before_reading(
        tmp_path, name, message):
    """It was refused once every document had been read and hashed (``nbsvm train`` shows
    its progress: no hashing line before the error now)."""
    with pytest.raises(NBSVMError, match=message):
        NBSVMClassifier(learner=name, lam=0.0).validate()
    NBSVMClassifier(learner=name, lam=1e-4).validate()  # an allowed one passes
    r = subprocess.run([sys.executable, "-m", "nbsvm", "train", str(Path("data/reviews.txt")),
                        "--learner", name, "--lambda", "0", "-o", str(tmp_path / "m.npz")],
                       capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert r.returncode == 2 and "hash" not in r.stderr + r.stdout
    assert re.search(message, r.stderr) and not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("name, same_as", [("sgd", dict(optimizer="sgd")),
                                           ("adagrad", dict(optimizer="adagrad")),
                                           ("ovr", dict())])
def test_built_in_learner_names_train_the_built_in_learner(name, same_as):
    """--learner sgd|adagrad is the built-in learner with that optimizer, --learner ovr its
    default one-vs-rest shape: the same model bit for bit."""
    for texts, labels in ((TEXTS, LABELS), (THREE_TEXTS, THREE_LABELS)):
        kw = dict(ngrams=2, n_bits=10, epochs=3, seed=2)
        a = NBSVMClassifier(learner=name, **kw).fit(texts, labels)
        b = NBSVMClassifier(**same_as, **kw).fit(texts, labels)
        assert a.backend_learner is None and not hasattr(a, "backend_")
        assert np.array_equal(a.decision_function(NEW), b.decision_function(NEW))


def test_multilabel_hinge_on_nb_rows_equals_it_trained_by_hand():
    """--multilabel --learner multilabel: the backend's multi-label hinge, each label seeing
    the document through its own ratios (unit per label), its targets the label sets as
    an indicator matrix of the labels."""
    texts = TEXTS + THREE_TEXTS
    sets = [[v] for v in LABELS] + [[v, "pos"] if v != "pos" else [v] for v in THREE_LABELS]
    clf = NBSVMClassifier(ngrams=2, n_bits=10, min_df=1, epochs=1, seed=4, norm="l2",
                          multilabel=True, learner="multilabel", lam=1e-3).fit(texts, sets)
    labels = clf.classes_
    Y = np.array([[int(c in s) for c in labels] for s in sets])
    ref = make_learner("multilabel", lam=1e-3, seed=4, **ON_TEXT["multilabel"])  # as on text
    ratios = clf.ratios_.astype(np.float64)
    ref.partial_fit(_joint_rows(_bucket_rows(clf, texts, None, False), ratios, True), Y,
                    classes=list(range(len(labels))), order=_first_epoch_order(4, len(texts)))
    expected = ref.decision_function(
        _joint_rows(_bucket_rows(clf, NEW, None, False), ratios, True))
    assert np.allclose(clf.decision_function(NEW), expected, rtol=1e-9, atol=1e-12)
    scores = clf.decision_function(NEW)
    assert [set(p) for p in clf.predict_label_sets(NEW)] == \
        [{c for c, v in zip(labels, row) if v > 0} for row in scores]


GROUPS = ("comp.graphics", "rec.autos", "sci.med", "sci.space", "talk.politics.guns")


@pytest.fixture(scope="module")
def newsgroups_five(tmp_path_factory):
    """Five groups of the 20 Newsgroups bydate folders (train and test)."""
    archive = shared_file("20newsgroups", "20news-bydate.tar.gz")
    root = tmp_path_factory.mktemp("20ng5")
    with tarfile.open(archive, "r:gz") as tar:
        members = [m for m in tar.getmembers()
                   if m.isfile() and m.name.split("/")[1:2] and m.name.split("/")[1] in GROUPS]
        tar.extractall(root, members=members, filter="data")
    return root


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_cli_learners_on_imdb_and_20ng_folders(tmp_path, imdb_slice, newsgroups_five):
    """The real command on real folders: 2,000 IMDB reviews (1,000 a class) scored on 2,000
    others, and five 20NG groups (about 2,950 / 1,960 messages). The full corpora are in
    the README (every learner on both)."""
    imdb = (imdb_slice / "train", imdb_slice / "test", [])
    news = (newsgroups_five / "20news-bydate-train", newsgroups_five / "20news-bydate-test",
            ["--encoding", "latin-1"])
    # each learner on one corpus, the binary ones on both (one-vs-rest on 20NG)
    for name, (train, test, extra) in (("pa", imdb), ("pegasos", imdb), ("mira", imdb),
                                       ("pa", news), ("mira", news),
                                       ("multiclass-hinge", news)):
        out = subprocess.run([str(NBSVM), "train", str(train), "--test", str(test),
                              "-o", str(tmp_path / "m.npz"), "--learner", name,
                              # Pegasos' last iterate after 3 epochs of 2,000 reviews swings
                              # with the order (72.3-79.1% over seeds 0-3); after 10 it has
                              # settled (82.6-83.1%)
                              "--epochs", "10" if name == "pegasos" else "3", *extra],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        accuracy = float(out.stdout.split("accuracy: ")[1].split("%")[0])
        assert accuracy > 75.0, (name, train, accuracy)


@pytest.mark.parametrize("name", ["pa", "pegasos", "mira", "multiclass-hinge"])
@pytest.mark.parametrize("n_classes, norm", [(2, None), (3, None), (3, "l2"), (2, "l2")])
def test_explanations_of_backend_learners_add_up_to_their_scores(name, n_classes, norm):
    from nbsvm.evaluation.explain import top_features
    docs = synthetic(300, n_classes=n_classes, seed=4)
    clf = NBSVMClassifier(ngrams=2, n_bits=12, learner=name, epochs=2, norm=norm,
                          beta=0.8).fit_documents(iter(docs))
    assert clf.ngram_map_               # named buckets, as for the built-in learner
    for d in docs[:5]:
        scores = np.atleast_1d(clf.decision_function([d.text])[0])
        for cls in clf.classes_[1:] if n_classes == 2 else clf.classes_:
            r = explain_text(clf, d.text, cls)
            k = 0 if n_classes == 2 else clf.classes_.index(cls)
            total = r["constant"] + sum(g["contribution"] for g in r["ngrams"])
            assert total == pytest.approx(scores[k], rel=1e-6, abs=1e-9)
    frame = top_features(clf, 5, clf.classes_[-1])
    assert len(frame) and (frame.weight != 0).all()


@pytest.mark.parametrize("name", ["pa", "pegasos", "mira", "multiclass-hinge"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_backend_learners_resume_from_a_checkpoint_bit_for_bit(tmp_path, name):
    from nbsvm.models.checkpoint import Checkpoint

    class Stop(Exception):
        pass

    def stop_at_epoch_4(event):
        if event["stage"] == "epoch" and event["epoch"] == 4:
            raise Stop

    docs = synthetic(400, n_classes=3, seed=6)
    kw = dict(ngrams=2, n_bits=12, learner=name, epochs=5, seed=2)
    full = NBSVMClassifier(**kw).fit_documents(iter(docs))
    ck = Checkpoint(tmp_path / "ck.npz", every=2, identity={"data": 1})
    with pytest.raises(Stop):           # stopped in epoch 4: the last save was after 2
        NBSVMClassifier(**kw).fit_documents(iter(docs), callback=stop_at_epoch_4,
                                            checkpoint=ck)
    resumed = Checkpoint(tmp_path / "ck.npz", every=2, resume=True, identity={"data": 1})
    clf = NBSVMClassifier(**kw).fit_documents(iter(docs), checkpoint=resumed)
    assert resumed.resumed_from == 2
    texts = [d.text for d in docs[:50]]
    assert np.array_equal(clf.decision_function(texts), full.decision_function(texts))
    clf.save(tmp_path / "resumed.npz")
    full.save(tmp_path / "full.npz")
    a, b = np.load(tmp_path / "resumed.npz"), np.load(tmp_path / "full.npz")
    assert sorted(a.files) == sorted(b.files)
    assert all(np.array_equal(a[k], b[k]) for k in a.files if k.startswith("backend"))


def test_a_model_file_from_before_the_joint_map_is_read_as_trained():
    """A backend header without "joint" was written when the native multi-class learners
    saw binarized rows shared by the classes: it is scored that way, not through the ratios
    (which would silently change its predictions)."""
    from nbsvm.learners.reduction import NBReduction
    clf = NBSVMClassifier(ngrams=2, n_bits=10, min_df=1, epochs=2, seed=4, learner="mira",
                          norm="l2").fit(THREE_TEXTS, THREE_LABELS)
    header, arrays = clf.backend_.parts()
    assert header["joint"] is True
    del header["joint"]
    old = NBReduction.from_parts(header, arrays, clf.linear_.n_outputs, clf.linear_.n_features)
    assert not old.joint
    tables = clf.linear_.tables
    ids, offsets = np.array([0, 1, 2], dtype=np.int32), np.array([0, 3])
    got = old.decision(tables, ids, offsets, True)
    learner = clf.backend_.learners[0]
    expected = learner.decision_function(nb_rows(ids, offsets, None, True, tables.shape[1]))
    assert np.allclose(got, expected, rtol=1e-12)
    joint = clf.backend_.decision(tables, ids, offsets, True)
    assert not np.allclose(got, joint)


@pytest.mark.parametrize("name", ["pa", "mira"])
def test_coef_and_intercept_of_a_backend_model_give_its_scores(name):
    # the backend keeps the weights (the model's own state holds the ratios alone): coef_
    # and intercept_ are the backend's, so ratios_ * coef_ summed over a document's
    # buckets plus intercept_ is its score, as for the built-in learner
    texts = ["good fun film", "bad dull plot", "great acting", "awful mess", "fun plot",
             "dull film"] * 3
    labels = ["pos", "neg", "pos", "neg", "pos", "neg"] * 3
    clf = NBSVMClassifier(n_bits=10, ngrams=2, min_df=1, epochs=3, norm="none",
                          learner=name).fit(texts, labels)
    new = ["good plot", "awful fun film", "never seen"]
    by_hand = [float((clf.ratios_[0, b].astype(np.float64) * clf.coef_[0, b]).sum())
               + clf.intercept_[0] for b in (clf.hasher_.buckets(t) for t in new)]
    assert np.allclose(clf.decision_function(new), by_hand, rtol=1e-5, atol=1e-6)
