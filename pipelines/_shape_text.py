"""The text transformations of the robustness shapes: first sentences, subject lines,
text without spaces, Unicode-heavy spellings (homoglyphs, accents, emoji), all seeded."""

from __future__ import annotations

import random
import re
import zlib

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
FIRST_SENTENCE_WORDS = 50


def first_sentence(text: str, max_words: int = FIRST_SENTENCE_WORDS) -> str:
    """The first sentence of ``text``: up to the first ``.``, ``!`` or ``?`` followed by white
    space, or the first line break, on one line, at most ``max_words`` words (a review
    without punctuation is otherwise one long "sentence").

    >>> first_sentence("Great blender.  Works well!\\nBuy it.")
    'Great blender.'
    >>> first_sentence("\\n\\nno full stop here\\nsecond line")
    'no full stop here'
    """
    for piece in _SENTENCE_END.split(text.strip()):
        words = piece.split()
        if words:
            return " ".join(words[:max_words])
    return ""


def subject_line(message: str) -> str:
    """The value of a news message's ``Subject:`` header (continuation lines joined), on one
    line; "" when the header block has none.

    >>> subject_line("From: a@b\\nSubject: Re: Clipper\\n chip\\n\\nbody\\nSubject: no")
    'Re: Clipper chip'
    """
    head = message.split("\n\n", 1)[0].split("\n")
    for i, line in enumerate(head):
        if line.lower().startswith("subject:"):
            value = [line[len("subject:") :]]
            for more in head[i + 1 :]:
                if not more[:1].isspace():
                    break
                value.append(more)
            return " ".join(" ".join(value).split())
    return ""


_WHITE = re.compile(r"\s+")


def without_spaces(text: str) -> str:
    """``text`` with IMDB's ``<br />`` breaks and then every white-space character removed
    (Python's ``\\s``, Unicode included): a stand-in for a script written without spaces.

    >>> without_spaces("Not bad.<br /><br />A  fine\\tfilm.")
    'Notbad.Afinefilm.'
    """
    return _WHITE.sub("", text.replace("<br />", " "))


# look-alikes of Latin letters in Cyrillic and Greek (same shape, other code points)
HOMOGLYPHS = {
    "a": "\u0430\u03b1",
    "c": "\u0441\u03f2",
    "d": "\u0501",
    "e": "\u0435\u03b5",
    "h": "\u04bb",
    "i": "\u0456\u03b9",
    "j": "\u0458",
    "k": "\u03ba",
    "n": "\u03b7",
    "o": "\u043e\u03bf",
    "p": "\u0440\u03c1",
    "s": "\u0455",
    "t": "\u03c4",
    "u": "\u03c5",
    "v": "\u03bd",
    "x": "\u0445\u03c7",
    "y": "\u0443\u03b3",
    "A": "\u0410\u0391",
    "B": "\u0412\u0392",
    "C": "\u0421",
    "E": "\u0415\u0395",
    "H": "\u041d\u0397",
    "I": "\u0406\u0399",
    "K": "\u041a\u039a",
    "M": "\u041c\u039c",
    "N": "\u039d",
    "O": "\u041e\u039f",
    "P": "\u0420\u03a1",
    "T": "\u0422\u03a4",
    "X": "\u0425\u03a7",
    "Y": "\u03a5",
    "Z": "\u0396",
}
# precomposed accented forms (NFC code points)
ACCENTED = {
    "a": "\u00e0\u00e1\u00e2\u00e3\u00e4\u00e5",
    "c": "\u00e7\u0107\u010d",
    "e": "\u00e8\u00e9\u00ea\u00eb\u0113",
    "i": "\u00ec\u00ed\u00ee\u00ef",
    "n": "\u00f1\u0144",
    "o": "\u00f2\u00f3\u00f4\u00f5\u00f6\u00f8",
    "s": "\u0161\u015b",
    "u": "\u00f9\u00fa\u00fb\u00fc",
    "y": "\u00fd\u00ff",
    "z": "\u017e\u017a",
    "A": "\u00c0\u00c1\u00c2\u00c4",
    "E": "\u00c8\u00c9\u00ca",
    "O": "\u00d3\u00d6",
    "U": "\u00da\u00dc",
}
EMOJI = (
    "\U0001f600",
    "\U0001f602",
    "\U0001f60d",
    "\U0001f622",
    "\U0001f621",
    "\U0001f44d",
    "\U0001f44e",
    "\U0001f525",
    "\U0001f3ac",
    "\u2764\ufe0f",
    "\U0001f914",
    "\U0001f389",
)
P_HOMOGLYPH, P_ACCENT, P_EMOJI = 0.3, 0.2, 0.1


def unicode_heavy(text: str, seed: int = 0) -> str:
    """``text`` with each letter that has one replaced by a Cyrillic or Greek look-alike
    with probability 0.3, else by an accented form with probability 0.2 (of the rest), and
    an emoji (one of twelve, drawn independently of the label) after a word with
    probability 0.1. Deterministic: the draws come from ``random.Random`` seeded by
    ``seed`` and the CRC-32 of the text, so the same sentence always gets the same
    spelling, and two occurrences of a word within it usually different ones.

    >>> unicode_heavy("the movie is great .") == unicode_heavy("the movie is great .")
    True
    >>> unicode_heavy("the movie is great .").isascii()
    False
    """
    rng = random.Random((seed << 32) ^ zlib.crc32(text.encode("utf-8")))
    out = []
    for ch in text:
        r = rng.random()
        if ch in HOMOGLYPHS and r < P_HOMOGLYPH:
            out.append(rng.choice(HOMOGLYPHS[ch]))
        elif ch in ACCENTED and r < P_HOMOGLYPH + P_ACCENT:
            out.append(rng.choice(ACCENTED[ch]))
        else:
            out.append(ch)
        if ch == " " and rng.random() < P_EMOJI:
            out.append(rng.choice(EMOJI) + " ")
    return "".join(out)
