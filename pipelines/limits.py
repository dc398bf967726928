#!/usr/bin/env python
"""Each stage of the IMDB job beside the bound this machine allows for it.

For every stage a bare kernel over the same data, doing only the stage's own work, gives
the bound; nbsvm's stage, as ``nbsvm train`` / ``predict`` run it, is shown as a fraction
of it. Later changes are judged against the limit, not against last week.

- **read**: ``os.read`` of the corpus as one labeled-lines file (warm page cache) against
  nbsvm's reader yielding its documents;
- **hash**: the compiled tokenizer alone, then tokenizer + MurmurHash3 of every word
  n-gram (no dedupe, counting or writing), over UTF-8 bytes encoded beforehand, against
  nbsvm's hashing pass (reader and hasher threads: lowercasing, encoding, distinct ids)
  and the whole lexicon + cache pass of training;
- **epoch**: one pass of the production AdaGrad kernel over the hashed rows in memory
  (every bucket a column) against an epoch of training (cache read, translation, replay);
- **score**: dot products of the same rows against nbsvm's scoring of hashed batches;
- **save**: writing the model file's bytes (``write`` + ``fsync``) against ``save``.

One and two threads where the stage can use them (the bound's two threads run halves of
the data side by side, as Hogwild! does for the epoch). Medians of ``--runs``.

    python pipelines/limits.py [--docs 25000] [--runs 3]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from _harness import positive, script_parser

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import ROOT, start, write_results  # noqa: E402
from limits_kernels import _ngram_hashes_only, _tokens_only  # noqa: E402
from limits_stages import halves, row, training_rows  # noqa: E402

from nbsvm import Hasher, NBSVMClassifier  # noqa: E402
from nbsvm.data.batches import hash_batches  # noqa: E402
from nbsvm.io.document import Document  # noqa: E402
from nbsvm.io.folders import read_aclimdb  # noqa: E402
from nbsvm.io.readers import read_inputs  # noqa: E402


def corpus(data: Path, n_docs: int, work: Path) -> tuple[list[Document], Path]:
    """``n_docs`` training reviews spread over the folder (both classes), and a
    labeled-lines copy of them."""
    docs = list(read_aclimdb(data / "train"))
    if n_docs < len(docs):  # a seeded sample (the folder's order alternates the classes)
        keep = np.random.default_rng(0).choice(len(docs), n_docs, replace=False)
        docs = [docs[i] for i in np.sort(keep)]
    lines = work / "train.txt"
    with open(lines, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(f"{d.label}\t{' '.join(d.text.split())}\n")
    return docs, lines


def read_rows(lines: Path, runs: int) -> list[dict]:
    size = lines.stat().st_size

    def plain():
        fd = os.open(lines, os.O_RDONLY)
        while os.read(fd, 16 << 20):
            pass
        os.close(fd)

    def nbsvm():
        for _ in read_inputs([str(lines)], fmt="labeled-lines"):
            pass

    return [row("read", "os.read of the file", "nbsvm's reader", size, plain, nbsvm, runs, 1)]


def hash_rows(docs: list[Document], runs: int) -> list[dict]:
    hasher = Hasher(ngrams=3, n_bits=24)
    buf, starts = hasher.prepare([d.text for d in docs])
    size, n = int(starts[-1]), len(docs)
    scripts, mask = hasher.scripts, (1 << 24) - 1

    def bound(lo, hi):  # tokenize + MurmurHash3 of every n-gram of documents lo..hi
        return _ngram_hashes_only(buf, starts[lo : hi + 1], scripts, 3, mask, hasher.seed)

    rows = []
    for threads in (1, 2):
        tokens = halves(lambda lo, hi: _tokens_only(buf, starts[lo : hi + 1], scripts), n, threads)
        hashes = halves(bound, n, threads)
        compiled = halves(lambda lo, hi: hasher.hash_prepared(buf, starts[lo : hi + 1]), n, threads)
        rows.append(
            dict(
                row("tokenize", "tokenizer only", "", size, tokens, lambda: None, runs, threads),
                **{
                    "nbsvm MB/s": float("nan"),
                    "fraction of bound": float("nan"),
                    "seconds": float("nan"),
                },
            )
        )
        rows.append(
            row(
                "hash",
                "tokenize + MurmurHash3 of every n-gram",
                "compiled half (distinct ids)",
                size,
                hashes,
                compiled,
                runs,
                threads,
            )
        )
    pipeline = lambda: sum(len(b) for b in hash_batches(iter(docs), hasher))  # noqa: E731
    rows.append(
        row(
            "hash",
            "tokenize + MurmurHash3 of every n-gram",
            "hashing pass (reader + hasher threads)",
            size,
            halves(bound, n, 2),
            pipeline,
            runs,
            2,
        )
    )
    return rows


def save_rows(clf: NBSVMClassifier, work: Path, runs: int) -> list[dict]:
    path = work / "model.npz"
    clf.save(path)
    payload = path.read_bytes()

    def plain():
        with open(work / "plain.bin", "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())

    return [
        row(
            "save",
            "write + fsync of the file's bytes",
            "model.save",
            len(payload),
            plain,
            lambda: clf.save(path),
            runs,
            1,
        )
    ]


def main(argv=None):
    ap = script_parser(__doc__)
    ap.add_argument("--data", default=str(ROOT / "data" / "aclImdb"))
    ap.add_argument("--docs", type=positive, default=25_000)
    ap.add_argument("--runs", type=positive, default=3)
    ap.add_argument("--out", default=None, help="results folder (default results/)")
    args = ap.parse_args(argv)
    config = start("limits", vars(args), [__file__, *(argv if argv is not None else sys.argv[1:])])
    with tempfile.TemporaryDirectory(prefix="nbsvm-limits-") as tmp:
        work = Path(tmp)
        docs, lines = corpus(Path(args.data), args.docs, work)
        rows = read_rows(lines, args.runs) + hash_rows(docs, args.runs)
        more, clf = training_rows(docs, work, args.runs)
        rows += more + save_rows(clf, work, args.runs)
    frame = pd.DataFrame(rows)
    print(frame.to_string(index=False))
    scaling = [
        f"{stage}: {one / two:.2f}x"
        for stage in ("epoch", "training")
        for one, two in [tuple(frame.loc[frame.stage == stage].sort_values("threads").seconds)]
    ]
    write_results(
        "limits",
        frame,
        f"Each stage beside its bound: {len(docs):,} IMDB training reviews",
        notes=[
            __doc__.split("\n\n")[1],
            "MB/s: bytes of the stage's input (text, or the int32 column ids "
            "an epoch reads). Fraction of bound: the bound's seconds over nbsvm's.",
            "Two threads over one (nbsvm's seconds): " + "; ".join(scaling) + ".",
        ],
        config=config,
        out=Path(args.out) if args.out else None,
    )


if __name__ == "__main__":
    main()
