"""Explanations of a hashed model (issue 7, item 3): contributions that add up to the score,
n-gram names that hash to their buckets with counts that match a plain-Python count, and
the `nbsvm explain` command."""
import json
from collections import Counter

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import synthetic
from nbsvm import NBSVMClassifier, NBSVMError
from nbsvm.cli import app
from nbsvm.evaluation.bucket_names import TextSample, ngram_map
from nbsvm.evaluation.ngram_map import decode_map, encode_map
from nbsvm.evaluation.contributions import contributions
from nbsvm.evaluation.explain import explain_text, top_features
from nbsvm.text.hashing import bucket_of

runner = CliRunner()
DOCS = synthetic(800, seed=4)
TEXTS = [d.text for d in DOCS]
LABELS = [d.label for d in DOCS]
PROBES = ["w1 w2 w3 w1 w2", "", "!!!", "w7 w8 w9 w10 w11 w12 w13 w14 great", TEXTS[0], TEXTS[5]]


@pytest.mark.parametrize("kw", [dict(), dict(beta=0.6), dict(beta=0.6, interpolate="weights"),
                                dict(optimizer="sgd", loss="hinge"), dict(char_ngrams=3)],
                         ids=["beta1", "scores", "weights", "sgd", "chars"])
def test_contributions_add_up_to_the_score(kw):
    clf = NBSVMClassifier(ngrams=2, n_bits=12, epochs=3, **kw).fit(TEXTS, LABELS)
    scores = clf.decision_function(PROBES)
    for text, score in zip(PROBES, scores):
        for cls in clf.classes_:
            e = explain_text(clf, text, cls)
            total = e["constant"] + sum(r["contribution"] for r in e["ngrams"])
            sign = 1 if cls == clf.classes_[1] else -1
            assert total == pytest.approx(sign * score, rel=1e-6, abs=1e-6)
            assert e["score"] == pytest.approx(sign * score, rel=1e-9, abs=1e-12)
    # each bucket counts once: repeats and collisions add nothing and say so
    e = explain_text(clf, "w1 w2 w3 w1 w2")
    notes = [r["note"] for r in e["ngrams"] if r["ngram"] == "w1"]
    assert notes == ["", "repeat"]


def test_a_lone_surrogate_is_explained_as_it_is_scored():
    """decision_function reads a lone surrogate as U+FFFD (as undecodable bytes are);
    explain_text hashed it raw: its n-gram 'not in the model' and the contributions no
    longer summing to the score (2.92 against 4.12)."""
    clf = NBSVMClassifier(n_bits=14, min_df=1, epochs=5).fit(
        ["bad \ufffdzzz"] * 10 + ["good day"] * 10, ["neg"] * 10 + ["pos"] * 10)
    e = explain_text(clf, "bad \ud800zzz")
    assert e["constant"] + sum(r["contribution"] for r in e["ngrams"]) == \
        pytest.approx(e["score"], rel=1e-6)
    assert "\ufffdzzz" in [r["ngram"] for r in e["ngrams"] if r["note"] == ""]


def test_contributions_of_several_classes():
    docs = synthetic(900, n_classes=3, seed=2)
    clf = NBSVMClassifier(ngrams=1, n_bits=12, epochs=3).fit([d.text for d in docs],
                                                             [d.label for d in docs])
    scores = clf.decision_function(PROBES)
    for text, row in zip(PROBES, scores):
        for k, cls in enumerate(clf.classes_):
            e = explain_text(clf, text, cls)
            assert e["constant"] + sum(r["contribution"] for r in e["ngrams"]) == \
                pytest.approx(row[k], rel=1e-6, abs=1e-6)
    assert explain_text(clf, PROBES[3])["class"] == clf.predict([PROBES[3]])[0]
    with pytest.raises(NBSVMError, match="unknown class 'nope'"):
        explain_text(clf, "x", "nope")


