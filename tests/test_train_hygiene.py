"""Train-time hygiene (issue 18, item 9): early stopping on a held-out part (``--valid``),
case kept (``--keep-case``) and ranges of character n-gram lengths (``--char-ngrams 2-5``),
the compiled hashing against the mmh3 reference, and the CLI on real IMDB reviews."""
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.text.hashing import Hasher
from nbsvm.models.calibrate import split

NBSVM = Path(sys.executable).parent / "nbsvm"
WORDS = ["Good", "good", "FILM", "ça", "東京", "a", "Ünïcode", "x" * 40, "!", "i", "<br />"]


@pytest.mark.parametrize("kw", [dict(char_ngrams=5, char_min=2),
                                dict(char_ngrams=3, lowercase=False),
                                dict(ngrams=2, char_ngrams=4, char_min=1, lowercase=False),
                                dict(ngrams=3, lowercase=False)])
def test_compiled_hashing_equals_the_mmh3_reference(kw):
    rng = random.Random(1)
    h = Hasher(n_bits=18, **kw)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))) for _ in range(300)]
    ids, offsets = h.batch(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(ids[offsets[i]:offsets[i + 1]], h.reference_buckets(text))


def test_ranges_and_case_by_hand():
    # <ab>: lengths 2..3, shortest first: <a ab b> then <ab ab>
    assert Hasher(char_ngrams=3, char_min=2).keys("Ab")[1] == ["<a", "ab", "b>", "<ab", "ab>"]
    assert Hasher(lowercase=False).keys("Good good")[0] == ["Good", "good", "Good good"]
    assert Hasher().keys("Good good")[0] == ["good", "good", "good good"]
    with pytest.raises(NBSVMError, match="between 1 and the longest"):
        Hasher(char_ngrams=3, char_min=4)


@pytest.fixture(scope="module")
def reviews(imdb_slice):
    def read(split_name, n):
        texts, labels = [], []
        for label in ("pos", "neg"):
            for f in sorted((imdb_slice / split_name / label).glob("*.txt"))[:n]:
                texts.append(f.read_text(encoding="utf-8"))
                labels.append(label)
        return texts, labels
    return read("train", 1000), read("test", 500)


def _docs(texts, labels):
    from nbsvm.io.document import Document
    return [Document(lab, t, "<fit>", i + 1) for i, (t, lab) in enumerate(zip(texts, labels))]


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_early_stopping_keeps_the_best_epoch(reviews):
    (X, y), (Xt, yt) = reviews
    kw = dict(ngrams=2, n_bits=18, epochs=12, loss="hinge", optimizer="sgd",
              early_stopping=True, validation_fraction=0.2, n_iter_no_change=2)
    clf = NBSVMClassifier(**kw).fit(X, y)
    v = clf.validation_
    history = {int(k): a for k, a in v["history"].items()}
    best = max(history.values())
    assert v["accuracy"] == best and history[v["best_epoch"]] == best
    assert min(e for e, a in history.items() if a == best) == v["best_epoch"]
    # stopped n_iter_no_change epochs after the best one, or ran every epoch
    assert v["epochs_run"] in (v["best_epoch"] + 2, 12)
    # (a later epoch may tie the best: not an improvement, so the first one is kept)
    assert all(a <= best for e, a in history.items() if e > v["best_epoch"])
    # the held-out part was not trained on, and the kept weights score the best accuracy
    held = list(split(_docs(X, y), clf.seed, True, 0.2))
    assert v["held_out"] == len(held) and clf.n_docs_ == len(X) - len(held)
    assert sum(clf.class_counts_) == len(X) - len(held)
    texts, labels = [d.text for d in held], [d.label for d in held]
    assert clf.score(texts, labels) == pytest.approx(best)
    # the strongest buckets are named from the kept weights, after the restore
    from nbsvm.evaluation.explain import top_features
    top = top_features(clf, 20)
    assert (~top.ngrams.str.startswith("<bucket")).mean() >= 0.9
    again = NBSVMClassifier(**kw).fit(X, y)                    # deterministic for a seed
    assert again.validation_["history"] == v["history"]
    assert np.array_equal(again.coef_, clf.coef_)


def test_early_stopping_is_checked():
    with pytest.raises(NBSVMError, match="validation_fraction must be between 0 and 1"):
        NBSVMClassifier(early_stopping=True, validation_fraction=1.5).fit(["a b", "c d"],
                                                                         ["x", "y"])


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_cli_valid_keep_case_and_char_ranges(imdb_slice, tmp_path):
    model = tmp_path / "m.npz"
    run = subprocess.run([str(NBSVM), "train", str(imdb_slice / "train"), "-o", str(model),
                          "--valid", "0.1", "--epochs", "10", "--n-bits", "20", "--keep-case",
                          "--char-ngrams", "2-4", "--ngrams", "1"],
                         capture_output=True, text=True, check=True)
    assert "epoch 1: validation accuracy" in run.stderr
    assert "early stopping: kept epoch" in run.stdout
    clf = NBSVMClassifier.load(model)
    assert (clf.hasher_.char_min, clf.hasher_.char_ngrams, clf.hasher_.lowercase) == \
        (2, 4, False)
    assert clf.validation_["held_out"] > 100
    rep = json.loads(subprocess.run([str(NBSVM), "eval", "-m", str(model),
                                     str(imdb_slice / "test"), "--json"], capture_output=True,
                                    text=True, check=True).stdout)
    assert rep["accuracy"] > 0.78
    bad = subprocess.run([str(NBSVM), "train", str(imdb_slice / "train"), "-o",
                          str(tmp_path / "x.npz"), "--char-ngrams", "5-2"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "range LO-HI such as 2-5" in bad.stderr


def test_early_stopping_restores_a_backend_learners_best_epoch(reviews):
    (X, y), _ = reviews
    clf = NBSVMClassifier(ngrams=2, n_bits=18, epochs=8, learner="pa", early_stopping=True,
                          validation_fraction=0.2, n_iter_no_change=1).fit(X, y)
    held = list(split(_docs(X, y), clf.seed, True, 0.2))
    assert clf.score([d.text for d in held], [d.label for d in held]) == \
        pytest.approx(clf.validation_["accuracy"])


def test_a_class_of_one_document_is_never_held_out_whole():
    """The validation part was a random draw per document: a class's only document could
    fall in it (refused: 'class ... fell in the held-out part'). A class's first document
    now always trains."""
    texts = [f"w{i} common words" for i in range(200)]
    labels = ["a" if i % 2 else "b" for i in range(200)]
    for rare_at in (0, 57, 199):
        labels_ = list(labels)
        labels_[rare_at] = "rare"
        for seed in range(10):
            held = list(split(_docs(texts, labels_), seed, True, 0.5))
            assert held and "rare" not in {d.label for d in held}
    clf = NBSVMClassifier(n_bits=12, epochs=2, early_stopping=True).fit(texts, labels_)
    held = list(split(_docs(texts, labels_), clf.seed, True, 0.1))
    assert "rare" in clf.classes_ and clf.validation_["held_out"] == len(held) in (18, 19, 20)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_modes_that_read_twice_refuse_standard_input(tmp_path):
    for flag in (["--valid", "0.1"], ["--calibrate", "sigmoid"], ["--keep-counts"]):
        r = subprocess.run([str(NBSVM), "train", "-", "-o", str(tmp_path / "m.npz"), *flag],
                           input="pos\tgood\nneg\tbad\n", capture_output=True, text=True)
        assert r.returncode == 2 and "standard input cannot be" in r.stderr


def test_read_once_knows_pipes_and_devices_by_any_name(tmp_path):
    from nbsvm.io.document import read_once

    regular = tmp_path / "r.txt"
    regular.write_text("pos\tgood\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r, w = os.pipe()
    try:
        assert read_once("-") and read_once(fifo) and read_once(f"/dev/fd/{r}")
        assert read_once("/dev/null")                  # a device: no second read either
        assert not read_once(regular) and not read_once(tmp_path / "missing.txt")
        assert not read_once(tmp_path)                 # a folder of documents: read again
    finally:
        os.close(r)
        os.close(w)


PIPED = "".join(f"{'pos' if i % 2 else 'neg'}\t{'good' if i % 2 else 'bad'} film number {i}\n"
                for i in range(20_000))


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_pipe_by_name_trains_on_every_document(tmp_path):
    """/dev/stdin piped, <(...) and a FIFO were read twice (a peek at the first documents,
    then the training): the peek took a few thousand documents, and the model trained on
    the rest without a word (27,704 of 30,000), said line 1 had no TAB (a cut line), or
    waited forever for a FIFO's second writer."""
    m = tmp_path / "m.npz"
    args = ["-o", str(m), "-q", "--n-bits", "16", "--epochs", "1"]
    subprocess.run([str(NBSVM), "train", "/dev/stdin", *args], input=PIPED, text=True,
                   check=True, capture_output=True, timeout=120)
    assert NBSVMClassifier.load(m).n_docs_ == 20_000
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    train = subprocess.Popen([str(NBSVM), "train", str(fifo), *args],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with open(fifo, "w") as w:
        w.write(PIPED)
    assert train.wait(timeout=120) == 0, train.stderr.read()
    assert NBSVMClassifier.load(m).n_docs_ == 20_000
    # a table by a pipe's name is read as standard input is (it was 'no such file'), its
    # short rows not counted by a second read
    table = "text,label\n" + "".join(f"film {i},{'pos' if i % 2 else 'neg'}\n" for i in range(50))
    subprocess.run([str(NBSVM), "train", "/dev/stdin", "--format", "csv", *args], input=table,
                   text=True, check=True, capture_output=True, timeout=120)
    assert NBSVMClassifier.load(m).n_docs_ == 50
    # a mode that reads twice refuses a pipe by name, as it refuses '-'
    r = subprocess.run([str(NBSVM), "train", "/dev/stdin", *args, "--calibrate", "sigmoid"],
                       input=PIPED, text=True, capture_output=True, timeout=120)
    assert r.returncode == 2 and "/dev/stdin (a pipe or a device) cannot be" in r.stderr


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_reading_reports_once_when_the_inputs_are_read_twice(imdb_slice, tmp_path):
    lines = []
    for label in ("pos", "neg"):
        for p in sorted((imdb_slice / "train" / label).glob("*.txt"))[:150]:
            lines.append(f"{label}\t" + p.read_text(encoding="utf-8").replace("\t", " "))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(("\n".join(lines) + "\nno tab on this line\n").encode() + b"pos\tbad \xff\xfe\n")
    r = subprocess.run([str(NBSVM), "train", str(bad), "-o", str(tmp_path / "m.npz"), "-q",
                        "--valid", "0.2", "--skip-bad-lines", "--n-bits", "16"],
                       capture_output=True, text=True, check=True)
    assert "skipped 1 malformed line" in r.stderr
    assert "replaced 2 invalid UTF-8 bytes in 1 document" in r.stderr


@pytest.mark.parametrize("extra", [[], ["--auto", "--time-budget", "2"]], ids=["plain", "auto"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_test_set_error_keeps_the_trained_model(tmp_path, extra):
    """A missing --test file was named after every epoch had run, and a malformed line of
    it threw the trained model away (no -o written)."""
    from typer.testing import CliRunner

    from nbsvm.cli import app
    from nbsvm.datasets import fixture
    train, model = str(fixture("reviews.txt")), tmp_path / "m.npz"
    run = lambda *args: CliRunner().invoke(app, [str(a) for a in args])  # noqa: E731
    r = run("train", train, "--test", tmp_path / "none.txt", "-o", model, "-q")
    assert r.exit_code == 2 and "none.txt: no such file or folder (--test)" in r.output
    assert not model.exists() and "saved" not in r.output  # refused before training
    bad = tmp_path / "bad.txt"
    bad.write_text("pos\tgood fun\nno tab here\n")
    r = run("train", train, "--test", bad, "-o", model, "-q", *extra)
    assert r.exit_code == 2 and f"{bad}:2: expected 'label<TAB>text'" in r.output
    assert f"the model is trained and saved to {model}" in r.output
    kept = NBSVMClassifier.load(model)
    assert kept.predict(["good fun"]).shape == (1,)
    assert kept.history_[-1]["inputs"] == [train]  # what it read, as a model saved in full


def test_checkpoints_and_kept_caches_refuse_pipes_naming_what_needs_files(tmp_path):
    """--checkpoint-every on standard input said 'a kept cache needs inputs that are files'
    (none was asked for), and --keep-cache on a piped /dev/stdin was a FileNotFoundError
    of '/proc/.../fd/pipe:[...]' (a helper's hunt)."""
    from nbsvm.data.cachestore import input_identity
    r, w = os.pipe()
    try:
        for path, use in (("-", "--checkpoint-every / --resume"), (f"/dev/fd/{r}", "a kept cache")):
            with pytest.raises(NBSVMError, match=f"{re.escape(use)} needs inputs that are files"):
                input_identity(path, use)
    finally:
        os.close(r)
        os.close(w)
    regular = tmp_path / "r.txt"
    regular.write_text("pos\tgood\n")
    assert input_identity(regular)["size"] == 9 and input_identity(tmp_path)["path"]


def test_a_cache_folder_that_is_an_input_folder_is_refused(tmp_path):
    """--keep-cache --cache-dir naming the class-folder input: the next run read the caches
    as new classes and failed on their files ('UTF-16 text'; a helper's hunt). A folder
    below it (a hidden one, or one inside a class folder) is skipped by the reader, and
    stays allowed."""
    from typer.testing import CliRunner

    from nbsvm.cli import app
    split = tmp_path / "split"
    for label, words in (("pos", "good great"), ("neg", "bad awful")):
        (split / label).mkdir(parents=True)
        for i in range(4):
            (split / label / f"{i}.txt").write_text(f"{words} film {i}")
    r = CliRunner().invoke(app, ["train", str(split), "-o", str(tmp_path / "m.npz"),
                                 "--keep-cache", "--cache-dir", str(split)])
    assert r.exit_code == 2 and "is the input folder" in r.output, r.output
    assert sorted(p.name for p in split.iterdir()) == ["neg", "pos"]
    for _ in range(2):   # a hidden cache folder below it: kept, then reused
        r = CliRunner().invoke(app, ["train", str(split), "-o", str(tmp_path / "m.npz"),
                                     "--keep-cache", "--cache-dir", str(split / ".cache"),
                                     "--n-bits", "12", "--min-df", "1", "-q"])
        assert r.exit_code == 0, r.output


def _train_with_test(tmp_path, monkeypatch, save, evaluate):
    """``nbsvm train reviews --test reviews`` in this process, the model's save and the
    test set's scoring replaced by ``save(real, model, path, before_replace)`` and
    ``evaluate(real, *args, **kw)``."""
    from typer.testing import CliRunner

    import nbsvm.evaluation.heldout as heldout
    import nbsvm.workflows.job as job
    from nbsvm.cli import app
    from nbsvm.datasets import fixture

    monkeypatch.undo()  # the real ones, whatever an earlier call replaced them with
    real_save, real_evaluate = job.save_model, heldout.evaluate_cache
    monkeypatch.setattr(job, "save_model", lambda m, p, gate=None: save(real_save, m, p, gate))
    monkeypatch.setattr(heldout, "evaluate_cache", lambda *a, **k: evaluate(real_evaluate, *a, **k))
    reviews, model = str(fixture("reviews.txt")), tmp_path / "m.npz"
    return CliRunner().invoke(app, ["train", reviews, "--test", reviews, "-o", str(model)]), model


def test_the_model_is_saved_while_the_test_set_is_scored(tmp_path, monkeypatch):
    """Saving (0.12 s on IMDB) and scoring the test set (0.16 s) only read the fitted model:
    they run together. Each side here waits for the other to have started: run one after
    the other, the first would time out."""
    import threading

    saving, scoring = threading.Event(), threading.Event()

    def save(real, model, path, gate):
        saving.set()
        assert scoring.wait(10), "the test set was not scored while the model was saved"
        real(model, path, gate)

    def evaluate(real, *args, **kw):
        scoring.set()
        assert saving.wait(10), "the model was not saved while the test set was scored"
        return real(*args, **kw)

    r, model = _train_with_test(tmp_path, monkeypatch, save, evaluate)
    assert r.exit_code == 0, r.output
    assert re.search(r"^accuracy: \d+\.\d\d%$", r.output, re.M) and f"saved: {model}" in r.output
    assert NBSVMClassifier.load(model).predict(["good fun"]).shape == (1,)


def test_ctrl_c_while_the_test_set_is_scored_replaces_no_file(tmp_path, monkeypatch):
    """The model saved beside the scoring is written, but replaces the output only once the
    scoring is done: a Ctrl-C then ends as it says ('nothing was written over existing
    files'), the file there before untouched and no temporary file left."""
    import threading

    written = threading.Event()
    (tmp_path / "m.npz").write_bytes(b"the user's own file")

    def save(real, model, path, gate):
        def announced():
            written.set()  # written and synced: only the rename is left
            gate()

        real(model, path, announced)

    def interrupted(real, *args, **kw):
        assert written.wait(10)
        raise KeyboardInterrupt

    r, model = _train_with_test(tmp_path, monkeypatch, save, interrupted)
    assert r.exit_code == 130 and "nothing was written over existing files" in r.output
    assert model.read_bytes() == b"the user's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_a_failed_save_beside_the_scoring_is_the_error_said(tmp_path, monkeypatch):
    """The save's error is said after the scoring (its report is not printed: nothing was
    saved), over an error of the scoring itself; a save that worked is not done twice when
    the test set then fails."""

    def failing_save(real, model, path, gate):
        raise NBSVMError("no space left on the device", path=str(path))

    def bad_test_set(real, *args, **kw):
        raise NBSVMError("a malformed test line", path="t.txt", line=3)

    def scored(real, *args, **kw):
        return real(*args, **kw)

    r, model = _train_with_test(tmp_path, monkeypatch, failing_save, scored)
    assert r.exit_code == 2 and "no space left on the device" in r.output
    assert not re.search(r"^accuracy:", r.output, re.M) and not model.exists()
    r, model = _train_with_test(tmp_path, monkeypatch, failing_save, bad_test_set)
    assert r.exit_code == 2 and "no space left on the device" in r.output
    assert "malformed" not in r.output
    saves = []

    def counted(real, model, path, gate):
        saves.append(path)
        real(model, path, gate)

    r, model = _train_with_test(tmp_path, monkeypatch, counted, bad_test_set)
    said = "t.txt:3: a malformed test line (the model is trained and saved to"
    assert r.exit_code == 2 and said in r.output
    assert len(saves) == 1 and NBSVMClassifier.load(model).n_docs_ > 0


def test_an_interrupt_while_the_save_beside_still_writes_withdraws_it():
    """SIGTERM's timer (or a second Ctrl-C) while the save beside the scoring still wrote:
    the CLI then ended the process at once, its temporary file left (or the output
    replaced after 'nothing was written over existing files'). The go-ahead is withdrawn
    and the save waited for, then the interrupt raised."""
    import signal
    import threading
    import time

    from nbsvm.evaluation.heldout import Abandoned, _Beside

    class Stop(BaseException):
        pass

    def stop(signum, frame):
        raise Stop()

    ended = []

    def save(proceed):
        time.sleep(0.5)  # still writing when the interrupt comes
        try:
            proceed()
        except Abandoned:
            ended.append("withdrawn")
            raise
        ended.append("replaced")

    previous = signal.signal(signal.SIGUSR1, stop)
    try:
        with pytest.raises(Stop):
            with _Beside(save) as beside:
                beside.go_on()  # the scoring is done
                threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGUSR1)).start()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert ended == ["withdrawn"]


def test_an_interrupt_once_the_save_beside_is_past_its_gate_is_raised_at_once():
    """Written through a FIFO nobody reads (the gate is passed before a byte is written),
    the save may never end: SIGTERM and repeated Ctrl-C waited for it forever (the tree
    before the gate ended in a second). Past the gate, or interrupted a second time while
    a withdrawn save still writes its temporary file, the interrupt is raised at once."""
    import signal
    import threading
    import time

    from nbsvm.evaluation.heldout import _Beside

    class Stop(BaseException):
        pass

    def stop(signum, frame):
        raise Stop()

    release = threading.Event()

    def through_a_pipe(proceed):
        proceed()
        release.wait(30)  # a reader that never drains

    def writing_its_temporary_file(proceed):
        release.wait(30)
        proceed()

    previous = signal.signal(signal.SIGUSR1, stop)
    try:
        for work, signals in ((through_a_pipe, 1), (writing_its_temporary_file, 2)):
            release.clear()
            start = time.monotonic()
            with pytest.raises(Stop):
                with _Beside(work) as beside:
                    beside.go_on()
                    for k in range(signals):
                        threading.Timer(0.2 * (k + 1), os.kill,
                                        (os.getpid(), signal.SIGUSR1)).start()
            assert time.monotonic() - start < 5, work.__name__
            release.set()
    finally:
        release.set()
        signal.signal(signal.SIGUSR1, previous)


def test_a_kept_cache_is_not_reused_for_an_input_rewritten_with_its_mtime_put_back(tmp_path):
    """An input rewritten with the same size and its modification time put back (cp -p,
    rsync -a, an archive of fixed times) kept its cache key: the second run said 'feature
    cache: reused' and trained on the old labels (0% on its own training file). The key
    holds the inode's change time and number too."""
    from typer.testing import CliRunner

    from nbsvm.cli import app
    from nbsvm.datasets import fixture

    lines = fixture("reviews.txt").read_text().splitlines(keepends=True)
    flipped = [("neg" if ln.startswith("pos\t") else "pos") + ln[3:] for ln in lines]
    train, model = tmp_path / "train.txt", tmp_path / "m.npz"
    train.write_text("".join(lines))
    stamp = (1_700_000_000_000_000_000,) * 2
    os.utime(train, ns=stamp)
    cache = ["--keep-cache", "--cache-dir", str(tmp_path / "caches"), "--n-bits", "16"]
    run = lambda *args: CliRunner().invoke(app, [str(a) for a in args])  # noqa: E731
    assert run("train", train, "-o", model, *cache).exit_code == 0
    train.write_text("".join(flipped))  # the same size: pos and neg swapped
    os.utime(train, ns=stamp)
    r = run("train", train, "-o", model, *cache)
    assert r.exit_code == 0 and "reused" not in r.output, r.output
    r = run("eval", train, "-m", model, "--json")
    assert json.loads(r.stdout)["accuracy"] > 0.9
