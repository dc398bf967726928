"""Progress bars: documents/s, MB/s from the document streams, ETA by bytes when the size of
the inputs is known; --quiet and --json on every command that prints a report."""
import gzip
import json
import time

import pytest
import typer.main
from typer.testing import CliRunner

from nbsvm.cli import app
from nbsvm.cli import common
from nbsvm.cli.common import DocumentStream, input_bytes
from nbsvm.cli.progress import ProgressReporter
from nbsvm.io.decoding import ReadStats
from nbsvm.io.document import Document

runner = CliRunner()

TRAIN = [("pos", "a great film, loved it"), ("pos", "great fun and a great cast"),
         ("neg", "an awful film"), ("neg", "awful, dull and boring"),
         ("pos", "wonderful, moving and great"), ("neg", "the cast was dull")]


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def ok(result):
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def stream_of(texts, inputs=()):
    docs = (Document("pos", t, "<test>", i + 1) for i, t in enumerate(texts))
    return DocumentStream(docs, ReadStats(), inputs)


# -- bytes read ---------------------------------------------------------------------------

def test_the_stream_counts_utf8_bytes_of_the_text():
    texts = ["plain ascii", "café crème", "日本語のレビュー", "emoji 🎬", "", "\ufffd replaced"]
    s = stream_of(texts)
    assert s.started is None and s.bytes_read == 0
    seen = []
    for doc in s:
        seen.append(doc.text)
        assert s.bytes_read == sum(len(t.encode()) for t in seen)   # as the documents pass
        assert not s.done
    assert seen == texts and s.done and s.finished >= s.started
    assert s.bytes_read == sum(len(t.encode("utf-8")) for t in texts)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_counting_costs_little_beside_hashing():
    # measured against the work the stream feeds, in the same run (a ratio, not a time, so
    # that a loaded machine does not fail it): counting the bytes of a document costs under
    # a tenth of hashing it (about 0.3 against 30 microseconds here)
    from nbsvm.text.hashing import Hasher

    texts = ["a short review of a film, " * 40] * 20_000
    hasher = Hasher()
    hasher.batch(texts[:10])                        # compiled before timing

    def best_of(run, k=3):
        times = []
        for _ in range(k):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        return min(times)

    bare = best_of(lambda: [None for _ in texts])
    counting = best_of(lambda: [None for _ in stream_of(texts)]) - bare
    hashing = best_of(lambda: hasher.batch(texts))
    s = stream_of(texts)
    for _ in s:
        pass
    assert s.bytes_read == len(texts[0]) * len(texts)
    assert counting < 0.1 * hashing, (counting, hashing)


def test_input_bytes_of_files_and_aclimdb_folders(tmp_path):
    a = tmp_path / "a.txt"
    a.write_bytes(b"pos\tgood\n" * 10)
    b = tmp_path / "b.csv"
    b.write_bytes(b"text,label\nfine,pos\n")
    assert input_bytes([a, str(b)]) == 90 + 20
    split = tmp_path / "train"
    for label, reviews in (("pos", [b"great", b"loved it"]), ("neg", [b"awful"]),
                           ("unsup", [b"not counted at all"])):
        (split / label).mkdir(parents=True)
        for i, text in enumerate(reviews):
            (split / label / f"{i}_7.txt").write_bytes(text)
    (split / "pos" / ".hidden").write_bytes(b"not a document")
    (split / "pos" / "53803").write_bytes(b"no suffix")      # a document, as the reader has it
    (split / "imdbEr.txt").write_bytes(b"a file beside the label folders")
    assert input_bytes([split]) == len(b"great") + len(b"loved it") + len(b"awful") + 9
    assert input_bytes([split, a]) == 27 + 90


def test_input_bytes_unknown(tmp_path):
    gz = tmp_path / "a.txt.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(b"pos\tgood\n")
    assert input_bytes([gz]) is None                    # compressed: not the text's size
    assert input_bytes(["-"]) is None                   # standard input
    assert input_bytes([tmp_path / "missing.txt"]) is None
    assert input_bytes([object()]) is None              # an open file or such


# -- the reporter -------------------------------------------------------------------------

def fields(reporter, description):
    task = next(t for t in reporter.progress.tasks if t.description == description)
    return task


