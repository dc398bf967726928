"""Languages written without spaces (issue 34, item 1): ``split_scripts`` makes every
character of Chinese, Japanese, Thai... a token (nbsvm/text/scripts.py), ``nfkc`` normalizes
first. The compiled tokenizer against the reference one and against a per-character
tokenizer written here from the range table, ``mmh3`` on the keys; the former tokenizer kept
bit for bit when the option is off (and for every file written before it); a hand-made
Chinese sentiment fixture that only the split tokenizer learns; explanations of it."""
import hashlib
import html as htmlmod
import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from nbsvm import NBLexicon, NBSVMClassifier
from nbsvm.cli import app
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.data.batches import hash_batch
from nbsvm.evaluation.explain import explain_text, shaded_html, top_features, word_gaps
from nbsvm.io.document import Document
from nbsvm.io.npzfile import load_npz, save_npz
from nbsvm.serve.scoring import explanation
from nbsvm.text.hashing import Hasher, bucket_of
from nbsvm.text.scripts import (BREAK, JOIN, SCRIPT_ARRAYS, SCRIPT_TABLE, SPLIT, WORD,
                                flat_ranges, script_kind)
from nbsvm.text.tokenize import tokenize
from nbsvm.models.checkpoint import KIND as CHECKPOINT, Checkpoint

from naive import naive_bucket, naive_char_keys, naive_word_keys

runner = CliRunner()
REPO = Path(__file__).resolve().parent.parent
ZH = REPO / "data" / "zh_reviews.txt"
PUNCT = '.",()!?;:'


# -- an independent reference: one character at a time, straight from the table ------------

def kind_of(ch: str) -> int:
    """The table's kind of ``ch``: its last row holding it (later rows win)."""
    cp = ord(ch)
    for first, last, kind, _ in reversed(SCRIPT_TABLE):
        if first <= cp <= last:
            return kind
    return WORD


def ref_tokens(text, lowercase=True, split=False, nfkc=False):
    if nfkc:
        text = unicodedata.normalize("NFKC", text)
    if lowercase:
        text = text.lower()
    text = text.replace("<br />", " ")
    out, word, glue = [], "", False
    for ch in text:
        kind = kind_of(ch) if split else WORD
        if kind == JOIN and glue:           # a mark right after a split character joins it
            out[-1] += ch
            continue
        glue = False
        if ch.isspace() or ch in PUNCT or kind in (SPLIT, BREAK):
            if word:
                out.append(word)
                word = ""
            if ch in PUNCT or kind == SPLIT:
                out.append(ch)
                glue = kind == SPLIT
        else:
            word += ch
    if word:
        out.append(word)
    return out


def ref_buckets(text, ngrams=3, n_bits=20, seed=0, char_lengths=(), lowercase=True,
                split=False, nfkc=False):
    """Distinct buckets in order: word n-grams with ``seed``, then character n-grams of each
    length, shortest first, with ``seed + 1``; mmh3 on each key's UTF-8 bytes."""
    tokens = ref_tokens(text, lowercase, split, nfkc)
    ids = [naive_bucket(k, n_bits, seed) for k in naive_word_keys(tokens, ngrams)]
    for n in char_lengths:
        ids += [naive_bucket(k, n_bits, (seed + 1) & 0xFFFFFFFF)
                for k in naive_char_keys(tokens, n)]
    return list(dict.fromkeys(ids))


# -- the table ----------------------------------------------------------------------------

