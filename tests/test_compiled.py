"""The compiled tokenizer + MurmurHash3 (nbsvm/text/_kernels.py) against mmh3 and the
plain-Python definition: random bytes, all of Unicode, real IMDB reviews, hand-made edge
cases and undecodable files.

Every comparison is ``np.array_equal`` on the ids in order (distinct, in order of first
occurrence: unigrams, bigrams, ..., then character n-grams hashed with ``seed + 1``).
"""
import functools
import re
import time
import tarfile

import mmh3
import numpy as np
import pytest
from numba import njit

from nbsvm.data.batches import hash_batches
from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document
from nbsvm.io.labeled_lines import read_lines
from nbsvm.text._murmur import murmur3_32
from nbsvm.text._tokenizer import _is_space
from nbsvm.text.hashing import Hasher

from conftest import shared_datasets
from naive import naive_buckets, naive_tokens

ARCHIVE = shared_datasets() / "imdb" / "aclImdb_labeled.tar.gz"


def assert_same_as_reference(hasher: Hasher, texts: list[str], naive: bool = True):
    """batch(), buckets() and the reference agree on every text (and with naive.py)."""
    ids, offsets = hasher.batch(texts)
    assert ids.dtype == np.int32 and offsets.dtype == np.int64
    assert offsets.shape == (len(texts) + 1,) and offsets[0] == 0 and offsets[-1] == ids.size
    for j, text in enumerate(texts):
        ref = hasher.reference_buckets(text)
        assert ref.dtype == np.int32
        got = ids[offsets[j]:offsets[j + 1]]
        assert np.array_equal(got, ref), (hasher, j, text[:200])
        if naive:
            assert got.tolist() == naive_buckets(text, hasher.ngrams, hasher.n_bits, hasher.seed,
                                                 hasher.char_ngrams, hasher.long_words), \
                (hasher, j, text[:200])
    return ids, offsets


# -- MurmurHash3 ----------------------------------------------------------------------------

def _mm(data: bytes, seed: int, start: int = 0) -> int:
    buf = np.frombuffer(b"\x00" * start + data + b"\x00" * 3, dtype=np.uint8)
    return murmur3_32(buf, start, len(data), seed)


@pytest.mark.parametrize("data, seed, expected", [
    # published MurmurHash3_x86_32 test vectors
    (b"", 0, 0), (b"", 1, 0x514E28B7), (b"", 0xFFFFFFFF, 0x81F16F39),
    (b"\xff\xff\xff\xff", 0, 0x76293B50), (b"\x21\x43\x65\x87", 0, 0xF55B516B),
    (b"\x21\x43\x65\x87", 0x5082EDEE, 0x2362F9DE), (b"\x21\x43\x65", 0, 0x7E4A8634),
    (b"\x21\x43", 0, 0xA0F7B07A), (b"\x21", 0, 0x72661CF4), (b"\x00\x00\x00\x00", 0, 0x2362F9DE),
    (b"Hello, world!", 1234, 0xFAF6CDB3),
    (b"The quick brown fox jumps over the lazy dog", 0x9747B28C, 0x2FA826CD),
])
def test_murmur3_known_answers(data, seed, expected):
    assert mmh3.hash(data, seed, signed=False) == expected
    assert _mm(data, seed) == expected
    assert _mm(data, seed, start=5) == expected          # at an offset inside a buffer


def test_murmur3_equals_mmh3_on_random_bytes():
    rng = np.random.default_rng(2024)
    pool = rng.integers(0, 256, size=4096, dtype=np.uint8)
    pool[:256] = np.arange(256)                          # every byte value occurs
    seeds = [0, 1, 2**31 - 1, 2**31, 2**32 - 1] + rng.integers(0, 2**32, size=20).tolist()
    n = 0
    for length in range(0, 71):                          # every tail length, many blocks
        for seed in seeds:
            start = int(rng.integers(0, pool.size - length))
            want = mmh3.hash(pool[start:start + length].tobytes(), seed, signed=False)
            got = murmur3_32(pool, start, length, seed)
            assert got == want, (length, seed, start)
            assert 0 <= got < 2**32
            n += 1
    assert n == 71 * 25


