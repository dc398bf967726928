"""A model's history (issue 38 item 4): what it was trained on and continued with, kept in
its file and listed by ``nbsvm info``."""
import json

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.models import history
from tests.test_cli import TRAIN, TRAIN_OPTS, assert_ok, run, write_lines

TEXTS = ["good fun", "bad dull", "great film", "awful mess"] * 10
LABELS = ["p", "n", "p", "n"] * 10


def test_fit_starts_the_history_and_partial_fit_runs_merge_into_one_entry(tmp_path):
    m = NBSVMClassifier(n_bits=12, keep_counts=True).fit(TEXTS, LABELS)
    assert [(e["event"], e["documents"]) for e in m.history_] == [("fit", 40)]
    m.partial_fit(TEXTS[:8], LABELS[:8])
    m.partial_fit(TEXTS[:4], LABELS[:4])
    assert [(e["event"], e["documents"], e.get("calls")) for e in m.history_] == [
        ("fit", 40, None), ("partial_fit", 12, 2)]
    m.save(tmp_path / "m.npz")
    assert NBSVMClassifier.load(tmp_path / "m.npz").history_ == m.history_
    m.fit(TEXTS, LABELS)                                 # a new fit: a new history
    assert [e["event"] for e in m.history_] == ["fit"]


def test_a_learn_entry_keeps_its_journal_and_last_sequence():
    m = NBSVMClassifier()
    history.record(m, "learn", 3, journal="j.jsonl", through=2)
    history.record(m, "learn", 5, journal="j.jsonl", through=9)
    history.record(m, "partial_fit", 1)
    assert [(e["event"], e["documents"], e.get("through")) for e in m.history_] == [
        ("learn", 8, 9), ("partial_fit", 1, None)]


@pytest.mark.parametrize("bad", [{"x": 1}, [1, 2], [{"documents": 3}]])
def test_a_malformed_history_in_a_file_is_refused(tmp_path, bad):
    from nbsvm.io.npzfile import load_npz, save_npz
    m = NBSVMClassifier(n_bits=12).fit(TEXTS, LABELS)
    m.save(tmp_path / "m.npz")
    header, arrays = load_npz(tmp_path / "m.npz", "model")
    header["history"] = bad
    save_npz(tmp_path / "bad.npz", "model", header, dict(arrays))
    with pytest.raises(NBSVMError, match="bad.npz"):
        NBSVMClassifier.load(tmp_path / "bad.npz")


def test_cli_train_then_continue_lists_both_inputs_in_info(tmp_path):
    first = write_lines(tmp_path / "first.tsv", TRAIN)
    more = write_lines(tmp_path / "more.tsv", TRAIN[:4] + TRAIN[-3:])
    assert_ok(run("train", first, "-o", tmp_path / "a.npz", "--keep-counts", *TRAIN_OPTS))
    assert_ok(run("train", more, "--init", tmp_path / "a.npz", "-o", tmp_path / "b.npz",
                  "--quiet"))
    info = json.loads(run("info", tmp_path / "b.npz", "--json").output)
    assert [(e["event"], e["documents"], e["inputs"]) for e in info["history"]] == [
        ("fit", len(TRAIN), [str(first)]), ("continue", 7, [str(more)])]
    text = run("info", tmp_path / "b.npz").output
    assert f"fit: {len(TRAIN)} documents" in text and "continue: 7 documents" in text
    assert np.isfinite(NBSVMClassifier.load(tmp_path / "b.npz").n_docs_)
