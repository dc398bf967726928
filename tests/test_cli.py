"""The typer CLI on small hand-made label<TAB>text files."""
import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nbsvm.config import NEW_TOKENIZER
import nbsvm

from nbsvm import NBLexicon, NBSVMClassifier, NBSVMError
from nbsvm.cli import app
from nbsvm.text.hashing import Hasher

TRAIN = [
    ("pos", "a great film, loved it"), ("pos", "great fun and a great cast"),
    ("pos", "loved the music!"), ("pos", "wonderful, moving and great"),
    ("pos", "a fun, touching story"), ("pos", "superb acting, loved it"),
    ("neg", "an awful film"), ("neg", "awful, dull and boring"), ("neg", "the cast was dull"),
    ("neg", "boring; awful plot"), ("neg", "a dull, lifeless mess"),
]
TEST = [("pos", "great fun, loved it"), ("neg", "awful and dull"), ("pos", "a wonderful cast"),
        ("neg", "boring mess"), ("neg", "great? no, awful")]

SMALL = ["--n-bits", "12", "--ngrams", "2"]
TRAIN_OPTS = SMALL + ["--epochs", "5", "--quiet"]

runner = CliRunner()


def write_lines(path, rows):
    path.write_text("".join(f"{l}\t{t}\n" for l, t in rows), encoding="utf-8")
    return path


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def stderr_of(result):
    try:
        return result.stderr
    except (ValueError, AttributeError):       # older click: stderr mixed into output
        return result.output


def assert_ok(result):
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.exception is None


def assert_out_of_range(result, flag, value, bounds):
    """Exit status 2 with typer's words for a value outside an option's range (checked while
    the options are parsed, before the library loads), no traceback."""
    out = result.output
    assert result.exit_code == 2 and "Traceback" not in out, out
    assert f"Invalid value for '{flag}': {value} is not in the range {bounds}" in out, out


def assert_clean_error(result, *needles):
    """Non-zero exit, exactly one 'error: ...' line containing every needle, no traceback."""
    out = result.output
    assert result.exit_code != 0, out
    # anything but a SystemExit means an exception escaped the command
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in out and "Traceback" not in stderr_of(result)
    lines = [l for l in out.splitlines() if l.strip()]
    errors = [l for l in lines if l.startswith("error: ")]
    assert len(errors) == 1, out
    for n in needles:
        assert n in errors[0], (n, errors[0])
    assert "error: " in stderr_of(result)
    return errors[0]


@pytest.fixture
def files(tmp_path):
    train = write_lines(tmp_path / "train.txt", TRAIN)
    test = write_lines(tmp_path / "test.txt", TEST)
    return tmp_path, train, test


@pytest.fixture
def model(files):
    tmp, train, _ = files
    path = tmp / "m.npz"
    assert_ok(run("train", train, "-o", path, *TRAIN_OPTS))
    return path


# -- the happy paths --------------------------------------------------------------------------

def test_version():
    r = run("--version")
    assert_ok(r)
    assert r.output.strip() == f"nbsvm {nbsvm.__version__}"


def test_lexicon_command(files):
    tmp, train, _ = files
    out = tmp / "lex.npz"
    r = run("lexicon", train, "-o", out, *SMALL, "--alpha", "0.5", "--quiet")
    assert_ok(r)
    assert "documents: 11" in r.output
    assert "classes: neg (5), pos (6)" in r.output
    assert "char_ngrams (from the data): 4" in r.output
    lex = NBLexicon.load(out)
    # --char-ngrams auto, as train decides it: character 4-grams on these short texts
    ref = NBLexicon(Hasher(ngrams=2, n_bits=12, char_ngrams=4, **NEW_TOKENIZER), alpha=0.5).fit(
        [t for _, t in TRAIN], [l for l, _ in TRAIN])
    assert lex.hasher == ref.hasher and lex.alpha == 0.5
    assert lex.hasher == NBSVMClassifier.load(_trained(tmp, train)).hasher_  # as train hashes
    assert np.array_equal(lex.counts(), ref.counts())
    assert np.array_equal(lex.ratios(), ref.ratios())
    assert f"buckets seen: {ref.n_seen_:,} of 4,096" in r.output


def _trained(tmp, train):
    out = tmp / "plain.npz"
    assert_ok(run("train", train, "-o", out, *SMALL, "-q"))
    return out


def test_train_without_lexicon_equals_library_fit(files):
    tmp, train, _ = files
    out = tmp / "m.npz"
    r = run("train", train, "-o", out, *SMALL, "--epochs", "4", "--loss", "hinge",
            "--optimizer", "sgd", "--eta0", "0.2", "--lambda", "0.001", "--seed", "3")
    assert_ok(r)
    assert "documents: 11" in r.output and f"saved: {out}" in r.output
    settings = json.loads(re.search(r"^settings: (.*)$", r.output, re.M).group(1))
    assert settings["loss"] == "hinge" and settings["n_bits"] == 12 and settings["seed"] == 3
    clf = NBSVMClassifier.load(out)
    ref = NBSVMClassifier(ngrams=2, n_bits=12, epochs=4, loss="hinge", optimizer="sgd", eta0=0.2,
                          lam=0.001, seed=3).fit([t for _, t in TRAIN], [l for l, _ in TRAIN])
    texts = [t for _, t in TEST + TRAIN]
    assert np.array_equal(clf.decision_function(texts), ref.decision_function(texts))
    assert [p.name for p in tmp.iterdir() if "nbsvm-tmp" in p.name] == []


