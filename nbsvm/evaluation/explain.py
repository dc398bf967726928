"""Explanations of a hashed model: which n-grams move a score, and by how much.

A hashed model only knows buckets. To name them, training keeps a bounded sample of its
documents (:class:`TextSample`: a seeded reservoir of at most ``SAMPLE_DOCS`` documents, each
cut to ``SAMPLE_CHARS`` characters, taken while the documents stream past for the lexicon
pass), and after the last epoch the compiled tokenizer finds the n-grams of that sample that
fall in the model's ``MAP_TOP`` strongest buckets of each sign (:func:`ngram_map`). The
model file keeps up to ``PER_BUCKET`` strings per bucket with their counts, so collisions
show: a bucket shared by ``great`` and ``zyx`` is listed as ``great | zyx``.

Every kept bucket ``i`` adds a fixed amount to output ``k``'s score when present in a
document (features are binarized): ``c_ki = r_ki w_ki`` for ``beta = 1``; with
``interpolate='scores'``, ``beta r w + (1 - beta) r``; with ``'weights'``,
``beta r w + (1 - beta) mean|w| r``. The score is ``const_k + sum of c_ki`` over the buckets
present (:func:`contributions`), which :func:`explain_text` splits n-gram by n-gram.
"""
from __future__ import annotations

import random
from collections import Counter

import numpy as np
from numba import njit

from nbsvm.errors import NBSVMError
from nbsvm.text import _kernels
from nbsvm.text.hashing import bucket_of

SAMPLE_DOCS = 4096          # documents kept to name buckets with (about 5 MB of IMDB)
SAMPLE_CHARS = 2048         # characters kept of each
MAP_TOP = 2000              # strongest buckets of each sign (per output) that get names
PER_BUCKET = 4              # strings kept per bucket (the most frequent in the sample)


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
        self._rng = random.Random(seed)

    def add(self, text: str) -> None:
        self.seen += 1
        if len(self.texts) < self.k:
            self.texts.append(text[:self.max_chars])
        else:
            j = self._rng.randrange(self.seen)
            if j < self.k:
                self.texts[j] = text[:self.max_chars]

    def wrap(self, docs):
        """Yield ``docs`` unchanged, sampling each one's text (documents or plain strings)."""
        for d in docs:
            self.add(d if isinstance(d, str) else d.text)
            yield d


def _backend_row(clf, k: int, out: np.ndarray) -> float:
    """:func:`_contribution_row` of a model trained with ``learner`` (the backend's weights
    over the same columns; NB interpolation by scores only)."""
    learner = clf.linear_
    values, w, b = clf.backend_.output_weights(k, learner.tables)
    out[:] = w if values is None else values.astype(np.float64) * w
    beta = clf.beta
    if beta == 1.0:
        return b
    out *= out.dtype.type(beta)
    out += out.dtype.type(1 - beta) * learner.tables[k].astype(out.dtype)
    return beta * b + (1 - beta) * clf._log_prior(k)


def _contribution_row(clf, k: int, out: np.ndarray, mean_abs=None) -> float:
    """Row ``k`` of :func:`contributions` into ``out`` (its dtype); returns ``const[k]``."""
    if clf.learner is not None:
        return _backend_row(clf, k, out)
    learner = clf.linear_
    dtype = out.dtype.type
    np.multiply(learner.S_[k, :, 0], learner.S_[k, :, 1], out=out, dtype=out.dtype,
                casting="unsafe")
    out *= dtype(learner.scale_of(k))
    b = float(learner.intercept()[k])
    beta = clf.beta
    if beta == 1.0:
        return b
    out *= dtype(beta)
    if clf.interpolate == "scores":
        out += dtype(1 - beta) * learner.S_[k, :, 0].astype(out.dtype)
        return beta * b + (1 - beta) * clf._log_prior(k)
    mean_abs = clf.mean_abs_coef_ if mean_abs is None else mean_abs
    out += dtype((1 - beta) * float(np.asarray(mean_abs)[k])) * \
        learner.S_[k, :, 0].astype(out.dtype)
    return b


def contributions(clf, dtype=np.float64, mean_abs=None) -> tuple[np.ndarray, np.ndarray]:
    """``(C, const)``: ``C[k, column]`` is what a present bucket adds to output ``k``'s
    score, ``const[k]`` the score of an empty document (``dtype=np.float32``: faster, for
    ranking; ``mean_abs``: mean |w| per output for ``interpolate='weights'``, default the
    model's ``mean_abs_coef_``). Reads the learner's state without changing it."""
    clf.check_fitted()
    learner = clf.linear_
    C = np.empty((learner.n_outputs, learner.n_features), dtype=dtype)
    const = np.array([_contribution_row(clf, k, C[k], mean_abs)
                      for k in range(learner.n_outputs)])
    return C, const