# -- white space: every code point ----------------------------------------------------------

@njit(cache=False)
def _space_table(n):
    out = np.zeros(n, np.bool_)
    for cp in range(n):
        out[cp] = _is_space(cp)
    return out


@pytest.mark.slow  # over 1.5 s (make test-slow; CI runs it after make test)
def test_is_space_equals_str_isspace_on_all_of_unicode():
    got = _space_table(0x110000)
    want = np.fromiter((chr(c).isspace() for c in range(0x110000)), dtype=bool, count=0x110000)
    assert got.shape == want.shape
    assert np.array_equal(got, want), np.flatnonzero(got != want)[:20]
    assert int(want.sum()) == 29                        # Python 3.11's Unicode 14 table


@functools.cache
def whitespace() -> list[str]:
    """Every Unicode whitespace character (built when a test asks: 1 s, where every
    pytest-xdist worker collects this file)."""
    return [chr(c) for c in range(0x110000) if chr(c).isspace()]


@pytest.mark.parametrize("kw", [dict(ngrams=1, n_bits=31), dict(ngrams=3, n_bits=20, char_ngrams=3)])
def test_every_unicode_whitespace_separates_tokens(kw):
    h = Hasher(**kw)
    # each separator alone, doubled, and mixed with the others
    WHITESPACE = whitespace()
    text = "".join(f"w{i}{ws}" for i, ws in enumerate(WHITESPACE))
    text += "".join(f"v{i}{ws}{ws}" for i, ws in enumerate(WHITESPACE)) + "end"
    tokens = naive_tokens(text)
    assert tokens == [f"w{i}" for i in range(len(WHITESPACE))] + \
        [f"v{i}" for i in range(len(WHITESPACE))] + ["end"]
    assert_same_as_reference(h, [text, "".join(WHITESPACE), WHITESPACE[5] + "x" + WHITESPACE[-1]])
    if kw["ngrams"] == 1:     # hand answer: one bucket per token, in order
        want = [mmh3.hash(t.encode(), 0, signed=False) & (2**31 - 1) for t in tokens]
        assert h.buckets(text).tolist() == list(dict.fromkeys(want))


def test_non_space_neighbours_do_not_separate():
    # code points next to the white-space ranges, and format characters that look blank
    h = Hasher(ngrams=2, n_bits=31)
    glue = ["\x1b", "\x7f", "\x80", "\x84", "\x86", "\x9f", "\u180e", "\u200b", "\u200c",
            "\u2060", "\ufeff", "\u2027", "\u202a", "\u205e", "\u3001", "\u1fff", "\u200b"]
    for ch in glue:
        assert not ch.isspace()
        text = f"left{ch}right other"
        assert h.buckets(text).tolist() == naive_buckets(text, 2, 31)
        assert naive_tokens(text) == [f"left{ch}right", "other"]


# -- real text: IMDB reviews ----------------------------------------------------------------

N_REVIEWS = 3000


@pytest.fixture(scope="module")
def imdb_texts():
    """The first 3000 labeled reviews in the archive (a stream read, nothing extracted)."""
    if not ARCHIVE.is_file():
        pytest.skip(f"IMDB archive not found at {ARCHIVE}")
    pattern = re.compile(r"^aclImdb/(?:train|test)/(?:pos|neg)/[^/]+\.txt$")
    texts = []
    with tarfile.open(ARCHIVE, "r|gz") as tar:
        for member in tar:
            if member.isfile() and pattern.match(member.name):
                texts.append(tar.extractfile(member).read().decode("utf-8", errors="replace"))
                if len(texts) == N_REVIEWS:
                    break
    assert len(texts) == N_REVIEWS
    return texts


def test_imdb_sample_is_varied(imdb_texts):
    non_ascii = [t for t in imdb_texts if any(ord(c) > 127 for c in t)]
    assert len(non_ascii) >= 50                         # accents, dashes, quotes, ...
    assert sum("<br />" in t for t in imdb_texts) > 1000
    assert max(len(t) for t in imdb_texts) > 5000


# make test-slow: three of the six settings (the default suite keeps 1-4 and 5 bits of
# character n-grams, 0 and 12345 as seeds)
SLOW = pytest.mark.slow