def test_the_table_is_well_formed():
    flat = flat_ranges()
    assert all(a <= b for a, b, _ in flat)
    assert all(b < c for (_, b, _), (c, _, _) in zip(flat, flat[1:]))       # sorted, disjoint
    assert {k for _, _, k in flat} == {SPLIT, JOIN, BREAK}
    assert SCRIPT_ARRAYS.shape == (3, len(flat)) and not SCRIPT_ARRAYS.flags.writeable
    assert [tuple(r) for r in SCRIPT_ARRAYS.T.tolist()] == [tuple(r) for r in flat]
    for first, last, kind, what in SCRIPT_TABLE:
        assert 0x80 <= first <= last <= 0x10FFFF and kind in (SPLIT, JOIN, BREAK) and what
    table_points = [cp for a, b, _ in flat for cp in range(a, b + 1)]
    # white space is never a table character; ASCII never is (its punctuation is fixed)
    assert not any(chr(cp).isspace() for cp in table_points)
    assert min(table_points) >= 0x80
    # Korean is written with spaces: Hangul syllables and jamo stay in words
    for a, b in [(0x1100, 0x11FF), (0x3131, 0x318E), (0xA960, 0xA97F), (0xAC00, 0xD7A3),
                 (0xD7B0, 0xD7FF), (0xFFA0, 0xFFDC)]:
        assert all(script_kind(chr(cp)) == WORD for cp in range(a, b + 1))
    # every mark that joins is a combining mark (or the halfwidth voiced sound marks)
    for a, b, k in flat:
        if k == JOIN:
            for cp in range(a, b + 1):
                cat = unicodedata.category(chr(cp))
                assert cat[0] == "M" or cat == "Cn" or chr(cp) in "\uff9e\uff9f", hex(cp)
    # the flattened table and the rows agree everywhere
    for cp in list(range(0x80, 0x3400)) + list(range(0xF000, 0x10000)) + \
            [0x1AFF0, 0x1B2FF, 0x1B300, 0x20000, 0x3FFFF, 0x40000, 0xE0100, 0xE01F0]:
        assert script_kind(chr(cp)) == kind_of(chr(cp)), hex(cp)


# -- hand answers -----------------------------------------------------------------------------

HAND = [
    ("这部电影非常好看，演员也很棒", {},
     list("这部电影非常好看，演员也很棒")),
    ("我用iPhone 15拍的照片，很清楚！", {},
     ["我", "用", "iphone", "15", "拍", "的", "照", "片", "，", "很", "清", "楚", "！"]),
    ("東京の映画は「素晴らしい」です。", {}, list("東京の映画は「素晴らしい」です。")),
    ("カタカナ・ひらがな〜ー", {}, list("カタカナ・ひらがな〜ー")),
    ("ที่นี่ดีมาก", {}, ["ที่", "นี่", "ดี", "ม", "า", "ก"]),          # marks stay on their letter
    ("ສະບາຍດີ", {}, ["ສ", "ະ", "ບ", "າ", "ຍ", "ດີ"]),          # ະ is a letter, ີ a mark
    ("ភាសាខ្មែរ", {}, ["ភា", "សា", "ខ្", "មែ", "រ"]),
    ("မြန်မာ", {}, ["မြ", "န်", "မာ"]),
    ("བཀྲ་ཤིས་བདེ་ལེགས། ok", {}, ["བཀྲ", "ཤིས", "བདེ", "ལེགས", "།", "ok"]),
    ("이 영화 정말 좋아요!", {}, ["이", "영화", "정말", "좋아요", "!"]),        # Hangul: words
    ("好😀棒 😀😀 👍🏽", {}, ["好", "😀", "棒", "😀😀", "👍🏽"]),                  # emoji: words
    ("好\u0301\u0302x e\u0301 \u0301好", {}, ["好\u0301\u0302", "x", "e\u0301", "\u0301", "好"]),
    ("（好）【棒】「嗯」『啊』、。！？：；", {}, list("（好）【棒】「嗯」『啊』、。！？：；")),
    ("“Great” film… – really — don’t ‘x’", {},
     ["“", "great", "”", "film", "…", "–", "really", "—", "don’t", "‘x’"]),
    ("ｶﾞｲﾄﾞ ＡＢＣ１２３", {}, ["ｶﾞ", "ｲ", "ﾄﾞ", "ａｂｃ１２３"]),
    ("ｶﾞｲﾄﾞ ＡＢＣ１２３…", dict(nfkc=True), ["ガ", "イ", "ド", "abc123", ".", ".", "."]),
    ("ＡＢＣ", dict(nfkc=True, lowercase=False), ["ABC"]),
    ("Bon<br />好<BR />看", {}, ["bon", "好", "看"]),
    ("a\ud800好\udc00", {}, ["a\ud800", "好", "\udc00"]),
    ("这部电影非常好看，演员也很棒", dict(split=False), ["这部电影非常好看，演员也很棒"]),
    ("東京の映画 great!", dict(split=False), ["東京の映画", "great", "!"]),
]


