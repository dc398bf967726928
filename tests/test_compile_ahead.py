"""A first run's later kernels compiled ahead by a second process
(nbsvm/workflows/compile_ahead.py): when it starts, what it runs, and (make test-slow) that
what it compiles is what a real training then loads from numba's cache instead of compiling
it again."""
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from nbsvm import NBSVMClassifier, _small_jobs
from nbsvm.cli import app
from nbsvm.datasets import fixture
from nbsvm.text.hashing import Hasher
from nbsvm.workflows import compile_ahead

runner = CliRunner()


class Spawned:
    def __init__(self):
        self.argv = None

    def __call__(self, argv, **kw):
        self.argv, self.kw = argv, kw
        return "process"


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """An empty numba cache (NUMBA_CACHE_DIR), and subprocess.Popen recorded, not run."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.delenv("NBSVM_COMPILE_AHEAD", raising=False)
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    monkeypatch.setattr(compile_ahead.os, "sched_getaffinity", lambda pid: {0, 1})
    spawned = Spawned()
    monkeypatch.setattr(compile_ahead.subprocess, "Popen", spawned)
    return spawned


def test_a_cold_cache_starts_the_second_process_with_the_settings(cold):
    params = NBSVMClassifier(n_bits=16, loss="hinge", cache_dir="/tmp/x").get_params()
    assert compile_ahead.start(params) == "process"
    # -P: not the working folder's modules (a json.py there would run in it)
    assert cold.argv[:4] == [sys.executable, "-P", "-m", "nbsvm.workflows.compile_ahead"]
    sent = json.loads(cold.argv[4])
    assert sent["n_bits"] == 16 and sent["loss"] == "hinge" and "cache_dir" not in sent
    # quiet: nothing of the second process reaches the command's output
    assert cold.kw["stdout"] is subprocess.DEVNULL and cold.kw["stderr"] is subprocess.DEVNULL


def test_a_warm_cache_or_the_switch_starts_nothing(cold, monkeypatch, tmp_path):
    index = compile_ahead.cache_folders()[0] / "table._adagrad_epoch-82.py311.nbi"
    index.parent.mkdir(parents=True)
    index.write_bytes(b"")
    assert compile_ahead.kernels_cached() and compile_ahead.start({}) is None
    index.unlink()
    monkeypatch.setenv("NBSVM_COMPILE_AHEAD", "0")
    assert not compile_ahead.kernels_cached() and compile_ahead.start({}) is None
    assert cold.argv is None
    monkeypatch.setenv("NBSVM_COMPILE_AHEAD", "Off")
    assert compile_ahead.start({}) is None
    monkeypatch.delenv("NBSVM_COMPILE_AHEAD")
    assert compile_ahead.start({"class_weight": {"a": object()}}) is None  # not JSON
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")                    # nothing to compile
    assert compile_ahead.start({}) is None
    monkeypatch.delenv("NUMBA_DISABLE_JIT")
    monkeypatch.setattr(compile_ahead.os, "sched_getaffinity", lambda pid: {0})  # one core
    assert compile_ahead.start({}) is None


@pytest.fixture
def asked(monkeypatch):
    """The settings each compile_ahead.start call was given (no process started)."""
    calls = []
    monkeypatch.setattr(compile_ahead, "start", lambda params: calls.append(params))
    return calls


def test_nbsvm_train_hands_its_settings_to_the_second_process(asked, tmp_path):
    r = runner.invoke(app, ["train", str(fixture("reviews.txt")), "-o", str(tmp_path / "m.npz"),
                            "--n-bits", "12", "--epochs", "2", "-q"])
    assert r.exit_code == 0, r.output
    assert len(asked) == 1 and asked[0]["n_bits"] == 12 and asked[0]["epochs"] == 2


def test_a_command_that_fails_its_checks_starts_nothing(asked, tmp_path):
    reviews, out = str(fixture("reviews.txt")), str(tmp_path / "m.npz")
    for argv in (["train", reviews, "-o", out, "--init", str(tmp_path / "none.npz")],
                 ["train", "-", "-o", out, "--auto"],
                 ["lexicon", str(tmp_path / "none.txt"), "-o", out]):
        r = runner.invoke(app, argv, input="pos\tgood\n")
        assert r.exit_code == 2, r.output
    assert asked == []


def test_nbsvm_lexicon_starts_it_for_the_training_that_follows(asked, tmp_path):
    # make imdb runs lexicon, train --lexicon, eval: the first compiles the hashing kernel
    r = runner.invoke(app, ["lexicon", str(fixture("reviews.txt")), "-o", str(tmp_path / "l.npz"),
                            "--n-bits", "12", "--ngrams", "2", "-q"])
    assert r.exit_code == 0, r.output
    assert len(asked) == 1 and asked[0]["n_bits"] == 12 and asked[0]["ngrams"] == 2
    NBSVMClassifier(**asked[0])                           # parameters a classifier takes


def test_the_second_process_trains_two_and_three_classes_without_the_hashing_kernel(
        monkeypatch):
    import nbsvm.text._ngram_ids as ids

    def refused(*args):
        raise AssertionError("the hashing kernel ran in the second process")

    monkeypatch.setattr(ids, "_hash_docs", refused)
    import nbsvm.models.nbsvm as models
    made = []

    def recorded(**settings):
        made.append(settings)
        return NBSVMClassifier(**settings)

    monkeypatch.setattr(models, "NBSVMClassifier", recorded)
    params = json.loads(json.dumps(NBSVMClassifier(n_bits=31).get_params()))
    params["class_weight"] = {"pos": 5.0, "neg": 1.0}      # the user's classes, not c0, c1
    assert compile_ahead.compile_for(params) == [2, 3]
    # a tiny hash space (8.7 GB at 31 bits), balanced weights, one epoch, no search
    assert all(s["n_bits"] == compile_ahead.TINY_BITS and s["class_weight"] == "balanced"
               and s["epochs"] == 1 and s["auto"] is False for s in made), made
    assert not _small_jobs._hash_plain                       # back to the budget after it
    calls = iter([True, False])
    assert compile_ahead.compile_for(params, lambda: next(calls)) == [2]  # parent gone


def test_hashing_in_plain_python_gives_the_kernels_ids(monkeypatch):
    h = Hasher(n_bits=16, ngrams=2, char_ngrams=3)
    texts = ["a good film", "Un café à Paris", "東京の映画"]
    monkeypatch.setattr(_small_jobs, "PLAIN_BYTES", 0)   # the budget spent: the kernel
    compiled = h.batch(texts)
    _small_jobs.hash_in_plain_python()
    try:
        plain = h.batch(texts)
    finally:
        _small_jobs.hash_in_plain_python(False)
    assert all((a == b).all() for a, b in zip(compiled, plain))


# the kernels a training runs after hashing: counting, translating, the epochs, naming the
# strongest n-grams, scoring
LATER = ["nbsvm.lexicon._kernels:count_buckets", "nbsvm.data._translate_kernels:_translate",
         "nbsvm.learners.kernels.table:_adagrad_epoch", "nbsvm.text._ngram_hits:_ngram_hits",
         "nbsvm.learners.kernels.table:_scores"]
# and what make install's run (--defaults) compiles besides: hashing, nbsvm lexicon's counting
FIRST = ["nbsvm.text._ngram_ids:_hash_docs", "nbsvm.lexicon.paircounts:_batch_keys",
         "nbsvm.lexicon.paircounts:_runs", "nbsvm.lexicon.paircounts:_to_rows"]


def _hits_and_misses(commands: list[list[str]], kernels: list[str], env: dict) -> dict:
    """Each kernel's cache hits and misses in one process running ``commands`` (nbsvm's
    command lines) with hashing by the kernel (no small-job budget)."""
    code = (
        "import importlib\n"
        "import nbsvm._small_jobs as s\n"
        "s.PLAIN_BYTES = 0\n"
        "from nbsvm.cli import app\n"
        f"for command in {commands!r}:\n"
        "    try:\n"
        "        app(command)\n"
        "    except SystemExit as e:\n"
        "        assert not e.code, e.code\n"
        f"for name in {kernels!r}:\n"
        "    module, _, fn = name.partition(':')\n"
        "    stats = getattr(importlib.import_module(module), fn).stats\n"
        "    print(name, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [line.split() for line in r.stdout.splitlines()]  # after the commands' output
    return {w[0]: (int(w[1]), int(w[2])) for w in lines if len(w) == 3 and w[0] in kernels}


@pytest.mark.slow  # compiles every kernel from an empty cache (20 s here, about 50 s on CI)
def test_after_make_install_compiles_ahead_a_first_run_loads_every_kernel(tmp_path):
    # make install runs --defaults: its second process is the one nbsvm train starts (tiny
    # models with the settings it is given, hashing in plain Python); this one hashes and
    # counts a lexicon
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), NBSVM_COMPILE_AHEAD="0")
    subprocess.run([sys.executable, "-m", "nbsvm.workflows.compile_ahead", "--defaults"],
                   env=env, check=True, timeout=600)
    reviews = str(fixture("reviews.txt"))
    commands = [["lexicon", reviews, "-o", str(tmp_path / "lex.npz"), "-q"],
                ["train", reviews, "-o", str(tmp_path / "m.npz"), "--test", reviews, "-q"]]
    counts = _hits_and_misses(commands, LATER + FIRST, env)
    for name in LATER + FIRST:
        hits, misses = counts[name]
        assert hits >= 1 and misses == 0, (name, hits, misses)


def test_the_user_cache_folder_numba_falls_back_to_counts_as_cached(monkeypatch, tmp_path):
    # where the package's sources are read-only, numba caches in the user's cache folder,
    # under the source folder's name and the SHA-1 of its path
    from pathlib import Path
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    import inspect

    from numba.core.caching import UserWideCacheLocator

    from nbsvm.learners.kernels import table
    # numba's own rule, on the file as numba sees it (the path it was imported by)
    kernel_file = inspect.getfile(table._adagrad_epoch.py_func)
    folder = tmp_path / "numba" / UserWideCacheLocator.get_suitable_cache_subpath(kernel_file)
    source = Path(os.path.abspath(kernel_file)).parent
    assert compile_ahead.cache_folders() == [source / "__pycache__", folder]
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert compile_ahead.cache_folders() == [tmp_path / "elsewhere" / folder.name]


def test_label_sets_with_weights_by_name_train_in_the_second_process_too():
    # 'balanced' is for one class per document: label sets drop the user's weights there
    params = dict(NBSVMClassifier(n_bits=12, multilabel=True).get_params(),
                  class_weight={"pos": 2.0})
    assert compile_ahead.compile_for(params) == [2, 3]


def test_the_commands_of_the_module(monkeypatch, tmp_path, capsys):
    # --tiny N: the default settings at N classes (make install's child); a JSON: the second
    # process of a run; --defaults: one line, and nothing while another holds the lock
    calls = []
    monkeypatch.setattr(compile_ahead, "compile_for",
                        lambda params, *a, n_classes=(2, 3): calls.append((params, list(n_classes))))
    monkeypatch.setattr(compile_ahead.os, "nice", lambda n: 0)   # not this test's process
    monkeypatch.setattr(compile_ahead, "compile_defaults", lambda: 1.25)
    assert compile_ahead.command(["--tiny", "2"]) == 0
    assert compile_ahead.command(['{"ngrams": 2}']) == 0
    assert calls == [({}, [2]), ({"ngrams": 2}, [2, 3])]
    lock = str(tmp_path / "kernels.lock")
    assert compile_ahead.command(["--defaults", "--lock", lock]) == 0
    assert "compiled into numba's cache in 1.2 s" in capsys.readouterr().out
    for fh in compile_ahead._locks:   # this process's lock, released (as at its end)
        fh.close()
    compile_ahead._locks.clear()
    # another process holding the lock: this one compiles nothing
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, fcntl, time; f = open(sys.argv[1], 'a'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); "
                               "time.sleep(30)", lock], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert compile_ahead.command(["--defaults", "--lock", lock]) == 0
        assert "being compiled by another process" in capsys.readouterr().out
    finally:
        holder.kill()
        holder.wait()


def test_a_failed_compilation_is_one_line_and_exit_1(monkeypatch, capsys):
    def fail():
        raise RuntimeError("the two-class models' process failed (exit 1)")

    monkeypatch.setattr(compile_ahead, "compile_defaults", fail)
    assert compile_ahead.command(["--defaults"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("nbsvm: the kernels were not compiled ahead (RuntimeError") and \
        out.count("\n") == 1
