"""Seeded generation of the scale corpus from a fitted model: a compiled kernel writes
whole chunks of reviews; the multi-domain variant shuffles the sources together."""

from __future__ import annotations

import numpy as np
from corpus_model import (
    BACKOFF,
    CHUNK_BYTES,
    LABEL_STRENGTH,
    MIX_GROUP,
    SYLLABLES,
    CorpusModel,
)
from numba import njit


@njit(cache=True)
def _draw(next_cum, lo, hi, u):
    """The index in ``[lo, hi)`` whose cumulative count (restarting at ``lo``) first
    exceeds ``u`` times the total."""
    target = u * next_cum[hi - 1]
    a, b = lo, hi - 1
    while a < b:
        m = (a + b) // 2
        if next_cum[m] > target:
            b = m
        else:
            a = m + 1
    return a


@njit(cache=True)
def _write_word(buf, pos, word, blob, offsets, n_known, syllables):
    """Bytes of word ``word`` at ``buf[pos:]``: a known word's, or a made-up word's
    (base-64 digits of its number, as syllables); the new position."""
    if word < n_known:
        for j in range(offsets[word], offsets[word + 1]):
            buf[pos] = blob[j]
            pos += 1
        return pos
    k = word - n_known + 64  # two syllables or more
    digits = np.empty(12, dtype=np.int64)
    n = 0
    while k > 0:
        digits[n] = k % 64
        k //= 64
        n += 1
    for i in range(n - 1, -1, -1):
        buf[pos] = syllables[2 * digits[i]]
        buf[pos + 1] = syllables[2 * digits[i] + 1]
        pos += 2
    return pos


@njit(cache=True)
def _generate(
    seed,
    n_docs,
    buf,
    row_ptr,
    next_ids,
    next_cum,
    uni_cum,
    lengths,
    blob,
    offsets,
    n_common,
    n_known,
    syllables,
    heaps_k,
    heaps_beta,
    backoff,
    strength,
    seen,
    state,
):
    """Write up to ``n_docs`` documents as ``label<TAB>text`` lines into ``buf``, stopping
    before one could overflow it; return (documents, bytes). ``state`` (tokens so far,
    distinct words so far, new words used) and ``seen`` carry over between calls."""
    np.random.seed(seed)
    n_rows = n_common + 2
    rare, start = n_common, n_common + 1
    longest = 0
    for i in range(lengths.shape[0]):
        longest = max(longest, lengths[i])
    room = longest * 26 + 8  # a made-up word is at most 24 bytes
    pos, d = 0, 0
    while d < n_docs and pos + room < buf.shape[0]:
        c = 1 if np.random.random() < 0.5 else 0
        buf[pos] = 112 if c else 110  # "pos" / "neg"
        buf[pos + 1] = 111 if c else 101
        buf[pos + 2] = 115 if c else 103
        buf[pos + 3] = 9
        pos += 4
        length = lengths[np.random.randint(0, lengths.shape[0])]
        prev = start
        for t in range(length):
            cc = c if np.random.random() < strength else 2
            row = cc * n_rows + prev
            lo, hi = row_ptr[row], row_ptr[row + 1]
            if hi > lo and np.random.random() >= backoff:
                w = next_ids[_draw(next_cum, lo, hi, np.random.random())]
            else:
                w = _draw(uni_cum[cc], 0, n_common + 1, np.random.random())
            state[0] += 1
            if w == rare:
                # a word never used while under the Heaps curve, else an earlier rare one
                if state[1] < heaps_k * state[0] ** heaps_beta or state[2] == 0:
                    word = n_common + state[2]
                    state[2] += 1
                    state[1] += 1
                else:
                    u = np.random.random()
                    word = n_common + int(state[2] * u * u)
            else:
                word = w
                if seen[w] == 0:
                    seen[w] = 1
                    state[1] += 1
            if t:
                buf[pos] = 32
                pos += 1
            pos = _write_word(buf, pos, word, blob, offsets, n_known, syllables)
            prev = w
        buf[pos] = 10
        pos += 1
        d += 1
    return d, pos


