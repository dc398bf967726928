"""The JSON bodies ``nbsvm serve`` takes, bounded before they are parsed
(``nbsvm/serve/bodies.py``): :func:`values_bound` against the values ``json.loads`` makes,
counted one by one."""
import json

import pytest

pytest.importorskip("fastapi")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from nbsvm.serve.bodies import (  # noqa: E402
    MAX_INT_DIGITS,
    TooManyValues,
    json_error_of,
    parse_bounded,
    values_bound,
)


def naive_values(data) -> int:
    """Keys, items and containers, one by one (the slow reference)."""
    if isinstance(data, dict):
        return 1 + sum(1 + naive_values(v) for v in data.values())
    if isinstance(data, list):
        return 1 + sum(naive_values(v) for v in data)
    return 1


def empty_containers(data) -> int:
    if isinstance(data, dict):
        return (not data) + sum(empty_containers(v) for v in data.values())
    if isinstance(data, list):
        return (not data) + sum(empty_containers(v) for v in data)
    return 0


# strings full of what counts outside them: marks, quotes, backslashes, escapes
tricky = st.text(alphabet=st.sampled_from(list(',:[{}]"\\ aé\n\u2028')), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | tricky,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(tricky, inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=100, deadline=None)
@given(json_values, st.booleans())
def test_the_bound_is_the_count_of_values_but_for_empty_containers(data, ascii_only):
    body = json.dumps(data, ensure_ascii=ascii_only).encode()
    # most=0: the strings are always told apart (no shortcut)
    assert values_bound(body, 0) == naive_values(data) + empty_containers(data)
    assert values_bound(body, 10**9) >= naive_values(data)


def test_hand_counted_bodies():
    # {"texts": ["a,b", "c"]}: the object, its key, the list and two items: 5
    assert values_bound(b'{"texts": ["a,b", "c"]}', 0) == 5
    # an escaped quote does not end the string; an escaped backslash does not escape it
    assert values_bound(rb'["a\",b", "c\\", "d"]', 0) == 4
    assert values_bound(rb'["\\\"[,", 1]', 0) == 3
    assert values_bound(rb'["\u0022,", 1]', 0) == 3  # a quote escaped as \u0022
    assert values_bound(b"[[], [], []]", 0) == 7  # each empty list counted twice
    assert values_bound(b"\\", 0) == 1 and values_bound(b"", 0) == 1  # not JSON: no error


def test_a_body_of_too_many_values_is_refused_before_it_is_parsed(monkeypatch):
    parsed = []
    monkeypatch.setattr(json, "loads", lambda b, **kw: parsed.append(b))
    body = b'{"texts": [' + b",".join([b"[[]]"] * 10_000) + b"]}"
    refused = parse_bounded(body, 20_000)
    assert isinstance(refused, TooManyValues) and parsed == []
    e = refused.refusal()
    assert e.status_code == 413 and "more than 20,000 JSON values" in e.detail
    texts = json.dumps({"texts": ["a, b, c, d, e, f, g: [h] {i}"] * 1000}).encode()
    assert values_bound(texts, 0) == 1003  # the commas in the texts do not count
    parse_bounded(texts, 20_000)
    assert parsed == [texts]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32",
                                      "utf-8-sig"])
def test_json_in_utf16_and_utf32_is_counted_as_its_characters(encoding):
    """json.loads takes UTF-16 and UTF-32 too. Counted byte by byte, an escaped quote
    (5C 00 22 00) ended its string and 1.3 million lists passed as 4 values (a reviewer's
    find): such a body is counted as UTF-8, and parsed as json.loads parses it."""
    attack = '{"texts": ["a\\"", ' + ",".join(["[]"] * 30_000) + "]}"
    assert isinstance(parse_bounded(attack.encode(encoding), 20_000), TooManyValues)
    fine = {"texts": ['café ∀ \\" "ok" \u2200'], "top_k": 2}
    assert parse_bounded(json.dumps(fine, ensure_ascii=False).encode(encoding), 20_000) == fine


def test_integers_of_many_digits_are_refused_at_the_first():
    """1,900 integers of 4,300 digits are 2,000 values that held json.loads 0.4 s."""
    body = ("[" + ",".join(["9" * 4300] * 1900) + "]").encode()
    with pytest.raises(ValueError) as e:
        parse_bounded(body, 20_000)
    assert "at most 100" in json_error_of(e.value)
    assert parse_bounded(("[" + "9" * MAX_INT_DIGITS + ", -1, 2.5e300]").encode(), 10)[1] == -1