def _strongest_in(row: np.ndarray, top: int, chosen: np.ndarray) -> None:
    n = min(top, row.size)
    if n:
        part = np.partition(row, (n - 1, row.size - n))
        # only buckets that move the score: zeros (unseen, or no weight) are never named
        chosen |= ((row <= part[n - 1]) & (row < 0)) | ((row >= part[row.size - n]) & (row > 0))


def _strongest(C: np.ndarray, top: int) -> np.ndarray:
    """Bool mask of the columns among the ``top`` largest positive and ``top`` smallest
    negative entries of each row of ``C`` (ties at the threshold included), using one copy of
    a row at a time."""
    chosen = np.zeros(C.shape[1], dtype=bool)
    for row in C:
        _strongest_in(row, top, chosen)
    return chosen


def strongest_columns(clf, top: int = MAP_TOP, mean_abs=None) -> np.ndarray:
    """:func:`_strongest` of the model's float32 contributions, computed one output at a
    time (memory: two rows, not the ``n_outputs x n_columns`` matrix)."""
    learner = clf.linear_
    chosen = np.zeros(learner.n_features, dtype=bool)
    row = np.empty(learner.n_features, dtype=np.float32)
    for k in range(learner.n_outputs):
        _contribution_row(clf, k, row, mean_abs)
        _strongest_in(row, top, chosen)
    return chosen


@njit(cache=True, nogil=True)
def _bitmap_of_columns(remap, chosen, bitmap):
    """Set bit ``b`` of ``bitmap`` for every bucket ``b`` whose column ``remap[b]`` is
    chosen (one pass over the map, no temporaries of its size)."""
    for b in range(remap.shape[0]):
        c = remap[b]
        if c >= 0 and chosen[c]:
            bitmap[b >> 6] |= np.uint64(1) << np.uint64(b & 63)


def ngram_map(clf, texts: list[str], top: int = MAP_TOP,
              per_bucket: int = PER_BUCKET) -> dict[int, list[tuple[str, int]]]:
    """Bucket -> its most frequent n-grams in ``texts`` with counts, for the model's
    ``top`` strongest buckets of each sign (word n-grams only)."""
    return ngram_map_of(strongest_columns(clf, top), clf.column_of_, clf.hasher_, texts,
                        per_bucket)


def ngram_map_of(chosen, remap, hasher, texts, per_bucket=PER_BUCKET):
    """:func:`ngram_map` from the mask of chosen model columns (:func:`strongest_columns`)
    and the bucket -> column ``remap`` (None: columns are buckets); runs without the model:
    in a thread, while the last epoch trains."""
    wanted = np.zeros(max(1, (1 << hasher.n_bits) >> 6), dtype=np.uint64)    # a bitmap
    if remap is None:
        remap = np.arange(chosen.shape[0], dtype=np.int32)
    _bitmap_of_columns(remap, chosen, wanted)
    del chosen
    found: dict[int, Counter] = {}        # bucket -> Counter of n-gram bytes
    for start in range(0, len(texts), 2048):
        buf, starts = hasher.prepare(texts[start:start + 2048])
        hit, keys, offsets, raw = _kernels._ngram_hits(
            buf, starts, hasher.ngrams, (1 << hasher.n_bits) - 1, hasher.seed, wanted)
        if not hit.size:
            continue
        # count equal n-grams by (bucket, second hash) in numpy; decode one string of each
        pair = (hit.astype(np.uint64) << np.uint64(32)) | keys.astype(np.uint64)
        uniq, first, count = np.unique(pair, return_index=True, return_counts=True)
        data = raw.tobytes()
        for u, j, n in zip((uniq >> np.uint64(32)).tolist(), first.tolist(), count.tolist()):
            found.setdefault(u, Counter())[data[offsets[j]:offsets[j + 1]]] += n
    return {b: [(k.decode("utf-8", "replace"), n) for k, n in c.most_common(per_bucket)]
            for b, c in found.items()}


def encode_map(mapping: dict) -> dict[str, np.ndarray]:
    """The map as flat numeric arrays for a model file (no pickle, no object arrays)."""
    buckets, counts, texts = [], [], []
    for b in sorted(mapping):
        for s, n in mapping[b]:
            buckets.append(b)
            counts.append(n)
            texts.append(s.encode("utf-8"))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return {"map_buckets": np.asarray(buckets, dtype=np.int32),
            "map_counts": np.asarray(counts, dtype=np.int64), "map_offsets": offsets,
            "map_text": np.frombuffer(b"".join(texts), dtype=np.uint8).copy()}


