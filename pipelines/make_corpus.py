#!/usr/bin/env python
"""Make a scale corpus: novel labelled reviews, as many as asked, seeded.

No corpus of millions of labelled reviews can be downloaded on these machines, so this
one is generated from what IMDB's 25,000 training reviews teach:

- **Words in order.** Bigram language models fitted on the tokens of nbsvm's tokenizer:
  one per class and one of both classes pooled. Each word comes from its document's class
  model with probability ``--label-strength`` (0.4), otherwise from the pooled one.
  - Most words of a real review say nothing of its label. At 0.4, a binarized naive-Bayes
    baseline scores 87.9% on 25,000 generated reviews, against 86.5% on IMDB's. At 1.0 it
    scores 99.9%.
  - A word follows the previous one by the bigram counts. With probability ``BACKOFF`` it
    comes from the unigram counts instead, so n-grams never seen in IMDB appear, as they do
    in new text.
- **Document lengths** are drawn from the real ones.
- **A vocabulary that keeps growing** (Heaps' law, ``V(n) = K n**beta``, fitted on IMDB in
  a seeded document order). Words seen once in IMDB are one token slot of the model (``RARE``).
  When the model emits it, the generator takes a word never used before while the corpus has
  fewer distinct words than the fitted curve allows at this many tokens. Otherwise it takes a
  rare word already used, earlier ones more often (names and numbers come back). The new words
  are IMDB's singletons first, then pronounceable made-up words. So distinct n-grams, hash
  collisions and cache sizes grow with the corpus as they would with real text.
- **Labels** are pos or neg with probability one half each.

**The multi-domain variant** (``--source blitzer``) is fitted on Blitzer et al.'s four
Amazon domains (books, dvd, electronics, kitchen; 2,000 labelled reviews each): one set of
models, lengths and Heaps curve per domain, each document from a domain drawn uniformly
(:class:`MixedGenerator`). Its labels are the sentiment, the domain (``--labels domain``:
a four-class corpus) or both (``domain-sentiment``: eight classes). On 4,000 documents
(``--source blitzer --docs 8000 --test-docs 4000 --stats 4000``) it has 155 tokens per
document (median 103) and 31,848 distinct words, against Blitzer's 161 (107) and 33,502,
and a plain NB baseline scores 87.8% against 85.4% on seeded halves of the real reviews.

Output is ``label<TAB>text`` lines (``train.txt``, ``test.txt``; ``--gzip`` for ``.gz``),
and ``stats.json`` beside them. The test documents are the ones generated after the training
ones. ``--stats`` also measures tokens per document, distinct words and hashed word n-grams,
the label balance and a plain naive-Bayes baseline, beside the same figures on IMDB.

    python pipelines/make_corpus.py --docs 1000000 --test-docs 25000 --out results/tmp/scale
    python pipelines/make_corpus.py --source blitzer --labels domain --docs 1000000 --out DIR
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "pipelines"))
from nbsvm.text.tokenize import tokenize  # noqa: E402

BACKOFF = 0.05              # a word drawn from the unigram counts instead of the bigram's
LABEL_STRENGTH = 0.4        # a word drawn from its class's model, else from both classes'
# per source: each puts a plain NB baseline on 4,000-25,000 generated reviews within about
# 2 points above the real corpus's (IMDB 87.9 vs 86.5; Blitzer 87.8 vs 85.4, seeded halves)
LABEL_STRENGTHS = {"imdb": LABEL_STRENGTH, "blitzer": 0.55}
CHUNK_BYTES = 64 << 20      # output buffer of one kernel call
CLASSES = ("neg", "pos")
MIX_GROUP = 4096            # documents of the multi-domain variant shuffled together
SYLLABLES = [c + v for c in "bdfgklmnprstvzch" for v in "aeio"]   # 64: made-up words


@dataclass
class CorpusModel:
    """What the generator learned from the real corpus (see the module docstring)."""
    words: list               # common words (seen twice or more), then singletons
    n_common: int             # model ids: 0..n_common-1 words, n_common RARE, n_common+1 start
    row_ptr: np.ndarray       # bigrams, rows class * (n_common + 2) + previous id; class 2:
                              # both classes pooled
    next_ids: np.ndarray
    next_cum: np.ndarray      # cumulative counts within each row
    uni_cum: np.ndarray       # (3, n_common + 1) cumulative unigram counts per class, pooled
    lengths: np.ndarray       # tokens of each real document
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
    use = pts[pts[:, 0] >= min(10_000, pts[-1, 0] / 10)]     # the early points bend
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
    keys.append(np.concatenate(keys) % (n_rows * n_rows) + 2 * n_rows * n_rows)   # pooled
    keys = np.concatenate(keys)
    pairs, cnt = np.unique(keys, return_counts=True)          # sorted by row, then next id
    rows, next_ids = pairs // n_rows, pairs % n_rows
    row_ptr = np.zeros(3 * n_rows + 1, dtype=np.int64)
    np.add.at(row_ptr, rows + 1, 1)
    row_ptr = np.cumsum(row_ptr)
    cum = np.cumsum(cnt)
    base = np.repeat(np.concatenate([[0], cum])[row_ptr[:-1]], np.diff(row_ptr))
    next_cum = cum - base                                   # restart at each row
    uni = np.zeros((3, n_common + 1), dtype=np.int64)
    np.add.at(uni, (rows // n_rows, next_ids), cnt)         # every token is some row's next
    k, beta, _ = heaps_fit(docs, seed)
    return CorpusModel(words=common + singles, n_common=n_common, row_ptr=row_ptr,
                       next_ids=next_ids.astype(np.int32), next_cum=next_cum,
                       uni_cum=np.cumsum(uni, axis=1),
                       lengths=np.array([len(t) for t, _ in docs], dtype=np.int64),
                       heaps_k=k, heaps_beta=beta)


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
    k = word - n_known + 64                 # two syllables or more
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
def _generate(seed, n_docs, buf, row_ptr, next_ids, next_cum, uni_cum, lengths, blob,
              offsets, n_common, n_known, syllables, heaps_k, heaps_beta, backoff, strength,
              seen, state):
    """Write up to ``n_docs`` documents as ``label<TAB>text`` lines into ``buf``, stopping
    before one could overflow it; return (documents, bytes). ``state`` (tokens so far,
    distinct words so far, new words used) and ``seen`` carry over between calls."""
    np.random.seed(seed)
    n_rows = n_common + 2
    rare, start = n_common, n_common + 1
    longest = 0
    for i in range(lengths.shape[0]):
        longest = max(longest, lengths[i])
    room = longest * 26 + 8                 # a made-up word is at most 24 bytes
    pos, d = 0, 0
    while d < n_docs and pos + room < buf.shape[0]:
        c = 1 if np.random.random() < 0.5 else 0
        buf[pos] = 112 if c else 110        # "pos" / "neg"
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
        self.state = np.zeros(3, dtype=np.int64)    # tokens, distinct words, new words used
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
            seed = int(self.seeds.spawn(1)[0].generate_state(1)[0] % (2 ** 31))
            d, nbytes = _generate(seed, left, self.buf, m.row_ptr,
                                  m.next_ids, m.next_cum, m.uni_cum, m.lengths, self.blob,
                                  self.offsets, m.n_common, len(m.words), self.syllables,
                                  m.heaps_k, m.heaps_beta, BACKOFF, self.strength, self.seen,
                                  self.state)
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

    def __init__(self, models: dict, seed: int = 0, strength: float = LABEL_STRENGTH,
                 labels: str = "sentiment"):
        if labels not in self.LABELS:
            raise ValueError(f"labels must be one of {', '.join(self.LABELS)}, got {labels!r}")
        seeds = np.random.SeedSequence(seed).spawn(len(models) + 1)
        self.domains = sorted(models)
        self.generators = [Generator(models[d], int(seeds[i].generate_state(1)[0] % 2**31),
                                     strength) for i, d in enumerate(self.domains)]
        self.rng = np.random.default_rng(seeds[-1])
        self.labels = labels

    @property
    def tokens(self) -> int:
        return sum(g.tokens for g in self.generators)

    def distinct_words_by_domain(self) -> dict:
        return {d: g.distinct_words for d, g in zip(self.domains, self.generators)}

    def _relabel(self, domain: str, line: bytes) -> bytes:
        sentiment, _, text = line.partition(b"\t")
        label = {"sentiment": sentiment, "domain": domain.encode(),
                 "domain-sentiment": domain.encode() + b"_" + sentiment}[self.labels]
        return label + b"\t" + text + b"\n"

    def chunks(self, n_docs: int):
        left = n_docs
        share = np.full(len(self.domains), 1 / len(self.domains))
        while left:
            n = min(left, MIX_GROUP)
            lines = []
            for domain, gen, k in zip(self.domains, self.generators,
                                      self.rng.multinomial(n, share)):
                if k:
                    text = b"".join(gen.chunks(int(k)))
                    lines += [self._relabel(domain, x) for x in text.split(b"\n")[:-1]]
            left -= n
            yield b"".join(lines[i] for i in self.rng.permutation(len(lines)))


def blitzer_train(root: Path) -> dict:
    """``{domain: [(tokens, label)]}`` of Blitzer et al.'s labelled reviews (title and body
    of ``sorted_data_acl``; pos / neg), from the shared tarball."""
    from nbsvm.io import read_reviews, review_members
    by_domain: dict = {}
    archive = root / "blitzer_mds" / "sorted_data_acl_labeled.tar.gz"
    for name, fh in review_members(archive):
        domain = name.split("/")[-2].split("_")[0]          # kitchen_&_housewares: kitchen
        for doc in read_reviews(fh):
            by_domain.setdefault(domain, []).append(
                (tokenize(doc.text), "pos" if doc.label == "positive" else "neg"))
    return dict(sorted(by_domain.items()))


def write(gen: Generator, n_docs: int, path: Path, compress: bool) -> None:
    """``n_docs`` documents to ``path``, written to a temporary name and renamed."""
    tmp = path.with_name(path.name + ".part")
    with (gzip.open(tmp, "wb", compresslevel=1) if compress else open(tmp, "wb")) as f:
        for piece in gen.chunks(n_docs):
            f.write(piece)
    os.replace(tmp, path)


# ---- statistics ---------------------------------------------------------------------------

def read_lines(path: Path, limit: int | None = None):
    """(tokens, label) of the first ``limit`` lines of a ``label<TAB>text`` file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                break
            label, _, text = line.rstrip("\n").partition("\t")
            yield text.split(" "), label