@pytest.mark.parametrize("ngrams, n_bits, char_ngrams, seed", [
    (1, 4, 0, 0),
    pytest.param(2, 18, 3, 1, marks=SLOW),
    pytest.param(3, 24, 0, 12345, marks=SLOW),
    pytest.param(3, 31, 5, 2**32 - 1, marks=SLOW),
    pytest.param(1, 31, 3, 7, marks=SLOW),
    (2, 24, 5, 0),
])
def test_imdb_compiled_equals_reference(imdb_texts, ngrams, n_bits, char_ngrams, seed):
    h = Hasher(ngrams=ngrams, n_bits=n_bits, char_ngrams=char_ngrams, seed=seed)
    # the slow reference on every third review (each third under two of the six settings:
    # the suite's time), the compiled hasher on all of them
    assert_same_as_reference(h, imdb_texts[(ngrams + char_ngrams + seed) % 3 :: 3], naive=False)
    ids, offsets = h.batch(imdb_texts)
    # the same ids whatever the batching (the per-document de-duplication starts afresh)
    docs = [Document("x", t, "imdb", i + 1) for i, t in enumerate(imdb_texts)]
    for hashers in (1, 2, 3):       # several hasher threads: still in the reader's order
        parts = list(hash_batches(iter(docs), h, batch_docs=701, hashers=hashers))
        assert [len(b) for b in parts] == [701] * 4 + [3000 - 4 * 701]
        assert [b.lines[0] for b in parts] == [1 + 701 * k for k in range(5)]
        assert np.array_equal(np.concatenate([b.ids for b in parts]), ids)
    for j in (0, 1234, 2999):
        assert np.array_equal(h.buckets(imdb_texts[j]), ids[offsets[j]:offsets[j + 1]])


@pytest.mark.parametrize("kw", [dict(ngrams=3, n_bits=24), pytest.param(
    dict(ngrams=2, n_bits=20, char_ngrams=4, nfkc=True), marks=SLOW)])  # NFKC: edge cases below
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_imdb_with_split_scripts_compiled_equals_reference(imdb_texts, kw):
    # English with its curly quotes, dashes and ellipses: split off as punctuation
    h = Hasher(split_scripts=True, **kw)
    assert_same_as_reference(h, imdb_texts[:1500], naive=False)


@pytest.mark.parametrize("long_words", [20, pytest.param(6, marks=SLOW)])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_imdb_without_spaces_long_words_compiled_equals_reference(imdb_texts, long_words):
    # the default tokenizer of new models on IMDB as written and with its spaces removed
    # (a token of more than long_words code points also gives its character 4-grams)
    h = Hasher(split_scripts=True, long_words=long_words)
    texts = imdb_texts[:600] + ["".join(t.split()) for t in imdb_texts[600:1200]]
    assert_same_as_reference(h, texts, naive=False)
    assert_same_as_reference(Hasher(ngrams=2, long_words=long_words), texts[::7], naive=True)


def test_long_words_hand_answers():
    # "abcdef" has 6 code points: its 4-grams with long_words 5, none with 6
    words = _hand(["abcdef", "xy", "abcdef xy"])
    chars = _hand(["<abc", "abcd", "bcde", "cdef", "def>"], seed=1)
    h = Hasher(ngrams=2, n_bits=31, long_words=5)
    assert h.buckets("abcdef xy").tolist() == list(dict.fromkeys(words + chars))
    assert Hasher(ngrams=2, n_bits=31, long_words=6).buckets("abcdef xy").tolist() == words
    # code points, not bytes: 5 two-byte letters are not longer than 5
    assert Hasher(ngrams=1, n_bits=31, long_words=5).buckets("ééééé").tolist() == \
        _hand(["ééééé"])
    with pytest.raises(NBSVMError, match="long_words"):
        Hasher(long_words=-1)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_imdb_sample_equals_naive_reference(imdb_texts):
    # naive.py's tokenizer (character loop, no regex) on the non-ASCII reviews
    h = Hasher(ngrams=2, n_bits=22, char_ngrams=4, seed=3)
    sample = [t for t in imdb_texts if any(ord(c) > 127 for c in t)][:150]
    assert_same_as_reference(h, sample, naive=True)