def decode_map(arrays: dict, n_bits: int, path=None) -> dict[int, list[tuple[str, int]]]:
    """Inverse of :func:`encode_map`, checking every array (the file may be crafted)."""
    names = ("map_buckets", "map_counts", "map_offsets", "map_text")
    if not all(k in arrays for k in names):
        raise NBSVMError("corrupted model file: part of the n-gram map is missing",
                         path=None if path is None else str(path))
    b, n, o, t = (arrays[k] for k in names)
    ok = (b.ndim == n.ndim == o.ndim == t.ndim == 1 and b.dtype == np.int32
          and n.dtype == np.int64 and o.dtype == np.int64 and t.dtype == np.uint8
          and n.size == b.size and o.size == b.size + 1 and o[0] == 0 and o[-1] == t.size
          and bool(np.all(np.diff(o) >= 0)) and (b.size == 0 or (b.min() >= 0 and
                                                                b.max() < (1 << n_bits))))
    if not ok:
        raise NBSVMError("corrupted model file: the n-gram map arrays do not fit together",
                         path=None if path is None else str(path))
    data = t.tobytes()
    out: dict[int, list[tuple[str, int]]] = {}
    for j, bucket in enumerate(b.tolist()):
        out.setdefault(bucket, []).append(
            (data[o[j]:o[j + 1]].decode("utf-8", "replace"), int(n[j])))
    return out


def _output_of(clf, cls) -> int:
    """The output index for class ``cls`` (binary models have one output: the positive
    class ``classes_[1]``; asking for ``classes_[0]`` flips the sign)."""
    if cls is None:
        return 0
    if str(cls) not in clf.classes_:
        raise NBSVMError(f"unknown class {cls!r}; the model has {clf.classes_}")
    k = clf.classes_.index(str(cls))
    return 0 if clf.n_outputs() == 1 else k


def _names(mapping: dict, bucket: int) -> str:
    found = mapping.get(bucket)
    if not found:
        return f"<bucket {bucket}>"
    return " | ".join(s for s, _ in found)


def top_features(clf, top: int = 30, cls=None):
    """The ``top`` strongest buckets of each sign for class ``cls`` as a DataFrame:
    ``direction, rank, ngrams, bucket, ratio, weight, contribution``."""
    import pandas as pd

    if not (isinstance(top, int) and top >= 1):
        raise NBSVMError(f"top must be an integer >= 1, got {top!r}")
    k = _output_of(clf, cls)
    sign = -1.0 if (clf.n_outputs() == 1 and cls is not None
                    and str(cls) == clf.classes_[0]) else 1.0
    C, _ = contributions(clf)
    row = sign * C[k]
    learner = clf.linear_
    backend_w = clf.backend_.output_weights(k, learner.tables)[1] \
        if clf.learner is not None else None
    buckets = clf.column_buckets()
    mapping = getattr(clf, "ngram_map_", None) or {}
    rows = []
    order = np.argsort(row, kind="stable")
    for direction, cols in (("positive", order[::-1][:top]), ("negative", order[:top])):
        for rank, c in enumerate(cols, 1):
            if (row[c] > 0) != (direction == "positive"):
                break                   # no more features of this sign
            b = int(buckets[c])
            rows.append({"direction": direction, "rank": rank, "ngrams": _names(mapping, b),
                         "bucket": b, "ratio": float(learner.S_[k, c, 0]),
                         "weight": float(learner.S_[k, c, 1] * learner.scale_of(k)
                                         if backend_w is None else backend_w[c]),
                         "contribution": float(row[c])})
    return pd.DataFrame(rows, columns=["direction", "rank", "ngrams", "bucket", "ratio",
                                       "weight", "contribution"])


