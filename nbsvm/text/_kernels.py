"""Compiled tokenizer + MurmurHash3: UTF-8 bytes in, sorted distinct bucket ids out.

The Python side lowercases, replaces ``<br />`` and encodes each text as UTF-8 (lone
surrogates passed through), exactly as the reference path in :mod:`.hashing` does; these
kernels then do what the reference does per token and per n-gram, without building strings:
split on white space (every code point for which ``str.isspace`` is true), split off the
punctuation ``. " , ( ) ! ? ; :`` as tokens of their own, write the tokens into a buffer with
single spaces between them, and hash each n-gram as a contiguous span of that buffer.
"""
from __future__ import annotations

import numpy as np
from numba import njit

M32 = 0xFFFFFFFF


@njit(cache=True, nogil=True, inline="always")
def _rotl32(x, r):
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


@njit(cache=True, nogil=True, inline="always")
def _murmur_block(h, data, p):
    """One 4-byte block of MurmurHash3 x86 32 (``h`` mixed with ``data[p:p+4]``)."""
    k = (np.int64(data[p]) | (np.int64(data[p + 1]) << 8) | (np.int64(data[p + 2]) << 16)
         | (np.int64(data[p + 3]) << 24))
    k = (k * 0xCC9E2D51) & 0xFFFFFFFF
    k = _rotl32(k, 15)
    k = (k * 0x1B873593) & 0xFFFFFFFF
    h ^= k
    h = _rotl32(h, 13)
    return (h * 5 + 0xE6546B64) & 0xFFFFFFFF


@njit(cache=True, nogil=True, inline="always")
def _murmur_finish(h, data, tail, length):
    """The tail bytes ``data[tail:...]`` (``length & 3`` of them) and the final mix."""
    rem = length & 3
    k = 0
    if rem >= 3:
        k ^= np.int64(data[tail + 2]) << 16
    if rem >= 2:
        k ^= np.int64(data[tail + 1]) << 8
    if rem >= 1:
        k ^= np.int64(data[tail])
        k = (k * 0xCC9E2D51) & 0xFFFFFFFF
        k = _rotl32(k, 15)
        k = (k * 0x1B873593) & 0xFFFFFFFF
        h ^= k
    h ^= length & 0xFFFFFFFF
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


@njit(cache=True, nogil=True, inline="always")
def murmur3_32(data, start, length, seed):
    """MurmurHash3 x86 32-bit of ``data[start:start+length]`` (uint8), as in ``mmh3``.

    Arithmetic is in int64 with explicit 32-bit masks: products wrap modulo 2**64, which
    keeps their low 32 bits exact.
    """
    h = seed & 0xFFFFFFFF
    full = length & ~3
    for p in range(start, start + full, 4):
        h = _murmur_block(h, data, p)
    return _murmur_finish(h, data, start + full, length)


@njit(cache=True, nogil=True, inline="always")
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
        done = 0                              # bytes mixed in as blocks
        base = 0                              # where order o's n-grams start in raw
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


@njit(cache=True, nogil=True, inline="always")
def _n_word_ngrams(t, ngrams):
    """How many word n-grams of orders 1..ngrams ``t`` tokens have."""
    m = 0
    for o in range(1, ngrams + 1):
        if t - o + 1 > 0:
            m += t - o + 1
    return m


@njit(cache=True, nogil=True, inline="always")
def _is_space(cp):
    # str.isspace() code points (checked against Python over all of Unicode in the tests)
    if cp <= 0x20:
        return cp == 0x20 or (0x09 <= cp <= 0x0D) or (0x1C <= cp <= 0x1F)
    if cp < 0x85:
        return False
    return (cp == 0x85 or cp == 0xA0 or cp == 0x1680 or (0x2000 <= cp <= 0x200A)
            or cp == 0x2028 or cp == 0x2029 or cp == 0x202F or cp == 0x205F or cp == 0x3000)


@njit(cache=True, nogil=True, inline="always")
def _is_punct(b):
    # . " , ( ) ! ? ; :
    return (b == 0x2E or b == 0x22 or b == 0x2C or b == 0x28 or b == 0x29 or b == 0x21
            or b == 0x3F or b == 0x3B or b == 0x3A)


