"""Slow plain-Python reference implementations of nbsvm's kernels (DESIGN.md definitions).

Everything here is written with Python loops, dicts and floats, straight from the formulas
in ../shared/DESIGN.md, so that the fast numpy/numba code can be checked against it.
"""
from __future__ import annotations

import math
import struct

import mmh3

# --------------------------------------------------------------------------------------
# (a) text -> buckets, without nbsvm's tokenizer/hasher
# --------------------------------------------------------------------------------------


def naive_tokens(text: str) -> list[str]:
    """DESIGN.md tokenizer, written character by character (no regex)."""
    text = text.lower().replace("<br />", " ")
    out, cur = [], []
    for ch in text:
        if ch in '.",()!?;:':
            if cur:
                out.append("".join(cur))
                cur = []
            out.append(ch)
        elif ch.isspace():
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def naive_word_keys(tokens: list[str], n: int) -> list[str]:
    keys = []
    for order in range(1, n + 1):
        for i in range(len(tokens) - order + 1):
            keys.append(" ".join(tokens[i:i + order]))
    return keys


def naive_char_keys(tokens: list[str], n: int) -> list[str]:
    keys = []
    for tok in tokens:
        framed = "<" + tok + ">"
        if len(framed) <= n:
            keys.append(framed)
        else:
            for i in range(len(framed) - n + 1):
                keys.append(framed[i:i + n])
    return keys


def naive_bucket(key: str, n_bits: int, seed: int) -> int:
    # UTF-8 bytes; a lone surrogate (possible in a Python str) is passed through as its
    # 3-byte form. Never hand mmh3 a str with a lone surrogate: that crashes the interpreter.
    data = key.encode("utf-8", "surrogatepass")
    return mmh3.hash(data, seed, signed=False) & ((1 << n_bits) - 1)


def naive_buckets(text: str, ngrams: int, n_bits: int, seed: int = 0,
                  char_ngrams: int = 0, long_words: int = 0) -> list[int]:
    """Distinct buckets in order of first occurrence: the word n-gram keys (all unigrams,
    then all bigrams, ...) hashed with ``seed``, then the character keys with ``seed + 1``
    (without ``char_ngrams``: the 4-grams of the tokens of more than ``long_words`` code
    points, when it is not 0)."""
    tokens = naive_tokens(text)
    ids: list[int] = []
    seen: set[int] = set()
    keys = [(k, seed) for k in naive_word_keys(tokens, ngrams)]
    if char_ngrams:
        keys += [(k, (seed + 1) & 0xFFFFFFFF) for k in naive_char_keys(tokens, char_ngrams)]
    elif long_words:
        long = [t for t in tokens if len(t) > long_words]
        keys += [(k, (seed + 1) & 0xFFFFFFFF) for k in naive_char_keys(long, 4)]
    for key, s in keys:
        b = naive_bucket(key, n_bits, s)
        if b not in seen:
            seen.add(b)
            ids.append(b)
    return ids


# --------------------------------------------------------------------------------------
# (b) NB log-count ratios
# --------------------------------------------------------------------------------------


def naive_ratio_vector(pos_docs: list[list[int]], neg_docs: list[list[int]], n_buckets: int,
                       alpha: float = 1.0, min_df: int = 1, kept_norms: bool = False) -> list[float]:
    """r for 'pos' against 'neg' (binarized counts; L1 norms over buckets seen in either).

    ``min_df``: buckets found in fewer documents (both sides together) get ``r = 0``; the
    norms still run over every seen bucket, or with ``kept_norms`` over the others only.
    """
    pos_count: dict[int, int] = {}
    neg_count: dict[int, int] = {}
    for doc in pos_docs:
        for i in set(doc):
            pos_count[i] = pos_count.get(i, 0) + 1
    for doc in neg_docs:
        for i in set(doc):
            neg_count[i] = neg_count.get(i, 0) + 1
    seen = sorted(set(pos_count) | set(neg_count))
    if kept_norms:
        seen = [i for i in seen if pos_count.get(i, 0) + neg_count.get(i, 0) >= min_df]
    p = {i: alpha + pos_count.get(i, 0) for i in seen}
    q = {i: alpha + neg_count.get(i, 0) for i in seen}
    p_norm = sum(p.values())
    q_norm = sum(q.values())
    r = [0.0] * n_buckets
    for i in seen:
        if pos_count.get(i, 0) + neg_count.get(i, 0) >= min_df:
            r[i] = math.log((p[i] / p_norm) / (q[i] / q_norm))
    return r


