"""Figures of a run: training curves and ROC / precision-recall / confusion matrix, and the
figure files they (and :mod:`nbsvm.evaluation.ogd_plot`) are written to.

matplotlib is the optional ``plot`` extra (``pip install 'nbsvm[plot]'``), imported only
inside these functions; without it they raise :class:`~nbsvm.errors.NBSVMError`. Figures are
drawn on ``matplotlib.figure.Figure`` objects rendered by the Agg canvas, never through
``pyplot``: no screen is needed and a caller's interactive backend is left alone. The format
follows the file's suffix (``.png``, ``.svg`` or ``.pdf``); the file is written to a
temporary name and renamed, so an interrupted run leaves no partial figure.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.evaluation.metrics import (
    average_precision,
    confusion_matrix,
    precision_recall_curve,
    roc_curve,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


MISSING = "plots need matplotlib: pip install 'nbsvm[plot]'"
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
COLORS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


def available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        _figure_class()
    except NBSVMError:
        return False
    return True


def check(path: str | os.PathLike[str]) -> str:
    """Raise :class:`NBSVMError` now (before a long run) if ``path`` cannot be written as a
    figure: an unknown suffix, or no matplotlib. Returns the format."""
    fmt = _format(path)
    _figure_class()
    return fmt


def _format(path) -> str:
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise NBSVMError(f"a plot file must end in {', '.join(FORMATS)}", path=str(path))
    return fmt


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise NBSVMError(MISSING) from None
    return Figure


def _new_figure(**kw):
    return _figure_class()(**kw)


def _save(fig, path) -> Path:
    """Write ``fig`` atomically in the format of ``path``'s suffix."""
    from nbsvm.io.npzfile import atomic_path

    fmt = _format(path)
    # SVG and PDF embed the date unless told not to: keep reruns byte-identical
    metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else None
    with atomic_path(path, suffix="." + fmt) as tmp:
        fig.savefig(tmp, format=fmt, metadata=metadata)
    return Path(path)


# ---- training ----------------------------------------------------------------------------


def training_curve(history: dict, path: str | os.PathLike[str], title: str | None = None) -> Path:
    """Mean training loss per epoch and, when ``history`` has it, held-out accuracy per
    epoch on a second axis.

    ``history``: ``{"epoch": [1, 2, ...], "loss": [...], "test_accuracy": [...]}`` (the
    last optional; ``None`` / NaN where an epoch has no value), as
    :meth:`nbsvm.evaluation.heldout.EpochHistory.as_dict` gives.
    """
    _format(path)
    epochs = np.asarray(history.get("epoch", []), dtype=np.int64)
    loss = np.array([np.nan if v is None else v for v in history.get("loss", [])], dtype=float)
    if epochs.size == 0 or epochs.size != loss.size:
        raise NBSVMError(
            "no training history to plot (one loss per epoch is needed)", path=str(path)
        )
    acc = history.get("test_accuracy")
    acc = None if acc is None else np.array([np.nan if v is None else v for v in acc], dtype=float)
    fig = _new_figure(figsize=(7.5, 4.5), dpi=110)  # raises first without matplotlib
    from matplotlib.ticker import FormatStrFormatter

    ax = fig.subplots()
    lines = ax.plot(epochs, loss, marker="o", color=COLORS[0], label="mean training loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss over the epoch", color=COLORS[0])
    ax.tick_params(axis="y", labelcolor=COLORS[0])
    ax.set_xticks(
        epochs
        if epochs.size <= 20
        else np.unique(np.linspace(epochs[0], epochs[-1], 11).round().astype(int))
    )
    ax.grid(alpha=0.3)
    if acc is not None and acc.size == epochs.size and np.isfinite(acc).any():
        ax2 = ax.twinx()
        last = acc[np.isfinite(acc)][-1]
        lines += ax2.plot(
            epochs,
            100 * acc,
            marker="s",
            color=COLORS[1],
            label=f"held-out accuracy (last {100 * last:.2f}%)",
        )
        ax2.set_ylabel("held-out accuracy (%)", color=COLORS[1])
        ax2.yaxis.set_major_formatter(FormatStrFormatter("%.2f"))
        lo, hi = np.nanmin(100 * acc), np.nanmax(100 * acc)
        if hi - lo < 1.0:  # at least one point: noise in the last digits looks flat
            ax2.set_ylim((lo + hi) / 2 - 0.6, (lo + hi) / 2 + 0.6)
        ax2.tick_params(axis="y", labelcolor=COLORS[1])
    ax.legend(
        lines,
        [line.get_label() for line in lines],
        loc="upper center",
        fontsize=9,
        bbox_to_anchor=(0.5, -0.13),
        ncol=2,
        frameon=False,
    )
    ax.set_title(title or "Training curve", fontsize=11)
    fig.tight_layout()
    return _save(fig, path)


