"""Crafted and corrupted files never reach a compiled kernel (issue 6, items 2 and 3).

numba does not bounds-check, so every model, lexicon, learner and cache array is checked at
the boundary (nbsvm.io.npzfile.load_npz, the ``load`` methods, FeatureCache / RowCache reads).
Each case below writes a file that would otherwise feed a kernel bad data and expects one
clear NBSVMError naming the file (exit status 2 through the CLI, no traceback).
"""
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nbsvm.config import NEW_TOKENIZER
from nbsvm import NBLexicon, NBSVMClassifier
from nbsvm.cli import app
from nbsvm.learners.epochs import check_cache_fits
from nbsvm.errors import NBSVMError
from nbsvm.evaluation.evaluate import evaluate_cache
from nbsvm.data.batches import Batch
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.data.translate import translate
from nbsvm.data.rowcache import RowWriter
from nbsvm.data.rowencoder import RowEncoder
from nbsvm.workflows.learn import learn_sparse
from nbsvm.evaluation.sparse import load_learner
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.registry import make_learner
from nbsvm.io.npzfile import (FORMAT_VERSION, HEADER_KEY, MAX_HEADER_BYTES, checksum,
                                  load_npz, save_npz)
from nbsvm.text.hashing import Hasher

TRAIN = [("pos", "a great film, loved it"), ("pos", "great fun and a great cast"),
         ("pos", "loved the music"), ("neg", "an awful film"), ("neg", "awful, dull, boring"),
         ("neg", "the cast was dull")]
TEST = [("pos", "great fun"), ("neg", "awful and dull")]
runner = CliRunner()


def write_raw(path, header: dict, arrays: dict, *, fix_checksum=True, pickle_ok=False):
    """An .npz as save_npz would write it, but with any header and arrays (object ones too);
    ``fix_checksum``: its checksum made right for the header and arrays (format 2: both)."""
    header = dict(header)
    if fix_checksum:
        header["checksum"] = checksum({k: v for k, v in arrays.items() if v.dtype.kind in "biuf"},
                                      header)
    with zipfile.ZipFile(path, "w") as zf:
        for name, a in arrays.items():
            with zf.open(name + ".npy", "w") as fh:
                np.lib.format.write_array(fh, a, allow_pickle=pickle_ok)
        blob = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        with zf.open(HEADER_KEY + ".npy", "w") as fh:
            np.lib.format.write_array(fh, blob)
    return path


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("model")
    texts, labels = [t for _, t in TRAIN], [l for l, _ in TRAIN]
    path = tmp / "good.npz"
    NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=3).fit(texts, labels).save(path)
    return path


@pytest.fixture
def model_parts(model_file):
    return load_npz(model_file, "model")


@pytest.fixture
def data(tmp_path):
    test = tmp_path / "test.txt"
    test.write_text("".join(f"{l}\t{t}\n" for l, t in TEST))
    return test


def assert_cli_error(path, test, *needles):
    for cmd in (["eval", str(test), "--model", str(path), "-q"],
                ["predict", str(test), "--model", str(path)]):
        r = runner.invoke(app, cmd)
        assert r.exit_code == 2, (cmd, r.output, r.exception)
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        assert "Traceback" not in r.output
        errors = [l for l in r.output.splitlines() if l.startswith("error: ")]
        assert len(errors) == 1, r.output
        for n in (str(path),) + needles:
            assert n in errors[0], (n, errors[0])


def crafted_model(tmp_path, model_parts, edit, name="bad.npz"):
    header, arrays = model_parts
    header, arrays = json.loads(json.dumps(header)), {k: v.copy() for k, v in arrays.items()}
    edit(header, arrays)
    return write_raw(tmp_path / name, header, arrays)


def _set(name, fn):
    def edit(header, arrays):
        arrays[name] = fn(arrays[name])
    return edit


def _bucket(i, value):
    def fn(b):
        b = b.copy()
        b[i] = value
        return b
    return fn


