"""Quantized models (issue 18, item 5): pruning by contribution and int8 / float16 storage
against plain recomputations, and ``nbsvm quantize`` files used by every command on real
IMDB reviews."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from testhelpers import run_cli

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.io import npzfile
from nbsvm.models.quantize import quantize

NBSVM = Path(sys.executable).parent / "nbsvm"


@pytest.fixture(scope="module")
def reviews(imdb_slice):
    def read(split, n):
        out = []
        for label in ("pos", "neg"):
            for f in sorted((imdb_slice / split / label).glob("*.txt"))[:n]:
                out.append((f.read_text(encoding="utf-8"), label))
        return [t for t, _ in out], [lab for _, lab in out]
    return read("train", 500), read("test", 300)


@pytest.fixture(scope="module")
def saved(reviews, tmp_path_factory):
    (X, y), _ = reviews
    path = tmp_path_factory.mktemp("q") / "m.npz"
    NBSVMClassifier(ngrams=2, n_bits=18, epochs=3).fit(X, y).save(path)
    return path


def test_float32_quantize_keeps_every_score_bit_for_bit(saved, reviews, tmp_path):
    _, (Xt, _) = reviews
    clf = NBSVMClassifier.load(saved)
    quantize(clf, "float32")
    clf.save(tmp_path / "q.npz")
    back = NBSVMClassifier.load(tmp_path / "q.npz")
    assert np.array_equal(back.decision_function(Xt), NBSVMClassifier.load(saved)
                          .decision_function(Xt))
    _, arrays = npzfile.load_npz(tmp_path / "q.npz", "model")
    assert "adagrad_sq" not in arrays


@pytest.mark.parametrize("dtype", ["int8", "float16"])
def test_stored_values_are_the_rounded_ones(saved, tmp_path, dtype):
    original = NBSVMClassifier.load(saved)
    clf = NBSVMClassifier.load(saved)
    quantize(clf, dtype)
    clf.save(tmp_path / "q.npz")
    back = NBSVMClassifier.load(tmp_path / "q.npz")
    for name in ("ratios_", "coef_"):
        a = getattr(original, name).astype(np.float64)
        b = getattr(back, name).astype(np.float64)
        if dtype == "int8":          # one step per output: the largest |x| is 127 steps
            step = np.abs(a).max(axis=1, keepdims=True) / 127
            assert np.all(np.abs(a - b) <= step / 2 + 1e-6 * step)
            assert np.array_equal(b / step, np.rint(b / step).astype(np.float64)
                                  .clip(-127, 127)) or np.allclose(b / step, np.rint(b / step))
        else:
            assert np.array_equal(b, a.astype(np.float16).astype(np.float64))


def test_keep_drops_the_smallest_contributions(saved, reviews):
    _, (Xt, yt) = reviews
    original = NBSVMClassifier.load(saved)
    clf = NBSVMClassifier.load(saved)
    done = quantize(clf, "float32", keep=0.3)
    contribution = np.abs(original.ratios_ * original.coef_).max(axis=0)   # beta 1: r w
    seen = np.flatnonzero(original.column_of_ >= 0)
    kept = np.flatnonzero(clf.column_of_ >= 0)
    assert done["buckets_kept"] == len(kept) == int(np.ceil(0.3 * len(seen)))
    assert contribution[kept].min() >= np.sort(contribution[seen])[::-1][len(kept) - 1]
    cut = NBSVMClassifier.load(saved)
    quantize(cut, "float32", cutoff=float(np.median(contribution[seen])))
    assert np.all(contribution[np.flatnonzero(cut.column_of_ >= 0)]
                  >= np.median(contribution[seen]))
    assert clf.score(Xt, yt) > original.score(Xt, yt) - 0.05


def test_a_cutoff_above_every_contribution_is_refused(saved):
    """Every bucket dropped, the model predicted the class prior whatever the text."""
    clf = NBSVMClassifier.load(saved)
    top = float(np.abs(clf.ratios_ * clf.coef_).max())
    before = clf.column_of_.copy()
    with pytest.raises(NBSVMError, match="above the largest contribution of every bucket"):
        quantize(clf, "int8", cutoff=top * 1.01)
    assert np.array_equal(clf.column_of_, before) and "quantized_" not in clf.__dict__
    assert quantize(clf, "int8", cutoff=top * 0.99)["buckets_kept"] >= 1


def test_quantized_models_do_not_train_or_quantize_again(saved, reviews, tmp_path):
    (X, y), _ = reviews
    clf = NBSVMClassifier.load(saved)
    quantize(clf, "int8")
    clf.save(tmp_path / "q.npz")
    back = NBSVMClassifier.load(tmp_path / "q.npz")
    with pytest.raises(NBSVMError, match="does not train further"):
        back.partial_fit(X[:10], y[:10])
    with pytest.raises(NBSVMError, match="quantized already"):
        from nbsvm.workflows.quantize import quantize_file
        quantize_file(tmp_path / "q.npz", tmp_path / "qq.npz")
    with pytest.raises(NBSVMError, match="dtype must be"):
        quantize(NBSVMClassifier.load(saved), "int4")
    header, arrays = npzfile.load_npz(tmp_path / "q.npz", "model")
    for key in ("kind", "format_version", "checksum"):
        header.pop(key, None)
    arrays["coef_scale"] = -arrays["coef_scale"]
    npzfile.save_npz(tmp_path / "bad.npz", "model", header, arrays)
    with pytest.raises(NBSVMError, match="bad.npz.*int8 scales"):
        NBSVMClassifier.load(tmp_path / "bad.npz")


def test_cli_quantize_then_every_command(imdb_slice, tmp_path):
    """Real IMDB reviews through the installed command (train, quantize, eval of both); the
    quantized model then through every other command and the refusals in this process
    (typer's runner: no interpreter start each)."""
    model, small = tmp_path / "m.npz", tmp_path / "m.q.npz"
    subprocess.run([str(NBSVM), "train", str(imdb_slice / "train"), "-o", str(model), "-q",
                    "--n-bits", "20"], check=True, capture_output=True)
    out = subprocess.run([str(NBSVM), "quantize", str(model), "-o", str(small), "--keep",
                          "0.5"], check=True, capture_output=True, text=True).stdout
    assert "stored as: int8" in out and small.stat().st_size < model.stat().st_size / 4
    # -q as every command that writes a file takes it (it was "No such option: -q")
    assert run_cli("quantize", model, "-o", tmp_path / "q2.npz", "-q").returncode == 0
    accuracy = [json.loads(subprocess.run([str(NBSVM), "eval", "-m", str(m),
                                           str(imdb_slice / "test"), "--json"], check=True,
                                          capture_output=True, text=True).stdout)["accuracy"]
                for m in (model, small)]
    assert accuracy[1] > accuracy[0] - 0.01
    predicted = run_cli("predict", imdb_slice / "test", "-m", small, "-o", tmp_path / "p.csv")
    assert predicted.returncode == 0, predicted.stderr
    assert len((tmp_path / "p.csv").read_text().splitlines()) > 2000
    explained = run_cli("explain", "-m", small, "--text", "a great film")
    assert explained.returncode == 0 and explained.stdout
    info = run_cli("info", small)
    assert info.returncode == 0 and "int8" in info.stdout
    bad = run_cli("quantize", model, "-o", tmp_path / "x.npz", "--keep", "2")
    assert bad.returncode == 2 and "keep must be a share" in bad.stderr
    both = run_cli("quantize", model, "-o", tmp_path / "x.npz", "--keep", "0.5", "--cutoff", "0.1")
    assert both.returncode == 2 and "give one" in both.stderr     # both applied, unsaid
    assert not (tmp_path / "x.npz").exists()


def test_quantize_refuses_to_replace_its_source_and_float16_overflow(saved, tmp_path):
    import shutil
    from nbsvm.workflows.quantize import quantize_file
    copy = tmp_path / "same.npz"
    shutil.copy(saved, copy)
    with pytest.raises(NBSVMError, match="would replace the original"):
        quantize_file(copy, copy)
    # a missing model beside an existing output: 'FileNotFoundError' from the check above
    with pytest.raises(NBSVMError, match="missing.npz: no such file"):
        quantize_file(tmp_path / "missing.npz", copy)
    clf = NBSVMClassifier.load(saved)
    clf.linear_.S_[0, :3, 1] = 1e5                   # beyond float16's 65504
    with pytest.raises(NBSVMError, match="does not fit float16"):
        quantize(clf, "float16")


def test_the_names_of_dropped_buckets_leave_the_file(saved, tmp_path):
    """quantize --keep 0.0001 kept 1 of 1,568 buckets and the file stayed at 66% of its
    size: every n-gram name was written. Names follow the kept buckets."""
    original = NBSVMClassifier.load(saved)
    clf = NBSVMClassifier.load(saved)
    quantize(clf, "int8", keep=0.001)
    kept = set(np.flatnonzero(clf.column_of_ >= 0).tolist())
    assert original.ngram_map_ and set(clf.ngram_map_) <= kept < set(original.ngram_map_) | kept
    assert all(clf.ngram_map_[b] == original.ngram_map_[b] for b in clf.ngram_map_)
    clf.save(tmp_path / "q.npz")
    assert (tmp_path / "q.npz").stat().st_size < 0.2 * saved.stat().st_size
    assert NBSVMClassifier.load(tmp_path / "q.npz").ngram_map_ == clf.ngram_map_


@pytest.mark.parametrize("beta", [1.0, 0.8])
def test_contributions_are_ranked_chunk_by_chunk_as_at_once(monkeypatch, beta):
    # the whole (outputs, columns) product and its absolute value held a 462 MB model's
    # memory twice over (1.12 GB): they are taken a chunk of columns at a time
    from conftest import synthetic
    from nbsvm.models import quantize as q
    docs = synthetic(300, n_classes=3, seed=4)
    clf = NBSVMClassifier(n_bits=14, beta=beta, calibrate=None).fit(
        [d.text for d in docs], [d.label for d in docs])
    columns = np.flatnonzero(np.ones(clf.linear_.S_.shape[1], bool))[::-1].copy()
    learner = clf.linear_
    w, r = learner.coef(), learner.S_[:, :, 0]
    rest = np.ones(learner.n_outputs) if clf.interpolate == "scores" else clf.mean_abs_coef_
    full = np.abs(r * (beta * w + (1 - beta) * rest[:, None]) if beta != 1 else r * w)
    monkeypatch.setattr(q, "CHUNK_VALUES", 7)
    assert np.array_equal(q.largest_contributions(clf, columns), full[:, columns].max(axis=0))


def test_scales_and_the_float16_check_are_taken_chunk_by_chunk(monkeypatch, saved):
    """int8's scales and float16's overflow check copied a field of every kept column
    (with its absolute value: 20 Newsgroups quantized at 479 MB, 363 MB now); a chunk at a
    time gives the same maxima, and the same refusal."""
    from nbsvm.models import quantize as q
    clf = NBSVMClassifier.load(saved)
    columns = clf.column_of_[clf.column_of_ >= 0]
    S = clf.linear_.S_
    monkeypatch.setattr(q, "CHUNK_VALUES", 7)
    for field in (0, 1):
        np.testing.assert_array_equal(
            q.largest_abs(clf, columns, field), np.abs(S[:, columns, field]).max(axis=1))
        np.testing.assert_array_equal(
            q.scales(clf, field), np.abs(S[:, columns, field]).max(axis=1).astype(float) / 127)
    S[0, columns[-1], 0] = -7e4  # the last chunk's, negative: beyond float16's 65504
    with pytest.raises(NBSVMError, match="7e\\+04 does not fit float16"):
        quantize(clf, "float16")
