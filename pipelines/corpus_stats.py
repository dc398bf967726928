"""Reading the scale corpus back and the statistics that compare it with the real one."""

from __future__ import annotations

import gzip
import math
import os
from pathlib import Path

import numpy as np
from corpus_generator import Generator
from corpus_model import (
    CLASSES,
)


def write(gen: Generator, n_docs: int, path: Path, compress: bool) -> None:
    """``n_docs`` documents to ``path``, written to a temporary name and renamed."""
    tmp = path.with_name(path.name + ".part")
    with gzip.open(tmp, "wb", compresslevel=1) if compress else open(tmp, "wb") as f:
        for piece in gen.chunks(n_docs):
            f.write(piece)
    os.replace(tmp, path)


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
    buckets = np.zeros(2**n_bits, dtype=bool)
    df = np.zeros((2, 2**22), dtype=np.int32)
    for at in range(0, len(train), 4096):
        part = [
            Document(y, " ".join(t), "<gen>", at + i)
            for i, (t, y) in enumerate(train[at : at + 4096])
        ]
        buckets[hash_batch(part, tri).ids] = True
        if not binary:
            continue
        b = hash_batch(part, bi)
        for j, doc in enumerate(part):
            df[CLASSES.index(doc.label), b.ids[b.offsets[j] : b.offsets[j + 1]]] += 1
    n_pos = sum(y == "pos" for _, y in train)
    common = {
        "documents": len(train),
        "tokens_per_doc_mean": round(float(lengths.mean()), 1),
        "tokens_per_doc_median": float(np.median(lengths)),
        "distinct_words": len(words),
        f"distinct_word_ngram_buckets_2^{n_bits}": int(buckets.sum()),
    }
    if not binary:
        return common
    r = nb_ratios(df[1], df[0], alpha=1.0)
    bias = math.log(n_pos / max(len(train) - n_pos, 1))
    right = 0
    for at in range(0, len(test), 4096):
        part = [
            Document(y, " ".join(t), "<gen>", at + i)
            for i, (t, y) in enumerate(test[at : at + 4096])
        ]
        b = hash_batch(part, bi)
        for j, doc in enumerate(part):
            score = r[b.ids[b.offsets[j] : b.offsets[j + 1]]].sum() + bias
            right += (score > 0) == (doc.label == "pos")
    return {
        **common,
        "share_pos": round(n_pos / len(train), 4),
        "mnb_bi_accuracy": round(100.0 * float(right) / len(test), 2),
    }
