"""MurmurHash3 buckets of n-gram keys, and the one text -> bucket-ids function.

A key is hashed as its UTF-8 bytes with ``mmh3.hash(key, seed, signed=False)`` (MurmurHash3
x86 32-bit) and masked to ``n_bits``. Character n-grams use ``seed + 1`` so that they live
in their own hash family and do not systematically coincide with word n-grams.
"""
from __future__ import annotations

from dataclasses import dataclass, asdict

import mmh3
import numpy as np

from ..config import BUCKET_DTYPE, MIN_BITS, MAX_BITS
from ..errors import NBSVMError
from .tokenize import tokenize, word_ngrams, char_ngrams


def validate_n_bits(n_bits: int) -> int:
    if not isinstance(n_bits, (int, np.integer)) or not MIN_BITS <= int(n_bits) <= MAX_BITS:
        raise NBSVMError(f"n_bits must be an integer in [{MIN_BITS}, {MAX_BITS}], got {n_bits!r}")
    return int(n_bits)


def bucket_of(key: str, n_bits: int, seed: int = 0) -> int:
    """Bucket of one key: the reference definition every faster path must match.

    Examples
    --------
    >>> bucket_of("great film", 20)
    590561
    """
    return mmh3.hash(key, seed, signed=False) & ((1 << n_bits) - 1)


@dataclass(frozen=True)
class Hasher:
    """Turns a document's text into its sorted distinct bucket ids.

    Parameters
    ----------
    ngrams : int
        Word n-grams of orders 1..ngrams.
    n_bits : int
        Buckets are ``[0, 2**n_bits)``.
    char_ngrams : int
        Character n-grams of this length (0: none).
    seed : int
        MurmurHash3 seed.

    Examples
    --------
    >>> Hasher(ngrams=2, n_bits=4).buckets("good good film")
    array([0, 1, 3, 7], dtype=int32)
    """

    ngrams: int = 3
    n_bits: int = 24
    char_ngrams: int = 0
    seed: int = 0

    def __post_init__(self):
        validate_n_bits(self.n_bits)
        if not isinstance(self.ngrams, (int, np.integer)) or not 1 <= self.ngrams <= 16:
            raise NBSVMError(f"ngrams must be an integer in [1, 16], got {self.ngrams!r}")
        if not isinstance(self.char_ngrams, (int, np.integer)) or not 0 <= self.char_ngrams <= 32:
            raise NBSVMError(f"char_ngrams must be an integer in [0, 32], got {self.char_ngrams!r}")
        if not isinstance(self.seed, (int, np.integer)) or not 0 <= self.seed < 2**32:
            raise NBSVMError(f"hash seed must be an integer in [0, 2**32), got {self.seed!r}")

    def keys(self, text: str) -> tuple[list[str], list[str]]:
        """The word and character n-gram keys of ``text`` (with repeats)."""
        tokens = tokenize(text)
        chars = char_ngrams(tokens, self.char_ngrams) if self.char_ngrams else []
        return word_ngrams(tokens, self.ngrams), chars

    def buckets(self, text: str) -> np.ndarray:
        """Sorted distinct bucket ids of ``text`` as int32 (the binarized document)."""
        mask = (1 << self.n_bits) - 1
        words, chars = self.keys(text)
        h = mmh3.hash
        seed = self.seed
        ids = {h(k, seed, signed=False) & mask for k in words}
        if chars:
            seed2 = (seed + 1) & 0xFFFFFFFF
            ids.update(h(k, seed2, signed=False) & mask for k in chars)
        out = np.fromiter(ids, dtype=BUCKET_DTYPE, count=len(ids))
        out.sort()
        return out

    def settings(self) -> dict:
        return asdict(self)
