"""JSON lines as hostile input (robustness issue, items 5 and 12 a): nesting deeper than the
parser's recursion limit, and texts or labels of other types than strings, are malformed
lines like any other: an error naming the file and the line, or skipped and counted with
--skip-bad-lines; never a traceback, never a class spelled as Python prints a value.

The hypothesis properties here run ``fuzz.t_jsonl`` (``make fuzz``'s target ``jsonl``) on
near-valid records and deep nesting."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

import fuzz
from nbsvm import NBSVMClassifier
from nbsvm.cli import app
from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import ReadStats
from nbsvm.io.records import read_jsonl

runner = CliRunner()
TRAIN = ["--n-bits", "12", "--min-df", "1", "--epochs", "2", "-q"]
GOOD = [{"text": "great fun film", "label": "pos"}, {"text": "awful dull film", "label": "neg"},
        {"text": "loved every minute", "label": "pos"}, {"text": "a terrible cast", "label": "neg"}]


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def jsonl(records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def deep(depth: int, kind: str = "list") -> str:
    """A record whose text is a list in ``depth`` lists, or an object in ``depth`` objects."""
    value = "[" * depth + "]" * depth if kind == "list" else \
        '{"a": ' * depth + "1" + "}" * depth
    return '{"label": "pos", "text": ' + value + "}"


# ---------------------------------------------------------------------------- properties

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                    st.sampled_from(["pos", "neg", " pos ", "", "a,b"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "text", "label"]),
                                                 inner, max_size=3)), max_leaves=8)
record = st.fixed_dictionaries({}, optional={"text": values, "label": values, "id": values})
nested = st.builds(deep, st.integers(1, 20_000), st.sampled_from(["list", "object"]))
TARGET = fuzz.t_jsonl


def line_of(rec) -> str:
    return rec if isinstance(rec, str) else json.dumps(rec)


PROPERTY = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(st.lists(st.one_of(record.map(line_of), nested,
                          st.builds(lambda n: "[" * n, st.integers(1, 5000))), max_size=5),
       st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_records_and_nesting(lines, end):
    TARGET((end.join(lines) + end).encode())


@PROPERTY
@given(st.binary(max_size=300))
def test_any_bytes(data):
    TARGET(data)


@PROPERTY
@given(st.integers(1, 100_000), st.sampled_from(["list", "object"]))
def test_nesting_of_any_depth_is_read_or_named(depth, kind):
    """Each depth: a line that parses is refused for its type (the text is a list or an
    object), one nested past the limit for its depth; both name line 2."""
    src = jsonl([GOOD[0], deep(depth, kind), GOOD[1]])
    import io
    with pytest.raises(NBSVMError) as e:
        list(read_jsonl(io.StringIO(src)))
    assert e.value.line == 2
    assert "nested too deeply" in str(e.value) or "not a string" in str(e.value)
    stats = ReadStats(skip_bad=True)
    docs = list(read_jsonl(io.StringIO(src), stats=stats))
    assert [d.line for d in docs] == [1, 3] and stats.bad_lines == 1


# ------------------------------------------------------------------- through the real CLI

@pytest.fixture
def model(tmp_path):
    train = tmp_path / "train.jsonl"
    train.write_text(jsonl(GOOD * 5))
    r = run("train", train, "-o", tmp_path / "m.npz", *TRAIN)
    assert r.exit_code == 0, r.output
    return tmp_path / "m.npz"


@pytest.mark.parametrize("cmd", ["train", "eval", "predict"])
def test_deep_nesting_is_a_malformed_line(tmp_path, model, cmd):
    """Was a RecursionError traceback, from train too, even with --skip-bad-lines."""
    data = tmp_path / "deep.jsonl"
    data.write_text(jsonl([*GOOD, deep(1000), *GOOD, deep(100_000, "object")]))
    where = ["-o", tmp_path / "new.npz", *TRAIN] if cmd == "train" else ["-m", model, "-q"]
    r = run(cmd, data, *where)
    assert r.exit_code == 2
    assert f"error: {data}:5: JSON nested too deeply to be read (--skip-bad-lines" in r.stderr
    assert "Traceback" not in r.output
    r = run(cmd, data, *where, "--skip-bad-lines")
    assert r.exit_code == 0, r.output
    assert "skipped 2 malformed lines (--skip-bad-lines)" in r.stderr
    assert f"{data}:5: JSON nested too deeply" in r.stderr
    assert f"{data}:10: JSON nested too deeply" in r.stderr


@pytest.mark.parametrize("field, value, says", [
    ("text", {"a": 1}, "the text in field 'text' is an object, not a string"),
    ("text", 5, "the text in field 'text' is a number (5), not a string"),
    ("text", ["great", "film"], "the text in field 'text' is a list, not a string"),
    ("label", True, "field 'label': the label is a boolean (true): a label is a string, "
                    "an integer or (multi-label) a list of them"),
    ("label", 1.5, "field 'label': the label is a number (1.5)"),
    ("label", {"a": 1}, "field 'label': the label is an object"),
    ("label", [["a"]], "field 'label': a label list holds a list: labels are strings or "
                       "integers"),
    ("label", ["a", None], "field 'label': a label list holds null"),
    ("label", ["a,b"], "field 'label': a label in a list holds ','"),
])
def test_a_text_or_label_of_another_type_is_a_malformed_line(tmp_path, field, value, says):
    """{"text": {"a": 1}} was the text "{'a': 1}", [["a"]] the class "['a']" and true the
    class "True"; now each names its line, or is skipped and counted."""
    data = tmp_path / "types.jsonl"
    data.write_text(jsonl([*GOOD, {**GOOD[0], field: value}, *GOOD]))
    r = run("train", data, "-o", tmp_path / "m.npz", *TRAIN)
    assert r.exit_code == 2 and not (tmp_path / "m.npz").exists()
    assert f"error: {data}:5: {says}" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run("train", data, "-o", tmp_path / "m.npz", *TRAIN, "--skip-bad-lines")
    assert r.exit_code == 0, r.output
    assert "skipped 1 malformed line" in r.stderr
    assert NBSVMClassifier.load(tmp_path / "m.npz").classes_ == ["neg", "pos"]


def test_integer_and_list_labels_still_read(tmp_path):
    """Integers are classes as they read in a line file; a list is a label set."""
    data = tmp_path / "ok.jsonl"
    data.write_text(jsonl([{"text": "a", "label": 3}, {"text": "b", "label": [" y ", "x", 7]},
                           {"text": "c", "label": "3"}]))
    docs = list(read_jsonl(data))
    assert [d.label for d in docs] == ["3", "7,x,y", "3"]