@pytest.mark.parametrize("text, kw, expected", HAND, ids=[str(i) for i in range(len(HAND))])
def test_hand_answers(text, kw, expected):
    kw = dict(dict(split=True), **kw)
    assert ref_tokens(text, **kw) == expected
    assert tokenize(text, kw.get("lowercase", True), kw["split"], kw.get("nfkc", False)) == expected
    # the compiled path and the reference hasher give mmh3's buckets of these tokens
    for ngrams, lengths in ((3, ()), (2, (1, 2, 3))):
        h = Hasher(ngrams=ngrams, n_bits=31, char_ngrams=max(lengths, default=0),
                   char_min=min(lengths, default=0), lowercase=kw.get("lowercase", True),
                   split_scripts=kw["split"], nfkc=kw.get("nfkc", False))
        want = ref_buckets(text, ngrams, 31, 0, lengths, h.lowercase, h.split_scripts, h.nfkc)
        assert h.buckets(text).tolist() == want
        assert h.reference_buckets(text).tolist() == want


def test_word_ngrams_over_split_text_are_character_ngrams():
    h = Hasher(ngrams=3, n_bits=31, split_scripts=True)
    words, chars = h.keys("好看的电影 ok")
    assert chars == []
    assert words == ["好", "看", "的", "电", "影", "ok", "好 看", "看 的", "的 电", "电 影",
                     "影 ok", "好 看 的", "看 的 电", "的 电 影", "电 影 ok"]


# -- compiled == reference over random text of every script --------------------------------

ALPHABET = (list("abcXYZ019 .,!?\"();:'-") + list("好看电影東京的很棒一") + list("のはがカタナ")
            + ["\u3099", "\u309a", "\uff76", "\uff9e", "\uff65"] + list("ภาษาไทยที่นี่")
            + list("ລາວດີ") + list("ខ្មែរ") + list("မြန်မာ") + list("བཀྲ་ཤིས།༌")
            + list("한국어 영화") + ["\u0301", "\u0308", "\ufe0f", "\U000e0100"]
            + list("，。、「」【】！？：；（）") + list("“”‘’…–—") + list("ＡＢｃ１２")
            + ["😀", "👍", "\U0001F3FD", "\u200d", "\u3000", "\xa0", "\n", "\t", "<br />",
               "\ud800", "\U00020000", "\U0003134a", "ㄅㄆ", "ꀀ", "\u2e80", "\uf900", "\U0002f800"]
            + [chr(cp) for a, b, _ in flat_ranges() for cp in (a - 1, a, b, b + 1)
               if not 0xD800 <= cp <= 0xDFFF])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from(ALPHABET), max_size=40),
       split=st.booleans(), nfkc=st.booleans(), lowercase=st.booleans(),
       ngrams=st.integers(1, 3), chars=st.sampled_from([(), (3,), (1, 2, 3), (2,)]))
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_compiled_equals_reference_on_random_text(parts, split, nfkc, lowercase, ngrams, chars):
    text = "".join(parts)
    h = Hasher(ngrams=ngrams, n_bits=18, seed=5, char_ngrams=max(chars, default=0),
               char_min=min(chars, default=0) if len(chars) > 1 else 0, lowercase=lowercase,
               split_scripts=split, nfkc=nfkc)
    want = ref_buckets(text, ngrams, 18, 5, chars, lowercase, split, nfkc)
    assert h.reference_buckets(text).tolist() == want
    assert tokenize(text, lowercase, split, nfkc) == ref_tokens(text, lowercase, split, nfkc)
    # in a batch with other documents (buffers sized by the longest), and alone
    ids, offsets = h.batch(["x y", text, "", text[::-1]])
    assert ids[offsets[1]:offsets[2]].tolist() == want
    assert ids[offsets[3]:offsets[4]].tolist() == \
        ref_buckets(text[::-1], ngrams, 18, 5, chars, lowercase, split, nfkc)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_long_document_of_split_characters():
    rng = np.random.default_rng(3)
    alphabet = list("好看电影东京的很棒，。ภาษาไทยที่ﾞ\u0301 ab") + ["。\n", "“", "་"]
    text = "".join(rng.choice(alphabet, size=60_000))
    h = Hasher(ngrams=3, n_bits=24, char_ngrams=3, char_min=1, split_scripts=True)
    assert h.buckets(text).tolist() == h.reference_buckets(text).tolist() == \
        ref_buckets(text, 3, 24, 0, (1, 2, 3), True, True)


