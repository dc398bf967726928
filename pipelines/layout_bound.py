"""What a column layout would give the epochs where every bucket is its own column (a
million reviews keep 99% of 2**24 buckets): nbsvm's AdaGrad epoch kernel over the first
documents of a corpus, hashed as ``nbsvm train`` hashes them, with the columns in bucket
order (today's dense model), the hot ones first (IMDB's layout), in tiers, and sorted by
their documents. Each layout is timed ``--runs`` times, the layouts alternating, so that
the machine's hour weighs on all of them alike; the ratios are against bucket order.

    python pipelines/layout_bound.py --corpus results/tmp/scale/gen_1M_seed0/train.txt
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import start, write_results  # noqa: E402
from bench_kernels import time_epochs  # noqa: E402

#: The shares of the most seen buckets that end each tier (the last tier: the rest).
TIERS = {
    "hot first (2^16)": [1 << 16],
    "3 tiers (2^14, 2^19)": [1 << 14, 1 << 19],
    "4 tiers (2^13, 2^17, 2^21)": [1 << 13, 1 << 17, 1 << 21],
}


def hashed(corpus: Path, n_docs: int, n_bits: int) -> tuple[np.ndarray, np.ndarray, list]:
    """The first ``n_docs`` label<TAB>text lines of ``corpus`` as train hashes them: each
    document's distinct buckets (CSR) and its label."""
    from nbsvm.text.hashing import Hasher

    hasher = Hasher(n_bits=n_bits, ngrams=3)
    texts, labels = [], []
    with open(corpus, encoding="utf-8") as fh:
        for line in itertools.islice(fh, n_docs):
            label, _, text = line.rstrip("\n").partition("\t")
            texts.append(text)
            labels.append(label)
    parts, offsets = [], [np.zeros(1, dtype=np.int64)]
    for i in range(0, len(texts), 2000):
        ids, off = hasher.batch(texts[i : i + 2000])
        parts.append(ids)
        offsets.append(off[1:] + offsets[-1][-1])
    return np.concatenate(parts).astype(np.int32), np.concatenate(offsets), labels


def layouts(df: np.ndarray) -> dict[str, np.ndarray]:
    """Each layout's bucket -> column map: bucket order, the tiers of :data:`TIERS` (by
    the buckets' documents, bucket order within a tier) and every bucket sorted."""
    n = df.size
    by_rank = np.argsort(-df, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[by_rank] = np.arange(n)
    out = {"bucket order": np.arange(n, dtype=np.int32)}
    for name, cuts in TIERS.items():
        order = np.argsort(np.searchsorted(np.array(cuts), rank, side="right"), kind="stable")
        out[name] = _column_of(order)
    out["sorted by documents"] = _column_of(by_rank)
    return out


def _column_of(order: np.ndarray) -> np.ndarray:
    """The map of a layout that puts bucket ``order[c]`` in column ``c``."""
    column_of = np.empty(order.size, dtype=np.int32)
    column_of[order] = np.arange(order.size, dtype=np.int32)
    return column_of


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True, help="label<TAB>text lines")
    ap.add_argument("--docs", type=int, default=60_000)
    ap.add_argument("--n-bits", type=int, default=24)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="results folder (default: results/)")
    args = ap.parse_args(argv)
    config = start("layout_bound", vars(args), [__file__, *(argv or sys.argv[1:])])
    import pandas as pd

    from nbsvm.learners.kernels.table import _adagrad_epoch

    t0 = time.perf_counter()
    ids, offsets, labels = hashed(args.corpus, args.docs, args.n_bits)
    df = np.bincount(ids, minlength=1 << args.n_bits)
    top = df[np.argsort(-df)[: 1 << 16]].sum() / df.sum()
    print(
        f"hashed {len(labels):,} documents, {ids.size:,} n-grams in {time.perf_counter() - t0:.1f} s"
    )
    rng = np.random.default_rng(args.seed)
    codes = np.array([label == labels[0] for label in labels], dtype=np.int32)
    order = rng.permutation(len(labels)).astype(np.int64)
    S = np.zeros((1 << args.n_bits, 3), dtype=np.float32)
    S[:, 0] = rng.normal(0, 1, S.shape[0])
    mapped = {name: column_of[ids] for name, column_of in layouts(df).items()}
    seconds: dict[str, list] = {name: [] for name in mapped}
    for _ in range(args.runs):  # the layouts alternate
        for name, columns in mapped.items():
            seconds[name] += time_epochs(_adagrad_epoch, columns, offsets, codes, S, order, 1)
    base = statistics.median(seconds["bucket order"])
    rows = [
        {
            "layout": name,
            "median_s": statistics.median(t),
            "ns_per_ngram": 1e9 * statistics.median(t) / ids.size,
            "speedup": base / statistics.median(t),
            "runs_s": " ".join(f"{s:.3f}" for s in t),
        }
        for name, t in seconds.items()
    ]
    frame = pd.DataFrame(rows)
    print(frame.to_string(index=False))
    notes = [
        f"{len(labels):,} documents of `{args.corpus.name}`, {ids.size:,} n-grams over "
        f"{int((df > 0).sum()):,} of 2^{args.n_bits} buckets; the {1 << 16:,} most seen hold "
        f"{top:.1%} of them. One epoch of nbsvm's AdaGrad kernel a run, every layout in "
        "turn; speedup: bucket order's median over the layout's.",
    ]
    write_results(
        "layout_bound",
        frame,
        title="Column layouts of a dense model: the epoch kernel's bound",
        notes=notes,
        config=config,
        out=args.out,
    )


if __name__ == "__main__":
    main()