@njit(cache=True, nogil=True)
def _tokenize(buf, s, e, norm, tok):
    """Write the tokens of ``buf[s:e]`` into ``norm`` separated by single spaces.

    Returns the number of tokens t. Token k is ``norm[tok[k]:tok[k + 1] - 1]``: ``tok`` holds
    each token's start and, at ``tok[t]``, where a next token would start (the end of the
    last token plus one): ends are implied since tokens are exactly one space apart. If ``tok`` is shorter than
    ``t + 1`` the starts that do not fit are not written: the caller grows ``tok`` to
    ``t + 1`` and calls again, so ``tok`` is sized by tokens, not bytes.
    """
    cap = tok.shape[0]
    n = 0           # bytes written to norm
    t = 0           # tokens
    in_tok = False
    i = s
    while i < e:
        b = buf[i]
        if b < 0x80:
            if (b <= 0x20 and (b == 0x20 or (0x09 <= b <= 0x0D) or (0x1C <= b <= 0x1F))):
                if in_tok:
                    t += 1
                    in_tok = False
                i += 1
                continue
            if _is_punct(b):
                if in_tok:
                    t += 1
                    in_tok = False
                if t > 0:
                    norm[n] = 0x20
                    n += 1
                if t < cap:
                    tok[t] = n
                norm[n] = b
                n += 1
                t += 1
                i += 1
                continue
            length = 1
            cp = b
        else:
            # decode one UTF-8 sequence (surrogatepass bytes decode like any 3-byte form)
            if b >= 0xF0:
                length = 4
                cp = b & 0x07
            elif b >= 0xE0:
                length = 3
                cp = b & 0x0F
            elif b >= 0xC0:
                length = 2
                cp = b & 0x1F
            else:
                length = 1
                cp = b
            if i + length > e:
                length = e - i
            for j in range(1, length):
                cp = (cp << 6) | (buf[i + j] & 0x3F)
            if length > 1 and _is_space(cp):
                if in_tok:
                    t += 1
                    in_tok = False
                i += length
                continue
        if not in_tok:
            if t > 0:
                norm[n] = 0x20
                n += 1
            if t < cap:
                tok[t] = n
            in_tok = True
        for j in range(length):
            norm[n] = buf[i + j]
            n += 1
        i += length
    if in_tok:
        t += 1
    if t < cap:
        tok[t] = n + 1
    return t


@njit(cache=True, nogil=True)
def _char_ngram_ids(norm, tok, n_tok, char_n, mask, seed, frame, starts, ids, m):
    """Hash character n-grams of each ``<token>``; append to ``ids`` from ``m``; return new m."""
    for k in range(n_tok):
        a = tok[k]
        z = tok[k + 1] - 1
        frame[0] = 0x3C     # '<'
        L = 1
        for j in range(a, z):
            frame[L] = norm[j]
            L += 1
        frame[L] = 0x3E     # '>'
        L += 1
        c = 0               # character starts within frame
        for j in range(L):
            if (frame[j] & 0xC0) != 0x80:
                starts[c] = j
                c += 1
        starts[c] = L
        if c <= char_n:
            ids[m] = murmur3_32(frame, 0, L, seed) & mask
            m += 1
        else:
            for q in range(c - char_n + 1):
                p0 = starts[q]
                ids[m] = murmur3_32(frame, p0, starts[q + char_n] - p0, seed) & mask
                m += 1
    return m


