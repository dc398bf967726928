"""`make robustness` (pipelines/robustness.py, pipelines/_shapes.py): the text
transformations, every shape's builder (each shape is what it claims: one-line subjects, no
white space, 1:9 classes, the same folds for Subj and its Unicode copy...), the options,
and one shape end to end with --quick (tiny sizes). No full runs."""
import collections
import doctest
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from nbsvm import datasets

sys.path.insert(0, str(REPO / "pipelines"))
import _shape_text as T  # noqa: E402
import _shape_corpora as C  # noqa: E402
import _shapes as S  # noqa: E402
import robustness  # noqa: E402
import robustness_systems  # noqa: E402


def need(*names):
    missing = [n for n in names if not datasets.available(n)]
    if missing:
        pytest.skip(f"corpora not in the shared datasets: {missing}")


def check_folds(folds, n_folds):
    assert len(folds) == n_folds
    for train_x, train_y, test_x, test_y in folds:
        assert len(train_x) == len(train_y) > 0 and len(test_x) == len(test_y) > 0
        assert all(isinstance(t, str) for t in train_x + test_x)


# ---- transformations ------------------------------------------------------------------------

def test_doctests_of_the_shapes_module():
    failed, tried = doctest.testmod(T)
    assert tried >= 6 and failed == 0


def test_first_sentence_and_subject_line_are_one_line():
    assert T.first_sentence("Works great.  I love it!\nMore.") == "Works great."
    assert T.first_sentence("no stop " * 40) == " ".join(["no", "stop"] * 25)   # 50 words
    assert T.first_sentence("  \n ") == ""
    msg = "From: x\nSubject: Re: WTB:\n\tcheap  modem\nLines: 3\n\nSubject: not this"
    assert T.subject_line(msg) == "Re: WTB: cheap modem"
    assert T.subject_line("From: x\n\nSubject: in the body") == ""


def test_without_spaces_removes_every_white_space_character():
    text = "A fine\tfilm.<br /><br />Really\u00a0good\u3000one\r\n"
    out = T.without_spaces(text)
    assert out == "Afinefilm.Reallygoodone" and not any(c.isspace() for c in out)


def test_unicode_heavy_is_deterministic_and_keeps_the_words_apart():
    text = "the acting is superb and the story is simple ."
    a, b = T.unicode_heavy(text, 0), T.unicode_heavy(text, 0)
    assert a == b and a != text and not a.isascii()
    assert T.unicode_heavy(text, 1) != a                  # the seed changes the spelling
    core = [w for w in a.split() if w not in T.EMOJI]    # words stay words, emoji added
    assert len(core) == len(text.split())
    scripts = {c for c in a if not c.isascii()}
    assert any("\u0400" <= c <= "\u04ff" for c in scripts)           # Cyrillic
    assert any("\u0370" <= c <= "\u03ff" for c in scripts)           # Greek


# ---- the shapes at full size ------------------------------------------------------------------

@pytest.mark.slow  # make test-slow: a shape built from real data; the pipelines' quick runs are other tests
def test_subject_shape_is_one_line_per_message_twenty_groups():
    need("20newsgroups")
    [(tr, ytr, te, yte)] = S.ng_subjects(0, False)
    assert (len(tr), len(te)) == (11314, 7532) and len(set(ytr)) == 20
    assert all("\n" not in t and len(t.split()) <= 40 for t in tr + te)
    assert all(tr) and all(te)                              # every message has one
    messages = C.corpus("20newsgroups", "train")[0]
    assert sorted(tr) == sorted(T.subject_line(m) for m in messages)
    [(full_tr, _, _, _)] = S.ng_full(0, False)
    assert sorted(full_tr) == sorted(messages)
    assert all(m.split("\n\n")[0].count("\nSubject: ") + m.startswith("Subject: ")
               for m in full_tr)                                      # headers kept


@pytest.mark.slow  # make test-slow: a shape built from real data; the pipelines' quick runs are other tests
def test_blitzer_domain_shape_is_balanced_first_sentences():
    need("blitzer")
    folds = S.blitzer_domain(0, False)
    check_folds(folds, 5)
    for _, _, te, yte in folds:
        assert collections.Counter(yte) == {d: 200 for d in ("books", "dvd", "electronics",
                                                             "kitchen")}
        assert all("\n" not in t and len(t.split()) <= T.FIRST_SENTENCE_WORDS for t in te)
    assert sum(len(f[2]) for f in folds) == 4000


