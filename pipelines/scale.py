#!/usr/bin/env python
"""A million reviews and more on one machine: nbsvm beside Vowpal Wabbit and fastText.

The corpus is generated (``pipelines/make_corpus.py``: class-conditional bigram models of
IMDB train, real lengths, a vocabulary that keeps growing by the Heaps curve fitted on
IMDB). The largest size is generated once; a smaller size is the first N lines of it, and
every size is scored on the same test documents that follow the training ones.

At each size, one after the other, on the same files, each system is its own process, timed
from start to exit, with its peak RSS from ``os.wait4``:

- **nbsvm**: ``nbsvm train --test`` with the defaults: trigrams, 2**24 buckets, 10 epochs,
  and 2 threads, as fastText gets.
- **Vowpal Wabbit**: ``--ngram 3 -b 26``, logistic loss, 10 passes over its cache file,
  then a test pass.
- **fastText**: the settings chosen on IMDB's training split (``wordNgrams 2, dim 10,
  epoch 10, lr 0.5``), 2 threads.

The peers read files converted beforehand to their own formats. The conversion is not timed.
Every system sees the same tokens.

It also makes **a memory-capped run**. nbsvm trains at the smallest size once with no limit,
then again inside a cgroup (v1 memory controller) whose limit is several times smaller than
its feature cache. The two models are compared array by array, bit for bit, with one thread.

Finally it measures **the machine's limits** beside the stages nbsvm reports:

- a plain read of the largest training file, cold (its pages dropped first) and warm;
- a bare AdaGrad epoch of nbsvm's kernel over 2**24 columns in memory
  (``bench_kernels.py``'s 1M-reviews shape), beside the n-grams/s of nbsvm's epochs.

Results go to ``results/scale.md`` and ``results/scale.csv``.

    python pipelines/scale.py                       # 1M and 4M documents
    python pipelines/scale.py --sizes 100000 --cap-mb 0     # a quick look, no cgroup
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _settled  # noqa: E402, F401  (settles the shared libraries first)
from _harness import positive, script_parser, stage  # noqa: E402
from _peers import nbsvm_train  # noqa: E402
from _report import ROOT, start, write_results  # noqa: E402
from scale_capped import capped  # noqa: E402
from scale_corpus import corpus, label_of  # noqa: E402
from scale_systems import bare_epoch, plain_read, run_system, systems  # noqa: E402

# ---- the machine's limits -----------------------------------------------------------------


STAGES = (
    "lexicon+cache seconds",
    "training seconds",
    "test eval seconds",
    "save seconds",
    "eval seconds",
    "feature cache MB",
    "feature cache n-grams",
)


def warm_up(data, work: Path) -> None:
    """numba compiles what its on-disk cache lacks, outside the timing."""
    subprocess.run(
        nbsvm_train(data["test"], data["test"], work / "warmup.npz"),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def measure(n: int, system: dict) -> dict:
    """One system at ``n`` training documents: its row (time, memory, accuracy, the stages
    nbsvm reports)."""
    print(f"\n== {label_of(n)}: {system['name']}")
    for cmd in system["cmds"]:
        print("   $ " + shlex.join(cmd), flush=True)
    r = run_system(system)
    row = dict(
        train_docs=n,
        system=system["name"],
        accuracy=r["accuracy"],
        seconds=r["seconds"],
        docs_per_s=n / r["seconds"],
        peak_mb=r["peak_mb"],
    )
    for label in STAGES:
        v = stage(r["output"], label)
        if v is not None:
            row[label.replace(" seconds", "_s").replace(" ", "_")] = v
    if "feature_cache_n-grams" in row:  # 10 epochs over the hashed n-grams
        row["epoch_ngrams_per_s"] = 10 * row["feature_cache_n-grams"] / row["training_s"]
        row["hashing_docs_per_s"] = n / row["lexicon+cache_s"]
    print(
        f"   {r['seconds']:.1f} s, {n / r['seconds']:,.0f} documents/s, "
        f"{r['peak_mb']:.0f} MB, accuracy {r['accuracy']:.2f}%",
        flush=True,
    )
    return row


def write_scale(args, sizes, data, frame, config) -> None:
    """The machine's limits (plain read, bare epoch) and ``results/NAME.md``."""
    limits = plain_read(data["train"][max(sizes)])
    limits.update(bare_epoch())
    print(
        f"plain read of {data['train'][max(sizes)].name}: "
        + ", ".join(f"{k} {v:,.1f}" for k, v in limits.items()),
        flush=True,
    )
    lines = [
        f"Corpus: {json.dumps({k: data['stats'][k] for k in ('train_docs', 'train_tokens', 'train_distinct_words', 'heaps_curve_at_train_tokens', 'generate_seconds')})}",
        "Plain read of the largest training file, and a bare epoch over 2**24 columns: "
        + ", ".join(f"{k} {v:,.1f}" for k, v in limits.items()),
    ]
    write_results(
        args.name,
        frame,
        title="A million reviews and more: nbsvm, Vowpal Wabbit and fastText on generated corpora",
        config=config,
        notes=lines,
    )