def corpus_stats(train, test, n_bits: int = 24) -> dict:
    """Tokens per document, distinct words, distinct hashed word n-grams (orders 1-3, at
    ``2**n_bits``, as nbsvm's default hasher makes them), the label balance and a binarized
    multinomial naive-Bayes baseline (unigrams and bigrams, Wang & Manning's MNB) trained on
    ``train``, scored on ``test`` (lists of ``(tokens, label)``). Labels ending in ``pos`` /
    ``neg`` (``books_pos``) count as that sentiment; others (domains) get no baseline."""
    from nbsvm.data.batches import hash_batch
    from nbsvm.io.document import Document
    from nbsvm.lexicon.nblexicon import nb_ratios
    from nbsvm.text.hashing import Hasher

    def sentiment(label):
        tail = label.rsplit("_", 1)[-1]
        return tail if tail in CLASSES else None

    train = [(t, sentiment(y)) for t, y in train]
    test = [(t, sentiment(y)) for t, y in test]
    lengths = np.array([len(t) for t, _ in train])
    words = set()
    for t, _ in train:
        words.update(t)
    tri = Hasher(ngrams=3, n_bits=n_bits)
    bi = Hasher(ngrams=2, n_bits=22)
    binary = all(y is not None for _, y in train + test)
    buckets = np.zeros(2 ** n_bits, dtype=bool)
    df = np.zeros((2, 2 ** 22), dtype=np.int32)
    for at in range(0, len(train), 4096):
        part = [Document(y, " ".join(t), "<gen>", at + i) for i, (t, y) in
                enumerate(train[at:at + 4096])]
        buckets[hash_batch(part, tri).ids] = True
        if not binary:
            continue
        b = hash_batch(part, bi)
        for j, doc in enumerate(part):
            df[CLASSES.index(doc.label), b.ids[b.offsets[j]:b.offsets[j + 1]]] += 1
    n_pos = sum(y == "pos" for _, y in train)
    common = {"documents": len(train), "tokens_per_doc_mean": round(float(lengths.mean()), 1),
              "tokens_per_doc_median": float(np.median(lengths)),
              "distinct_words": len(words),
              f"distinct_word_ngram_buckets_2^{n_bits}": int(buckets.sum())}
    if not binary:
        return common
    r = nb_ratios(df[1], df[0], alpha=1.0)
    bias = math.log(n_pos / max(len(train) - n_pos, 1))
    right = 0
    for at in range(0, len(test), 4096):
        part = [Document(y, " ".join(t), "<gen>", at + i) for i, (t, y) in
                enumerate(test[at:at + 4096])]
        b = hash_batch(part, bi)
        for j, doc in enumerate(part):
            score = r[b.ids[b.offsets[j]:b.offsets[j + 1]]].sum() + bias
            right += (score > 0) == (doc.label == "pos")
    return {**common, "share_pos": round(n_pos / len(train), 4),
            "mnb_bi_accuracy": round(100.0 * float(right) / len(test), 2)}


