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

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _report import ROOT, markdown_table, start, write_results
import _shapes
from peers.fasttext_text import DEFAULTS as BENCH_DEFAULTS

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from nbsvm import NBSVMClassifier  # noqa: E402
from nbsvm.errors import NBSVMError  # noqa: E402

SYSTEMS = ("nbsvm defaults", "nbsvm auto", "baseline", "fastText defaults", "fastText bench")
FASTTEXT = ("fastText defaults", "fastText bench")
# make bench's fastText settings (results/tune_fasttext.md); the thread count stays
# fastText's default here, as for the other fastText row
BENCH_FASTTEXT = dict(BENCH_DEFAULTS)
BASELINE_NAME = "scikit-learn TF-IDF(1,2) + LinearSVC"
DISPLAY = {"baseline": BASELINE_NAME, "fastText defaults": "fastText (defaults, wordNgrams 2)",
           "fastText bench": "fastText (make bench's settings)"}
QUICK_BUDGET = 3.0
EPS = 1e-15
COLUMNS = ["shape", "kind", "system", "folds", "n_train", "n_test", "classes", "accuracy",
           "accuracy_se", "macro_f1", "macro_f1_se", "log_loss", "log_loss_se", "zero_probability_pct", "seconds",
           "seconds_se", "calibration_seconds", "fold_accuracies", "auto_chosen",
           "auto_search_s_max", "auto_stopped_by_budget"]


# ---- the systems: each returns (predicted labels, probabilities, their classes) ------------

def nbsvm_defaults(train_x, train_y, test_x, seed, budget, no_spaces, work):
    clf = NBSVMClassifier(seed=seed).fit(train_x, train_y)
    return clf.predict(test_x), clf.predict_proba(test_x), list(clf.classes_), {}


def nbsvm_auto(train_x, train_y, test_x, seed, budget, no_spaces, work):
    clf = NBSVMClassifier(seed=seed, auto=True, time_budget=budget).fit(train_x, train_y)
    extra = {"auto_chosen": _describe(clf.auto_.get("changed", {})),
             "auto_search_s": float(clf.auto_.get("seconds", float("nan"))),
             "auto_stopped_by_budget": bool(clf.auto_.get("stopped_by_budget", False))}
    predicted = clf.predict(test_x)
    try:
        proba = clf.predict_proba(test_x)
    except NBSVMError:          # the search chose a loss without probabilities (hinge)
        proba = None
    return predicted, proba, list(clf.classes_), extra


def _kw(settings: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def _describe(changed: dict) -> str:
    from nbsvm.models.auto import describe
    return describe(changed)


def vectorizer(no_spaces: bool):
    from sklearn.feature_extraction.text import TfidfVectorizer
    if no_spaces:
        return TfidfVectorizer(analyzer="char", ngram_range=(1, 3), sublinear_tf=True)
    return TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)


