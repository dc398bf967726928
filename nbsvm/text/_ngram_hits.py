"""Compiled n-gram search: the word and character n-grams of documents that fall in chosen
buckets, with their text, to name the buckets a model explains with
(:mod:`nbsvm.evaluation.bucket_names`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nbsvm.text._murmur import murmur3_32
from nbsvm.text._ngram_ids import (
    _char_pass,
    _grown,
    _n_word_ngrams,
    _token_frame,
    _word_ngram_ids,
)
from nbsvm.text._tokenizer import _tokenize


@njit(cache=True)
def key_seed(seed: int) -> int:
    """The seed of the second hash that tells equal n-grams of one bucket apart."""
    return (seed ^ 0x5BD1E995) & 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _record(buckets, keys, offsets, text, n, n_bytes, b, key, src, a, z):
    """Hit ``n`` in bucket ``b`` with second hash ``key`` and text ``src[a:z]`` from byte
    ``n_bytes`` of ``text`` (room made by the caller); returns the new ``n, n_bytes``."""
    for j in range(a, z):  # a loop, as in _grown
        text[n_bytes] = src[j]
        n_bytes += 1
    buckets[n] = b
    keys[n] = key
    offsets[n + 1] = n_bytes
    return n + 1, n_bytes


@njit(cache=True, nogil=True)
def _is_wanted(wanted, b):
    """Whether bit ``b`` of the bitmap ``wanted`` is set."""
    return (wanted[b >> 6] >> np.uint64(b & 63)) & np.uint64(1)


@njit(cache=True, nogil=True)
def _word_hits(
    norm, tok, t, ngrams, raw, seed_key, wanted, buckets, keys, offsets, text, n, n_bytes
):
    """:func:`_ngram_hits`' word n-grams, whose buckets :func:`_word_ngram_ids` wrote into
    ``raw`` (all unigrams, then all bigrams, ...), recorded from hit ``n`` and byte
    ``n_bytes`` (:func:`_record`); returns the new ``n, n_bytes``."""
    base = 0
    for o in range(1, ngrams + 1):
        for k in range(t - o + 1):
            b = np.int64(raw[base + k])  # int64 as _char_hits' (one _record, one _is_wanted)
            if _is_wanted(wanted, b):
                a, z = tok[k], tok[k + o] - 1
                key = murmur3_32(norm, a, z - a, seed_key)
                n, n_bytes = _record(buckets, keys, offsets, text, n, n_bytes, b, key, norm, a, z)
        base += max(0, t - o + 1)
    return n, n_bytes


@njit(cache=True, nogil=True)
def _char_hits(
    norm,
    tok,
    t,
    char_n,
    mask,
    seed2,
    seed_key,
    wanted,
    frame,
    starts,
    longer,
    buckets,
    keys,
    offsets,
    text,
    n,
    n_bytes,
):
    """:func:`_ngram_hits`' character ``char_n``-grams of ``<token>``, hashed as
    :func:`nbsvm.text._ngram_ids._char_ngram_ids` hashes them (only tokens of more than
    ``longer`` code points when it is not 0), recorded from hit ``n`` and byte
    ``n_bytes`` (:func:`_record`); returns the new ``n, n_bytes``."""
    for k in range(t):
        a = tok[k]
        z = tok[k + 1] - 1
        if longer > 0 and z - a <= longer:  # no more code points than bytes: short
            continue
        L, c = _token_frame(norm, a, z, frame, starts)
        if longer > 0 and c - 2 <= longer:
            continue
        for q in range(max(1, c - char_n + 1)):
            p0 = starts[q] if c > char_n else 0
            p1 = starts[q + char_n] if c > char_n else L
            b = murmur3_32(frame, p0, p1 - p0, seed2) & mask
            if _is_wanted(wanted, b):
                key = murmur3_32(frame, p0, p1 - p0, seed_key)
                n, n_bytes = _record(
                    buckets, keys, offsets, text, n, n_bytes, b, key, frame, p0, p1
                )
    return n, n_bytes


@njit(cache=True, nogil=True)
def _ngram_hits(
    buf,
    doc_starts,
    ngrams,
    mask,
    seed,
    wanted,
    split,
    scripts,
    char_lo,
    char_n,
    long_words,
    long_n,
    char_docs,
):
    """Every word and character n-gram occurrence whose bucket is set in the bitmap
    ``wanted`` (uint64 words: bit ``b & 63`` of word ``b >> 6``; 2 MB for 2**24 buckets,
    so that the lookups stay in cache), with its text.

    Returns ``(buckets int32, keys uint32, text_offsets int64, text uint8)``: hit ``j`` is
    the n-gram ``text[text_offsets[j]:text_offsets[j + 1]]`` (the exact key that was
    hashed: normalized tokens joined by single spaces, or ``<token>``'s characters) in
    bucket ``buckets[j]``, and ``keys[j]`` a second hash of it (another seed), so that
    equal n-grams are counted without comparing strings. Used to name the buckets a model
    explains with; buckets are the hasher's, as :func:`nbsvm.text._ngram_ids._hash_docs`
    computes them from the same arguments (``split``, ``scripts``: its ``split_scripts``
    and table; character n-grams of lengths ``char_lo..char_n``, or without them
    ``long_n``-grams of tokens longer than ``long_words``, with the seed after ``seed``;
    only in the first ``char_docs`` documents when it is not -1).

    The arrays grow once per document, to what it can give at most (a byte of the text
    lies in at most ``o`` word n-grams of order ``o`` and ``n`` character ``n``-grams),
    so that the hits are written without checks.
    """
    longest = 1
    for d in range(doc_starts.shape[0] - 1):
        longest = max(longest, doc_starts[d + 1] - doc_starts[d])
    norm = np.empty(2 * longest + 2, np.uint8)
    tok = np.empty(longest + 2, np.int64)
    raw = np.empty(max(1, ngrams * (longest + 1)), np.int32)
    frame = np.empty(2 * longest + 4, np.uint8)  # '<' token '>': at most the normalized text
    starts = np.empty(2 * longest + 5, np.int64)
    seed_key = key_seed(seed)
    seed2 = (seed + 1) & 0xFFFFFFFF
    buckets, keys = np.empty(1024, np.int32), np.empty(1024, np.uint32)
    offsets, text = np.zeros(1025, np.int64), np.empty(16384, np.uint8)
    n = n_bytes = np.int64(0)  # not literal 0s: each callee compiles once (numba typed the
    # first calls in the loop with literal 0s and compiled _word_hits and _record again)
    for d in range(doc_starts.shape[0] - 1):
        t = _tokenize(buf, doc_starts[d], doc_starts[d + 1], norm, tok, split, scripts)
        chars = (char_n > 0 or long_words > 0) and not 0 <= char_docs <= d
        lengths = 0 if not chars else (char_n - char_lo + 1 if char_n > 0 else 1)
        size = tok[t] + 2 * t if t > 0 else 0  # bytes of the tokens with '<' and '>'
        most = _n_word_ngrams(t, ngrams) + lengths * size
        if n + most + 1 > buckets.shape[0]:
            grown = max(2 * buckets.shape[0], n + most + 1)
            buckets, keys = _grown(buckets, n, grown), _grown(keys, n, grown)
            offsets = _grown(offsets, n + 1, grown + 1)
        most = size * (ngrams * (ngrams + 1) // 2 + lengths * max(char_n, long_n))
        if n_bytes + most > text.shape[0]:
            text = _grown(text, n_bytes, max(2 * text.shape[0], n_bytes + most))
        _word_ngram_ids(norm, tok, t, ngrams, mask, seed, raw)
        n, n_bytes = _word_hits(
            norm, tok, t, ngrams, raw, seed_key, wanted, buckets, keys, offsets, text, n, n_bytes
        )  # fmt: skip
        if chars:  # lengths char_lo..char_n, or long words' long_n
            first, last, longer = _char_pass(char_lo, char_n, long_n, long_words)
            for c in range(first, last + 1):
                n, n_bytes = _char_hits(
                    norm, tok, t, c, mask, seed2, seed_key, wanted, frame, starts, longer,
                    buckets, keys, offsets, text, n, n_bytes,
                )  # fmt: skip
    return buckets[:n].copy(), keys[:n].copy(), offsets[: n + 1].copy(), text[:n_bytes].copy()
