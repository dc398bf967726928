"""The figures of ``pipelines/iris_ogd.py``: projected OGD's cumulative mean squared error
against the batch least-squares optimum, drawn with matplotlib (:func:`ogd_curves`) or as a
self-contained SVG without it (:func:`ogd_curves_svg`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.evaluation.plot import COLORS, _format, _new_figure, _save

if TYPE_CHECKING:
    from typing import TypeAlias

    #: one curve per setting: ``(label, after, before)``, cumulative mean squared errors
    Series: TypeAlias = Sequence[
        tuple[str, Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]
    ]


def ogd_curves(
    series: Series,
    best: float,
    path: str | os.PathLike[str],
    y_max: float = 0.05,
    colors: Sequence[str] | None = None,
) -> Path:
    """The iris OGD experiment's median curves (``series``: ``(label, after, before)`` per
    setting; cumulative mean squared error after / before each update) against the batch
    least-squares optimum ``best``, clipped to ``[0, y_max]``."""
    _format(path)
    colors = colors or [COLORS[0], COLORS[2], COLORS[4]]
    fig = _new_figure(figsize=(9, 4.6), dpi=100)
    ax = fig.subplots()
    ax.axhline(best, color="red", linestyle="--", label="batch least squares")
    for (label, after, before), color in zip(series, colors):
        t = np.arange(1, len(after) + 1)
        ax.plot(t, after, color=color, label=f"{label}, after update")
        ax.plot(t, before, color=color, linestyle=":", label=f"{label}, before update")
    ax.set_ylim(0, y_max)
    ax.set_xlabel("t (examples seen)")
    ax.set_ylabel("C_t / t")
    ax.set_title("Projected OGD on iris: cumulative mean squared error (median of shuffles)")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return _save(fig, path)


def ogd_curves_svg(
    series: Series,
    best: float,
    y_max: float = 0.05,
    width: int = 920,
    height: int = 460,
    colors: Sequence[str] | None = None,
) -> str:
    """:func:`ogd_curves` as a self-contained SVG document (a string; no matplotlib)."""
    colors = colors or [COLORS[0], COLORS[2], COLORS[4]]
    T = max(len(after) for _, after, _ in series)
    left, right, top, bottom = 70, 330, 40, 50
    pw, ph = width - left - right, height - top - bottom

    def px(t):
        return left + t / T * pw

    def py(v):
        return top + ph - min(max(v, 0.0), y_max) / y_max * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="14">Projected OGD on iris: cumulative mean '
        f'squared error (median of shuffles)</text>',
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>',
    ]
    for t in range(0, T + 1, 25):
        x = px(t)
        out += [
            f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 5}" stroke="black"/>',
            f'<text x="{x:.1f}" y="{top + ph + 18}" text-anchor="middle">{t}</text>',
        ]
    for k in range(6):
        v = y_max * k / 5
        out += [
            f'<line x1="{left - 5}" y1="{py(v):.1f}" x2="{left + pw}" y2="{py(v):.1f}" '
            f'stroke="#ddd"/>',
            f'<text x="{left - 8}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.2f}</text>',
        ]
    out += [
        f'<text x="{left + pw / 2}" y="{height - 12}" text-anchor="middle">t (examples '
        f'seen)</text>',
        f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + ph / 2})">C_t / t</text>',
        f'<line x1="{left}" y1="{py(best):.1f}" x2="{left + pw}" y2="{py(best):.1f}" '
        f'stroke="red" stroke-dasharray="6,4"/>',
    ]
    legend = [("batch least squares", "red", "6,4")]
    for (label, after, before), color in zip(series, colors):
        for values, dash, name in ((after, "", "after update"), (before, "3,3", "before update")):
            pts = " ".join(f"{px(t):.1f},{py(v):.1f}" for t, v in enumerate(values, 1))
            out.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
                + (f'stroke-dasharray="{dash}" ' if dash else "")
                + f'points="{pts}"/>'
            )
            legend.append((f"{label}, {name}", color, dash))
    out += _svg_legend(legend, left + pw + 15, top + 10)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_legend(legend, lx, ly) -> list[str]:
    """The SVG elements of a legend at ``(lx, ly)``: a line sample (``(text, color, dash)``
    per entry; ``dash`` empty: solid) and its text per row."""
    out: list[str] = []
    for i, (text, color, dash) in enumerate(legend):
        y0 = ly + 20 * i
        out += [
            f'<line x1="{lx}" y1="{y0}" x2="{lx + 25}" y2="{y0}" stroke="{color}" '
            f'stroke-width="1.5"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>",
            f'<text x="{lx + 30}" y="{y0 + 4}" font-size="10">{text}</text>',
        ]
    return out