@njit(cache=True, nogil=True, inline="always")
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
def _hash_docs(buf, doc_starts, ngrams, char_n, mask, seed, seed2):
    """Bucket ids of every document ``buf[doc_starts[d]:doc_starts[d+1]]``.

    Returns ``(ids, offsets)``: each document's distinct ids (int32) in order of first
    occurrence (all unigrams, then bigrams, ..., then character n-grams), concatenated, and
    offsets (int64, one more than documents).

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
    pos = 0
    out_offsets[0] = 0
    stamp = -1
    for d in range(n_docs):
        stamp += 1
        if stamp == 0x7FFFFFFF:             # int32 stamps wrap: forget every document
            stamps[:] = -1
            stamp = 0
        t = _tokenize(buf, doc_starts[d], doc_starts[d + 1], norm, tok)
        if t + 1 > tok.shape[0]:            # more tokens than ever before: grow, redo
            tok = np.empty(max(t + 1, 2 * tok.shape[0]), np.int64)
            t = _tokenize(buf, doc_starts[d], doc_starts[d + 1], norm, tok)
        need = _n_word_ngrams(t, ngrams)
        if char_n > 0 and t > 0:
            # a token of c code points gives max(c + 2 - char_n + 1, 1) <= bytes + 2 n-grams
            need += tok[t] - 1 - (t - 1) + 2 * t
            widest = 0
            for k in range(t):
                widest = max(widest, tok[k + 1] - 1 - tok[k])
            if widest + 2 > frame.shape[0]:
                frame = np.empty(widest + 2, np.uint8)
                starts = np.empty(widest + 3, np.int64)
        if need > raw.shape[0]:
            raw = np.empty(max(need, 2 * raw.shape[0]), np.int32)
        m = _word_ngram_ids(norm, tok, t, ngrams, mask, seed, raw)
        if char_n > 0:
            m = _char_ngram_ids(norm, tok, t, char_n, mask, seed2, frame, starts, raw, m)
        if pos + m > out_ids.shape[0]:      # grow geometrically (rare)
            bigger = np.empty(max(2 * out_ids.shape[0], pos + m), np.int32)
            bigger[:pos] = out_ids[:pos]
            out_ids = bigger
        bits = 4                            # this document's set: >= 2 slots per id
        while (1 << bits) < 2 * min(m, mask + 1):
            bits += 1
        if (1 << bits) > keys.shape[0]:     # a bigger set starts empty: fine between docs
            keys = np.empty(1 << bits, np.int32)
            stamps = np.full(1 << bits, -1, np.int32)
        size_mask = (1 << bits) - 1
        shift = 32 - bits
        for j in range(m):
            pos = _add_distinct(np.int64(raw[j]), keys, stamps, size_mask, shift, stamp,
                                out_ids, pos)
        out_offsets[d + 1] = pos
    return out_ids[:pos].copy(), out_offsets


@njit(cache=True, nogil=True)
def _ngram_hits(buf, doc_starts, ngrams, mask, seed, wanted):
    """Every word n-gram occurrence whose bucket is set in the bitmap ``wanted`` (uint64
    words: bit ``b & 63`` of word ``b >> 6``; 2 MB for 2**24 buckets, so that the lookups
    stay in cache), with its text.

    Returns ``(buckets int32, keys uint32, text_offsets int64, text uint8)``: hit ``j`` is
    the n-gram ``text[text_offsets[j]:text_offsets[j + 1]]`` (normalized, tokens joined by
    single spaces: the exact key that was hashed) in bucket ``buckets[j]``, and ``keys[j]``
    a second hash of it (another seed), so that equal n-grams are counted without comparing
    strings. Used to name the buckets a model explains with; buckets come from
    :func:`_word_ngram_ids`, so they equal the hasher's.
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
    seed_key = (seed ^ 0x5BD1E995) & 0xFFFFFFFF
    text = np.empty(16384, np.uint8)
    n_hits = 0
    n_bytes = 0
    hit_offsets[0] = 0
    for d in range(n_docs):
        t = _tokenize(buf, doc_starts[d], doc_starts[d + 1], norm, tok)
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
                        bigger = np.empty(size, np.int32)
                        bigger[:n_hits] = hit_buckets[:n_hits]
                        hit_buckets = bigger
                        bigger_k = np.empty(size, np.uint32)
                        bigger_k[:n_hits] = hit_keys[:n_hits]
                        hit_keys = bigger_k
                        bigger_o = np.empty(size + 1, np.int64)
                        bigger_o[:n_hits + 1] = hit_offsets[:n_hits + 1]
                        hit_offsets = bigger_o
                    if n_bytes + (z - a) > text.shape[0]:
                        bigger_t = np.empty(max(2 * text.shape[0], n_bytes + z - a), np.uint8)
                        bigger_t[:n_bytes] = text[:n_bytes]
                        text = bigger_t
                    text[n_bytes:n_bytes + z - a] = norm[a:z]
                    n_bytes += z - a
                    hit_buckets[n_hits] = b
                    hit_keys[n_hits] = murmur3_32(norm, a, z - a, seed_key)
                    n_hits += 1
                    hit_offsets[n_hits] = n_bytes
            if t - o + 1 > 0:
                base += t - o + 1
    return (hit_buckets[:n_hits].copy(), hit_keys[:n_hits].copy(),
            hit_offsets[:n_hits + 1].copy(), text[:n_bytes].copy())
