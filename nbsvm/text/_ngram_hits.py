"""Compiled n-gram search: the word n-grams of documents that fall in chosen buckets, with
their text, to name the buckets a model explains with (:mod:`nbsvm.evaluation.bucket_names`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nbsvm.text._murmur import murmur3_32
from nbsvm.text._ngram_ids import _grown, _word_ngram_ids
from nbsvm.text._tokenizer import _tokenize


@njit(cache=True)
def key_seed(seed: int) -> int:
    """The seed of the second hash that tells equal n-grams of one bucket apart (the names
    of character n-grams are hashed with it in plain Python: one definition for both)."""
    return (seed ^ 0x5BD1E995) & 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _ngram_hits(buf, doc_starts, ngrams, mask, seed, wanted, split, scripts):
    """Every word n-gram occurrence whose bucket is set in the bitmap ``wanted`` (uint64
    words: bit ``b & 63`` of word ``b >> 6``; 2 MB for 2**24 buckets, so that the lookups
    stay in cache), with its text.

    Returns ``(buckets int32, keys uint32, text_offsets int64, text uint8)``: hit ``j`` is
    the n-gram ``text[text_offsets[j]:text_offsets[j + 1]]`` (normalized, tokens joined by
    single spaces: the exact key that was hashed) in bucket ``buckets[j]``, and ``keys[j]``
    a second hash of it (another seed), so that equal n-grams are counted without comparing
    strings. Used to name the buckets a model explains with; buckets come from
    :func:`_word_ngram_ids`, so they equal the hasher's (``split``, ``scripts``: its
    ``split_scripts`` and the table, as :func:`nbsvm.text._ngram_ids._hash_docs`).
    """
    n_docs = doc_starts.shape[0] - 1
    longest = 0
    for d in range(n_docs):
        longest = max(longest, doc_starts[d + 1] - doc_starts[d])
    norm = np.empty(2 * longest + 2, np.uint8)
    tok = np.empty(longest + 2, np.int64)
    raw = np.empty(max(1, ngrams * (longest + 1)), np.int32)
    hit_buckets = np.empty(1024, np.int32)
    hit_keys = np.empty(1024, np.uint32)
    hit_offsets = np.empty(1025, np.int64)
    seed_key = key_seed(seed)
    text = np.empty(16384, np.uint8)
    n_hits = 0
    n_bytes = 0
    hit_offsets[0] = 0
    for d in range(n_docs):
        t = _tokenize(buf, doc_starts[d], doc_starts[d + 1], norm, tok, split, scripts)
        _word_ngram_ids(norm, tok, t, ngrams, mask, seed, raw)
        base = 0
        for o in range(1, ngrams + 1):
            for k in range(t - o + 1):
                b = raw[base + k]
                if (wanted[b >> 6] >> np.uint64(b & 63)) & np.uint64(1):
                    a = tok[k]
                    z = tok[k + o] - 1
                    if n_hits + 1 >= hit_buckets.shape[0]:
                        size = 2 * hit_buckets.shape[0]
                        hit_buckets = _grown(hit_buckets, n_hits, size)
                        hit_keys = _grown(hit_keys, n_hits, size)
                        hit_offsets = _grown(hit_offsets, n_hits + 1, size + 1)
                    if n_bytes + (z - a) > text.shape[0]:
                        text = _grown(text, n_bytes, max(2 * text.shape[0], n_bytes + z - a))
                    for j in range(a, z):  # a loop, as in _grown
                        text[n_bytes] = norm[j]
                        n_bytes += 1
                    hit_buckets[n_hits] = b
                    hit_keys[n_hits] = murmur3_32(norm, a, z - a, seed_key)
                    n_hits += 1
                    hit_offsets[n_hits] = n_bytes
            if t - o + 1 > 0:
                base += t - o + 1
    return (
        hit_buckets[:n_hits].copy(),
        hit_keys[:n_hits].copy(),
        hit_offsets[: n_hits + 1].copy(),
        text[:n_bytes].copy(),
    )
