"""Classification metrics from a confusion matrix, as plain dicts and pandas tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike


#: Labels the model does not know, tracked one by one (each is a class of the report);
#: the others are counted together as :data:`OTHER_UNSEEN` (a column of ids read as labels
#: made a million classes: 1.7 GB).
MAX_UNSEEN = 1000
OTHER_UNSEEN = "(other labels the model does not know)"


def unseen_key(label: str, unseen: dict) -> str:
    """Where a label the model does not know is counted in ``unseen``: its own entry, or
    past :data:`MAX_UNSEEN` of them, :data:`OTHER_UNSEEN`.

    >>> unseen_key("x", {}), unseen_key("y", dict.fromkeys(map(str, range(MAX_UNSEEN))))
    ('x', '(other labels the model does not know)')
    """
    return label if label in unseen or len(unseen) < MAX_UNSEEN else OTHER_UNSEEN


def confusion_matrix(true_codes: np.ndarray, pred_codes: np.ndarray, n_classes: int) -> np.ndarray:
    """``cm[i, j]`` = documents of class i predicted as class j."""
    cm = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(cm, (true_codes, pred_codes), 1)
    return cm


#: Labels the model does not know that get a row and column of their own in a report's
#: confusion matrix; the others share one (their metrics are each in ``per_class``).
SHOWN_UNSEEN = 50


def report(
    cm: np.ndarray,
    classes: list[str],
    log_loss_sum: float | None = None,
    unseen: dict | None = None,
) -> dict:
    """Accuracy, per-class and macro precision / recall / F1, and mean log loss if given.

    ``unseen``: true labels the model does not know, each with its row of predictions
    over ``classes``: classes of the report never predicted (recall 0). The confusion
    matrix gives the first :data:`SHOWN_UNSEEN` a row and a column each and the rest one
    shared ``(N more labels the model does not know)``, so that its size does not grow
    with them (an ID column read as labels: 15,000 of them took 3 GB).

    Examples
    --------
    >>> r = report(np.array([[3, 1], [0, 4]]), ["neg", "pos"])
    >>> r["accuracy"], r["per_class"]["pos"]["precision"]
    (0.875, 0.8)
    >>> r = report(np.array([[3, 1], [0, 4]]), ["neg", "pos"], unseen={"x": np.array([0, 2])})
    >>> r["accuracy"], r["per_class"]["pos"]["precision"], r["classes"]
    (0.7, 0.5714285714285714, ['neg', 'pos', 'x'])
    """
    unseen = unseen or {}
    k, names = len(classes), list(classes) + list(unseen)
    rows = np.array(list(unseen.values()), dtype=np.int64).reshape(len(unseen), k)
    tp = np.concatenate([np.diag(cm), np.zeros(len(unseen))]).astype(np.float64)
    pred = np.concatenate([cm.sum(axis=0) + rows.sum(axis=0), np.zeros(len(unseen))])
    true = np.concatenate([cm.sum(axis=1), rows.sum(axis=1)]).astype(np.float64)
    n = int(true.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(pred > 0, tp / pred, 0.0)
        recall = np.where(true > 0, tp / true, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    per_class = {
        c: dict(
            precision=float(precision[i]),
            recall=float(recall[i]),
            f1=float(f1[i]),
            support=int(true[i]),
        )
        for i, c in enumerate(names)
    }
    shown, matrix = _shown_confusion(cm, classes, unseen, rows)
    out = dict(
        n_docs=n,
        accuracy=float(tp.sum() / n) if n else 0.0,
        macro_precision=float(precision.mean()),
        macro_recall=float(recall.mean()),
        macro_f1=float(f1.mean()),
        per_class=per_class,
        confusion_matrix=matrix.tolist(),
        classes=shown,
    )
    if log_loss_sum is not None and n:
        out["log_loss"] = float(log_loss_sum / n)
    return out


def _shown_confusion(
    cm: np.ndarray, classes: list[str], unseen: dict, rows: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """The report's confusion matrix and its classes: the model's, then the labels it does
    not know (predicted never: their columns are 0), beyond :data:`SHOWN_UNSEEN` summed in
    one row."""
    k, labels = len(classes), list(unseen)
    shown = labels[:SHOWN_UNSEEN]
    rest = rows[len(shown) :].sum(axis=0)
    names = list(classes) + shown
    if len(labels) > len(shown):
        names.append(f"({len(labels) - len(shown)} more labels the model does not know)")
        rows = np.vstack([rows[: len(shown)], rest[None, :]])
    matrix = np.zeros((len(names), len(names)), dtype=np.int64)
    matrix[:k, :k] = cm
    matrix[k:, :k] = rows
    return names, matrix


def report_table(rep: dict) -> pd.DataFrame:
    """A tidy table of a report: columns ``metric, class, value``."""
    import pandas as pd

    if rep.get("task") in ("multilabel", "regression"):
        return _task_table(rep, pd)
    rows = [("accuracy", "", rep["accuracy"])]
    for name in ("log_loss", "ece", "roc_auc", "macro_roc_auc"):
        if name in rep:
            rows.append((name, "", rep[name]))
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


# ---- multi-label and regression (the backend learners' tasks) ---------------------------
# Both come as sums that add up over batches (``*_counts`` merged with :func:`add_sums`;
# ``regression_sums`` with :func:`add_regression_sums`), and a report computed from the
# sums, so streaming evaluation needs no more memory than one batch.


def _task_table(rep: dict, pd) -> pd.DataFrame:
    """:func:`report_table` for multi-label and regression reports."""
    if rep["task"] == "regression":
        rows = [(m, "", rep[m]) for m in ("mse", "mae", "r2")]
    else:
        rows = [
            (m, "", rep[m])
            for m in (
                "hamming_loss",
                "subset_accuracy",
                "micro_precision",
                "micro_recall",
                "micro_f1",
                "macro_precision",
                "macro_recall",
                "macro_f1",
            )
        ]
        for c, vals in rep["per_class"].items():
            rows += [(m, c, v) for m, v in vals.items()]
    rows.append(("n_docs", "", rep["n_docs"]))
    return pd.DataFrame(rows, columns=["metric", "class", "value"])


def add_sums(total: dict | None, part: dict) -> dict:
    """``total + part`` key by key (numbers and arrays); ``total`` may be ``None``."""
    if total is None:
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in part.items()}
    return {k: total[k] + part[k] for k in total}


def multilabel_counts(Y_true: ArrayLike, Y_pred: ArrayLike) -> dict:
    """Sums for :func:`multilabel_report` from two ``(n_docs, n_labels)`` indicator matrices
    (true / non-zero = label present)."""
    T = np.asarray(Y_true) > 0
    P = np.asarray(Y_pred) > 0
    if T.shape != P.shape or T.ndim != 2:
        raise ValueError(f"indicator matrices of different shapes: {T.shape} and {P.shape}")
    return dict(
        n_docs=int(T.shape[0]),
        tp=(T & P).sum(axis=0).astype(np.int64),
        fp=(~T & P).sum(axis=0).astype(np.int64),
        fn=(T & ~P).sum(axis=0).astype(np.int64),
        wrong=int((T != P).sum()),
        exact=int((T == P).all(axis=1).sum()),
    )


def _f1(tp, fp, fn):
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
        recall = np.where(tp + fn > 0, tp / np.maximum(tp + fn, 1), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return precision, recall, f1


def multilabel_report(counts: dict, classes: list[str]) -> dict:
    """Hamming loss, subset accuracy, micro and macro precision / recall / F1, per label.

    A label never true nor predicted has F1 0 in the macro mean (scikit-learn's default).

    Examples
    --------
    >>> c = multilabel_counts([[1, 0, 1], [0, 1, 0]], [[1, 0, 0], [0, 1, 0]])
    >>> r = multilabel_report(c, ["a", "b", "c"])
    >>> r["hamming_loss"], r["subset_accuracy"], round(r["micro_f1"], 4), round(r["macro_f1"], 4)
    (0.16666666666666666, 0.5, 0.8, 0.6667)
    """
    n, k = counts["n_docs"], len(classes)
    tp, fp, fn = (np.asarray(counts[key], dtype=np.float64) for key in ("tp", "fp", "fn"))
    precision, recall, f1 = _f1(tp, fp, fn)
    micro_p, micro_r, micro_f1 = _f1(tp.sum(), fp.sum(), fn.sum())
    per_label = {
        c: dict(
            precision=float(precision[i]),
            recall=float(recall[i]),
            f1=float(f1[i]),
            support=int(tp[i] + fn[i]),
        )
        for i, c in enumerate(classes)
    }
    return dict(
        task="multilabel",
        n_docs=n,
        hamming_loss=float(counts["wrong"] / (n * k)) if n and k else 0.0,
        subset_accuracy=float(counts["exact"] / n) if n else 0.0,
        micro_precision=float(micro_p),
        micro_recall=float(micro_r),
        micro_f1=float(micro_f1),
        macro_precision=float(precision.mean()) if k else 0.0,
        macro_recall=float(recall.mean()) if k else 0.0,
        macro_f1=float(f1.mean()) if k else 0.0,
        per_class=per_label,
        classes=list(classes),
    )


def hamming_loss(Y_true: ArrayLike, Y_pred: ArrayLike) -> float:
    """Share of (document, label) decisions that are wrong."""
    c = multilabel_counts(Y_true, Y_pred)
    n, k = c["n_docs"], c["tp"].size
    return c["wrong"] / (n * k) if n and k else 0.0


def subset_accuracy(Y_true: ArrayLike, Y_pred: ArrayLike) -> float:
    """Share of documents whose whole label set is right."""
    c = multilabel_counts(Y_true, Y_pred)
    return c["exact"] / c["n_docs"] if c["n_docs"] else 0.0


def multilabel_f1(Y_true: ArrayLike, Y_pred: ArrayLike) -> tuple[float, float]:
    """``(micro F1, macro F1)`` of two indicator matrices."""
    r = multilabel_report(
        multilabel_counts(Y_true, Y_pred), [str(i) for i in range(np.shape(Y_true)[1])]
    )
    return r["micro_f1"], r["macro_f1"]


def regression_sums(y_true: ArrayLike, y_pred: ArrayLike) -> dict:
    """Sums for :func:`regression_report`, merged over batches by
    :func:`add_regression_sums`: the targets' mean and sum of squared deviations (``m2``)
    rather than their sum of squares, whose difference lost every digit when the mean is
    many times the spread (R^2 of targets 1e6 +- 1 came out nan)."""
    y = np.asarray(y_true, dtype=np.float64)
    e = np.asarray(y_pred, dtype=np.float64) - y
    mean = float(y.mean()) if y.size else 0.0
    return dict(
        n_docs=int(y.size),
        sse=float(e @ e),
        sae=float(np.abs(e).sum()),
        mean_y=mean,
        m2_y=float(((y - mean) ** 2).sum()),
    )


def add_regression_sums(total: dict | None, part: dict) -> dict:
    """Two batches' :func:`regression_sums` as one's (Chan, Golub and LeVeque's pairwise
    update of the mean and ``m2``); ``total`` may be None.

    >>> a, b = regression_sums([1.0, 2.0], [1.0, 2.0]), regression_sums([3.0], [3.0])
    >>> add_regression_sums(a, b) == regression_sums([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    True
    """
    if total is None or not total["n_docs"]:
        return dict(part)
    if not part["n_docs"]:
        return dict(total)
    n_a, n_b = total["n_docs"], part["n_docs"]
    n = n_a + n_b
    delta = part["mean_y"] - total["mean_y"]
    return dict(
        n_docs=n,
        sse=total["sse"] + part["sse"],
        sae=total["sae"] + part["sae"],
        mean_y=total["mean_y"] + delta * n_b / n,
        m2_y=total["m2_y"] + part["m2_y"] + delta * delta * n_a * n_b / n,
    )


def regression_report(sums: dict) -> dict:
    """MSE, MAE and R^2 (``1 - SSE / total sum of squares``; ``nan`` for constant targets).

    Examples
    --------
    >>> r = regression_report(regression_sums([1.0, 2.0, 3.0], [1.5, 2.0, 2.0]))
    >>> r["mse"], r["mae"], r["r2"]
    (0.4166666666666667, 0.5, 0.375)
    """
    n = sums["n_docs"]
    if not n:
        return dict(task="regression", n_docs=0, mse=0.0, mae=0.0, r2=float("nan"))
    sst = sums["m2_y"]
    # constant targets: deviations no larger than the rounding of their mean
    tiny = n * (1e-12 * max(1.0, abs(sums["mean_y"]))) ** 2
    return dict(
        task="regression",
        n_docs=n,
        mse=sums["sse"] / n,
        mae=sums["sae"] / n,
        r2=1.0 - sums["sse"] / sst if sst > tiny else float("nan"),
    )


def mean_squared_error(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    return regression_report(regression_sums(y_true, y_pred))["mse"]


def mean_absolute_error(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    return regression_report(regression_sums(y_true, y_pred))["mae"]


def r2_score(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    return regression_report(regression_sums(y_true, y_pred))["r2"]


# ---- ranking metrics from scores (ROC, precision-recall; numpy only) --------------------
# Same conventions as scikit-learn's roc_curve(drop_intermediate=False), roc_auc_score,
# precision_recall_curve and average_precision_score for a binary target: a threshold at
# every distinct score, ties counted together (a diagonal step on the ROC curve). Labels
# above zero are the positive class (1 / True against 0, -1 / False).


def _binary_counts(y_true, scores):
    """False and true positives at each distinct score, highest first, and those scores."""
    y = _positive(y_true).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ValueError(f"{y.size} labels but {s.size} scores")
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite")
    order = np.argsort(-s, kind="mergesort")
    s, y = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s)), s.size - 1]  # last index of each score
    tps = np.cumsum(y, dtype=np.int64)[last]
    fps = last + 1 - tps
    return fps, tps, s[last]


def _positive(y_true) -> np.ndarray:
    """Labels above zero are positive: 1 / True against 0, -1 or False."""
    return np.asarray(y_true) > 0


def _need_both(y_true, what: str):
    y = _positive(y_true)
    if y.size == 0 or y.all() or not y.any():
        raise ValueError(f"{what} needs both positive and negative examples")


def roc_curve(y_true: ArrayLike, scores: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(fpr, tpr, thresholds)`` of a binary target (labels above 0 are positive: 1 or
    True, against 0, -1 or False), a point per distinct score from ``(0, 0)`` (threshold
    ``inf``) to ``(1, 1)``.

    Examples
    --------
    >>> fpr, tpr, _ = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    _need_both(y_true, "a ROC curve")
    fps, tps, thresholds = _binary_counts(y_true, scores)
    return (np.r_[0, fps] / fps[-1], np.r_[0, tps] / tps[-1], np.r_[np.inf, thresholds])


def roc_auc(y_true: ArrayLike, scores: ArrayLike) -> float:
    """Area under the ROC curve (trapezoids; the probability that a random positive scores
    above a random negative, ties counting one half).

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    fpr, tpr, _ = roc_curve(y_true, scores)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2)


class AUCHistogram:
    """ROC AUC of every output (one against the rest) in bounded memory: each output's scores
    are counted in ``bins`` bins per side (positive, negative) after the monotone map
    ``arctan(s) / pi + 1/2``, so batches add up and nothing grows with the documents
    (``2 x bins`` int64 per output: 256 kB at the default). The area equals the exact one
    but for pairs of a positive and a negative in the same bin, which count one half, as
    ties do: they are pairs whose scores differ by less than ``pi (1 + s^2) / bins``.

    Examples
    --------
    >>> h = AUCHistogram(1)
    >>> h.add(np.array([[0.1], [0.4], [0.35], [0.8]]), np.array([0, 0, 1, 1]), binary=True)
    >>> h.auc()
    [0.75]
    """

    def __init__(self, n_outputs: int, bins: int = 1 << 14):
        self.bins = bins
        self.pos = np.zeros((n_outputs, bins), dtype=np.int64)
        self.neg = np.zeros((n_outputs, bins), dtype=np.int64)

    def add(self, scores: np.ndarray, truth: np.ndarray, binary: bool) -> None:
        """``scores`` ``(n, outputs)``, ``truth`` class indices (two classes, ``binary``:
        class 1 is the positive of the one output)."""
        if not len(truth):
            return
        scores = np.asarray(scores, dtype=np.float64).reshape(len(truth), -1)
        u = np.arctan(np.nan_to_num(scores)) / np.pi + 0.5
        at = np.minimum((u * self.bins).astype(np.int64), self.bins - 1)
        for k in range(scores.shape[1]):
            positive = truth == (1 if binary else k)
            self.pos[k] += np.bincount(at[positive, k], minlength=self.bins)
            self.neg[k] += np.bincount(at[~positive, k], minlength=self.bins)

    def auc(self) -> list:
        """The area of each output (None where it has no positive or no negative)."""
        out: list[float | None] = []
        for pos, neg in zip(self.pos, self.neg):
            n_pos, n_neg = int(pos.sum()), int(neg.sum())
            if not n_pos or not n_neg:
                out.append(None)
                continue
            below = np.cumsum(neg) - neg  # negatives in lower bins
            pairs = float(np.dot(pos, below)) + 0.5 * float(np.dot(pos, neg))
            out.append(pairs / (n_pos * n_neg))
        return out


def precision_recall_curve(
    y_true: ArrayLike, scores: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(precision, recall, thresholds)``, a point per distinct score from the highest
    threshold down, after a first point ``(1, 0)`` (threshold ``inf``)."""
    _need_both(y_true, "a precision-recall curve")
    fps, tps, thresholds = _binary_counts(y_true, scores)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return np.r_[1.0, precision], np.r_[0.0, recall], np.r_[np.inf, thresholds]


def average_precision(y_true: ArrayLike, scores: ArrayLike) -> float:
    """``sum_n (R_n - R_{n-1}) P_n`` over the thresholds (no interpolation).

    Examples
    --------
    >>> round(average_precision([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 4)
    0.8333
    """
    precision, recall, _ = precision_recall_curve(y_true, scores)
    return float(np.sum(np.diff(recall) * precision[1:]))
