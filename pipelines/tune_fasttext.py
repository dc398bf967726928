#!/usr/bin/env python
"""fastText's settings for the benchmarks, chosen on IMDB's training split only.

A seeded 20,000 / 5,000 split of the 25,000 training reviews (the test reviews are never
read). The reviews are tokenized by nbsvm's tokenizer, as in ``make bench``. The grid is
word n-grams 1-3 x epochs 5, 10, 20 x learning rate 0.25, 0.5, 1.0, with dim 10 (fastText's
own choice for sentiment in Joulin et al. 2017) and 2 threads. The best validation accuracy
wins. ``pipelines/peers/fasttext_text.py`` uses the winner as its defaults. Results go to
``results/tune_fasttext.md``.

    python pipelines/tune_fasttext.py [--seed 0]
"""

from __future__ import annotations

import itertools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _harness import script_parser

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _settled  # noqa: E402, F401  (settles the shared libraries first)
from _report import ROOT, start, write_results  # noqa: E402

from nbsvm.io.folders import read_aclimdb  # noqa: E402
from nbsvm.text.tokenize import tokenize  # noqa: E402

GRID = dict(wordNgrams=[1, 2, 3], epoch=[5, 10, 20], lr=[0.25, 0.5, 1.0])


def main(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    args = ap.parse_args(argv)
    config = start(
        "tune_fasttext",
        {**vars(args), "grid": GRID, "dim": 10, "thread": 2},
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    import fasttext

    docs = [
        f"__label__{d.label} {' '.join(tokenize(d.text))}\n"
        for d in read_aclimdb(Path(args.data) / "train")
    ]
    order = np.random.default_rng(args.seed).permutation(len(docs))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        train, valid = Path(tmp) / "train.ft", Path(tmp) / "valid.ft"
        train.write_text("".join(docs[i] for i in order[:20_000]))
        valid.write_text("".join(docs[i] for i in order[20_000:]))
        for values in itertools.product(*GRID.values()):
            params = dict(zip(GRID, values))
            t0 = time.perf_counter()
            try:
                model = fasttext.train_supervised(
                    input=str(train), dim=10, thread=2, seed=args.seed, verbose=0, **params
                )
                _, precision, _ = model.test(str(valid))
            except RuntimeError as e:  # "Encountered NaN": the rate diverges
                print(f"{params}: {e}", flush=True)
                precision = float("nan")
            rows.append(
                {
                    **params,
                    "validation_accuracy": 100.0 * precision,
                    "seconds": time.perf_counter() - t0,
                }
            )
            print(f"{params}: {100 * precision:.2f}% ({rows[-1]['seconds']:.1f} s)", flush=True)
    frame = pd.DataFrame(rows).sort_values("validation_accuracy", ascending=False)
    best = frame.iloc[0]
    line = (
        f"chosen: wordNgrams {int(best.wordNgrams)}, epoch {int(best.epoch)}, lr {best.lr}, "
        f"dim 10: {best.validation_accuracy:.2f}% on the 5,000 held-out training reviews"
    )
    print(line)
    write_results(
        "tune_fasttext",
        frame,
        title="fastText's settings, chosen on IMDB's training split",
        config=config,
        notes=[line],
    )


if __name__ == "__main__":
    main()
