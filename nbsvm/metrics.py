"""Classification metrics from a confusion matrix, as plain dicts and pandas tables."""
from __future__ import annotations

import numpy as np


def confusion_matrix(true_codes: np.ndarray, pred_codes: np.ndarray, n_classes: int) -> np.ndarray:
    """``cm[i, j]`` = documents of class i predicted as class j."""
    cm = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(cm, (true_codes, pred_codes), 1)
    return cm


def report(cm: np.ndarray, classes: list[str], log_loss_sum: float | None = None) -> dict:
    """Accuracy, per-class and macro precision / recall / F1, and mean log loss if given.

    Examples
    --------
    >>> r = report(np.array([[3, 1], [0, 4]]), ["neg", "pos"])
    >>> r["accuracy"], r["per_class"]["pos"]["precision"]
    (0.875, 0.8)
    """
    n = int(cm.sum())
    tp = np.diag(cm).astype(np.float64)
    pred = cm.sum(axis=0).astype(np.float64)
    true = cm.sum(axis=1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(pred > 0, tp / pred, 0.0)
        recall = np.where(true > 0, tp / true, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    per_class = {c: dict(precision=float(precision[i]), recall=float(recall[i]), f1=float(f1[i]),
                         support=int(true[i])) for i, c in enumerate(classes)}
    out = dict(n_docs=n, accuracy=float(tp.sum() / n) if n else 0.0,
               macro_precision=float(precision.mean()), macro_recall=float(recall.mean()),
               macro_f1=float(f1.mean()), per_class=per_class,
               confusion_matrix=cm.tolist(), classes=list(classes))
    if log_loss_sum is not None and n:
        out["log_loss"] = float(log_loss_sum / n)
    return out


def report_table(rep: dict) -> "pd.DataFrame":
    """A tidy table of a report: columns ``metric, class, value``."""
    import pandas as pd

    rows = [("accuracy", "", rep["accuracy"])]
    if "log_loss" in rep:
        rows.append(("log_loss", "", rep["log_loss"]))
    for m in ("precision", "recall", "f1"):
        rows.append((f"macro_{m}", "", rep[f"macro_{m}"]))
    for c, vals in rep["per_class"].items():
        for m, v in vals.items():
            rows.append((m, c, v))
    for i, c in enumerate(rep["classes"]):
        for j, c2 in enumerate(rep["classes"]):
            rows.append((f"confusion[true={c},pred={c2}]", c, rep["confusion_matrix"][i][j]))
    rows.append(("n_docs", "", rep["n_docs"]))
    return pd.DataFrame(rows, columns=["metric", "class", "value"])