def test_train_with_lexicon_uses_its_hasher_and_alpha(files):
    tmp, train, _ = files
    lex_path = tmp / "lex.npz"
    assert_ok(run("lexicon", train, "-o", lex_path, "--n-bits", "11", "--ngrams", "1",
                  "--alpha", "0.5", "--char-ngrams", "0", "-q"))
    out = tmp / "m.npz"
    # a hashing option (--ngrams too) with another value than the lexicon's is refused
    # (it used to be dropped without a word), the lexicon's own value is fine
    r = run("train", train, "-o", out, "--lexicon", lex_path, *TRAIN_OPTS)
    assert r.exit_code != 0 and "--n-bits" in r.output and not out.exists()
    r = run("train", train, "-o", out, "--lexicon", lex_path, "--ngrams", "3", "-q")
    assert r.exit_code != 0 and "--ngrams" in r.output and not out.exists()
    r = run("train", train, "-o", out, "--lexicon", lex_path, "--n-bits", "11", "--ngrams",
            "1", "--epochs", "5", "-q")
    assert_ok(r)
    clf = NBSVMClassifier.load(out)
    lex = NBLexicon.load(lex_path)
    assert clf.hasher_ == lex.hasher == Hasher(ngrams=1, n_bits=11, **NEW_TOKENIZER)
    # the data-dependent min_df of the corpus the lexicon counted: 1 for a few documents
    assert clf.alpha == 0.5 and clf.min_df is None and clf.setting("min_df") == 1
    df = lex.counts().sum(axis=0)
    assert np.array_equal(clf.ratios_, np.where(df >= 1, lex.ratios(min_df=1), 0))
    assert clf.predict([t for _, t in TRAIN]).tolist() == [l for l, _ in TRAIN]


@pytest.mark.parametrize("learner, given, refused", [
    ("pa", ["--loss", "log", "--eta0", "5"], "--loss, --eta0"),
    ("mira", ["--lambda", "10"], "--lambda"),
    ("pegasos", ["--optimizer", "sgd"], "--optimizer"),
    ("dcd", ["--epochs", "50"], "--epochs"),
    ("pa", ["--threads", "2"], "--threads"),  # the built-in learner's Hogwild! epochs
])
def test_a_backend_learner_refuses_the_options_it_would_drop(files, learner, given, refused):
    """They were accepted and ignored (the same model, byte for byte); the error names
    them and what the learner takes, before anything is read."""
    tmp, train, _ = files
    out = tmp / "m.npz"
    r = run("train", train, "-o", out, "--learner", learner, *SMALL, *given, "-q")
    assert r.exit_code != 0 and not out.exists()
    assert f"--learner {learner} does not take {refused} " in " ".join(r.output.split())
    assert "it takes" in r.output


def test_a_backend_learner_refuses_a_weight_column_whatever_its_weights(tmp_path):
    """--weight-col with --learner pa was refused only when some weight was not 1 (the data
    decided; a helper's hunt): refused before anything is read, as the docs say."""
    data = tmp_path / "w.csv"
    data.write_text("label,text,w\npos,good film,1\nneg,bad film,1\n" * 5)
    r = run("train", data, "--format", "csv", "--weight-col", "w", "--learner", "pa",
            "-o", tmp_path / "m.npz")
    assert r.exit_code != 0 and "the backend learners (--learner) do not take them" in r.output
    assert not (tmp_path / "m.npz").exists()


def test_a_backend_learner_takes_its_own_options(files):
    tmp, train, _ = files
    for learner, given in (("pegasos", ["--lambda", "1e-3", "--epochs", "3"]),
                           ("dcd", ["--lambda", "1e-3"]), ("pa", ["--epochs", "2"])):
        assert_ok(run("train", train, "-o", tmp / "m.npz", "--learner", learner, *SMALL,
                      *given, "-q"))


def test_patience_without_valid_is_refused_not_dropped(files):
    tmp, train, _ = files
    out = tmp / "m.npz"
    r = run("train", train, "-o", out, *SMALL, "--patience", "3", "-q")
    assert_clean_error(r, "--patience", "--valid")
    assert not out.exists()
    assert_ok(run("train", train, "-o", out, *SMALL, "--patience", "3", "--valid", "0.3", "-q"))


def test_eval_prints_accuracy(files, model):
    _, _, test = files
    r = run("eval", test, "-m", model, "-q")
    assert_ok(r)
    line = [l for l in r.output.splitlines() if l.startswith("accuracy: ")]
    assert len(line) == 1
    acc = float(re.match(r"accuracy: (\d+\.\d\d)%$", line[0]).group(1))
    clf = NBSVMClassifier.load(model)
    expected = 100 * clf.score([t for _, t in TEST], [l for l, _ in TEST])
    assert acc == pytest.approx(expected, abs=0.005)
    assert "log loss: " in r.output            # default loss is log


def test_eval_json(files, model):
    _, _, test = files
    r = run("eval", test, "-m", model, "--json")
    assert_ok(r)
    rep = json.loads(r.stdout)
    clf = NBSVMClassifier.load(model)
    texts, labels = [t for _, t in TEST], [l for l, _ in TEST]
    pred = clf.predict(texts)
    assert rep["n_docs"] == 5 and rep["classes"] == ["neg", "pos"]
    assert rep["accuracy"] == pytest.approx(np.mean(pred == np.array(labels, object)))
    cm = [[sum(1 for p, t in zip(pred, labels) if t == a and p == b) for b in ("neg", "pos")]
          for a in ("neg", "pos")]
    assert rep["confusion_matrix"] == cm
    proba = clf.predict_proba(texts)
    ll = -np.mean(np.log([proba[i, ["neg", "pos"].index(l)] for i, l in enumerate(labels)]))
    assert rep["log_loss"] == pytest.approx(ll, rel=1e-9)


def test_eval_output_csv(files, model):
    tmp, _, test = files
    out = tmp / "report.csv"
    r = run("eval", test, "-m", model, "-q", "--output", out)
    assert_ok(r)
    df = pd.read_csv(out, keep_default_na=False)
    assert list(df.columns) == ["metric", "class", "value"]
    acc = float(df.loc[df.metric == "accuracy", "value"].iloc[0])
    printed = float(re.search(r"^accuracy: (\d+\.\d\d)%", r.output, re.M).group(1))
    assert 100 * acc == pytest.approx(printed, abs=0.005)
    assert int(float(df.loc[df.metric == "n_docs", "value"].iloc[0])) == 5