# -- hand-made edge cases -------------------------------------------------------------------

EDGE = {
    "empty": "",
    "blank": " \t\n\r\x0b\x0c  \u3000\xa0",
    "punctuation": "!!!...??",
    "quotes": '""',
    "all_punctuation": '.",()!?;:',
    "punct_glued": 'a.b,c"d(e)f!g?h;i:j',
    "nul_and_controls": "a\x00b \x00 \x01c\x7f d\x1b[0m e\x08 \x00\x00",
    "c1_controls": "x\x80y \x85z \x9f",
    "emoji": "I \U0001F600 love \U0001F3AC\U0001F44D\U0001F3FD movies \U0001F468\u200d\U0001F469\u200d\U0001F467!",
    "cjk": "東京の映画は素晴らしい！ 대한민국 영화, 中文。",
    "combining": "e\u0301te\u0301 cafe\u0301 n\u0303 a\u0308\u0304 \u0301",
    "case_mapping": "İstanbul ẞTRASSE ΣΊΣΥΦΟΣ ǅ ﬁne Ⅻ",
    "br": "One<BR />two<br />three<Br/>four<br/>five<br  />six<BR/ >",
    "crlf": "line one\r\nline two\r\n\r\nthree\rfour\n",
    "specials": "\ufeffbom \u200b zero-width \u00ad soft \u2028 \u2029 \x85 \u180e x",
    "max_utf8": "\U0010FFFF \U000E0001 \uFFFD \uFFFF \U0001D54F",
    "lone_surrogate": "a\ud800b",
    "lone_low_surrogate": "x \udfff y \udc80z",
    "split_pair": "p \ud83d\ude00 q \ud83d",
    "only_surrogate": "\ud800",
    "surrogate_in_punct": "(\udbff)! \ud800.",
}

SETTINGS = [dict(ngrams=1, n_bits=31), dict(ngrams=3, n_bits=24, seed=9),
            dict(ngrams=2, n_bits=31, char_ngrams=2), dict(ngrams=3, n_bits=20, char_ngrams=5, seed=2**32 - 1),
            dict(ngrams=16, n_bits=12, char_ngrams=32), dict(ngrams=2, n_bits=1, char_ngrams=3),
            dict(ngrams=2, n_bits=31, long_words=3), dict(ngrams=1, n_bits=20, long_words=1),
            dict(ngrams=2, n_bits=24, char_ngrams=3, long_words=3)]


@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items()))
def test_edge_cases_compiled_equals_reference(kw):
    h = Hasher(**kw)
    texts = list(EDGE.values())
    assert_same_as_reference(h, texts)
    # one at a time, and in reverse order (each document's buffers start clean)
    for name, text in EDGE.items():
        assert np.array_equal(h.buckets(text), h.reference_buckets(text)), name
    ids, offsets = h.batch(texts[::-1])
    for j, text in enumerate(texts[::-1]):
        assert np.array_equal(ids[offsets[j]:offsets[j + 1]], h.reference_buckets(text))


@pytest.mark.parametrize("kw", [dict(ngrams=3, n_bits=24, split_scripts=True),
                                dict(ngrams=2, n_bits=31, char_ngrams=3, split_scripts=True,
                                     nfkc=True),
                                dict(ngrams=1, n_bits=12, char_ngrams=4, char_min=1, nfkc=True,
                                     lowercase=False)],
                         ids=["split", "split-nfkc-chars", "nfkc-chars"])
def test_edge_cases_with_split_scripts_and_nfkc_compiled_equals_reference(kw):
    # the tokenizer of split_scripts / nfkc (tests/test_scripts.py has its own reference)
    h = Hasher(**kw)
    assert_same_as_reference(h, list(EDGE.values()), naive=False)
    for name, text in EDGE.items():
        assert np.array_equal(h.buckets(text), h.reference_buckets(text)), name


def _hand(keys, n_bits=31, seed=0):
    mask = (1 << n_bits) - 1
    return list(dict.fromkeys(mmh3.hash(k.encode("utf-8", "surrogatepass"), seed, signed=False)
                              & mask for k in keys))


