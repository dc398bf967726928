#!/usr/bin/env python
"""20 Newsgroups (bydate) from its class folders: nbsvm's defaults (which calibrate the
probabilities of more than two classes) and the same without calibration beside
scikit-learn's TF-IDF(1,2) + LinearSVC (no probabilities), in one run.

Each system reads the 11,314 training messages from ``20news-bydate-train``, trains, and
scores the 7,532 of ``20news-bydate-test``, as its own process, timed from start to exit,
with peak RSS from the operating system (``os.wait4``). One warm-up run of each, then
``--runs`` measured runs; medians and spread (min-max) go to ``results/bench_20ng.md``.

    python pipelines/bench_20ng.py [--runs 3]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pipelines"))
import _settled  # noqa: E402, F401  (settles the shared libraries first)
from _harness import NBSVM, PY, accuracy_of, interleaved_runs, spread  # noqa: E402

from nbsvm.datasets import shared_root  # noqa: E402

SHARED = shared_root()  # nbsvm.datasets decides where the corpora are


def folders(archive: Path, work: Path) -> tuple[Path, Path]:
    """The bydate train and test folders, unpacked under ``work`` once."""
    train, test = work / "20news-bydate-train", work / "20news-bydate-test"
    if not (train.is_dir() and test.is_dir()):
        work.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
    return train, test


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--archive", default=str(SHARED / "20newsgroups" / "20news-bydate.tar.gz"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / "bench_20ng"))
    args = ap.parse_args(argv)
    work = Path(args.work)
    train, test = folders(Path(args.archive), work)
    systems = [
        dict(
            name="nbsvm train (defaults: calibrated probabilities)",
            cmd=[
                NBSVM,
                "train",
                str(train),
                "--test",
                str(test),
                "--encoding",
                "latin-1",
                "-o",
                str(work / "nbsvm.npz"),
                "-q",
            ],
        ),
        # the same model without the held-out copy that fits the temperature
        dict(
            name="nbsvm train --calibrate none",
            cmd=[
                NBSVM,
                "train",
                str(train),
                "--test",
                str(test),
                "--encoding",
                "latin-1",
                "--calibrate",
                "none",
                "-o",
                str(work / "nbsvm-raw.npz"),
                "-q",
            ],
        ),
        dict(
            name="scikit-learn TfidfVectorizer(1,2, sublinear) + LinearSVC",
            cmd=[PY, str(ROOT / "pipelines/peers/sklearn_tfidf_svc.py"), str(train), str(test)],
        ),
    ]
    print("configuration:", {"runs": args.runs, "archive": args.archive})
    print("reproduce:", shlex.join([PY, "pipelines/bench_20ng.py", "--runs", str(args.runs)]))
    results = interleaved_runs(
        systems,
        args.runs,
        lambda s, r: r.update(accuracy=accuracy_of(s, r)),
        lambda r: f"{r['accuracy']:.2f}%, {r['seconds']:.2f} s, {r['peak_mb']:.0f} MB",
    )
    base = statistics.median(r["seconds"] for r in results[systems[-1]["name"]])
    lines = [
        "| system | accuracy | wall s | x scikit-learn time | peak MB |",
        "|---|---|---|---|---|",
    ]
    for s in systems:
        rs = results[s["name"]]
        secs = [r["seconds"] for r in rs]
        lines.append(
            f"| {s['name']} | {statistics.median(r['accuracy'] for r in rs):.2f}% | "
            f"{spread(secs)} | {statistics.median(secs) / base:.2f} | "
            f"{spread([r['peak_mb'] for r in rs], '{:.0f}')} |"
        )
    table = "\n".join(lines)
    print(table)
    out = ROOT / "results" / "bench_20ng.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "# 20 Newsgroups bydate, whole job from the class folders\n\n"
        f"`{shlex.join(['python', 'pipelines/bench_20ng.py', '--runs', str(args.runs)])}`"
        f" ({args.runs} measured runs after a warm-up; medians, min-max)\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