def test_the_map_names_buckets_with_their_ngrams_and_counts():
    """Small n_bits: many collisions. Every name hashes to its bucket; the counts equal a
    plain-Python count of the sample's n-grams; the most frequent come first."""
    clf = NBSVMClassifier(ngrams=2, n_bits=9, epochs=2, min_df=1, char_ngrams=0).fit(TEXTS, LABELS)
    mapping = ngram_map(clf, TEXTS, top=40, per_bucket=3)
    h = clf.hasher_
    naive = {}
    for t in TEXTS:
        for key in h.keys(t)[0]:
            naive.setdefault(bucket_of(key, h.n_bits, h.seed), Counter())[key] += 1
    assert mapping and any(len(v) > 1 for v in mapping.values())      # collisions shown
    strongest = _strongest_buckets(clf, 40)
    assert set(mapping) == strongest & set(naive)
    for b, names in mapping.items():
        assert [n for _, n in names] == sorted((n for _, n in names), reverse=True)
        for s, n in names:
            assert bucket_of(s, h.n_bits, h.seed) == b and naive[b][s] == n
        assert names[0][1] == max(naive[b].values())
    assert decode_map(encode_map(mapping), h.n_bits) == mapping


def test_the_map_counts_batch_by_batch_as_it_counts_at_once(monkeypatch):
    """The counts are merged batch by batch in arrays (a Counter of every distinct n-gram's
    string took 315 MB on a sample of 5-grams): two texts a batch name the same buckets
    with the same n-grams and counts as one batch, each bucket's most frequent of the
    plain-Python count, most frequent first."""
    from nbsvm.evaluation import bucket_names

    clf = NBSVMClassifier(ngrams=3, n_bits=8, epochs=1, min_df=1, char_ngrams=0).fit(TEXTS, LABELS)
    whole = ngram_map(clf, TEXTS, top=100, per_bucket=3)
    monkeypatch.setattr(bucket_names, "MAP_BATCH", 2)
    assert ngram_map(clf, TEXTS, top=100, per_bucket=3) == whole
    h = clf.hasher_
    naive = {}
    for t in TEXTS:
        for key in h.keys(t)[0]:
            naive.setdefault(bucket_of(key, h.n_bits, h.seed), Counter())[key] += 1
    for b, names in whole.items():
        assert [n for _, n in names] == sorted(naive[b].values(), reverse=True)[:3]
        assert all(naive[b][s] == n for s, n in names)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_the_maps_memory_is_arrays_of_the_distinct_ngrams():
    """A sample of 5-grams at 8 bits (every bucket wanted): 1.2 million distinct n-grams,
    whose Counter of strings peaked at 143 MB traced; arrays of 16 bytes each, merged
    beside one batch's hits, 82 MB."""
    import tracemalloc

    rng = np.random.default_rng(0)
    vocab = np.array([f"w{i}" for i in range(20000)])
    texts = [" ".join(vocab[rng.integers(0, 20000, 300)]) for _ in range(800)]
    clf = NBSVMClassifier(ngrams=5, n_bits=8, epochs=1, char_ngrams=0).fit(texts[:50], ["a", "b"] * 25)
    ngram_map(clf, texts[:5])  # compiled before tracing
    tracemalloc.start()
    try:
        names = ngram_map(clf, texts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(names) > 200 and peak < 110 << 20, peak >> 20


def test_a_string_seen_as_a_word_and_as_characters_is_one_name():
    """Few buckets, character 4-grams: a string that is a word and a character n-gram of
    one bucket is counted once with both counts ('from' 2 + 2 = 4 outranks words seen 3
    times); the words cut to the most frequent before the characters joined lost it."""
    from nbsvm.evaluation.bucket_names import ngram_map_of
    from nbsvm.text.hashing import Hasher

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(80)]
    texts = [" ".join(rng.choice(words, 6)) + (" from" if i % 20 == 0 else "") for i in range(60)]
    h = Hasher(ngrams=1, n_bits=4, char_ngrams=4)
    mapping = ngram_map_of(np.full(1, np.uint64(0xFFFF)), None, h, texts, per_bucket=3)
    naive = {}
    for i, t in enumerate(texts):
        for key in h.keys(t)[0]:
            naive.setdefault(bucket_of(key, 4, h.seed), Counter())[key] += 1
        for key in h.keys(t)[1]:
            naive.setdefault(bucket_of(key, 4, h.seed + 1), Counter())[key] += 1
    assert set(mapping) == set(naive)
    for b, names in mapping.items():
        assert [n for _, n in names] == sorted(naive[b].values(), reverse=True)[:3], b
        assert all(naive[b][s] == n for s, n in names)