def test_edge_cases_hand_answers():
    h2 = Hasher(ngrams=2, n_bits=31)
    assert h2.buckets("").tolist() == []
    assert h2.buckets(EDGE["blank"]).tolist() == []
    assert Hasher(ngrams=3, n_bits=8, char_ngrams=3).buckets("  \n ").size == 0
    assert h2.buckets("!!!...??").tolist() == _hand(
        ["!", "!", "!", ".", ".", ".", "?", "?", "! !", "! !", "! .", ". .", ". .", ". ?", "? ?"])
    assert h2.buckets('""').tolist() == _hand(['"', '"', '" "'])
    # <br /> is removed after lowercasing; other spellings are not line breaks
    assert Hasher(ngrams=1, n_bits=31).buckets("One<BR />two<br/>x").tolist() == \
        _hand(["one", "two<br/>x"])
    # Windows line ends are white space
    assert h2.buckets("line one\r\nline two\r\n").tolist() == \
        _hand(["line", "one", "line", "two", "line one", "one line", "line two"])
    # NUL and other control characters are ordinary token characters
    assert Hasher(ngrams=1, n_bits=31).buckets("a\x00b \x01").tolist() == _hand(["a\x00b", "\x01"])
    # lone surrogates: hashed as their 3-byte (surrogatepass) form, one character each
    hc = Hasher(ngrams=1, n_bits=31, char_ngrams=3)
    want = _hand(["a\ud800b"]) + _hand(["<a\ud800", "a\ud800b", "\ud800b>"], seed=1)
    assert hc.buckets("a\ud800b").tolist() == list(dict.fromkeys(want))
    # a framed token shorter than n is one key; combining marks count as characters
    assert Hasher(ngrams=1, n_bits=31, char_ngrams=4).buckets("e\u0301").tolist() == \
        list(dict.fromkeys(_hand(["e\u0301"]) + _hand(["<e\u0301>"], seed=1)))


def test_prepare_and_hash_prepared_are_the_two_halves_of_batch():
    h = Hasher(ngrams=2, n_bits=20, char_ngrams=3)
    texts = list(EDGE.values())
    buf, starts = h.prepare(texts)
    want = [t.lower().replace("<br />", " ").encode("utf-8", "surrogatepass") for t in texts]
    assert buf.dtype == np.uint8 and starts.dtype == np.int64
    assert starts.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()
    assert buf[:starts[-1]].tobytes() == b"".join(want)
    ids, offsets = h.hash_prepared(buf, starts)
    ids2, offsets2 = h.batch(texts)
    assert np.array_equal(ids, ids2) and np.array_equal(offsets, offsets2)
    # no documents at all, and only empty documents
    for texts in ([], ["", ""]):
        ids, offsets = h.batch(texts)
        assert ids.size == 0 and offsets.tolist() == [0] * (len(texts) + 1)


def test_single_very_long_token():
    rng = np.random.default_rng(1)
    alphabet = list("abcdefghijklmnopqrstuvwxyzé東\U0001F600")
    token = "".join(rng.choice(alphabet, size=200_000))
    assert len(token) == 200_000 and not any(c.isspace() for c in token)
    for kw in (dict(ngrams=3, n_bits=31, char_ngrams=5), dict(ngrams=1, n_bits=24, char_ngrams=2)):
        h = Hasher(**kw)
        ids, offsets = assert_same_as_reference(h, [token, "short one", token.upper()[:1000]],
                                                naive=False)
        if kw["char_ngrams"] == 5:
            assert offsets[1] > 150_000                       # mostly distinct 5-grams
    # one token of 200k plain letters: a single word id, and char n-grams still all present
    plain = "ab" * 100_000
    h = Hasher(ngrams=2, n_bits=31, char_ngrams=3)
    assert h.buckets(plain).tolist() == \
        list(dict.fromkeys(_hand([plain]) + _hand(["<ab", "aba", "bab", "ab>"], seed=1)))


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_long_document_of_a_million_characters():
    rng = np.random.default_rng(2)
    vocab = ["film", "great", "awful", "Café", "naïve", "東京", "a", "the", "(really)", "wow!",
             "<br />", "don't", "\u2003", "\U0001F3AC", "end.", '"quoted"', "x\ty", "A\r\nB"]
    words = rng.choice(vocab, size=200_000)
    text = " ".join(words)
    while len(text) < 1_000_000:
        text += " " + " ".join(rng.choice(vocab, size=20_000))
    assert len(text) >= 1_000_000
    h = Hasher(ngrams=3, n_bits=24, seed=5)
    ids, _ = assert_same_as_reference(h, [text, "tiny", text[:1000]], naive=False)
    assert h.buckets(text).tolist() == naive_buckets(text, 3, 24, 5)


