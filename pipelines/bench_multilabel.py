#!/usr/bin/env python
"""Multi-label text from real data: 20 Newsgroups bydate, each message labelled with its
top-level and its full group (``comp,comp.graphics``; 27 labels, two per message).
nbsvm's multi-label defaults beside scikit-learn's TF-IDF(1,2) +
OneVsRestClassifier(LinearSVC()), in one run.

The archive's messages become ``top,group<TAB>text`` lines (white space collapsed to one
space, latin-1) once, under ``--work``. Each system reads the 11,314 training lines,
trains, and scores the 7,532 test lines, as its own process, timed from start to exit,
with peak RSS from the operating system (``os.wait4``). One warm-up run of each, then
``--runs`` measured runs; medians and spread (min-max) go to
``results/bench_multilabel.md``.

    python pipelines/bench_multilabel.py [--runs 3]
"""

from __future__ import annotations

import re
import statistics
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pipelines"))
import _settled  # noqa: E402, F401  (settles the shared libraries first)
from _harness import NBSVM, archive_bench  # noqa: E402
from _peers import peer_script  # noqa: E402
from bench_20ng import ARCHIVE  # noqa: E402

METRICS = ("micro F1", "macro F1", "Hamming loss", "subset accuracy")


def label_lines(archive: Path, work: Path) -> tuple[Path, Path]:
    """``train.tsv`` and ``test.tsv`` of ``top,group<TAB>text`` lines, written once
    (to a temporary name, then renamed)."""
    paths = {part: work / f"{part}.tsv" for part in ("train", "test")}
    if all(p.is_file() for p in paths.values()):
        return paths["train"], paths["test"]
    work.mkdir(parents=True, exist_ok=True)
    tmp = {part: p.with_suffix(".tsv.tmp") for part, p in paths.items()}
    out = {part: open(p, "w", encoding="utf-8") for part, p in tmp.items()}
    with tarfile.open(archive) as tar:
        for member in tar:
            parts = member.name.split("/")
            if not (member.isfile() and len(parts) == 3):
                continue
            text = " ".join(tar.extractfile(member).read().decode("latin-1").split())
            part = "train" if parts[0].endswith("-train") else "test"
            out[part].write(f"{parts[1].split('.')[0]},{parts[1]}\t{text}\n")
    for part, fh in out.items():
        fh.close()
        tmp[part].replace(paths[part])
    return paths["train"], paths["test"]


def metrics_of(output: str) -> dict:
    found = {}
    for name in METRICS:
        m = re.search(re.escape(name) + r": ([0-9.]+)", output)
        found[name] = float(m.group(1)) if m else float("nan")
    return found


def metric_cells(results: list[dict]) -> str:
    med = {m: statistics.median(r[m] for r in results) for m in METRICS}
    return (
        f"{med['micro F1']:.4f} | {med['macro F1']:.4f} | "
        f"{med['Hamming loss']:.4f} | {med['subset accuracy']:.2f}%"
    )


def systems(train: Path, test: Path, work: Path) -> list[tuple[str, list[str]]]:
    """Each system's row name and command, the peer last."""
    head = [NBSVM, "train", str(train), "--multilabel", "--test", str(test)]
    return [
        ("nbsvm train --multilabel (defaults)", [*head, "-o", str(work / "nbsvm.npz"), "-q"]),
        (
            "nbsvm train --multilabel --threshold auto",
            [*head, "--threshold", "auto", "-o", str(work / "tuned.npz"), "-q"],
        ),
        (
            "scikit-learn TfidfVectorizer(1,2, sublinear) + OneVsRest(LinearSVC)",
            peer_script("sklearn_multilabel_svc", train, test),
        ),
    ]


def main(argv=None):
    archive_bench(
        "bench_multilabel",
        __doc__,
        argv,
        ARCHIVE,
        unpack=label_lines,
        systems=systems,
        title="Multi-label: 20 Newsgroups bydate labelled top-level,group (27 labels)",
        score=lambda s, r: r.update(metrics_of(r["output"])),
        describe=lambda r: (
            f"micro F1 {r['micro F1']:.4f}, macro F1 {r['macro F1']:.4f}, "
            f"{r['seconds']:.2f} s, {r['peak_mb']:.0f} MB"
        ),
        header=[
            "| system | micro F1 | macro F1 | Hamming loss | subset accuracy | wall s | "
            "x scikit-learn time | peak MB |",
            "|---|---|---|---|---|---|---|---|",
        ],
        cells=metric_cells,
    )


if __name__ == "__main__":
    main()
