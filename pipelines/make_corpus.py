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

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _harness import positive, script_parser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "pipelines"))
from corpus_generator import Generator, MixedGenerator  # noqa: E402
from corpus_model import (  # noqa: E402
    BACKOFF,
    LABEL_STRENGTHS,
    blitzer_train,
    fit,
    imdb_train,
)
from corpus_stats import corpus_stats, read_lines, write  # noqa: E402

from nbsvm.text.tokenize import tokenize  # noqa: E402

# ---- statistics ---------------------------------------------------------------------------


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--docs", type=positive, default=1_000_000, help="training documents")
    ap.add_argument("--test-docs", type=positive, default=25_000)
    ap.add_argument("--out", default=str(ROOT / "results" / "tmp" / "scale"))
    ap.add_argument("--gzip", action="store_true", help="write train.txt.gz, test.txt.gz")
    ap.add_argument(
        "--label-strength",
        type=float,
        default=None,
        help="share of words drawn from their class's model, the others from "
        "both classes' (default per source, 0.4 IMDB, 0.55 Blitzer: a plain "
        "NB baseline near the real corpus's)",
    )
    ap.add_argument(
        "--source",
        choices=("imdb", "blitzer"),
        default="imdb",
        help="fit on IMDB train, or on Blitzer et al.'s four domains (the "
        "multi-domain variant: each document from one domain's models)",
    )
    ap.add_argument(
        "--labels",
        choices=MixedGenerator.LABELS,
        default="sentiment",
        help="the multi-domain variant's labels",
    )
    ap.add_argument(
        "--stats",
        type=int,
        default=0,
        metavar="N",
        help="measure the statistics on the first N training documents (and "
        "on IMDB's 25k), the test ones for the NB baseline",
    )
    args = ap.parse_args(argv)
    if args.docs < 1 or args.test_docs < 0:
        ap.error("--docs must be >= 1 and --test-docs >= 0")
    if args.label_strength is None:
        args.label_strength = LABEL_STRENGTHS[args.source]
    if not 0 <= args.label_strength <= 1:
        ap.error("--label-strength must be in [0, 1]")
    return args


def fit_models(args, root: Path):
    """The documents the models are fitted on, the fitted models (by source or domain) and
    their generator; prints what was fitted."""
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
        print(
            f"{name}: {model.n_common:,} "
            f"words seen twice or more, {len(model.words) - model.n_common:,} once, "
            f"{len(model.next_ids):,} bigrams; Heaps V(n) = {model.heaps_k:.2f} "
            f"n^{model.heaps_beta:.4f}",
            flush=True,
        )
    return docs, models, gen


def generate(args, gen, models: dict, out: Path) -> dict:
    """Write the training and test files; their statistics against the fitted curves."""
    ext = ".txt.gz" if args.gzip else ".txt"
    t1 = time.perf_counter()
    write(gen, args.docs, out / f"train{ext}", args.gzip)
    parts = gen.generators if args.source == "blitzer" else [gen]
    train_tokens = [g.tokens for g in parts]
    train_words = [g.distinct_words for g in parts]
    write(gen, args.test_docs, out / f"test{ext}", args.gzip)
    seconds = time.perf_counter() - t1
    curve = [round(m.heaps_k * n**m.heaps_beta) for m, n in zip(models.values(), train_tokens)]
    stats = {
        "source": args.source,
        "labels": args.labels if args.source == "blitzer" else "sentiment",
        "seed": args.seed,
        "label_strength": args.label_strength,
        "train_docs": args.docs,
        "test_docs": args.test_docs,
        "train_tokens": sum(train_tokens),
        "generate_seconds": round(seconds, 1),
        "train_bytes": (out / f"train{ext}").stat().st_size,
    }
    if args.source == "imdb":
        stats.update(
            train_distinct_words=train_words[0],
            heaps_k=models["imdb"].heaps_k,
            heaps_beta=models["imdb"].heaps_beta,
            heaps_curve_at_train_tokens=curve[0],
        )
    else:  # each domain's vocabulary against its own curve
        stats["domains"] = {
            d: {
                "train_tokens": n,
                "train_distinct_words": v,
                "heaps_k": m.heaps_k,
                "heaps_beta": m.heaps_beta,
                "heaps_curve_at_train_tokens": c,
            }
            for (d, m), n, v, c in zip(models.items(), train_tokens, train_words, curve)
        }
    for name, n, v, c in zip(models, train_tokens, train_words, curve):
        print(
            f"generated {args.docs:,} + {args.test_docs:,} documents in {seconds:.1f} s; "
            f"{name}: {n:,} training tokens, {v:,} distinct words (the fitted curve: "
            f"{c:,})",
            flush=True,
        )
    return stats


def compare(args, docs, out: Path, root: Path, stats: dict) -> None:
    """Statistics of the first ``--stats`` generated training documents beside the real
    corpus's (into ``stats``)."""
    ext = ".txt.gz" if args.gzip else ".txt"
    test = list(read_lines(out / f"test{ext}"))
    gen_stats = corpus_stats(list(read_lines(out / f"train{ext}", args.stats)), test)
    if args.source == "imdb":
        from wang_manning import imdb

        (_, _), (te_texts, te_labels) = imdb(root)
        real_train = docs[: args.stats]
        real_test = [(tokenize(t), y) for t, y in zip(te_texts, te_labels)]
    else:  # Blitzer has no test split: seeded halves of its 8,000 reviews
        order = np.random.default_rng(args.seed).permutation(len(docs))
        half = len(docs) // 2
        real_train = [docs[i] for i in order[:half]][: args.stats]
        real_test = [docs[i] for i in order[half:]]
    real_stats = corpus_stats(real_train, real_test)
    stats["generated"], stats[args.source] = gen_stats, real_stats
    for name, s in (("generated", gen_stats), (args.source, real_stats)):
        print(f"{name:9s} " + ", ".join(f"{k} {v}" for k, v in s.items()), flush=True)


def main(argv=None):
    from _report import shared_datasets, start

    args = parse_args(argv)
    root = shared_datasets()
    start(
        "make_corpus",
        {**vars(args), "backoff": BACKOFF, "data": root},
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    docs, models, gen = fit_models(args, root)
    stats = generate(args, gen, models, out)
    if args.stats:
        compare(args, docs, out, root, stats)
    tmp = out / "stats.json.part"
    tmp.write_text(json.dumps(stats, indent=2))
    os.replace(tmp, out / "stats.json")


if __name__ == "__main__":
    main()