MODEL_CASES = {
    "bucket_too_large": (_set("buckets", _bucket(-1, 1 << 10)), "outside the 10-bit range"),
    "bucket_huge": (_set("buckets", _bucket(-1, 2**31 - 1)), "outside the 10-bit range"),
    "bucket_negative": (_set("buckets", _bucket(0, -5)), "outside the 10-bit range"),
    "buckets_unsorted": (_set("buckets", lambda b: b[::-1].copy()), "not strictly increasing"),
    "buckets_repeated": (_set("buckets", lambda b: np.concatenate([b[:1], b[:-1]])),
                         "not strictly increasing"),
    "coef_wrong_shape": (_set("coef", lambda a: np.concatenate([a, a], axis=1)),
                         "do not match the header"),
    "ratios_wrong_outputs": (_set("ratios", lambda a: np.concatenate([a, a], axis=0)),
                             "for 1 output, but the arrays hold 2"),
    # more classes than the arrays were trained for: said so, before the settings that
    # follow the number of classes (eta0 'auto' with 3) are read
    "classes_more_than_trained": (lambda h, a: h.update(classes=["neg", "pos", "zzz"],
                                                        class_counts=[3, 3, 1]),
                                  "for 3 outputs, but the arrays hold 1"),
    "classes_without_counts": (lambda h, a: h.update(classes=["neg", "pos", "zzz"]),
                               "lists 3 classes but 2 class counts"),
    "state_wrong_shape": (_set("learner_state", lambda a: a[:, :2].copy()),
                          "do not match the header"),
    "buckets_int64": (_set("buckets", lambda a: a.astype(np.int64)), "do not match the header"),
    "coef_float64": (_set("coef", lambda a: a.astype(np.float64)), "do not match the header"),
    "coef_nan": (_set("coef", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0,
                                                 np.float32(np.nan), a)), "non-finite"),
    "ratios_inf": (_set("ratios", lambda a: a * np.float32(np.inf)), "non-finite"),
    "adagrad_negative": (_set("adagrad_sq", lambda a: -1 - a), "negative"),
    "no_adagrad": (lambda h, a: a.pop("adagrad_sq"), "do not match the header"),
    "n_bits_mismatch": (lambda h, a: h["hasher"].update(n_bits=12), "hasher settings"),
    "classes_not_strings": (lambda h, a: h.update(classes=[1, 2]), "classes"),
    "classes_repeated": (lambda h, a: h.update(classes=["pos", "pos"]), "repeated class"),
    "negative_counts": (lambda h, a: h.update(class_counts=[-1, 3]), "counts"),
    "params_bad": (lambda h, a: h["params"].update(optimizer="evil"), "optimizer"),
    "missing_array": (lambda h, a: a.pop("coef"), "corrupted model file"),
}


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_crafted_model(tmp_path, model_parts, data, case):
    edit, needle = MODEL_CASES[case]
    path = crafted_model(tmp_path, model_parts, edit)
    with pytest.raises(NBSVMError, match=needle) as e:
        NBSVMClassifier.load(path)
    assert e.value.path == str(path)
    assert_cli_error(path, data, needle)


def test_good_model_still_loads(model_file, data):
    r = runner.invoke(app, ["eval", str(data), "--model", str(model_file), "-q"])
    assert r.exit_code == 0, r.output


def test_object_array_is_never_unpickled(tmp_path, model_parts, data):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    def edit(header, arrays):
        arrays["coef"] = np.array([Payload()], dtype=object)

    path = crafted_model(tmp_path, model_parts, lambda h, a: None)
    header, arrays = model_parts
    arrays = dict(arrays, coef=np.array([Payload()], dtype=object))
    write_raw(path, header, arrays, pickle_ok=True)
    with pytest.raises(NBSVMError, match="refusing array 'coef' of dtype object"):
        NBSVMClassifier.load(path)
    assert_cli_error(path, data, "never unpickles")
    assert not marker.exists()