# -- files with bytes that are not UTF-8 ----------------------------------------------------

def test_invalid_utf8_file_read_then_hashed(tmp_path):
    p = tmp_path / "bad.txt"
    lines = [
        b"pos\tcaf\xe9 au lait",                          # Latin-1 byte
        b"neg\t\xff\xfe\xfd broken \x80\x81 bytes",        # never valid in UTF-8
        b"pos\ttruncated \xe6\x9d at end \xf0\x9f\x98",    # cut multi-byte sequences
        b"neg\tcesu \xed\xa0\x80 surrogate bytes",         # an encoded surrogate is invalid
        b"pos\toverlong \xc0\xaf and \xe0\x80\xaf slash",
        b"neg\tgood \xc3\xa9t\xc3\xa9 \xe6\x9d\xb1 ok",
    ]
    p.write_bytes(b"\n".join(lines) + b"\n")
    docs = list(read_lines(p))
    assert len(docs) == len(lines)
    assert sum("\ufffd" in d.text for d in docs) == 5
    assert docs[0].text == "caf\ufffd au lait" and docs[5].text == "good été 東 ok"
    texts = [d.text for d in docs]
    for kw in (dict(ngrams=3, n_bits=31), dict(ngrams=2, n_bits=18, char_ngrams=3, seed=4)):
        h = Hasher(**kw)
        ids, offsets = assert_same_as_reference(h, texts)
        batches = list(hash_batches(read_lines(p), h))
        assert len(batches) == 1 and np.array_equal(batches[0].ids, ids)
        assert np.array_equal(batches[0].offsets, offsets)
        assert batches[0].labels == ["pos", "neg"] * 3
        assert batches[0].lines == list(range(1, 7)) and batches[0].sources == [str(p)] * 6



@pytest.mark.parametrize("hashers", [1, 2])
def test_an_error_while_reading_or_hashing_surfaces_in_the_caller(hashers, monkeypatch):
    """With several hasher threads, a reader's error (after some batches) and a hasher's
    error are raised where the batches are read, and every thread ends."""
    import threading

    def docs():
        for i in range(5000):
            yield Document("x", f"text {i}", "gen", i + 1)
        raise ValueError("the reader broke")

    h = Hasher(ngrams=1, n_bits=16)
    before = threading.active_count()
    got = []
    with pytest.raises(ValueError, match="the reader broke"):
        for batch in hash_batches(docs(), h, batch_docs=500, hashers=hashers):
            got.append(batch.lines[0])
    assert got == [1 + 500 * k for k in range(10)]        # every batch before the error
    original, calls = Hasher.hash_prepared, []

    def broken(self, buf, starts):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the hasher broke")
        return original(self, buf, starts)

    monkeypatch.setattr(Hasher, "hash_prepared", broken)
    with pytest.raises(RuntimeError, match="the hasher broke"):
        list(hash_batches((Document("x", f"t {i}", "gen", i + 1) for i in range(5000)), h,
                          batch_docs=500, hashers=hashers))
    deadline = time.monotonic() + 10
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threading.active_count() == before