def naive_ratios(docs: list[list[int]], labels: list[str], n_buckets: int,
                 alpha: float = 1.0, min_df: int = 1) -> tuple[list[str], list[list[float]]]:
    """(sorted classes, ratio rows): one row (classes[1] vs classes[0]) for two classes,
    else one row per class against the rest, whose norms run over the buckets kept by
    ``min_df``."""
    classes = sorted(set(labels))
    if len(classes) == 2:
        pos = [d for d, l in zip(docs, labels) if l == classes[1]]
        neg = [d for d, l in zip(docs, labels) if l == classes[0]]
        return classes, [naive_ratio_vector(pos, neg, n_buckets, alpha, min_df)]
    rows = []
    for c in classes:
        pos = [d for d, l in zip(docs, labels) if l == c]
        neg = [d for d, l in zip(docs, labels) if l != c]
        rows.append(naive_ratio_vector(pos, neg, n_buckets, alpha, min_df, kept_norms=True))
    return classes, rows


def naive_doc_freq(docs: list[list[int]]) -> dict[int, int]:
    """Documents each bucket occurs in."""
    df: dict[int, int] = {}
    for doc in docs:
        for i in set(doc):
            df[i] = df.get(i, 0) + 1
    return df


# --------------------------------------------------------------------------------------
# losses (written independently of nbsvm.learners.losses)
# --------------------------------------------------------------------------------------


def naive_dloss(loss: str, p: float, y: float) -> float:
    z = y * p
    if loss == "hinge":
        return -y if z < 1.0 else 0.0
    if loss == "log":
        # d/dp log(1 + exp(-y p)) = -y / (1 + exp(y p))
        if z > 30:
            return -y * math.exp(-z)
        return -y / (1.0 + math.exp(z))
    if loss == "squared_hinge":
        return -2.0 * y * (1.0 - z) if z < 1.0 else 0.0
    if loss == "modified_huber":
        if z < -1.0:
            return -4.0 * y
        return -2.0 * y * (1.0 - z) if z < 1.0 else 0.0
    raise ValueError(loss)


def naive_loss(loss: str, p: float, y: float) -> float:
    z = y * p
    if loss == "hinge":
        return max(0.0, 1.0 - z)
    if loss == "log":
        if z < -30:
            return -z + math.log1p(math.exp(z))
        return math.log1p(math.exp(-z))
    if loss == "squared_hinge":
        return max(0.0, 1.0 - z) ** 2
    if loss == "modified_huber":
        return -4.0 * z if z < -1.0 else max(0.0, 1.0 - z) ** 2
    raise ValueError(loss)


# --------------------------------------------------------------------------------------
# (c) one plain SGD epoch (Bottou 2012) with an explicit, unscaled weight vector
# --------------------------------------------------------------------------------------