def test_the_counting_kernels_against_numpy():
    from nbsvm.evaluation.bucket_names import _merge_counts, _most_frequent, _runs

    rng = np.random.default_rng(3)
    a = np.sort(rng.integers(0, 50, 300).astype(np.uint64))
    b = np.sort(rng.integers(20, 90, 200).astype(np.uint64))
    for x in (a, b, a[:0]):
        values, counts = np.unique(x, return_counts=True)
        got = _runs(x)
        assert np.array_equal(got[0], values) and np.array_equal(got[1], counts)
    merged = _merge_counts(*_runs(a), *_runs(b))
    values, counts = np.unique(np.concatenate([a, b]), return_counts=True)
    assert np.array_equal(merged[0], values) and np.array_equal(merged[1], counts)
    # buckets in the high 32 bits: the most frequent of each, ties in the pairs' order
    pairs = np.array([(1 << 32) | 5, (1 << 32) | 6, (1 << 32) | 7, (3 << 32) | 1], np.uint64)
    assert _most_frequent(pairs, np.array([2, 9, 2, 1]), 2).tolist() == [1, 0, 3]
    assert _most_frequent(pairs[:0], np.zeros(0, np.int64), 2).tolist() == []


def _strongest_buckets(clf, top):
    """The buckets of the ``top`` largest positive and negative contributions, by hand."""
    C, _ = contributions(clf, np.float32)
    buckets = clf.column_buckets()
    order = np.sort(C[0])
    return set(buckets[(C[0] >= order[-top]) & (C[0] > 0)]) | \
        set(buckets[(C[0] <= order[top - 1]) & (C[0] < 0)])


JAPANESE = ["東京の天気はとても良いです今日", "大阪の料理は本当に美味しかった", "この映画は退屈でつまらない作品"]


@pytest.mark.parametrize("kw, texts", [
    (dict(ngrams=1, char_ngrams=3), None),
    pytest.param(dict(ngrams=2, char_ngrams=4, char_min=2), None,  # lengths 2-4, short tokens
                 marks=pytest.mark.slow),                      # whole (over 1.5 s: test-slow)
    (dict(ngrams=1, long_words=5), JAPANESE),                 # characters of long tokens only
], ids=["char3", "char2-4", "long-words"])
def test_character_ngrams_name_their_buckets_too(kw, texts):
    """With character n-grams the strongest buckets are mostly theirs: they were listed as
    <bucket N>. Words are named from every text, characters from the first CHAR_MAP_DOCS,
    by the compiled search, each name hashed as the model hashes it (the second seed for
    characters): the map equals counts by hand of the plain-Python keys."""
    from nbsvm.evaluation.bucket_names import CHAR_MAP_DOCS

    labels = LABELS
    if texts:  # each Japanese text 4 times (the first positive) beside English ones
        labels = ["pos"] * 4 + ["neg"] * 8 + LABELS[:30]
        texts = [t for t in texts for _ in range(4)] + TEXTS[:30]
    texts = texts or TEXTS
    clf = NBSVMClassifier(n_bits=12, epochs=2, min_df=1, **kw).fit(texts, labels)
    mapping = ngram_map(clf, texts, top=60, per_bucket=3)
    h = clf.hasher_
    seed2 = h.seed + 1
    naive = {}
    for i, t in enumerate(texts):
        words, chars = h.keys(t)
        keyed = [(k, h.seed) for k in words] + [(k, seed2) for k in chars if i < CHAR_MAP_DOCS]
        for key, seed in keyed:
            naive.setdefault(bucket_of(key, h.n_bits, seed), Counter())[key] += 1
    strongest = _strongest_buckets(clf, 60)
    assert set(mapping) == strongest & set(naive)
    assert len(mapping) > 0.9 * len(strongest)             # words alone named few of them
    chars_named = 0
    for b, names in mapping.items():
        # the most frequent of the bucket, a string seen as a word and as characters
        # counted once: the words cut to three before the characters joined lost them
        assert [n for _, n in names] == sorted(naive[b].values(), reverse=True)[:3]
        for name, n in names:
            assert naive[b][name] == n
            chars_named += bucket_of(name, h.n_bits, seed2) == b
    assert chars_named >= 10


