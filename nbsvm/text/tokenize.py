"""The default tokenizer of docs/design.md and the n-grams built from its tokens.

Optionally NFKC-normalize (``nfkc``); lowercase; replace ``<br />`` with a space; split the
punctuation ``. " , ( ) ! ? ; :`` into tokens of their own and, with ``split_scripts``, every
character of the scripts written without spaces and the punctuation of
:data:`nbsvm.text.scripts.SCRIPT_TABLE` (a combining mark stays with the character it
follows; the Tibetan tsheg separates as white space does); split on white space (Python's
``str.split``).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from nbsvm.text.scripts import SPLIT_RE, break_re

PUNCTUATION = '.",()!?;:'
_PUNCT_RE = re.compile(r'([.",()!?;:])')


@functools.cache
def _scripts_re() -> re.Pattern[str]:
    """The punctuation and every split character (compiled on first use: 10-30 ms)."""
    return re.compile(f'([.",()!?;:]|{SPLIT_RE})')


def normalize(text: str, lowercase: bool = True, nfkc: bool = False) -> str:
    """The text the tokenizer splits: NFKC (``nfkc``), then lowercased (``lowercase``), then
    ``<br />`` replaced by a space, in this order on every path.

    Examples
    --------
    >>> normalize("Ｇｒｅａｔ<br />ﾌｨﾙﾑ", nfkc=True)
    'great フィルム'
    """
    if nfkc:
        text = unicodedata.normalize("NFKC", text)
    return (text.lower() if lowercase else text).replace("<br />", " ")


def tokenize(
    text: str, lowercase: bool = True, split_scripts: bool = False, nfkc: bool = False
) -> list[str]:
    """Split a document into normalized tokens (``lowercase`` False: case kept;
    ``split_scripts``: a token per character of Chinese, Japanese, Thai...; ``nfkc``:
    Unicode NFKC first).

    Examples
    --------
    >>> tokenize("Great film!<br />Loved it, really.")
    ['great', 'film', '!', 'loved', 'it', ',', 'really', '.']
    >>> tokenize("这部电影很好看！Great film", split_scripts=True)
    ['这', '部', '电', '影', '很', '好', '看', '！', 'great', 'film']
    """
    return split_normalized(normalize(text, lowercase, nfkc), split_scripts)


def split_normalized(text: str, split_scripts: bool = False) -> list[str]:
    """The tokens of a text :func:`normalize` has made (the second half of
    :func:`tokenize`; normalizing twice is not always normalizing once: ``<br<br />/>``)."""
    if not split_scripts:
        return _PUNCT_RE.sub(r" \1 ", text).split()
    return break_re().sub(" ", _scripts_re().sub(r" \1 ", text)).split()


def word_ngrams(tokens: list[str], n: int) -> list[str]:
    """All word n-grams of orders 1..n, each as its tokens joined by single spaces.

    Examples
    --------
    >>> word_ngrams(["a", "b", "c"], 2)
    ['a', 'b', 'c', 'a b', 'b c']
    """
    keys = list(tokens)
    for order in range(2, n + 1):
        keys.extend(" ".join(tokens[i : i + order]) for i in range(len(tokens) - order + 1))
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
            keys.extend(framed[i : i + n] for i in range(len(framed) - n + 1))
    return keys