def _f32(x: float) -> float:
    """Round a Python float to the nearest float32 (what storing it in float32 does)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _row_scale(ids, table, unit: bool) -> float:
    """1 / ||(table[i] for i in ids)|| with ``unit`` (0 for an all-zero row), else 1."""
    if not unit:
        return 1.0
    norm = math.sqrt(sum(float(table[i]) ** 2 for i in ids))
    return 1.0 / norm if norm > 0 else 0.0


def _example(docs, ys, d, table, w, b, loss, unit, weights):
    """Example ``d``'s bucket ids, row scale, and weighted loss and derivative at
    ``p = w.x + b`` (exact float64 products of the stored values)."""
    ids = list(docs[d])
    scale = _row_scale(ids, table, unit)
    dot = 0.0
    for i in ids:
        dot += w[i] * float(table[i])
    p = dot * scale + b
    weight = 1.0 if weights is None else float(weights[d])
    y = float(ys[d])
    return ids, scale, weight * naive_loss(loss, p, y), weight * naive_dloss(loss, p, y)


def naive_sgd_epoch(docs, ys, order, table, w, b, t, eta0, lam, loss, bias_rate=0.01,
                    f32=False, unit=False, weights=None):
    """Return ``(w, b, t, total_loss)`` after visiting ``order`` once.

    ``docs[d]`` is a list of distinct bucket ids, ``x_i = table[i]``, ``ys[d]`` in {-1, +1}.
    Per step: ``p = sum_i w_i x_i + b``; ``eta = eta0 / (1 + lam*eta0*t)``;
    ``w <- (1 - eta*lam) w - eta*g*x``; ``b <- b - eta*bias_rate*g`` (bias not regularized);
    ``t += 1``. ``unit``: ``x`` is the row divided by its L2 norm. ``weights[d]``: the
    example's weight, multiplying its loss and ``g`` (class weights).

    ``f32=True`` stores like a float32 weight vector: every updated ``w_i`` is rounded to
    float32; products ``w_i x_i`` of the stored values, sums, steps, bias and ``t`` stay
    float64 (the kernels widen one operand, so the products are exact). With ``lam = 0``
    that is exactly the arithmetic of a float32 vector updated in place.
    """
    w = [float(v) for v in w]
    b = float(b)
    total = 0.0
    for d in order:
        ids, scale, value, g = _example(docs, ys, d, table, w, b, loss, unit, weights)
        total += value
        eta = eta0 / (1.0 + lam * eta0 * t)
        if lam:
            shrink = 1.0 - eta * lam
            for i in range(len(w)):
                w[i] *= shrink
        for i in ids:
            w[i] -= eta * g * float(table[i]) * scale
            if f32:
                w[i] = _f32(w[i])
        b -= eta * bias_rate * g
        t += 1
    return w, b, t, total


# --------------------------------------------------------------------------------------
# (d) one AdaGrad epoch as documented in nbsvm/learners/kernels/table.py
# --------------------------------------------------------------------------------------


def naive_adagrad_epoch(docs, ys, order, table, w, G, b, Gb, eta0, lam, loss, bias_rate=1.0,
                        eps=1e-8, f32=False, unit=False, weights=None):
    """Return ``(w, G, b, Gb, total_loss)``.

    Per example: ``p = w.x + b``; ``g = dloss(p, y)``; for each touched bucket
    ``gi = g*x_i + lam*w_i``; if ``gi != 0``: ``G_i += gi**2``, ``w_i -= eta0*gi/sqrt(G_i+eps)``.
    Bias: if ``g != 0``: ``Gb += g**2``, ``b -= eta0*bias_rate*g/sqrt(Gb+eps)``.

    ``f32=True`` follows the storage and per-feature arithmetic of a float32 state: ``g``,
    ``lam``, ``eta0`` and ``eps`` enter the per-feature step as float32, and ``gi``, each
    product ``w_i x_i``, and the stored ``G_i`` and ``w_i`` are rounded to float32 (the dot
    sum, the bias and its accumulator stay float64). ``False`` is exact float64 arithmetic.
    ``unit``: ``x`` is the row divided by its L2 norm. ``weights[d]``: the example's weight,
    multiplying its loss and ``g``.
    """
    r = _f32 if f32 else float
    w = [float(v) for v in w]
    G = [float(v) for v in G]
    eta0_i, lam_i, eps_i = r(eta0), r(lam), r(eps)
    total = 0.0
    for d in order:
        ids, scale, value, g = _example(docs, ys, d, table, w, b, loss, unit, weights)
        total += value
        g_i = r(g * scale)
        weighed = weights is None or weights[d] != 0  # weight 0: its features take no step
        for i in ids if weighed else ():
            gi = r(g_i * float(table[i]) + lam_i * w[i])
            if gi != 0.0:
                G[i] = r(G[i] + gi * gi)
                w[i] = r(w[i] - eta0_i * gi / math.sqrt(G[i] + eps_i))
        if g != 0.0:
            Gb += g * g
            b -= eta0 * bias_rate * g / math.sqrt(Gb + eps)
    return w, G, b, Gb, total


def naive_multiclass_grad(kind: str, p: list[float], y: int) -> tuple[float, list[float]]:
    """Loss and gradient of K scores for true class y: softmax (multinomial log loss) or
    the Crammer-Singer hinge against the best-scoring wrong class (the first on ties)."""
    K = len(p)
    if kind == "softmax":
        m = max(p)
        e = [math.exp(v - m) for v in p]
        z = sum(e)
        g = [v / z for v in e]
        g[y] -= 1.0
        return math.log(z) + m - p[y], g
    j = max((o for o in range(K) if o != y), key=lambda o: (p[o], -o))
    margin = 1.0 + p[j] - p[y]
    g = [0.0] * K
    if margin <= 0:
        return 0.0, g
    g[j], g[y] = 1.0, -1.0
    return margin, g


def naive_multiclass_epoch(docs, targets, order, tables, W, B, eta0, lam, kind, optimizer,
                           t=0.0, G=None, Gb=None, bias_rate=None, eps=1e-8, unit=False,
                           weights=None, doc_weights=None):
    """K outputs trained together, in float64: output o's row values are
    ``tables[o][i]`` (divided by their norm with ``unit``), ``p_o = w_o.x_o + b_o``, one
    multi-class loss of all K scores (:func:`naive_multiclass_grad`), and each output takes
    the binary step with its own gradient: SGD ``w <- (1 - eta lam) w - eta g_o x_o`` with
    ``eta = eta0 / (1 + lam eta0 t)`` and bias step ``eta * 0.01 * g_o``, or AdaGrad on the
    touched features (``gi = g_o x_i + lam w_i``) and the bias (rate 1). ``weights[y]``:
    class y's weight on its documents' loss and gradient; ``doc_weights[d]``: document d's
    own (both multiply). Returns ``(W, B, G, Gb, t,
    total)``."""
    K = len(tables)
    W = [[float(v) for v in w] for w in W]
    B = [float(v) for v in B]
    G = [[0.0] * len(W[0]) for _ in range(K)] if G is None else [list(g) for g in G]
    Gb = [0.0] * K if Gb is None else list(Gb)
    rate = (0.01 if optimizer == "sgd" else 1.0) if bias_rate is None else bias_rate
    total = 0.0
    for d in order:
        y = int(targets[d])
        if y < 0:
            continue
        ids = list(docs[d])
        scales = [_row_scale(ids, tables[o], unit) for o in range(K)]
        p = [sum(W[o][i] * float(tables[o][i]) for i in ids) * scales[o] + B[o]
             for o in range(K)]
        loss, g = naive_multiclass_grad(kind, p, y)
        if weights is not None:         # class weights: the true class's, on loss and g
            loss, g = loss * weights[y], [v * weights[y] for v in g]
        if doc_weights is not None:
            loss, g = loss * doc_weights[d], [v * doc_weights[d] for v in g]
        total += loss
        if optimizer == "sgd":
            eta = eta0 / (1.0 + lam * eta0 * t)
            for o in range(K):
                if lam:
                    W[o] = [v * (1.0 - eta * lam) for v in W[o]]
                for i in ids:
                    W[o][i] -= eta * g[o] * float(tables[o][i]) * scales[o]
                B[o] -= eta * rate * g[o]
        else:
            weighed = ((weights is None or weights[y] != 0)
                       and (doc_weights is None or doc_weights[d] != 0))
            for o in range(K):
                for i in ids if weighed else ():
                    gi = g[o] * scales[o] * float(tables[o][i]) + lam * W[o][i]
                    if gi != 0.0:
                        G[o][i] += gi * gi
                        W[o][i] -= eta0 * gi / math.sqrt(G[o][i] + eps)
                if g[o] != 0.0:
                    Gb[o] += g[o] * g[o]
                    B[o] -= eta0 * rate * g[o] / math.sqrt(Gb[o] + eps)
        t += 1.0
    return W, B, G, Gb, t, total


# --------------------------------------------------------------------------------------
# comparing float32 state with the float64 references
# --------------------------------------------------------------------------------------


def rel_gap(a, b) -> float:
    """max |a - b|, relative to max(1, max |b|): the error measure for float32 weights."""
    import numpy as np

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b))) / max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)


def model_file_arrays(clf, path) -> dict:
    """Save ``clf`` to ``path`` and read the arrays back with plain numpy (no nbsvm code):
    ``buckets``, ``ratios``, ``coef``, ``learner_state`` and, for AdaGrad, ``adagrad_sq``."""
    import numpy as np

    clf.save(path)
    with np.load(path, allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files if name != "__header__"}


# --------------------------------------------------------------------------------------
# (e) Pegasos, with an explicit (unscaled) weight vector
# --------------------------------------------------------------------------------------


def naive_pegasos(rows, ys, order, w, t, lam):
    """``rows[d]`` is a dict {index: value}. Returns ``(w, t, total_hinge, mistakes)``.

    Step t (from 1): if ``y w.x < 1``: ``w <- (1 - 1/t) w + y x / (lam t)``, else
    ``w <- (1 - 1/t) w``; then project onto the ball of radius ``1/sqrt(lam)``.
    """
    w = [float(v) for v in w]
    total, mistakes = 0.0, 0
    for d in order:
        x, y = rows[d], float(ys[d])
        margin = y * sum(w[i] * v for i, v in x.items())
        t += 1
        w = [(1.0 - 1.0 / t) * v for v in w]
        if margin < 1.0:
            total += 1.0 - margin
            mistakes += 1
            for i, v in x.items():
                w[i] += y * v / (lam * t)
        norm = math.sqrt(sum(v * v for v in w))
        if norm > 1.0 / math.sqrt(lam):
            w = [v / (norm * math.sqrt(lam)) for v in w]
    return w, t, total, mistakes


# --------------------------------------------------------------------------------------
# (g) projected online gradient descent, square loss (Zinkevich 2003)
# --------------------------------------------------------------------------------------


def naive_ogd(rows, ys, order, w, t, eta, radius):
    """Returns ``(w, t, before, after)``: ``w <- P(w - eta/sqrt(t) (w.x - y) x)``."""
    w = [float(v) for v in w]
    before, after = [], []
    for d in order:
        x, y = rows[d], float(ys[d])
        p = sum(w[i] * v for i, v in x.items())
        before.append(p)
        t += 1
        for i, v in x.items():
            w[i] -= eta / math.sqrt(t) * (p - y) * v
        norm = math.sqrt(sum(v * v for v in w))
        if norm > radius:
            w = [v * radius / norm for v in w]
        after.append(sum(w[i] * v for i, v in x.items()))
    return w, t, before, after


# --------------------------------------------------------------------------------------
# (h) multi-output linear learners with explicit, unscaled weights and an explicit sum of
#     all iterates (PA / MIRA, Crammer-Singer hinge, one hinge per label), and the hashed
#     Blitzer data their acceptance tests use
# --------------------------------------------------------------------------------------

import functools  # noqa: E402  (this section's own import: the file is append-only)


class NaiveLinear:
    """``K`` dense weight rows over ``d`` features and biases, plus the sums of every
    iterate so far (``w_0 = 0`` included): ``average() = sums / n_iterates``."""

    def __init__(self, K, d):
        self.W = [[0.0] * d for _ in range(K)]
        self.b = [0.0] * K
        self.W_sum = [[0.0] * d for _ in range(K)]
        self.b_sum = [0.0] * K
        self.n_iterates = 1

    def score(self, k, x):
        """``x``: one row for every class (a dict), or a row per class (a list of dicts:
        the joint feature map, class k seeing ``x[k]``)."""
        x = x[k] if isinstance(x, list) else x
        return sum(self.W[k][i] * v for i, v in x.items()) + self.b[k]

    def add(self, k, step, x, bias):
        x = x[k] if isinstance(x, list) else x
        for i, v in x.items():
            self.W[k][i] += step * v
        if bias:
            self.b[k] += step

    def shrink(self, factor):
        """L2 step: the bias (weight of a constant input 1) shrinks with the weights."""
        self.W = [[max(factor, 0.0) * v for v in row] for row in self.W]
        self.b = [max(factor, 0.0) * v for v in self.b]

    def end_step(self):
        for k, row in enumerate(self.W):
            self.W_sum[k] = [s + v for s, v in zip(self.W_sum[k], row)]
            self.b_sum[k] += self.b[k]
        self.n_iterates += 1

    def average(self):
        n = self.n_iterates
        return [[v / n for v in row] for row in self.W_sum], [v / n for v in self.b_sum]


def naive_eta(schedule, eta0, lam, t):
    if schedule == "constant":
        return eta0
    if schedule == "invsqrt":
        return eta0 / math.sqrt(t)
    if schedule == "pegasos":
        return 1.0 / (lam * t)
    return eta0 / (1.0 + lam * eta0 * (t - 1))      # "optimal"


def naive_pa_tau(variant, loss, norm2, C):
    if variant == "pa-ii":
        return loss / (norm2 + 1.0 / (2.0 * C))
    tau = loss / norm2
    return min(C, tau) if variant == "pa-i" else tau


def naive_sq(x, k):
    """``||x||^2`` of class ``k``'s row (``x`` a shared dict or a list of per-class dicts)."""
    x = x[k] if isinstance(x, list) else x
    return sum(v * v for v in x.values())