def test_training_keeps_a_bounded_sample_and_saves_the_map(tmp_path):
    clf = NBSVMClassifier(ngrams=2, n_bits=14, epochs=3).fit(TEXTS, LABELS)
    assert clf.ngram_map_                                   # built beside the last epoch
    one = NBSVMClassifier(ngrams=2, n_bits=14, epochs=1).fit(TEXTS, LABELS)
    assert one.ngram_map_                                   # built after it
    clf.save(tmp_path / "m.npz")
    again = NBSVMClassifier.load(tmp_path / "m.npz")
    assert again.ngram_map_ == clf.ngram_map_
    frame = top_features(again, 5)
    assert list(frame.direction.unique()) == ["positive", "negative"]
    assert not frame.ngrams.str.startswith("<bucket").any()
    s = TextSample(k=10, seed=1, max_chars=3)
    list(s.wrap(iter(["abcdef"] * 1000)))
    assert len(s.texts) == 10 and s.seen == 1000 and set(s.texts) == {"abc"}


def test_a_crafted_map_is_refused(tmp_path):
    clf = NBSVMClassifier(ngrams=1, n_bits=10, epochs=1).fit(TEXTS, LABELS)
    arrays = encode_map(clf.ngram_map_)
    arrays["map_offsets"] = arrays["map_offsets"][::-1].copy()
    with pytest.raises(NBSVMError, match="n-gram map"):
        decode_map(arrays, 10)
    arrays = encode_map(clf.ngram_map_)
    arrays["map_buckets"][0] = 1 << 10
    with pytest.raises(NBSVMError, match="n-gram map"):
        decode_map(arrays, 10)
    with pytest.raises(NBSVMError, match="missing"):
        decode_map({"map_buckets": arrays["map_buckets"]}, 10)


