"""pipelines/imdb_table.py on a tiny aclImdb-like folder: options, data checks, the rows of
the table and the published figures beside them (never the full 25k/25k run)."""
import sys

import pandas as pd
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "pipelines"))
import imdb_table  # noqa: E402
from imdb_table import BadInput  # noqa: E402

POSITIVE = ["a great film, wonderful acting", "great fun and a wonderful story",
            "wonderful, great cast", "a moving and great film", "great story, wonderful fun"]
NEGATIVE = ["an awful film, dull acting", "awful and dull story", "dull, awful cast",
            "a boring and awful film", "awful story, dull and boring"]
COLUMNS = ["method", "ngrams", "accuracy", "seconds", "epochs", "published",
           "published_accuracy", "difference"]


def tiny_aclimdb(root):
    """``root/{train,test}/{pos,neg}/<i>_<rating>.txt`` with a few reviews per class."""
    for split in ("train", "test"):
        for label, texts in (("pos", POSITIVE), ("neg", NEGATIVE)):
            folder = root / split / label
            folder.mkdir(parents=True)
            for i, text in enumerate(texts):
                (folder / f"{i}_{8 if label == 'pos' else 2}.txt").write_text(text)
    return root


def tiny_args(tmp_path, *extra):
    data = tiny_aclimdb(tmp_path / "aclImdb")
    return imdb_table.parse_args(["--data", str(data), "--n-bits", "12", "--epochs", "2",
                                  "--out", str(tmp_path / "results"), *extra])


def test_published_figures_are_the_ones_the_issue_names():
    published = imdb_table.published_frame()
    figures = {(m, n, round(a, 2)) for m, n, _, a in published.itertuples(index=False)}
    assert figures == {("mnb", 2, 86.59), ("sgd", 2, 89.16), ("nbsvm", 1, 88.29),
                       ("nbsvm", 2, 91.22), ("nbsvm", 3, 91.87), ("nbsvm", 3, 91.88)}
    sources = " ".join(published["published"])
    assert "Wang & Manning 2012" in sources and "Mesnil et al. 2015" in sources
    assert "NBSVM-XL" in sources


def test_options_are_parsed_and_checked(capsys):
    args = imdb_table.parse_args(["--ngrams", "3,1,3", "--methods", "mnb,nbsvm", "--seed", "7"])
    assert args.ngrams == [3, 1] and args.methods == ["mnb", "nbsvm"] and args.seed == 7
    defaults = imdb_table.parse_args([])
    assert defaults.ngrams == [1, 2, 3] and defaults.methods == ["nbsvm", "sgd", "mnb"]
    assert (defaults.n_bits, defaults.epochs, defaults.seed) == (24, 10, 0)
    for bad, message in ((["--ngrams", "4"], "unknown value '4'; allowed: 1, 2, 3"),
                         (["--ngrams", "two"], "unknown value 'two'"),
                         (["--methods", "nbsvm,svm"], "unknown value 'svm'; allowed: nbsvm, "
                                                      "sgd, mnb"),
                         (["--epochs", "0"], "argument --epochs: expected at least 1, got 0")):
        with pytest.raises(SystemExit) as exc:
            imdb_table.parse_args(bad)
        assert exc.value.code == 2 and message in capsys.readouterr().err


def test_each_method_is_the_package_defaults_with_its_changes():
    nbsvm = imdb_table.classifier("nbsvm", 2, n_bits=12, seed=3, epochs=10)
    sgd = imdb_table.classifier("sgd", 2, n_bits=12, seed=3, epochs=10)
    mnb = imdb_table.classifier("mnb", 3, n_bits=12, seed=3, epochs=10)
    assert (nbsvm.weighting, nbsvm.beta, nbsvm.epochs, nbsvm.seed) == ("nb", 1.0, 10, 3)
    # left unset: the two-class defaults (IMDB has two classes)
    assert (nbsvm.optimizer, nbsvm.loss, nbsvm.eta0, nbsvm.lam, nbsvm.min_df) == \
        (None, None, None, None, None)
    nbsvm.classes_ = ["neg", "pos"]
    assert tuple(nbsvm.setting(p) for p in ("optimizer", "loss", "eta0", "norm", "lam")) == \
        ("adagrad", "log", 0.02, "none", 1e-4)
    del nbsvm.classes_
    assert dict(sgd.get_params(), weighting="nb") == nbsvm.get_params()
    assert (mnb.beta, mnb.interpolate, mnb.epochs, mnb.ngrams) == (0.0, "scores", 1, 3)


