"""The compiled tokenizer: UTF-8 bytes in, normalized tokens one space apart out.

The Python side lowercases, replaces ``<br />`` and encodes each text as UTF-8 (lone
surrogates passed through), exactly as the reference path in :mod:`.hashing` does; these
kernels then do what the reference does per token, without building strings: split on white
space (every code point for which ``str.isspace`` is true), split off the punctuation
``. " , ( ) ! ? ; :`` as tokens of their own, and write the tokens into a buffer with single
spaces between them, so that each n-gram is a contiguous span of that buffer.
"""
from __future__ import annotations

from numba import njit


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
