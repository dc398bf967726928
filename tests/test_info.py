"""`nbsvm info`: every kind of nbsvm file described from its header; anything else refused."""
import io
import json
import zipfile

import numpy as np
import pytest
from typer.testing import CliRunner

import nbsvm
from nbsvm import NBSVMClassifier
from nbsvm.models.checkpoint import Checkpoint
from nbsvm.cli import app
from nbsvm.io import npzfile

runner = CliRunner()

TRAIN = [("pos", "a great film, loved it"), ("pos", "great fun and a great cast"),
         ("pos", "loved the music!"), ("pos", "wonderful, moving and great"),
         ("pos", "a fun, touching story"),
         ("neg", "an awful film"), ("neg", "awful, dull and boring"),
         ("neg", "the cast was dull"), ("neg", "boring; awful plot")]
SMALL = ["--n-bits", "12", "--ngrams", "2", "--min-df", "1"]


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def ok(result):
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def info_json(path, *more):
    return json.loads(ok(run("info", path, "--json", *more)).stdout)


def clean_error(result, *needles):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [l for l in result.output.splitlines() if l.startswith("error: ")]
    assert len(errors) == 1, result.output
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("info")
    train = tmp / "train.txt"
    train.write_text("".join(f"{l}\t{t}\n" for l, t in TRAIN), encoding="utf-8")
    out = {"train": train}
    out["model"] = tmp / "m.npz"
    ok(run("train", train, "-o", out["model"], *SMALL, "--epochs", "3", "-q"))
    out["lexicon"] = tmp / "lex.npz"
    ok(run("lexicon", train, "-o", out["lexicon"], *SMALL[:4], "-q"))
    svm = tmp / "train.svm"
    svm.write_text("1 1:1 3:0.5\n-1 2:1 4:1\n1 1:0.5 5:1\n-1 2:0.5 4:0.2\n")
    out["learner"] = tmp / "pegasos.npz"
    ok(run("learn", svm, "-a", "pegasos", "--lambda", "0.01", "--epochs", "2",
           "-o", out["learner"], "-q"))
    texts, labels = [t for _, t in TRAIN], [l for l, _ in TRAIN]
    clf = NBSVMClassifier(n_bits=12, ngrams=2, min_df=1, epochs=3, seed=0).fit(texts, labels)
    out["checkpoint"] = tmp / "m.checkpoint.npz"
    Checkpoint(out["checkpoint"], every=1, identity={"inputs": ["train.txt"]}).save(
        clf, 2, np.random.default_rng(0))
    clf.ngram_map_ = {}
    out["nomap"] = tmp / "nomap.npz"
    clf.save(out["nomap"])
    return out


def test_model(files):
    info = info_json(files["model"])
    assert info["kind"] == "model" and info["description"] == "NBSVM model"
    assert info["format_version"] == npzfile.PLAIN_FORMAT == 2 and info["readable"]
    assert info["package_version"] == nbsvm.__version__
    assert info["classes"] == [{"name": "neg", "count": 4}, {"name": "pos", "count": 5}]
    assert info["training"]["n_docs"] == 9 and info["training"]["seen_buckets"] > 0
    assert info["settings"]["ngrams"] == 2 and info["settings"]["epochs"] == 3
    assert info["hasher"] == {"char_ngrams": 4, "n_bits": 12, "ngrams": 2, "seed": 0,
                             "char_min": 0, "lowercase": True, "split_scripts": True,
                             "nfkc": False, "long_words": 20}
    sizes = info["sizes"]
    assert sizes["n_bits"] == 12 and sizes["buckets"] == 4096
    clf = NBSVMClassifier.load(files["model"])
    assert sizes["stored_buckets"] == clf.linear_.n_features
    assert info["arrays"]["buckets"]["shape"] == [sizes["stored_buckets"]]
    assert info["file_bytes"] == files["model"].stat().st_size
    assert sizes["memory_to_load"] > info["array_bytes"]
    assert info["ngram_map"]["present"] and info["ngram_map"]["ngrams"] > 0
    assert len(info["checksum"]) == 64 and info["verified"] is False

    text = ok(run("info", files["model"])).stdout
    for needle in ("kind:", "NBSVM model (model)", "format:", f"nbsvm {nbsvm.__version__}",
                   "classes:", "neg (4), pos (5)", "documents:", "hash buckets:",
                   "2**12 = 4,096", "memory to load:", "n-gram map:", "yes,",
                   "not verified"):
        assert needle in text, (needle, text)


def test_model_without_ngram_map(files):
    info = info_json(files["nomap"])
    assert info["ngram_map"] == {"present": False, "ngrams": 0, "text_bytes": 0}
    assert "no (nbsvm explain shows bucket numbers)" in ok(run("info", files["nomap"])).stdout


def test_lexicon(files):
    info = info_json(files["lexicon"])
    assert info["kind"] == "lexicon" and info["description"] == "NB lexicon"
    assert info["classes"] == [{"name": "neg", "count": 4}, {"name": "pos", "count": 5}]
    assert info["training"]["n_docs"] == 9
    assert info["training"]["seen_buckets"] == info["arrays"]["buckets"]["shape"][0] > 0
    assert info["settings"] == {"alpha": 1.0} and info["hasher"]["n_bits"] == 12
    assert info["corpus"]["documents"] == 9 and info["corpus"]["ngrams"] > 0  # train --lexicon's
    assert info["package_version"] is None        # lexicon headers do not record it
    assert "(not recorded in this kind of file)" in ok(run("info", files["lexicon"])).stdout
    # the counts load as sparse pairs: no dense table of 2**n_bits (a 7 KB lexicon of
    # 2**31 buckets was said to take 16 GB)
    stored = info["training"]["seen_buckets"]
    from nbsvm.lexicon.paircounts import PairCounts
    pairs = PairCounts()
    pair = pairs.keys.itemsize + pairs.counts.itemsize  # what load keeps per class and bucket
    assert info["sizes"]["memory_to_load"] == info["array_bytes"] + pair * 2 * stored