def naive_class_rows(rows, T, unit):
    """The joint feature map by hand: document ``d``'s row for class ``k`` is
    ``T[k][i] * v`` for its entries ``i: v``, divided by that row's norm with ``unit``."""
    out = []
    for x in rows:
        per_class = []
        for k in range(len(T)):
            xk = {i: v * float(T[k][i]) for i, v in x.items()}
            norm = math.sqrt(sum(v * v for v in xk.values()))
            if unit and norm > 0:
                xk = {i: v / norm for i, v in xk.items()}
            per_class.append(xk)
        out.append(per_class)
    return out


def naive_mira_pass(model, rows, ys, order, cost, variant="pa", C=1.0, bias=True,
                    update="max-loss"):
    """One MIRA pass (Crammer et al. 2006, k = 1). Rival: the wrong class maximizing
    ``score + cost`` ('max-loss') or the best-scoring wrong class when it scores at least
    as high as the truth ('prediction'); lowest index on ties. Returns (loss, mistakes)."""
    total, mistakes = 0.0, 0
    for d in order:
        x, y = rows[d], ys[d]
        K = len(model.W)
        s = [model.score(k, x) for k in range(K)]
        wrong = [k for k in range(K) if k != y]
        top = max(wrong, key=lambda k: (s[k], -k))
        worst = max(wrong, key=lambda k: (s[k] + cost[y][k], -k))
        mistake = s[top] >= s[y]
        mistakes += mistake
        total += max(0.0, cost[y][worst] - s[y] + s[worst])
        rival = top if update == "prediction" else worst
        loss = cost[y][rival] - (s[y] - s[rival])
        # ||phi(x, y) - phi(x, rival)||^2: the two classes' rows (or twice the shared one)
        norm2 = naive_sq(x, y) + naive_sq(x, rival) + (2.0 if bias else 0.0)
        if loss > 0 and norm2 > 0 and (mistake or update != "prediction"):
            tau = naive_pa_tau(variant, loss, norm2, C)
            model.add(y, tau, x, bias)
            model.add(rival, -tau, x, bias)
        model.end_step()
    return total, mistakes


