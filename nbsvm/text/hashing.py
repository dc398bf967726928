"""MurmurHash3 buckets of n-gram keys, and the one text -> bucket-ids function.

A key is hashed as its UTF-8 bytes with ``mmh3.hash(key, seed, signed=False)`` (MurmurHash3
x86 32-bit) and masked to ``n_bits``. :meth:`Hasher.reference_buckets` is that definition in
plain Python; :meth:`Hasher.batch` (compiled, :mod:`._kernels`) must equal it bucket for bucket. Character n-grams use ``seed + 1`` so that they live
in their own hash family and do not systematically coincide with word n-grams.
"""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass

import mmh3
import numpy as np

from nbsvm import _small_jobs
from nbsvm.config import (
    BUCKET_DTYPE,
    LONG_WORD_CHARS,
    MAX_BITS,
    MAX_CHAR_NGRAMS,
    MAX_HASH_SEED,
    MAX_LONG_WORDS,
    MAX_NGRAMS,
    MIN_BITS,
)
from nbsvm.errors import NBSVMError
from nbsvm.text.scripts import NO_SCRIPTS, SCRIPT_ARRAYS
from nbsvm.text.tokenize import char_ngrams, split_normalized, tokenize, word_ngrams


def _encode(text: str) -> bytes:
    # UTF-8; lone surrogates (possible in Python strings, never in decoded files) are passed
    # through rather than crashing or being dropped, identically on both paths
    return text.encode("utf-8", "surrogatepass")


