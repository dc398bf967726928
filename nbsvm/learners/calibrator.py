"""Probability calibration: a map from a model's scores to probabilities one can trust,
fitted on held-out documents (:mod:`nbsvm.models.calibrate`), one per output.

``sigmoid`` is Platt scaling, ``P = 1 / (1 + exp(-(a s + b)))``, fitted by Newton's method on
Platt's smoothed targets (Lin, Lin & Weng 2007, the fit scikit-learn's
``CalibratedClassifierCV(method="sigmoid")`` makes). ``isotonic`` is the non-decreasing step
function of least squares (pool adjacent violators), interpolated linearly between its
steps' ends and clipped outside them, as scikit-learn's ``IsotonicRegression``; it needs
more data (a thousand documents or so) but assumes no shape. With these two a multi-class
model's outputs (one against the rest, or softmax's logits) are calibrated one by one and
the rows normalized, as scikit-learn does; a multi-label model's are not normalized.
``temperature`` (Guo et al. 2017) fits one inverse temperature ``beta`` for all outputs:
``softmax(beta s)`` for one class per document, ``sigmoid(beta s)`` for two classes and for
labels; it keeps the ranking of the classes (the labels and accuracy do not change) and
suits many classes best.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import numpy as np

from nbsvm.config import CALIBRATIONS
from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

METHODS = CALIBRATIONS  # (config.py: the command line's names too)


def _weights(sample_weight: ArrayLike | None, n: int) -> np.ndarray:
    """``sample_weight`` as ``n`` float64s (None: ones), checked."""
    if sample_weight is None:
        return np.ones(n)
    sw = np.asarray(sample_weight, dtype=np.float64).ravel()
    if sw.shape != (n,) or not np.all(np.isfinite(sw)) or np.any(sw < 0):
        raise NBSVMError(f"sample_weight must be {n} finite numbers >= 0")
    return sw


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # overflow-free logistic


def fit_sigmoid(
    scores: ArrayLike,
    y: ArrayLike,
    max_iter: int = 100,
    sample_weight: ArrayLike | None = None,
) -> tuple[float, float]:
    """Platt's ``(a, b)`` for scores ``s`` and 0/1 outcomes ``y``: the minimum of the cross
    entropy between ``sigmoid(a s + b)`` and Platt's targets ``(n+ + 1) / (n+ + 2)`` for
    positives and ``1 / (n- + 2)`` for negatives (which keep a separable set finite), each
    term times its ``sample_weight`` and the counts summed weights (as scikit-learn's: a
    weight of 2 is the document twice)."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=bool).ravel()
    sw = _weights(sample_weight, s.size)
    n_pos = float(sw[y].sum())  # (weighted counts, as scikit-learn's)
    n_neg = float(sw.sum()) - n_pos
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    a, b = 0.0, float(np.log((n_pos + 1.0) / (n_neg + 1.0)))

    def loss(a, b):
        z = a * s + b  # -t log p - (1-t) log(1-p), written stably
        return float(np.sum(sw * (np.logaddexp(0.0, z) - t * z)))

    value = loss(a, b)
    for _ in range(max_iter):
        p = sigmoid(a * s + b)
        r = sw * (p - t)
        g = np.array([np.dot(r, s), np.sum(r)])
        if np.abs(g).max() < 1e-10 * max(1, s.size):
            break
        w = sw * p * (1 - p)
        h = np.array([[np.dot(w, s * s), np.dot(w, s)], [np.dot(w, s), w.sum()]])
        h += 1e-12 * np.eye(2)
        step = np.linalg.solve(h, g)
        shrink = 1.0
        while shrink > 1e-10:  # backtracking: Newton may overshoot far from the optimum
            na, nb = a - shrink * step[0], b - shrink * step[1]
            new = loss(na, nb)
            if new <= value - 1e-4 * shrink * float(g @ step):
                break
            shrink /= 2
        else:
            break
        a, b, value = na, nb, new
    return float(a), float(b)