@pytest.mark.parametrize("dtype", ["<U4", "V8", [("a", "<i4"), ("b", "<f8")], "<M8[s]"])
def test_non_numeric_arrays_refused(tmp_path, model_parts, dtype):
    header, arrays = model_parts
    path = write_raw(tmp_path / "s.npz", header, dict(arrays, extra=np.zeros(3, dtype=dtype)))
    with pytest.raises(NBSVMError, match="refusing array 'extra'"):
        NBSVMClassifier.load(path)


def test_newer_format_asks_for_upgrade(tmp_path, model_parts, data):
    path = crafted_model(tmp_path, model_parts,
                         lambda h, a: h.update(format_version=FORMAT_VERSION + 1))
    with pytest.raises(NBSVMError, match="newer nbsvm.*upgrade nbsvm"):
        NBSVMClassifier.load(path)
    assert_cli_error(path, data, "upgrade")


@pytest.mark.parametrize("version", [0, "1", None, True, 1.5])
def test_bad_format_version(tmp_path, model_parts, version):
    path = crafted_model(tmp_path, model_parts, lambda h, a: h.update(format_version=version))
    with pytest.raises(NBSVMError, match="format_version"):
        NBSVMClassifier.load(path)


def test_checksum_mismatch_after_edit(tmp_path, model_parts, data):
    header, arrays = model_parts
    coef = arrays["coef"].copy()
    coef[0, 0] += 1.0
    path = write_raw(tmp_path / "edited.npz", header, dict(arrays, coef=coef),
                     fix_checksum=False)
    with pytest.raises(NBSVMError, match="checksum mismatch"):
        NBSVMClassifier.load(path)
    assert_cli_error(path, data, "checksum mismatch")


def test_header_over_the_cap(tmp_path, model_parts, data):
    path = crafted_model(tmp_path, model_parts,
                         lambda h, a: h.update(padding="x" * (MAX_HEADER_BYTES + 1)))
    with pytest.raises(NBSVMError, match="over the .*limit"):
        NBSVMClassifier.load(path)
    assert_cli_error(path, data, "limit")


def test_shape_larger_than_the_data(tmp_path, model_parts, data):
    """A member whose .npy header claims a huge shape is refused before any allocation."""
    path = crafted_model(tmp_path, model_parts, lambda h, a: None)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    raw = members["coef.npy"]
    old = repr(load_npz(path, "model")[1]["coef"].shape).encode()
    members["coef.npy"] = raw.replace(old, b"(1, 99999999999)".ljust(len(old)), 1)
    assert members["coef.npy"] != raw
    with zipfile.ZipFile(path, "w") as zf:
        for n, b in members.items():
            zf.writestr(n, b)
    with pytest.raises(NBSVMError, match="truncated model file: array 'coef'"):
        NBSVMClassifier.load(path)
    assert_cli_error(path, data, "coef")


def test_unexpected_member(tmp_path, model_file):
    path = tmp_path / "m.npz"
    path.write_bytes(model_file.read_bytes())
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("evil.pkl", b"\x80\x04N.")
    with pytest.raises(NBSVMError, match="unexpected members"):
        NBSVMClassifier.load(path)


# -- lexicon files -----------------------------------------------------------------------------

@pytest.fixture
def lexicon_parts(tmp_path):
    from nbsvm.io.document import Document
    from nbsvm.lexicon.build import build_lexicon
    docs = [Document(l, t, "x", i + 1) for i, (l, t) in enumerate(TRAIN)]
    path = tmp_path / "lex.npz"
    build_lexicon(docs, Hasher(ngrams=2, n_bits=10)).save(path)
    return load_npz(path, "lexicon")


