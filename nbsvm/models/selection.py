"""Choosing among scored settings: the one-standard-error rule with the defaults as the
simple model, its error paired over validation groups (``--auto`` and ``nbsvm tune``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

VALIDATION_GROUPS = 5  # a single validation set is cut into this many blocks


def paired_gain(
    scores: ArrayLike, reference: ArrayLike, sizes: ArrayLike | None = None
) -> tuple[float, float]:
    """The mean gain of ``scores`` over ``reference`` (a score per validation group each,
    the same groups) and its standard error: the spread of the gains group by group over
    the square root of their number (0 with one group). With ``sizes`` (documents per
    group) the mean is weighted by them, so that it is the gain over all the documents, and
    the error is the ratio estimator's, ``sqrt(n / (n - 1) * sum(w_i^2 (g_i - g)^2)) /
    sum(w_i)``, which equal sizes reduce to the plain one (7 held-out documents in blocks of
    1, 2, 1, 2, 1 said +10.00 points for a gap of 14.29)."""
    gains = np.asarray(scores, float) - np.asarray(reference, float)
    n = len(gains)
    w = np.ones(n) if sizes is None else np.asarray(sizes, float)
    gain = float(w @ gains / w.sum())
    if n < 2:
        return gain, 0.0
    se = math.sqrt(n / (n - 1) * float(w**2 @ (gains - gain) ** 2)) / float(w.sum())
    return gain, se


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` (a positive integer) degrees of freedom:
    the bound a gain must pass in standard errors estimated from ``df + 1`` groups (five
    groups: 2.78 at 0.975, where the normal's 1.96 would take far more chance gains).

    Bisection on the closed-form distribution function for integer ``df`` (Abramowitz &
    Stegun 26.7.3-4, in terms of theta = atan(t / sqrt(df))); no scipy in the core."""
    if not 0.0 < p < 1.0 or df < 1:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df >= 1, got p={p}, df={df}")

    def cdf(t: float) -> float:
        theta = math.atan(t / math.sqrt(df))
        c2 = math.cos(theta) ** 2
        if df % 2:  # odd: 2/pi (theta + sin cos (1 + 2/3 cos^2 + 2 4/(3 5) cos^4 ...))
            term, total = 1.0, 1.0 if df > 1 else 0.0
            for k in range(1, (df - 1) // 2):
                term *= c2 * (2 * k) / (2 * k + 1)
                total += term
            a = 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
        else:  # even: sin (1 + 1/2 cos^2 + 1 3/(2 4) cos^4 ...)
            term, total = 1.0, 1.0
            for k in range(1, df // 2):
                term *= c2 * (2 * k - 1) / (2 * k)
                total += term
            a = math.sin(theta) * total
        return (1 + a) / 2  # a = P(|T| < t), odd in t

    lo, hi = -1.0, 1.0
    while cdf(lo) > p:
        lo *= 2
    while cdf(hi) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, abs(mid)):
            break
    return (lo + hi) / 2


def beyond_error(gain: float, se: float, n_se: float = 1.0) -> bool:
    """``gain`` more than ``n_se`` times ``se``, rounding aside: one discordant document gives a gain of
    exactly one paired error (the mean of one nonzero gain in ``k`` groups is ``d / k``, its
    error too), which must not count as more."""
    return gain > n_se * se * (1 + 1e-9) + 1e-12


def one_se_choice(
    scores: list[dict], defaults: dict, n_se: float = 1.0, unit: str = "validation groups"
) -> tuple[int, str, float]:
    """The one-standard-error rule over ``scores`` (dicts with ``settings``, ``score`` and
    ``groups``: the score on each validation group, the same groups for every entry), with
    the defaults as the simple model: the best (ties: fewer changed settings, then the
    earlier) only if its gain over the best-scoring defaults is more than one standard error
    of that gain, else those defaults. Returns the index, why, and the error.

    The error is the paired one, over the groups: the spread of the best's gain group by
    group (folds: each its own training, so training noise counts too). A gain that some
    folds do not share is not taken: on RT-2k the binomial error of the best's score let a
    candidate 0.70 points ahead (folds -1.75 to +3.44) replace defaults 3 points better on
    the test fold, while BbCrypt's gain of 0.31 (0 to +0.56 in every fold) is real.

    ``n_se``: standard errors the gain must exceed (``--auto`` asks 2: its best is the
    best of several candidates, a gain biased upwards by the choice).

    Counting changed settings does not order the other candidates by simplicity (three
    changes are not a simpler model than four), so among them the score decides."""

    def changes(i):
        return sum(1 for k, v in scores[i]["settings"].items() if defaults.get(k) != v)

    best = max(range(len(scores)), key=lambda i: (scores[i]["score"], -changes(i), -i))
    plain = [i for i in range(len(scores)) if changes(i) == 0]
    if not plain or best in plain:
        return best, f"the best score ({100 * scores[best]['score']:.2f}%)", 0.0
    dflt = max(plain, key=lambda i: (scores[i]["score"], -i))
    gain, se = paired_gain(scores[best]["groups"], scores[dflt]["groups"])
    where = (
        f"{100 * gain:.2f} points over the defaults, one standard error {100 * se:.2f} "
        f"over {len(scores[best]['groups'])} {unit}"
        + (f" (more than {n_se:g} asked)" if n_se != 1 else "")
    )
    if not beyond_error(gain, se, n_se):
        return (
            dflt,
            (
                f"the defaults: the best ({100 * scores[best]['score']:.2f}%, "
                f"{changes(best)} setting(s) changed) gains {where}"
            ),
            se,
        )
    return best, f"the best score ({100 * scores[best]['score']:.2f}%): {where}", se