def _unit_row(clf, k: int, buckets: list[int]) -> np.ndarray:
    """Output ``k``'s contributions for one document whose rows are scaled to unit norm:
    the linear part (and with ``interpolate='weights'`` the NB part) divided by the norm of
    the ratios of the document's distinct kept columns."""
    learner = clf.linear_
    cols = np.array(sorted({int(clf.column_of_[b]) if clf.column_of_ is not None else b
                            for b in buckets}), dtype=np.int64)
    cols = cols[cols >= 0]
    r = learner.S_[k, :, 0].astype(np.float64)
    if clf.learner is not None:         # the backend's row values: ratios, or 1 (shared)
        values, w, _ = clf.backend_.output_weights(k, learner.tables)
        x = np.ones_like(r) if values is None else r
        linear = x * w
    else:
        x = r
        linear = r * learner.S_[k, :, 1].astype(np.float64) * learner.scale_of(k)
    norm = float(np.sqrt(np.sum(x[cols] ** 2))) if cols.size else 0.0
    inv = 1.0 / norm if norm > 0 else 0.0
    beta = clf.beta
    if beta == 1.0:
        return linear * inv
    if clf.interpolate == "scores":
        return beta * linear * inv + (1 - beta) * r
    return (beta * linear + (1 - beta) * float(clf.mean_abs_coef_[k]) * r) * inv


def explain_text(clf, text: str, cls=None) -> dict:
    """Split ``text``'s score for class ``cls`` (default: the predicted class) n-gram by
    n-gram: ``{"class", "score", "constant", "ngrams": [{"ngram", "kind", "bucket",
    "contribution", "note"}]}``. Each bucket counts once (features are binarized): its
    first n-gram carries the contribution, repeats and other n-grams in the same bucket add
    0 (``note`` says which); ``constant + sum(contribution) == score``."""
    clf.check_fitted()
    scores = np.atleast_1d(clf.decision_function([text])[0])
    if cls is None and clf.multilabel:          # the label with the highest score
        cls = clf.classes_[int(np.argmax(scores))]
    elif cls is None:
        cls = clf.labels_of(clf.decision_function([text]))[0]
    k = _output_of(clf, cls)
    sign = -1.0 if clf.n_outputs() == 1 and str(cls) == clf.classes_[0] else 1.0
    C, const = contributions(clf)
    hasher = clf.hasher_
    words, chars = hasher.keys(text)
    seed2 = (hasher.seed + 1) & 0xFFFFFFFF
    keyed = [(w, "word", bucket_of(w, hasher.n_bits, hasher.seed)) for w in words] + \
            [(c, "char", bucket_of(c, hasher.n_bits, seed2)) for c in chars]
    row = C[k]
    if clf.unit_rows():
        row = _unit_row(clf, k, [b for _, _, b in keyed])
    first: dict[int, str] = {}
    rows = []
    for key, kind, b in keyed:
        col = int(clf.column_of_[b]) if clf.column_of_ is not None else b
        if col < 0:
            rows.append(dict(ngram=key, kind=kind, bucket=b, contribution=0.0,
                             note="not in the model"))
        elif b in first:
            note = "repeat" if first[b] == key else f"shares its bucket with {first[b]!r}"
            rows.append(dict(ngram=key, kind=kind, bucket=b, contribution=0.0, note=note))
        else:
            first[b] = key
            rows.append(dict(ngram=key, kind=kind, bucket=b,
                             contribution=float(sign * row[col]), note=""))
    return {"class": str(cls), "score": float(sign * scores[k]),
            "constant": float(sign * const[k]), "ngrams": rows}


def to_html(explanation: dict) -> str:
    """The unigrams of an explanation as HTML, each word shaded by its contribution (green
    raises the score, red lowers it), with a table of the strongest n-grams below."""
    import html

    rows = explanation["ngrams"]
    words = [r for r in rows if r["kind"] == "word" and " " not in r["ngram"]]
    scale = max([abs(r["contribution"]) for r in rows] + [1e-12])

    def shade(v):
        a = min(1.0, abs(v) / scale)
        color = (0, 160, 0) if v > 0 else (200, 0, 0)
        return f"rgba({color[0]},{color[1]},{color[2]},{a:.2f})"

    spans = " ".join(f'<span title="{r["contribution"]:+.4f}" style="background:'
                     f'{shade(r["contribution"])}">{html.escape(r["ngram"])}</span>'
                     for r in words)
    strongest = sorted((r for r in rows if r["contribution"]), key=lambda r: -abs(r["contribution"]))
    table = "".join(f"<tr><td>{html.escape(r['ngram'])}</td><td>{r['contribution']:+.4f}</td></tr>"
                    for r in strongest[:30])
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>nbsvm explain</title>"
            f"</head><body><p>class <b>{html.escape(explanation['class'])}</b>: score "
            f"{explanation['score']:+.4f} = {explanation['constant']:+.4f} (constant) + "
            f"the n-grams' contributions</p><p style='line-height:1.8'>{spans}</p>"
            f"<table><tr><th>n-gram</th><th>contribution</th></tr>{table}</table>"
            f"</body></html>")
