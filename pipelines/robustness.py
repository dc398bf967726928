#!/usr/bin/env python
"""nbsvm on every shape of text the shared corpora give, beside scikit-learn's obvious
baseline and fastText, on the same folds (``make robustness``, ``results/robustness.md``).

Shapes (``pipelines/_shapes.py`` builds them, seeded): short multi-class (20 Newsgroups
subject lines; Blitzer domain from a review's first sentence), short binary (Subj, MPQA),
long binary (IMDB 10k / 10k, RT-2k), long multi-class (20 Newsgroups whole messages),
imbalanced (IMDB 1:9), few documents (200 and 1,000 IMDB reviews), no spaces (IMDB with
all white space removed) and Unicode-heavy (Subj with Cyrillic/Greek look-alikes, accents
and emoji). No Chinese corpus is in the shared datasets, so there is no Chinese shape.

Systems, all through their Python APIs in this one process, fit and predict timed per fold
(wall clock), the order of the systems rotated from fold to fold:

- nbsvm defaults: ``NBSVMClassifier()`` (only ``seed``, which with the default ``--seed 0``
  is the default), ``fit(texts, labels)``, ``predict``, ``predict_proba``;
- nbsvm auto: ``NBSVMClassifier(auto=True, time_budget=--budget)``, searched on the
  training part only;
- baseline: scikit-learn ``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True) +
  LinearSVC()`` (``analyzer='char', ngram_range=(1, 3)`` on the shape without spaces); its
  log loss from ``CalibratedClassifierCV(LinearSVC(), cv=3)`` fitted on the same training
  part and features (its time reported apart);
- fastText defaults: ``fasttext.train_supervised`` with its defaults except
  ``wordNgrams=2`` (lr 0.1, dim 100, epoch 5, one thread on two cores), as its users run it;
- fastText bench: the settings ``make bench`` uses (``pipelines/peers/fasttext_text.py``:
  wordNgrams 2, dim 10, epoch 10, lr 0.5, chosen on IMDB's training split by
  ``pipelines/tune_fasttext.py``), since the defaults' few updates leave small corpora
  underfitted; both on the text tokenized by nbsvm's tokenizer as in ``make bench``
  (tokenizing inside their timing), probabilities from ``predict(k=-1)``.

Reported per shape and system: accuracy, macro-F1, log loss (the true class's probability
clipped at 1e-15) and seconds, the mean over folds (+- its standard error where there are
several), and three checks: defaults >= baseline - 0.5 accuracy points; auto >= baseline and
>= defaults; defaults' log loss <= the calibrated baseline's + 0.1.

    python pipelines/robustness.py [--shapes imdb,subj] [--budget 60] [--seed 0] [--quick]
                                   [--no-fasttext] [--out results]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import _shapes
import pandas as pd
from _harness import script_parser
from _report import ROOT, start, write_results

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from robustness_report import (  # noqa: E402
    check_table,
    git_state,
    report_notes,
    shape_tables,
    summarize,
    versions,
)
from robustness_systems import (  # noqa: E402
    BENCH_FASTTEXT,
    FASTTEXT,
    QUICK_BUDGET,
    SYSTEMS,
    _kw,
    run_fold,
)

from nbsvm import NBSVMClassifier  # noqa: E402

# ---- the run -----------------------------------------------------------------------------------


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument(
        "--shapes",
        default=",".join(_shapes.SHAPES),
        help="comma list of shapes (default: all): " + ", ".join(_shapes.SHAPES),
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds of each nbsvm auto search (default: NBSVMClassifier's "
        f"time_budget, {NBSVMClassifier().time_budget:g}; {QUICK_BUDGET:g} "
        "with --quick)",
    )
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    ap.add_argument("--no-fasttext", action="store_true", help="leave fastText out")
    ap.add_argument("--out", default=None, help="folder of robustness.md/.csv (results/)")
    args = ap.parse_args(argv)
    names = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in names if s not in _shapes.SHAPES]
    if unknown or not names:
        ap.error(f"unknown shapes {unknown}; allowed: {', '.join(_shapes.SHAPES)}")
    args.shapes = list(dict.fromkeys(names))
    if args.budget is None:
        args.budget = QUICK_BUDGET if args.quick else float(NBSVMClassifier().time_budget)
    if not args.budget > 0:
        ap.error("--budget must be a positive number of seconds")
    return args


def warm_up(systems, seed, budget) -> float:
    """Fit every system once on the small fixtures (two and three classes), untimed, so that
    no fold's timing includes numba compiling nbsvm's kernels or an import."""
    from nbsvm.datasets import fixture
    from nbsvm.io.readers import read_inputs

    t0 = time.perf_counter()
    for name in ("reviews.txt", "topics.txt"):
        docs = list(read_inputs([fixture(name)]))
        x, y = [d.text for d in docs], [d.label for d in docs]
        for system in systems:
            run_fold(system, (x, y, x, y), seed, min(budget, 2.0), False)
    return time.perf_counter() - t0


def plan(names, seed, quick) -> dict:
    """Build every shape's folds (seeded) and print the planned work."""
    built = {}
    print("== planned work", flush=True)
    for name in names:
        shape = _shapes.SHAPES[name]
        t0 = time.perf_counter()
        folds = shape.build(seed, quick)
        built[name] = folds
        tr, ytr, te, _ = folds[0]
        print(
            f"  {name:16s} {shape.kind:18s} {len(folds)} fold(s) x {len(tr):,} train / "
            f"{len(te):,} test, {len(set(ytr))} classes  ({shape.description}; built in "
            f"{time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
    print("  Chinese: skipped (no Chinese corpus in the shared datasets)", flush=True)
    return built


def chosen_systems(args) -> list[str]:
    """The systems to run (fastText's left out with ``--no-fasttext``; it must be
    installed otherwise)."""
    systems = [s for s in SYSTEMS if not (s in FASTTEXT and args.no_fasttext)]
    if not args.no_fasttext:
        try:
            import fasttext  # noqa: F401
        except ImportError:
            sys.exit(
                "fastText is not installed: make install-bench "
                "(or run with --no-fasttext)"
            )
    return systems


def configuration(args, systems) -> dict:
    """Everything the run depends on, as printed and written with the results."""
    return {
        **git_state(),
        "shapes": args.shapes,
        "seed": args.seed,
        "budget_s": args.budget,
        "quick": args.quick,
        "systems": systems,
        "nbsvm defaults": repr(NBSVMClassifier(seed=args.seed)),
        "nbsvm auto": repr(NBSVMClassifier(seed=args.seed, auto=True, time_budget=args.budget)),
        "baseline": "TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True) + LinearSVC() "
        "(char (1, 3) without spaces); log loss: CalibratedClassifierCV("
        "LinearSVC(), cv=3)",
        "fastText defaults": "train_supervised(wordNgrams=2, seed=SEED), its defaults "
        "otherwise (lr 0.1, dim 100, epoch 5, thread cpu_count-1 = "
        f"{max(1, (os.cpu_count() or 2) - 1)}), nbsvm-tokenized text"
        if not args.no_fasttext
        else "off",
        "fastText bench": f"train_supervised(seed=SEED, {_kw(BENCH_FASTTEXT)}) (make bench's "
        "settings, pipelines/peers/fasttext_text.py), nbsvm-tokenized text"
        if not args.no_fasttext
        else "off",
        "cores": os.cpu_count(),
        **versions(not args.no_fasttext),
    }


def run_shape_fold(name: str, k: int, fold, system: str, args) -> dict:
    """One system on one fold of one shape: its row, and its progress line."""
    shape = _shapes.SHAPES[name]
    r = run_fold(system, fold, args.seed, args.budget, shape.no_spaces)
    row = {
        "shape": name,
        "fold": k,
        "system": system,
        "n_train": len(fold[0]),
        "n_test": len(fold[2]),
        "classes": len(set(fold[1])),
        **r,
    }
    print(
        f"  {name:16s} fold {k} {system:15s} accuracy {r['accuracy']:6.2f}  "
        f"macro-F1 {r['macro_f1']:6.2f}  log loss {r['log_loss']:.4f}  "
        f"{r['seconds']:7.1f} s"
        + (
            f"  (auto: {r['auto_chosen']}, search {r['auto_search_s']:.1f} s)"
            if system == "nbsvm auto"
            else ""
        ),
        flush=True,
    )
    return row


def run_all(args, built: dict, systems: list[str]) -> list[dict]:
    """Every shape's folds, the systems in turn (each fold starts with the next one)."""
    rows = []
    turn = 0
    for name in args.shapes:
        for k, fold in enumerate(built[name]):
            order = systems[turn % len(systems) :] + systems[: turn % len(systems)]
            turn += 1
            for system in order:
                rows.append(run_shape_fold(name, k, fold, system, args))
    return rows


def report(args, systems, rows, config):
    """The summary, the checks and each shape's table, printed; ``robustness.md/.csv``."""
    folds = pd.DataFrame(rows)
    frame = summarize(folds, args.shapes, systems)
    checks = check_table(frame, args.shapes)
    tables = shape_tables(frame, args.shapes, systems)
    for name in args.shapes:
        print(f"\n{name}: {_shapes.SHAPES[name].description}")
        print(tables[name].to_string(index=False))
    print()
    print(checks.to_string(index=False))
    elapsed = time.perf_counter() - config["_started"]
    print(f"total {elapsed:.0f} s", flush=True)
    write_results(
        "robustness",
        frame,
        title="Robustness: nbsvm on every shape of text, beside scikit-learn and fastText",
        config=config,
        out=Path(args.out) if args.out else None,
        notes=report_notes(args, systems, checks, tables, elapsed),
    )
    return frame, checks


def main(argv=None):
    args = parse_args(argv)
    systems = chosen_systems(args)
    config = start(
        "robustness",
        configuration(args, systems),
        [__file__, *(argv if argv is not None else sys.argv[1:])],
    )
    built = plan(args.shapes, args.seed, args.quick)
    print(f"== warm-up (untimed): {warm_up(systems, args.seed, args.budget):.1f} s", flush=True)
    rows = run_all(args, built, systems)
    return report(args, systems, rows, config)


if __name__ == "__main__":
    main()
