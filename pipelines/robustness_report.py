"""The robustness report: per-shape summaries with standard errors, the checks, the shape
tables, the notes, and the code and library versions that produced them."""

from __future__ import annotations

import platform
import subprocess

import _shapes
import numpy as np
import pandas as pd
from _report import ROOT, markdown_table
from robustness_systems import BASELINE_NAME, BENCH_FASTTEXT, COLUMNS, DISPLAY, _kw


def git_state() -> dict:
    def git(*args):
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    status = git("status", "--short").splitlines()
    return {
        "git_head": git("rev-parse", "HEAD").strip() or "unknown",
        "git_status_short_lines": len(status),
        "git_status_short": status[:40],
    }


def versions(fasttext_on: bool) -> dict:
    import sklearn

    import nbsvm

    out = {
        "python": platform.python_version(),
        "nbsvm": getattr(nbsvm, "__version__", "?"),
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
    }
    if fasttext_on:
        from importlib.metadata import version

        out["fasttext"] = version("fasttext")
    return out


def _se(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")


def summarize(folds: pd.DataFrame, names, systems) -> pd.DataFrame:
    out = []
    for name in names:
        shape = _shapes.SHAPES[name]
        for system in systems:
            f = folds[(folds["shape"] == name) & (folds["system"] == system)]
            row = {
                "shape": name,
                "kind": shape.kind,
                "system": DISPLAY.get(system, system),
                "folds": len(f),
                "n_train": int(f.n_train.iloc[0]),
                "n_test": int(f.n_test.iloc[0]),
                "classes": int(f.classes.iloc[0]),
            }
            for metric in ("accuracy", "macro_f1", "log_loss", "seconds"):
                # a fold without probabilities leaves the mean undefined (not skipped)
                row[metric] = float(f[metric].mean(skipna=False))
                row[f"{metric}_se"] = _se(f[metric])
            row["zero_probability_pct"] = float(f["zero_probability_pct"].mean(skipna=False))
            row["calibration_seconds"] = (
                float(f["calibration_seconds"].mean())
                if "calibration_seconds" in f and f["calibration_seconds"].notna().any()
                else float("nan")
            )
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
        out.append(
            {
                "shape": name,
                "kind": _shapes.SHAPES[name].kind,
                "defaults >= baseline - 0.5": f"{'pass' if c1 else 'FAIL'} "
                f"({d.accuracy - b.accuracy:+.2f})",
                "auto >= baseline and >= defaults": f"{'pass' if c2 else 'FAIL'} "
                f"({a.accuracy - b.accuracy:+.2f}, "
                f"{a.accuracy - d.accuracy:+.2f})",
                "defaults log loss <= calibrated baseline + 0.1": f"{'pass' if c3 else 'FAIL'} ({d.log_loss:.3f} vs {b.log_loss:.3f})",
                "all": "pass" if c1 and c2 and c3 else "FAIL",
            }
        )
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
            label = r.system + (
                " (char 1-3)" if _shapes.SHAPES[name].no_spaces and system == "baseline" else ""
            )
            loss = _cell(r.log_loss, r.log_loss_se, 3)
            if system == "nbsvm auto" and not np.isfinite(r.log_loss):
                loss = "n/a (hinge chosen: no probabilities)"
            if np.isfinite(r.zero_probability_pct) and r.zero_probability_pct > 0:
                loss += f"; true class at p < 1e-15: {r.zero_probability_pct:.1f}%"
            if system == "baseline":
                loss += " (calibrated)"
            out.append(
                {
                    "system": label,
                    "accuracy (%)": _cell(r.accuracy, r.accuracy_se, 2),
                    "macro-F1 (%)": _cell(r.macro_f1, r.macro_f1_se, 2),
                    "log loss": loss,
                    "seconds": _cell(r.seconds, r.seconds_se, 1),
                }
            )
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
        + (
            "fastText twice: `train_supervised(wordNgrams=2)` with its defaults otherwise "
            "(lr 0.1, dim 100, epoch 5, one thread here: as its users run it), and with "
            f"`make bench`'s settings ({_kw(BENCH_FASTTEXT)}, chosen on IMDB's training "
            "split), both on nbsvm-tokenized text as in `make bench`"
            if not args.no_fasttext
            else "no fastText (`--no-fasttext`)"
        )
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
        notes.append(
            f"## {name} ({shape.kind})\n\n{shape.description}. Checks: defaults "
            f"{row['defaults >= baseline - 0.5']}; auto "
            f"{row['auto >= baseline and >= defaults']}; log loss "
            f"{row['defaults log loss <= calibrated baseline + 0.1']}.\n\n" + markdown_table(table)
        )
    notes.append("## All figures (`results/robustness.csv`)")
    return notes
