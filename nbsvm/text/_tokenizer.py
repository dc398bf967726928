"""The compiled tokenizer: UTF-8 bytes in, normalized tokens one space apart out.

The Python side lowercases, replaces ``<br />`` and encodes each text as UTF-8 (lone
surrogates passed through), exactly as the reference path in :mod:`.hashing` does; these
kernels then do what the reference does per token, without building strings: split on white
space (every code point for which ``str.isspace`` is true), split off the punctuation
``. " , ( ) ! ? ; :`` as tokens of their own, and write the tokens into a buffer with single
spaces between them, so that each n-gram is a contiguous span of that buffer.

With ``split`` (``split_scripts``) the characters that ``scripts`` (the table of
:mod:`.scripts`, as :func:`nbsvm.text.scripts.script_arrays`) lists are looked up: a split
character is a token of its own, a combining mark right after one joins its token, a break
separates like white space. ASCII never reaches the lookup, and without ``split`` nothing
changes: the tokens are exactly those of the tokenizer before the option.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _is_space(cp):
    # str.isspace() code points (checked against Python over all of Unicode in the tests)
    if cp <= 0x20:
        return cp == 0x20 or (0x09 <= cp <= 0x0D) or (0x1C <= cp <= 0x1F)
    if cp < 0x85:
        return False
    return (
        cp == 0x85
        or cp == 0xA0
        or cp == 0x1680
        or (0x2000 <= cp <= 0x200A)
        or cp == 0x2028
        or cp == 0x2029
        or cp == 0x202F
        or cp == 0x205F
        or cp == 0x3000
    )


@njit(cache=True, nogil=True)
def _is_punct(b):
    # . " , ( ) ! ? ; :
    return (
        b == 0x2E
        or b == 0x22
        or b == 0x2C
        or b == 0x28
        or b == 0x29
        or b == 0x21
        or b == 0x3F
        or b == 0x3B
        or b == 0x3A
    )


@njit(cache=True, nogil=True)
def _decode(buf, i, e):
    """``(code point, length)`` of the UTF-8 sequence at ``buf[i]``, as :func:`_tokenize`
    decodes it (a sequence cut by ``e`` is shorter)."""
    b = buf[i]
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
    return cp, length


@njit(cache=True, nogil=True)
def _script_kind(cp, scripts):
    """The kind of code point ``cp`` in ``scripts`` (``(3, n)``: sorted disjoint ranges'
    first and last code points and kinds): 0 (an ordinary character), 1 split, 2 join,
    3 break."""
    lo = 0
    hi = scripts.shape[1]
    while lo < hi:  # the last range starting at or before cp
        mid = (lo + hi) >> 1
        if scripts[0, mid] <= cp:
            lo = mid + 1
        else:
            hi = mid
    if lo > 0 and cp <= scripts[1, lo - 1]:
        return scripts[2, lo - 1]
    return 0


@njit(cache=True, nogil=True)
def _script_step(buf, i, e, cp, length, first, scripts, norm, n, tok, t, cap, in_tok):
    """:func:`_tokenize`'s step at a character of the table, out of the ASCII loop: a split
    character becomes a token of its own with the combining marks after it, a break ends
    the token. Returns ``(i, n, t, in_tok)`` after it; ``i`` unchanged: an ordinary
    character (a mark after no split character, or none of the table)."""
    kind = _script_kind(cp, scripts)
    if kind == 1:
        if in_tok:
            t += 1
        if t > 0:
            norm[n] = 0x20
            n += 1
        if t < cap:
            tok[t] = n
        t += 1
        while True:
            for j in range(length):
                norm[n] = buf[i + j]
                n += 1
            i += length
            if i >= e:
                break
            cp, length = _decode(buf, i, e)
            if length < 2 or cp < first or _script_kind(cp, scripts) != 2:
                break
        return i, n, t, False
    if kind == 3:
        return i + length, n, t + 1 if in_tok else t, False
    return i, n, t, in_tok


@njit(cache=True, nogil=True)
def _tokenize(buf, s, e, norm, tok, split, scripts):
    """Write the tokens of ``buf[s:e]`` into ``norm`` separated by single spaces.

    Returns the number of tokens t. Token k is ``norm[tok[k]:tok[k + 1] - 1]``: ``tok`` holds
    each token's start and, at ``tok[t]``, where a next token would start (the end of the
    last token plus one): ends are implied since tokens are exactly one space apart. If ``tok`` is shorter than
    ``t + 1`` the starts that do not fit are not written: the caller grows ``tok`` to
    ``t + 1`` and calls again, so ``tok`` is sized by tokens, not bytes.

    ``split``: look the characters from the table's first code point on up in ``scripts``
    (see the module docstring), in :func:`_script_step`, out of this loop: its ASCII and
    white space paths are the tokenizer's before the option, and run as fast.
    """
    cap = tok.shape[0]
    # typed, not literal, from the start: numba types a call in a loop with what it knows
    # so far, and compiled _script_step once more for literal 0, 0, False (1.2 s)
    n = np.int64(0)  # bytes written to norm
    t = np.int64(0)  # tokens
    in_tok = np.bool_(False)
    # code points from ``first`` on are looked up (without split: none)
    first = scripts[0, 0] if split and scripts.shape[1] > 0 else 0x7FFFFFFF
    i = s
    while i < e:
        b = buf[i]
        if b < 0x80:
            if b <= 0x20 and (b == 0x20 or (0x09 <= b <= 0x0D) or (0x1C <= b <= 0x1F)):
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
            # one UTF-8 sequence (surrogatepass bytes decode like any 3-byte form), inlined
            cp, length = _decode(buf, i, e)
            if length > 1 and _is_space(cp):
                if in_tok:
                    t += 1
                    in_tok = False
                i += length
                continue
            if length > 1 and cp >= first:  # split_scripts: the table decides
                after, n, t, in_tok = _script_step(
                    buf, i, e, cp, length, first, scripts, norm, n, tok, t, cap, in_tok
                )
                if after > i:
                    i = after
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
