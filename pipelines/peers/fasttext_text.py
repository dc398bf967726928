#!/usr/bin/env python
"""Peer for the benchmarks: fastText supervised (the ``fasttext`` package from PyPI).

Reads fastText's own format (``__label__X tokens``, the tokens nbsvm's tokenizer makes,
written before timing as the other peers' files are), trains, and prints the accuracy on
the test file and the stage timings. The defaults are the settings chosen on IMDB's
training split (``pipelines/tune_fasttext.py``).
"""

import argparse
import time

DEFAULTS = dict(wordNgrams=2, dim=10, epoch=10, lr=0.5)  # results/tune_fasttext.md


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--wordNgrams", type=int, default=DEFAULTS["wordNgrams"])
    ap.add_argument("--dim", type=int, default=DEFAULTS["dim"])
    ap.add_argument("--epoch", type=int, default=DEFAULTS["epoch"])
    ap.add_argument("--lr", type=float, default=DEFAULTS["lr"])
    ap.add_argument("--bucket", type=int, default=2_000_000)
    ap.add_argument("--thread", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import fasttext

    t0 = time.perf_counter()
    model = fasttext.train_supervised(
        input=args.train,
        wordNgrams=args.wordNgrams,
        dim=args.dim,
        epoch=args.epoch,
        lr=args.lr,
        bucket=args.bucket,
        thread=args.thread,
        seed=args.seed,
        verbose=0,
    )
    t1 = time.perf_counter()
    n, precision, _ = model.test(args.test)
    t2 = time.perf_counter()
    print(f"training seconds: {t1 - t0:.3f}")
    print(f"eval seconds: {t2 - t1:.3f}")
    print(f"test documents: {n}")
    print(f"accuracy: {100.0 * precision:.2f}%")


if __name__ == "__main__":
    main()