def run_all(args, sizes, data, work, config) -> None:
    """Every system at every size, the plain read; ``results/scale.md``."""
    wanted = {"nbsvm": "nbsvm", "vw": "Vowpal", "fasttext": "fastText"}
    keep = [wanted[s] for s in args.systems.split(",") if s]
    rows = []
    if "nbsvm" in keep:
        warm_up(data, work)
    for n in sizes:
        train = data["train"][n]
        for system in systems(train, data["test"], work, args.threads):
            if not any(system["name"].startswith(k) for k in keep):
                continue
            if not system["name"].startswith("nbsvm") and 0 < args.peers_max_docs < n:
                continue
            rows.append(measure(n, system))
            # kept as it goes: an interrupted run (hours at 4M) keeps the rows it finished
            pd.DataFrame(rows).to_csv(work / f"{args.name}_rows.csv", index=False)
    write_scale(args, sizes, data, pd.DataFrame(rows), config)


def main(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--sizes", default="1000000,4000000", help="training documents")
    ap.add_argument("--test-docs", type=positive, default=25_000)
    ap.add_argument(
        "--threads", type=int, default=2, help="nbsvm's threads (fastText's: 2; the capped run: 1)"
    )
    ap.add_argument(
        "--cap-mb",
        type=int,
        default=512,
        help="memory limit of the capped run at the smallest size (0: skip it); "
        "1M documents fill a 2.6 GB feature cache",
    )
    ap.add_argument("--systems", default="nbsvm,vw,fasttext")
    ap.add_argument(
        "--peers-max-docs",
        type=int,
        default=0,
        help="run the peers only at sizes up to this (0: at every size)",
    )
    ap.add_argument(
        "--cap-only", action="store_true", help="only the memory-capped run (results/scale_cap.md)"
    )
    ap.add_argument(
        "--name",
        default="scale",
        help="results/NAME.md (another name keeps an earlier run's table)",
    )
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / "scale"))
    args = ap.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    config = start("scale", vars(args), [__file__, *(argv if argv is not None else sys.argv[1:])])
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = corpus(work, sizes, args.test_docs, args.seed)
    if not args.cap_only:
        run_all(args, sizes, data, work, config)
    if args.cap_mb:
        print(f"\n== memory-capped run at {label_of(sizes[0])}: limit {args.cap_mb} MB", flush=True)
        cap = capped(data["train"][sizes[0]], data["test"], work, args.cap_mb)
        shown = {k: v for k, v in cap.items() if k != "output"}
        print("   " + json.dumps(shown), flush=True)
        if cap.get("exit"):
            print(cap["output"], flush=True)
        write_results(
            f"{args.name}_cap",
            pd.DataFrame([shown]),
            title="nbsvm in a memory cgroup smaller than its feature cache",
            config=config,
            notes=[
                f"{label_of(sizes[0])} generated documents, nbsvm train --threads "
                f"1 without a limit, then in a cgroup v1 memory controller "
                f"limited to {args.cap_mb} MB (page cache counted, no swap); "
                "same_model: the two model files' arrays equal bit for bit."
            ],
        )


if __name__ == "__main__":
    main()
