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

import statistics
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pipelines"))
import _settled  # noqa: E402, F401  (settles the shared libraries first)
from _harness import NBSVM, accuracy_of, archive_bench  # noqa: E402
from _peers import peer_script  # noqa: E402

from nbsvm.datasets import shared_root  # noqa: E402

SHARED = shared_root()  # nbsvm.datasets decides where the corpora are
ARCHIVE = SHARED / "20newsgroups" / "20news-bydate.tar.gz"


def folders(archive: Path, work: Path) -> tuple[Path, Path]:
    """The bydate train and test folders, unpacked under ``work`` once."""
    train, test = work / "20news-bydate-train", work / "20news-bydate-test"
    if not (train.is_dir() and test.is_dir()):
        work.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(work, filter="data")
    return train, test


def systems(train: Path, test: Path, work: Path) -> list[tuple[str, list[str]]]:
    """Each system's row name and command, the peer last."""

    def nbsvm(model: str, *options: str) -> list[str]:
        head = [NBSVM, "train", str(train), "--test", str(test)]
        return [*head, *options, "-o", str(work / model), "-q"]

    latin = ("--encoding", "latin-1")
    return [
        ("nbsvm train (defaults: calibrated probabilities)", nbsvm("nbsvm.npz", *latin)),
        # the same model without the held-out copy that fits the temperature
        ("nbsvm train --calibrate none", nbsvm("nbsvm-raw.npz", *latin, "--calibrate", "none")),
        (
            "scikit-learn TfidfVectorizer(1,2, sublinear) + LinearSVC",
            peer_script("sklearn_tfidf_svc", train, test),
        ),
    ]


def main(argv=None):
    archive_bench(
        "bench_20ng",
        __doc__,
        argv,
        ARCHIVE,
        unpack=folders,
        systems=systems,
        title="20 Newsgroups bydate, whole job from the class folders",
        score=lambda s, r: r.update(accuracy=accuracy_of(s, r)),
        describe=lambda r: f"{r['accuracy']:.2f}%, {r['seconds']:.2f} s, {r['peak_mb']:.0f} MB",
        header=[
            "| system | accuracy | wall s | x scikit-learn time | peak MB |",
            "|---|---|---|---|---|",
        ],
        cells=lambda rs: f"{statistics.median(r['accuracy'] for r in rs):.2f}%",
    )


if __name__ == "__main__":
    main()
