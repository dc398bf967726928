"""`nbsvm predict --output-format`: CSV, JSON lines and Parquet hold the same rows."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nbsvm.cli import app
from nbsvm.cli import predict as predict_cli
from nbsvm.errors import NBSVMError

runner = CliRunner()

TRAIN = [("pos", "a great film, loved it"), ("pos", "great fun and a great cast"),
         ("pos", "loved the music!"), ("pos", "wonderful, moving and great"),
         ("neg", "an awful film"), ("neg", "awful, dull and boring"),
         ("neg", "the cast was dull"), ("neg", "boring; awful plot")]
SMALL = ["--n-bits", "12", "--ngrams", "2", "--min-df", "1", "--epochs", "3", "-q"]


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def ok(result):
    assert result.exit_code == 0, (result.output, result.exception)
    return result


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("formats")
    train = tmp / "train.txt"
    train.write_text("".join(f"{l}\t{t}\n" for l, t in TRAIN), encoding="utf-8")
    path = tmp / "m.npz"
    ok(run("train", train, "-o", path, *SMALL))
    return path


@pytest.fixture
def texts(tmp_path):
    """1,300 unlabeled documents in a sub-folder (paths with '/' in the source column),
    more than two batches of 512 so that several tables are written one after another."""
    words = ["great", "awful", "fun", "dull", "loved", "boring", "cast", "plot", "film",
             "é", "\"quoted\"", "a,b"]
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, size=6)) for _ in range(1300)]
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / "texts.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_back(path, fmt):
    if fmt == "csv":
        return pd.read_csv(path, keep_default_na=False)
    if fmt == "jsonl":
        return pd.read_json(path, lines=True, dtype=False, precise_float=True)
    return pd.read_parquet(path)


def test_csv_jsonl_parquet_hold_the_same_rows(model, texts, tmp_path):
    frames = {}
    for fmt, name in (("csv", "p.csv"), ("jsonl", "p.jsonl"), ("parquet", "p.parquet")):
        out = tmp_path / name
        r = ok(run("predict", texts, "-m", model, "-o", out, "--format", "text"))
        assert f"predictions: 1300 written to {out} ({fmt})" in r.output
        frames[fmt] = read_back(out, fmt)
        # written under a temporary name and renamed: nothing else is left in the folder
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    csv = frames["csv"]
    assert list(csv.columns) == ["source", "line", "label", "score_pos", "probability_pos"]
    assert len(csv) == 1300 and csv["line"].tolist() == list(range(1, 1301))
    assert csv["source"].iloc[0] == str(texts)
    for fmt in ("jsonl", "parquet"):
        other = frames[fmt]
        assert list(other.columns) == list(csv.columns), fmt
        for col in ("source", "label"):
            assert other[col].astype(str).tolist() == csv[col].astype(str).tolist(), (fmt, col)
        assert other["line"].astype(np.int64).tolist() == csv["line"].tolist()
        for col in ("score_pos", "probability_pos"):      # the same doubles, bit for bit
            np.testing.assert_array_equal(other[col].to_numpy(float), csv[col].to_numpy(float),
                                          err_msg=f"{fmt} {col}")
    assert frames["parquet"]["line"].dtype == np.int64


def test_jsonl_lines_are_plain_json_objects(model, texts, tmp_path):
    out = tmp_path / "p.jsonl"
    ok(run("predict", texts, "-m", model, "-o", out, "--format", "text"))
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1300
    first = json.loads(lines[0])
    assert first["source"] == str(texts) and first["line"] == 1     # "/" not written as "\/"
    assert "\\/" not in lines[0]
    assert set(first) == {"source", "line", "label", "score_pos", "probability_pos"}


def test_standard_output_as_csv_and_jsonl(model, texts):
    r = ok(run("predict", texts, "-m", model, "--format", "text", "-q"))
    assert r.stdout.splitlines()[0] == "source,line,label,score_pos,probability_pos"
    assert len(r.stdout.splitlines()) == 1301
    r = ok(run("predict", texts, "-m", model, "--format", "text", "-q",
               "--output-format", "jsonl"))
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 1300 and rows[-1]["line"] == 1300


@pytest.mark.parametrize("name, requested, expected", [
    ("p.parquet", None, "parquet"), ("p.PARQUET", None, "parquet"), ("p.jsonl", None, "jsonl"),
    ("p.csv", None, "csv"), ("p.txt", None, "csv"), ("p", None, "csv"), (None, None, "csv"),
    ("p.csv", "jsonl", "jsonl"), ("p.parquet", "csv", "csv"), ("p.txt", "Parquet", "parquet"),
    ("p.ndjson", None, "jsonl"), ("p.csv.gz", "csv", "csv"), ("p.tsv", "csv", "csv"),
])
def test_the_suffix_rule(name, requested, expected):
    assert predict_cli.choose_output_format(requested, name) == expected


@pytest.mark.parametrize("name", ["p.csv.gz", "p.tsv", "p.json", "p.ZIP"])
def test_a_suffix_of_a_format_predict_does_not_write_is_refused(name):
    """Written as plain CSV, p.csv.gz was no gzip file: a reader that trusts the name fails."""
    with pytest.raises(NBSVMError, match="would not be what its name says"):
        predict_cli.choose_output_format(None, name)


def test_eval_refuses_a_report_named_as_another_format(model, tmp_path):
    r = run("eval", model.parent / "train.txt", "-m", model, "-o", tmp_path / "rep.csv.gz")
    assert r.exit_code != 0 and "would not be what its name says" in r.output, r.output
    assert not (tmp_path / "rep.csv.gz").exists()
    ok(run("eval", model.parent / "train.txt", "-m", model, "-o", tmp_path / "rep.csv"))


def test_no_table_or_page_is_written_over_a_model(model, tmp_path):
    """predict -o, eval -o and explain --html named .npz replaced a model file with CSV or
    HTML (exit 0; a typo of the model's name): refused, --output-format or not; tune -o
    t.bz2 or model.h5 wrote CSV under a name of another format."""
    other = tmp_path / "other.npz"
    other.write_bytes(model.read_bytes())
    data = model.parent / "train.txt"
    for args in (["predict", data, "-m", model, "-o", other],
                 ["predict", data, "-m", model, "-o", other, "--output-format", "csv"],
                 ["eval", data, "-m", model, "-o", other],
                 ["explain", "-m", model, "--text", "great fun", "--html", other]):
        r = run(*args)
        assert r.exit_code == 2 and ".npz names an nbsvm model or lexicon" in r.output, r.output
    assert other.read_bytes() == model.read_bytes()
    for name in ("t.bz2", "model.h5", "best.NPZ"):
        r = run("tune", data, "-o", tmp_path / name, "--grid", "lambda=1e-4", "-q")
        assert r.exit_code == 2 and "tune writes its table as CSV" in r.output
        assert not (tmp_path / name).exists()
    # (a name with a dot and no format, grid_C0.5, is written: test_tune.py)


def test_output_format_overrides_the_suffix(model, texts, tmp_path):
    out = tmp_path / "predictions.txt"
    ok(run("predict", texts, "-m", model, "-o", out, "--format", "text",
           "--output-format", "parquet"))
    assert out.read_bytes()[:4] == b"PAR1"
    assert len(pd.read_parquet(out)) == 1300


def test_unknown_format_lists_the_allowed_ones(model, texts, tmp_path):
    out = tmp_path / "p.xml"
    r = run("predict", texts, "-m", model, "-o", out, "--output-format", "xml")
    assert r.exit_code == 2
    assert "unknown output format 'xml'; allowed: csv, parquet, jsonl" in r.output
    assert "Traceback" not in r.output and not out.exists()


def test_parquet_needs_an_output_file(model, texts):
    r = run("predict", texts, "-m", model, "--output-format", "parquet")
    assert r.exit_code == 2 and "Parquet output needs --output FILE" in r.output


def test_parquet_without_pyarrow_says_what_to_install(model, texts, tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)      # import pyarrow fails
    out = tmp_path / "p.parquet"
    r = run("predict", texts, "-m", model, "-o", out)
    assert r.exit_code == 2
    assert "Parquet output needs pyarrow: pip install 'nbsvm[parquet]'" in r.output
    assert not out.exists()


def test_parquet_streams_row_groups(model, texts, tmp_path, monkeypatch):
    """Rows go out a row group at a time as the batches come (at most one group in memory),
    not all at the end."""
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(predict_cli, "ROW_GROUP_ROWS", 500)
    out = tmp_path / "p.parquet"
    ok(run("predict", texts, "-m", model, "-o", out, "--format", "text"))
    meta = pq.ParquetFile(out).metadata
    assert meta.num_rows == 1300
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sizes == [512, 512, 276], sizes        # flushed as each batch filled a group


def test_true_labels_first_met_after_the_first_batch_are_named_in_a_note(model, tmp_path):
    """An unlabeled file of more than one batch, then a labeled one: the first table had
    no true_label, and the true labels were dropped without a word."""
    plain = tmp_path / "a.txt"
    plain.write_text("dull plot\nloved it\n" * 300, encoding="utf-8")
    labeled = tmp_path / "b.txt"
    labeled.write_text("pos\tgreat fun\nneg\tawful\n" * 3, encoding="utf-8")
    for out in (tmp_path / "p.csv", tmp_path / "p.jsonl", None):
        r = ok(run("predict", plain, labeled, "-m", model, *(["-o", out] if out else [])))
        assert "note: left out true_label of 6 rows" in r.stderr, r.stderr
    r = ok(run("predict", labeled, plain, "-m", model, "-o", tmp_path / "q.csv"))
    assert "left out" not in r.stderr


def test_parquet_types_a_column_the_first_group_leaves_empty(model, tmp_path, monkeypatch):
    """--top-k 1 --threshold T left top1_label empty in the whole first row group: pyarrow
    typed it null and the next group raised 'Unsupported cast from large_string to null';
    the whole output was lost."""
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(predict_cli, "ROW_GROUP_ROWS", 512)
    texts = tmp_path / "t.txt"
    texts.write_text("zzz\n" * 600 + "great fun loved\n" * 30, encoding="utf-8")
    out = tmp_path / "p.parquet"
    ok(run("predict", texts, "-m", model, "-o", out, "--top-k", "1", "--threshold", "0.9",
           "--format", "plain-lines", "-q"))
    back = pq.read_table(out).to_pandas()
    assert len(back) == 630 and back["top1_label"].iloc[:512].isna().all()
    assert back["top1_label"].iloc[-1] == "pos"


def test_a_later_batch_without_true_labels_keeps_the_columns(model, tmp_path):
    """The first table decides the columns: a label<TAB>text file of exactly one batch
    (512 rows), then a CSV without a label column (a second table without true_label)
    still gives aligned rows, true_label empty, in every format."""
    labeled = tmp_path / "a.txt"
    labeled.write_text("pos\tgreat fun\nneg\tawful\n" * 256, encoding="utf-8")
    plain = tmp_path / "b.csv"
    pd.DataFrame({"text": ["dull plot", "loved it"]}).to_csv(plain, index=False)
    for fmt in ("csv", "jsonl", "parquet"):
        out = tmp_path / f"mixed.{fmt}"
        ok(run("predict", labeled, plain, "-m", model, "-o", out))
        back = read_back(out, fmt)
        assert list(back.columns) == ["source", "line", "true_label", "label",
                                      "score_pos", "probability_pos"], fmt
        assert len(back) == 514
        assert back["true_label"].tolist()[:2] == ["pos", "neg"]
        tail = back.iloc[512:]
        assert [v in ("", None) or v != v for v in tail["true_label"].tolist()] == \
            [True, True], (fmt, tail["true_label"].tolist())
        # CSV rows are numbered by their line in the file (the header is line 1)
        assert tail["source"].tolist() == [str(plain)] * 2 and tail["line"].tolist() == [2, 3]
        assert set(tail["label"]) <= {"pos", "neg"}


def test_a_file_name_that_is_not_utf8_is_written_escaped(model, tmp_path):
    """predict -o of a file named with a byte 0xff raised UnicodeEncodeError (no output);
    to standard output it wrote the raw byte, not UTF-8."""
    import os
    name = os.fsdecode(b"bad\xffname.txt")
    path = tmp_path / name
    path.write_text("great fun\nawful plot\n", encoding="utf-8")
    for fmt in ("csv", "jsonl"):
        out = tmp_path / f"p.{fmt}"
        ok(run("predict", path, "-m", model, "-o", out, "-q"))
        back = read_back(out, fmt)  # valid UTF-8 throughout
        assert [s.endswith("bad\\xffname.txt") for s in back["source"]] == [True, True]


def test_standard_output_appended_to_the_input_is_refused(model, texts):
    """`nbsvm predict -m m.npz in.txt >> in.txt` read its own predictions back as documents
    forever (413 MB in a minute); a link to the input counts too. The input is untouched."""
    before = texts.read_bytes()
    link = texts.parent / "link.txt"
    link.symlink_to(texts)
    for given in (texts, link):
        with open(texts, "ab") as out:
            r = subprocess.run([sys.executable, "-m", "nbsvm", "predict", "-m", str(model),
                                str(given), "-q"], stdout=out, stderr=subprocess.PIPE,
                               text=True, timeout=60)
        assert r.returncode == 2 and "standard output is an input" in r.stderr, r.stderr
    assert texts.read_bytes() == before
    # standard output elsewhere (a file that is not read) is written as before
    with open(texts.parent / "p.csv", "wb") as out:
        subprocess.run([sys.executable, "-m", "nbsvm", "predict", "-m", str(model), str(texts),
                        "-q"], stdout=out, check=True, timeout=60)
    assert len((texts.parent / "p.csv").read_text().splitlines()) == 1301