def test_explain_command(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("".join(f"{l}\t{t}\n" for t, l in zip(TEXTS, LABELS)))
    model = tmp_path / "m.npz"
    assert runner.invoke(app, ["train", str(train), "-o", str(model), "--n-bits", "14",
                               "--ngrams", "2", "-q"]).exit_code == 0
    r = runner.invoke(app, ["explain", "-m", str(model), "--top", "5"])
    assert r.exit_code == 0, r.output
    assert "strongest n-grams toward pos" in r.output and "toward neg" in r.output
    r = runner.invoke(app, ["explain", "-m", str(model), "--top", "5", "--json"])
    rows = json.loads(r.output)
    assert len(rows) == 10 and {"ngrams", "ratio", "weight", "contribution"} <= set(rows[0])
    html = tmp_path / "e.html"
    r = runner.invoke(app, ["explain", "-m", str(model), "--text", TEXTS[3], "--json",
                            "--html", str(html)])
    e = json.loads(r.output)
    clf = NBSVMClassifier.load(model)
    score = clf.decision_function([TEXTS[3]])[0] * (1 if e["class"] == "pos" else -1)
    assert e["constant"] + sum(x["contribution"] for x in e["ngrams"]) == \
        pytest.approx(score, rel=1e-6, abs=1e-6)
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<span") >= 10
    r = runner.invoke(app, ["explain", "-m", str(model), "--class", "nope"])
    assert r.exit_code == 2 and "unknown class 'nope'" in r.output
    r = runner.invoke(app, ["explain", "-m", str(model), "--html", str(html)])
    assert r.exit_code == 2 and "--html needs --text" in r.output


def test_explain_stdin_lines_keep_their_numbers(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("".join(f"{l}\t{t}\n" for t, l in zip(TEXTS, LABELS)))
    model = tmp_path / "m.npz"
    assert runner.invoke(app, ["train", str(train), "-o", str(model), "--n-bits", "14",
                               "-q"]).exit_code == 0
    r = runner.invoke(app, ["explain", "-m", str(model), "--text", "-", "--json"],
                      input="great film\n\nawful waste\n")
    assert [json.loads(x)["line"] for x in r.output.splitlines()] == [1, 3]
    # the page is written section by section as the lines are read (it kept every line's
    # explanation until the end: 4,000 lines took 1.4 GB), the same page as to_html's
    from nbsvm.evaluation.explain import explain_text, to_html
    page = tmp_path / "p.html"
    r = runner.invoke(app, ["explain", "-m", str(model), "--text", "-", "--html", str(page)],
                      input="great film\n\nawful waste\n")
    assert r.exit_code == 0, r.output
    clf = NBSVMClassifier.load(model)
    want = to_html([explain_text(clf, t, None) for t in ("great film", "awful waste")])
    assert page.read_text(encoding="utf-8") == want


def test_explain_stdin_explains_each_line_as_it_is_read(tmp_path, monkeypatch):
    """Every line was read, then every one explained, then printed: memory grew with the
    input (20,000 short lines: 440 MB) and nothing came out until the end."""
    import nbsvm.evaluation.explain as explain
    import nbsvm.io.decoding as decoding
    model = tmp_path / "m.npz"
    NBSVMClassifier(ngrams=1, n_bits=12, epochs=1).fit(TEXTS, LABELS).save(model)
    read, at = [], []

    def lines(*_, **__):
        for i in range(3):
            read.append(i)
            yield f"great film {i}", None, i + 1

    real = explain.explain_text
    monkeypatch.setattr(decoding, "iter_lines", lines)
    monkeypatch.setattr(explain, "explain_text", lambda *a: at.append(len(read)) or real(*a))
    r = runner.invoke(app, ["explain", "-m", str(model), "--text", "-", "--json"])
    assert r.exit_code == 0, r.output
    assert at == [1, 2, 3] and len(r.output.splitlines()) == 3


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_explain_decodes_its_text_as_predict_does(tmp_path):
    """explain read standard input through the locale's decoding: invalid bytes became
    surrogates that hashed into buckets (a score other than predict's for the same line),
    a traceback under a strict locale, and --html failed to write them."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    nbsvm = str(Path(sys.executable).parent / "nbsvm")
    train = tmp_path / "train.txt"
    train.write_text("".join(f"{l}\t{t}\n" for t, l in zip(TEXTS, LABELS)))
    model = tmp_path / "m.npz"
    assert runner.invoke(app, ["train", str(train), "-o", str(model), "--n-bits", "14",
                               "-q"]).exit_code == 0
    line = b"great \xff\xfe film\n"
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    predicted = subprocess.run([nbsvm, "predict", "-", "-m", str(model), "-q",
                                "--output-format", "jsonl"],
                               input=line, capture_output=True, env=env, timeout=120)
    explained = subprocess.run([nbsvm, "explain", "-m", str(model), "--text", "-", "--json",
                                "--html", str(tmp_path / "e.html")],
                               input=line, capture_output=True, env=env, timeout=120)
    assert explained.returncode == 0, explained.stderr.decode()
    result, row = json.loads(explained.stdout.decode().splitlines()[0]), json.loads(predicted.stdout)
    score = result["score"]  # toward the explained class, the predicted one
    assert result["class"] == row["label"]
    assert score == pytest.approx(row["score_pos"] * (1 if row["label"] == "pos" else -1), abs=1e-12)
    assert b"replaced 2 invalid UTF-8 bytes in 1 document" in explained.stderr
    assert "\ufffd" in (tmp_path / "e.html").read_text(encoding="utf-8")
    strict = subprocess.run([nbsvm, "explain", "-m", str(model), "--text", "-", "--strict"],
                            input=line, capture_output=True, env=env, timeout=120)
    assert strict.returncode == 2 and b"<stdin>:1: invalid UTF-8" in strict.stderr
    argument = subprocess.run([nbsvm, "explain", "-m", str(model), "--json", "--text",
                               os.fsdecode(line.strip())], capture_output=True, env=env, timeout=120)
    assert json.loads(argument.stdout)["score"] == pytest.approx(score, abs=1e-12)


def test_explain_text_argument_is_read_in_the_terminals_encoding(tmp_path):
    """--encoding latin-1 (the inputs' encoding) turned an argument typed as UTF-8 into
    'cafã©'."""
    train = tmp_path / "train.txt"
    train.write_text("".join(f"{l}\t{t}\n" for t, l in zip(TEXTS, LABELS)))
    model = tmp_path / "m.npz"
    assert runner.invoke(app, ["train", str(train), "-o", str(model), "--n-bits", "14",
                               "-q"]).exit_code == 0
    r = runner.invoke(app, ["explain", "-m", str(model), "--text", "café film", "--json",
                            "--encoding", "latin-1"])
    plain = runner.invoke(app, ["explain", "-m", str(model), "--text", "café film", "--json"])
    assert r.exit_code == 0 and json.loads(r.output) == json.loads(plain.output)
    assert "caf\u00e3" not in r.output


def test_ranking_a_class_computes_its_row_only_and_ranks_as_a_full_sort():
    """serve's start ranked every class's n-grams from every class's row: outputs^2 rows
    (200 classes 6.4 s, 2,000 never listened). One row per class now, and the partition
    that picks the strongest orders them as a stable sort of the whole row does."""
    from nbsvm.evaluation import contributions as contrib
    from nbsvm.evaluation.explain import _extreme
    from nbsvm.serve.scoring import strongest_ngrams

    docs = synthetic(600, n_classes=4, seed=1)
    clf = NBSVMClassifier(ngrams=1, n_bits=12, epochs=2).fit([d.text for d in docs],
                                                             [d.label for d in docs])
    calls = []
    real = contrib._contribution_row
    try:
        contrib._contribution_row = lambda *a, **k: calls.append(a[1]) or real(*a, **k)
        strongest_ngrams(clf)
        explain_text(clf, TEXTS[0], clf.classes_[2])
    finally:
        contrib._contribution_row = real
    assert sorted(calls) == [0, 1, 2, 2, 3]
    rng = np.random.default_rng(0)
    for _ in range(300):
        row = rng.integers(-3, 4, size=int(rng.integers(1, 40))).astype(float)
        top = int(rng.integers(1, 45))
        order = np.argsort(row, kind="stable")
        assert np.array_equal(_extreme(row, top, True), order[::-1][:top])
        assert np.array_equal(_extreme(row, top, False), order[:top])


def test_a_text_too_long_to_explain_in_the_memory_available_is_refused(monkeypatch):
    # an explanation takes hundreds of bytes per character (a 2.4 MB line: 1.7 GB)
    from nbsvm import memory
    from nbsvm.evaluation.explain import EXPLAIN_BYTES_PER_CHAR, explain_text
    clf = NBSVMClassifier(n_bits=12).fit(TEXTS, LABELS)
    text = "great film " * 1000
    monkeypatch.setattr(memory, "available_bytes", lambda: len(text) * EXPLAIN_BYTES_PER_CHAR - 1)
    with pytest.raises(NBSVMError, match="explaining a text of 11,000 characters needs about"):
        explain_text(clf, text)
    monkeypatch.setattr(memory, "available_bytes", lambda: len(text) * EXPLAIN_BYTES_PER_CHAR)
    assert explain_text(clf, text)["ngrams"]


def test_a_calibrated_multi_label_model_explains_the_label_it_predicts_best():
    """explain named the label of the highest score while predict's top-k, serve's
    prediction and its probability named the most probable one: with a calibration per
    label they differ (104 of 420 20 Newsgroups documents), and /explain shaded one
    label's n-grams under another's probability. Both follow top_k_of now."""
    from nbsvm.serve.scoring import predictions
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(200)]
    tags = {"a": range(0, 30), "b": range(30, 60), "c": range(60, 90)}
    texts, sets = [], []
    for _ in range(900):
        chosen = [t for t, p in zip(tags, (0.6, 0.3, 0.1)) if rng.random() < p] or ["a"]
        words = list(rng.choice(vocab, 20)) + [f"w{j}" for t in chosen
                                               for j in rng.choice(list(tags[t]), 2)]
        texts.append(" ".join(words))
        sets.append(chosen)
    clf = NBSVMClassifier(ngrams=1, n_bits=12, multilabel=True, calibrate="sigmoid").fit(
        texts, sets)
    scores = clf.decision_function(texts)
    best = clf.top_k_of(scores, 1)[0][:, 0]
    differ = np.flatnonzero(best != scores.argmax(axis=1))
    assert differ.size  # the case at hand exists
    served = predictions(clf, [texts[i] for i in differ[:20]])
    for i, row in zip(differ[:20], served):
        found = explain_text(clf, texts[i])
        assert found["class"] == clf.class_names_[best[i]]
        assert found["score"] == pytest.approx(row["score"], abs=1e-9)


@pytest.mark.parametrize("name", ["[/pos]", "[red]pos[/red]"])
def test_class_names_that_look_like_markup_are_printed_as_they_are(tmp_path, name):
    """`explain -m MODEL` titled its table through rich's markup: a class '[/pos]' crashed
    it (MarkupError) and '[red]pos[/red]' printed as 'pos'."""
    docs = synthetic(200, n_classes=2, seed=4)
    labels = [name if d.label == docs[0].label else d.label for d in docs]
    path = tmp_path / "m.npz"
    NBSVMClassifier(n_bits=12, ngrams=1).fit([d.text for d in docs], labels).save(path)
    r = CliRunner().invoke(app, ["explain", "-m", str(path), "--top", "2"])
    assert r.exit_code == 0, r.output
    assert f"strongest n-grams toward {name}" in r.output


def test_the_shaded_page_isolates_each_words_direction_and_shows_no_control_bytes():
    """A right-to-left override in one word of the text turned every word after it around
    on the page, and a NUL went into it as it was (a helper's hunt): each shaded word's
    direction is isolated, the class name in a <bdi>, control characters shown as U+FFFD."""
    import re

    from nbsvm.evaluation.explain import shaded_html

    clf = NBSVMClassifier(n_bits=12, min_df=1, seed=0).fit(
        ["good fun film", "great fun", "bad dull film", "awful dull"] * 5,
        ["pos", "pos", "neg", "neg"] * 5)
    page = shaded_html(explain_text(clf, "good \u202efun\x00 dull\x80 film"))
    spans = re.findall(r'<span title="[^"]*" style="([^"]*)">([^<]*)</span>', page)
    assert [w for _, w in spans] == ["good", "\u202efun\ufffd", "dull\ufffd", "film"]  # C0, C1
    assert all(style.startswith("unicode-bidi:isolate;") for style, _ in spans)
    assert "\x00" not in page and re.search(r"class <b><bdi>(pos|neg)</bdi></b>", page)


def test_a_top_past_the_weights_lists_no_zero_weight():
    """A serve/explain hunt: explain --top 10000000 listed every bucket, the zero-weight
    ones (190,439 rows) among the 'negative' ones. Each direction ends at its last
    non-zero weight."""
    from nbsvm.evaluation.explain import top_feature_rows
    texts = ["good fine film", "bad poor film", "good plot", "bad plot"] * 10
    clf = NBSVMClassifier(n_bits=10, min_df=1, char_ngrams=0).fit(texts, [1, 0, 1, 0] * 10)
    rows = top_feature_rows(clf, 10_000_000)
    assert rows and all(r["weight"] != 0 for r in rows)
    assert {r["direction"] for r in rows} == {"positive", "negative"}
    assert len(rows) == int(np.count_nonzero(clf.coef_))