# -- off: the former tokenizer, bit for bit --------------------------------------------------

FORMER = ["这部电影非常好看，演员也很棒", "東京の映画は「素晴らしい」です。", "ภาษาไทยที่นี่ ง่ายนิดเดียว",
          "བཀྲ་ཤིས་བདེ་ལེགས།", "이 영화 정말 좋아요!", "我用iPhone 15拍的照片，很清楚！",
          "“Great” film… – really — don’t", "ＧＯＯＤ１２３ ｶﾞｲﾄﾞ （好）【棒】", "好\u0301 e\u0301 \u0301好",
          "Café naïve – 東京<br />Ünïcode, 😀好😀", "a\ud800b 好\udc00", "", "  \t "]
# sha256 of (ids, offsets) of Hasher.batch(FORMER) computed with the tokenizer of commit
# 0dec567, before split_scripts existed
FORMER_DIGESTS = {
    "3-31-chars2-4": "31159ff65cc56e12591481e9e70ff03f6efc113b438a2a35b98fbbd54b9f4ce7",
    "2-20-case-seed7": "a859d43bfb5f2e895060391096e69c7585d16e32e1ccc783e520d50ef6135687",
}


def _former_tokenize(text, lowercase=True):
    """The tokenizer as it was (docs/design.md before the option)."""
    text = (text.lower() if lowercase else text).replace("<br />", " ")
    return re.sub(r'([.",()!?;:])', r" \1 ", text).split()


def test_off_is_the_former_tokenizer_bit_for_bit():
    assert Hasher() == Hasher(split_scripts=False, nfkc=False)       # the dataclass default
    for text in FORMER:
        assert tokenize(text) == _former_tokenize(text) == ref_tokens(text)
        assert tokenize(text, False) == _former_tokenize(text, False)
    for key, h in (("3-31-chars2-4", Hasher(ngrams=3, n_bits=31, char_ngrams=4, char_min=2)),
                   ("2-20-case-seed7", Hasher(ngrams=2, n_bits=20, lowercase=False, seed=7))):
        ids, offsets = h.batch(FORMER)
        assert hashlib.sha256(ids.tobytes() + offsets.tobytes()).hexdigest() == \
            FORMER_DIGESTS[key]
        for j, text in enumerate(FORMER):
            assert ids[offsets[j]:offsets[j + 1]].tolist() == h.reference_buckets(text).tolist()


def test_new_models_split_and_settings_flow_into_the_hasher():
    clf = NBSVMClassifier()
    assert clf.split_scripts is True and clf.nfkc is False
    h = clf.validate()
    assert h.split_scripts is True and h.nfkc is False
    h = NBSVMClassifier(split_scripts=False, nfkc=True).validate()
    assert (h.split_scripts, h.nfkc) == (False, True)
    assert Hasher(**h.settings()) == h
    assert repr(NBSVMClassifier(split_scripts=False)) == "NBSVMClassifier(split_scripts=False)"
    with pytest.raises(Exception, match="split_scripts must be True or False"):
        NBSVMClassifier(split_scripts="yes").validate()
    with pytest.raises(Exception, match="nfkc must be True or False"):
        Hasher(nfkc=1)


# -- files written before the option ------------------------------------------------------

def _strip_keys(path, kind, where):
    """Rewrite ``path`` as a version before the option wrote it: without split_scripts and
    nfkc in the header's dicts at ``where``."""
    header, arrays = load_npz(path, kind)
    for keys in where:
        d = header
        for k in keys:
            d = d[k]
        d.pop("split_scripts")
        d.pop("nfkc")
    save_npz(path, kind, {k: v for k, v in header.items()
                          if k not in ("kind", "format_version", "checksum")}, arrays)


def _zh_rows():
    return [line.rstrip("\n").split("\t") for line in ZH.read_text(encoding="utf-8").splitlines()]


