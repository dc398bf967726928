"""Ctrl-C during `nbsvm train` leaves an existing model file untouched and no temp files."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from testhelpers import write_long_corpus

NBSVM = Path(sys.executable).parent / "nbsvm"


@pytest.mark.skipif(not NBSVM.exists(), reason=f"console script not found at {NBSVM}")
@pytest.mark.parametrize("with_lexicon", [
    False, pytest.param(True, marks=pytest.mark.slow)],  # make test-slow: the same handler
    ids=["one-pass", "lexicon"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_sigint_during_training_keeps_previous_model(tmp_path, with_lexicon):
    data = tmp_path / "big.txt"
    write_long_corpus(data)
    models = tmp_path / "models"
    models.mkdir()
    cache = tmp_path / "cache"
    cache.mkdir()
    model = models / "model.npz"

    # an earlier model at the same path
    small = subprocess.run([str(NBSVM), "train", str(data), "-o", str(model), "--n-bits", "16",
                            "--epochs", "1", "-q"], capture_output=True, text=True, timeout=120)
    assert small.returncode == 0, small.stderr
    before = model.read_bytes()
    old_scores = NBSVMClassifier.load(model).decision_function(["w1 w2 w3", "w4000 w17"])

    extra = []
    if with_lexicon:     # then the first epoch trains while streaming and writing the cache
        lex = tmp_path / "lex.npz"
        r = subprocess.run([str(NBSVM), "lexicon", str(data), "-o", str(lex), "--n-bits", "20",
                            "-q"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        extra = ["--lexicon", str(lex)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([str(NBSVM), "train", str(data), "-o", str(model), "--n-bits", "20",
                             "--epochs", "5000", "--cache-dir", str(cache), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # the settings line is printed right before fitting starts
        line = proc.stdout.readline()
        assert line.startswith("settings: "), line
        time.sleep(2.5)               # hashing (~1 s) done; well inside the minutes of epochs
        assert proc.poll() is None, "training finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert proc.returncode == 130, (proc.returncode, err)
    assert "interrupted" in err
    assert "Traceback" not in err and "Traceback" not in out
    assert "saved:" not in out

    assert model.read_bytes() == before
    clf = NBSVMClassifier.load(model)
    assert np.array_equal(clf.decision_function(["w1 w2 w3", "w4000 w17"]), old_scores)
    assert sorted(p.name for p in models.iterdir()) == ["model.npz"]
    assert not list(tmp_path.rglob("*.nbsvm-tmp*"))
    assert list(cache.iterdir()) == []            # the feature cache was removed too


def test_an_interrupt_before_the_command_runs_ends_without_a_traceback():
    """Ctrl-C in the first 60 ms (while the command's modules import, before it handles
    signals) printed a traceback through importlib; it ends as a command's own does."""
    code = ("import sys, nbsvm.cli as cli\n"
            "def register(*a):\n    raise KeyboardInterrupt\n"
            "cli.register = register\nsys.argv = ['nbsvm', 'info', 'x.npz']\ncli.main()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130
    assert r.stderr == "interrupted: nothing was written over existing files\n"


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_after_the_last_safe_point_still_sets_the_exit_status(signum, code):
    """SIGTERM (or Ctrl-C) that arrived after the command's last safe point, the command
    then finishing, exited 0: a supervisor could not tell it had been asked to stop."""
    import typer

    from nbsvm.cli import common

    with pytest.raises(typer.Exit) as ended:
        with common.cli_errors():
            (common._on_terminate if signum == signal.SIGTERM else common._on_sigint)(
                signum, None)  # noted, to be raised at the next safe point: there is none
    assert ended.value.exit_code == code
    with common.cli_errors():  # a plain run ends plainly after it
        pass


def test_a_ctrl_c_with_no_safe_point_near_is_raised_where_the_work_is():
    """A file-safety hunt: one Ctrl-C was only noted for the next safe point, and where
    there was none (a Dask cluster whose local worker the Ctrl-C had killed, waited for
    forever; `datasets get` unpacking an archive, 15 s) the command went on. As SIGTERM's,
    it is raised where the work is after FORCE_AFTER seconds: exit 130, the usual line."""
    import typer

    from nbsvm.cli import common

    t0 = time.perf_counter()
    with pytest.raises(typer.Exit) as ended:
        with common.cli_errors():
            common._on_sigint(signal.SIGINT, None)
            while time.perf_counter() - t0 < 10:  # no safe point: a wait without one
                time.sleep(0.01)
    assert ended.value.exit_code == 130
    assert time.perf_counter() - t0 < common.FORCE_AFTER + 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # disarmed after
    with common.cli_errors():  # a Ctrl-C raised at a safe point disarms the timer too
        common._on_sigint(signal.SIGINT, None)
        with pytest.raises(KeyboardInterrupt):
            common.check_interrupt()
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        common._interrupted.clear()


def test_a_ctrl_c_that_ends_the_local_cluster_is_the_interrupt(monkeypatch):
    """The Ctrl-C reaches --dask-local's worker processes too: while the cluster started,
    their end was a traceback ('RuntimeError: Nanny failed to start'), not the interrupt.
    Without a Ctrl-C, the error stays the error."""
    import contextlib

    from nbsvm.cli import common
    from nbsvm.workflows import distributed

    @contextlib.contextmanager
    def failing(scheduler, local_workers):
        raise RuntimeError("Nanny failed to start.")
        yield

    monkeypatch.setattr(distributed, "client_for", failing)
    dask = common.Dask(scheduler=None, dask_local=1)
    with pytest.raises(RuntimeError):
        with dask.client():
            pass
    common._interrupted.set()
    try:
        with pytest.raises(KeyboardInterrupt):
            with dask.client():
                pass
    finally:
        common._interrupted.clear()
        signal.setitimer(signal.ITIMER_REAL, 0)