LEXICON_CASES = {
    "bucket_too_large": (_set("buckets", _bucket(-1, 1 << 10)), "do not match"),
    "bucket_negative": (_set("buckets", _bucket(0, -1)), "do not match"),
    "buckets_repeated": (_set("buckets", lambda b: np.concatenate([b[:1], b[:-1]])),
                         "strictly increasing"),
    "counts_negative": (_set("counts", lambda c: c - 100), "negative counts"),
    "counts_wrong_shape": (_set("counts", lambda c: c[:, :-1].copy()), "do not match"),
    "counts_float": (_set("counts", lambda c: c.astype(np.float32)), "do not match"),
    "alpha_nan": (lambda h, a: h.update(alpha=float("nan")), "alpha"),
    "hasher_bits": (lambda h, a: h["hasher"].update(n_bits=64), "n_bits"),
}


@pytest.mark.parametrize("case", sorted(LEXICON_CASES))
def test_crafted_lexicon(tmp_path, lexicon_parts, case):
    _assert_refused(tmp_path, lexicon_parts, *LEXICON_CASES[case])


def _assert_refused(tmp_path, parts, edit, needle):
    """A lexicon file of ``parts`` edited by ``edit`` (checksum made right) is refused,
    the error matching ``needle`` and naming the file."""
    header, arrays = parts
    header, arrays = json.loads(json.dumps(header)), dict(arrays)
    edit(header, arrays)
    path = write_raw(tmp_path / "bad.npz", header, arrays)
    with pytest.raises(NBSVMError, match=needle) as e:
        NBLexicon.load(path)
    assert e.value.path == str(path)


@pytest.fixture
def pair_lexicon_parts(tmp_path):
    """A lexicon of 12 classes, most of whose counts are 0: written as pairs."""
    from nbsvm.io.document import Document
    from nbsvm.lexicon.build import build_lexicon
    rng = np.random.default_rng(0)
    docs = [Document(f"c{i % 12}", " ".join(rng.choice([f"w{j}" for j in range(400)], 6)),
                     "x", i + 1) for i in range(240)]
    path = tmp_path / "lex.npz"
    build_lexicon(docs, Hasher(ngrams=1, n_bits=12)).save(path)
    header, arrays = load_npz(path, "lexicon")
    assert "pair_counts" in arrays and "counts" not in arrays
    return header, arrays


def _swap_two(a):
    a = a.copy()
    a[[0, 1]] = a[[1, 0]]
    return a


PAIR_CASES = {
    "row_out_of_range": (_set("pair_rows", lambda r: np.where(r == r.max(), 12, r).astype(
        np.int32)), "out of range or order"),
    "column_out_of_range": (_set("pair_columns", lambda c: c + 1), "out of range or order"),
    "pairs_unordered": (lambda h, a: (a.update(pair_columns=_swap_two(a["pair_columns"])),
                                      a.update(pair_rows=_swap_two(a["pair_rows"]))),
                        "out of range or order"),
    "count_zero": (_set("pair_counts", lambda c: c * 0), "above 0"),
    "counts_short": (_set("pair_counts", lambda c: c[:-1].copy()), "shapes or types"),
    "rows_float": (_set("pair_rows", lambda r: r.astype(np.float64)), "shapes or types"),
    "class_counts_short": (lambda h, a: h.update(class_counts=h["class_counts"][:-1]),
                           "shapes or types"),
    "pairs_and_counts": (lambda h, a: a.update(counts=np.zeros((12, 3), np.int32)),
                         "pair arrays beside counts"),
}


@pytest.mark.parametrize("case", sorted(PAIR_CASES))
def test_crafted_pair_lexicon(tmp_path, pair_lexicon_parts, case):
    _assert_refused(tmp_path, pair_lexicon_parts, *PAIR_CASES[case])


# -- online learner files ----------------------------------------------------------------------

def _learner_file(tmp_path, name, **params):
    rng = np.random.default_rng(0)
    X = rng.random((30, 5))
    model = make_learner(name, **params)
    y = {"binary": np.where(X[:, 0] > 0.5, "a", "b"),
         "multiclass": np.array(["a", "b", "c"])[np.arange(30) % 3],
         "regression": X[:, 0] * 2.0,
         "multilabel": [("a",) if x > 0.5 else ("a", "b") for x in X[:, 0]]}[model.task]
    model.fit(X, y)
    path = tmp_path / f"{name}.npz"
    model.save(path)
    return path