def naive_crammer_singer_pass(model, rows, ys, order, lam, schedule, eta0, bias=True):
    """SGD on the multi-class hinge (Sol eq. 10-11): step t shrinks w by ``1 - eta lam``;
    if ``1 - s_y + s_r > 0`` (r the best-scoring wrong class), ``w_y += eta x``,
    ``w_r -= eta x``. Returns (loss, mistakes)."""
    total, mistakes = 0.0, 0
    for d in order:
        x, y = rows[d], ys[d]
        K = len(model.W)
        s = [model.score(k, x) for k in range(K)]
        rival = max((k for k in range(K) if k != y), key=lambda k: (s[k], -k))
        margin = s[y] - s[rival]
        mistakes += margin <= 0
        eta = naive_eta(schedule, eta0, lam, model.n_iterates)
        model.shrink(1.0 - eta * lam)
        if margin < 1:
            total += 1 - margin
            model.add(y, eta, x, bias)
            model.add(rival, -eta, x, bias)
        model.end_step()
    return total, mistakes


def naive_per_label_pass(model, rows, Y, order, rule, C=1.0, lam=0.0, schedule="constant",
                         eta0=1.0, bias=True):
    """One hinge per label (Sol eq. 12-13), ``Y[d][l]`` in {-1, +1}. ``rule`` 'sgd': shrink
    by ``1 - eta lam``, then ``w_l += eta Y x`` for each violated label; PA rules
    ('pa', 'pa-i', 'pa-ii'): ``tau_l`` from the label's hinge and ``||x||^2 + bias``.
    Returns (loss, label mistakes)."""
    total, mistakes = 0.0, 0
    for d in order:
        x = rows[d]
        s = [model.score(k, x) for k in range(len(model.W))]
        if rule == "sgd":
            eta = naive_eta(schedule, eta0, lam, model.n_iterates)
            model.shrink(1.0 - eta * lam)
        for k, sk in enumerate(s):
            norm2 = naive_sq(x, k) + (1.0 if bias else 0.0)
            z = Y[d][k] * sk
            mistakes += z <= 0
            if z < 1:
                total += 1 - z
                if rule == "sgd":
                    model.add(k, eta * Y[d][k], x, bias)
                elif norm2 > 0:
                    model.add(k, naive_pa_tau(rule, 1 - z, norm2, C) * Y[d][k], x, bias)
        model.end_step()
    return total, mistakes