@pytest.mark.slow  # make test-slow: a shape built from real data; the pipelines' quick runs are other tests
def test_subj_and_its_unicode_copy_share_the_folds():
    need("subj")
    plain, heavy = S.subj(0, False), S.subj_unicode(0, False)
    check_folds(plain, 5)
    check_folds(heavy, 5)
    for (_, _, te, yte), (_, _, te2, yte2) in zip(plain, heavy):
        assert yte == yte2 and [T.unicode_heavy(t, 0) for t in te] == te2
    share = np.mean([not t.isascii() for t in heavy[0][2]])
    assert share > 0.95 and sum(len(f[2]) for f in plain) == 10000


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_imdb_shapes_sizes_classes_and_no_white_space():
    need("imdb")
    [(tr, ytr, te, yte)] = S.imdb_imbalanced(0, False)
    assert collections.Counter(ytr) == collections.Counter(yte) == {"neg": 4500, "pos": 500}
    [(tr, ytr, te, yte)] = S.imdb_no_spaces(0, False)
    assert len(tr) == len(te) == 3000 and collections.Counter(ytr) == {"neg": 1500, "pos": 1500}
    assert not any(c.isspace() for t in tr + te for c in t)
    for build, n in ((S.imdb_200, 200), (S.imdb_1000, 1000)):
        draws = build(0, False)
        check_folds(draws, 3)
        assert all(collections.Counter(y) == {"neg": n // 2, "pos": n // 2}
                   for _, y, _, _ in draws)
        assert all(d[2] == draws[0][2] and len(d[2]) == 5000 for d in draws)  # one test set
        assert len({tuple(d[0]) for d in draws}) == 3                         # three draws
    [(tr, ytr, te, yte)] = S.imdb(0, False)
    assert len(tr) == len(te) == 10000 and len(set(tr)) > 9950     # IMDB repeats a few
    assert set(tr) <= set(C.corpus("imdb", "train")[0])


def test_sentence_shapes_and_rt2k_folds():
    need("mpqa", "rt_polarity_2k")
    folds = S.mpqa(0, False)
    check_folds(folds, 5)
    assert sum(len(f[2]) for f in folds) == 10603
    rt = S.rt_2k(0, False)
    check_folds(rt, 5)
    assert all(len(te) == 400 and collections.Counter(y) == {"neg": 200, "pos": 200}
               for _, _, te, y in rt)


@pytest.mark.slow  # make test-slow: builds every shape of every corpus once more
def test_training_parts_are_shuffled():
    """The archives group documents by class; a learner that reads in order (fastText)
    must not see one class after the other."""
    need("20newsgroups", "blitzer", "subj", "mpqa", "imdb", "rt_polarity_2k")
    for name, shape in S.SHAPES.items():
        for _, y, _, _ in shape.build(0, True):
            changes = sum(a != b for a, b in zip(y, y[1:]))
            assert changes > len(y) / 10, name


def test_builders_are_seeded():
    need("mpqa")
    a, b, c = S.mpqa(0, True), S.mpqa(0, True), S.mpqa(1, True)
    assert a == b and a != c


# ---- options and one shape end to end ---------------------------------------------------------

def test_options():
    args = robustness.parse_args([])
    assert args.shapes == list(S.SHAPES) and args.seed == 0 and args.budget == 60.0
    assert robustness.parse_args(["--quick"]).budget == robustness.QUICK_BUDGET
    assert robustness.parse_args(["--shapes", "imdb,subj,imdb"]).shapes == ["imdb", "subj"]
    for bad in (["--shapes", "imdb,chinese"], ["--budget", "0"]):
        with pytest.raises(SystemExit):
            robustness.parse_args(bad)


def test_log_loss_and_scores():
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [1.0, 0.0]])
    loss = robustness_systems.log_loss(["a", "b", "b"], proba, ["a", "b"])
    assert loss == pytest.approx(-(np.log(0.9) + np.log(0.8) + np.log(1e-15)) / 3)
    assert np.isnan(robustness_systems.log_loss(["a"], None, ["a", "b"]))
    s = robustness_systems.scores(["a", "b", "b"], ["a", "b", "a"], proba, ["a", "b"])
    assert s["accuracy"] == pytest.approx(200 / 3) and 0 < s["macro_f1"] < 100


