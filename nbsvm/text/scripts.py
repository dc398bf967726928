"""Which characters are tokens of their own (``split_scripts``): one table of code points.

Chinese, Japanese, Thai and the other scripts below are written without spaces between
words, so that a whole sentence would be one token. With ``split_scripts`` every character
of these scripts is a token of its own (the word n-grams over such a run are then its
character n-grams, orders 1..``ngrams``), and so is each punctuation mark of the table, like
``. " , ( ) ! ? ; :`` always are. Everything else stays as it was: Latin, Cyrillic, Greek,
Arabic, Devanagari, Hangul (Korean is written with spaces between words: its words stay
words), digits, emoji... are split on white space only. The rule is decided per character,
so mixed text keeps its Latin words whole: ``"iPhone很好用"`` is ``iphone 很 好 用``.

Each row of :data:`SCRIPT_TABLE` is ``(first, last, kind, what)``; where rows overlap, the
later one decides. Kinds:

``SPLIT``
    a token of its own: the characters of the unspaced scripts, and punctuation;
``JOIN``
    a combining mark (Thai vowel and tone marks, Khmer and Myanmar signs, the kana voiced
    sound marks, variation selectors...): right after a ``SPLIT`` character (or after a mark
    joined to one) it belongs to that character's token, so that ``ที่`` is one token and a
    shaded explanation never shows a lone mark. Anywhere else it is an ordinary character,
    as before (``e\\u0301`` stays in its word);
``BREAK``
    separates tokens and is dropped, as white space: the Tibetan tsheg. Tibetan writes no
    spaces between words either, but marks every syllable's end with a tsheg (``་``), so its
    syllables become the tokens (and n-grams of syllables, as for Chinese characters) rather
    than its letters: ``བཀྲ་ཤིས་`` is ``བཀྲ ཤིས``. Its shad marks (``།``) are punctuation.

The table is fixed here, not read from :mod:`unicodedata`, so that a model tokenizes the same
under every Python version. :func:`script_arrays` flattens it into sorted, disjoint ranges
for the compiled tokenizer (:func:`nbsvm.text._tokenizer._tokenize`) and
:data:`SPLIT_RE` / :func:`break_re` are the same table as regular expressions for the
reference tokenizer (:func:`nbsvm.text.tokenize.tokenize`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

WORD, SPLIT, JOIN, BREAK = 0, 1, 2, 3

#: ``(first, last, kind, what)``, inclusive code point ranges; later rows win.
SCRIPT_TABLE: tuple[tuple[int, int, int, str], ...] = (
    # -- scripts written without spaces between words: a token per character --------------
    (0x0E00, 0x0E7F, SPLIT, "Thai"),
    (0x0E80, 0x0EFF, SPLIT, "Lao"),
    (0x1000, 0x109F, SPLIT, "Myanmar"),
    (0x1780, 0x17FF, SPLIT, "Khmer"),
    (0x1950, 0x197F, SPLIT, "Tai Le"),
    (0x1980, 0x19DF, SPLIT, "New Tai Lue"),
    (0x19E0, 0x19FF, SPLIT, "Khmer Symbols"),
    (0x1A20, 0x1AAF, SPLIT, "Tai Tham"),
    (0x1B00, 0x1B7F, SPLIT, "Balinese"),
    (0x2E80, 0x2EFF, SPLIT, "CJK Radicals Supplement"),
    (0x2F00, 0x2FDF, SPLIT, "Kangxi Radicals"),
    (0x2FF0, 0x2FFF, SPLIT, "Ideographic Description Characters"),
    (0x3005, 0x3007, SPLIT, "ideographic iteration mark, closing mark, number zero 々〆〇"),
    (0x3021, 0x3029, SPLIT, "Hangzhou numerals"),
    (0x3031, 0x3035, SPLIT, "kana repeat marks"),
    (0x3038, 0x303C, SPLIT, "Hangzhou numerals 10-30, iteration marks, masu mark"),
    (0x3040, 0x309F, SPLIT, "Hiragana"),
    (0x30A0, 0x30FF, SPLIT, "Katakana (with ・ and ー)"),
    (0x3100, 0x312F, SPLIT, "Bopomofo"),
    # U+3130-318F Hangul Compatibility Jamo: Hangul is written with spaces, words stay words
    (0x3190, 0x319F, SPLIT, "Kanbun"),
    (0x31A0, 0x31BF, SPLIT, "Bopomofo Extended"),
    (0x31C0, 0x31EF, SPLIT, "CJK Strokes"),
    (0x31F0, 0x31FF, SPLIT, "Katakana Phonetic Extensions"),
    (0x3220, 0x3247, SPLIT, "parenthesized and circled ideographs"),
    (0x3280, 0x32B0, SPLIT, "circled ideographs"),
    (0x32D0, 0x32FF, SPLIT, "circled katakana, the Reiwa era sign"),
    (0x3400, 0x4DBF, SPLIT, "CJK Unified Ideographs Extension A"),
    (0x4E00, 0x9FFF, SPLIT, "CJK Unified Ideographs"),
    (0xA000, 0xA4CF, SPLIT, "Yi Syllables and Radicals"),
    (0xA980, 0xA9DF, SPLIT, "Javanese"),
    (0xA9E0, 0xA9FF, SPLIT, "Myanmar Extended-B"),
    (0xAA60, 0xAA7F, SPLIT, "Myanmar Extended-A"),
    (0xAA80, 0xAADF, SPLIT, "Tai Viet"),
    # U+AC00-D7AF Hangul Syllables, U+1100-11FF Jamo: words (Korean is spaced)
    (0xF900, 0xFAFF, SPLIT, "CJK Compatibility Ideographs"),
    (0xFF66, 0xFF9F, SPLIT, "Halfwidth Katakana"),
    (0x16FE0, 0x16FFF, SPLIT, "Ideographic Symbols and Punctuation"),
    (0x17000, 0x18D7F, SPLIT, "Tangut, Tangut Components, Khitan Small Script, Tangut Supplement"),
    (
        0x1AFF0,
        0x1B2FF,
        SPLIT,
        "Kana Extended-B, Kana Supplement, Kana Extended-A, Small Kana Extension, Nushu",
    ),
    (
        0x20000,
        0x3FFFF,
        SPLIT,
        "CJK Extensions B-J and Compatibility Ideographs Supplement (planes 2 and 3)",
    ),
    # -- punctuation: a token of its own, as . " , ( ) ! ? ; : -----------------------------
    (0x0F04, 0x0F0A, SPLIT, "Tibetan head marks"),
    (0x0F0D, 0x0F12, SPLIT, "Tibetan shad marks ། ༎"),
    (0x0F14, 0x0F14, SPLIT, "Tibetan gter tsheg mark"),
    (0x0F3A, 0x0F3D, SPLIT, "Tibetan brackets ༺༻༼༽"),
    # general punctuation: dashes, double quotes, bullets and ellipses; not the single
    # quotes ‘ ’ ‚ ‛ (U+2018-201B), which are apostrophes in "don’t" as ' is in "don't",
    # nor the hyphens U+2010-2012, which join words as - does
    (0x2013, 0x2016, SPLIT, "dashes – — ―, double vertical line ‖"),
    (0x201C, 0x201F, SPLIT, "double quotation marks “ ” „ ‟"),
    (0x2020, 0x2027, SPLIT, "daggers, bullets, leaders, ellipsis … ‥, hyphenation point ‧"),
    (0x203B, 0x203D, SPLIT, "reference mark ※, ‼, interrobang ‽"),
    (0x2047, 0x2049, SPLIT, "⁇ ⁈ ⁉"),
    (0x3001, 0x3004, SPLIT, "、 。 〃 〄"),
    (
        0x3008,
        0x3020,
        SPLIT,
        "CJK brackets 〈〉《》「」『』【】〔〕〖〗〘〙〚〛, 〒 〓 〜 〝〞〟 〠",
    ),
    (0x3030, 0x3030, SPLIT, "wavy dash 〰"),
    (0x3036, 0x3037, SPLIT, "〶 〷"),
    (0x303D, 0x303F, SPLIT, "〽 〾 〿"),
    (0xFE10, 0xFE19, SPLIT, "vertical forms ︐︑︒"),
    (0xFE30, 0xFE4F, SPLIT, "CJK compatibility forms ︰︵︶﹁﹂"),
    (0xFE50, 0xFE6B, SPLIT, "small form variants ﹐﹑﹒"),
    (0xFF01, 0xFF0F, SPLIT, "fullwidth ！＂＃＄％＆＇（）＊＋，－．／"),
    (0xFF1A, 0xFF20, SPLIT, "fullwidth ：；＜＝＞？＠"),
    (0xFF3B, 0xFF40, SPLIT, "fullwidth ［＼］＾＿｀"),
    (0xFF5B, 0xFF65, SPLIT, "fullwidth ｛｜｝～｟｠, halfwidth ｡｢｣､･"),
    (0xFFE0, 0xFFE6, SPLIT, "fullwidth signs ￠￡￢￣￤￥￦"),
    # (fullwidth digits and letters U+FF10-FF19, FF21-FF3A, FF41-FF5A stay word characters;
    # nfkc makes them ASCII)
    # -- combining marks: part of the split character before them ---------------------------
    (0x0300, 0x036F, JOIN, "Combining Diacritical Marks"),
    (0x0E31, 0x0E31, JOIN, "Thai mai han-akat"),
    (0x0E34, 0x0E3A, JOIN, "Thai vowel signs above and below"),
    (0x0E47, 0x0E4E, JOIN, "Thai tone marks and signs"),
    (0x0EB1, 0x0EB1, JOIN, "Lao vowel sign mai kan"),
    (0x0EB4, 0x0EBC, JOIN, "Lao vowel signs"),
    (0x0EC8, 0x0ECE, JOIN, "Lao tone marks"),
    (0x102B, 0x103E, JOIN, "Myanmar vowel signs, medials"),
    (0x1056, 0x1059, JOIN, "Myanmar vocalic signs"),
    (0x105E, 0x1060, JOIN, "Myanmar Mon medials"),
    (0x1062, 0x1064, JOIN, "Myanmar Sgaw Karen signs"),
    (0x1067, 0x106D, JOIN, "Myanmar Western Pwo Karen signs"),
    (0x1071, 0x1074, JOIN, "Myanmar Geba Karen vowel signs"),
    (0x1082, 0x108D, JOIN, "Myanmar Shan signs"),
    (0x108F, 0x108F, JOIN, "Myanmar Rumai Palaung tone"),
    (0x109A, 0x109D, JOIN, "Myanmar Khamti and Aiton signs"),
    (0x17B4, 0x17D3, JOIN, "Khmer vowels and signs"),
    (0x17DD, 0x17DD, JOIN, "Khmer sign atthacan"),
    (0x1A55, 0x1A5E, JOIN, "Tai Tham medials and signs"),
    (0x1A60, 0x1A7C, JOIN, "Tai Tham vowel signs and tone marks"),
    (0x1A7F, 0x1A7F, JOIN, "Tai Tham combining cryptogrammic dot"),
    (0x1AB0, 0x1AFF, JOIN, "Combining Diacritical Marks Extended"),
    (0x1B00, 0x1B04, JOIN, "Balinese signs"),
    (0x1B34, 0x1B44, JOIN, "Balinese vowel signs, adeg adeg"),
    (0x1B6B, 0x1B73, JOIN, "Balinese musical combining marks"),
    (0x1DC0, 0x1DFF, JOIN, "Combining Diacritical Marks Supplement"),
    (0x20D0, 0x20FF, JOIN, "Combining Diacritical Marks for Symbols"),
    (0x302A, 0x302F, JOIN, "ideographic and Hangul tone marks"),
    (0x3099, 0x309A, JOIN, "combining kana voiced and semi-voiced sound marks"),
    (0xA980, 0xA983, JOIN, "Javanese signs"),
    (0xA9B3, 0xA9C0, JOIN, "Javanese vowel signs, pangkon"),
    (0xA9E5, 0xA9E5, JOIN, "Myanmar sign Shan saw"),
    (0xAA7B, 0xAA7D, JOIN, "Myanmar Pao and Tai Laing tones"),
    (0xAAB0, 0xAAB0, JOIN, "Tai Viet mai kang"),
    (0xAAB2, 0xAAB4, JOIN, "Tai Viet vowels"),
    (0xAAB7, 0xAAB8, JOIN, "Tai Viet vowels"),
    (0xAABE, 0xAABF, JOIN, "Tai Viet vowel am, tone mai ek"),
    (0xAAC1, 0xAAC1, JOIN, "Tai Viet tone mai tho"),
    (0xFE00, 0xFE0F, JOIN, "variation selectors"),
    (0xFE20, 0xFE2F, JOIN, "Combining Half Marks"),
    (0xFF9E, 0xFF9F, JOIN, "halfwidth katakana voiced sound marks ﾞ ﾟ"),
    (0x16FE4, 0x16FE4, JOIN, "Khitan small script filler"),
    (0x16FF0, 0x16FF1, JOIN, "Vietnamese alternate reading marks"),
    (0xE0100, 0xE01EF, JOIN, "Variation Selectors Supplement (ideographic variants)"),
    # -- separators ----------------------------------------------------------------------
    (0x0F0B, 0x0F0C, BREAK, "Tibetan tsheg and non-breaking tsheg"),
)


def flat_ranges(
    table: Sequence[tuple[int, int, int, str]] = SCRIPT_TABLE,
) -> list[tuple[int, int, int]]:
    """The table as sorted, disjoint ``(first, last, kind)`` ranges (later rows win where
    rows overlap; neighbours of the same kind merged; ``WORD`` gaps left out)."""
    points = sorted({p for first, last, _, _ in table for p in (first, last + 1)})
    out: list[list[int]] = []
    for a, b in zip(points, points[1:]):
        kind = WORD
        for first, last, k, _ in table:
            if first <= a and b - 1 <= last:
                kind = k
        if kind == WORD:
            continue
        if out and out[-1][2] == kind and out[-1][1] == a - 1:
            out[-1][1] = b - 1
        else:
            out.append([a, b - 1, kind])
    return [(r[0], r[1], r[2]) for r in out]


def script_arrays() -> np.ndarray:
    """``(3, n)`` int64: the first code points, last code points and kinds of
    :func:`flat_ranges`, for the compiled tokenizer (which searches the first row)."""
    return np.ascontiguousarray(np.array(flat_ranges(), dtype=np.int64).T.reshape(3, -1))


def script_kind(ch: str) -> int:
    """The kind of one character (``WORD`` when the table does not list it).

    Examples
    --------
    >>> [script_kind(c) for c in "a好。ไ\\u0e48་"] == [WORD, SPLIT, SPLIT, SPLIT, JOIN, BREAK]
    True
    """
    cp = ord(ch)
    for first, last, kind in _FLAT:
        if first <= cp <= last:
            return kind
    return WORD


def _char_class(kind: int) -> str:
    return "".join(
        re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "")
        for a, b, k in _FLAT
        if k == kind
    )


_FLAT = flat_ranges()
#: The compiled tokenizer's table (:func:`script_arrays`), built once.
SCRIPT_ARRAYS = script_arrays()
SCRIPT_ARRAYS.flags.writeable = False
#: An empty table: the tokenizer without ``split_scripts``.
NO_SCRIPTS = np.zeros((3, 0), dtype=np.int64)
NO_SCRIPTS.flags.writeable = False  # as SCRIPT_ARRAYS: one compiled signature for both
#: A split character with the marks joined to it (the reference tokenizer's unit).
SPLIT_RE = f"[{_char_class(SPLIT)}][{_char_class(JOIN)}]*"


# compiled on first use: their character classes take 10-30 ms to compile, which a
# process that never splits scripts (nbsvm predict of an English model) need not pay
@functools.cache
def split_char_re() -> re.Pattern[str]:
    """One character that ``split_scripts`` makes a token of its own."""
    return re.compile(f"[{_char_class(SPLIT)}]")


@functools.cache
def break_re() -> re.Pattern[str]:
    """Separators dropped like white space."""
    return re.compile(f"[{_char_class(BREAK)}]")
