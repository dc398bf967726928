"""Names of a hashed model's buckets: the n-grams of a sample of its training text.

A hashed model only knows buckets. To name them, training keeps a bounded sample of its
documents (:class:`TextSample`: a seeded reservoir of at most ``SAMPLE_DOCS`` documents, each
cut to ``SAMPLE_CHARS`` characters, taken while the documents stream past for the lexicon
pass), and beside the last epochs the compiled tokenizer finds the n-grams of that sample that
fall in the model's ``MAP_TOP`` strongest buckets of each sign (:func:`ngram_map`). The
model file keeps up to ``PER_BUCKET`` strings per bucket with their counts
(:mod:`nbsvm.evaluation.ngram_map`), so collisions show: a bucket shared by ``great``
and ``zyx`` is listed as ``great | zyx``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from numba import njit

from nbsvm import memory
from nbsvm.config import LONG_WORD_CHARS
from nbsvm.evaluation.contributions import _contribution_row
from nbsvm.text._ngram_hits import _ngram_hits

if TYPE_CHECKING:
    from nbsvm.io.document import Document
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.text.hashing import Hasher

_D = TypeVar("_D", bound="str | Document")

SAMPLE_DOCS = 4096  # documents kept to name buckets with (about 5 MB of IMDB)
SAMPLE_CHARS = 2048  # characters kept of each
MAP_BATCH = 512  # texts hashed at a time to name buckets (about 11 MB of hits)
CHAR_MAP_DOCS = 256  # the first sample documents whose character n-grams name buckets
MAP_TOP = 2000  # strongest buckets of each sign (per output) that get names
PER_BUCKET = 4  # strings kept per bucket (the most frequent in the sample)


class TextSample:
    """A seeded reservoir sample of document texts (Vitter's algorithm R), bounded in size.

    Examples
    --------
    >>> s = TextSample(k=2, seed=0)
    >>> docs = list(s.wrap(iter(["a", "b", "c", "d"])))     # passes items through
    >>> docs, len(s.texts), s.seen
    (['a', 'b', 'c', 'd'], 2, 4)
    """

    def __init__(self, k: int = SAMPLE_DOCS, seed: int = 0, max_chars: int = SAMPLE_CHARS):
        self.k, self.max_chars = k, max_chars
        self.texts: list[str] = []
        self.seen = 0
        self._rng = random.Random(int(seed))  # (numpy's int64 too: a grid of np.arange)

    def add(self, text: str) -> None:
        self.seen += 1
        if len(self.texts) < self.k:
            self.texts.append(text[: self.max_chars])
        else:
            j = self._rng.randrange(self.seen)
            if j < self.k:
                self.texts[j] = text[: self.max_chars]

    def wrap(self, docs: Iterable[_D]) -> Iterator[_D]:
        """Yield ``docs`` unchanged, sampling each one's text (documents or plain strings)."""
        for d in docs:
            self.add(d if isinstance(d, str) else d.text)
            yield d


def _extremes(row: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` smallest and the ``n`` largest entries of ``row`` (fewer if it is shorter)."""
    m = min(n, row.size)
    part = np.partition(row, (m - 1, row.size - m))
    return part[:m].copy(), part[row.size - m :].copy()  # copies: the part is freed


def _strongest(C: np.ndarray, top: int) -> np.ndarray:
    """Bool mask of the columns among the ``top`` largest positive and ``top`` smallest
    negative entries of each row of ``C`` (ties at the threshold included), using one copy of
    a row at a time."""
    chosen = np.zeros(C.shape[1], dtype=bool)
    for row in C:
        if min(top, row.size):
            lows, highs = _extremes(row, top)
            # only buckets that move the score: zeros (unseen, no weight) are never named
            chosen |= ((row <= lows.max()) & (row < 0)) | ((row >= highs.min()) & (row > 0))
    return chosen


#: Columns whose contributions :func:`strongest_columns` computes at a time.
STRONGEST_PART = memory.STRONGEST_PART


def strongest_columns(
    clf: NBSVMClassifier, top: int = MAP_TOP, mean_abs: np.ndarray | None = None
) -> np.ndarray:
    """:func:`_strongest` of the model's float32 contributions as a bitmap of columns (bit
    ``c & 63`` of word ``c >> 6``), one output and :data:`STRONGEST_PART` columns at a
    time: the thresholds are the ``top``-th smallest and largest of every part's ``top``
    extremes (the row's own), then a second pass marks. Memory: a bit a column and one
    part (the mapper runs beside the last epochs, whose model may have 2**24 columns)."""
    learner = clf.linear_
    n_cols = learner.n_features
    chosen = np.zeros(max(1, -(-n_cols // 64)), dtype=np.uint64)
    step = n_cols if clf.backend_learner is not None else STRONGEST_PART
    n = min(top, n_cols)

    def parts(k):
        for lo in range(0, n_cols, step):
            row = np.empty(min(step, n_cols - lo), dtype=np.float32)
            _contribution_row(clf, k, row, mean_abs, lo)
            yield lo, row

    for k in range(learner.n_outputs if n else 0):
        extremes = [_extremes(row, n) for _, row in parts(k)]
        low = np.partition(np.concatenate([e[0] for e in extremes]), n - 1)[n - 1]
        highs = np.concatenate([e[1] for e in extremes])
        high = np.partition(highs, highs.size - n)[highs.size - n]
        for lo, row in parts(k):
            _mark_bits(row, float(low), float(high), lo, chosen)
    return chosen


@njit(cache=True, nogil=True)
def _mark_bits(row, low, high, lo, bits):
    """Set the bit of column ``lo + i`` for every ``row[i]`` at or below ``low`` and
    negative, or at or above ``high`` and positive (zeros never move the score)."""
    for i in range(row.shape[0]):
        v = row[i]
        if (v <= low and v < 0.0) or (v >= high and v > 0.0):
            c = lo + i
            bits[c >> 6] |= np.uint64(1) << np.uint64(c & 63)


@njit(cache=True, nogil=True)
def _bitmap_of_columns(remap, chosen, bitmap):
    """Set bit ``b`` of ``bitmap`` for every bucket ``b`` whose column ``remap[b]`` has its
    bit set in ``chosen`` (one pass over the map, no temporaries of its size)."""
    for b in range(remap.shape[0]):
        c = remap[b]
        if c >= 0 and (chosen[c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
            bitmap[b >> 6] |= np.uint64(1) << np.uint64(b & 63)


def ngram_map(
    clf: NBSVMClassifier, texts: list[str], top: int = MAP_TOP, per_bucket: int = PER_BUCKET
) -> dict[int, list[tuple[str, int]]]:
    """Bucket -> its most frequent n-grams in ``texts`` with counts, for the model's
    ``top`` strongest buckets of each sign (word n-grams from every text, character
    n-grams from the first :data:`CHAR_MAP_DOCS`: the strongest buckets are frequent
    ones; a string seen as a word and as characters in one bucket is one name, its counts
    summed)."""
    return ngram_map_of(strongest_columns(clf, top), clf.column_of_, clf.hasher_, texts, per_bucket)


def ngram_map_of(
    chosen: np.ndarray,
    remap: np.ndarray | None,
    hasher: Hasher,
    texts: list[str],
    per_bucket: int = PER_BUCKET,
) -> dict[int, list[tuple[str, int]]]:
    """:func:`ngram_map` from the bitmap of chosen model columns (:func:`strongest_columns`)
    and the bucket -> column ``remap`` (None: columns are buckets); runs without the model:
    in a thread, while the last epochs train."""
    words = max(1, (1 << hasher.n_bits) >> 6)
    if remap is None:  # columns are buckets: the same bitmap
        wanted = np.zeros(words, dtype=np.uint64)
        wanted[: min(words, chosen.size)] = chosen[:words]
    else:
        wanted = np.zeros(words, dtype=np.uint64)
        _bitmap_of_columns(remap, chosen, wanted)
    pairs, counts = _counted_pairs(hasher, texts, wanted)
    kept = _most_frequent(pairs, counts, per_bucket)  # indices into pairs
    names = _names_of_pairs(hasher, texts, wanted, pairs[kept])
    found: dict[int, list[tuple[str, int]]] = {}
    for pair, n in zip(pairs[kept].tolist(), counts[kept].tolist()):
        found.setdefault(pair >> 32, []).append((names[pair].decode("utf-8", "replace"), n))
    return found


def _hit_pairs(hasher: Hasher, texts: list[str], wanted: np.ndarray) -> Iterator[tuple]:
    """Per :data:`MAP_BATCH` texts, the word n-grams (and character n-grams of the first
    :data:`CHAR_MAP_DOCS` texts) that fall in the ``wanted`` buckets as
    uint64 pairs (bucket << 32 | second hash), with their bytes (``raw`` cut at
    ``offsets``)."""
    for start in range(0, len(texts), MAP_BATCH):
        buf, starts = hasher.prepare(texts[start : start + MAP_BATCH])
        hit, keys, offsets, raw = _ngram_hits(
            buf,
            starts,
            hasher.ngrams,
            (1 << hasher.n_bits) - 1,
            hasher.seed,
            wanted,
            bool(hasher.split_scripts),
            hasher.scripts,
            hasher.char_min or hasher.char_ngrams,
            hasher.char_ngrams,
            int(hasher.long_words),
            LONG_WORD_CHARS,
            max(0, CHAR_MAP_DOCS - start),
        )
        if hit.size:
            yield (hit.astype(np.uint64) << np.uint64(32)) | keys.astype(np.uint64), offsets, raw


def _counted_pairs(
    hasher: Hasher, texts: list[str], wanted: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs of :func:`_hit_pairs`, sorted, and their counts: each batch's
    pairs sorted in place and counted by runs, merged into the running counts. 16 bytes a
    distinct n-gram, where a ``Counter`` of their strings took about 120 (the map of a
    sample of 5-grams at 12 bits: 2.5 million of them, 315 MB)."""
    pairs, counts = np.zeros(0, np.uint64), np.zeros(0, np.int64)
    for pair, _, _ in _hit_pairs(hasher, texts, wanted):
        pair.sort()
        pairs, counts = _merge_counts(pairs, counts, *_runs(pair))
    return pairs, counts


@njit(cache=True, nogil=True)
def _runs(ordered):
    """The distinct values of the sorted ``ordered`` and how often each occurs."""
    n = 0
    for i in range(ordered.shape[0]):
        n += i == 0 or ordered[i] != ordered[i - 1]
    values = np.empty(n, dtype=ordered.dtype)
    counts = np.zeros(n, dtype=np.int64)
    k = -1
    for i in range(ordered.shape[0]):
        if i == 0 or ordered[i] != ordered[i - 1]:
            k += 1
            values[k] = ordered[i]
        counts[k] += 1
    return values, counts


@njit(cache=True, nogil=True)
def _merge_counts(a, a_counts, b, b_counts):
    """Two sorted sets of distinct values with counts merged into one, counts summed."""
    values = np.empty(a.shape[0] + b.shape[0], dtype=a.dtype)
    counts = np.empty(a.shape[0] + b.shape[0], dtype=np.int64)
    i = j = k = 0
    while i < a.shape[0] or j < b.shape[0]:
        if j == b.shape[0] or (i < a.shape[0] and a[i] < b[j]):
            values[k], counts[k] = a[i], a_counts[i]
            i += 1
        elif i == a.shape[0] or b[j] < a[i]:
            values[k], counts[k] = b[j], b_counts[j]
            j += 1
        else:
            values[k], counts[k] = a[i], a_counts[i] + b_counts[j]
            i += 1
            j += 1
        k += 1
    return values[:k], counts[:k]  # views: the spare room goes with the next merge


@njit(cache=True, nogil=True)
def _most_frequent(pairs, counts, per_bucket):
    """Indices of the ``per_bucket`` most frequent of each bucket's ``pairs`` (sorted, so
    a bucket's pairs are together), bucket by bucket, most frequent first; equal counts in
    the pairs' order."""
    out = np.empty(pairs.shape[0], dtype=np.int64)
    n = 0
    start = 0
    while start < pairs.shape[0]:
        end = start
        while end < pairs.shape[0] and pairs[end] >> 32 == pairs[start] >> 32:
            end += 1
        taken = n
        for _ in range(min(per_bucket, end - start)):
            best = -1
            for i in range(start, end):
                fresh = True
                for t in range(taken, n):
                    fresh &= out[t] != i
                if fresh and (best < 0 or counts[i] > counts[best]):
                    best = i
            out[n] = best
            n += 1
        start = end
    return out[:n].copy()


def _names_of_pairs(
    hasher: Hasher, texts: list[str], wanted: np.ndarray, chosen: np.ndarray
) -> dict[int, bytes]:
    """The bytes of the n-gram first met of each ``chosen`` pair (a second pass over the
    texts: the first keeps no strings)."""
    names: dict[int, bytes] = {}
    want = np.unique(chosen.astype(np.uint64))
    if not want.size:
        return names
    for pair, offsets, raw in _hit_pairs(hasher, texts, wanted):
        hit = np.flatnonzero(want[np.minimum(np.searchsorted(want, pair), want.size - 1)] == pair)
        uniq, first = np.unique(pair[hit], return_index=True)
        data = raw.tobytes()
        for u, j in zip(uniq.tolist(), hit[first].tolist()):
            if u not in names:
                names[u] = data[offsets[j] : offsets[j + 1]]
        if len(names) == want.size:  # every name met (the frequent ones come early):
            break  # the later texts are not searched again
    return names