# ---- evaluation --------------------------------------------------------------------------


def roc_pr_confusion(
    y_true: ArrayLike,
    scores: ArrayLike,
    classes: Sequence[str],
    path: str | os.PathLike[str],
    confusion: ArrayLike | None = None,
    threshold: float = 0.0,
    title: str | None = None,
    reliability: dict | None = None,
    confusion_classes: Sequence[str] | None = None,
) -> Path:
    """ROC, precision-recall and confusion matrix of a classifier's scores.

    ``y_true``: class indices into ``classes``; ``scores``: shape ``(n,)`` or ``(n, 1)``
    (two classes: the score of ``classes[1]``) or ``(n, K)`` (one-vs-rest, a column per
    class). Two classes: ROC with its AUC, precision-recall with its average precision
    (the positive class is ``classes[1]``) and the confusion matrix, side by side; more:
    one ROC curve per class (one against the rest) and the confusion matrix.
    ``confusion``: the matrix to show (default: predictions ``score > threshold`` for two
    classes, the highest score for more). ``reliability``: a reliability diagram beside them,
    from :meth:`~nbsvm.learners.calibrator.ReliabilityHistogram.table` (with its ``ece``).
    ``confusion_classes``: the names of ``confusion``'s rows and columns when it has more
    than ``classes`` (true labels the model does not know: an evaluation's report); the
    title's accuracy is the matrix's.
    """
    _format(path)
    classes = [str(c) for c in classes]
    k = len(classes)
    y = np.asarray(y_true, dtype=np.int64).ravel()
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 1:
        s = s[:, None]
    if k < 2 or s.shape[0] != y.size or s.shape[1] not in ((1,) if k == 2 else (k,)):
        raise NBSVMError(
            f"scores of shape {s.shape} do not fit {y.size} labels of {k} classes", path=str(path)
        )
    if y.size == 0:
        raise NBSVMError("no documents to plot", path=str(path))
    if confusion is None:
        pred = (s[:, 0] > threshold).astype(np.int64) if k == 2 else np.argmax(s, axis=1)
        confusion = confusion_matrix(y, pred, k)
    cm = np.asarray(confusion, dtype=np.int64)
    binary = k == 2
    ratios = [1, 1, 1] if binary else [1.1, 1]
    if reliability is not None:
        ratios = ratios[:-1] + [1] + ratios[-1:]
    fig = _new_figure(figsize=(5 * len(ratios), 4.8 if binary else 5.2), dpi=100)
    axes = fig.subplots(1, len(ratios), gridspec_kw={"width_ratios": ratios})
    if reliability is not None:
        _reliability_panel(axes[-2], reliability)
    if binary:
        pos = y == 1
        _roc_panel(axes[0], [(f"{classes[1]} against {classes[0]}", pos, s[:, 0])])
        _pr_panel(axes[1], pos, s[:, 0], classes[1])
    else:
        _roc_panel(axes[0], [(c, y == i, s[:, i]) for i, c in enumerate(classes)], one_vs_rest=True)
    _confusion_panel(axes[-1], cm, [str(c) for c in confusion_classes or classes])
    accuracy = np.trace(cm) / max(cm.sum(), 1)
    head = f"{title}: " if title else ""
    fig.suptitle(
        f"{head}accuracy {100 * accuracy:.2f}% on {int(cm.sum()):,} documents", fontsize=12
    )
    fig.tight_layout()
    return _save(fig, path)