def main(argv=None):
    from _report import shared_datasets, start
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=1_000_000, help="training documents")
    ap.add_argument("--test-docs", type=int, default=25_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "results" / "tmp" / "scale"))
    ap.add_argument("--gzip", action="store_true", help="write train.txt.gz, test.txt.gz")
    ap.add_argument("--label-strength", type=float, default=None,
                    help="share of words drawn from their class's model, the others from "
                         "both classes' (default per source, 0.4 IMDB, 0.55 Blitzer: a plain "
                         "NB baseline near the real corpus's)")
    ap.add_argument("--source", choices=("imdb", "blitzer"), default="imdb",
                    help="fit on IMDB train, or on Blitzer et al.'s four domains (the "
                         "multi-domain variant: each document from one domain's models)")
    ap.add_argument("--labels", choices=MixedGenerator.LABELS, default="sentiment",
                    help="the multi-domain variant's labels")
    ap.add_argument("--stats", type=int, default=0, metavar="N",
                    help="measure the statistics on the first N training documents (and "
                         "on IMDB's 25k), the test ones for the NB baseline")
    args = ap.parse_args(argv)
    if args.docs < 1 or args.test_docs < 0:
        ap.error("--docs must be >= 1 and --test-docs >= 0")
    if args.label_strength is None:
        args.label_strength = LABEL_STRENGTHS[args.source]
    if not 0 <= args.label_strength <= 1:
        ap.error("--label-strength must be in [0, 1]")
    root = shared_datasets()
    start("make_corpus", {**vars(args), "backoff": BACKOFF, "data": root},
          [__file__, *(argv if argv is not None else sys.argv[1:])])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if args.source == "imdb":
        docs = imdb_train(root)
        models = {"imdb": fit(docs, args.seed)}
        gen = Generator(models["imdb"], args.seed, args.label_strength)
    else:
        by_domain = blitzer_train(root)
        docs = [d for domain in by_domain.values() for d in domain]
        models = {d: fit(x, args.seed) for d, x in by_domain.items()}
        gen = MixedGenerator(models, args.seed, args.label_strength, args.labels)
    print(f"fitted in {time.perf_counter() - t0:.1f} s", flush=True)
    for name, model in models.items():
        print(f"{name}: {model.n_common:,} "
              f"words seen twice or more, {len(model.words) - model.n_common:,} once, "
              f"{len(model.next_ids):,} bigrams; Heaps V(n) = {model.heaps_k:.2f} "
              f"n^{model.heaps_beta:.4f}", flush=True)
    ext = ".txt.gz" if args.gzip else ".txt"
    t1 = time.perf_counter()
    write(gen, args.docs, out / f"train{ext}", args.gzip)
    parts = gen.generators if args.source == "blitzer" else [gen]
    train_tokens = [g.tokens for g in parts]
    train_words = [g.distinct_words for g in parts]
    write(gen, args.test_docs, out / f"test{ext}", args.gzip)
    seconds = time.perf_counter() - t1
    curve = [round(m.heaps_k * n ** m.heaps_beta) for m, n in zip(models.values(), train_tokens)]
    stats = {"source": args.source, "labels": args.labels if args.source == "blitzer" else
             "sentiment", "seed": args.seed, "label_strength": args.label_strength,
             "train_docs": args.docs, "test_docs": args.test_docs,
             "train_tokens": sum(train_tokens), "generate_seconds": round(seconds, 1),
             "train_bytes": (out / f"train{ext}").stat().st_size}
    if args.source == "imdb":
        stats.update(train_distinct_words=train_words[0], heaps_k=models["imdb"].heaps_k,
                     heaps_beta=models["imdb"].heaps_beta,
                     heaps_curve_at_train_tokens=curve[0])
    else:           # each domain's vocabulary against its own curve
        stats["domains"] = {d: {"train_tokens": n, "train_distinct_words": v,
                                "heaps_k": m.heaps_k, "heaps_beta": m.heaps_beta,
                                "heaps_curve_at_train_tokens": c}
                            for (d, m), n, v, c in zip(models.items(), train_tokens,
                                                       train_words, curve)}
    for name, n, v, c in zip(models, train_tokens, train_words, curve):
        print(f"generated {args.docs:,} + {args.test_docs:,} documents in {seconds:.1f} s; "
              f"{name}: {n:,} training tokens, {v:,} distinct words (the fitted curve: "
              f"{c:,})", flush=True)
    if args.stats:
        test = list(read_lines(out / f"test{ext}"))
        gen_stats = corpus_stats(list(read_lines(out / f"train{ext}", args.stats)), test)
        if args.source == "imdb":
            from wang_manning import imdb
            (_, _), (te_texts, te_labels) = imdb(root)
            real_train = docs[:args.stats]
            real_test = [(tokenize(t), y) for t, y in zip(te_texts, te_labels)]
        else:               # Blitzer has no test split: seeded halves of its 8,000 reviews
            order = np.random.default_rng(args.seed).permutation(len(docs))
            half = len(docs) // 2
            real_train = [docs[i] for i in order[:half]][:args.stats]
            real_test = [docs[i] for i in order[half:]]
        real_stats = corpus_stats(real_train, real_test)
        stats["generated"], stats[args.source] = gen_stats, real_stats
        for name, s in (("generated", gen_stats), (args.source, real_stats)):
            print(f"{name:9s} " + ", ".join(f"{k} {v}" for k, v in s.items()), flush=True)
    tmp = out / "stats.json.part"
    tmp.write_text(json.dumps(stats, indent=2))
    os.replace(tmp, out / "stats.json")


if __name__ == "__main__":
    main()