def _rewrite(path, edit):
    header, arrays = load_npz(path, "learner")
    header, arrays = json.loads(json.dumps(header)), dict(arrays)
    edit(header, arrays)
    return write_raw(path, header, arrays)


def _grow(name):
    def edit(h, a):
        a[name] = np.concatenate([a[name], np.zeros((1,) + a[name].shape[1:], a[name].dtype)])
    return edit


LEARNER_CASES = {
    "weights_short": ("sgd", lambda h, a: a.update(v_=a["v_"][:-1].copy()), "array v_"),
    "weights_long": ("sgd", _grow("v_"), "array v_"),
    "weights_float32": ("sgd", lambda h, a: a.update(v_=a["v_"].astype(np.float32)), "array v_"),
    "weights_nan": ("sgd", lambda h, a: a.update(v_=a["v_"] * np.nan), "non-finite"),
    "state_short": ("sgd", lambda h, a: a.update(state_=a["state_"][:1].copy()), "array state_"),
    "extra_array": ("sgd", lambda h, a: a.update(evil_=np.zeros(3)), "unexpected array"),
    "missing_array": ("sgd", lambda h, a: a.pop("state_"), "missing arrays"),
    "features_mismatch": ("sgd", lambda h, a: h["state"].update(n_features_in_=500), "array v_"),
    "classes_not_strings": ("sgd", lambda h, a: h["state"].update(classes_=[0, 1]),
                            "list of strings"),
    "classes_unsorted": ("sgd", lambda h, a: h["state"].update(classes_=["b", "a"]), "sorted"),
    "too_many_classes": ("sgd", lambda h, a: h["state"].update(classes_=["a", "b", "c"]),
                         "3 classes"),
    "property_name": ("sgd", lambda h, a: h["state"].update(coef_=1), "unexpected state"),
    "mc_weights_rows": ("multiclass-hinge", _grow("weights_"), "array weights_"),
    "mc_classes_fewer": ("multiclass-hinge", lambda h, a: h["state"].update(classes_=["a", "b"]),
                         "expected float64 \\(2, 6\\)"),
    "ovr_estimator_short": ("ovr", lambda h, a: a.update(
        est1_weights_=a["est1_weights_"][:, :-1].copy()),
                            "array est1_weights_"),
    "ovr_estimators_missing": ("ovr", lambda h, a: h["state"].update(estimator_state_=[]),
                               "estimator_state_"),
}


@pytest.mark.parametrize("case", sorted(LEARNER_CASES))
def test_crafted_learner(tmp_path, case):
    name, edit, needle = LEARNER_CASES[case]
    path = _rewrite(_learner_file(tmp_path, name), edit)
    with pytest.raises(NBSVMError, match=needle) as e:
        OnlineLearner.load(path)
    assert e.value.path == str(path) and "corrupted learner file" in str(e.value)


INFO_EDITS = {
    "history not records": lambda h: h.update(history=[1, 2]),
    "corpus without its counts": lambda h: h.update(corpus={"documents": 1}),
    "thresholds of text": lambda h: h.update(thresholds=["x", "y"]),
    "auto changes a list": lambda h: h.update(auto={"changed": [1, 2]}),
    "calibration report a list": lambda h: h.update(calibration={"method": "x", "report": [1]}),
    "negative n_bits": lambda h: h["hasher"].update(n_bits=-1),
    "huge n_bits": lambda h: h["hasher"].update(n_bits=20_000),
}


@pytest.mark.parametrize("case", sorted(INFO_EDITS))
def test_info_of_a_header_edited_by_hand_is_an_error_or_a_description(tmp_path, model_parts,
                                                                      case):
    """info reads the header without the checksum: edited values raised AttributeError,
    KeyError, 'negative shift count' or the int-to-string limit, with a traceback."""
    path = crafted_model(tmp_path, model_parts, lambda h, a: INFO_EDITS[case](h))
    for extra in ([], ["--json"]):
        r = runner.invoke(app, ["info", str(path), *extra])
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        assert r.exit_code == 0 or (r.exit_code == 2 and "corrupted header" in r.output), r.output
        if r.exit_code == 0 and extra:
            json.loads(r.output)


