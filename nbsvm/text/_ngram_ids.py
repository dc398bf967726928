"""Compiled n-gram hashing: the distinct bucket ids of each document.

:func:`_hash_docs` tokenizes each document (:func:`nbsvm.text._tokenizer._tokenize`),
hashes every word n-gram as a contiguous span of the normalized text
(:func:`_word_ngram_ids`, blocks of MurmurHash3 shared between n-grams of one start) and
every character n-gram of ``<token>`` (:func:`_char_ngram_ids`), and keeps each bucket once
per document (:func:`_add_distinct`), exactly as the reference path in :mod:`.hashing`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nbsvm.text._murmur import _murmur_block, _murmur_finish, murmur3_32
from nbsvm.text._tokenizer import _tokenize


@njit(cache=True, nogil=True)
def _word_ngram_ids(norm, tok, t, ngrams, mask, seed, raw):
    """Buckets of every word n-gram (orders 1..ngrams) into ``raw``: all unigrams in token
    order, then all bigrams, and so on; returns how many.

    Token k is ``norm[tok[k]:tok[k + 1] - 1]`` (see :func:`_tokenize`). The n-grams starting
    at one token share their first bytes, and MurmurHash3 reads a key in 4-byte blocks from
    its start, so the blocks are mixed once per start token: each longer n-gram continues
    the state of the shorter one and only its tail and final mix are its own. Equal to
    :func:`murmur3_32` on each n-gram's span.
    """
    base = 0
    for k in range(t):
        a = tok[k]
        h = seed & 0xFFFFFFFF
        done = 0  # bytes mixed in as blocks
        base = 0  # where order o's n-grams start in raw
        for o in range(1, ngrams + 1):
            if k + o > t:
                break
            length = tok[k + o] - 1 - a
            full = length & ~3
            while done < full:
                h = _murmur_block(h, norm, a + done)
                done += 4
            raw[base + k] = _murmur_finish(h, norm, a + full, length) & mask
            base += t - o + 1
    return _n_word_ngrams(t, ngrams)


@njit(cache=True, nogil=True)
def _n_word_ngrams(t, ngrams):
    """How many word n-grams of orders 1..ngrams ``t`` tokens have."""
    m = 0
    for o in range(1, ngrams + 1):
        if t - o + 1 > 0:
            m += t - o + 1
    return m


@njit(cache=True, nogil=True)
def _token_frame(norm, a, z, frame, starts):
    """``<token>`` for the token ``norm[a:z]`` into ``frame``, and the byte offsets of its
    characters into ``starts`` (one more than characters: the end); returns the frame's
    bytes and characters."""
    frame[0] = 0x3C  # '<'
    L = 1
    for j in range(a, z):
        frame[L] = norm[j]
        L += 1
    frame[L] = 0x3E  # '>'
    L += 1
    c = 0  # character starts within frame
    for j in range(L):
        if (frame[j] & 0xC0) != 0x80:
            starts[c] = j
            c += 1
    starts[c] = L
    return L, c


@njit(cache=True, nogil=True)
def _char_pass(char_lo, char_n, long_n, long_words):
    """``(first, last, longer)`` of the character pass: lengths ``char_lo..char_n`` of
    every token, or without character n-grams ``long_n``-grams of tokens longer than
    ``long_words`` (one rule for hashing and for naming, :mod:`._ngram_hits`)."""
    if char_n > 0:
        return char_lo, char_n, 0
    return long_n, long_n, long_words


@njit(cache=True, nogil=True)
def _char_ngram_ids(norm, tok, n_tok, char_n, mask, seed, frame, starts, ids, m, longer):
    """Hash character n-grams of each ``<token>`` (only of tokens of more than ``longer``
    code points, when it is not 0); append to ``ids`` from ``m``; return new m."""
    for k in range(n_tok):
        a = tok[k]
        z = tok[k + 1] - 1
        if longer > 0 and z - a <= longer:  # no more code points than bytes: short
            continue
        L, c = _token_frame(norm, a, z, frame, starts)
        if longer > 0 and c - 2 <= longer:
            continue
        if c <= char_n:
            ids[m] = murmur3_32(frame, np.int64(0), L, seed) & mask  # (a literal 0: a copy)
            m += 1
        else:
            for q in range(c - char_n + 1):
                p0 = starts[q]
                ids[m] = murmur3_32(frame, p0, starts[q + char_n] - p0, seed) & mask
                m += 1
    return m


@njit(cache=True, nogil=True)
def _add_distinct(h, keys, stamps, size_mask, shift, stamp, ids, m):
    """Append ``h`` to ``ids[m]`` unless this document has it already; return the new m.

    ``keys[:size_mask + 1]``/``stamps`` form an open-addressing set whose slots belong to
    the current document when ``stamps[slot] == stamp``, so it never needs clearing between
    documents, and each document can use a prefix of the arrays sized for its own n-grams.
    """
    slot = ((h * 0x9E3779B1) & 0xFFFFFFFF) >> shift
    while True:
        if stamps[slot] != stamp:
            stamps[slot] = stamp
            keys[slot] = h
            ids[m] = h
            return m + 1
        if keys[slot] == h:
            return m
        slot = (slot + 1) & size_mask


@njit(cache=True, nogil=True)
def _grown(a, n, size):
    """A new array of ``size`` elements of ``a``'s type whose first ``n`` are ``a``'s.

    A loop, not ``bigger[:n] = a[:n]``: numba compiles a slice copy with its shape-mismatch
    error (the shapes formatted into the message), about 2 s of every kernel that has one.
    """
    bigger = np.empty(size, a.dtype)
    for j in range(n):
        bigger[j] = a[j]
    return bigger


@njit(cache=True, nogil=True)
def _hash_docs(
    buf,
    doc_starts,
    ngrams,
    char_lo,
    char_n,
    mask,
    seed,
    seed2,
    split,
    scripts,
    long_words=0,
    long_n=4,
):
    """Bucket ids of every document ``buf[doc_starts[d]:doc_starts[d+1]]``.

    Returns ``(ids, offsets)``: each document's distinct ids (int32) in order of first
    occurrence (all unigrams, then bigrams, ..., then character n-grams of lengths
    ``char_lo..char_n``, shortest first), concatenated, and offsets (int64, one more than
    documents). ``split``, ``scripts``: the tokenizer's ``split_scripts`` and its table
    (:func:`nbsvm.text._tokenizer._tokenize`). Without character n-grams (``char_n`` 0), a
    token of more than ``long_words`` code points (0: none) gives its character
    ``long_n``-grams after the word n-grams: text without spaces between its words.

    Scratch memory follows what a document produces, not its bytes times the n-gram order:
    token starts grow to the most tokens of a document, the n-gram buffer to the most
    n-grams, the character frame to the longest token, and the dedup set to twice the most
    n-grams of a document (at most twice the ``mask + 1`` possible ids); each document
    probes only a prefix of the set sized for its own n-grams, so short documents after a
    long one stay in cache. Only ``norm`` (the normalized text, at most twice the longest
    document) is sized by bytes.
    """
    n_docs = doc_starts.shape[0] - 1
    longest = 0
    for d in range(n_docs):
        longest = max(longest, doc_starts[d + 1] - doc_starts[d])
    norm = np.empty(2 * longest + 2, np.uint8)
    tok = np.empty(min(longest + 2, 4096), np.int64)
    raw = np.empty(4096, np.int32)
    frame = np.empty(64 if char_n > 0 else 1, np.uint8)
    starts = np.empty(65 if char_n > 0 else 1, np.int64)
    keys = np.empty(1 << 12, np.int32)
    stamps = np.full(1 << 12, -1, np.int32)
    out_offsets = np.empty(n_docs + 1, np.int64)
    out_ids = np.empty(max(1024, buf.shape[0] // 2), np.int32)
    pos = np.int64(0)  # not a literal 0: _grown and _add_distinct compile once
    out_offsets[0] = 0
    stamp = -1
    for d in range(n_docs):
        stamp += 1
        if stamp == 0x7FFFFFFF:  # int32 stamps wrap: forget every document
            stamps[:] = -1
            stamp = 0
        t = _tokenize(buf, doc_starts[d], doc_starts[d + 1], norm, tok, split, scripts)
        if t + 1 > tok.shape[0]:  # more tokens than ever before: grow, redo
            tok = np.empty(max(t + 1, 2 * tok.shape[0]), np.int64)
            t = _tokenize(buf, doc_starts[d], doc_starts[d + 1], norm, tok, split, scripts)
        need = _n_word_ngrams(t, ngrams)
        chars = char_n > 0 or long_words > 0
        if chars and t > 0:
            # a token of c code points gives max(c + 2 - char_n + 1, 1) <= bytes + 2 n-grams
            need += (char_n - char_lo + 1 if char_n > 0 else 1) * (tok[t] - 1 - (t - 1) + 2 * t)
            widest = 0
            for k in range(t):
                widest = max(widest, tok[k + 1] - 1 - tok[k])
            if widest + 2 > frame.shape[0]:
                frame = np.empty(widest + 2, np.uint8)
                starts = np.empty(widest + 3, np.int64)
        if need > raw.shape[0]:
            raw = np.empty(max(need, 2 * raw.shape[0]), np.int32)
        m = _word_ngram_ids(norm, tok, t, ngrams, mask, seed, raw)
        if chars:  # one call site: one compiled specialization of _char_ngram_ids
            first, last, longer = _char_pass(char_lo, char_n, long_n, long_words)
            for n in range(first, last + 1):
                m = _char_ngram_ids(norm, tok, t, n, mask, seed2, frame, starts, raw, m, longer)
        if pos + m > out_ids.shape[0]:  # grow geometrically (rare)
            out_ids = _grown(out_ids, pos, max(2 * out_ids.shape[0], pos + m))
        bits = 4  # this document's set: >= 2 slots per id
        while (1 << bits) < 2 * min(m, mask + 1):
            bits += 1
        if (1 << bits) > keys.shape[0]:  # a bigger set starts empty: fine between docs
            keys = np.empty(1 << bits, np.int32)
            stamps = np.full(1 << bits, -1, np.int32)
        size_mask = (1 << bits) - 1
        shift = 32 - bits
        for j in range(m):
            pos = _add_distinct(
                np.int64(raw[j]), keys, stamps, size_mask, shift, stamp, out_ids, pos
            )
        out_offsets[d + 1] = pos
    return out_ids[:pos].copy(), out_offsets
