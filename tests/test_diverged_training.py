"""Training whose steps blow up (``--eta0 1e30``) stops with an error at the first epoch
whose loss is not finite, and nothing is written: before, ``nbsvm train`` saved the NaN
weights over ``-o`` with exit 0, and every later command refused the file as corrupted."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError

NBSVM = Path(sys.executable).parent / "nbsvm"
REVIEWS = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"


def _data():
    lines = REVIEWS.read_text(encoding="utf-8").splitlines()
    return [l.split("\t", 1)[1] for l in lines], [l.split("\t", 1)[0] for l in lines]


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_the_cli_keeps_the_good_model_when_training_diverges(tmp_path):
    model = tmp_path / "prod.npz"
    common = [str(NBSVM), "train", str(REVIEWS), "--n-bits", "16", "--min-df", "1", "-o", str(model), "-q"]
    subprocess.run(common, check=True, capture_output=True)
    good = model.read_bytes()
    out = subprocess.run(common + ["--eta0", "1e30"], capture_output=True, text=True)
    assert out.returncode != 0, out.stderr
    assert "training diverged in epoch 1" in out.stderr and "--eta0" in out.stderr
    assert model.read_bytes() == good


@pytest.mark.parametrize("kw", [dict(eta0=1e30), dict(optimizer="sgd", loss="hinge", eta0=3e38, lam=0.0)])
def test_fit_raises_at_the_diverged_epoch(kw):
    X, y = _data()
    with pytest.raises(NBSVMError, match="training diverged in epoch 1"):
        NBSVMClassifier(n_bits=16, min_df=1, **kw).fit(X, y)
    NBSVMClassifier(n_bits=16, min_df=1).fit(X, y)    # the same data at the default eta0


@pytest.mark.parametrize("kw, said", [
    (dict(alpha=1e308), "--alpha 1e+308 is far above 1"),
    (dict(class_weight={"pos": 1e300}), "--class-weight pos=1e+300 scales the steps"),
])
def test_a_divergence_names_the_extreme_setting_it_comes_from(kw, said):
    """--alpha 1e308 and a class weight of 1e300 diverged with 'Lower --eta0 or raise
    --lambda' alone (a helper's hunt): the setting far outside its range is named too."""
    X, y = _data()
    with pytest.raises(NBSVMError, match="training diverged") as e:
        NBSVMClassifier(n_bits=16, min_df=1, **kw).fit(X, y)
    assert said in str(e.value)


def test_save_refuses_weights_that_are_not_finite(tmp_path):
    X, y = _data()
    model = NBSVMClassifier(n_bits=16, min_df=1).fit(X, y)
    path = tmp_path / "m.npz"
    model.save(path)
    good = path.read_bytes()
    model.linear_.S_[0, 5, 1] = np.inf                 # e.g. a partial_fit step that blew up
    with pytest.raises(NBSVMError, match="not finite .* nothing was saved"):
        model.save(path)
    assert path.read_bytes() == good



def test_the_online_learners_refuse_a_fit_whose_steps_blew_up():
    """SGDClassifier, SGDRegressor, OGD and DualCD returned NaN weights from fit (and
    partial_fit) without a word (a hunt: predict then gave one class, 50.5%); nbsvm learn
    refused the same data. Now fit and partial_fit raise Diverged, naming what helps."""
    from nbsvm.errors import Diverged
    from nbsvm.learners import DualCD, OGDRegressor, SGDClassifier, SGDRegressor
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1000, size=(200, 3))
    y = np.where(X @ np.array([1.0, -2, 1]) > 0, "p", "n")
    blown = SGDClassifier(loss="squared_hinge", schedule="constant", eta0=1.0)
    with pytest.raises(Diverged, match=r"state \(v_\) is no longer finite; scale the "):
        blown.fit(X, y)
    with pytest.raises(Diverged):
        SGDClassifier(loss="squared_hinge", schedule="constant", eta0=1.0).partial_fit(
            X, y, classes=["n", "p"])
    with pytest.raises(Diverged, match="lower eta0"):
        SGDRegressor().fit(X, X @ np.array([1.0, 2, 3]))
    huge = np.array([[1e200, 0.0], [0.0, 1e200], [1e200, 1e200], [0.0, 1.0]])
    for learner, target in ((DualCD(), ["a", "b", "a", "b"]), (OGDRegressor(), [1.0, 2, 3, 4])):
        with pytest.raises(Diverged):
            learner.fit(huge, target)
    scaled = X / 1000.0  # the same data scaled: learned, finite
    assert np.all(np.isfinite(SGDClassifier().fit(scaled, y).decision_function(scaled)))


def _counted_solves(monkeypatch) -> list:
    """A list that gets an item at each DualCD solve (of the whole problem)."""
    from nbsvm.learners import dcd as dcd_module
    solves: list = []
    real = dcd_module.DualCD._solve
    monkeypatch.setattr(dcd_module.DualCD, "_solve",
                        lambda self, *a, **k: solves.append(1) or real(self, *a, **k))
    return solves


def test_dual_cd_solves_once_over_partial_fit_blocks(monkeypatch):
    """The divergence check after each partial_fit made DualCD, which keeps its rows and
    solves when the weights are needed, solve the whole problem after every block (40
    blocks: 40 solves, 10x the time): rows not yet solved are checked by their solve."""
    from nbsvm.learners import DualCD
    solves = _counted_solves(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 20))
    y = np.where(X @ rng.normal(size=20) > 0, "p", "n")
    m = DualCD()
    for part in np.array_split(np.arange(400), 8):
        m.partial_fit(X[part], y[part], classes=["n", "p"])
    assert (m.predict(X) == y).mean() > 0.9 and len(solves) == 1
    DualCD().fit(X, y)
    assert len(solves) == 2  # fit: one solve (it was two)


def test_a_backend_learner_diverging_in_train_is_said_with_the_options(tmp_path):
    """nbsvm train --learner pegasos whose steps blew up said the Python API's words
    ('raise lam', 'scale the feature values down', no epoch) once the learners raised
    Diverged themselves: said as before, with the epoch and the options. Diverged
    pickles (Dask sends it from a worker)."""
    import copy
    import pickle
    from testhelpers import run_cli
    from nbsvm.errors import Diverged
    r = run_cli("train", REVIEWS, "--learner", "pegasos", "--lambda", "1e-320", "--n-bits", "14",
                "-o", tmp_path / "m.npz", "-q")
    assert r.returncode == 2 and "training diverged in epoch 1 (mean loss inf)" in r.stderr
    assert "--lambda" in r.stderr and not (tmp_path / "m.npz").exists()
    e = Diverged("training diverged: the learned state (v_) is no longer finite", "v_")
    for back in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert type(back) is Diverged and back.state == "v_" and str(back) == str(e)


def test_one_vs_rest_of_the_exact_solver_solves_once_a_class(monkeypatch):
    """Its divergence check asked each binary DualCD for its weights after every block:
    40 blocks, 3 classes, 120 solves (32 s against 1.7). Once a class now."""
    from nbsvm.learners import OneVsRest
    solves = _counted_solves(monkeypatch)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 10))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3], axis=1)]
    m = OneVsRest("dcd")
    for part in np.array_split(np.arange(300), 10):
        m.partial_fit(X[part], y[part], classes=["a", "b", "c"])
    assert (m.predict(X) == y).mean() > 0.8 and len(solves) == 3


def test_learn_with_the_exact_solver_says_a_divergence_with_its_options(tmp_path):
    """nbsvm learn -a dcd whose solve blew up said the Python API's words ('raise lam',
    no epoch): said with the epoch and --lambda, nothing saved."""
    from testhelpers import run_cli
    rng = np.random.default_rng(0)
    data = tmp_path / "big.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{rng.uniform(5, 9):.3f}e+99 "
                            f"2:{rng.normal():.3f}\n" for i in range(200)))
    r = run_cli("learn", data, "-a", "dcd", "--lambda", "1e-300", "-o", tmp_path / "m.npz", "-q")
    assert r.returncode == 2, r.stderr
    assert "training diverged in epoch 1: the learned state (w_)" in r.stderr
    assert r.stderr.rstrip().endswith("raise --lambda") and not (tmp_path / "m.npz").exists()