def test_old_model_lexicon_cache_and_checkpoint_tokenize_as_before(tmp_path):
    rows = _zh_rows()
    texts, labels = [t for _, t in rows], [l for l, _ in rows]
    probes = texts[:6] + ["这部电影非常好看", "很差 bad", "東京"]
    old = NBSVMClassifier(n_bits=14, epochs=2, split_scripts=False, keep_counts=True)
    old.fit(texts, labels)
    path = tmp_path / "old.npz"
    old.save(path)
    _strip_keys(path, "model", [("params",), ("hasher",), ("lexicon", "hasher")])
    header, _ = load_npz(path, "model")
    assert "split_scripts" not in header["params"] and "split_scripts" not in header["hasher"]
    loaded = NBSVMClassifier.load(path)
    assert loaded.split_scripts is False and loaded.nfkc is False
    assert loaded.hasher_ == Hasher(**header["hasher"]) == old.hasher_
    assert loaded.hasher_.split_scripts is False
    assert np.array_equal(loaded.decision_function(probes), old.decision_function(probes))
    # train --init continues it with its own (former) tokenizer
    out = tmp_path / "more.npz"
    zh = tmp_path / "zh.txt"
    zh.write_text("".join(f"{l}\t{t}\n" for l, t in rows[:20]), encoding="utf-8")
    r = runner.invoke(app, ["train", str(zh), "--init", str(path), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert NBSVMClassifier.load(out).hasher_.split_scripts is False
    # a lexicon file
    lex = NBLexicon(Hasher(n_bits=12)).fit(texts, labels)
    lpath = tmp_path / "lex.npz"
    lex.save(lpath)
    _strip_keys(lpath, "lexicon", [("hasher",)])
    assert NBLexicon.load(lpath).hasher == Hasher(n_bits=12)
    r = runner.invoke(app, ["train", str(zh), "--lexicon", str(lpath), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert NBSVMClassifier.load(out).hasher_ == Hasher(n_bits=12)    # the lexicon's settings
    # a feature cache
    h = Hasher(ngrams=2, n_bits=12)
    with CacheWriter(tmp_path / "cache", h) as w:
        w.add(hash_batch([Document(l, t, "m", i + 1) for i, (l, t) in enumerate(rows)], h))
        w.close().close()
    meta_path = tmp_path / "cache" / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["hasher"]["split_scripts"], meta["hasher"]["nfkc"]
    meta_path.write_text(json.dumps(meta))
    assert FeatureCache(tmp_path / "cache").hasher == h
    # a checkpoint: resumable with the former tokenizer, refused with the new one
    clf = NBSVMClassifier(n_bits=12, epochs=3, split_scripts=False).fit(texts, labels)
    cp = tmp_path / "m.checkpoint.npz"
    Checkpoint(cp, every=1).save(clf, 2, np.random.default_rng(0))
    _strip_keys(cp, CHECKPOINT, [("fingerprint", "params")])
    assert Checkpoint(cp, resume=True).read(clf.get_params(), 3) is not None
    with pytest.raises(Exception, match="split_scripts"):
        Checkpoint(cp, resume=True).read(dict(clf.get_params(), split_scripts=True), 3)


# -- a language without spaces: the Chinese fixture ------------------------------------------

def _folds(rows, k=4):
    """Lines come in pos/neg pairs on one subject: fold f holds out every k-th pair."""
    for f in range(k):
        test = [r for i, r in enumerate(rows) if (i // 2) % k == f]
        train = [r for i, r in enumerate(rows) if (i // 2) % k != f]
        yield train, test


def test_chinese_reviews_are_learned_only_with_split_scripts():
    rows = _zh_rows()
    assert len(rows) == 80 and {l for l, _ in rows} == {"pos", "neg"}
    assert not any(" " in t for _, t in rows)                   # no spaces: one token each
    acc = {}
    for split in (True, False):
        scores = []
        for train, test in _folds(rows):
            # (without split_scripts, character n-grams of the one token would stand in
            # for it: off, to see the tokenizer alone)
            clf = NBSVMClassifier(n_bits=16, split_scripts=split, char_ngrams=0,
                                  long_words=20 if split else 0).fit(
                [t for _, t in train], [l for l, _ in train])
            scores.append(np.mean(clf.predict([t for _, t in test]) == [l for l, _ in test]))
        acc[split] = float(np.mean(scores))
    assert acc[True] >= 0.85, acc          # 80 held-out reviews over four folds
    assert acc[False] <= 0.6, acc          # every held-out review is one unseen token


# -- explanations ------------------------------------------------------------------------------

SENTENCE = "这部电影非常好看，演员也很棒"


@pytest.fixture(scope="module")
def zh_model():
    rows = _zh_rows()
    # word n-grams only: the characters split by the tokenizer are what it names
    return NBSVMClassifier(n_bits=16, char_ngrams=0).fit([t for _, t in rows],
                                                         [l for l, _ in rows])


def test_explaining_chinese_names_character_ngrams(zh_model):
    e = explain_text(zh_model, SENTENCE)
    assert e["class"] == "pos"
    words = [r["ngram"] for r in e["ngrams"] if r["kind"] == "word"]
    assert words[:14] == list(SENTENCE)
    assert "好 看" in words and "演 员 也" in words
    assert e["constant"] + sum(r["contribution"] for r in e["ngrams"]) == \
        pytest.approx(e["score"], abs=1e-9)
    for r in e["ngrams"]:                                       # each row's bucket is its own
        assert r["bucket"] == bucket_of(r["ngram"], zh_model.n_bits)
    # the shaded text is the sentence itself, one span per character, no spaces put in
    page = shaded_html(e)
    shaded = re.search(r"<p class='shaded'[^>]*>(.*?)</p>", page).group(1)
    spans = re.findall(r'<span title="[^"]*" style="[^"]*">([^<]*)</span>', shaded)
    assert [htmlmod.unescape(s) for s in spans] == list(SENTENCE)
    assert htmlmod.unescape(re.sub(r"<[^>]+>", "", shaded)) == SENTENCE
    # the server's answer carries the same page
    found = explanation(zh_model, SENTENCE)
    assert found["html"] == page and found["prediction"]["label"] == "pos"
    # mixed text: words spaced, characters not
    assert word_gaps(["iphone", "很", "好", "用", "!", "ok"]) == ["", " ", "", "", " ", " "]
    e = explain_text(zh_model, "ที่นี่ ok 好看")
    shaded = re.search(r"<p class='shaded'[^>]*>(.*?)</p>", shaded_html(e)).group(1)
    assert re.sub(r"<[^>]+>", "", shaded) == "ที่นี่ ok 好看"    # a mark never stands alone


def test_bucket_names_of_a_chinese_model(zh_model):
    frame = top_features(zh_model, 10)
    names = [n for cell in frame.ngrams for n in cell.split(" | ")]
    assert names and not any("\ufffd" in n or n.startswith("<bucket") for n in names)
    for cell, b in zip(frame.ngrams, frame.bucket):
        for name in cell.split(" | "):
            assert bucket_of(name, zh_model.n_bits) == b
    assert any("差" in n for n in names) and any("好" in n or "棒" in n for n in names)


def test_cli_explain_info_and_split_flags(tmp_path, zh_model):
    train = tmp_path / "train.txt"
    test = tmp_path / "test.txt"
    rows = _zh_rows()
    train.write_text("".join(f"{l}\t{t}\n" for l, t in rows[:60]), encoding="utf-8")
    test.write_text("".join(f"{l}\t{t}\n" for l, t in rows[60:]), encoding="utf-8")
    acc = {}
    for flags in ([], ["--no-split-scripts"], ["--nfkc"]):
        out = tmp_path / "m.npz"
        r = runner.invoke(app, ["train", str(train), "-o", str(out), "--n-bits", "16",
                                "--test", str(test), "--json", *flags])
        assert r.exit_code == 0, r.output
        acc[" ".join(flags)] = json.loads(r.stdout)["accuracy"]
        info = json.loads(runner.invoke(app, ["info", str(out), "--json"]).stdout)
        assert info["hasher"]["split_scripts"] == ("--no-split-scripts" not in flags)
        assert info["hasher"]["nfkc"] == ("--nfkc" in flags)
        assert info["settings"]["split_scripts"] == info["hasher"]["split_scripts"]
    assert acc[""] >= 0.8 and acc["--no-split-scripts"] <= 0.6, acc
    r = runner.invoke(app, ["explain", "-m", str(out), "--text", SENTENCE])
    assert r.exit_code == 0, r.output
    assert "好 看" in r.output
    # a lexicon built without splitting gives its settings to the model trained with it
    lex = tmp_path / "lex.npz"
    assert runner.invoke(app, ["lexicon", str(train), "-o", str(lex), "--no-split-scripts",
                               "--n-bits", "14", "-q"]).exit_code == 0
    r = runner.invoke(app, ["train", str(train), "--lexicon", str(lex), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert NBSVMClassifier.load(out).split_scripts is False
