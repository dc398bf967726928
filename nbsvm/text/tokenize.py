"""The default tokenizer of docs/design.md and the n-grams built from its tokens.

Lowercase; replace ``<br />`` with a space; split the punctuation ``. " , ( ) ! ? ; :``
into tokens of their own; split on white space (Python's ``str.split``).
"""
from __future__ import annotations

import re

PUNCTUATION = '.",()!?;:'
_PUNCT_RE = re.compile(r'([.",()!?;:])')


def tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split a document into normalized tokens (``lowercase`` False: case kept).

    Examples
    --------
    >>> tokenize("Great film!<br />Loved it, really.")
    ['great', 'film', '!', 'loved', 'it', ',', 'really', '.']
    """
    text = (text.lower() if lowercase else text).replace("<br />", " ")
    return _PUNCT_RE.sub(r" \1 ", text).split()


def word_ngrams(tokens: list[str], n: int) -> list[str]:
    """All word n-grams of orders 1..n, each as its tokens joined by single spaces.

    Examples
    --------
    >>> word_ngrams(["a", "b", "c"], 2)
    ['a', 'b', 'c', 'a b', 'b c']
    """
    keys = list(tokens)
    for order in range(2, n + 1):
        keys.extend(" ".join(tokens[i:i + order]) for i in range(len(tokens) - order + 1))
    return keys


def char_ngrams(tokens: list[str], n: int) -> list[str]:
    """Character n-grams of length ``n`` of each token framed as ``<token>``.

    A framed token shorter than ``n`` characters yields itself once.

    Examples
    --------
    >>> char_ngrams(["abc", "i"], 3)
    ['<ab', 'abc', 'bc>', '<i>']
    """
    keys = []
    for token in tokens:
        framed = "<" + token + ">"
        if len(framed) <= n:
            keys.append(framed)
        else:
            keys.extend(framed[i:i + n] for i in range(len(framed) - n + 1))
    return keys
