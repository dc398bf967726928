"""``nbsvm train --init`` continues a model with its own settings (issue 33, item 12): an
option on the command line that asks for another value is refused naming both values,
before anything is read; options that agree with the model, or are left out, train."""
import subprocess
import sys
from pathlib import Path

import pytest
from testhelpers import run_cli

NBSVM = Path(sys.executable).parent / "nbsvm"
REVIEWS = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"


def run(*args):
    return subprocess.run([str(NBSVM), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("init")
    r = run("train", REVIEWS, "--n-bits", "16", "--min-df", "1", "--keep-counts", "-q",
            "-o", d / "m.npz")
    assert r.returncode == 0, r.stderr
    return d / "m.npz"


@pytest.mark.parametrize("option, asked, has", [
    (["--ngrams", "2"], "ngrams=2", "3"), (["--n-bits", "18"], "n_bits=18", "16"),
    (["--char-ngrams", "3"], "char_ngrams=3", "4"),     # short reviews: 4 from the data (["--keep-case"], "lowercase=False", "True"),
    (["--hash-seed", "7"], "hash_seed=7", "0"), (["--lambda", "0.1"], "lam=0.1", "0.0001"),
    (["--epochs", "3"], "epochs=3", "10")])
def test_a_conflicting_setting_is_refused(model, tmp_path, option, asked, has):
    # in this process (the refusal comes before any training; the model is the installed
    # command's, and test_settings_that_agree_or_are_left_out_train runs it again)
    out = tmp_path / "next.npz"
    r = run_cli("train", REVIEWS, "--init", model, *option, "-q", "-o", out)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"--init continues {model} with its own settings: {option[0]} asks for {asked}, " \
           f"the model has {has}" in r.stderr.replace("\n", " ")
    assert not out.exists()


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_settings_that_agree_or_are_left_out_train(model, tmp_path):
    for extra in ([], ["--ngrams", "3", "--n-bits", "16", "--min-df", "1", "--loss", "log"]):
        out = tmp_path / "next.npz"
        r = run("train", REVIEWS, "--init", model, *extra, "-q", "-o", out)
        assert r.returncode == 0, r.stderr
        assert out.exists()
        out.unlink()


def test_keep_counts_with_a_backend_learner_or_a_calibration_is_refused(tmp_path, monkeypatch):
    """keep_counts saved a larger file that nothing could continue: --init and partial_fit
    refused it, or (partial_fit of a backend learner) broke the model in memory and saved
    a file that would not load; --init of a multi-class one raised AttributeError eta0_."""
    from nbsvm import NBSVMClassifier, NBSVMError
    from nbsvm.models import modes

    from typer.testing import CliRunner
    from nbsvm.cli import app
    here = lambda *args: CliRunner().invoke(app, [str(a) for a in args])  # noqa: E731
    for extra in (["--learner", "pa"], ["--calibrate", "sigmoid"]):
        r = here("train", REVIEWS, "--keep-counts", *extra, "-q", "-o", tmp_path / "x.npz")
        assert r.exit_code == 2 and "keep_counts" in r.output
    # a file of an earlier version that allowed it: refused cleanly, the model unchanged
    rows = [line.rstrip("\n").split("\t", 1) for line in open(REVIEWS)]
    X, y = [t for _, t in rows], [c for c, _ in rows]
    topics = [["a", "b", "c"][i % 3] for i in range(len(X))]
    monkeypatch.setattr(modes, "check_modes", lambda model: None)
    for labels in (y, topics):
        old = NBSVMClassifier(learner="pa", keep_counts=True, n_bits=14).fit(X, labels)
        before = old.decision_function(X)
        with pytest.raises(NBSVMError, match="keeps its own state"):
            old.partial_fit(X, labels)
        assert (old.decision_function(X) == before).all()
        old.save(tmp_path / "old.npz")
        r = here("train", REVIEWS, "--init", tmp_path / "old.npz", "-q", "-o", tmp_path / "c.npz")
        assert r.exit_code == 2 and "learner 'pa' keeps its own state" in r.output, r.output
