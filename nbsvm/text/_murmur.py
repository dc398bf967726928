"""MurmurHash3 x86 32-bit, compiled: the hash of a byte span, equal to ``mmh3``'s.

:func:`murmur3_32` hashes ``data[start:start+length]``; its two halves, the 4-byte block
mix (:func:`_murmur_block`) and the tail with the final mix (:func:`_murmur_finish`), are
kernels of their own so that n-grams sharing a start can share their blocks
(:func:`nbsvm.text._ngram_ids._word_ngram_ids`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

M32 = 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _rotl32(x, r):
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _murmur_block(h, data, p):
    """One 4-byte block of MurmurHash3 x86 32 (``h`` mixed with ``data[p:p+4]``)."""
    k = (
        np.int64(data[p])
        | (np.int64(data[p + 1]) << 8)
        | (np.int64(data[p + 2]) << 16)
        | (np.int64(data[p + 3]) << 24)
    )
    k = (k * 0xCC9E2D51) & 0xFFFFFFFF
    k = _rotl32(k, 15)
    k = (k * 0x1B873593) & 0xFFFFFFFF
    h ^= k
    h = _rotl32(h, 13)
    return (h * 5 + 0xE6546B64) & 0xFFFFFFFF


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
