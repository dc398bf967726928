"""Choosing among scored settings: the one-standard-error rule with the defaults as the
simple model, its error paired over validation groups (``--auto`` and ``nbsvm tune``)."""
from __future__ import annotations

import math

import numpy as np

VALIDATION_GROUPS = 5    # a single validation set is cut into this many blocks


def paired_gain(scores, reference) -> tuple[float, float]:
    """The mean gain of ``scores`` over ``reference`` (a score per validation group each,
    the same groups) and its standard error: the spread of the gains group by group over
    the square root of their number (0 with one group)."""
    gains = np.asarray(scores, float) - np.asarray(reference, float)
    se = float(gains.std(ddof=1) / math.sqrt(len(gains))) if len(gains) > 1 else 0.0
    return float(gains.mean()), se


def beyond_error(gain: float, se: float, n_se: float = 1.0) -> bool:
    """``gain`` more than ``n_se`` times ``se``, rounding aside: one discordant document gives a gain of
    exactly one paired error (the mean of one nonzero gain in ``k`` groups is ``d / k``, its
    error too), which must not count as more."""
    return gain > n_se * se * (1 + 1e-9) + 1e-12


def one_se_choice(scores: list[dict], defaults: dict, n_se: float = 1.0
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
    where = (f"{100 * gain:.2f} points over the defaults, one standard error {100 * se:.2f} "
             f"over {len(scores[best]['groups'])} validation groups"
             + (f" (more than {n_se:g} asked)" if n_se != 1 else ""))
    if not beyond_error(gain, se, n_se):
        return dflt, (f"the defaults: the best ({100 * scores[best]['score']:.2f}%, "
                      f"{changes(best)} setting(s) changed) gains {where}"), se
    return best, f"the best score ({100 * scores[best]['score']:.2f}%): {where}", se