def test_learner(files):
    info = info_json(files["learner"])
    assert info["kind"] == "learner" and info["description"] == "online learner"
    assert info["settings"]["learner"] == "Pegasos" and info["settings"]["task"] == "binary"
    assert info["settings"]["params"]["lam"] == 0.01
    assert info["settings"]["input"]["format"] == "svmlight"
    assert [c["name"] for c in info["classes"]] == ["-1", "1"]
    assert info["training"] == {"n_examples": 4, "n_features": 5}
    assert info["package_version"] == nbsvm.__version__
    assert info["ngram_map"] is None
    text = ok(run("info", files["learner"])).stdout
    assert "online learner (learner)" in text and "examples:" in text
    assert text.count("features:") == 1  # once, not under training and again under sizes


def test_checkpoint(files):
    info = info_json(files["checkpoint"])
    assert info["kind"] == "checkpoint" and info["description"] == "training checkpoint"
    assert info["training"]["after_epoch"] == 2 and info["training"]["n_docs"] == 9
    assert info["training"]["data"] == {"inputs": ["train.txt"]}
    assert [c["name"] for c in info["classes"]] == ["neg", "pos"]
    assert info["settings"]["ngrams"] == 2
    assert set(info["arrays"]) == {"S", "state"}
    assert "after epoch:" in ok(run("info", files["checkpoint"])).stdout


@pytest.mark.parametrize("kind", ["model", "lexicon", "learner", "checkpoint"])
def test_verify_reads_the_arrays_and_checks_the_checksum(files, kind):
    assert info_json(files[kind], "--verify")["verified"] is True
    assert "(verified)" in ok(run("info", files[kind], "--verify")).stdout


def test_only_the_header_is_read(files, monkeypatch):
    """Without --verify the array data is never read: one member is read in full (the
    header), the others only up to their .npy header."""
    reads = []
    real = npzfile._read_member
    monkeypatch.setattr(npzfile, "_read_member",
                        lambda zf, i, *a: reads.append(i.filename) or real(zf, i, *a))
    info_json(files["model"])
    assert reads == ["__header__.npy"]


def test_an_edited_array_shows_but_fails_verify(files, tmp_path):
    edited = tmp_path / "edited.npz"
    rewrite(files["model"], edited, array=("coef", lambda a: a + 1))
    assert info_json(edited)["kind"] == "model"
    clean_error(run("info", edited, "--verify"), str(edited), "checksum mismatch")


def test_a_newer_format_is_described_and_asks_for_an_upgrade(files, tmp_path):
    newer = tmp_path / "newer.npz"
    rewrite(files["model"], newer, header=lambda h: dict(h, format_version=99))
    info = info_json(newer)
    assert info["format_version"] == 99 and info["readable"] is False
    assert "upgrade nbsvm" in ok(run("info", newer)).stdout
    clean_error(run("info", newer, "--verify"), "cannot verify")


# -- anything that is not an nbsvm file: one error line, exit 2 ---------------------------

def test_a_text_file(files):
    clean_error(run("info", files["train"]), str(files["train"]),
                "not an nbsvm file (not an .npz archive)")


def test_a_plain_numpy_archive(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, a=np.arange(3))
    clean_error(run("info", path), str(path), "not an nbsvm file")


def test_a_missing_file_and_a_folder(tmp_path):
    clean_error(run("info", tmp_path / "nope.npz"), "nope.npz", "no such file")
    clean_error(run("info", tmp_path), str(tmp_path), "is a folder")


def test_a_truncated_file(files, tmp_path):
    cut = tmp_path / "cut.npz"
    cut.write_bytes(files["model"].read_bytes()[:2000])
    clean_error(run("info", cut), str(cut), "corrupted or truncated")


def test_a_pickled_array_is_refused_unread(files, tmp_path):
    """An object array beside a valid header: refused from its .npy header, never
    unpickled (the payload would raise if it ran)."""
    path = tmp_path / "pickled.npz"
    rewrite(files["model"], path, extra=("evil", np.array([Boom()], dtype=object)))
    clean_error(run("info", path), "refusing array 'evil'", "never unpickles")


def test_a_header_that_is_not_json(files, tmp_path):
    path = tmp_path / "badheader.npz"
    rewrite(files["model"], path, raw_header=b"{not json")
    clean_error(run("info", path), str(path), "corrupted")


class Boom:
    def __reduce__(self):
        return (_explode, ())


def _explode():
    raise AssertionError("unpickled!")


def rewrite(src, dst, header=None, array=None, extra=None, raw_header=None):
    """Copy an nbsvm file, changing its header (a function of the dict), one array
    (name, function), adding an array, or replacing the header bytes."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            name = item.filename[:-4]
            if name == "__header__" and (header or raw_header is not None):
                blob = raw_header if raw_header is not None else json.dumps(
                    header(json.loads(np.load(io.BytesIO(data)).tobytes()))).encode()
                data = npy(np.frombuffer(blob, dtype=np.uint8))
            elif array and name == array[0]:
                data = npy(array[1](np.load(io.BytesIO(data))))
            zout.writestr(item.filename, data)
        if extra:
            zout.writestr(extra[0] + ".npy", npy(extra[1], allow_pickle=True))


def npy(a, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=allow_pickle)
    return buf.getvalue()