def test_info_json_is_json_whatever_the_header_holds(tmp_path, model_parts):
    path = crafted_model(tmp_path, model_parts, lambda h, a: h["params"].update(eta0=float("nan")))
    r = runner.invoke(app, ["info", str(path), "--json"])
    assert r.exit_code == 0 and "NaN" not in r.output, r.output
    json.loads(r.output, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))


@pytest.mark.parametrize("n_bits", [-3, 50_000])
def test_learner_bits_out_of_range_are_refused_for_any_format(tmp_path, n_bits):
    """n_bits_ was checked for hashed formats only, then passed to the row encoder all the
    same: 'ValueError: negative shift count' from predict and eval."""
    path = _rewrite(_learner_file(tmp_path, "sgd"),
                    lambda h, a: h["state"].update(n_bits_=n_bits))
    test = tmp_path / "t.svm"
    test.write_text("1 1:0.5 3:1\n0 2:1\n")
    for cmd in (["predict", str(test), "-m", str(path)], ["eval", str(test), "-m", str(path)]):
        r = runner.invoke(app, cmd)
        assert r.exit_code == 2 and "corrupted learner file" in r.output, r.output
        assert f"n_bits_={n_bits}" in r.output


@pytest.mark.parametrize("name", ["sgd", "sgd-regressor", "adagrad", "pegasos", "pa", "mira",
                                  "multiclass-hinge", "ovr", "multilabel", "ogd"])
def test_learners_round_trip(tmp_path, name):
    path = _learner_file(tmp_path, name)
    OnlineLearner.load(path)


def test_hashed_learner_bits_beyond_features(tmp_path, monkeypatch):
    train = tmp_path / "t.review"
    train.write_text("good:1 film:2 #label#:positive\nbad:1 film:1 #label#:negative\n")
    model = learn_sparse(make_learner("sgd"), [train], fmt="blitzer", n_bits=6, epochs=1)
    # weights for the 3 buckets used: columns_ beyond 2**n_bits_ are refused
    assert model.columns_.size == 3 and model.columns_[-1] >= 2
    path = tmp_path / "c.npz"
    model.save(path)
    _rewrite(path, lambda h, a: h["state"].update(n_bits_=1))
    with pytest.raises(NBSVMError, match="n_bits_=1"):
        load_learner(path)
    # weights for every bucket: 2**n_bits_ beyond them are refused
    from nbsvm.workflows import learn
    monkeypatch.setattr(learn, "COMPACT_SHARE", 0.0)
    model = learn_sparse(make_learner("sgd"), [train], fmt="blitzer", n_bits=6, epochs=1)
    path = tmp_path / "h.npz"
    model.save(path)
    load_learner(path)
    _rewrite(path, lambda h, a: h["state"].update(n_bits_=20))
    with pytest.raises(NBSVMError, match="n_bits_=20"):
        load_learner(path)
    r = runner.invoke(app, ["predict", str(train), "--model", str(path)])
    assert r.exit_code == 2 and "n_bits_=20" in r.output, r.output


# -- feature caches ------------------------------------------------------------------------------

def _cache(tmp_path, n_docs=40):
    hasher = Hasher(ngrams=2, n_bits=10, **NEW_TOKENIZER)
    texts = [TRAIN[i % len(TRAIN)][1] + f" doc{i}" for i in range(n_docs)]
    with CacheWriter(tmp_path / "cache", hasher) as w:
        ids, offsets = hasher.batch(texts)
        w.add(Batch(ids, offsets, [TRAIN[i % len(TRAIN)][0] for i in range(n_docs)]))
        cache = w.close()
    cache.close()
    return tmp_path / "cache"


