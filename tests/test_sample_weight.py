"""Document weights (issue 38, item 3): ``sample_weight`` / ``--weight-col`` act on the NB
counts (a weight of k counts as the document k times, exactly) and on the learner's steps
(against naive.py's reference and scikit-learn's SGDClassifier with the same weights)."""
import re

import numpy as np
import pytest

from naive import naive_adagrad_epoch, naive_multiclass_epoch, naive_sgd_epoch, rel_gap
from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.learners.sgd import LinearSGD
from test_online import make_problem, new_learner, ys_of
from testhelpers import random_rows

WORDS = "good bad great awful fine poor nice dull fun boring plot actor".split()


def _corpus(n=300, seed=0, classes=("neg", "pos")):
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, 7)) for _ in range(n)]
    labels = [classes[(t.count("good") + t.count("fun") + 2 * t.count("bad")) % len(classes)]
              for t in texts]
    weights = rng.integers(0, 4, n).astype(float)           # 0 (left out) to 3 copies
    return texts, labels, weights


def _repeated(items, weights):
    return [x for x, k in zip(items, weights) for _ in range(int(k))]


SETTINGS = dict(n_bits=12, ngrams=2, min_df=1, epochs=2, seed=1)


@pytest.mark.parametrize("task", ["binary", "one-vs-rest", "softmax", "multilabel"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_weight_k_counts_as_the_document_k_times(task):
    classes = ("neg", "pos") if task == "binary" else ("a", "b", "c")
    texts, labels, weights = _corpus(classes=classes)
    kw = dict(SETTINGS)
    if task == "softmax":
        kw["loss"] = "softmax"
    if task == "multilabel":
        kw["multilabel"] = True
        labels = [[lab] + (["x"] if "nice" in t else []) for t, lab in zip(texts, labels)]
    weighted = NBSVMClassifier(**kw).fit(texts, labels, sample_weight=weights)
    copies = NBSVMClassifier(**kw).fit(_repeated(texts, weights), _repeated(labels, weights))
    # the lexicon: same kept buckets, same NB ratios, bit for bit; class totals as counts
    assert np.array_equal(weighted.column_of_ >= 0, copies.column_of_ >= 0)
    assert np.array_equal(weighted.ratios_, copies.ratios_)
    assert weighted.class_counts_.tolist() == copies.class_counts_.tolist()
    assert weighted.n_seen_buckets_ == copies.n_seen_buckets_
    # a weight of 0 leaves a document out of the counts, but it is still read
    assert weighted.n_docs_ == len(texts) and copies.n_docs_ == int(weights.sum())
    assert weighted.weight_sum_ == copies.weight_sum_ == weights.sum()
    # the NB prior (interpolate='scores'): a multi-label document is one in the total
    for k in range(weighted.n_outputs()):
        assert weighted.log_prior(k) == pytest.approx(copies.log_prior(k), rel=1e-12)


def test_fractional_weights_scale_the_counts_and_survive_a_save(tmp_path):
    texts, labels, weights = _corpus(seed=2)
    half = NBSVMClassifier(**SETTINGS).fit(texts, labels, sample_weight=weights / 2)
    whole = NBSVMClassifier(**SETTINGS).fit(texts, labels, sample_weight=weights)
    assert np.allclose(half.class_counts_, whole.class_counts_ / 2)
    assert not np.array_equal(half.linear_.tables, whole.linear_.tables)   # alpha stays 1
    half.save(tmp_path / "m.npz")
    back = NBSVMClassifier.load(tmp_path / "m.npz")
    assert back.class_counts_.tolist() == half.class_counts_.tolist()
    assert back.weight_sum_ == half.weight_sum_ == weights.sum() / 2
    assert np.array_equal(back.decision_function(texts), half.decision_function(texts))


def test_unit_weights_train_the_unweighted_model_bit_for_bit():
    texts, labels, _ = _corpus(seed=3)
    plain = NBSVMClassifier(**SETTINGS).fit(texts, labels)
    ones = NBSVMClassifier(**SETTINGS).fit(texts, labels, sample_weight=np.ones(len(texts)))
    assert np.array_equal(plain.linear_.S_, ones.linear_.S_)
    assert np.array_equal(plain.linear_.state_, ones.linear_.state_)


def test_weights_change_the_steps_not_only_the_counts():
    """With the ratios fixed (binary feature values), weights still move the learner."""
    texts, labels, weights = _corpus(seed=4)
    kw = dict(SETTINGS, weighting="binary")
    plain = NBSVMClassifier(**kw).fit(texts, labels)
    weighted = NBSVMClassifier(**kw).fit(texts, labels, sample_weight=weights + 0.5)
    assert np.array_equal(plain.linear_.tables, weighted.linear_.tables)
    assert rel_gap(weighted.linear_.coef()[0], plain.linear_.coef()[0]) > 1e-3


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad"])
def test_document_and_class_weights_multiply_in_the_binary_steps(optimizer):
    docs, ids, offsets, codes, table, order = make_problem(seed=5)
    rng = np.random.default_rng(5)
    doc_w = rng.uniform(0.0, 3.0, len(codes))
    cw = np.array([[2.0, 0.5]])
    m = new_learner(16, [table], loss="log", optimizer=optimizer, eta0=0.2, lam=0.01,
                    class_weight=cw)
    ys = ys_of(codes, 1)
    both = [doc_w[d] * (2.0 if ys[d] > 0 else 0.5) for d in range(len(ys))]
    mean = m.epoch(ids, offsets, codes, order, [1], doc_w)
    if optimizer == "sgd":
        w, b, _, total = naive_sgd_epoch(docs, ys, order, table, [0.0] * 16, 0.0, 0, 0.2, 0.01,
                                         "log", weights=both)
    else:
        w, _, b, _, total = naive_adagrad_epoch(docs, ys, order, table, [0.0] * 16, [0.0] * 16,
                                                0.0, 0.0, 0.2, 0.01, "log", f32=True,
                                                weights=both)
    assert mean == pytest.approx(total / len(order), rel=1e-5)
    assert rel_gap(m.coef()[0], w) <= 1e-5 and rel_gap(m.intercept()[0], b) <= 1e-5


def test_document_weights_in_the_multiclass_steps():
    rng = np.random.default_rng(6)
    n, d, K = 50, 24, 3
    docs, ids, offsets = random_rows(rng, n, d, 7)
    codes = rng.integers(0, K, n).astype(np.int32)
    order = rng.permutation(n)
    doc_w = rng.uniform(0.0, 2.0, n)
    cw = np.array([[3.0, 1.0], [0.5, 1.0], [1.5, 1.0]])
    m = LinearSGD(d, n_outputs=K, loss="softmax", optimizer="adagrad", eta0=0.1, lam=1e-3,
                  class_weight=cw)
    m.tables[:] = rng.uniform(-2, 2, size=(K, d)).astype(np.float32)
    W, B, _, _, _, total = naive_multiclass_epoch(
        docs, codes, order, m.tables.astype(np.float64).tolist(), [[0.0] * d] * K, [0.0] * K,
        0.1, 1e-3, "softmax", "adagrad", doc_weights=(cw[codes, 0] * doc_w).tolist())
    mean = m.epoch(ids, offsets, codes, order, [0, 1, 2], doc_w)
    assert mean == pytest.approx(total / n, rel=1e-5)
    np.testing.assert_allclose(m.coef(), np.array(W), rtol=1e-4, atol=1e-6)


def test_weighted_sgd_equals_scikit_learn_sgdclassifier_with_sample_weight():
    """scikit-learn's SGDClassifier (hinge, L2, 'optimal' rate, no intercept, one pass in
    the given order) on the same explicit rows (x_i = the table's value) with the same
    sample weights. Its 'optimal' rate 1 / (alpha (t0 + t)) with t0 = 1 / (eta0 alpha),
    eta0 = alpha ** -0.25 for the hinge, is Bottou's eta0 / (1 + alpha eta0 t) that the
    built-in SGD runs."""
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import SGDClassifier

    rng = np.random.default_rng(7)
    n, d = 400, 40
    docs, ids, offsets = random_rows(rng, n, d, 9)
    table = rng.uniform(0.2, 2.0, d).astype(np.float32)
    w_true = rng.normal(size=d)
    X = csr_matrix((table[ids].astype(np.float64), ids, offsets), shape=(n, d))
    y = np.where(X @ w_true + 0.3 * rng.normal(size=n) > 0, 1, -1)
    weights = rng.uniform(0.0, 3.0, n)
    alpha = 1e-3
    sk = SGDClassifier(loss="hinge", penalty="l2", alpha=alpha, learning_rate="optimal",
                       fit_intercept=False, shuffle=False, average=False)
    sk.partial_fit(X, y, classes=np.array([-1, 1]), sample_weight=weights)
    ours = LinearSGD(d, n_outputs=1, loss="hinge", optimizer="sgd", eta0=alpha ** -0.25,
                     lam=alpha, bias_rate=0.0)
    ours.tables[0] = table
    codes = (y > 0).astype(np.int32)
    ours.epoch(ids, offsets, codes, np.arange(n), [1], weights)
    unweighted = LinearSGD(d, n_outputs=1, loss="hinge", optimizer="sgd",
                           eta0=alpha ** -0.25, lam=alpha, bias_rate=0.0)
    unweighted.tables[0] = table
    unweighted.epoch(ids, offsets, codes, np.arange(n), [1])
    assert rel_gap(ours.coef()[0], sk.coef_[0]) <= 1e-5
    assert rel_gap(unweighted.coef()[0], sk.coef_[0]) > 1e-2      # the weights mattered


def test_bad_weights_are_refused_with_what_is_allowed():
    texts, labels, _ = _corpus(n=20)
    for bad, says in (([1.0] * 3, "one weight per document, 20"),
                      ([-1.0] * 20, "sample_weight[0] is -1.0"),
                      ([float("nan")] * 20, "numbers from 0 to 1e9"),
                      # beyond 1e9 the steps and sums leave float range (1e200: inf model)
                      ([1e200] * 20, "sample_weight[0] is 1e+200: weights are numbers from"),
                      ([2e9] * 20, "sample_weight[0] is 2000000000.0"),
                      (["heavy"] * 20, "numbers")):
        with pytest.raises(NBSVMError, match=re.escape(says)):
            NBSVMClassifier(n_bits=10).fit(texts, labels, sample_weight=bad)
    with pytest.raises(NBSVMError, match="backend learners"):
        NBSVMClassifier(n_bits=10, learner="pa").fit(texts, labels,
                                                      sample_weight=np.full(20, 2.0))


# -- --weight-col: the readers and nbsvm train on real reviews ----------------------------

def _imdb_rows(root, split="train"):
    rows = []
    for label in ("neg", "pos"):
        for path in sorted((root / split / label).iterdir())[:300]:
            rows.append((label, path.read_text(encoding="utf-8")))
    np.random.default_rng(0).shuffle(rows)
    return rows


@pytest.mark.slow  # make test-slow: weights are checked through fit and the CLI refusals elsewhere
def test_train_weight_col_counts_like_repeated_rows_on_imdb(imdb_slice, tmp_path):
    """nbsvm train --weight-col on real reviews (weights 0-3) keeps the same buckets and
    the same NB ratios, bit for bit, as training on each row repeated that many times."""
    import csv

    rows = _imdb_rows(imdb_slice)
    weights = np.random.default_rng(1).integers(0, 4, len(rows))
    with open(tmp_path / "w.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["label", "text", "weight"])
        out.writerows([lab, text, int(k)] for (lab, text), k in zip(rows, weights))
    with open(tmp_path / "rep.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["label", "text"])
        out.writerows([lab, text] for (lab, text), k in zip(rows, weights) for _ in range(k))
    fixed = ["--min-df", "1", "--epochs", "2", "--n-bits", "18", "--eta0", "0.02",
             "--norm", "none", "--char-ngrams", "0", "--calibrate", "none", "-q"]
    nbsvm(["train", tmp_path / "w.csv", "-o", tmp_path / "w.npz", "--weight-col", "weight",
           *fixed])
    nbsvm(["train", tmp_path / "rep.csv", "-o", tmp_path / "rep.npz", *fixed])
    weighted = NBSVMClassifier.load(tmp_path / "w.npz")
    copies = NBSVMClassifier.load(tmp_path / "rep.npz")
    assert np.array_equal(weighted.column_of_ >= 0, copies.column_of_ >= 0)
    assert np.array_equal(weighted.ratios_, copies.ratios_)
    assert weighted.class_counts_.tolist() == copies.class_counts_.tolist()
    reviews = [text for _, text in _imdb_rows(imdb_slice, "test")]
    agree = np.mean(weighted.predict(reviews) == copies.predict(reviews))
    assert agree > 0.9       # the learners differ (a step of 2 is not two steps): close


def nbsvm(args, ok=True):
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "nbsvm"
    done = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    assert (done.returncode == 0) == ok, done.stderr
    return done


def _read(path, **kw):
    from nbsvm.io.readers import read_inputs

    return [(d.label, d.text, d.weight) for d in read_inputs([path], weight_col="w", **kw)]


def test_every_table_format_reads_its_weight_column(tmp_path):
    (tmp_path / "a.csv").write_text("label,text,w\npos,good,2\nneg,bad,0.5\n")
    (tmp_path / "a.tsv").write_text("label\ttext\tw\npos\tgood\t2\nneg\tbad\t0.5\n")
    (tmp_path / "a.jsonl").write_text('{"label": "pos", "text": "good", "w": 2}\n'
                                      '{"label": "neg", "text": "bad", "w": "0.5"}\n')
    want = [("pos", "good", 2.0), ("neg", "bad", 0.5)]
    assert _read(tmp_path / "a.csv") == want
    assert _read(tmp_path / "a.tsv", fmt="tsv") == want
    assert _read(tmp_path / "a.jsonl") == want
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"label": ["pos", "neg"], "text": ["good", "bad"],
                             "w": [2.0, 0.5]}), tmp_path / "a.parquet")
    assert _read(tmp_path / "a.parquet") == want
    # a file without a header: the weight's column by number, as the text's
    (tmp_path / "b.csv").write_text("pos,good,3\nneg,bad,1\n")
    from nbsvm.io.readers import read_inputs
    docs = read_inputs([tmp_path / "b.csv"], text_col="2", label_col="1", weight_col="3")
    assert [d.weight for d in docs] == [3.0, 1.0]


def test_bad_weights_name_the_file_and_line(tmp_path):
    for value, says in (("-1", "-1.0: weights are numbers from 0 to 1e9"), ("", "no weight"),
                        ("heavy", "'heavy', not a number"), ("inf", "inf"),
                        ("1e308", "1e+308: weights are numbers from 0 to 1e9"),
                        # float() reads these as 10 and 1: no data file means them so
                        ("1_0", "'1_0', not a number"), ("\uff11", "'\uff11', not a number")):
        (tmp_path / "a.csv").write_text(f"label,text,w\npos,good,1\nneg,bad,{value}\n")
        with pytest.raises(NBSVMError, match=re.escape(says)) as e:
            _read(tmp_path / "a.csv")
        assert e.value.line == 3 and e.value.path.endswith("a.csv")
    (tmp_path / "a.jsonl").write_text('{"label": "pos", "text": "good", "w": true}\n')
    with pytest.raises(NBSVMError, match="field 'w': the weight is True, not a number") as e:
        _read(tmp_path / "a.jsonl")
    assert e.value.line == 1
    (tmp_path / "a.csv").write_text("label,text\npos,good\n")
    with pytest.raises(NBSVMError, match="no weight column 'w'"):
        _read(tmp_path / "a.csv")
    (tmp_path / "a.txt").write_text("pos\tgood\n")
    with pytest.raises(NBSVMError, match="labeled-lines input has none"):
        _read(tmp_path / "a.txt")
    from nbsvm.io.readers import read_inputs
    with pytest.raises(NBSVMError, match="also the text's or the label's"):
        read_inputs([tmp_path / "a.csv"], weight_col="label")


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_cli_refuses_weights_where_they_would_be_ignored(tmp_path):
    (tmp_path / "a.csv").write_text("label,text,w\n" + "pos,good fun,2\nneg,bad dull,1\n" * 20)
    done = nbsvm(["train", tmp_path / "a.csv", "-o", tmp_path / "m.npz", "--weight-col", "w",
                  "--learner", "pa"], ok=False)
    assert "backend learners" in done.stderr and not (tmp_path / "m.npz").exists()
    done = nbsvm(["train", tmp_path / "a.csv", "-o", tmp_path / "m.npz", "--weight-col", "w",
                  "--dask-local", "1"], ok=False)
    assert "--weight-col is not available with --scheduler" in done.stderr


# -- the counting lexicon: partial_fit, keep_counts / continue_fit, nbsvm lexicon ----------

@pytest.mark.parametrize("classes", [("neg", "pos"), ("a", "b", "c")])
def test_partial_fit_counts_weights_as_copies(classes):
    texts, labels, weights = _corpus(n=400, seed=8, classes=classes)
    kw = dict(n_bits=12, ngrams=2, min_df=1, seed=1)
    weighted, copies = NBSVMClassifier(**kw), NBSVMClassifier(**kw)
    for lo in range(0, 400, 100):
        part = slice(lo, lo + 100)
        weighted.partial_fit(texts[part], labels[part], classes=classes,
                             sample_weight=weights[part])
        copies.partial_fit(_repeated(texts[part], weights[part]),
                           _repeated(labels[part], weights[part]), classes=classes)
    assert weighted.lexicon_.weighted and not copies.lexicon_.weighted
    assert np.array_equal(weighted.linear_.tables, copies.linear_.tables)
    assert weighted.class_counts_.tolist() == copies.class_counts_.tolist()


def test_kept_counts_save_and_continue_with_weights(tmp_path):
    texts, labels, weights = _corpus(n=400, seed=9, classes=("a", "b", "c"))
    kw = dict(n_bits=12, ngrams=2, min_df=1, seed=1, epochs=2, keep_counts=True)
    first, rest = slice(0, 200), slice(200, 400)
    weighted = NBSVMClassifier(**kw).fit(texts[first], labels[first],
                                         sample_weight=weights[first])
    copies = NBSVMClassifier(**kw).fit(_repeated(texts[first], weights[first]),
                                       _repeated(labels[first], weights[first]))
    # by bucket: columns are laid out by documents, which the copies repeat
    assert np.array_equal(weighted.ratios_, copies.ratios_)
    weighted.save(tmp_path / "m.npz")
    weighted = NBSVMClassifier.load(tmp_path / "m.npz")      # the weighted counts kept
    assert weighted.lexicon_.weighted
    weighted.continue_fit(texts[rest], labels[rest], sample_weight=weights[rest])
    copies.continue_fit(_repeated(texts[rest], weights[rest]), _repeated(labels[rest], weights[rest]))
    assert np.array_equal(weighted.column_of_ >= 0, copies.column_of_ >= 0)
    assert np.array_equal(weighted.ratios_, copies.ratios_)
    assert weighted.class_counts_.tolist() == copies.class_counts_.tolist()


def test_min_df_counts_documents_of_weight_above_zero_once():
    """A weight says how much a document counts, not how often its n-grams were seen:
    with min_df 2 an n-gram of one document of weight 5 gets no column, one of two
    documents of weight 0.5 does, and one of a document of weight 0 is never seen."""
    texts = ["good zebra", "good yak", "good yak", "bad wolf", "bad", "bad", "good", "bad xenon"]
    labels = ["pos", "pos", "pos", "neg", "neg", "neg", "pos", "neg"]
    weights = [5.0, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 0.0]
    for kw in (dict(), dict(keep_counts=True)):
        m = NBSVMClassifier(ngrams=1, n_bits=12, min_df=2, char_ngrams=0, **kw).fit(texts, labels,
                                                                       sample_weight=weights)
        kept = m.column_of_ >= 0
        bucket = {w: m.hasher_.buckets(w)[0] for w in ("good", "yak", "zebra", "xenon", "bad")}
        assert kept[bucket["good"]] and kept[bucket["yak"]] and kept[bucket["bad"]]
        assert not kept[bucket["zebra"]] and not kept[bucket["xenon"]]
        assert m.n_seen_buckets_ == 5           # good yak zebra bad wolf: not xenon


@pytest.mark.slow  # make test-slow: weights are checked through fit and the CLI refusals elsewhere
def test_nbsvm_lexicon_weight_col_counts_as_copies(tmp_path):
    texts, labels, weights = _corpus(n=200, seed=10)
    rows = list(zip(labels, texts, weights))
    (tmp_path / "w.jsonl").write_text("".join(
        f'{{"label": "{lab}", "text": "{t}", "w": {k}}}\n' for lab, t, k in rows))
    (tmp_path / "rep.jsonl").write_text("".join(
        f'{{"label": "{lab}", "text": "{t}"}}\n' for lab, t, k in rows for _ in range(int(k))))
    args = ["--ngrams", "2", "--n-bits", "14", "-q"]
    nbsvm(["lexicon", tmp_path / "w.jsonl", "-o", tmp_path / "w.npz", "--weight-col", "w",
           *args])
    nbsvm(["lexicon", tmp_path / "rep.jsonl", "-o", tmp_path / "rep.npz", *args])
    from nbsvm.lexicon.nblexicon import NBLexicon

    weighted, copies = NBLexicon.load(tmp_path / "w.npz"), NBLexicon.load(tmp_path / "rep.npz")
    assert weighted.weighted and not copies.weighted
    (wb, wc), (cb, cc) = weighted.compact(), copies.compact()
    assert np.array_equal(wb, cb) and np.array_equal(wc, cc.astype(np.float64))
    assert np.array_equal(weighted.ratios(), copies.ratios())
    # train --lexicon takes the file's counts: weights given then reach the learner only,
    # which it did without a word
    from typer.testing import CliRunner
    from nbsvm.cli import app
    for lexicon, quiet, said in ((tmp_path / "rep.npz", [], True), (tmp_path / "w.npz", [], False),
                                 (tmp_path / "rep.npz", ["-q"], False)):  # weighted, or quiet
        done = CliRunner().invoke(app, [str(a) for a in ["train", tmp_path / "w.jsonl",
                                  "--weight-col", "w", "--lexicon", lexicon, "-o",
                                  tmp_path / "m.npz", "--epochs", "1", *quiet]])
        assert done.exit_code == 0, done.output
        assert ("note: --weight-col weighs the learner's steps; the NB counts" in done.output) \
            == said


@pytest.mark.slow  # make test-slow: weights are checked through fit, the lexicon and the CLI elsewhere
def test_auto_calibrate_and_early_stopping_take_weights():
    """The modes that read the data again (the search's caches, a held-out part) keep the
    weights: no backend learner is searched, and the chosen model counts weighted."""
    texts, labels, weights = _corpus(n=600, seed=11)
    weights[0] = 0.0                     # a zero weight inside a cache read back in batches
    for kw in (dict(auto=True, time_budget=10), dict(calibrate="temperature"),
               dict(early_stopping=True, epochs=4)):
        m = NBSVMClassifier(n_bits=12, seed=1, **kw).fit(texts, labels, sample_weight=weights)
        assert m.backend_learner is None and m.score(texts, labels) > 0.6
        assert m.class_counts_.dtype == np.float64


def test_a_class_or_a_corpus_of_weight_zero_is_refused():
    texts, labels, _ = _corpus(n=60, seed=12)
    pos_zero = [0.0 if lab == "pos" else 1.0 for lab in labels]
    for kw in (dict(), dict(keep_counts=True), dict(interpolate="scores", beta=0.5)):
        with pytest.raises(NBSVMError, match="class 'pos' has only documents of weight 0"):
            NBSVMClassifier(n_bits=10, min_df=1, **kw).fit(texts, labels, sample_weight=pos_zero)
    with pytest.raises(NBSVMError, match="every document weighs 0"):
        NBSVMClassifier(n_bits=10).fit(texts, labels, sample_weight=np.zeros(60))


def test_a_label_or_continued_documents_of_weight_zero_are_refused():
    """As a fresh single-label fit refuses: a multi-label label whose documents all weigh
    0 (it trained silently, an output of no data), and train --init / continue_fit on
    new documents that all weigh 0 (it ran epochs of no data over the saved weights)."""
    texts, labels, _ = _corpus(n=60, seed=12)
    sets = [f"{lab},x" if i % 5 == 0 else lab for i, lab in enumerate(labels)]
    x_zero = [0.0 if i % 5 == 0 else 1.0 for i in range(60)]
    with pytest.raises(NBSVMError, match="label 'x' has only documents of weight 0"):
        NBSVMClassifier(n_bits=10, min_df=1, multilabel=True).fit(texts, sets, sample_weight=x_zero)
    m = NBSVMClassifier(n_bits=10, keep_counts=True).fit(texts, labels)
    with pytest.raises(NBSVMError, match="every new document weighs 0"):
        m.continue_fit(texts[:10], labels[:10], sample_weight=np.zeros(10))
    m.continue_fit(texts[:10], labels[:10], sample_weight=[0.0] * 9 + [1.0])  # one counts


def test_the_prior_of_a_class_not_seen_yet_is_finite():
    """partial_fit before a class's first document (or with weight 0 for it so far): the
    NB prior with interpolate='scores' counts it as half a document, not as log(0)."""
    m = NBSVMClassifier(n_bits=10, interpolate="scores", beta=0.5)
    m.partial_fit(["good fun", "great"], ["pos", "pos"], classes=["neg", "pos"])
    assert np.all(np.isfinite(m.decision_function(["good", "bad"])))
    m.partial_fit(["awful"], ["neg"], sample_weight=[0.25])
    assert m.log_prior(0) == pytest.approx(np.log(2 / 0.25))


def test_weights_below_one_balance_and_calibrate_as_their_multiples():
    """Weights are a scale: 'balanced' class weights and the rare-class share that
    calibrate='auto' reads are the same for w and w / 1000 (counts under 1 were clamped
    to 1, and the share divided by max(1, int(total)))."""
    from nbsvm.models.calibrate import needs_calibration
    from nbsvm.models.learner_setup import class_weights

    texts, labels, weights = _corpus(n=400, seed=13)
    weights[np.array(labels) == "pos"] *= 0.05          # a rare class by weight
    fitted = []
    for scale in (1.0, 1e-3):
        m = NBSVMClassifier(n_bits=10, class_weight="balanced", calibrate="auto", epochs=1)
        fitted.append(m.fit(texts, labels, sample_weight=weights * scale))
    big, small = fitted
    assert np.allclose(small.class_counts_, big.class_counts_ * 1e-3)
    assert np.allclose(class_weights(small), class_weights(big))
    counts = big.class_counts_
    assert np.allclose(class_weights(big), counts.sum() / (2 * counts))  # scikit-learn's form
    for m in fitted:             # the share as if trained on enough documents to calibrate
        m.n_docs_ = 10**6
    assert needs_calibration(small) == needs_calibration(big) is not None


def test_info_and_lexicon_count_documents_and_weights_apart(tmp_path):
    import json

    texts, labels, weights = _corpus(n=120, seed=14)
    weights[:10] = 0.5
    (tmp_path / "w.jsonl").write_text("".join(
        f'{{"label": "{lab}", "text": "{t}", "w": {k}}}\n'
        for lab, t, k in zip(labels, texts, weights)))
    from typer.testing import CliRunner

    from nbsvm.cli import app

    def run(*args):  # in process: four commands, no interpreter start each
        done = CliRunner().invoke(app, [str(a) for a in args])
        assert done.exit_code == 0, done.output
        return done.stdout

    summary = json.loads(run("lexicon", tmp_path / "w.jsonl", "-o", tmp_path / "w.npz",
                             "--weight-col", "w", "--n-bits", "12", "--json"))
    n_seen = int(np.count_nonzero(weights))            # documents of weight 0 count nowhere
    assert summary["documents"] == n_seen and summary["weight"] == pytest.approx(weights.sum())
    info = json.loads(run("info", tmp_path / "w.npz", "--json"))
    assert info["training"]["n_docs"] == n_seen
    assert info["training"]["weight_sum"] == pytest.approx(weights.sum())
    printed = run("info", tmp_path / "w.npz")
    assert re.search(rf"documents:\s+{n_seen}\b", printed), printed
    m = NBSVMClassifier(n_bits=12).fit(texts, labels, sample_weight=weights)
    m.save(tmp_path / "m.npz")
    info = json.loads(run("info", tmp_path / "m.npz", "--json"))
    assert info["training"]["n_docs"] == 120
    assert info["training"]["weight_sum"] == pytest.approx(weights.sum())


def test_the_held_out_accuracy_of_early_stopping_counts_the_weights(tmp_path):
    """As scikit-learn's validation score with sample weights: a held-out document of
    weight 0 does not count, one of weight 3 counts three times."""
    from nbsvm.data.batches import hash_batches
    from nbsvm.data.cache import CacheWriter
    from nbsvm.evaluation.heldout import accuracy_now
    from nbsvm.io.document import Document

    texts, labels, weights = _corpus(n=300, seed=15)
    model = NBSVMClassifier(n_bits=12, epochs=1, seed=1).fit(texts[:200], labels[:200])
    held = [Document(lab, t, "<held>", i + 1, w)
            for i, (t, lab, w) in enumerate(zip(texts[200:], labels[200:], weights[200:]))]
    with CacheWriter(tmp_path / "valid", model.hasher_) as writer:
        for batch in hash_batches(held, model.hasher_, batch_docs=32, remap=model.column_of_):
            writer.add(batch)
        cache = writer.close()
    right = model.predict(texts[200:]) == np.array(labels[200:])
    weighted = np.average(right, weights=weights[200:])
    assert accuracy_now(model, cache, columns=True, weighted=True) == pytest.approx(
        weighted, rel=1e-12)
    assert accuracy_now(model, cache, columns=True) == right.mean()   # a test set's report
    assert abs(weighted - right.mean()) > 1e-3           # the weights do change it here
    cache.close()


def test_weighted_files_of_the_first_days_still_load(tmp_path):
    """A weighted lexicon saved without its document count, and a weighted feature cache
    kept without its summed weights, load: the count from the documents per bucket (a
    lower bound, only shown), the sum from the cache's weights (exact)."""
    import json

    from nbsvm.data.batches import hash_batches
    from nbsvm.data.cache import CacheWriter, FeatureCache
    from nbsvm.io.document import Document
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.text.hashing import Hasher

    texts, labels, weights = _corpus(n=90, seed=16)
    lex = NBLexicon(Hasher(ngrams=1, n_bits=10))
    docs = [Document(y, t, "<w>", i + 1, w) for i, (t, y, w) in
            enumerate(zip(texts, labels, weights))]
    batch = next(hash_batches(docs, lex.hasher))
    lex.add_batch(batch.ids, batch.offsets,
                  np.array([lex.code_of(y) for y in batch.labels]), batch.weights)
    header, arrays = lex.header(), lex.arrays()
    del header["n_docs"]
    old = NBLexicon.from_parts(header, arrays["buckets"], arrays["counts"], "old.npz",
                               arrays["df"])
    assert old.n_docs_ == int(arrays["df"].max()) <= lex.n_docs_
    assert np.array_equal(old.ratios(), lex.ratios())
    with CacheWriter(tmp_path / "c", lex.hasher) as writer:
        writer.add(batch)
        cache = writer.close()
    assert cache.weight_sum == pytest.approx(weights.sum())
    meta = json.loads((tmp_path / "c" / "meta.json").read_text())
    del meta["weight_sum"]
    (tmp_path / "c" / "meta.json").write_text(json.dumps(meta))
    assert FeatureCache(tmp_path / "c").weight_sum == pytest.approx(weights.sum())


def test_nbsvm_lexicon_refuses_alpha_zero(tmp_path):
    texts, labels, _ = _corpus(n=20, seed=17)
    (tmp_path / "a.txt").write_text("".join(f"{y}\t{t}\n" for t, y in zip(texts, labels)))
    done = nbsvm(["lexicon", tmp_path / "a.txt", "-o", tmp_path / "l.npz", "--alpha", "0"],
                 ok=False)
    assert "alpha must be a positive" in done.stderr
    assert not (tmp_path / "l.npz").exists()


def test_early_stopping_refuses_a_held_out_part_of_weight_zero():
    """Held-out documents that all weigh 0 gave every epoch accuracy 0.0, and training
    stopped after n_iter_no_change epochs keeping the first: refused, saying why."""
    pos = ["a great film", "great fun", "loved the cast", "a wonderful story", "great acting"]
    neg = ["an awful film", "dull fun", "hated the cast", "a boring story", "awful acting"]
    texts, y = (pos + neg) * 20, ([1] * 5 + [0] * 5) * 20
    w = (np.arange(len(y)) % 2).astype(float)  # the held-out tenth falls on weight 0
    m = NBSVMClassifier(n_bits=10, min_df=1, char_ngrams=0, calibrate=None, epochs=10,
                        early_stopping=True)
    with pytest.raises(NBSVMError, match="held out 20 documents, all of weight 0"):
        m.fit(texts, y, sample_weight=w)
    m.fit(texts, y, sample_weight=1.0 - w)  # those weigh, and score
    assert m.validation_["accuracy"] == 1.0


@pytest.mark.parametrize("kw", [dict(optimizer="adagrad"), dict(optimizer="sgd"),
                                dict(optimizer="adagrad", loss="softmax", three=True),
                                dict(optimizer="adagrad", loss="hinge", three=True),
                                dict(multilabel=True)])
def test_the_text_of_a_document_of_weight_zero_changes_nothing(kw):
    """A weight-0 document counts nowhere, in the learner too: AdaGrad gave its n-grams the
    L2 part of a step (and their squared sums), so its text moved the weights (8.5e-4)."""
    kw = dict(kw)
    three = kw.pop("three", False)
    texts = ["a great film", "great fun", "an awful film", "dull fun", "so so", "fine"] * 5
    y = ([1, 1, 0, 0, 2, 2] if three else [1, 1, 0, 0, 1, 0]) * 5
    if kw.get("multilabel"):
        y = [[v] if v else [] for v in y]
    extra = y[:1]
    common = dict(n_bits=10, min_df=1, char_ngrams=0, calibrate=None, epochs=5, norm="none",
                  lam=0.01, eta0=0.1, **kw)
    w = [1.0] * len(y) + [0.0]
    a = NBSVMClassifier(**common).fit(texts + ["great great great"], y + extra, sample_weight=w)
    b = NBSVMClassifier(**common).fit(texts + ["something else"], y + extra, sample_weight=w)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