def fit_isotonic(
    scores: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The non-decreasing (``sample_weight``-weighted) least-squares fit of 0/1 outcomes
    ``y`` on scores: its knots ``(x, p)`` (both increasing; each step's first and last
    score), for linear interpolation."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    sw = _weights(sample_weight, s.size)
    s, y, sw = s[sw > 0], y[sw > 0], sw[sw > 0]  # (weight 0: no point, not a 0/0 mean)
    if s.size == 0:
        raise NBSVMError("isotonic calibration needs documents")
    x, first = np.unique(s, return_inverse=True)  # equal scores: one point, their mean
    weight = np.bincount(first, weights=sw, minlength=x.size)
    total = np.bincount(first, weights=y * sw, minlength=x.size)
    # pool adjacent violators over blocks (value, weight, first point)
    value: list[float] = []
    mass: list[float] = []
    start: list[int] = []
    for i in range(x.size):
        v, m, st = total[i] / weight[i], weight[i], i
        while value and value[-1] >= v:
            pv, pm, pst = value.pop(), mass.pop(), start.pop()
            v = (pv * pm + v * m) / (pm + m)
            m += pm
            st = pst
        value.append(v)
        mass.append(m)
        start.append(st)
    ends = start[1:] + [x.size]
    knots_x, knots_p = [], []
    for v, st, end in zip(value, start, ends):
        knots_x.append(x[st])
        knots_p.append(v)
        if end - 1 > st:
            knots_x.append(x[end - 1])
            knots_p.append(v)
    return np.asarray(knots_x), np.clip(np.asarray(knots_p), 0.0, 1.0)


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_temperature(
    scores: ArrayLike,
    truth: ArrayLike,
    exclusive: bool,
    smooth: bool = True,
    sample_weight: ArrayLike | None = None,
) -> float:
    """The inverse temperature ``beta`` minimizing the cross entropy of ``softmax(beta s)``
    (one class per row: ``truth`` one-hot) or of ``sigmoid(beta s)`` for every output (two
    classes, labels) against smoothed targets, as Platt's: of ``n`` held-out documents each
    has its class at ``(n + 1) / (n + 2)`` and the rest spread over the other classes (a
    sigmoid: Platt's own, ``(n+ + 1) / (n+ + 2)`` for a positive, ``1 / (n- + 2)`` for a
    negative). They keep a separable held-out set finite: 3 held-out documents, all right,
    gave ``beta`` 147 and probabilities of exactly 0 and 1 to any text (now 2.8); Platt's
    per-class counts in the softmax smoothed too much (30 documents per class, 3 held out:
    log loss 1.50 -> 1.65), the total does not (1.50 -> 1.50; 0.604 -> 0.559 at 3 per
    class of four). ``smooth=False``: the targets as given (scikit-learn's
    ``method='temperature'``). Each document's term is times its ``sample_weight`` (and
    the counts are summed weights: a weight of 2 is the document twice). The
    loss is convex in ``beta``: bisection on its derivative."""
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(truth, dtype=bool)
    sw = _weights(sample_weight, len(s))[:, None]
    if exclusive:
        keep = t.any(axis=1)  # a label the model does not know: no term
        s, t, sw = s[keep], t[keep], sw[keep]
        n = float(sw.sum())
        right = (n + 1.0) / (n + 2.0) if smooth else 1.0
        q = np.where(t, right, (1 - right) / max(1, s.shape[1] - 1))
    elif smooth:
        n_pos = (sw * t).sum(axis=0)
        q = np.where(t, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (sw.sum() - n_pos + 2.0))
    else:
        q = t.astype(np.float64)

    def slope(beta):  # d loss / d beta
        if exclusive:
            p = softmax(beta * s)
            return float(np.sum(sw * (p - q) * s))
        return float(np.sum(sw * (sigmoid(beta * s) - q) * s))

    lo, hi = 0.0, 1.0
    if slope(0.0) >= 0:  # scores that tell nothing: the flattest there is
        return 1e-12
    while slope(hi) < 0 and hi < 1e12:
        lo, hi = hi, hi * 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2


class Calibrator:
    """One calibration map per output: :meth:`fit` on held-out scores and truth,
    :meth:`probabilities` of new scores. Stored in a model file as arrays
    (:meth:`arrays`, :meth:`from_arrays`)."""

    def __init__(self, method: str = "sigmoid", multilabel: bool = False):
        if method not in METHODS:
            raise NBSVMError(
                f"calibration method must be one of {', '.join(METHODS)}, got {method!r}"
            )
        self.method = method
        self.multilabel = multilabel

    def fit(
        self, scores: np.ndarray, truth: np.ndarray, sample_weight: ArrayLike | None = None
    ) -> Calibrator:
        """``scores``: ``(n, n_outputs)``; ``truth``: ``(n, n_outputs)`` of 0 / 1 (the
        output's class is the document's, or among its labels); ``sample_weight``: each
        document's weight in the fit (None: 1)."""
        scores = np.asarray(scores, dtype=np.float64).reshape(len(scores), -1)
        truth = np.asarray(truth, dtype=bool).reshape(scores.shape)
        sw = _weights(sample_weight, len(scores))
        if len(scores) < 2:
            raise NBSVMError("calibration needs at least two held-out documents")
        if self.method == "temperature":
            exclusive = scores.shape[1] > 1 and not self.multilabel
            beta = fit_temperature(scores, truth, exclusive, sample_weight=sw)
            self.knots_ = [np.array([beta, 0.0]) for _ in range(scores.shape[1])]
            return self
        self.knots_ = []
        for k in range(scores.shape[1]):
            if self.method == "sigmoid":
                knots = fit_sigmoid(scores[:, k], truth[:, k], sample_weight=sw)
                self.knots_.append(np.asarray(knots))
            else:
                self.knots_.append(np.stack(fit_isotonic(scores[:, k], truth[:, k], sw)))
        return self

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        """Calibrated probabilities ``(n, K)``: two classes ``[1 - p, p]``; one against the
        rest normalized to sum 1; multi-label each label's own."""
        scores = np.asarray(scores, dtype=np.float64)
        # the outputs are the calibration's: an empty batch is (0, outputs), not unshapeable
        scores = scores.reshape(len(scores), -1 if scores.size else len(self.knots_))
        if scores.shape[1] != len(self.knots_):
            raise NBSVMError(
                f"the calibration maps {len(self.knots_)} outputs, the scores "
                f"have {scores.shape[1]}"
            )
        if self.method == "temperature" and scores.shape[1] > 1 and not self.multilabel:
            return softmax(self.knots_[0][0] * scores)
        p = np.empty_like(scores)
        for k, knots in enumerate(self.knots_):
            if self.method != "isotonic":
                p[:, k] = sigmoid(knots[0] * scores[:, k] + knots[1])
            else:
                p[:, k] = np.interp(scores[:, k], knots[0], knots[1])
        if self.multilabel:
            return p
        if p.shape[1] == 1:
            return np.column_stack([1 - p[:, 0], p[:, 0]])
        total = p.sum(axis=1, keepdims=True)
        return np.where(total > 0, p / np.where(total > 0, total, 1), 1.0 / p.shape[1])

    def arrays(self) -> tuple[dict, dict]:
        """``(header, arrays)`` for a model file: the knots of all outputs end to end."""
        sizes = [k.shape[-1] if self.method == "isotonic" else 1 for k in self.knots_]
        flat = (
            np.concatenate([k.reshape(-1, k.shape[-1]) for k in self.knots_], axis=1)
            if self.method == "isotonic"
            else np.stack(self.knots_).T
        )
        return (
            {"method": self.method, "sizes": sizes},
            {"calibration": np.ascontiguousarray(flat, dtype=np.float64)},
        )

    @classmethod
    def from_arrays(
        cls,
        header: object,
        flat: ArrayLike,
        n_outputs: int,
        multilabel: bool,
        path: str | None = None,
    ) -> Calibrator:
        """The calibrator a model file stores, checked (a corrupted one names the file)."""

        def bad(what: str) -> NoReturn:
            raise NBSVMError(f"corrupted model file: calibration {what}", path=path)

        if not isinstance(header, dict) or header.get("method") not in METHODS:
            bad("method missing or unknown")
        sizes = header.get("sizes")
        if not (
            isinstance(sizes, list)
            and len(sizes) == n_outputs
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in sizes)
        ):
            bad("sizes do not match the outputs")
        flat = np.asarray(flat)
        if (
            flat.dtype != np.float64
            or flat.ndim != 2
            or flat.shape[0] != 2
            or flat.shape[1] != sum(sizes)
            or not np.isfinite(flat).all()
        ):
            bad("arrays do not match the header")
        self = cls(header["method"], multilabel)
        if self.method != "isotonic":
            if any(v != 1 for v in sizes):
                bad(f"{self.method} with more than one pair per output")
            self.knots_ = [flat[:, k].copy() for k in range(n_outputs)]
            return self
        self.knots_ = []
        at = 0
        for size in sizes:
            knots = flat[:, at : at + size].copy()
            if (
                np.any(np.diff(knots[0]) < 0)
                or np.any(np.diff(knots[1]) < 0)
                or knots[1].min() < 0
                or knots[1].max() > 1
            ):
                bad("knots not increasing or outside [0, 1]")
            self.knots_.append(knots)
            at += size
        return self