def test_a_reading_stage_shows_mb_per_second_and_follows_the_bytes(tmp_path):
    path = tmp_path / "t.txt"
    texts = ["x" * 1000] * 3000
    path.write_text("".join(f"pos\t{t}\n" for t in texts))
    s = stream_of(texts, [path])
    it = iter(s)
    with ProgressReporter(streams=[s]) as rep:
        for i in range(1, 3001):
            next(it)
            if i % 512 == 0:
                time.sleep(0.002)
                rep({"stage": "hash", "docs": i})
                task = fields(rep, "hash")
                assert task.total == path.stat().st_size        # ETA by bytes
                assert task.completed == s.bytes_read == i * 1000
                assert "MB/s" in task.fields["rate"] and "docs/s" in task.fields["rate"]
                assert f"{i:,} docs" in task.fields["count"] and " MB" in task.fields["count"]
        with pytest.raises(StopIteration):
            next(it)
        rep({"stage": "hash", "docs": 3000})
        rep({"stage": "epoch", "epoch": 1, "epochs": 2, "docs": 512, "total": 3000,
             "loss": 0.5})
        hashed, epoch = fields(rep, "hash"), fields(rep, "epoch 1/2")
        assert hashed.completed == hashed.total and hashed.finished     # read to the end
        assert epoch.total == 3000 and epoch.completed == 512           # ETA by documents
        assert "MB/s" not in epoch.fields["rate"]                      # reads no input
        assert epoch.fields["extra"] == "loss 0.5000"
        assert epoch.fields["count"] == "512/3,000 docs"


def test_stages_take_the_stream_they_read():
    """train --test: the lexicon pass reads the training stream, 'hash test' the test
    stream, epochs and the final 'eval' (from a cache) read none."""
    train, test = stream_of(["a"] * 10), stream_of(["bb"] * 10)
    with ProgressReporter(streams=[train, test]) as rep:
        list(train)
        rep({"stage": "hash", "docs": 10})
        rep({"stage": "epoch", "epoch": 1, "epochs": 2, "docs": 10, "total": 10})
        rep({"stage": "epoch", "epoch": 2, "epochs": 2, "docs": 5, "total": 10})
        list(test)                          # started while epoch 2 runs
        rep({"stage": "epoch", "epoch": 2, "epochs": 2, "docs": 10, "total": 10})
        rep({"stage": "hash test", "docs": 10})
        rep({"stage": "eval", "docs": 10})
        bars = rep.bars
        assert bars[("hash", None)].stream is train
        assert bars[("hash test", None)].stream is test
        assert bars[("epoch", 1)].stream is None and bars[("epoch", 2)].stream is None
        assert bars[("eval", None)].stream is None


def test_streaming_first_epoch_reads_the_input():
    """With --lexicon the first epoch trains while reading (no total): it shows MB/s."""
    s = stream_of(["abc"] * 5)
    with ProgressReporter(streams=[s]) as rep:
        list(s)
        rep({"stage": "lexicon done", "docs": 0})
        rep({"stage": "epoch", "epoch": 1, "epochs": 3, "docs": 5, "total": None, "loss": 1.0})
        assert rep.bars[("epoch", 1)].stream is s


def test_events_may_carry_bytes_and_units():
    with ProgressReporter(streams=[]) as rep:
        rep({"stage": "read", "docs": 100, "unit": "examples", "bytes": 1000,
             "total_bytes": 4000})
        time.sleep(0.01)
        rep({"stage": "read", "docs": 200, "unit": "examples", "bytes": 2000,
             "total_bytes": 4000})
        task = fields(rep, "read")
        assert task.total == 4000 and task.completed == 2000
        assert "examples/s" in task.fields["rate"] and "MB/s" in task.fields["rate"]
        rep({"stage": "tune", "docs": 1, "total": 4})
        assert fields(rep, "tune").fields["count"] == "1/4 trainings"


def test_quiet_draws_nothing_but_still_stops_on_ctrl_c():
    s = stream_of(["abc"] * 5)
    with ProgressReporter(quiet=True, streams=[s]) as rep:
        list(s)
        rep({"stage": "hash", "docs": 5})
        assert rep.bars == {}
        common._interrupted.set()
        try:
            with pytest.raises(KeyboardInterrupt):
                rep({"stage": "hash", "docs": 5})
        finally:
            common._interrupted.clear()


