"""The scale corpus's language model: unigram and bigram counts per class fitted on a real
corpus (IMDB or Blitzer), and Heaps' law for its vocabulary growth."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nbsvm.text.tokenize import tokenize

BACKOFF = 0.05  # a word drawn from the unigram counts instead of the bigram's
LABEL_STRENGTH = 0.4  # a word drawn from its class's model, else from both classes'
# per source: each puts a plain NB baseline on 4,000-25,000 generated reviews within about
# 2 points above the real corpus's (IMDB 87.9 vs 86.5; Blitzer 87.8 vs 85.4, seeded halves)
LABEL_STRENGTHS = {"imdb": LABEL_STRENGTH, "blitzer": 0.55}
CHUNK_BYTES = 64 << 20  # output buffer of one kernel call
CLASSES = ("neg", "pos")
MIX_GROUP = 4096  # documents of the multi-domain variant shuffled together
SYLLABLES = [c + v for c in "bdfgklmnprstvzch" for v in "aeio"]  # 64: made-up words


@dataclass
class CorpusModel:
    """What the generator learned from the real corpus (see the module docstring)."""

    words: list  # common words (seen twice or more), then singletons
    n_common: int  # model ids: 0..n_common-1 words, n_common RARE, n_common+1 start
    row_ptr: np.ndarray  # bigrams, rows class * (n_common + 2) + previous id; class 2:
    # both classes pooled
    next_ids: np.ndarray
    next_cum: np.ndarray  # cumulative counts within each row
    uni_cum: np.ndarray  # (3, n_common + 1) cumulative unigram counts per class, pooled
    lengths: np.ndarray  # tokens of each real document
    heaps_k: float
    heaps_beta: float

    @property
    def n_rows(self) -> int:
        return self.n_common + 2


def imdb_train(root: Path):
    """(tokens, label) of IMDB's training reviews, from the shared tarball."""
    from wang_manning import imdb

    (texts, labels), _ = imdb(root)
    return [(tokenize(t), y) for t, y in zip(texts, labels)]


def heaps_fit(docs, seed: int) -> tuple[float, float, np.ndarray]:
    """``K, beta`` of ``V(n) = K n**beta`` by least squares in log-log, from the distinct
    words after each document in a seeded order (points from 10,000 tokens on, or the last
    nine tenths of a smaller corpus), and those
    points ``(n, V)``."""
    seen, n, points = set(), 0, []
    for i in np.random.default_rng(seed).permutation(len(docs)):
        tokens = docs[i][0]
        seen.update(tokens)
        n += len(tokens)
        points.append((n, len(seen)))
    pts = np.array(points, dtype=float)
    use = pts[pts[:, 0] >= min(10_000, pts[-1, 0] / 10)]  # the early points bend
    beta, log_k = np.polyfit(np.log(use[:, 0]), np.log(use[:, 1]), 1)
    return float(np.exp(log_k)), float(beta), pts


def fit(docs, seed: int = 0) -> CorpusModel:
    """The class-conditional bigram models, lengths and Heaps curve of ``docs``
    (``[(tokens, label)]``, labels pos/neg)."""
    counts: dict = {}
    for tokens, _ in docs:
        for t in tokens:
            counts[t] = counts.get(t, 0) + 1
    common = sorted((w for w, c in counts.items() if c >= 2), key=lambda w: (-counts[w], w))
    singles = sorted(w for w, c in counts.items() if c == 1)
    singles = [singles[i] for i in np.random.default_rng(seed).permutation(len(singles))]
    ids = {w: i for i, w in enumerate(common)}
    n_common = len(common)
    rare, start, n_rows = n_common, n_common + 1, n_common + 2
    keys = [[], []]
    for tokens, label in docs:
        c = CLASSES.index(label)
        seq = np.fromiter((ids.get(t, rare) for t in tokens), dtype=np.int64, count=len(tokens))
        prev = np.concatenate([[start], seq[:-1]])
        keys[c].append((c * n_rows + prev) * n_rows + seq)
    keys = [np.concatenate(k) for k in keys]
    keys.append(np.concatenate(keys) % (n_rows * n_rows) + 2 * n_rows * n_rows)  # pooled
    keys = np.concatenate(keys)
    pairs, cnt = np.unique(keys, return_counts=True)  # sorted by row, then next id
    rows, next_ids = pairs // n_rows, pairs % n_rows
    row_ptr = np.zeros(3 * n_rows + 1, dtype=np.int64)
    np.add.at(row_ptr, rows + 1, 1)
    row_ptr = np.cumsum(row_ptr)
    cum = np.cumsum(cnt)
    base = np.repeat(np.concatenate([[0], cum])[row_ptr[:-1]], np.diff(row_ptr))
    next_cum = cum - base  # restart at each row
    uni = np.zeros((3, n_common + 1), dtype=np.int64)
    np.add.at(uni, (rows // n_rows, next_ids), cnt)  # every token is some row's next
    k, beta, _ = heaps_fit(docs, seed)
    return CorpusModel(
        words=common + singles,
        n_common=n_common,
        row_ptr=row_ptr,
        next_ids=next_ids.astype(np.int32),
        next_cum=next_cum,
        uni_cum=np.cumsum(uni, axis=1),
        lengths=np.array([len(t) for t, _ in docs], dtype=np.int64),
        heaps_k=k,
        heaps_beta=beta,
    )


def blitzer_train(root: Path) -> dict:
    """``{domain: [(tokens, label)]}`` of Blitzer et al.'s labelled reviews (title and body
    of ``sorted_data_acl``; pos / neg), from the shared tarball."""
    from nbsvm.io import read_reviews, review_members

    by_domain: dict = {}
    archive = root / "blitzer_mds" / "sorted_data_acl_labeled.tar.gz"
    for name, fh in review_members(archive):
        domain = name.split("/")[-2].split("_")[0]  # kitchen_&_housewares: kitchen
        for doc in read_reviews(fh):
            by_domain.setdefault(domain, []).append(
                (tokenize(doc.text), "pos" if doc.label == "positive" else "neg")
            )
    return dict(sorted(by_domain.items()))