BLITZER_DOMAINS = ("books", "dvd", "electronics", "kitchen")


@functools.lru_cache(maxsize=None)
def hashed_blitzer(domains=BLITZER_DOMAINS, n_bits=18):
    """Blitzer et al.'s processed_acl reviews of ``domains`` as CSR rows over ``2**n_bits``
    buckets (``mmh3.hash(key, 0, signed=False) & mask``; colliding keys add their counts),
    read straight from the packaged archive. Returns ``(indices, values, offsets,
    domain per row, sentiment per row)``; parsed once per test session."""
    import io
    import tarfile

    import numpy as np

    from conftest import shared_datasets
    from nbsvm.io.sparse import read_blitzer

    mask = (1 << n_bits) - 1
    indices, values, offsets, domain, sentiment = [], [], [0], [], []
    seen: dict[str, int] = {}     # key -> bucket (keys repeat across reviews)
    path = shared_datasets() / "blitzer_mds" / "processed_acl_labeled.tar.gz"
    with tarfile.open(path) as tar:
        for name in domains:
            for polarity in ("positive", "negative"):
                raw = tar.extractfile(f"processed_acl/{name}/{polarity}.review")
                text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
                for row in read_blitzer(text):
                    buckets: dict[int, float] = {}
                    for key, value in zip(row.keys, row.values.tolist()):
                        b = seen.get(key)
                        if b is None:
                            b = seen[key] = mmh3.hash(key, 0, signed=False) & mask
                        buckets[b] = buckets.get(b, 0.0) + value
                    indices += buckets.keys()
                    values += buckets.values()
                    offsets.append(len(indices))
                    domain.append(name)
                    sentiment.append(row.labels[0])
    return (np.array(indices, dtype=np.int64), np.array(values), np.array(offsets),
            np.array(domain), np.array(sentiment))


# --------------------------------------------------------------------------------------
# (h) linear SGD / AdaGrad with penalties, projection and averaging, and mini-batch
#     Pegasos: explicit (unscaled) weights, every weight shrunk and averaged each step
# --------------------------------------------------------------------------------------

_naive_margin_loss, _naive_margin_dloss = naive_loss, naive_dloss


def naive_loss(loss: str, p: float, y: float) -> float:           # noqa: F811
    """The losses above, plus ``squared``: ``(p - y)^2 / 2`` (regression)."""
    if loss == "squared":
        return 0.5 * (p - y) ** 2
    return _naive_margin_loss(loss, p, y)


def naive_dloss(loss: str, p: float, y: float) -> float:          # noqa: F811
    if loss == "squared":
        return p - y
    return _naive_margin_dloss(loss, p, y)


def naive_rate(schedule: str, t: int, eta0: float, lam: float) -> float:
    """Step of update ``t`` (from 0)."""
    return {"constant": lambda: eta0,
            "optimal": lambda: eta0 / (1.0 + lam * eta0 * t),
            "invsqrt": lambda: eta0 / math.sqrt(t + 1.0),
            "pegasos": lambda: 1.0 / (lam * (t + 1.0))}[schedule]()