def test_predict_output_csv(files, model):
    tmp, _, test = files
    out = tmp / "pred.csv"
    r = run("predict", test, "-m", model, "--output", out)
    assert_ok(r)
    assert "predictions: 5 written" in r.output
    df = pd.read_csv(out)
    assert len(df) == 5
    assert list(df.columns) == ["source", "line", "true_label", "label", "score_pos",
                          "probability_pos"]
    clf = NBSVMClassifier.load(model)
    texts = [t for _, t in TEST]
    assert df["label"].tolist() == clf.predict(texts).tolist()
    np.testing.assert_allclose(df["score_pos"], clf.decision_function(texts), rtol=1e-12)
    np.testing.assert_allclose(df["probability_pos"], clf.predict_proba(texts)[:, 1], rtol=1e-12)
    assert df["line"].tolist() == [1, 2, 3, 4, 5]
    assert df["true_label"].tolist() == [l for l, _ in TEST]


def test_predict_to_stdout_plain_text(files, model):
    tmp, _, _ = files
    plain = tmp / "plain.txt"
    plain.write_text("great fun\n\nawful, dull\nloved it\n", encoding="utf-8")
    r = run("predict", plain, "-m", model, "--format", "text")
    assert_ok(r)
    rows = [l for l in r.stdout.splitlines() if l]
    assert rows[0] == "source,line,label,score_pos,probability_pos"
    assert len(rows) == 1 + 3
    assert [row.split(",")[1] for row in rows[1:]] == ["1", "3", "4"]


# -- errors: one clean line, non-zero exit, no traceback --------------------------------------

def test_empty_file(files):
    tmp, _, _ = files
    empty = tmp / "empty.txt"
    empty.write_text("")
    assert_clean_error(run("train", empty, "-o", tmp / "x.npz", *TRAIN_OPTS), str(empty),
                       "documents")
    assert_clean_error(run("lexicon", empty, "-o", tmp / "x.npz", *SMALL, "-q"), str(empty),
                       "documents")
    assert not (tmp / "x.npz").exists()


def test_empty_file_in_eval(files, model):
    tmp, _, _ = files
    empty = tmp / "empty.txt"
    empty.write_text("\n\n")
    assert_clean_error(run("eval", empty, "-m", model, "-q"), "no documents")


def test_line_without_label(files):
    tmp, _, _ = files
    bad = write_lines(tmp / "bad.txt", TRAIN[:3])
    with open(bad, "a") as fh:
        fh.write("this line has no label\n")
    for cmd in (["train", bad, "-o", tmp / "x.npz", *TRAIN_OPTS],
                ["lexicon", bad, "-o", tmp / "x.npz", *SMALL, "-q"]):
        assert_clean_error(run(*cmd), f"{bad}:4:", "TAB")
    assert not (tmp / "x.npz").exists()


def test_line_without_label_in_eval(files, model):
    tmp, _, _ = files
    bad = tmp / "bad.txt"
    bad.write_text("pos\tgreat\n\nno label\n")
    assert_clean_error(run("eval", bad, "-m", model, "-q"), f"{bad}:3:")