def test_documents_registers_its_stream_for_the_bars(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("pos\tgood\nneg\tbad\n")
    with common.cli_errors():
        s = common.documents([str(path)], "auto", "text", "label")
        assert common.command_streams == [s]
        assert s.total_bytes() == path.stat().st_size
        assert [d.text for d in s] == ["good", "bad"] and s.bytes_read == 7
    assert common.command_streams == []     # the next command in this process starts afresh


def test_a_command_leaves_no_stream_behind(tmp_path):
    """A reporter made outside a command (or by the next one) never takes the streams of a
    command that ran before it in the same process."""
    path = tmp_path / "t.txt"
    path.write_text("".join(f"{l}\t{t}\n" for l, t in TRAIN), encoding="utf-8")
    ok(run("lexicon", path, "-o", tmp_path / "l.npz", "--n-bits", "10", "-q"))
    assert common.command_streams == []
    with ProgressReporter() as rep:
        rep({"stage": "read", "docs": 5})
        assert rep.bars[("read", None)].stream is None


# -- the commands -------------------------------------------------------------------------

REPORTS = {"lexicon": {"--quiet", "--json"}, "train": {"--quiet", "--json"},
           "eval": {"--quiet", "--json"}, "learn": {"--quiet", "--json"},
           "tune": {"--quiet", "--json"}, "predict": {"--quiet"}, "info": {"--json"},
           "explain": {"--json"}}


def test_every_command_that_prints_a_report_has_quiet_and_json():
    group = typer.main.get_command(app)
    assert set(group.commands) >= set(REPORTS)
    for name, wanted in REPORTS.items():
        opts = {o for p in group.commands[name].params for o in p.opts}
        assert wanted <= opts, (name, wanted - opts)
        if "--quiet" in wanted:
            assert "-q" in opts, name


@pytest.fixture
def train_file(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("".join(f"{l}\t{t}\n" for l, t in TRAIN), encoding="utf-8")
    return path


SMALL = ["--n-bits", "10", "--ngrams", "2"]


def test_lexicon_bar_json_and_quiet(train_file, tmp_path):
    r = ok(run("lexicon", train_file, "-o", tmp_path / "l.npz", *SMALL))
    assert "docs/s" in r.stderr and "MB/s" in r.stderr and "lexicon" in r.stderr
    assert "buckets seen:" in r.stdout
    r = ok(run("lexicon", train_file, "-o", tmp_path / "l.npz", *SMALL, "-q"))
    assert r.stderr == "" and "buckets seen:" in r.stdout
    r = ok(run("lexicon", train_file, "-o", tmp_path / "l.npz", *SMALL, "--json"))
    assert r.stderr == ""
    rep = json.loads(r.stdout)
    assert rep["documents"] == 6 and rep["classes"] == {"neg": 3, "pos": 3}
    assert rep["n_buckets"] == 1024 and 0 < rep["buckets_seen"] <= 1024
    assert rep["text_bytes"] == sum(len(t.encode()) for _, t in TRAIN)
    assert rep["saved"] == str(tmp_path / "l.npz")


def test_predict_bar_and_quiet(train_file, tmp_path):
    model = tmp_path / "m.npz"
    ok(run("train", train_file, "-o", model, *SMALL, "--min-df", "1", "--epochs", "2", "-q"))
    out = tmp_path / "p.csv"
    r = ok(run("predict", train_file, "-m", model, "-o", out))
    assert "predict" in r.stderr and "MB/s" in r.stderr and "predictions: 6 written" in r.stderr
    r = ok(run("predict", train_file, "-m", model, "-o", out, "-q"))
    assert r.stderr == "" and r.stdout == ""
    r = ok(run("predict", train_file, "-m", model, "-q"))
    assert r.stderr == "" and len(r.stdout.splitlines()) == 7


@pytest.fixture
def svm_files(tmp_path):
    train = tmp_path / "t.svm"
    train.write_text("1 1:1 3:0.5\n-1 2:1 4:1\n1 1:0.5 5:1\n-1 2:0.5 4:0.2\n" * 20)
    return train


def test_learn_json_without_and_with_test(svm_files, tmp_path):
    model = tmp_path / "l.npz"
    r = ok(run("learn", svm_files, "-a", "pegasos", "--lambda", "0.01", "--epochs", "3",
               "-o", model, "--json"))
    summary = json.loads(r.stdout)
    assert summary["learner"] == "Pegasos" and summary["examples"] == 80
    assert summary["epochs"] == 3 and len(summary["history"]) == 3
    assert summary["classes"] == ["-1", "1"] and summary["saved"] == str(model)
    assert r.stderr == ""
    r = ok(run("learn", svm_files, "-a", "pegasos", "--lambda", "0.01", "--epochs", "3",
               "-o", model, "--json", "--test", svm_files))
    rep = json.loads(r.stdout)
    assert rep["accuracy"] == 1.0 and rep["training"]["examples"] == 80


def test_learn_shows_reading_and_epoch_bars(svm_files, tmp_path):
    r = ok(run("learn", svm_files, "-a", "pegasos", "--epochs", "3", "-o", tmp_path / "l.npz"))
    assert "examples" in r.stderr and "epochs" in r.stderr and "3/3" in r.stderr
    assert len([l for l in r.stdout.splitlines() if l.startswith("epoch ")]) == 3
    r = ok(run("learn", svm_files, "-a", "pegasos", "--epochs", "3", "-o", tmp_path / "l.npz",
               "-q"))
    assert r.stderr == ""