class Generator:
    """Documents from a :class:`CorpusModel`, seeded: ``chunks(n)`` yields the bytes of
    ``n`` documents in pieces; the state carries over, so later documents continue the
    same corpus (the test documents after the training ones)."""

    def __init__(self, model: CorpusModel, seed: int = 0, strength: float = LABEL_STRENGTH):
        self.model, self.strength = model, strength
        raw = [w.encode("utf-8") for w in model.words]
        self.blob = np.frombuffer(b"".join(raw), dtype=np.uint8)
        self.offsets = np.concatenate([[0], np.cumsum([len(b) for b in raw])]).astype(np.int64)
        self.syllables = np.frombuffer("".join(SYLLABLES).encode(), dtype=np.uint8)
        self.seen = np.zeros(model.n_common, dtype=np.uint8)
        self.state = np.zeros(3, dtype=np.int64)  # tokens, distinct words, new words used
        self.seeds = np.random.SeedSequence(seed)
        self.buf = np.empty(CHUNK_BYTES, dtype=np.uint8)

    @property
    def tokens(self) -> int:
        return int(self.state[0])

    @property
    def distinct_words(self) -> int:
        return int(self.state[1])

    def chunks(self, n_docs: int):
        m = self.model
        left = n_docs
        while left:
            seed = int(self.seeds.spawn(1)[0].generate_state(1)[0] % (2**31))
            d, nbytes = _generate(
                seed,
                left,
                self.buf,
                m.row_ptr,
                m.next_ids,
                m.next_cum,
                m.uni_cum,
                m.lengths,
                self.blob,
                self.offsets,
                m.n_common,
                len(m.words),
                self.syllables,
                m.heaps_k,
                m.heaps_beta,
                BACKOFF,
                self.strength,
                self.seen,
                self.state,
            )
            left -= d
            yield bytes(self.buf[:nbytes])


class MixedGenerator:
    """The multi-domain variant: one :class:`Generator` per domain (each fitted on that
    domain's reviews, with its own lengths and Heaps curve), each document from a domain
    drawn uniformly. Documents are generated in groups of :data:`MIX_GROUP`, each domain's
    share of a group drawn from a multinomial and the group's lines shuffled, all seeded.
    ``labels``: ``sentiment`` (pos / neg), ``domain`` (its name: a multi-class corpus) or
    ``domain-sentiment`` (``books_pos``...: twice as many classes). Made-up words are
    numbered the same way in every domain, so the domains share their rarest words."""

    LABELS = ("sentiment", "domain", "domain-sentiment")

    def __init__(
        self,
        models: dict,
        seed: int = 0,
        strength: float = LABEL_STRENGTH,
        labels: str = "sentiment",
    ):
        if labels not in self.LABELS:
            raise ValueError(f"labels must be one of {', '.join(self.LABELS)}, got {labels!r}")
        seeds = np.random.SeedSequence(seed).spawn(len(models) + 1)
        self.domains = sorted(models)
        self.generators = [
            Generator(models[d], int(seeds[i].generate_state(1)[0] % 2**31), strength)
            for i, d in enumerate(self.domains)
        ]
        self.rng = np.random.default_rng(seeds[-1])
        self.labels = labels

    @property
    def tokens(self) -> int:
        return sum(g.tokens for g in self.generators)

    def distinct_words_by_domain(self) -> dict:
        return {d: g.distinct_words for d, g in zip(self.domains, self.generators)}

    def _relabel(self, domain: str, line: bytes) -> bytes:
        sentiment, _, text = line.partition(b"\t")
        label = {
            "sentiment": sentiment,
            "domain": domain.encode(),
            "domain-sentiment": domain.encode() + b"_" + sentiment,
        }[self.labels]
        return label + b"\t" + text + b"\n"

    def chunks(self, n_docs: int):
        left = n_docs
        share = np.full(len(self.domains), 1 / len(self.domains))
        while left:
            n = min(left, MIX_GROUP)
            lines = []
            for domain, gen, k in zip(
                self.domains, self.generators, self.rng.multinomial(n, share)
            ):
                if k:
                    text = b"".join(gen.chunks(int(k)))
                    lines += [self._relabel(domain, x) for x in text.split(b"\n")[:-1]]
            left -= n
            yield b"".join(lines[i] for i in self.rng.permutation(len(lines)))