def _roc_panel(ax, curves, one_vs_rest=False):
    from nbsvm.evaluation.metrics import roc_auc

    aucs = []
    for i, (name, truth, score) in enumerate(curves):
        color = COLORS[i % len(COLORS)]
        if truth.all() or not truth.any():
            ax.plot([], [], color=color, label=f"{name}: no ROC (one class only)")
            continue
        fpr, tpr, _ = roc_curve(truth, score)
        auc = roc_auc(truth, score)
        aucs.append(auc)
        ax.plot(fpr, tpr, color=color, lw=1.6, label=f"{name} (AUC {auc:.4f})")
    ax.plot([0, 1], [0, 1], color="grey", lw=1, linestyle="--", label="chance (AUC 0.5)")
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    if one_vs_rest and aucs:
        ax.set_title(
            f"ROC, each class against the rest (macro AUC {np.mean(aucs):.4f})", fontsize=10
        )
    else:
        ax.set_title("ROC" + (f" (AUC {aucs[0]:.4f})" if aucs else ""), fontsize=10)
    ax.legend(loc="lower right", fontsize=8 if len(curves) <= 6 else 6)
    ax.grid(alpha=0.3)


def _pr_panel(ax, truth, score, positive: str):
    if truth.all() or not truth.any():
        ax.text(
            0.5,
            0.5,
            "no precision-recall curve:\none class only",
            ha="center",
            va="center",
            transform=ax.transAxes,
        )
    else:
        precision, recall, _ = precision_recall_curve(truth, score)
        ap = average_precision(truth, score)
        # a step drawn as the average precision sums it (precision held until the next point)
        ax.step(
            recall,
            precision,
            where="pre",
            color=COLORS[0],
            lw=1.6,
            label=f"{positive} (average precision {ap:.4f})",
        )
        rate = truth.mean()
        ax.axhline(
            rate, color="grey", lw=1, linestyle="--", label=f"chance (positive rate {rate:.3f})"
        )
        ax.set_title(f"Precision-recall of '{positive}' (AP {ap:.4f})", fontsize=10)
        ax.legend(loc="lower left", fontsize=8)
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.grid(alpha=0.3)


def _confusion_panel(ax, cm, classes):
    k = len(classes)
    rows = cm.sum(axis=1, keepdims=True)
    share = np.divide(cm, rows, out=np.zeros(cm.shape), where=rows > 0)
    im = ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="share of the true class")
    ax.set_xticks(range(k))
    ax.set_yticks(range(k))
    size = 9 if k <= 6 else 7 if k <= 12 else 5
    ax.set_xticklabels(
        classes, rotation=45 if k > 4 else 0, ha="right" if k > 4 else "center", fontsize=size
    )
    ax.set_yticklabels(classes, fontsize=size)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title("Confusion matrix (counts, share of row)", fontsize=10)
    if k <= 15:
        for i in range(k):
            for j in range(k):
                ax.text(
                    j,
                    i,
                    f"{cm[i, j]:,}\n{100 * share[i, j]:.1f}%",
                    ha="center",
                    va="center",
                    fontsize=size,
                    color="white" if share[i, j] > 0.5 else "black",
                )


def _reliability_panel(ax, table: dict):
    """Mean confidence against the share right, per bin of confidence (a calibrated model
    lies on the diagonal); the bars below show how many documents each bin holds."""
    conf = np.asarray(table["confidence"])
    acc = np.asarray(table["accuracy"])
    count = np.asarray(table["count"], dtype=float)
    ece = table.get("ece")
    ax.plot([0, 1], [0, 1], color="grey", lw=1, linestyle="--", label="perfectly calibrated")
    ax.plot(
        conf,
        acc,
        marker="o",
        color=COLORS[1],
        lw=1.6,
        label="model" + (f" (ECE {ece:.4f})" if ece is not None else ""),
    )
    if count.size:
        lower, upper = np.asarray(table["lower"]), np.asarray(table["upper"])
        ax.bar(
            lower,
            0.25 * count / count.max(),
            width=upper - lower,
            align="edge",
            color=COLORS[0],
            alpha=0.25,
            label="documents per bin (scaled)",
        )
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel("predicted probability of the top class")
    ax.set_ylabel("share of documents right")
    ax.set_title("Reliability" + (f" (ECE {ece:.4f})" if ece is not None else ""), fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
