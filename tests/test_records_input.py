"""JSON lines and Parquet input (issue 18, item 6): named fields picked by --text-col and
--label-col, streamed, malformed records named; the same corpus trains the same model in
every format."""
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.io import read_inputs
from nbsvm.io.records import read_jsonl
from testhelpers import check_bad_line

NBSVM = Path(sys.executable).parent / "nbsvm"


def test_jsonl_fields_labels_and_bad_lines():
    src = io.StringIO('{"title": "T", "body": "great fun", "y": "pos"}\n\n'
                      '{"title": "U", "body": "dull", "y": 3}\n'
                      '{"title": "V", "body": "both", "y": ["b", "a"]}\n')
    docs = list(read_jsonl(src, text_col=["title", "body"], label_col="y"))
    assert [(d.label, d.text, d.line) for d in docs] == [
        ("pos", "T | great fun", 1), ("3", "U | dull", 3), ("a,b", "V | both", 4)]


@pytest.mark.parametrize("line, says", [
    ('{"text": "x"', "not JSON"),
    ('["text", "x"]', "expected a JSON object per line, found list"),
    ('{"body": "x", "label": "a"}', r"no text in field 'text' \(fields: 'body', 'label'"),
    ('{"text": "x"}', "no label in field 'label'"),
])
def test_jsonl_malformed_lines_are_named(line, says):
    assert len(check_bad_line(read_jsonl, '{"text": "fine", "label": "a"}\n', line, says)) == 1


def test_parquet_missing_columns_are_named(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.parquet"
    pd.DataFrame({"review": ["a", "b"], "stars": ["pos", "neg"]}).to_parquet(path)
    with pytest.raises(NBSVMError, match="no column 'text'; columns: review, stars"):
        list(read_inputs([str(path)]))
    with pytest.raises(NBSVMError, match="no label column 'label'"):
        list(read_inputs([str(path)], text_col="review"))
    docs = list(read_inputs([str(path)], text_col="review", label_col="stars"))
    assert [(d.label, d.text, d.line) for d in docs] == [("pos", "a", 1), ("neg", "b", 2)]
    unlabeled = list(read_inputs([str(path)], text_col="review", labeled=False))
    assert [d.label for d in unlabeled] == [None, None]
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(NBSVMError, match="cannot read as Parquet"):
        list(read_inputs([str(bad)], text_col="review"))


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_the_cli_trains_the_same_model_from_jsonl_and_parquet(imdb_slice, tmp_path):
    """The IMDB slice as label<TAB>text, as JSON lines and as Parquet (title and body
    fields): the three models score the test reviews the same; predict reads both."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    docs = list(read_inputs([str(imdb_slice / "train")]))
    texts = [" ".join(d.text.split()) for d in docs]
    titles = [t.split(".")[0][:40] for t in texts]
    tab, jl, pq = tmp_path / "train.tsv", tmp_path / "train.jsonl", tmp_path / "train.parquet"
    tab.write_text("".join(f"{d.label}\t{ti} | {t}\n" for d, ti, t in zip(docs, titles, texts)),
                   encoding="utf-8")
    jl.write_text("".join(json.dumps({"id": i, "title": ti, "body": t, "sentiment": d.label})
                          + "\n" for i, (d, ti, t) in enumerate(zip(docs, titles, texts))),
                  encoding="utf-8")
    pd.DataFrame({"title": titles, "body": texts,
                  "sentiment": [d.label for d in docs]}).to_parquet(pq)
    fields = ["--text-col", "title", "--text-col", "body", "--label-col", "sentiment"]
    models = {}
    for name, path, extra in (("tab", tab, []), ("jsonl", jl, fields), ("parquet", pq, fields)):
        models[name] = tmp_path / f"{name}.npz"
        r = subprocess.run([str(NBSVM), "train", str(path), "--n-bits", "18", "-o",
                            str(models[name]), "-q", *extra], capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, (name, r.stderr)
    test = [d.text for d in read_inputs([str(imdb_slice / "test")])][:300]
    scores = {k: NBSVMClassifier.load(m).decision_function(test) for k, m in models.items()}
    np.testing.assert_array_equal(scores["tab"], scores["jsonl"])
    np.testing.assert_array_equal(scores["tab"], scores["parquet"])
    r = subprocess.run([str(NBSVM), "predict", str(jl), "-m", str(models["jsonl"]), "-q",
                        *fields], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = pd.read_csv(io.StringIO(r.stdout))
    assert len(out) == len(docs) and (out.true_label == out.label).mean() > 0.9


def test_a_field_named_twice_through_an_escape_is_refused(tmp_path):
    """{"label": "007", "labe\\u006c": "NA"} read as 'NA' (JSON keeps the last) where a
    plainly repeated "label" is refused: a line with a \\u escape is looked at key by key
    (names written escaped, as json.dumps writes non-ASCII ones, are found too)."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"label": "007", "text": "good", "labe\\u006c": "NA"}\n'
                    '{"label": "caf\\u00e9", "text": "fine \\u00e9t\\u00e9"}\n')
    with pytest.raises(NBSVMError, match="the field 'label' appears twice"):
        list(read_jsonl(path))
    path.write_text('{"label": "caf\\u00e9", "text": "fine \\u00e9t\\u00e9"}\n')
    assert [(d.label, d.text) for d in read_jsonl(path)] == [("café", "fine été")]