def test_the_data_folder_must_hold_train_and_test_splits(tmp_path):
    data = tiny_aclimdb(tmp_path / "aclImdb")
    assert imdb_table.split_folders(data) == (data / "train", data / "test")
    with pytest.raises(BadInput, match="nowhere/train: expected an aclImdb split folder.*"
                                       "make data-imdb"):
        imdb_table.split_folders(tmp_path / "nowhere")
    for folder in (data / "test" / "neg").iterdir():
        folder.unlink()
    (data / "test" / "neg").rmdir()                     # one label left: not a split
    with pytest.raises(BadInput, match="test: expected an aclImdb split folder"):
        imdb_table.split_folders(data)


def test_the_table_has_a_row_per_method_and_order_beside_the_published(tmp_path, capsys):
    table = imdb_table.run_table(tiny_args(tmp_path, "--ngrams", "1,2"))
    out = capsys.readouterr().out
    assert list(table.columns) == COLUMNS
    runs = table[["method", "ngrams"]].drop_duplicates()
    assert [tuple(r) for r in runs.itertuples(index=False)] == \
        [("nbsvm", 1), ("nbsvm", 2), ("sgd", 1), ("sgd", 2), ("mnb", 1), ("mnb", 2)]
    published = table.set_index(["method", "ngrams"])["published_accuracy"]
    assert published[("nbsvm", 1)] == 88.29 and published[("nbsvm", 2)] == 91.22
    assert published[("sgd", 2)] == 89.16 and published[("mnb", 2)] == 86.59
    assert pd.isna(published[("sgd", 1)]) and pd.isna(published[("mnb", 1)])
    assert table["accuracy"].between(0, 100).all() and (table["seconds"] > 0).all()
    assert table.set_index(["method", "ngrams"])["epochs"].to_dict() == \
        {("nbsvm", 1): 2, ("nbsvm", 2): 2, ("sgd", 1): 2, ("sgd", 2): 2, ("mnb", 1): 1,
         ("mnb", 2): 1}
    matched = table.dropna(subset=["published_accuracy"])
    assert (matched["difference"] == (matched["accuracy"]
                                      - matched["published_accuracy"]).round(2)).all()
    # a progress line at the end of every epoch: 2 for nbsvm and sgd, 1 for mnb, per order
    assert out.count("epoch  1/2") == 4 and out.count("epoch  2/2") == 4
    assert out.count("epoch  1/1") == 2 and "10 docs  loss" in out


def test_trigram_nbsvm_stands_beside_both_trigram_figures(tmp_path, capsys):
    table = imdb_table.run_table(tiny_args(tmp_path, "--ngrams", "3", "--methods", "nbsvm"))
    assert table["published_accuracy"].tolist() == [91.87, 91.88]
    assert table["accuracy"].nunique() == 1                  # one run, two published figures


def test_main_writes_the_results_files(tmp_path, capsys):
    data = tiny_aclimdb(tmp_path / "aclImdb")
    out = tmp_path / "results"
    imdb_table.main(["--data", str(data), "--ngrams", "2", "--methods", "mnb", "--n-bits", "12",
                     "--out", str(out)])
    printed = capsys.readouterr().out
    assert printed.startswith("== imdb_table: configuration") and "reproduce:" in printed
    assert "| mnb | 2 |" in printed and "Wang & Manning 2012, MNB-bi | 86.59" in printed
    frame = pd.read_csv(out / "imdb_table.csv")
    assert list(frame.columns) == COLUMNS and frame["published_accuracy"].tolist() == [86.59]
    md = (out / "imdb_table.md").read_text()
    assert "## Published figures" in md and "91.88" in md and "nbsvm-xl-sgd-for-nlp" in md


def test_bad_data_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit, match="error: .*missing/train: expected an aclImdb split"):
        imdb_table.main(["--data", str(tmp_path / "missing"), "--out", str(tmp_path)])
