"""The Pegasos progress table of the Clojure blog post: the published rows, a literal
replay of the post's code and nbsvm's Pegasos, every 100 updates."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from rcv1_objective import signs

from nbsvm.data.rows import SparseRows
from nbsvm.learners.pegasos import Pegasos

if TYPE_CHECKING:
    import pandas as pd

# the post's table: (updates, feature count for w, total errors, "running accuracy")
PEGASOS_PUBLISHED = [
    (100, 2145, 64, 0.64),
    (200, 3333, 123, 0.615),
    (300, 4051, 175, 0.5833333),
    (400, 4755, 229, 0.5725),
    (500, 5236, 276, 0.552),
    (600, 5576, 318, 0.53),
    (700, 5870, 356, 0.50857145),
    (800, 6050, 388, 0.485),
    (900, 6325, 418, 0.46444446),
    (1000, 6578, 444, 0.444),
]


def blog_replay(X: SparseRows, y, lam: float, every: int = 100) -> list[dict]:
    """The post's ``update`` / ``report`` literally: ``step`` starts at 1 and is reported
    *before* the example at that step is seen (so errors count ``step - 1`` examples, divided
    by ``step``); on a violation (hinge > 0) ``w <- P((1 - 1/t) w + y x / (lam t))``, and
    *otherwise w is left as it is* (no shrinking); features are the keys ever added."""
    w = np.zeros(X.n_features)
    keys = np.zeros(X.n_features, dtype=bool)
    radius = 1.0 / np.sqrt(lam)
    errors, table = 0, []
    ys = signs(y)
    for step in range(1, len(ys) + 1):
        if step % every == 0:
            table.append(
                dict(updates=step, features=int(keys.sum()), violations=errors, rate=errors / step)
            )
        a, b = X.offsets[step - 1], X.offsets[step]
        idx, val = X.indices[a:b], X.values[a:b]
        if 1.0 - ys[step - 1] * float(w[idx] @ val) > 0:
            errors += 1
            w *= 1.0 - 1.0 / step
            w[idx] += ys[step - 1] / (lam * step) * val
            keys[idx] = True
            w *= min(1.0, radius / np.linalg.norm(w))
    return table


def nbsvm_replay(X: SparseRows, y, lam: float, every: int = 100) -> list[dict]:
    """nbsvm's :class:`Pegasos` (the paper's rule: ``w`` shrinks by ``1 - 1/t`` at every
    step) over the file in order, one pass, ``every`` examples per ``partial_fit``; after
    each block: updates, non-zero weights, margin violations so far and their rate."""
    m = Pegasos(lam=lam)
    table = []
    for start_row in range(0, len(y) - len(y) % every, every):
        block = np.arange(start_row, start_row + every)
        m.partial_fit(X, y, order=block, classes=["-1", "1"])
        t = int(m.state_[2])
        violations = int(m.state_[3])
        table.append(
            dict(
                updates=t,
                features=int(np.count_nonzero(m.coef_)),
                violations=violations,
                rate=violations / t,
            )
        )
    return table


def pegasos_table(X: SparseRows, y, lam: float, rows: int) -> pd.DataFrame:
    """Published, literal-replay and nbsvm columns side by side for the first ``rows``
    reports (the post shows 10)."""
    import pandas as pd

    lit, ours = blog_replay(X, y, lam), nbsvm_replay(X, y, lam)
    out = []
    for k in range(min(rows, len(ours))):
        pub = PEGASOS_PUBLISHED[k] if k < len(PEGASOS_PUBLISHED) else (None,) * 4
        out.append(
            dict(
                updates=ours[k]["updates"],
                published_features=pub[1],
                published_violations=pub[2],
                published_rate=pub[3],
                replay_features=lit[k]["features"],
                replay_violations=lit[k]["violations"],
                replay_rate=lit[k]["rate"],
                nbsvm_features=ours[k]["features"],
                nbsvm_violations=ours[k]["violations"],
                nbsvm_rate=ours[k]["rate"],
            )
        )
    return pd.DataFrame(out)
