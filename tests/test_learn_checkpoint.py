"""``nbsvm learn --checkpoint-every / --resume``: an interrupted run, resumed, gives the model
an uninterrupted run gives, bit for bit, for every backend learner; other settings or data
are refused."""

import numpy as np
import pytest
from typer.testing import CliRunner

from nbsvm.cli import app
from nbsvm.data.cachestore import input_identity
from nbsvm.models.checkpoint import Checkpoint, checkpoint_path
from nbsvm.workflows.learn import learn_sparse
from nbsvm.evaluation.sparse import load_learner
from nbsvm.learners.options import make_learner_from_options
from test_cli import assert_clean_error, assert_ok
from testhelpers import Stop, blitzer_books, stop_at, write_task_rows

runner = CliRunner()
SHUFFLE = dict(buffer_bytes=4000, block_bytes=500)      # several groups per epoch


def _write(path, kind, n=400, seed=0):
    return write_task_rows(path, kind, n, seed)


KIND = {"sgd": "binary", "adagrad": "binary", "pegasos": "binary", "pa": "binary",
        "ovr": "multi", "mira": "multi", "multiclass-hinge": "multi", "multilabel": "ml",
        "sgd-regressor": "reg", "ogd": "reg"}


@pytest.mark.parametrize("algorithm", sorted(KIND))
def test_resumed_learner_equals_the_uninterrupted_one(tmp_path, algorithm):
    data = _write(tmp_path / "train.svm", KIND[algorithm])
    full = learn_sparse(make_learner_from_options(algorithm, {"--epochs": 5}), data, seed=3,
                        **SHUFFLE)
    ck = tmp_path / "m.checkpoint.npz"
    with pytest.raises(Stop):          # killed during epoch 3: the checkpoint is epoch 2's
        learn_sparse(make_learner_from_options(algorithm, {"--epochs": 5}), data, seed=3,
                     checkpoint=Checkpoint(ck, every=2, identity={"data": 1}),
                     callback=stop_at(3), **SHUFFLE)
    resumed = Checkpoint(ck, every=2, resume=True, identity={"data": 1})
    events = []
    back = learn_sparse(make_learner_from_options(algorithm, {"--epochs": 5}), data, seed=3,
                        checkpoint=resumed, callback=events.append, **SHUFFLE)
    assert resumed.resumed_from == 2 and {"stage": "resumed", "epoch": 2} in events
    assert [e["epoch"] for e in events if e["stage"] == "epoch"] == [3, 4, 5]
    assert [e["epoch"] for e in back.history_] == [1, 2, 3, 4, 5]
    header_a, a = full.saved_parts()
    header_b, b = back.saved_parts()
    assert header_a == header_b
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """Blitzer's processed books reviews (real data): 400 of each polarity."""
    tmp = tmp_path_factory.mktemp("books")
    paths = []
    for polarity in ("positive", "negative"):
        (tmp / f"{polarity}.review").write_text("".join(blitzer_books(polarity)[:400]), "latin-1")
        paths.append(tmp / f"{polarity}.review")
    return paths


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_cli_resumes_a_killed_run_and_refuses_other_settings(tmp_path, books):
    args = ["learn", *map(str, books), "-a", "pa", "--epochs", "4", "--seed", "2", "-q"]
    assert_ok(runner.invoke(app, args + ["-o", str(tmp_path / "full.npz")]))
    model = tmp_path / "m.npz"
    ck = checkpoint_path(model)
    # the run the CLI would make, interrupted after its epoch-2 checkpoint
    identity = {"inputs": [input_identity(p) for p in map(str, books)],
                "reader": {"format": "auto", "strict": False}, "lexicon": None}
    with pytest.raises(Stop):
        learn_sparse(make_learner_from_options("pa", {"--epochs": 4, "--seed": 2}),
                     list(map(str, books)), seed=2, callback=stop_at(3),
                     checkpoint=Checkpoint(ck, every=2, identity=identity))
    saved = ck.read_bytes()
    out = runner.invoke(app, args + ["-o", str(model), "--resume", "--C", "0.5"])
    # both values named: a default changed since (multiclass-hinge's schedule) is plain
    assert_clean_error(out, "other settings (C: 1.0 there, 0.5 now)")
    assert ck.read_bytes() == saved             # a refused resume leaves it alone
    out = runner.invoke(app, args[:-1] + ["-o", str(model), "--resume"])
    assert_ok(out)
    assert "resumed after epoch: 2" in out.output
    a, b = load_learner(tmp_path / "full.npz"), load_learner(model)
    assert all(np.array_equal(x, y) for x, y in zip(a.saved_parts()[1].values(),
                                                    b.saved_parts()[1].values()))
    assert not ck.exists()                      # removed once the model is written


def _stopped_after_a_checkpoint(data, model):
    """``learn -a pa`` of a named file stopped in epoch 3, its checkpoint of epoch 2 left."""
    ck = checkpoint_path(model)
    identity = {"inputs": [input_identity(str(data))], "reader": {"format": "named",
                                                                    "strict": False},
                "lexicon": None}
    with pytest.raises(Stop):
        learn_sparse(make_learner_from_options("pa", {"--epochs": 4, "--seed": 2}), [str(data)],
                     fmt="named", seed=2, callback=stop_at(3),
                     checkpoint=Checkpoint(ck, every=2, identity=identity))
    return ck


def test_a_checkpoint_keeps_its_encoding_and_one_written_before_resumes(tmp_path):
    """A UTF-8 checkpoint resumed under --encoding latin-1 mixed two feature spaces (café
    in epochs 1-2, cafÃ© after); one written before encodings were kept resumes with the
    encoding given again (a latin-1 one was refused)."""
    from nbsvm.io.npzfile import load_npz, save_npz

    data = tmp_path / "d.named"
    data.write_text("".join(f"{'pos' if i % 2 else 'neg'} café_{i % 7}:1 naïve_{i % 3}:1\n"
                            for i in range(200)), encoding="utf-8")
    model = tmp_path / "m.npz"
    ck = _stopped_after_a_checkpoint(data, model)
    args = ["learn", str(data), "--format", "named", "-a", "pa", "--epochs", "4", "--seed", "2",
            "-q", "-o", str(model), "--resume"]
    out = runner.invoke(app, args + ["--encoding", "latin-1"])
    assert_clean_error(out, "other settings (encoding: 'utf-8' there, 'iso8859-1' now)")
    header, arrays = load_npz(ck, "checkpoint")            # as written before: no encoding
    del header["fingerprint"]["params"]["encoding"]
    save_npz(ck, "checkpoint", header, arrays)
    out = runner.invoke(app, args)
    assert_ok(out)
    assert "resumed after epoch: 2" in out.output


def test_another_commands_checkpoint_is_named_as_such(tmp_path):
    """A file-safety hunt: a learn checkpoint found by train at the same -o stem (or the
    reverse) was refused with some 30 'differing settings'; it is named for what it is."""
    data = tmp_path / "d.named"
    data.write_text("".join(f"{'pos' if i % 2 else 'neg'} w_{i % 7}:1 v_{i % 3}:1\n"
                            for i in range(200)), encoding="utf-8")
    model = tmp_path / "m.npz"
    _stopped_after_a_checkpoint(data, model)
    text = tmp_path / "t.txt"
    text.write_text("".join(f"{'pos' if i % 2 else 'neg'}\tword{i % 7} other{i % 3}\n"
                            for i in range(200)))
    out = runner.invoke(app, ["train", str(text), "-o", str(model), "--resume", "-q"])
    assert_clean_error(out, "the checkpoint was written by nbsvm learn, not nbsvm train")