class ReliabilityHistogram:
    """Expected calibration error in bounded memory: per bin of confidence (``n_bins``
    equal widths over [0, 1]) the count, the summed confidence and the number right.

    Single-label models add each document's top probability and whether that class was
    right (Guo et al. 2017's top-label ECE); multi-label models add every (document, label)
    probability and whether the label is the document's.

    >>> h = ReliabilityHistogram(10)
    >>> h.add(np.array([0.95, 0.95, 0.55, 0.55]), np.array([1, 1, 1, 0]))
    >>> round(h.ece(), 3)      # (|2 - 1.9| + |1 - 1.1|) / 4
    0.05
    """

    #: confidences are summed as integers in units of 2**-32 (exact, so the figures do not
    #: depend on how the documents were batched; up to 2**31 documents per bin)
    UNIT = 2.0**32

    def __init__(self, n_bins: int = 15):
        self.n_bins = n_bins
        self.count = np.zeros(n_bins, dtype=np.int64)
        self.confidence_units = np.zeros(n_bins, dtype=np.int64)
        self.right = np.zeros(n_bins, dtype=np.int64)

    @property
    def confidence(self) -> np.ndarray:
        """Summed confidence per bin."""
        return self.confidence_units / self.UNIT

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The counts per bin, to be merged into another histogram (:meth:`merge`)."""
        return self.count, self.confidence_units, self.right

    def merge(self, arrays: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Add another histogram's :meth:`arrays` (of the same bins)."""
        self.count += arrays[0]
        self.confidence_units += arrays[1]
        self.right += arrays[2]

    def add(self, confidence: np.ndarray, right: np.ndarray) -> None:
        confidence = np.clip(np.asarray(confidence, dtype=np.float64).ravel(), 0.0, 1.0)
        b = np.minimum((confidence * self.n_bins).astype(np.int64), self.n_bins - 1)
        units = np.rint(confidence * self.UNIT).astype(np.int64)
        right = np.asarray(right, dtype=bool).ravel()
        for k in np.unique(b):  # integer sums: np.bincount's weights are floats
            at = b == k
            self.count[k] += int(at.sum())
            self.confidence_units[k] += int(units[at].sum())
            self.right[k] += int(right[at].sum())

    def add_proba(
        self,
        proba: np.ndarray,
        truth: np.ndarray,
        multilabel: bool,
        predicted: np.ndarray | None = None,
    ) -> None:
        """``proba`` ``(n, K)``; ``truth``: class indices, or ``(n, K)`` 0/1 (multi-label).
        ``predicted``: the predicted class indices (default: the most probable; where
        probabilities tie, the model's own choice judges what it predicted)."""
        if multilabel:
            self.add(proba, truth)
            return
        best = np.argmax(proba, axis=1) if predicted is None else predicted
        self.add(proba[np.arange(len(best)), best], best == truth)

    def ece(self) -> float:
        n = self.count.sum()
        if n == 0:
            return float("nan")
        return float(np.abs(self.right - self.confidence).sum() / n)

    def table(self) -> dict:
        """Per non-empty bin: its range, count, mean confidence and share right."""
        seen = self.count > 0
        edges = np.arange(self.n_bins) / self.n_bins
        return {
            "lower": edges[seen].tolist(),
            "upper": (edges[seen] + 1 / self.n_bins).tolist(),
            "count": self.count[seen].tolist(),
            "confidence": (self.confidence[seen] / self.count[seen]).tolist(),
            "accuracy": (self.right[seen] / self.count[seen]).tolist(),
        }
