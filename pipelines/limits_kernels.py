"""The bare kernels of :mod:`limits`: the production tokenizer and n-gram hashing with
nothing around them, and the dot products of scoring."""

from __future__ import annotations

import numpy as np
from numba import njit

from nbsvm.text._ngram_ids import _word_ngram_ids
from nbsvm.text._tokenizer import _tokenize


@njit(cache=True, nogil=True)
def _tokens_only(buf, starts, scripts):
    """Tokens of every document: the production tokenizer and nothing else."""
    longest = 1
    for d in range(starts.shape[0] - 1):
        longest = max(longest, starts[d + 1] - starts[d])
    norm = np.empty(2 * longest + 1, np.uint8)
    tok = np.empty(longest + 1, np.int64)
    split = scripts.shape[1] > 0  # not a constant: the production kernel's compiled signature
    total = 0
    for d in range(starts.shape[0] - 1):
        total += _tokenize(buf, starts[d], starts[d + 1], norm, tok, split, scripts)
    return total


@njit(cache=True, nogil=True)
def _ngram_hashes_only(buf, starts, scripts, ngrams, mask, seed):
    """MurmurHash3 of every word n-gram of every document into scratch, summed so that
    nothing is optimized away: no distinct ids, no counts, nothing written out. (``seed`` is
    an argument and ``raw`` int32, as in nbsvm's hashing: a literal 0 or an int64 ``raw``
    would compile a second copy of ``_word_ngram_ids``.)"""
    longest = 1
    for d in range(starts.shape[0] - 1):
        longest = max(longest, starts[d + 1] - starts[d])
    norm = np.empty(2 * longest + 1, np.uint8)
    tok = np.empty(longest + 1, np.int64)
    raw = np.empty(ngrams * (longest + 1), np.int32)
    split = scripts.shape[1] > 0
    check = 0
    for d in range(starts.shape[0] - 1):
        t = _tokenize(buf, starts[d], starts[d + 1], norm, tok, split, scripts)
        m = _word_ngram_ids(norm, tok, t, ngrams, mask, seed, raw)
        for j in range(m):
            check += raw[j]
    return check


@njit(cache=True, nogil=True)
def _dots(ids, offsets, S, out):
    for d in range(offsets.shape[0] - 1):
        s = 0.0
        for j in range(offsets[d], offsets[d + 1]):
            s += np.float64(S[ids[j], 1]) * S[ids[j], 0]
        out[d] = s