def _poke(folder, name, dtype, index, value):
    a = np.fromfile(folder / name, dtype=dtype)
    a[index] = value
    a.tofile(folder / name)


def _every_reader(folder):
    """Every way cache data reaches a kernel: replay, translation, evaluation."""
    rng = np.random.default_rng(0)
    small = dict(buffer_bytes=256, block_bytes=64)     # many blocks and groups
    for read in (lambda c: list(c.shuffled_groups(rng)),
                 lambda c: list(c.shuffled_groups(rng, **small)),
                 lambda c: list(c.batches(7)),
                 lambda c: list(c.translated_groups(np.zeros(1 << 10, np.int32), rng,
                                                    rewrite=False))):
        with pytest.raises(NBSVMError) as e:
            read(FeatureCache(folder))
        assert str(folder) in str(e.value)
        yield str(e.value)


CACHE_CASES = {
    "id_too_large": ("ids.i32", np.int32, 5, 1 << 10, "outside"),
    "id_huge": ("ids.i32", np.int32, -1, 2**31 - 1, "outside"),
    "id_negative": ("ids.i32", np.int32, 0, -7, "outside"),
    "label_code_outside": ("labels.i32", np.int32, 3, 2, "label code"),
    "label_code_negative": ("labels.i32", np.int32, -1, -1, "label code"),
    "offsets_backwards": ("offsets.i64", np.int64, 10, 0, "offsets"),
    "offset_beyond": ("offsets.i64", np.int64, 10, 10**9, "offsets"),
}


@pytest.mark.parametrize("case", sorted(CACHE_CASES))
def test_crafted_cache(tmp_path, case):
    name, dtype, index, value, needle = CACHE_CASES[case]
    folder = _cache(tmp_path)
    _poke(folder, name, dtype, index, value)
    for message in _every_reader(folder):
        assert needle in message, message


@pytest.mark.parametrize("name", ["ids.i32", "offsets.i64", "labels.i32"])
def test_truncated_cache(tmp_path, name):
    folder = _cache(tmp_path)
    data = (folder / name).read_bytes()
    (folder / name).write_bytes(data[:len(data) - 4])
    with pytest.raises(NBSVMError, match=f"truncated feature cache.*{name}|{folder}"):
        FeatureCache(folder)


@pytest.mark.parametrize("meta", [dict(id_limit=1 << 11), dict(id_limit=-1),
                                  dict(labels="pos"), dict(n_docs=-1)])
def test_crafted_cache_meta(tmp_path, meta):
    folder = _cache(tmp_path)
    m = json.loads((folder / "meta.json").read_text())
    m.update(meta)
    (folder / "meta.json").write_text(json.dumps(m))
    with pytest.raises(NBSVMError, match=str(folder).replace("\\", "\\\\")):
        FeatureCache(folder)


def test_cache_ids_beyond_the_model_columns(tmp_path):
    """Ids below the cache's own limit can still be beyond a model's columns."""
    folder = _cache(tmp_path)
    texts, labels = [t for _, t in TRAIN], [l for l, _ in TRAIN]
    clf = NBSVMClassifier(char_ngrams=0, ngrams=2, n_bits=10, epochs=1).fit(texts, labels)
    cache = FeatureCache(folder)
    assert cache.id_limit > clf.linear_.n_features
    with pytest.raises(NBSVMError, match="columns"):
        check_cache_fits(cache, clf.linear_.n_features)
    with pytest.raises(NBSVMError, match="outside"):           # the cache holds buckets
        evaluate_cache(clf, cache, columns=True)
    assert "accuracy" in evaluate_cache(clf, cache)            # as buckets it is fine