def test_unknown_label_in_eval(files, model, monkeypatch):
    tmp, _, _ = files
    unk = write_lines(tmp / "unk.txt", [("pos", "great"), ("meh", "so so")])
    r = run("eval", unk, "-m", model, "-q", "--json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["unseen_labels"] == {"meh": 1} and rep["per_class"]["meh"]["support"] == 1
    assert rep["accuracy"] <= 0.5                      # "meh" is wrong whatever is predicted
    # past MAX_UNSEEN labels the model does not know, the others are counted together
    # (a column of ids read as labels made a class of each: 1.7 GB for a million)
    from nbsvm.evaluation import metrics
    many = write_lines(tmp / "many.txt", [("pos", "great")] + [(f"id{i}", "so") for i in range(9)])
    monkeypatch.setattr(metrics, "MAX_UNSEEN", 3)
    rep = json.loads(run("eval", many, "-m", model, "-q", "--json").stdout)
    assert rep["unseen_labels"] == {"id0": 1, "id1": 1, "id2": 1, metrics.OTHER_UNSEEN: 6}
    # a document without a label is still an error naming it
    none = tmp / "none.csv"
    none.write_text("text,label\ngreat,pos\n")
    assert run("eval", none, "-m", model, "-q").exit_code == 0


def test_missing_input_file(files, model):
    tmp, _, _ = files
    missing = tmp / "missing.txt"
    assert_clean_error(run("train", missing, "-o", tmp / "x.npz", *TRAIN_OPTS), str(missing))
    assert_clean_error(run("eval", missing, "-m", model, "-q"), str(missing))
    assert_clean_error(run("predict", missing, "-m", model), str(missing))
    assert_clean_error(run("lexicon", missing, "-o", tmp / "l.npz", "-q"), str(missing))


def test_missing_model_file(files):
    tmp, _, test = files
    assert_clean_error(run("eval", test, "-m", tmp / "nope.npz", "-q"), "nope.npz")
    assert_clean_error(run("train", test, "-o", tmp / "m.npz", "--lexicon", tmp / "nolex.npz",
                           "-q"), "nolex.npz")


def test_corrupted_model_file(files, model):
    _, _, test = files
    data = bytearray(model.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 32] = bytes(b ^ 0xA5 for b in data[mid:mid + 32])
    model.write_bytes(bytes(data))
    assert_clean_error(run("eval", test, "-m", model, "-q"), str(model), "corrupted")
    assert_clean_error(run("predict", test, "-m", model), str(model), "corrupted")


def test_truncated_model_file(files, model):
    _, _, test = files
    data = model.read_bytes()
    model.write_bytes(data[:len(data) // 2])
    assert_clean_error(run("eval", test, "-m", model, "-q"), str(model))
    assert_clean_error(run("predict", test, "-m", model), str(model))


def test_lexicon_given_as_model(files):
    tmp, train, test = files
    lex = tmp / "lex.npz"
    assert_ok(run("lexicon", train, "-o", lex, *SMALL, "-q"))
    assert_clean_error(run("eval", test, "-m", lex, "-q"), str(lex), "kind 'lexicon'")


@pytest.mark.parametrize("bits", ["0", "40", "32", "-3"])
def test_bad_n_bits(files, bits):
    # refused while the options are parsed (typer's range, config.py's bounds); the
    # library's own check of the same bound: tests/test_text.py
    tmp, train, _ = files
    for command in ("train", "lexicon"):
        r = run(command, train, "-o", tmp / "x.npz", "--n-bits", bits, "-q")
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert f"Invalid value for '--n-bits': {bits} is not in the range 1<=x<=31" in r.output
    assert not (tmp / "x.npz").exists()


@pytest.mark.parametrize("opt, value, needle", [
    ("--eta0", "-1", "eta0"),
    ("--format", "xml", "unknown format 'xml'"),
])
def test_bad_train_options(files, opt, value, needle):
    tmp, train, _ = files
    assert_clean_error(run("train", train, "-o", tmp / "x.npz", *SMALL, opt, value, "-q"),
                       needle)
    assert not (tmp / "x.npz").exists()


@pytest.mark.parametrize("opt, value, needle", [
    ("--loss", "foo", "unknown loss 'foo'; allowed: hinge, log, squared_hinge, modified_huber, "
                      "softmax, multiclass_hinge"),
    ("--optimizer", "adam", "unknown optimizer 'adam'; allowed: sgd, adagrad"),
    ("--interpolate", "both", "unknown interpolation 'both'; allowed: scores, weights"),
    ("--weighting", "tfidf", "unknown weighting 'tfidf'; allowed: nb, binary"),
    ("--norm", "l1", "unknown norm 'l1'; allowed: l2, none"),
    ("--calibrate", "platt", "unknown calibration 'platt'; allowed: auto, none, sigmoid, "
                             "isotonic, temperature"),
])
def test_a_name_outside_the_choices_is_refused_while_parsing(files, opt, value, needle):
    # (config.py's names, which the library checks too: the test below)
    tmp, train, _ = files
    r = run("train", train, "-o", tmp / "x.npz", *SMALL, opt, value, "-q")
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert f"Invalid value for '{opt}': {needle}" in " ".join(r.output.split()), r.output
    assert not (tmp / "x.npz").exists()


def test_the_library_takes_the_names_the_command_line_takes():
    from nbsvm.config import (CALIBRATIONS, CLASSIFICATION_LOSSES, INTERPOLATIONS,
                              MULTICLASS_LOSS_NAMES, NORMS, OPTIMIZERS, WEIGHTINGS)
    from nbsvm.learners.losses import LOSSES, MULTICLASS_LOSSES
    assert set(CLASSIFICATION_LOSSES) <= set(LOSSES)
    assert tuple(MULTICLASS_LOSSES) == MULTICLASS_LOSS_NAMES
    accepted = [dict(loss=n) for n in (*CLASSIFICATION_LOSSES, *MULTICLASS_LOSS_NAMES)]
    accepted += [dict(optimizer=n) for n in OPTIMIZERS]
    accepted += [dict(interpolate=n) for n in INTERPOLATIONS]
    accepted += [dict(weighting=n, beta=1.0) for n in WEIGHTINGS]
    accepted += [dict(norm=n) for n in NORMS]
    accepted += [dict(calibrate=n) for n in CALIBRATIONS]
    for params in accepted:
        NBSVMClassifier(**params).validate()
    for params in (dict(loss="foo"), dict(optimizer="adam"), dict(interpolate="both"),
                   dict(weighting="tfidf"), dict(norm="l1"), dict(calibrate="platt")):
        with pytest.raises(NBSVMError):
            NBSVMClassifier(**params).validate()


@pytest.mark.parametrize("opt, value, bounds", [
    ("--beta", "1.5", "0.0<=x<=1.0"),
    ("--epochs", "0", "x>=1"),
    ("--ngrams", "17", "1<=x<=16"),
    ("--lambda", "-1", "x>=0.0"),
    ("--seed", "-1", "x>=0"),
])
def test_train_options_out_of_range(files, opt, value, bounds):
    tmp, train, _ = files
    r = run("train", train, "-o", tmp / "x.npz", *SMALL, opt, value, "-q")
    assert_out_of_range(r, opt, value if opt != "--lambda" else "-1.0", bounds)
    assert not (tmp / "x.npz").exists()


def test_error_message_with_brackets_printed_verbatim(files, model):
    # labels and paths are user data: a label "[b]" must appear as such, in an error and in
    # eval's tables (where a label the model does not know is a row of its own)
    tmp, _, _ = files
    unk = write_lines(tmp / "unk.txt", [("[b]", "great")])
    r = run("eval", unk, "-m", model, "-q")
    assert r.exit_code == 0, r.output
    assert "counted as errors: [b] (1)" in r.stdout and "│ [b]" in r.stdout
    assert_clean_error(run("predict", unk, "-m", model, "-o", tmp / "[b]" / "p.csv"),
                       f"the folder '{tmp / '[b]'}' does not exist")


def test_missing_file_with_brackets_in_its_name(files):
    tmp, _, _ = files
    weird = tmp / "x[/]y.txt"
    assert_clean_error(run("train", weird, "-o", tmp / "x.npz", *TRAIN_OPTS), str(weird))


def test_predict_empty_csv(files, model):
    tmp, _, _ = files
    e = tmp / "empty.csv"
    e.write_text("")
    assert_clean_error(run("predict", e, "-m", model), str(e))


# -- train --test: hash the test set while training, report like eval ---------------------------

def test_train_with_test_set_reports_like_eval(files):
    tmp, train, test = files
    out = tmp / "m.npz"
    r = run("train", train, "-o", out, *SMALL, "--epochs", "5", "--test", test, "--json")
    assert_ok(r)
    rep = json.loads(r.stdout)
    assert {"fit_s", "wait_test_hash_s", "eval_s", "save_s"} <= set(rep.pop("timings"))
    r2 = run("eval", test, "-m", out, "--json")
    assert_ok(r2)
    ref = json.loads(r2.stdout)
    ref.pop("eval_seconds")
    assert rep.pop("log_loss") == pytest.approx(ref.pop("log_loss"), rel=1e-13)
    assert rep == ref
    assert rep["n_docs"] == len(TEST)
    # the model file is the same as without --test
    plain = tmp / "plain.npz"
    assert_ok(run("train", train, "-o", plain, *SMALL, "--epochs", "5", "-q"))
    texts = [t for _, t in TEST + TRAIN]
    assert np.array_equal(NBSVMClassifier.load(out).decision_function(texts),
                          NBSVMClassifier.load(plain).decision_function(texts))


def test_train_with_test_set_prints_accuracy(files):
    tmp, train, test = files
    r = run("train", train, "-o", tmp / "m.npz", *TRAIN_OPTS, "--test", test)
    assert_ok(r)
    assert re.search(r"^accuracy: \d+\.\d\d%$", r.output, re.M)
    assert f"saved: {tmp / 'm.npz'}" in r.output


def test_train_with_bad_test_file(files):
    tmp, train, _ = files
    bad = tmp / "badtest.txt"
    bad.write_text("pos\tgreat\nno tab on this line\n")
    assert_clean_error(run("train", train, "-o", tmp / "x.npz", *TRAIN_OPTS, "--test", bad),
                       f"{bad}:2:", "TAB", "the model is trained and saved to")
    assert (tmp / "x.npz").exists()  # trained: kept, the test set named
    assert not list(tmp.rglob("*.nbsvm-tmp*"))
    # a label of the test set that training never saw counts as an error, and is named
    unk = write_lines(tmp / "unk.txt", [("pos", "great"), ("meh", "so so")])
    r = run("train", train, "-o", tmp / "x.npz", *TRAIN_OPTS, "--test", unk)
    assert r.exit_code == 0, r.output
    assert "labels the model does not know, counted as errors: meh (1)" in r.stdout
    # the scores of probabilities are over the known labels' documents, and say so
    assert "meh (1) (log loss, ECE leave their documents out)" in r.stdout


@pytest.mark.parametrize("value", ["0", "65", "-2"])
def test_bad_threads(files, value):
    tmp, train, _ = files
    assert_out_of_range(run("train", train, "-o", tmp / "x.npz", *TRAIN_OPTS, "--threads", value),
                        "--threads", value, "1<=x<=64")
    assert not (tmp / "x.npz").exists()


def test_train_min_df_option(files):
    tmp, train, _ = files
    out = tmp / "m.npz"
    assert_ok(run("train", train, "-o", out, *TRAIN_OPTS, "--min-df", "1"))
    clf = NBSVMClassifier.load(out)
    assert clf.min_df == 1
    # (short reviews: the data gives character 4-grams beside the word n-grams)
    assert clf.char_ngrams is None and clf.hasher_.char_ngrams == 4
    lex = NBLexicon(Hasher(ngrams=2, n_bits=12, char_ngrams=4, **NEW_TOKENIZER)).fit(
        [t for _, t in TRAIN], [l for l, _ in TRAIN])
    assert np.array_equal(clf.ratios_, lex.ratios())
    assert_out_of_range(run("train", train, "-o", tmp / "x.npz", *TRAIN_OPTS, "--min-df", "0"),
                        "--min-df", "0", "x>=1")
    assert not (tmp / "x.npz").exists()


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_nbsvm_train_never_imports_scipy_linalg(tmp_path):
    # the real command line: a training run loads the kernels, where numba probes for BLAS
    # by importing scipy.linalg (0.15 s and 14 MB of peak memory on IMDB); the CLI skips it
    import subprocess
    import sys

    from nbsvm.datasets import fixture
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "nbsvm", "train",
                        str(fixture("reviews.txt")), "-o", str(tmp_path / "m.npz"), "-q"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines()
                if line.startswith("import time:")}
    assert "numba.np.arraymath" in imported and "scipy.linalg" not in imported


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_cli_skips_numbas_blas_probe_and_scipy_still_imports():
    # the CLI keeps numba from importing scipy.linalg at its first kernel (0.15 s per run);
    # the block acts only while numba's module loads
    import subprocess
    import sys

    code = ("import sys\n"
            "from nbsvm.cli import _SkipNumbaBlasProbe\n"
            "sys.meta_path.insert(0, _SkipNumbaBlasProbe())\n"
            "assert 'scipy.linalg' not in sys.modules\n"
            "from nbsvm import _small_jobs\n"
            "_small_jobs.PLAIN_BYTES = 0\n"                # the compiled hasher, not mmh3
            "from nbsvm.text.hashing import Hasher\n"
            "assert Hasher(ngrams=2, n_bits=8).buckets('a b').tolist()\n"
            "assert 'numba' in sys.modules\n"
            "import numba.np.arraymath\n"              # where numba probes for BLAS
            "assert 'scipy.linalg' not in sys.modules\n"
            "assert 'scipy.linalg.cython_blas' not in sys.modules\n"
            "try:\n"
            "    import scipy.linalg\n"
            "except ImportError:\n"
            "    print('no scipy')\n"
            "else:\n"
            "    assert scipy.linalg.cython_blas is not None\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


def test_cli_reports_output_it_could_not_write(tmp_path):
    # the CLI skips interpreter teardown (os._exit) but still flushes stdout first: a
    # failed flush (here a full disk, /dev/full) is an error with a non-zero exit status
    import os
    import subprocess
    import sys

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    # output still in the buffer when the command returns, as after print() (buffered
    # standard streams, whatever this environment says)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    code = ("import sys\nfrom nbsvm.cli import _exit_now\n"
            "sys.stdout.write('accuracy: 92.20%\\n')\n_exit_now(0)\n")
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE,
                             text=True, timeout=120, env=env)
    assert out.returncode == 120
    assert "could not write the output" in out.stderr
    ok = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and ok.stdout == "accuracy: 92.20%\n"
    # an error's exit status is kept
    failed = subprocess.run([sys.executable, "-c", code.replace("_exit_now(0)", "_exit_now(2)")],
                            capture_output=True, text=True, timeout=120)
    assert failed.returncode == 2
    # a command whose output fills the buffer fails while it runs: said as such, status
    # 120 (it was "error: OSError: [Errno 28] No space left on device", naming nothing,
    # status 2); an error naming its file (every file of nbsvm's own) keeps status 2
    running = ("import sys, typer\nfrom nbsvm.cli.common import cli_errors\ntry:\n"
               "    with cli_errors():\n        BODY\nexcept typer.Exit as e:\n"
               "    sys.exit(e.exit_code)\n")
    with open("/dev/full", "w") as full:
        out = subprocess.run(
            [sys.executable, "-c", running.replace("BODY", "print('x' * 100_000, flush=True)")],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert out.returncode == 120, out.stderr
    assert out.stderr.count("could not write the output (standard output)") == 1
    out = subprocess.run(
        [sys.executable, "-c", running.replace("BODY", "raise OSError(28, 'No space', 'x')")],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "error: OSError: [Errno 28] No space: 'x'" in out.stderr
    assert out.stdout == ""


def test_a_cache_that_cannot_be_written_names_itself(tmp_path, monkeypatch):
    """A full disk (or a file size limit) under the feature cache raised an OSError that
    named nothing: taken for standard output's, or an unexplained 'File too large'."""
    from nbsvm.data.store import ArrayWriter
    from nbsvm.errors import NBSVMError

    writer = ArrayWriter(tmp_path / "cache", {"ids": "int32"})

    class Full:
        closed = False

        def write(self, _):
            raise OSError(27, "File too large")

    writer._files["ids"].close()
    writer._files["ids"] = Full()
    with pytest.raises(NBSVMError, match="cannot write the cache: File too large") as e:
        writer.write("ids", [1, 2, 3])
    assert e.value.path == str(tmp_path / "cache")


def test_train_json_without_a_test_set(tmp_path):
    import json
    from nbsvm.datasets import fixture
    train = fixture("reviews.txt")          # 20 + 20 hand-made reviews (data/README.md)
    r = runner.invoke(app, ["train", str(train), "-o", str(tmp_path / "m.npz"), "--n-bits", "10",
                            "--min-df", "1", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["documents"] == 40 and out["classes"] == ["neg", "pos"]
    assert out["class_counts"] == [20, 20] and out["timings"]["train_s"] >= 0


def test_a_lexicon_of_one_class_is_refused_when_counted_and_when_given(files):
    """nbsvm lexicon saved one-class data; train --lexicon then said 'need at least two
    classes, found ['a']' of training data that had two."""
    from nbsvm.lexicon.build import build_lexicon
    from nbsvm.io.document import Document

    tmp, train, _ = files
    one = tmp / "one.txt"
    one.write_text("a\tgood film\na\tfine day\n")
    r = run("lexicon", one, "-o", tmp / "one.npz", "-q")
    assert r.exit_code == 2 and "the documents hold one class (a)" in r.output
    assert not (tmp / "one.npz").exists()
    build_lexicon([Document("a", "good film", "x", 1)], Hasher(n_bits=10)).save(tmp / "old.npz")
    r = run("train", train, "--lexicon", tmp / "old.npz", "-o", tmp / "m.npz", "-q")
    assert r.exit_code == 2 and "the lexicon counted one class (a)" in r.output


@pytest.mark.parametrize("args, named", [
    (["train", "-", "-", "-o", "{tmp}/m.npz"], "(an input)"),
    (["train", "-", "--test", "-", "-o", "{tmp}/m.npz"], "(an input and a --test file)"),
    (["predict", "-", "-", "-m", "{model}"], "(an input)"),
    (["eval", "-", "-", "-m", "{model}"], "(an input)"),
    (["tune", "-", "-"], "(an input)"),
    (["learn", "-", "--test", "-", "-o", "{tmp}/l.npz"], "(an input and a --test file)"),
    (["train", "-", "--test", "/dev/stdin", "-o", "{tmp}/m.npz"],
     "(an input and a --test file)"),
])
def test_standard_input_named_twice_is_refused(tmp_path, args, named):
    """The first read took it all: the second found it empty ('no documents found'), and
    train - --test - wrote the model before it failed on the empty test set."""
    model = tmp_path / "given.npz"
    rows = [("pos", "good fun"), ("neg", "bad film")] * 10
    assert run("train", write_lines(tmp_path / "t.txt", rows), "-o", model, "-q").exit_code == 0
    argv = [a.format(tmp=tmp_path, model=model) for a in args]
    r = runner.invoke(app, argv, input="pos\tgood fun\nneg\tbad film\n")
    assert r.exit_code == 2, r.output
    assert f"standard input (- or /dev/stdin) is given 2 times {named}: it can be read " \
        "once" in r.output
    assert not (tmp_path / "m.npz").exists() and not (tmp_path / "l.npz").exists()


def test_a_file_read_twice_is_warned_of(tmp_path):
    """An input given twice (under two spellings) trained twice, and a --test file that is
    a training input scored documents the model saw, both without a word (allowed: said)."""
    data = write_lines(tmp_path / "t.txt", [("pos", "good fun"), ("neg", "bad film")] * 10)
    r = run("train", data, tmp_path / "." / "t.txt", "-o", tmp_path / "m.npz", "-q")
    assert r.exit_code == 0
    assert stderr_of(r).count(f"warning: {data} is given twice: its documents train twice") == 1
    r = run("train", data, "--test", data, "-o", tmp_path / "m.npz", "-q")
    assert r.exit_code == 0 and "is also a training input: its accuracy measures the fit" in (
        stderr_of(r))
    other = write_lines(tmp_path / "u.txt", [("pos", "great"), ("neg", "awful")] * 5)
    r = run("train", data, "--test", other, "-o", tmp_path / "m.npz", "-q")
    assert r.exit_code == 0 and "warning" not in stderr_of(r)


def test_tune_refuses_and_lexicon_warns_of_a_file_given_twice(tmp_path):
    """tune put copies of a file given twice on both sides of its splits (a hunt: 240 RT
    reviews 0.714 once, 0.896 twice, without a word): refused. lexicon counted it twice
    without a word: warned, as train is."""
    data = write_lines(tmp_path / "t.txt", [("pos", "good fun"), ("neg", "bad film")] * 10)
    again = tmp_path / "." / "t.txt"
    r = run("tune", data, again, "--n-bits", "12", "--grid", "lambda=default", "-q")
    assert r.exit_code == 2 and f"{data} is given twice: copies of its documents" in r.output
    r = run("lexicon", data, again, "-o", tmp_path / "l.npz", "-q", "--n-bits", "12")
    assert r.exit_code == 0
    assert stderr_of(r).count(f"warning: {data} is given twice: its documents are counted") == 1


def test_lexicon_refuses_a_class_of_weight_zero(tmp_path):
    """A class whose documents all weigh 0 was counted and saved, a file train --lexicon
    could only refuse: refused when counted (all weights 0: said so)."""
    rows = [("pos", "good fun", 0), ("neg", "bad film", 1)] * 10
    csv = tmp_path / "w.csv"
    csv.write_text("label,text,w\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    r = run("lexicon", csv, "--weight-col", "w", "--n-bits", "12", "-o", tmp_path / "l.npz")
    assert r.exit_code == 2 and "class 'pos' has only documents of weight 0" in r.output
    csv.write_text("label,text,w\n" + "".join(f"{a},{b},0\n" for a, b, _ in rows))
    r = run("lexicon", csv, "--weight-col", "w", "--n-bits", "12", "-o", tmp_path / "l.npz")
    assert r.exit_code == 2 and "every document weighs 0" in r.output
    assert not (tmp_path / "l.npz").exists()


def _nbsvm_process(*args, **kwargs):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "nbsvm", *map(str, args)], **kwargs)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_output_to_dev_stdout_appends_to_the_file_the_shell_opened(files, model):
    """`nbsvm predict ... -o /dev/stdout >> log`: the log keeps its lines and gets the
    predictions after them (the output was renamed over the log, losing what it held);
    `-o /dev/stderr 2>> log` for a model the same."""
    tmp, train, test = files
    log = tmp / "log.txt"
    log.write_text("line of an existing log\n")
    with open(log, "a") as out:
        r = _nbsvm_process("predict", "-m", model, test, "-q", "-o", "/dev/stdout", stdout=out)
    assert r.returncode == 0
    lines = log.read_text().splitlines()
    assert lines[0] == "line of an existing log"
    assert lines[1].startswith("source,line,") and len(lines) == 2 + len(TEST)
    with open(log, "a") as out:                     # after it, what the shell writes
        out.write("footer\n")
    assert log.read_text().splitlines()[-1] == "footer"
    err = tmp / "err.bin"
    err.write_bytes(b"old\n")
    with open(err, "ab") as out:
        r = _nbsvm_process("train", train, *TRAIN_OPTS, "-q", "-o", "/dev/fd/2", stderr=out)
    assert r.returncode == 0 and err.read_bytes()[:6] == b"old\nPK"
    assert not list(tmp.glob(".*nbsvm*")) and not list(tmp.glob(".*.nbsvm-tmp*"))


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_standard_input_redirected_from_the_output_is_refused(files, model):
    """`predict - -o in.txt < in.txt` replaced the input with the predictions (the
    /dev/stdin spelling was refused already)."""
    tmp, train, _ = files
    before = train.read_bytes()
    plain = tmp / "documents"                       # a name a model may take
    plain.write_bytes(before)
    for command, read in ((["predict", "-m", model, "-", "-q", "-o", train], train),
                          (["train", "-", *TRAIN_OPTS, "-q", "-o", plain], plain)):
        with open(read, "rb") as stdin:
            r = _nbsvm_process(*command, stdin=stdin, capture_output=True, text=True)
        assert r.returncode == 2 and "standard input redirected from it" in r.stderr
        assert read.read_bytes() == before
    with open(train, "rb") as stdin:                 # another output: fine
        r = _nbsvm_process("predict", "-m", model, "-", "-q", "-o", tmp / "p.csv", stdin=stdin)
    assert r.returncode == 0 and (tmp / "p.csv").read_text().count("\n") == 1 + len(TRAIN)


@pytest.mark.parametrize("command", ["train", "lexicon", "learn", "quantize", "eval"])
def test_an_output_named_as_another_kind_of_file_is_refused(files, model, command):
    """`train data.txt -o test.csv` replaced the user's CSV with a zip, without a word (and
    `eval -o r.parquet` wrote CSV): a model or lexicon output named as data, a table or a
    page is refused before anything is read, naming the suffix to use; the file stays."""
    tmp, train, test = files
    table = tmp / "kept.csv"
    table.write_text("label,text\n")
    args = {"train": ["train", train, *TRAIN_OPTS, "-o", table],
            "lexicon": ["lexicon", train, "-o", table],
            "learn": ["learn", tmp / "x.svm", "-o", table],
            "quantize": ["quantize", model, "-o", table],
            "eval": ["eval", "-m", model, test, "-o", tmp / "r.parquet"]}[command]
    (tmp / "x.svm").write_text("1 1:1\n0 2:1\n")
    r = run(*args)
    assert_clean_error(r, "Name it .csv" if command == "eval" else "Name it .npz")
    assert table.read_text() == "label,text\n"


def test_a_class_folder_named_in_no_utf8_is_a_label_every_output_takes(files, model):
    """A class folder whose name is not UTF-8 (b'bad\\xff'): predict -o and eval -o had
    crashed encoding its lone surrogate; its label is the name as it prints, as training
    already saved it."""
    import os
    tmp, _, _ = files
    root = tmp / "folders"
    for name, texts in ((b"pos", ["a great film", "loved it"]),
                        (b"bad\xff", ["awful film", "hated it"])):
        folder = os.path.join(os.fsencode(root), name)
        os.makedirs(folder)
        for i, text in enumerate(texts):
            with open(os.path.join(folder, b"%d.txt" % i), "w") as f:
                f.write(text)
    for out in ("p.csv", "p.jsonl", "p.parquet"):
        assert_ok(run("predict", "-m", model, root, "-q", "-o", tmp / out))
    import pandas as pd
    assert sorted(set(pd.read_csv(tmp / "p.csv").true_label)) == ["bad\ufffd", "pos"]
    assert_ok(run("eval", "-m", model, root, "-q", "-o", tmp / "r.csv"))
    assert_ok(run("train", root, *TRAIN_OPTS, "-o", tmp / "f.npz"))
    from nbsvm import NBSVMClassifier
    assert NBSVMClassifier.load(tmp / "f.npz").classes_ == ["bad\ufffd", "pos"]


def test_a_codec_that_replaces_nothing_is_refused_as_an_encoding(files, model):
    """--encoding idna passed the check (ASCII-compatible) and then a CSV input ended in a
    traceback from pandas: idna takes no error handler, and invalid bytes are replaced."""
    tmp, _, _ = files
    table = tmp / "t.csv"
    table.write_text("label,text\npos,great film\n")
    assert_clean_error(run("predict", "-m", model, table, "-q", "--encoding", "idna"),
                       "unusable --encoding 'idna'")
    assert_ok(run("predict", "-m", model, table, "-q", "--encoding", "cp1252"))


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_model_or_report_to_dev_stdout_is_the_whole_of_standard_output(files, model):
    """`train -o /dev/stdout > m.npz` had 'saved: /dev/stdout' and the other summary lines
    after the zip (no model), `eval -o /dev/stdout > r.csv` the printed report after the
    CSV: with standard output carrying the file, the command's words go to stderr."""
    import subprocess
    tmp, train, test = files
    for command, out in ((["train", train, *TRAIN_OPTS], tmp / "m_out.npz"),
                         (["eval", "-m", model, test], tmp / "r.csv")):
        with open(out, "wb") as stdout:
            r = _nbsvm_process(*command, "-o", "/dev/stdout", stdout=stdout,
                               stderr=subprocess.PIPE, text=True)
        assert r.returncode == 0, r.stderr
        if command[0] == "train":
            assert "saved: /dev/stdout" in r.stderr
            from nbsvm import NBSVMClassifier
            NBSVMClassifier.load(out)                     # a whole, checksummed model
        else:
            lines = out.read_text().splitlines()
            assert lines[0] == "metric,class,value" and "accuracy:" not in out.read_text()


@pytest.mark.parametrize("args, said", [
    (["--format", "parquet", "-"], "Parquet is not read from standard input"),
    (["--format", "folders", "-"], "a folder of documents is not read from standard input"),
])
def test_standard_input_where_a_file_or_folder_is_needed_is_said(files, model, args, said):
    """`-` where only a file or a folder will do had been '-: no such file'."""
    assert_clean_error(run("predict", "-m", model, *args), said)


def test_a_model_from_standard_input_is_said(files):
    tmp, train, _ = files
    assert_clean_error(run("eval", "-m", "-", train), "is not read from standard input")


def test_bytes_replaced_are_said_invalid_in_the_encoding_read(files, model):
    """Under --encoding cp1252 an undefined byte (0x81) was reported as 'invalid UTF-8'."""
    tmp, _, _ = files
    path = tmp / "cp.txt"
    path.write_bytes(b"good \x81 film\nbad film\n")
    r = run("predict", "-m", model, path, "-q", "--encoding", "cp1252")
    assert_ok(r)
    assert "replaced 1 invalid cp1252 byte in 1 document" in r.stderr
    path.write_bytes(b"good \xff film\nbad film\n")
    r = run("predict", "-m", model, path, "-q", "--encoding", "utf8")
    assert_ok(r)
    assert "replaced 1 invalid UTF-8 byte in 1 document" in r.stderr


def test_a_symbolic_link_that_loops_or_dangles_is_said_as_such(files, model):
    """A loop of symbolic links was 'no such file or folder', which the user could see
    was there."""
    tmp, _, _ = files
    (tmp / "loop_a").symlink_to(tmp / "loop_b")
    (tmp / "loop_b").symlink_to(tmp / "loop_a")
    (tmp / "dangling").symlink_to(tmp / "gone.txt")
    assert_clean_error(run("predict", "-m", model, tmp / "loop_a", "-q"),
                       "loop_a: a loop of symbolic links")
    assert_clean_error(run("predict", "-m", model, tmp / "dangling", "-q"),
                       f"dangling: a symbolic link to '{tmp / 'gone.txt'}', which does not exist")
    assert_clean_error(run("predict", "-m", model, tmp / "nothere.txt", "-q"),
                       "nothere.txt: no such file or folder")


def test_a_label_as_long_as_a_document_is_cut_in_notes_and_reports(tmp_path):
    """A hunt: a 10 MB label (a text pasted into the label column) kept train printing
    its calibration note for minutes (rich wrapping the whole name, about quadratic in
    its length), and eval printed an unseen one whole, twice."""
    long = "L" * 200_000
    rows = [f"{'neg' if i % 2 else 'pos'}\tsome short text here number {i}" for i in range(20)]
    train = tmp_path / "t.txt"
    train.write_text("\n".join(rows + [f"{long}\tthe text of the long label {j}" for j in range(2)])
                     + "\n")
    r = run("train", train, "-o", tmp_path / "m.npz", "--n-bits", "12")
    assert r.exit_code == 0, r.output[-2000:]
    assert len(r.output) < 20_000 and "L" * 81 not in r.output and "LLLL" in r.output
    small = tmp_path / "s.txt"
    small.write_text("\n".join(rows) + "\n")
    assert run("train", small, "-o", tmp_path / "s.npz", "--n-bits", "12", "-q").exit_code == 0
    test = tmp_path / "e.txt"
    test.write_text("\n".join(rows + [f"{long}\ttext"]) + "\n")
    r = run("eval", test, "-m", tmp_path / "s.npz")
    assert r.exit_code == 0 and len(r.output) < 20_000 and "L" * 81 not in r.output, \
        r.output[-2000:]


def test_max_memory_bounds_the_longest_line_read(tmp_path):
    """A memory hunt: --max-memory 600M let a 300 MB line be read whole (1.4 GB peak) before
    the document was refused; the lines read are bounded by it, as by the memory
    available: (300 MB - 240 MB) / 20 = 3 MB here, a 4 MB line refused as it is read."""
    from nbsvm import memory

    data = tmp_path / "long.txt"
    data.write_text("pos\t" + "lorem ipsum " * 350_000 + "\n" + "neg\tshort text\n" * 4)
    r = run("train", data, "-o", tmp_path / "m.npz", "--max-memory", "300M", "-q")
    assert r.exit_code == 2 and not (tmp_path / "m.npz").exists(), r.output
    assert "long.txt:1: a line of more than 3.0 MB, a twentieth of --max-memory less the " \
        "240.0 MB a run holds" in r.output
    assert memory.reading_budget() is None  # the next command in this process: unbounded
    r = run("train", data, "-o", tmp_path / "m.npz", "-q", "--n-bits", "12")
    assert r.exit_code == 0, r.output
