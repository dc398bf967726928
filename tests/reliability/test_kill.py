"""SIGKILL at several points of `nbsvm train` (issue 6, item 4): the earlier model at the
same path stays intact and loadable, and whatever the killed run left behind (a temporary
model file, a half-written cache folder) is never taken for a finished file by the next run.

SIGKILL cannot be caught, so a killed run cannot clean up: leftovers carry temporary names
(``.<name>.*.nbsvm-tmp``, ``nbsvm-cache-*``) that no command reads as a model or a cache,
and every run builds its cache in a fresh folder of its own.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from testhelpers import run_cli, write_long_corpus

NBSVM = Path(sys.executable).parent / "nbsvm"
PROBE = ["w1 w2 w3", "w4000 w17"]
pytestmark = pytest.mark.skipif(not NBSVM.exists(), reason=f"no console script at {NBSVM}")


@pytest.fixture(scope="module")
def earlier(tmp_path_factory):
    """The corpus and the earlier model trained from it, made once for the module: the
    corpus is only read, and each test gets its own copy of the model (:func:`setup`)."""
    d = tmp_path_factory.mktemp("kill")
    data = d / "train.txt"
    write_long_corpus(data)
    model = d / "earlier.npz"
    r = subprocess.run([str(NBSVM), "train", str(data), "-o", str(model), "--n-bits", "16",
                        "--epochs", "1", "-q"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return data, model.read_bytes(), NBSVMClassifier.load(model).decision_function(PROBE)


@pytest.fixture
def setup(earlier, tmp_path):
    """The earlier model at this test's own path (a killed run and the next one write
    there), an empty cache folder, the model's bytes and its scores on :data:`PROBE`."""
    data, before, scores = earlier
    model = tmp_path / "models" / "model.npz"
    model.parent.mkdir()
    model.write_bytes(before)
    cache = tmp_path / "cache"
    cache.mkdir()
    return data, model, cache, before, scores


def _intact(model, before, scores):
    assert model.read_bytes() == before
    assert np.array_equal(NBSVMClassifier.load(model).decision_function(PROBE), scores)


def _sigkill(proc, ready, why):
    """SIGKILL ``proc`` once ``ready()`` returns; it must still be running then (else the
    test fails, saying ``why()``). A process left running is killed in any case."""
    try:
        ready()
        assert proc.poll() is None, why()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL


def _next_run_works(data, model, cache):
    """The next run at the same paths succeeds, whatever the killed one left behind (the
    CLI in this process: the killed one is gone either way)."""
    r = run_cli("train", data, "-o", model, "--n-bits", "16", "--epochs", "2",
                "--cache-dir", cache, "-q")
    assert r.returncode == 0, r.stderr
    assert NBSVMClassifier.load(model).score(["w1 w2"], ["neg"]) in (0.0, 1.0)


def _wait_for(found, proc, seconds=60):
    """Poll until ``found()`` holds (a file of the stage to kill in has appeared); the
    caller checks that ``proc`` is still running then."""
    deadline = time.monotonic() + seconds
    while not found() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)


#: what the killed run has written when it is in each stage: the hashing (lexicon) pass
#: writes its cache in a hidden temporary folder; the epochs run once it is published
HASHING = "nbsvm-cache-*/.train.*.nbsvm-tmp"
EPOCHS = "nbsvm-cache-*/train/meta.json"


@pytest.mark.parametrize("when", [
    # make test-slow: the kill mid-epoch and while saving are other tests, SIGKILL while hashing in
    # test_cache_resume
    pytest.param("lexicon pass", marks=pytest.mark.slow), "mid-epoch"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_sigkill_during_training(setup, when):
    data, model, cache, before, scores = setup
    proc = subprocess.Popen([str(NBSVM), "train", str(data), "-o", str(model), "--n-bits", "20",
                             "--epochs", "200", "--cache-dir", str(cache)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))

    def ready():
        assert proc.stdout.readline().startswith("settings: ")   # fitting starts now
        if when == "lexicon pass":          # the hashing pass is writing its cache
            _wait_for(lambda: list(cache.glob(HASHING)), proc)
        else:                               # the cache is published: the epochs run
            _wait_for(lambda: list(cache.glob(EPOCHS)), proc)
            time.sleep(0.3)                 # into the epochs (200 of them: seconds)

    _sigkill(proc, ready, lambda: f"training ended before the kill ({when})")
    if when == "lexicon pass":              # the kill landed in that pass
        assert list(cache.glob(HASHING)) and not list(cache.glob(EPOCHS))
    else:
        assert list(cache.glob(EPOCHS))
    _intact(model, before, scores)
    leftovers = [p.name for p in cache.iterdir()]
    assert all(name.startswith("nbsvm-") for name in leftovers), leftovers
    _next_run_works(data, model, cache)
    # the killed run's half-written cache folders were not read (the model is the
    # next run's own, _next_run_works) but removed: their process is gone
    assert not set(leftovers) & {p.name for p in cache.iterdir()}


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_sigkill_while_saving(setup, tmp_path):
    # a child trains, then writes the model slowly (each array piece waits), and is killed
    # half way through the write; what it saves is trained on the corpus's first 300
    # documents (the write is slowed down, whatever the model)
    data, model, cache, before, scores = setup
    head = tmp_path / "head.txt"
    with open(data, encoding="utf-8") as fh:
        head.write_text("".join(line for _, line in zip(range(300), fh)), encoding="utf-8")
    child = textwrap.dedent(f"""
        import sys, time
        import nbsvm.io.npzfile as persist
        from nbsvm import NBSVMClassifier
        from nbsvm.io import read_inputs
        clf = NBSVMClassifier(n_bits=16, epochs=1).fit_documents(read_inputs([{str(head)!r}]))
        real = persist.np.ascontiguousarray
        def slow(a, *args, **kw):
            print("writing", flush=True)
            time.sleep(0.5)
            return real(a, *args, **kw)
        persist.np.ascontiguousarray = slow
        clf.save({str(model)!r})
        print("saved", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)

    def ready():
        assert proc.stdout.readline().strip() == "writing"
        deadline = time.time() + 30           # kill once the temporary file is being written
        while not list(model.parent.glob(".model.npz.*.nbsvm-tmp")) and time.time() < deadline:
            time.sleep(0.05)

    _sigkill(proc, ready, proc.stderr.read)
    _intact(model, before, scores)
    temps = list(model.parent.glob(".model.npz.*.nbsvm-tmp"))
    assert len(temps) == 1                      # the half-written file, under its own name
    with pytest.raises(Exception):
        NBSVMClassifier.load(temps[0])          # and it is not a loadable model
    _next_run_works(data, model, cache)