def test_checked_once_per_block(tmp_path, monkeypatch):
    import nbsvm.data.cache as features
    folder = _cache(tmp_path)
    calls = []
    real = features.check_ids
    monkeypatch.setattr(features, "check_ids", lambda a, n: calls.append(len(a)) or real(a, n))
    cache = FeatureCache(folder)
    rng = np.random.default_rng(0)
    for _ in range(3):
        list(cache.shuffled_groups(rng, buffer_bytes=256, block_bytes=64))
    n_blocks = len(calls) // 2
    assert n_blocks > 1
    list(cache.shuffled_groups(rng, buffer_bytes=256, block_bytes=64))
    assert len(calls) == 2 * n_blocks                   # ids + codes, first epoch only


def test_translate_refuses_foreign_batches():
    remap = np.zeros(16, np.int32)
    with pytest.raises(NBSVMError, match="outside"):
        translate(Batch(np.array([3, 16], np.int32), np.array([0, 2])), remap)
    with pytest.raises(NBSVMError, match="offsets"):
        translate(Batch(np.array([3, 1], np.int32), np.array([0, 5, 2])), remap)


def test_decision_batch_refuses_bad_columns(model_file):
    clf = NBSVMClassifier.load(model_file)
    n = clf.linear_.n_features
    with pytest.raises(NBSVMError, match="outside"):
        clf.decision_batch(Batch(np.array([n], np.int32), np.array([0, 1])), columns=True)
    with pytest.raises(NBSVMError, match="offsets"):
        clf.decision_batch(Batch(np.array([0], np.int32), np.array([0, 9])), columns=True)


# -- the online backend's row cache --------------------------------------------------------------

def _row_cache(tmp_path, task="binary"):
    from nbsvm.io.sparse import read_svmlight
    f = tmp_path / "rows.svm"
    f.write_text("".join(f"{'+1' if i % 2 else '-1'} {i % 5 + 1}:1 {i % 3 + 6}:0.5\n"
                         for i in range(30)))
    records = list(read_svmlight(f, labeled=True, index_base=0))
    with RowWriter(tmp_path / "rows", task) as writer:
        writer.add(records, *RowEncoder("svmlight").encode(records))
    return writer.close()


ROW_CASES = {
    "index_too_large": ("indices.i64", np.int64, 3, 50, "feature index"),
    "index_negative": ("indices.i64", np.int64, 0, -3, "feature index"),
    "offsets_backwards": ("offsets.i64", np.int64, 5, 0, "offsets of examples"),
    "offset_beyond": ("offsets.i64", np.int64, 5, 10**6, "offsets of examples"),
    "label_code": ("codes.i32", np.int32, 4, 7, "label codes"),
}


@pytest.mark.parametrize("case", sorted(ROW_CASES))
def test_crafted_row_cache(tmp_path, case):
    name, dtype, index, value, needle = ROW_CASES[case]
    cache = _row_cache(tmp_path)
    _poke(tmp_path / "rows", name, dtype, index, value)
    rng = np.random.default_rng(0)
    for kw in (dict(), dict(buffer_bytes=64, block_bytes=32)):
        with pytest.raises(NBSVMError, match=needle) as e:
            list(cache.shuffled_blocks(rng, 10, **kw))
        assert str(tmp_path) in str(e.value)


@pytest.mark.parametrize("piece", [1, 7, 1 << 24])
def test_arrays_are_read_in_pieces_whole_and_short_ones_refused(tmp_path, monkeypatch, piece):
    # a member is read piece by piece into its array (ZipExtFile.readinto copied the whole
    # of it through a bytes object: a model held each array twice while it loaded)
    from nbsvm.io import npzfile
    monkeypatch.setattr(npzfile, "READ_PIECE", piece)
    arrays = {"w": np.arange(1001, dtype=np.float32) / 3, "ids": np.arange(10, dtype=np.int64),
              "empty": np.zeros(0)}
    npzfile.save_npz(tmp_path / "m.npz", "model", {"x": 1}, arrays)
    header, loaded = npzfile.load_npz(tmp_path / "m.npz", "model")
    assert header["x"] == 1
    for name, want in arrays.items():
        assert loaded[name].dtype == want.dtype and np.array_equal(loaded[name], want)