@pytest.mark.slow  # make test-slow: the shapes are built and checked one by one elsewhere
def test_one_shape_end_to_end_quick(tmp_path, capsys):
    need("mpqa")
    pytest.importorskip("sklearn")
    pytest.importorskip("fasttext")
    frame, checks = robustness.main(["--quick", "--shapes", "mpqa", "--budget", "1",
                                     "--seed", "3", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    head = out.split("== planned work")[0]
    assert "git_head: " in head and "git_status_short_lines: " in head
    assert "reproduce: .venv/bin/python pipelines/robustness.py --quick --shapes mpqa" in head
    assert "Chinese: skipped" in out
    assert list(frame.columns) == robustness_systems.COLUMNS
    assert frame.system.tolist() == ["nbsvm defaults", "nbsvm auto", robustness_systems.BASELINE_NAME,
                                     "fastText (defaults, wordNgrams 2)",
                                     "fastText (make bench's settings)"]
    assert (frame.folds == 2).all() and (frame.classes == 2).all()
    assert frame.accuracy.between(50, 100).all() and (frame.seconds > 0).all()
    assert np.isfinite(frame[frame.system != "nbsvm auto"].log_loss).all()
    assert list(checks.columns) == ["shape", "kind", "defaults >= baseline - 0.5",
                                    "auto >= baseline and >= defaults",
                                    "defaults log loss <= calibrated baseline + 0.1", "all"]
    assert checks.iloc[0]["all"] in ("pass", "FAIL")
    saved = pd.read_csv(tmp_path / "robustness.csv")
    assert list(saved.columns) == robustness_systems.COLUMNS and len(saved) == 5
    md = (tmp_path / "robustness.md").read_text()
    assert "## Checks" in md and "## mpqa (short binary)" in md and "± " in md
    assert "No Chinese shape" in md


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_sweep_pipeline_end_to_end_quick(tmp_path, capsys):
    """`python pipelines/sweep.py --quick` (the evidence for alpha's and lambda's defaults):
    every value's row per shape, the reference always measured, other settings passed on,
    the table of differences written."""
    need("blitzer", "subj")
    import sweep

    args = sweep.parse_args(["--values", "0.5", "--reference", "1"])
    assert (args.param, args.values, args.reference) == ("alpha", [1.0, 0.5], 1.0)
    assert sweep.parse_args(["--param", "learner", "--values", "None,dcd"]).values == [
        None, "dcd"]
    for bad in (["--shapes", "chinese"], ["--param", "beta"], ["--set", "loss"],
                ["--set", "seed=1"], ["--set", "calibrate=sigmoid"], ["--set", "alpha=1"]):
        with pytest.raises(SystemExit):
            sweep.parse_args(bad)
    args = sweep.parse_args(["--param", "lam", "--values", "None,1e-4,0.0001,1e-5",
                             "--set", "early_stopping=True", "--set", "loss=softmax"])
    assert args.values == [None, 1e-4, 1e-5] and args.reference is None
    assert args.set == {"early_stopping": True, "loss": "softmax"}
    sweep.main(["--shapes", "blitzer-domain,subj", "--param", "lam", "--values", "1e-4,1e-5",
                "--set", "loss=softmax", "--set", "epochs=2", "--quick", "--name", "s",
                "--out", str(tmp_path)])
    frame = pd.read_csv(tmp_path / "s.csv")
    assert sorted(zip(frame["shape"], frame.lam)) == [
        ("blitzer-domain", 1e-5), ("blitzer-domain", 1e-4), ("subj", 1e-5), ("subj", 1e-4)]
    assert (frame[frame.lam == 1e-4]["vs_lam_0.0001"] == 0).all()
    assert frame.classes.tolist() == [4, 4, 2, 2]
    md = (tmp_path / "s.md").read_text()
    assert "Minus lam 0.0001, by shape" in md and "loss='softmax', epochs=2" in md
    assert "python pipelines/sweep.py" in capsys.readouterr().out   # the command first


def test_tune_shapes_compares_the_choice_with_the_defaults_quick(tmp_path):
    """pipelines/tune_shapes.py (results/tune_shapes.md), tiny folds: the row of each shape
    holds both test accuracies and their difference; a choice of the defaults is their
    accuracy."""
    need("mpqa")
    import tune_shapes

    table = tune_shapes.main(["--quick", "--shapes", "mpqa", "--seed", "1", "--out", str(tmp_path)])
    row = table.iloc[0]
    assert row["shape"] == "mpqa" and 50 <= row["defaults %"] <= 100
    assert row["difference"] == pytest.approx(row["tune's choice %"] - row["defaults %"], abs=0.011)
    if row["why"] == "the defaults":
        assert row["difference"] == 0
    assert "Largest loss against the defaults" in (tmp_path / "tune_shapes.md").read_text()


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_learn_defaults_runs_the_real_cli_beside_scikit_learn_quick(tmp_path):
    """pipelines/learn_defaults.py (results/learn_defaults.md), iris only: every variant's
    row runs `nbsvm learn`, the reference's difference is 0 and the other's is its accuracy
    minus the reference's; scikit-learn's rows are on the same files."""
    need("iris")
    import learn_defaults

    frame = learn_defaults.main(["--shapes", "iris", "--algorithms", "sgd", "--out", str(tmp_path)])
    learned = frame[frame["variant"] != ""]
    assert len(learned) == 4 and set(learned["variant"]) == {"--eta0 0.1", "--eta0 auto"}
    for loss in ("hinge", "log"):
        rows = learned[learned["loss"] == loss].set_index("variant")
        assert rows.loc["--eta0 0.1", "vs_reference"] == 0
        assert rows.loc["--eta0 auto", "vs_reference"] == pytest.approx(
            rows.loc["--eta0 auto", "accuracy"] - rows.loc["--eta0 0.1", "accuracy"], abs=0.011)
    assert frame["accuracy"].between(0, 100).all()
    svc = frame[frame["algorithm"] == "scikit-learn LinearSVC"]["accuracy"].item()
    assert svc >= 80                                       # iris is nearly separable
    assert "`--eta0 auto` minus `--eta0 0.1`" in (tmp_path / "learn_defaults.md").read_text()