def _whole(value: object) -> bool:
    """An integer, not a bool (True is an int to Python: n_bits=True hashed into 2 buckets)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def validate_n_bits(n_bits: int) -> int:
    if not _whole(n_bits) or not MIN_BITS <= int(n_bits) <= MAX_BITS:
        raise NBSVMError(f"n_bits must be an integer in [{MIN_BITS}, {MAX_BITS}], got {n_bits!r}")
    return int(n_bits)


def bucket_of(key: str | bytes, n_bits: int, seed: int = 0) -> int:
    """Bucket of one key: the reference definition every faster path must match.

    Examples
    --------
    >>> bucket_of("great film", 20)
    590561
    """
    # a str as the hasher encodes it (mmh3 given a str with a lone surrogate crashed the
    # interpreter: SIGSEGV)
    data = _encode(key) if isinstance(key, str) else key
    return mmh3.hash(data, seed, signed=False) & ((1 << n_bits) - 1)


@dataclass(frozen=True)
class Hasher:
    """Turns a document's text into its distinct bucket ids (first occurrences, in order).

    Parameters
    ----------
    ngrams : int
        Word n-grams of orders 1..ngrams.
    n_bits : int
        Buckets are ``[0, 2**n_bits)``.
    char_ngrams : int
        Character n-grams of this length (0: none), or the longest with ``char_min``.
    seed : int
        MurmurHash3 seed.
    char_min : int
        The shortest character n-grams: lengths ``char_min..char_ngrams`` (0: only
        ``char_ngrams``; fastText's ``minn``/``maxn``).
    lowercase : bool
        Lowercase the text first (False: keep case, ``Good`` and ``good`` differ).
    split_scripts : bool
        Every character of the scripts written without spaces (Chinese, Japanese, Thai, ...)
        and their punctuation is a token of its own (:mod:`nbsvm.text.scripts`), so that
        word n-grams over them are character n-grams. False here, the tokenizer of the files
        written before the option (whose settings lack it); new models turn it on.
    nfkc : bool
        Unicode NFKC normalization first (fullwidth ``Ａ１`` is ``A1``, halfwidth ``ｶ`` is
        ``カ``, ``…`` is ``...``), before lowercasing.
    long_words : int
        Without ``char_ngrams``, a token of more than this many code points (0: none) also
        gives its character n-grams of length :data:`~nbsvm.config.LONG_WORD_CHARS`: in
        text written without spaces (or with them removed) a "word" is a whole phrase, seen
        once, and its character n-grams are what recurs. Chosen per token, so words of
        ordinary length stay words. 0 here, the hashing of files written before the option;
        new models use 20.

    Examples
    --------
    >>> Hasher(ngrams=2, n_bits=4).buckets("good good film")
    array([1, 7, 3, 0], dtype=int32)
    """

    ngrams: int = 3
    n_bits: int = 24
    char_ngrams: int = 0
    seed: int = 0
    char_min: int = 0
    lowercase: bool = True
    split_scripts: bool = False
    nfkc: bool = False
    long_words: int = 0

    def __post_init__(self):
        validate_n_bits(self.n_bits)
        if not _whole(self.ngrams) or not 1 <= self.ngrams <= MAX_NGRAMS:
            raise NBSVMError(f"ngrams must be an integer in [1, {MAX_NGRAMS}], got {self.ngrams!r}")
        if not _whole(self.char_ngrams) or not 0 <= self.char_ngrams <= MAX_CHAR_NGRAMS:
            raise NBSVMError(
                f"char_ngrams must be an integer in [0, {MAX_CHAR_NGRAMS}], "
                f"got {self.char_ngrams!r}"
            )
        if not _whole(self.seed) or not 0 <= self.seed <= MAX_HASH_SEED:
            raise NBSVMError(f"hash seed must be an integer in [0, 2**32), got {self.seed!r}")
        if (
            not isinstance(self.char_min, (int, np.integer))
            or isinstance(self.char_min, bool)
            or not (self.char_min == 0 or 1 <= self.char_min <= self.char_ngrams)
        ):
            raise NBSVMError(
                f"the shortest character n-grams must be between 1 and the "
                f"longest ({self.char_ngrams}), got {self.char_min!r}"
            )
        if (
            not isinstance(self.long_words, (int, np.integer))
            or isinstance(self.long_words, bool)
            or not 0 <= self.long_words <= MAX_LONG_WORDS
        ):
            raise NBSVMError(
                f"long_words must be an integer in [0, {MAX_LONG_WORDS}] (0: off), "
                f"got {self.long_words!r}"
            )
        for name in ("lowercase", "split_scripts", "nfkc"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise NBSVMError(f"{name} must be True or False, got {getattr(self, name)!r}")
        # numpy's numbers (a grid of np.arange) as Python's: the settings are written as
        # JSON (the feature cache's, the model's) and compared with those read back
        for name in ("n_bits", "ngrams", "char_ngrams", "seed", "char_min", "long_words"):
            object.__setattr__(self, name, int(getattr(self, name)))
        for name in ("lowercase", "split_scripts", "nfkc"):
            object.__setattr__(self, name, bool(getattr(self, name)))

    @property
    def char_lengths(self) -> range:
        """The character n-gram lengths, shortest first (empty without them)."""
        if not self.char_ngrams:
            return range(0)
        return range(self.char_min or self.char_ngrams, self.char_ngrams + 1)

    def keys(self, text: str) -> tuple[list[str], list[str]]:
        """The word and character n-gram keys of ``text`` (with repeats)."""
        return self._keys_of(tokenize(text, self.lowercase, self.split_scripts, self.nfkc))

    def char_keys(self, text: str) -> list[str]:
        """The character n-gram keys of ``text`` alone (with repeats; none without character
        n-grams or long words): :meth:`keys`' second list, without its word n-grams."""
        if not (self.char_ngrams or self.long_words):
            return []
        return self._char_keys_of(tokenize(text, self.lowercase, self.split_scripts, self.nfkc))

    def _keys_of(self, tokens: list[str]) -> tuple[list[str], list[str]]:
        return word_ngrams(tokens, self.ngrams), self._char_keys_of(tokens)

    def _char_keys_of(self, tokens: list[str]) -> list[str]:
        if not self.char_ngrams and self.long_words:
            return char_ngrams([t for t in tokens if len(t) > self.long_words], LONG_WORD_CHARS)
        return [key for n in self.char_lengths for key in char_ngrams(tokens, n)]

    def reference_buckets(self, text: str) -> np.ndarray:
        """The definition, in plain Python: ``mmh3`` on each n-gram key's UTF-8 bytes.

        Slow; :meth:`buckets` and :meth:`batch` must return exactly the same ids.
        """
        return self._reference_of(self.keys(text))

    def _reference_of(self, keys: tuple[list[str], list[str]]) -> np.ndarray:
        mask = (1 << self.n_bits) - 1
        words, chars = keys
        h = mmh3.hash
        seed = self.seed
        enc = _encode
        ids = [h(enc(k), seed, signed=False) & mask for k in words]
        if chars:
            seed2 = (seed + 1) & 0xFFFFFFFF
            ids.extend(h(enc(k), seed2, signed=False) & mask for k in chars)
        distinct = dict.fromkeys(ids)  # first occurrences, in order
        return np.fromiter(distinct, dtype=BUCKET_DTYPE, count=len(distinct))

    def prepare(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The Python half of :meth:`batch`: normalized UTF-8 bytes and document starts.

        Only C string methods run per document (``unicodedata.normalize`` with ``nfkc``,
        ``lower``, ``replace``, ``encode``); this is the part a reader thread does while the
        compiled half runs without the GIL.
        """
        if self.nfkc:
            nfkc = unicodedata.normalize
            texts = [nfkc("NFKC", t) for t in texts]
        if self.lowercase:
            parts = [_encode(t.lower().replace("<br />", " ")) for t in texts]
        else:
            parts = [_encode(t.replace("<br />", " ")) for t in texts]
        starts = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=starts[1:])
        # read-only either way (numba compiles a kernel again for a writable array)
        buf = np.frombuffer(b"".join(parts) if starts[-1] else b"\0", dtype=np.uint8)
        return buf, starts

    def hash_prepared(self, buf: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The compiled half of :meth:`batch` (releases the GIL); for a small job, the
        reference definition instead (:mod:`nbsvm._small_jobs`)."""
        if _small_jobs.plain_hashing(self.plain_cost(buf.nbytes)):
            return self._reference_prepared(buf, starts)
        from nbsvm.text._ngram_ids import _hash_docs

        if buf.flags.writeable:  # the kernel is compiled for read-only text, as prepare's
            buf = buf.view()
            buf.flags.writeable = False
        return _hash_docs(
            buf,
            starts,
            self.ngrams,
            self.char_min or self.char_ngrams,
            self.char_ngrams,
            (1 << self.n_bits) - 1,
            self.seed,
            (self.seed + 1) & 0xFFFFFFFF,
            bool(self.split_scripts),
            self.scripts,
            int(self.long_words),
            LONG_WORD_CHARS,
        )

    def plain_cost(self, n_bytes: int) -> int:
        """``n_bytes`` of text as the budget of :mod:`nbsvm._small_jobs` counts them: scaled
        by the n-gram keys these settings make per byte (about ``ngrams`` per five bytes of
        words, one per character for each character n-gram length) against the defaults'
        (3 per five bytes), so that a model of 16-grams and character 1-32-grams does not
        spend seconds and a GB in plain Python where the kernels take a fraction of it."""
        keys_per_byte = self.ngrams / 5 + len(self.char_lengths)
        return int(n_bytes * max(1.0, keys_per_byte / 0.6))

    def _reference_prepared(
        self, buf: np.ndarray, starts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`hash_prepared` by :meth:`reference_buckets`, on the normalized bytes."""
        data = buf.tobytes()
        rows = [
            self._reference_of(
                self._keys_of(
                    split_normalized(
                        data[starts[d] : starts[d + 1]].decode("utf-8", "surrogatepass"),
                        self.split_scripts,
                    )
                )
            )
            for d in range(len(starts) - 1)
        ]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=offsets[1:])
        ids = np.concatenate(rows) if rows else np.zeros(0, dtype=BUCKET_DTYPE)
        return ids.astype(BUCKET_DTYPE, copy=False), offsets

    def batch(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Distinct bucket ids of many texts as CSR ``(ids int32, offsets int64)``.

        Equal, document by document, to :meth:`reference_buckets`; tokenizing and hashing
        run in one compiled call per batch.
        """
        return self.hash_prepared(*self.prepare(texts))

    def buckets(self, text: str) -> np.ndarray:
        """Distinct bucket ids of ``text`` as int32, in order of first occurrence."""
        return self.batch([text])[0]

    @property
    def scripts(self) -> np.ndarray:
        """The compiled tokenizer's table of split characters (empty without
        ``split_scripts``)."""
        return SCRIPT_ARRAYS if self.split_scripts else NO_SCRIPTS

    def settings(self) -> dict:
        """The fields as a dict (``Hasher(**settings)`` rebuilds it; saved in model,
        lexicon and cache files: one that lacks ``split_scripts``, ``nfkc`` or ``long_words``
        was written before them, and the defaults False and 0 are how it tokenized)."""
        return {k: (bool(v) if isinstance(v, np.bool_) else v) for k, v in asdict(self).items()}