def _soft(z: float, threshold: float) -> float:
    return math.copysign(max(0.0, abs(z) - threshold), z) if z else 0.0


def _naive_average(st, avg_start):
    """Running mean of the iterates from update ``avg_start`` (1-based) on."""
    if avg_start and st["t"] >= avg_start:
        st["n_avg"] += 1
        n = st["n_avg"]
        st["avg"] = [a + (v - a) / n for a, v in zip(st["avg"], st["w"])]
        st["avg_b"] += (st["b"] - st["avg_b"]) / n


def naive_linear_state(d: int) -> dict:
    return dict(w=[0.0] * d, b=0.0, t=0, u=0.0, q=[0.0] * d, G=[0.0] * d, Gb=0.0,
                avg=[0.0] * d, avg_b=0.0, n_avg=0)


def naive_linear_sgd(rows, ys, order, st, loss, schedule, eta0, lam, lam1=0.0, lam2=0.0,
                     l1_method="cumulative", bias_rate=1.0, radius=None, avg_start=0):
    """One pass of SGD as defined in nbsvm/learners/regularizers.py; ``st`` from
    :func:`naive_linear_state` is updated in place. Returns ``(total_loss, mistakes)``.

    Step t: [truncated L1: catch-up ``w_i <- soft(w_i, u - q_i)``, ``q_i = u`` on x's
    features]; ``p = w.x + b``; ``eta = rate(t)``; ``w <- (1 - eta lam2) w`` (0 if that
    factor is <= 0); ``w -= eta g x``, ``b -= eta bias_rate g``; ``u += eta lam1`` and the
    L1 rule on x's features; projection of w on the ball; t += 1; running average. After
    the pass, truncated L1's catch-up on every weight.
    """
    total, mistakes = 0.0, 0
    w, q = st["w"], st["q"]
    for d in order:
        x, y = rows[d], float(ys[d])
        if lam1 and l1_method == "truncated":
            for i in x:
                w[i] = _soft(w[i], st["u"] - q[i])
                q[i] = st["u"]
        p = sum(w[i] * v for i, v in x.items()) + st["b"]
        total += naive_loss(loss, p, y)
        mistakes += y * p <= 0
        g = naive_dloss(loss, p, y)
        eta = naive_rate(schedule, st["t"], eta0, lam)
        if lam2:
            f = max(0.0, 1.0 - eta * lam2)
            w[:] = [f * wi for wi in w]
        for i, v in x.items():
            w[i] -= eta * g * v
        st["b"] -= eta * bias_rate * g
        if lam1:
            st["u"] += eta * lam1
            u = st["u"]
            for i in x:
                z = w[i]
                if l1_method == "truncated":
                    w[i] = _soft(z, u - q[i])
                    q[i] = u
                else:                                   # Tsuruoka et al. 2009
                    if z > 0:
                        w[i] = max(0.0, z - (u + q[i]))
                    elif z < 0:
                        w[i] = min(0.0, z + (u - q[i]))
                    q[i] += w[i] - z
        if radius:
            norm = math.sqrt(sum(wi * wi for wi in w))
            if norm > radius:
                w[:] = [wi * radius / norm for wi in w]
        st["t"] += 1
        _naive_average(st, avg_start)
    if lam1 and l1_method == "truncated":  # the truncations owed, before output (the
        # average of the iterates stays as it is)
        for i in range(len(w)):
            w[i] = _soft(w[i], st["u"] - q[i])
            q[i] = st["u"]
    return total, mistakes


def naive_linear_adagrad(rows, ys, order, st, loss, eta0, lam1=0.0, lam2=0.0, bias_rate=1.0,
                         eps=1e-8, avg_start=0):
    """One AdaGrad pass (Duchi et al. 2011) in float64; ``st`` updated in place.

    Per touched feature: ``gi = g x_i + lam2 w_i``; if ``gi``: ``G_i += gi^2``,
    ``w_i -= eta0 gi / sqrt(G_i + eps)``; if ``lam1`` and ``G_i > 0``: soft threshold
    ``eta0 lam1 / sqrt(G_i + eps)``. Bias: if ``g``: ``Gb += g^2``,
    ``b -= eta0 bias_rate g / sqrt(Gb + eps)``.
    """
    total, mistakes = 0.0, 0
    w, G = st["w"], st["G"]
    for d in order:
        x, y = rows[d], float(ys[d])
        p = sum(w[i] * v for i, v in x.items()) + st["b"]
        total += naive_loss(loss, p, y)
        mistakes += y * p <= 0
        g = naive_dloss(loss, p, y)
        for i, v in x.items():
            gi = g * v + lam2 * w[i]
            if gi:
                G[i] += gi * gi
                w[i] -= eta0 * gi / math.sqrt(G[i] + eps)
            if lam1 and G[i] > 0:
                w[i] = _soft(w[i], eta0 * lam1 / math.sqrt(G[i] + eps))
        if g:
            st["Gb"] += g * g
            st["b"] -= eta0 * bias_rate * g / math.sqrt(st["Gb"] + eps)
        st["t"] += 1
        _naive_average(st, avg_start)
    return total, mistakes