def test_one_slow_batch_does_not_leave_every_later_one_hashed_in_memory(monkeypatch):
    """Two hashers, the first batch slow: the other hasher runs at most the window
    (prefetch + hashers) ahead of the consumer, instead of hashing the whole input while
    the first batch holds the order back."""
    import threading

    original, lock, hashed = Hasher.hash_prepared, threading.Lock(), []

    def slow_first(self, buf, starts):
        with lock:
            hashed.append(1)
            first = len(hashed) == 1
        if first:
            time.sleep(0.5)
        return original(self, buf, starts)

    monkeypatch.setattr(Hasher, "hash_prepared", slow_first)
    docs = (Document("x", f"text {i}", "gen", i + 1) for i in range(400))
    ahead, lines = [], []
    for k, batch in enumerate(hash_batches(docs, Hasher(ngrams=1, n_bits=16), batch_docs=10,
                                           prefetch=2, hashers=2)):
        ahead.append(len(hashed) - k)                # hashed, not yet handed out
        lines.append(batch.lines[0])
    assert lines == [1 + 10 * k for k in range(40)]
    assert max(ahead) <= 2 + 2 + 1, ahead           # the window, and the batch in hand


def test_growing_buffers_keep_every_id_and_every_hit():
    """The kernels' buffers grow past their first sizes (``_grown``): 1,024 hits and 16 KB
    of n-gram text in ``_ngram_hits``; ids past half the text's bytes in ``_hash_docs``
    (one-letter words, each its own n-gram). Both equal the plain-Python definition."""
    from nbsvm.text._ngram_hits import _ngram_hits

    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    texts = [" ".join(rng.choice(letters, 3000)) for _ in range(3)]
    hasher = Hasher(ngrams=3, n_bits=20)
    ids, offsets = hasher.batch(texts)
    assert len(ids) > sum(len(t.encode()) for t in texts) // 2    # past the first size
    for d, text in enumerate(texts):
        assert ids[offsets[d]:offsets[d + 1]].tolist() == hasher.reference_buckets(text).tolist()
    buf, starts = hasher.prepare(texts)
    everything = np.full((1 << 20) // 64, np.iinfo(np.uint64).max, dtype=np.uint64)
    buckets, _, text_offsets, text = _ngram_hits(
        buf, starts, 3, (1 << 20) - 1, 0, everything, True, hasher.scripts, 0, 0, 0, 4, -1)
    keys = [k for t in texts for k in hasher.keys(t)[0]]
    assert len(keys) > 1024 and text_offsets[-1] > 16384
    assert [bytes(text[a:z]).decode() for a, z in zip(text_offsets, text_offsets[1:])] == keys
    assert buckets.tolist() == [mmh3.hash(k.encode(), 0, signed=False) & ((1 << 20) - 1)
                                for k in keys]


@pytest.mark.parametrize("kw", [dict(ngrams=2, char_ngrams=4, char_min=2),
                                dict(ngrams=1, char_ngrams=0, long_words=3)],
                         ids=["char2-4", "long-words"])
def test_ngram_hits_of_characters_equal_the_plain_python_keys(kw):
    """Every n-gram wanted: the hits are each text's word keys then its character keys
    (shortest first), with their bucket (the second seed for characters), past the first
    sizes of the arrays, and no character hits past ``char_docs``."""
    from nbsvm.config import LONG_WORD_CHARS
    from nbsvm.text._ngram_hits import _ngram_hits

    rng = np.random.default_rng(1)
    words = np.array(["a", "ok", "film", "naïve", "東京タワー", "extraordinarily"])
    texts = [" ".join(rng.choice(words, 900)) for _ in range(3)]
    hasher = Hasher(n_bits=20, **kw)
    buf, starts = hasher.prepare(texts)
    everything = np.full((1 << 20) // 64, np.iinfo(np.uint64).max, dtype=np.uint64)
    mask = (1 << 20) - 1
    for char_docs in (-1, 2):
        buckets, _, offsets, text = _ngram_hits(
            buf, starts, hasher.ngrams, mask, 0, everything, True, hasher.scripts,
            hasher.char_min or hasher.char_ngrams, hasher.char_ngrams, hasher.long_words,
            LONG_WORD_CHARS, char_docs)
        expected = []
        for d, t in enumerate(texts):
            w, c = hasher.keys(t)
            expected += [(k, 0) for k in w] + [(k, 1) for k in c if char_docs < 0 or d < char_docs]
        assert len(expected) > 1024 and offsets[-1] > 16384
        assert [bytes(text[a:z]).decode() for a, z in zip(offsets, offsets[1:])] == \
            [k for k, _ in expected]
        assert buckets.tolist() == [mmh3.hash(k.encode(), s, signed=False) & mask
                                    for k, s in expected]
