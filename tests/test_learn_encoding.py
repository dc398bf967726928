"""``nbsvm learn --encoding`` (issue 18, item 6): feature names in another codec read as the
same features as their UTF-8 spelling."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm.evaluation.sparse import load_learner
from testhelpers import run_cli

NBSVM = Path(sys.executable).parent / "nbsvm"
LINES = ["1 café:1 good:2 naïve:1", "-1 bad:1 café:1 dull:1", "1 good:1 fine:1",
         "-1 bad:2 naïve:1"] * 10


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_latin1_feature_names_are_their_utf8_selves(tmp_path):
    utf8, latin1 = tmp_path / "u.txt", tmp_path / "l.txt"
    utf8.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    latin1.write_text("\n".join(LINES) + "\n", encoding="latin-1")
    models = []
    for path, extra in ((utf8, []), (latin1, ["--encoding", "latin-1"])):
        out = tmp_path / f"{path.stem}.npz"
        run = subprocess.run([str(NBSVM), "learn", str(path), "--format", "named", "-o", str(out),
                              "--epochs", "3", "--n-bits", "12", *extra],
                             capture_output=True, text=True, check=True)
        assert "replaced" not in run.stderr
        models.append(load_learner(out))
    assert np.array_equal(models[0].coef_, models[1].coef_)
    # without --encoding the latin-1 bytes are invalid UTF-8: replaced and said so
    run = subprocess.run([str(NBSVM), "learn", str(latin1), "--format", "named", "-o",
                          str(tmp_path / "x.npz"), "--n-bits", "12"], capture_output=True,
                         text=True, check=True)
    assert "replaced" in run.stderr
    # eval and the refusals in this process (no interpreter start each)
    rep = run_cli("eval", "-m", tmp_path / "l.npz", latin1, "--format", "named", "--encoding",
                  "latin-1", "--json")
    assert rep.returncode == 0 and '"accuracy": 1.0' in rep.stdout, rep.stderr
    # the model keeps its encoding: eval or predict in another one was read (a warning
    # aside) into other columns: 48% on a model that scores 100%; now refused, named
    for cmd in ("eval", "predict"):
        r = run_cli(cmd, "-m", tmp_path / "l.npz", latin1, "--format", "named", "-o",
                    tmp_path / f"{cmd}.out")
        assert r.returncode == 2 and "read its training inputs as iso8859-1: read these " \
            "with --encoding iso8859-1 (given: utf-8)" in r.stderr, r.stderr
    assert load_learner(tmp_path / "l.npz").encoding_ == "iso8859-1"
    assert load_learner(tmp_path / "u.npz").encoding_ == "utf-8"


@pytest.mark.slow  # make test-slow: learn --encoding is checked on latin-1 names elsewhere
def test_models_without_a_kept_encoding_and_svmlight_models_read_in_any(tmp_path):
    """A model written before encodings were kept was refused in its own encoding (taken
    for UTF-8); svmlight's integer indices do not depend on it; regression targets 1 and
    1.0 are one value in eval as in learn."""
    latin1 = tmp_path / "l.txt"
    latin1.write_text("\n".join(LINES) + "\n", encoding="latin-1")
    model = tmp_path / "l.npz"
    subprocess.run([str(NBSVM), "learn", str(latin1), "--format", "named", "-o", str(model),
                    "--n-bits", "12", "--encoding", "latin-1", "-q"], check=True)
    old = load_learner(model)
    del old.encoding_
    old.save(tmp_path / "old.npz")
    svm = tmp_path / "s.svm"
    svm.write_text("1 1:1 2:0.5\n1.0 1:1 3:0.5\n2 2:1 3:1\n0.5 1:0.2\n")
    subprocess.run([str(NBSVM), "learn", str(svm), "-a", "sgd-regressor", "-o",
                    str(tmp_path / "r.npz"), "-q"], check=True)
    for args in ([str(latin1), "-m", str(tmp_path / "old.npz"), "--format", "named",
                  "--encoding", "latin-1"],
                 [str(svm), "-m", str(tmp_path / "r.npz"), "--encoding", "latin-1"]):
        r = subprocess.run([str(NBSVM), "eval", *args, "-q"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