def naive_pegasos_batch(rows, ys, order, w, b, t, lam, k):
    """Mini-batch Pegasos (Shalev-Shwartz et al. 2007, Fig. 2) over consecutive batches of
    ``k`` (the last may be shorter; ``m`` its size). ``b`` is None (no bias) or the weight
    of a constant feature 1, regularized and projected with ``w``. Returns
    ``(w, b, t, total_hinge, violations)``.
    """
    w = [float(v) for v in w]
    total, violations = 0.0, 0
    for start in range(0, len(order), k):
        batch = list(order[start:start + k])
        m = len(batch)
        margins = [float(ys[d]) * (sum(w[i] * v for i, v in rows[d].items()) + (b or 0.0))
                   for d in batch]
        t += 1
        w = [(1.0 - 1.0 / t) * v for v in w]
        if b is not None:
            b *= 1.0 - 1.0 / t
        for d, margin in zip(batch, margins):
            if margin < 1.0:
                total += 1.0 - margin
                violations += 1
                for i, v in rows[d].items():
                    w[i] += float(ys[d]) * v / (lam * t * m)
                if b is not None:
                    b += float(ys[d]) / (lam * t * m)
        norm = math.sqrt(sum(v * v for v in w) + (b or 0.0) ** 2)
        if norm > 1.0 / math.sqrt(lam):
            f = 1.0 / (norm * math.sqrt(lam))
            w = [v * f for v in w]
            b = None if b is None else b * f
    return w, b, t, total, violations


def naive_dcd_svm_pass(rows, ys, order, alpha, w, b, C, loss):
    """One pass of dual coordinate descent for the L2-regularized SVM (Hsieh et al. 2008,
    Algorithm 1) over dict rows; ``b`` is None (no bias) or the weight of a constant
    feature 1. ``loss``: 'squared_hinge' (U = inf, D = 1/(2C)) or 'hinge' (U = C, D = 0).
    Returns ``(alpha, w, b, largest projected gradient, smallest)``."""
    upper = math.inf if loss == "squared_hinge" else C
    diag = 1.0 / (2.0 * C) if loss == "squared_hinge" else 0.0
    alpha, w = list(alpha), [float(v) for v in w]
    pgs = []
    for i in order:
        x, y = rows[i], float(ys[i])
        dot = sum(w[j] * v for j, v in x.items()) + (b if b is not None else 0.0)
        g = y * dot - 1.0 + diag * alpha[i]
        pg = min(g, 0.0) if alpha[i] == 0.0 else max(g, 0.0) if alpha[i] == upper else g
        pgs.append(pg)
        q = sum(v * v for v in x.values()) + (1.0 if b is not None else 0.0) + diag
        if pg != 0.0 and q > 0.0:  # an empty row without bias cannot move
            new = min(max(alpha[i] - g / q, 0.0), upper)
            for j, v in x.items():
                w[j] += (new - alpha[i]) * y * v
            if b is not None:
                b += (new - alpha[i]) * y
            alpha[i] = new
    return alpha, w, b, max(pgs), min(pgs)


def naive_dual_objective(rows, ys, alpha, C, loss, bias):
    """The SVM dual ``1/2 a'Qa - sum a`` (+ ``sum a^2 / (4C)`` for the squared hinge), with
    ``Q_ij = y_i y_j (x_i.x_j + bias)``, summed pair by pair."""
    n = len(rows)
    quad = 0.0
    for i in range(n):
        for j in range(n):
            dot = sum(v * rows[j].get(k, 0.0) for k, v in rows[i].items()) + bias
            quad += alpha[i] * alpha[j] * float(ys[i]) * float(ys[j]) * dot
    extra = sum(a * a for a in alpha) / (4.0 * C) if loss == "squared_hinge" else 0.0
    return 0.5 * quad - sum(alpha) + extra


# --------------------------------------------------------------------------------------
# (learn) named features of sparse files hashed for the backend learners (nbsvm.workflows.learn)
# --------------------------------------------------------------------------------------


def naive_hashed_row(keys, values, n_bits: int, seed: int) -> dict[int, float]:
    """``{bucket: value}`` of one example: ``mmh3`` of each name's UTF-8 bytes, masked to
    ``n_bits``; the values of names that land in the same bucket are summed."""
    row: dict[int, float] = {}
    for key, value in zip(keys, values):
        bucket = mmh3.hash(key, seed, signed=False) & ((1 << n_bits) - 1)
        row[bucket] = row.get(bucket, 0.0) + float(value)
    return row
