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

import argparse
import re
import shlex
import statistics
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pipelines"))
import _settled  # noqa: E402, F401  (settles the shared libraries first)
from _harness import NBSVM, PY, interleaved_runs, spread  # noqa: E402
from bench_20ng import SHARED  # noqa: E402

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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--archive", default=str(SHARED / "20newsgroups" / "20news-bydate.tar.gz"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / "bench_multilabel"))
    args = ap.parse_args(argv)
    work = Path(args.work)
    train, test = label_lines(Path(args.archive), work)
    systems = [
        dict(
            name="nbsvm train --multilabel (defaults)",
            cmd=[
                NBSVM,
                "train",
                str(train),
                "--multilabel",
                "--test",
                str(test),
                "-o",
                str(work / "nbsvm.npz"),
                "-q",
            ],
        ),
        dict(
            name="scikit-learn TfidfVectorizer(1,2, sublinear) + OneVsRest(LinearSVC)",
            cmd=[
                PY,
                str(ROOT / "pipelines/peers/sklearn_multilabel_svc.py"),
                str(train),
                str(test),
            ],
        ),
    ]
    print("configuration:", {"runs": args.runs, "archive": args.archive})
    print("reproduce:", shlex.join([PY, "pipelines/bench_multilabel.py", "--runs", str(args.runs)]))
    results = interleaved_runs(
        systems,
        args.runs,
        lambda s, r: r.update(metrics_of(r["output"])),
        lambda r: (
            f"micro F1 {r['micro F1']:.4f}, macro F1 {r['macro F1']:.4f}, "
            f"{r['seconds']:.2f} s, {r['peak_mb']:.0f} MB"
        ),
    )
    base = statistics.median(r["seconds"] for r in results[systems[1]["name"]])
    lines = [
        "| system | micro F1 | macro F1 | Hamming loss | subset accuracy | wall s | "
        "x scikit-learn time | peak MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in systems:
        rs = results[s["name"]]
        secs = [r["seconds"] for r in rs]
        med = {m: statistics.median(r[m] for r in rs) for m in METRICS}
        lines.append(
            f"| {s['name']} | {med['micro F1']:.4f} | {med['macro F1']:.4f} | "
            f"{med['Hamming loss']:.4f} | {med['subset accuracy']:.2f}% | "
            f"{spread(secs)} | {statistics.median(secs) / base:.2f} | "
            f"{spread([r['peak_mb'] for r in rs], '{:.0f}')} |"
        )
    table = "\n".join(lines)
    print(table)
    out = ROOT / "results" / "bench_multilabel.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "# Multi-label: 20 Newsgroups bydate labelled top-level,group (27 labels)\n\n"
        f"`{shlex.join(['python', 'pipelines/bench_multilabel.py', '--runs', str(args.runs)])}`"
        f" ({args.runs} measured runs after a warm-up; medians, min-max)\n\n" + table + "\n"
    )


if __name__ == "__main__":
    main()