def baseline(train_x, train_y, test_x, seed, budget, no_spaces, work):
    """LinearSVC's labels (timed); the calibrated copy's probabilities (timed apart)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.svm import LinearSVC
    t0 = time.perf_counter()
    vec = vectorizer(no_spaces)
    xtr = vec.fit_transform(train_x)
    xte = vec.transform(test_x)
    predicted = LinearSVC().fit(xtr, train_y).predict(xte)
    t1 = time.perf_counter()
    calibrated = CalibratedClassifierCV(LinearSVC(), cv=3).fit(xtr, train_y)
    proba = calibrated.predict_proba(xte)
    extra = {"calibration_seconds": time.perf_counter() - t1, "_seconds": t1 - t0}
    return predicted, proba, list(calibrated.classes_), extra


def fasttext_line(text: str) -> str:
    from nbsvm.text.tokenize import tokenize
    return " ".join(tokenize(text))


def fasttext_system(train_x, train_y, test_x, seed, budget, no_spaces, work, settings=None):
    import fasttext
    path = Path(work) / "train.ft"
    with open(path, "w", encoding="utf-8") as f:
        for text, label in zip(train_x, train_y):
            f.write(f"__label__{label} {fasttext_line(text)}\n")
    model = fasttext.train_supervised(input=str(path), seed=seed, verbose=0,
                                      **(settings or {"wordNgrams": 2}))
    labels, probs = model.predict([fasttext_line(t) for t in test_x], k=-1)
    classes = sorted(set(train_y))
    column = {f"__label__{c}": i for i, c in enumerate(classes)}
    proba = np.zeros((len(test_x), len(classes)))
    for i, (names, p) in enumerate(zip(labels, probs)):
        for name, value in zip(names, p):
            proba[i, column[name]] = value
    predicted = [classes[j] for j in proba.argmax(axis=1)]
    return predicted, proba, classes, {}


RUN = {"nbsvm defaults": nbsvm_defaults, "nbsvm auto": nbsvm_auto, "baseline": baseline,
       "fastText defaults": fasttext_system,
       "fastText bench": lambda *a: fasttext_system(*a, settings=BENCH_FASTTEXT)}


# ---- metrics ---------------------------------------------------------------------------------

def log_loss(truth, proba, classes) -> float:
    """Mean negative log probability of the true class, rows normalized to sum 1 and the
    probability clipped to [1e-15, 1] (a class the system never saw gets 1e-15); NaN when
    the model gives no probabilities."""
    if proba is None:
        return float("nan")
    proba = np.asarray(proba, dtype=float)
    proba = proba / np.maximum(proba.sum(axis=1, keepdims=True), EPS)
    column = {c: i for i, c in enumerate(classes)}
    p = np.array([proba[i, column[t]] if t in column else 0.0 for i, t in enumerate(truth)])
    return float(-np.mean(np.log(np.clip(p, EPS, 1.0))))


def zero_probability_pct(truth, proba, classes) -> float:
    """The share (%) of documents whose true class got a probability under 1e-15 (each
    adds 34.5 / n to the log loss)."""
    if proba is None:
        return float("nan")
    proba = np.asarray(proba, dtype=float)
    column = {c: i for i, c in enumerate(classes)}
    p = np.array([proba[i, column[t]] if t in column else 0.0 for i, t in enumerate(truth)])
    return 100.0 * float(np.mean(p < EPS))


def scores(truth, predicted, proba, classes) -> dict:
    from sklearn.metrics import f1_score
    truth = [str(t) for t in truth]
    predicted = [str(p) for p in predicted]
    return {"accuracy": 100.0 * float(np.mean(np.asarray(truth) == np.asarray(predicted))),
            "macro_f1": 100.0 * float(f1_score(truth, predicted, average="macro")),
            "log_loss": log_loss(truth, proba, [str(c) for c in classes]),
            "zero_probability_pct": zero_probability_pct(truth, proba,
                                                         [str(c) for c in classes])}


def run_fold(system, fold, seed, budget, no_spaces) -> dict:
    train_x, train_y, test_x, test_y = fold
    with tempfile.TemporaryDirectory(prefix="nbsvm-robustness-") as work:
        t0 = time.perf_counter()
        predicted, proba, classes, extra = RUN[system](train_x, train_y, test_x, seed, budget,
                                                       no_spaces, work)
        seconds = time.perf_counter() - t0
    seconds = extra.pop("_seconds", seconds)
    return {**scores(test_y, predicted, proba, classes), "seconds": seconds, **extra}


# ---- the run -----------------------------------------------------------------------------------

def git_state() -> dict:
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return ""
    status = git("status", "--short").splitlines()
    return {"git_head": git("rev-parse", "HEAD").strip() or "unknown",
            "git_status_short_lines": len(status), "git_status_short": status[:40]}


def versions(fasttext_on: bool) -> dict:
    import sklearn
    import nbsvm
    out = {"python": platform.python_version(), "nbsvm": getattr(nbsvm, "__version__", "?"),
           "numpy": np.__version__, "scikit-learn": sklearn.__version__}
    if fasttext_on:
        from importlib.metadata import version
        out["fasttext"] = version("fasttext")
    return out


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(_shapes.SHAPES),
                    help="comma list of shapes (default: all): " + ", ".join(_shapes.SHAPES))
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of each nbsvm auto search (default: NBSVMClassifier's "
                         f"time_budget, {NBSVMClassifier().time_budget:g}; {QUICK_BUDGET:g} "
                         "with --quick)")
    ap.add_argument("--seed", type=int, default=0)
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
        print(f"  {name:16s} {shape.kind:18s} {len(folds)} fold(s) x {len(tr):,} train / "
              f"{len(te):,} test, {len(set(ytr))} classes  ({shape.description}; built in "
              f"{time.perf_counter() - t0:.1f} s)", flush=True)
    print("  Chinese: skipped (no Chinese corpus in the shared datasets)", flush=True)
    return built


def main(argv=None):
    args = parse_args(argv)
    systems = [s for s in SYSTEMS if not (s in FASTTEXT and args.no_fasttext)]
    if not args.no_fasttext:
        try:
            import fasttext  # noqa: F401
        except ImportError:
            sys.exit("fastText is not installed: .venv/bin/pip install -e '.[bench]' "
                     "(or run with --no-fasttext)")
    config = start("robustness", {
        **git_state(), "shapes": args.shapes, "seed": args.seed, "budget_s": args.budget,
        "quick": args.quick, "systems": systems,
        "nbsvm defaults": repr(NBSVMClassifier(seed=args.seed)),
        "nbsvm auto": repr(NBSVMClassifier(seed=args.seed, auto=True,
                                           time_budget=args.budget)),
        "baseline": "TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True) + LinearSVC() "
                    "(char (1, 3) without spaces); log loss: CalibratedClassifierCV("
                    "LinearSVC(), cv=3)",
        "fastText defaults": "train_supervised(wordNgrams=2, seed=SEED), its defaults "
                             "otherwise (lr 0.1, dim 100, epoch 5, thread cpu_count-1 = "
                             f"{max(1, (os.cpu_count() or 2) - 1)}), nbsvm-tokenized text"
                             if not args.no_fasttext else "off",
        "fastText bench": f"train_supervised(seed=SEED, {_kw(BENCH_FASTTEXT)}) (make bench's "
                          "settings, pipelines/peers/fasttext_text.py), nbsvm-tokenized text"
                          if not args.no_fasttext else "off",
        "cores": os.cpu_count(), **versions(not args.no_fasttext)},
        [__file__, *(argv if argv is not None else sys.argv[1:])])
    built = plan(args.shapes, args.seed, args.quick)
    print(f"== warm-up (untimed): {warm_up(systems, args.seed, args.budget):.1f} s", flush=True)

    rows = []
    turn = 0
    for name in args.shapes:
        shape = _shapes.SHAPES[name]
        for k, fold in enumerate(built[name]):
            order = systems[turn % len(systems):] + systems[:turn % len(systems)]
            turn += 1
            for system in order:
                r = run_fold(system, fold, args.seed, args.budget, shape.no_spaces)
                rows.append({"shape": name, "fold": k, "system": system,
                             "n_train": len(fold[0]), "n_test": len(fold[2]),
                             "classes": len(set(fold[1])), **r})
                print(f"  {name:16s} fold {k} {system:15s} accuracy {r['accuracy']:6.2f}  "
                      f"macro-F1 {r['macro_f1']:6.2f}  log loss {r['log_loss']:.4f}  "
                      f"{r['seconds']:7.1f} s"
                      + (f"  (auto: {r['auto_chosen']}, search {r['auto_search_s']:.1f} s)"
                         if system == "nbsvm auto" else ""), flush=True)
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
    write_results("robustness", frame, title="Robustness: nbsvm on every shape of text, beside "
                  "scikit-learn and fastText", config=config,
                  out=Path(args.out) if args.out else None,
                  notes=report_notes(args, systems, checks, tables, elapsed))
    return frame, checks


def _se(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 \
        else float("nan")


def summarize(folds: pd.DataFrame, names, systems) -> pd.DataFrame:
    out = []
    for name in names:
        shape = _shapes.SHAPES[name]
        for system in systems:
            f = folds[(folds["shape"] == name) & (folds["system"] == system)]
            row = {"shape": name, "kind": shape.kind,
                   "system": DISPLAY.get(system, system),
                   "folds": len(f), "n_train": int(f.n_train.iloc[0]),
                   "n_test": int(f.n_test.iloc[0]), "classes": int(f.classes.iloc[0])}
            for metric in ("accuracy", "macro_f1", "log_loss", "seconds"):
                # a fold without probabilities leaves the mean undefined (not skipped)
                row[metric] = float(f[metric].mean(skipna=False))
                row[f"{metric}_se"] = _se(f[metric])
            row["zero_probability_pct"] = float(f["zero_probability_pct"].mean(skipna=False))
            row["calibration_seconds"] = float(f["calibration_seconds"].mean()) \
                if "calibration_seconds" in f and f["calibration_seconds"].notna().any() \
                else float("nan")
            row["fold_accuracies"] = ";".join(f"{a:.2f}" for a in f.accuracy)
            if system == "nbsvm auto":
                row["auto_chosen"] = "; ".join(f.auto_chosen)
                row["auto_search_s_max"] = float(f.auto_search_s.max())
                row["auto_stopped_by_budget"] = int(f.auto_stopped_by_budget.sum())
            else:
                row["auto_chosen"], row["auto_search_s_max"] = "", float("nan")
                row["auto_stopped_by_budget"] = float("nan")
            out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


def _row(frame, name, system):
    return frame[(frame["shape"] == name) & (frame.system == system)].iloc[0]


def check_table(frame: pd.DataFrame, names) -> pd.DataFrame:
    """One row per shape: the three checks, each ``pass``/``FAIL`` with its margin."""
    out = []
    for name in names:
        d, a = _row(frame, name, "nbsvm defaults"), _row(frame, name, "nbsvm auto")
        b = _row(frame, name, BASELINE_NAME)
        c1 = d.accuracy >= b.accuracy - 0.5
        c2 = a.accuracy >= b.accuracy and a.accuracy >= d.accuracy
        c3 = d.log_loss <= b.log_loss + 0.1
        out.append({
            "shape": name, "kind": _shapes.SHAPES[name].kind,
            "defaults >= baseline - 0.5": f"{'pass' if c1 else 'FAIL'} "
                                          f"({d.accuracy - b.accuracy:+.2f})",
            "auto >= baseline and >= defaults": f"{'pass' if c2 else 'FAIL'} "
                                                f"({a.accuracy - b.accuracy:+.2f}, "
                                                f"{a.accuracy - d.accuracy:+.2f})",
            "defaults log loss <= calibrated baseline + 0.1":
                f"{'pass' if c3 else 'FAIL'} ({d.log_loss:.3f} vs {b.log_loss:.3f})",
            "all": "pass" if c1 and c2 and c3 else "FAIL"})
    return pd.DataFrame(out)


def _cell(value, se, digits) -> str:
    if not np.isfinite(value):
        return "n/a"
    return f"{value:.{digits}f}" + (f" ± {se:.{digits}f}" if np.isfinite(se) else "")


def shape_tables(frame: pd.DataFrame, names, systems) -> dict:
    tables = {}
    for name in names:
        out = []
        for system in systems:
            r = _row(frame, name, DISPLAY.get(system, system))
            label = r.system + (" (char 1-3)" if _shapes.SHAPES[name].no_spaces
                                and system == "baseline" else "")
            loss = _cell(r.log_loss, r.log_loss_se, 3)
            if system == "nbsvm auto" and not np.isfinite(r.log_loss):
                loss = "n/a (hinge chosen: no probabilities)"
            if np.isfinite(r.zero_probability_pct) and r.zero_probability_pct > 0:
                loss += f"; true class at p < 1e-15: {r.zero_probability_pct:.1f}%"
            if system == "baseline":
                loss += " (calibrated)"
            out.append({"system": label, "accuracy (%)": _cell(r.accuracy, r.accuracy_se, 2),
                        "macro-F1 (%)": _cell(r.macro_f1, r.macro_f1_se, 2),
                        "log loss": loss, "seconds": _cell(r.seconds, r.seconds_se, 1)})
        tables[name] = pd.DataFrame(out)
    return tables


def report_notes(args, systems, checks, tables, elapsed) -> list[str]:
    n_pass = int((checks["all"] == "pass").sum())
    notes = [
        "Every shape of text the shared corpora give (`pipelines/_shapes.py`), with nbsvm's "
        "defaults (`NBSVMClassifier()`), nbsvm `auto=True` (budget "
        f"{args.budget:g} s per search), scikit-learn's `TfidfVectorizer(ngram_range=(1, 2), "
        "sublinear_tf=True) + LinearSVC()` (character 1-3-grams, `analyzer='char'`, on the "
        "shape without spaces) and "
        + ("fastText twice: `train_supervised(wordNgrams=2)` with its defaults otherwise "
           "(lr 0.1, dim 100, epoch 5, one thread here: as its users run it), and with "
           f"`make bench`'s settings ({_kw(BENCH_FASTTEXT)}, chosen on IMDB's training "
           "split), both on nbsvm-tokenized text as in `make bench`"
           if not args.no_fasttext else "no fastText (`--no-fasttext`)")
        + ", on the same folds, in one process. Accuracy and macro-F1 in percent; log loss "
        "of the true class's probability (nbsvm's `predict_proba`; the baseline's from "
        "`CalibratedClassifierCV(LinearSVC(), cv=3)` fitted on the same training part, "
        "beside the uncalibrated LinearSVC's accuracy; fastText's `predict(k=-1)`); seconds "
        "of fit + predict (+ predict_proba) wall time per fold (the baseline's vectorizing "
        "included, its calibrated copy not: `calibration_seconds` in the CSV), systems "
        "alternated fold by fold after an untimed warm-up. Mean over folds ± its standard "
        "error where a shape has several (a few-documents shape's folds are three draws "
        "of the training reviews against one test sample).",
        "No Chinese shape: there is no Chinese corpus in the shared datasets.",
        f"Run: {'--quick sizes, ' if args.quick else ''}seed {args.seed}, "
        f"{elapsed / 60:.1f} minutes in all. {n_pass} of {len(checks)} shapes pass all "
        "three checks.",
        "## Checks\n\n" + markdown_table(checks),
    ]
    for name, table in tables.items():
        shape = _shapes.SHAPES[name]
        row = checks[checks["shape"] == name].iloc[0]
        notes.append(f"## {name} ({shape.kind})\n\n{shape.description}. Checks: defaults "
                     f"{row['defaults >= baseline - 0.5']}; auto "
                     f"{row['auto >= baseline and >= defaults']}; log loss "
                     f"{row['defaults log loss <= calibrated baseline + 0.1']}.\n\n"
                     + markdown_table(table))
    notes.append("## All figures (`results/robustness.csv`)")
    return notes


if __name__ == "__main__":
    main()
