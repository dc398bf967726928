#!/usr/bin/env python
"""``make rcv1``: Bottou's RCV1-v2 CCAT benchmark (``svmsgd`` / ``svmasgd``), as far as the
data here allows, plus the Pegasos progress table of the Clojure blog post and a scale run.

1. **Small CCAT data** (``../shared/datasets/rcv1/``): train on ``train2000.dat`` +
   VW's ``rcv1_small.dat`` (3,000 examples, not deduplicated), test on
   ``rcv1_small_test.data`` (500). SGD-hinge (lambda 1e-4), SGD-log (lambda 5e-7), Pegasos
   (lambda 1e-4, no bias) and averaged SGD (both losses), with Bottou's ``eta0``
   calibration; per-epoch progress; primal objective beside scikit-learn's batch optimum
   on the same data (relative gap) and beside Bottou's published full-data figures.
2. **Pegasos progress replay** on ``train2000.dat`` (lambda 1e-4, file order, one pass):
   every 100 updates, the non-zero weights, the margin violations so far and their rate,
   for the published table, a literal replay of the post's code and nbsvm's Pegasos.
3. **Scale run** on a synthetic corpus of RCV1's shape (781,265 x 47,152, ~77 non-zeros per
   row, Zipf feature frequencies, planted linear rule, 5% label noise): seconds per epoch
   of SGD-hinge / SGD-log beside Bottou's svmsgd (5 epochs in 0.97 s, 2008) and liblinear
   on the same data.

With ``RCV1_FULL=1`` the full RCV1-v2 data is downloaded and prepared as Bottou's
``prep_rcv1`` does (``pipelines/rcv1_full.py``) and the learners train on it out of core.

    python pipelines/rcv1.py [--seed 0] [--epochs 1000] [--scale-docs 781265] [--no-scale]
"""
from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import tarfile
import time
import zlib
from pathlib import Path

import numpy as np

from _report import RESULTS, shared_datasets, start, write_results
from nbsvm.learners.eta0 import bottou_search
from nbsvm.errors import NBSVMError
from nbsvm.io.sparse import read_svmlight
from nbsvm.data.rows import SparseRows
from nbsvm.learners.linear import SGDClassifier
from nbsvm.learners.pegasos import Pegasos

N_FEATURES = 47236           # the LYRL2004 stem dictionary; the files are 1-based
HINGE_LAM, LOG_LAM = 1e-4, 5e-7
TRAIN_FILE, VW_TAR = "train2000.dat.gz", "vw_rcv1_small.tar.gz"
VW_TRAIN, VW_TEST = "rcv1_small.dat", "rcv1_small_test.data"

# Bottou's sgd-2.0 README (svm/README.txt), RCV1-v2 CCAT, 781,265 train / 23,149 test:
# (method, loss, lambda, epochs, training seconds, primal objective on train, test error %)
BOTTOU = [
    ("svmsgd (SGD)", "hinge", HINGE_LAM, 5, 0.97, 0.227535, 6.026),
    ("svmasgd (averaged SGD)", "hinge", HINGE_LAM, 3, 0.96, 0.227485, 6.026),
    ("SVMLight", "hinge", HINGE_LAM, None, 23642.0, 0.227488, 6.0219),
    ("SVMPerf", "hinge", HINGE_LAM, None, 66.0, 0.2278, 6.0348),
    ("liblinear 1.8 -s 3 (dual CD)", "hinge", HINGE_LAM, None, 2.50, None, 6.0219),
    ("svmsgd (SGD)", "log", LOG_LAM, 12, 4.06, 0.128316, 5.141),
    ("svmasgd (averaged SGD)", "log", LOG_LAM, 8, 4.54, 0.128131, 5.136),
    ("liblinear 1.8 -s 0 (TRON)", "log", LOG_LAM, None, 33.40, None, 5.137),
    ("liblinear 1.8 -s 7 (dual CD)", "log", LOG_LAM, None, 15.18, None, 5.128),
]
# the post's table: (updates, feature count for w, total errors, "running accuracy")
PEGASOS_PUBLISHED = [
    (100, 2145, 64, 0.64), (200, 3333, 123, 0.615), (300, 4051, 175, 0.5833333),
    (400, 4755, 229, 0.5725), (500, 5236, 276, 0.552), (600, 5576, 318, 0.53),
    (700, 5870, 356, 0.50857145), (800, 6050, 388, 0.485), (900, 6325, 418, 0.46444446),
    (1000, 6578, 444, 0.444),
]


# ---- data ------------------------------------------------------------------------------------

def rows_from_records(records, n_features: int = N_FEATURES) -> tuple[SparseRows, np.ndarray]:
    """Stack svmlight records (:class:`nbsvm.io.sparse.SparseRow`) into CSR rows and a label
    array (strings, ``"1"`` / ``"-1"``)."""
    records = list(records)
    if not records:
        raise NBSVMError("no examples read")
    offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum([len(r.keys) for r in records], out=offsets[1:])
    indices = np.concatenate([r.keys for r in records]).astype(np.int64)
    if indices.size and indices.max() >= n_features:
        bad = next(r for r in records if len(r.keys) and r.keys.max() >= n_features)
        raise NBSVMError(f"feature index {int(bad.keys.max()) + 1} beyond the {n_features} "
                         "RCV1 features", path=bad.source, line=bad.line)
    values = np.concatenate([r.values for r in records])
    labels = np.array([r.labels[0] for r in records])
    unknown = sorted(set(labels.tolist()) - {"1", "-1"})
    if unknown:
        raise NBSVMError(f"RCV1 CCAT labels are 1 / -1, found {', '.join(unknown[:3])}",
                         path=records[0].source)
    return SparseRows(indices, values, offsets, n_features), labels


def read_svmlight_file(path: Path) -> tuple[SparseRows, np.ndarray]:
    """An svmlight file (plain or ``.gz``, 1-based indices) as rows and labels."""
    if not Path(path).is_file():
        raise NBSVMError("file not found", path=str(path))
    return rows_from_records(read_svmlight(path, index_base=1))


class NamedText(io.StringIO):
    """An in-memory text file with a ``name`` (the readers put it in error messages)."""

    name = "<stream>"


def read_tar_member(tar_path: Path, member_name: str) -> tuple[SparseRows, np.ndarray]:
    """A VW-format member (``label |f idx:val ...``) of a tar archive as rows and labels
    (``read_svmlight`` skips the ``|f`` namespace marker)."""
    if not Path(tar_path).is_file():
        raise NBSVMError("file not found", path=str(tar_path))
    try:
        with tarfile.open(tar_path) as tar:
            member = next((m for m in tar.getmembers() if m.name.endswith(member_name)), None)
            if member is None:
                raise NBSVMError(f"no member {member_name!r} in the archive",
                                 path=str(tar_path))
            raw = tar.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
        raise NBSVMError(f"cannot read the archive ({type(e).__name__}: {e})",
                         path=str(tar_path)) from None
    text = NamedText(raw.decode("utf-8", errors="replace"))
    text.name = f"{tar_path}:{member.name}"              # error messages name the member
    return rows_from_records(read_svmlight(text, index_base=1))


def concat_rows(parts: list[SparseRows]) -> SparseRows:
    """The rows of ``parts`` one after the other."""
    offsets = [np.zeros(1, dtype=np.int64)]
    for p in parts:
        offsets.append(p.offsets[1:] + offsets[-1][-1])
    return SparseRows(np.concatenate([p.indices for p in parts]),
                      np.concatenate([p.values for p in parts]), np.concatenate(offsets),
                      parts[0].n_features)


def row_keys(X: SparseRows) -> list[bytes]:
    """A hashable key per row (its indices and values), to find identical vectors."""
    return [X.indices[a:b].tobytes() + X.values[a:b].tobytes()
            for a, b in zip(X.offsets[:-1], X.offsets[1:])]


def overlap_counts(parts: dict[str, SparseRows], test: SparseRows) -> dict:
    """How the sources overlap: duplicate vectors inside the training set and test vectors
    that also occur in training (the dataset README: the sources are one pool)."""
    train_keys = [k for X in parts.values() for k in row_keys(X)]
    test_keys = row_keys(test)
    seen = set(train_keys)
    return dict(train_rows=len(train_keys), train_distinct=len(seen),
                test_rows=len(test_keys), test_in_train=sum(k in seen for k in test_keys))


def load_small(root: Path) -> dict:
    """Training set train2000 + rcv1_small.dat (3,000 rows, not deduplicated) and the 500
    test rows, with their overlap counts."""
    X1, y1 = read_svmlight_file(root / TRAIN_FILE)
    X2, y2 = read_tar_member(root / VW_TAR, VW_TRAIN)
    Xt, yt = read_tar_member(root / VW_TAR, VW_TEST)
    return dict(X=concat_rows([X1, X2]), y=np.concatenate([y1, y2]), Xt=Xt, yt=yt,
                X2000=X1, y2000=y1,
                overlap=overlap_counts({"train2000": X1, "rcv1_small": X2}, Xt))


# ---- objectives and batch optima -------------------------------------------------------------

def to_csr(X: SparseRows):
    import scipy.sparse as sp
    return sp.csr_matrix((X.values, X.indices, X.offsets), shape=(len(X), X.n_features))


def signs(y) -> np.ndarray:
    return np.where(np.asarray(y) == "1", 1.0, -1.0)


def primal(w, b, X: SparseRows, y, lam: float, loss: str) -> float:
    """Bottou's cost ``lam/2 ||w||^2 + mean loss(y (w.x + b))``: the bias is not
    regularized (his default ``-DREGULARIZED_BIAS=0``)."""
    z = signs(y) * (to_csr(X) @ w + b)
    losses = np.maximum(0.0, 1.0 - z) if loss == "hinge" else np.logaddexp(0.0, -z)
    return 0.5 * lam * float(w @ w) + float(losses.mean())


def test_error(w, b, X: SparseRows, y) -> float:
    """Fraction of sign mistakes (a score of 0 counts as negative, as ``predict``)."""
    return float(np.mean(np.where(to_csr(X) @ w + b > 0, 1.0, -1.0) != signs(y)))


def batch_optimum(X, y, Xt, yt, lam: float, loss: str, bias: bool) -> dict:
    """scikit-learn's solution of the same problem (C = 1/(lam n)).

    Hinge: liblinear's dual coordinate descent (``LinearSVC``); with a bias its constant
    feature is 3, so the bias penalty is ``lam/2 (b/3)^2`` (about 1e-8 here) and the problem
    is Bottou's (unregularized bias) to within that: a feature of 10 gives the same
    objective to 1e-10, at 10x the time; 30 no longer converges. Log: Newton-CG
    (``LogisticRegression``), whose intercept is not regularized (L-BFGS reaches the same
    objective to 1e-12 in 30x the time).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC
    n = len(y)
    C = 1.0 / (lam * n)
    if loss == "hinge":
        model = LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=bias,
                          intercept_scaling=3.0, tol=1e-8, max_iter=100_000)
        name = "LinearSVC (liblinear dual CD)"
    else:
        model = LogisticRegression(C=C, solver="newton-cg", fit_intercept=bias, tol=1e-12,
                                   max_iter=100_000)
        name = "LogisticRegression (Newton-CG)"
    t0 = time.perf_counter()
    model.fit(to_csr(X), y)
    seconds = time.perf_counter() - t0
    sign = 1.0 if model.classes_[1] == "1" else -1.0         # classes sort as "-1", "1"
    w = sign * model.coef_.ravel()
    b = sign * float(model.intercept_[0]) if bias else 0.0
    return dict(method=name, seconds=seconds, objective=primal(w, b, X, y, lam, loss),
                test_error=test_error(w, b, Xt, yt), iterations=int(np.max(model.n_iter_)))


# ---- online learners -------------------------------------------------------------------------

def calibrate_eta0(X: SparseRows, y, loss: str, lam: float, seed: int,
                   sample: int = 1000) -> float:
    """Bottou's ``determineEta0`` (nbsvm.learners.eta0.bottou_search): from eta 1, move by 2
    towards the constant step whose one pass over a sample of ``sample`` examples gives
    the lowest cost on that sample; return the lower end of the final bracket."""
    order = np.random.default_rng(seed).permutation(len(y))[:sample]
    Xs, ys = X.take(order), y[order]

    def cost(eta):
        if eta * lam >= 1.0:                # the learner refuses such a step
            return np.inf
        m = SGDClassifier(loss=loss, schedule="constant", eta0=eta, lam=lam, epochs=1)
        return m.partial_fit(Xs, ys).objective(Xs, ys)

    return bottou_search(cost)


def online_learners(X, y, seed: int) -> list[dict]:
    """The four learners of the table (and averaged log): name, loss, lambda, the learner,
    and Bottou's epoch count for the same method (for the row at his budget)."""
    eta_h = calibrate_eta0(X, y, "hinge", HINGE_LAM, seed)
    eta_l = calibrate_eta0(X, y, "log", LOG_LAM, seed)
    sgd = dict(schedule="optimal", penalty="l2", fit_intercept=True, bias_rate=0.01, seed=seed)
    return [
        dict(name="SGD hinge", loss="hinge", lam=HINGE_LAM, bottou_epochs=5, eta0=eta_h,
             learner=SGDClassifier(loss="hinge", lam=HINGE_LAM, eta0=eta_h, **sgd)),
        dict(name="averaged SGD hinge", loss="hinge", lam=HINGE_LAM, bottou_epochs=3,
             eta0=eta_h, learner=SGDClassifier(loss="hinge", lam=HINGE_LAM, eta0=eta_h,
                                               average=True, **sgd)),
        dict(name="Pegasos (no bias)", loss="hinge", lam=HINGE_LAM, bottou_epochs=5,
             eta0=None, learner=Pegasos(lam=HINGE_LAM, seed=seed)),
        dict(name="SGD log", loss="log", lam=LOG_LAM, bottou_epochs=12, eta0=eta_l,
             learner=SGDClassifier(loss="log", lam=LOG_LAM, eta0=eta_l, **sgd)),
        dict(name="averaged SGD log", loss="log", lam=LOG_LAM, bottou_epochs=8, eta0=eta_l,
             learner=SGDClassifier(loss="log", lam=LOG_LAM, eta0=eta_l, average=True, **sgd)),
    ]


def train_epochs(spec: dict, data: dict, epochs: int, log_every: int, seed: int) -> list[dict]:
    """Train ``spec["learner"]`` for ``epochs`` passes, each over a new seeded permutation
    (as ``fit`` does); after every pass record the training loss, primal objective, test
    error and the training seconds so far (evaluation not timed). Prints progress for every
    epoch up to Bottou's epoch count, then every ``log_every``."""
    m, X, y, Xt, yt = spec["learner"], data["X"], data["y"], data["Xt"], data["yt"]
    rng = np.random.default_rng(seed)
    trained, history = 0.0, []
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        m.partial_fit(X, y, order=rng.permutation(len(y)))
        trained += time.perf_counter() - t0
        row = dict(epoch=epoch, loss=m.last_stats_["loss"] / len(y), seconds=trained,
                   objective=primal(m.coef_, m.intercept_, X, y, spec["lam"], spec["loss"]),
                   test_error=test_error(m.coef_, m.intercept_, Xt, yt))
        history.append(row)
        if epoch <= spec["bottou_epochs"] or epoch % log_every == 0 or epoch == epochs:
            print(f"  {spec['name']:<20} epoch {epoch:4d}  loss {row['loss']:.5f}  "
                  f"objective {row['objective']:.6f}  test error {100 * row['test_error']:5.2f}%"
                  f"  {row['seconds']:.3f} s", flush=True)
    return history


def check_objective(spec: dict, data: dict) -> None:
    """Our primal must be the learner's own ``objective`` (SGDClassifier: ``lam/2 ||w||^2 +
    mean loss``, bias not regularized; Pegasos without bias: the same with ``b = 0``)."""
    m = spec["learner"]
    ours = primal(m.coef_, m.intercept_, data["X"], data["y"], spec["lam"], spec["loss"])
    theirs = m.objective(data["X"], data["y"])
    if not np.isclose(ours, theirs, rtol=1e-9):
        raise AssertionError(f"{spec['name']}: objective {theirs} != Bottou's cost {ours}")


def small_data_rows(data: dict, epochs: int, log_every: int, seed: int) -> list[dict]:
    """Every online learner at Bottou's epoch count and at ``epochs``, and the batch optima,
    as tidy rows (gap: relative excess of the objective over the batch optimum)."""
    print("== batch optima (scikit-learn) on the same 3,000 examples", flush=True)
    optima = {}
    for loss, lam, bias in (("hinge", HINGE_LAM, True), ("hinge", HINGE_LAM, False),
                            ("log", LOG_LAM, True)):
        opt = batch_optimum(data["X"], data["y"], data["Xt"], data["yt"], lam, loss, bias)
        optima[(loss, bias)] = opt
        print(f"  {opt['method']:<32} {loss:<5} bias={bias!s:<5} objective "
              f"{opt['objective']:.6f}  test error {100 * opt['test_error']:.2f}%  "
              f"{opt['seconds']:.2f} s ({opt['iterations']} iterations)", flush=True)
    rows = [dict(part="small", method=o["method"], loss=loss, lam=HINGE_LAM if loss == "hinge"
                 else LOG_LAM, bias="unregularized" if bias else "none", setting="optimum",
                 epochs=None, train_seconds=o["seconds"], objective=o["objective"],
                 gap_pct=0.0, test_error_pct=100 * o["test_error"], source="ours")
            for (loss, bias), o in optima.items()]
    print(f"== online learners: {epochs} epochs each (progress every epoch up to Bottou's "
          f"count, then every {log_every})", flush=True)
    for spec in online_learners(data["X"], data["y"], seed):
        if spec["eta0"] is not None:
            print(f"  {spec['name']}: eta0 {spec['eta0']:g} (Bottou's calibration on 1,000 "
                  "examples)", flush=True)
        history = train_epochs(spec, data, epochs, log_every, seed)
        check_objective(spec, data)
        bias = not spec["name"].startswith("Pegasos")
        optimum = optima[(spec["loss"], bias)]["objective"]
        for h in (history[spec["bottou_epochs"] - 1], history[-1]):
            rows.append(dict(
                part="small", method=spec["name"], loss=spec["loss"], lam=spec["lam"],
                bias="unregularized" if bias else "none",
                setting="Bottou's epochs" if h is history[spec["bottou_epochs"] - 1]
                else "long run", epochs=h["epoch"], train_seconds=h["seconds"],
                objective=h["objective"], gap_pct=100 * (h["objective"] - optimum) / optimum,
                test_error_pct=100 * h["test_error"], source="ours"))
    return rows


def published_rows() -> list[dict]:
    """Bottou's full-data figures (781,265 / 23,149) as tidy rows."""
    return [dict(part="published (full RCV1, Bottou 2008)", method=m, loss=loss, lam=lam,
                 bias="unregularized" if "svm" in m and "SVM" not in m else "regularized",
                 setting="published", epochs=e, train_seconds=s, objective=obj, gap_pct=None,
                 test_error_pct=err, source="Bottou, sgd-2.0 README")
            for m, loss, lam, e, s, obj, err in BOTTOU]


# ---- Pegasos progress replay -----------------------------------------------------------------

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
            table.append(dict(updates=step, features=int(keys.sum()), violations=errors,
                              rate=errors / step))
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
        table.append(dict(updates=t, features=int(np.count_nonzero(m.coef_)),
                          violations=violations, rate=violations / t))
    return table


def pegasos_table(X: SparseRows, y, lam: float, rows: int) -> "pd.DataFrame":
    """Published, literal-replay and nbsvm columns side by side for the first ``rows``
    reports (the post shows 10)."""
    import pandas as pd
    lit, ours = blog_replay(X, y, lam), nbsvm_replay(X, y, lam)
    out = []
    for k in range(min(rows, len(ours))):
        pub = PEGASOS_PUBLISHED[k] if k < len(PEGASOS_PUBLISHED) else (None,) * 4
        out.append(dict(updates=ours[k]["updates"], published_features=pub[1],
                        published_violations=pub[2], published_rate=pub[3],
                        replay_features=lit[k]["features"], replay_violations=lit[k]["violations"],
                        replay_rate=lit[k]["rate"], nbsvm_features=ours[k]["features"],
                        nbsvm_violations=ours[k]["violations"], nbsvm_rate=ours[k]["rate"]))
    return pd.DataFrame(out)


# ---- synthetic corpus of RCV1's shape ----------------------------------------------------------

def zipf_probabilities(n_features: int, exponent: float) -> np.ndarray:
    p = 1.0 / np.arange(1, n_features + 1) ** exponent
    return p / p.sum()


def draws_for_distinct(p: np.ndarray, mean_nnz: float, length_factors: np.ndarray) -> float:
    """The mean number of Zipf draws per row whose expected number of *distinct* features,
    averaged over the row-length factors, is ``mean_nnz`` (bisection)."""
    log_miss = np.log1p(-p)

    def distinct(draws):
        return float(np.mean([np.sum(-np.expm1(draws * f * log_miss))
                              for f in length_factors]))

    lo, hi = mean_nnz, 50.0 * mean_nnz
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if distinct(mid) < mean_nnz else (lo, mid)
    return 0.5 * (lo + hi)


def synthetic_rows(rng, n_docs: int, p: np.ndarray, draws: float, idf: np.ndarray,
                   shape: float, chunk: int = 50_000) -> SparseRows:
    """Rows of Zipf draws (row length Gamma-distributed around ``draws``), repeated draws
    merged into a term frequency, values ``(1 + log tf) idf`` scaled to unit length.
    Built ``chunk`` rows at a time so the sort's temporary memory stays small."""
    n_features = len(p)
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    ind_parts, val_parts, counts = [], [], np.zeros(n_docs, dtype=np.int64)
    for lo in range(0, n_docs, chunk):
        n = min(chunk, n_docs - lo)
        lengths = np.maximum(1, np.round(draws * rng.gamma(shape, 1.0 / shape, n))).astype(np.int64)
        feats = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
        row = np.repeat(np.arange(n, dtype=np.int64), lengths)
        keys, tf = np.unique(row * n_features + feats, return_counts=True)
        r, f = np.divmod(keys, n_features)
        v = (1.0 + np.log(tf)) * idf[f]
        norms = np.sqrt(np.bincount(r, weights=v * v, minlength=n))
        ind_parts.append(f)
        val_parts.append(v / norms[r])
        counts[lo:lo + n] = np.bincount(r, minlength=n)
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return SparseRows(np.concatenate(ind_parts), np.concatenate(val_parts), offsets, n_features)


def synthetic_rcv1(n_docs: int, n_test: int, seed: int, n_features: int = 47152,
                   mean_nnz: float = 77.0, exponent: float = 1.0, planted: float = 0.003,
                   positive: float = 0.474, noise: float = 0.05, shape: float = 2.0) -> dict:
    """A seeded corpus of RCV1's shape: train and test rows, ``"1"``/``"-1"`` labels from a
    planted sparse rule ``sign(w*.x - threshold)`` (``planted`` x ``n_features`` features,
    141 by default, drawn among the 3,000 most frequent, get N(0, 1) weights: a denser
    rule needs a norm lambda 1e-4 does not allow, 40% test error with 10% of all features;
    threshold for a ``positive`` share) with a ``noise`` share of labels flipped.
    Features are ranked by a Zipf law of ``exponent``; idf is ``-log`` of the expected
    document frequency."""
    if n_docs < 1 or n_test < 1:
        raise NBSVMError(f"the synthetic corpus needs >= 1 train and test row, got "
                         f"{n_docs} / {n_test}")
    rng = np.random.default_rng(seed)
    p = zipf_probabilities(n_features, exponent)
    from scipy.stats import gamma
    factors = gamma.ppf((np.arange(512) + 0.5) / 512, shape, scale=1.0 / shape)
    draws = draws_for_distinct(p, mean_nnz, factors)
    idf = -np.log(-np.expm1(draws * np.log1p(-p)))
    X = synthetic_rows(rng, n_docs + n_test, p, draws, idf, shape)
    w = np.zeros(n_features)
    # planted features among the 3,000 most frequent, so that most rows hold some
    head = min(n_features, 3000)
    support = rng.choice(head, size=min(head, max(1, int(planted * n_features))), replace=False)
    w[support] = rng.normal(size=len(support))
    score = to_csr(X) @ w
    # the top ``positive`` share by score is positive; ties (rows without a planted
    # feature score 0) broken at random
    ranked = np.lexsort((rng.random(len(score)), score))
    y = np.full(len(score), "-1")
    y[ranked[len(score) - int(round(positive * len(score))):]] = "1"
    flip = rng.random(len(y)) < noise
    y[flip] = np.where(y[flip] == "1", "-1", "1")
    train, test = np.arange(n_docs), np.arange(n_docs, n_docs + n_test)
    return dict(X=X.take(train), y=y[train], Xt=X.take(test), yt=y[test], w=w,
                flipped=float(flip.mean()), draws=draws)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def time_sgd_epochs(loss: str, lam: float, data: dict, epochs: int, seed: int) -> dict:
    """Seconds per epoch of SGDClassifier on the synthetic corpus: the kernel pass alone
    (labels encoded once) and ``partial_fit`` as a user calls it (which also checks the rows
    and encodes the string labels every call); median over ``epochs`` after a JIT warm-up."""
    X, y = data["X"], data["y"]
    warm = SGDClassifier(loss=loss, lam=lam, eta0=0.5)
    warm.partial_fit(X.take(np.arange(min(100, len(y)))), y[:100], classes=["-1", "1"])
    m = SGDClassifier(loss=loss, lam=lam, eta0=0.5 if loss == "hinge" else 16.0, seed=seed)
    rng = np.random.default_rng(seed)
    m.partial_fit(X.take(np.arange(1)), y[:1], classes=["-1", "1"])     # allocate the state
    codes = m._encode(y)
    kernel, user = [], []
    for epoch in range(epochs):
        order = rng.permutation(len(y))
        t0 = time.perf_counter()
        m._pass(X, codes, order)             # the epoch's kernel, as fit's inner call
        kernel.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        m.partial_fit(X, y, order=rng.permutation(len(y)))
        user.append(time.perf_counter() - t0)
        print(f"  SGD {loss:<5} epoch {2 * epoch + 1}-{2 * epoch + 2}: kernel pass "
              f"{kernel[-1]:.3f} s, partial_fit {user[-1]:.3f} s", flush=True)
    return dict(kernel=float(np.median(kernel)), user=float(np.median(user)),
                test_error=float(np.mean(m.predict(data["Xt"]) != data["yt"])),
                epochs=2 * epochs)


def time_liblinear(lam: float, data: dict) -> dict:
    """liblinear's dual coordinate descent (``LinearSVC``, hinge, bias as a constant
    feature like ``-B 1``, single thread) to its default tolerance, fit time and test
    error."""
    from sklearn.svm import LinearSVC
    X = to_csr(data["X"])
    m = LinearSVC(C=1.0 / (lam * len(data["y"])), loss="hinge", dual=True, max_iter=1000)
    t0 = time.perf_counter()
    m.fit(X, data["y"])
    seconds = time.perf_counter() - t0
    return dict(seconds=seconds, iterations=int(m.n_iter_),
                test_error=float(np.mean(m.predict(to_csr(data["Xt"])) != data["yt"])))


def scale_rows(n_docs: int, n_test: int, epochs: int, seed: int) -> tuple[list[dict], dict]:
    """Generate the synthetic corpus and time SGD-hinge, SGD-log and liblinear on it."""
    print(f"== scale run: synthetic RCV1-shaped corpus, {n_docs:,} + {n_test:,} rows", flush=True)
    t0 = time.perf_counter()
    data = synthetic_rcv1(n_docs, n_test, seed)
    X = data["X"]
    nnz = np.diff(X.offsets)
    stats = dict(rows=len(X), features=X.n_features, nnz=int(X.offsets[-1]),
                 mean_nnz=float(nnz.mean()), median_nnz=float(np.median(nnz)),
                 positive=float(np.mean(data["y"] == "1")), flipped=data["flipped"],
                 unplanted=float(np.mean(to_csr(X) @ data["w"] == 0)),
                 seconds=time.perf_counter() - t0,
                 array_mb=(X.indices.nbytes + X.values.nbytes + X.offsets.nbytes) / 2 ** 20)
    print(f"  generated in {stats['seconds']:.1f} s: {stats['nnz']:,} non-zeros "
          f"({stats['mean_nnz']:.1f} per row, median {stats['median_nnz']:.0f}), "
          f"{100 * stats['positive']:.1f}% positive, {100 * stats['flipped']:.1f}% labels "
          f"flipped; rows take {stats['array_mb']:.0f} MiB as int64 + float64", flush=True)
    rows = []
    for loss, lam in (("hinge", HINGE_LAM), ("log", LOG_LAM)):
        r = time_sgd_epochs(loss, lam, data, (epochs + 1) // 2, seed)
        for what, sec in (("kernel pass", r["kernel"]), ("partial_fit", r["user"])):
            rows.append(dict(part="scale (synthetic 781,265 x 47,152)", method=f"SGD {loss}",
                             loss=loss, lam=lam, bias="unregularized",
                             setting=f"5 epochs: 5 x the median epoch ({what}, "
                                     f"{r['epochs'] // 2} epochs timed)",
                             epochs=5, train_seconds=5 * sec, objective=None, gap_pct=None,
                             test_error_pct=100 * r["test_error"], source="ours"))
    print("  liblinear (LinearSVC dual CD, hinge) ...", flush=True)
    lib = time_liblinear(HINGE_LAM, data)
    print(f"  liblinear: {lib['seconds']:.2f} s ({lib['iterations']} iterations), test error "
          f"{100 * lib['test_error']:.2f}%", flush=True)
    rows.append(dict(part="scale (synthetic 781,265 x 47,152)", method="liblinear (LinearSVC)",
                     loss="hinge", lam=HINGE_LAM, bias="regularized (-B 1)",
                     setting=f"fit to tol 1e-4 ({lib['iterations']} iterations)", epochs=None,
                     train_seconds=lib["seconds"], objective=None, gap_pct=None,
                     test_error_pct=100 * lib["test_error"], source="ours"))
    stats["peak_rss_mb"] = peak_rss_mb()
    print(f"  peak memory of the process so far: {stats['peak_rss_mb']:.0f} MiB", flush=True)
    return rows, stats


# ---- main --------------------------------------------------------------------------------------

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=shared_datasets() / "rcv1",
                    help="folder with train2000.dat.gz and vw_rcv1_small.tar.gz")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=1000, help="passes of the long runs")
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--replay-rows", type=int, default=20,
                    help="reports of the Pegasos replay shown (every 100 updates)")
    ap.add_argument("--scale-docs", type=int, default=781265)
    ap.add_argument("--scale-test", type=int, default=23149)
    ap.add_argument("--scale-epochs", type=int, default=6,
                    help="timed epochs per SGD loss on the synthetic corpus")
    ap.add_argument("--no-scale", action="store_true", help="skip the scale run")
    ap.add_argument("--full-dir", type=Path, default=Path("data") / "rcv1_full",
                    help="with RCV1_FULL=1: where the full data is downloaded and prepared")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    for name in ("epochs", "log_every", "replay_rows", "scale_docs", "scale_test",
                 "scale_epochs"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.epochs < 12:        # the table reports each learner at Bottou's epoch count too
        ap.error("--epochs must be >= 12 (Bottou's epoch count for SGD log)")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    full = os.environ.get("RCV1_FULL") == "1"
    config = start("rcv1", dict(vars(args), RCV1_FULL=full, hinge_lambda=HINGE_LAM,
                                log_lambda=LOG_LAM, n_features=N_FEATURES))
    if full:                    # the command that reproduces this run sets the variables too
        env = " ".join(f"{k}={os.environ[k]}" for k in ("RCV1_FULL", "RCV1_SOURCE")
                       if os.environ.get(k))
        config["_command"] = f"{env} {config['_command']}"
        print(f"  (with {env})", flush=True)
    import pandas as pd
    data = load_small(args.data)
    ov = data["overlap"]
    print(f"== data: {ov['train_rows']} training rows (train2000 + rcv1_small, "
          f"{ov['train_distinct']} distinct vectors, kept as they are), {ov['test_rows']} test "
          f"rows of which {ov['test_in_train']} also occur in training", flush=True)
    rows = small_data_rows(data, args.epochs, args.log_every, args.seed) + published_rows()

    print("== Pegasos progress on train2000.dat (lambda 1e-4, file order, one pass)", flush=True)
    replay = pegasos_table(data["X2000"], data["y2000"], HINGE_LAM, args.replay_rows)
    print(replay.to_string(index=False), flush=True)

    scale = None
    if not args.no_scale:
        scale_part, scale = scale_rows(args.scale_docs, args.scale_test, args.scale_epochs,
                                       args.seed)
        rows += scale_part
    if full:
        from rcv1_full import run_full
        rows += run_full(args.full_dir, seed=args.seed)

    frame = pd.DataFrame(rows)
    print("\n== our figures beside the published ones", flush=True)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(frame.drop(columns=["source"]).to_string(index=False), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    replay_tmp = args.out / "rcv1_pegasos_replay.csv.tmp"
    replay.to_csv(replay_tmp, index=False)
    replay_tmp.replace(args.out / "rcv1_pegasos_replay.csv")
    write_results("rcv1", frame, title="RCV1 CCAT: Bottou's SGD benchmark, Pegasos progress, "
                  "scale", notes=report_notes(ov, scale, full),
                  extra_tables={"Pegasos progress on train2000.dat (also "
                                "results/rcv1_pegasos_replay.csv)": replay},
                  config=config, out=args.out)
    return 0


def report_notes(overlap: dict, scale: dict | None, full: bool) -> list[str]:
    """The explanations that go above the tables in ``results/rcv1.md``."""
    notes = [
        f"Small data: {overlap['train_rows']} training rows (train2000 + VW rcv1_small.dat, "
        f"not deduplicated: {overlap['train_distinct']} distinct vectors), 500 test rows "
        f"(rcv1_small_test.data) of which {overlap['test_in_train']} also occur in training. "
        "Bottou's figures are on the full data (781,265 / 23,149); only the objective gap to "
        "the batch optimum on the same data is comparable, not the absolute numbers.",
        "Objective: Bottou's cost `lam/2 ||w||^2 + mean loss(y (w.x + b))`, bias not "
        "regularized (SGDClassifier.objective is exactly this; Pegasos has no bias, b = 0, "
        "and is compared with the no-bias optimum). Batch optima: LinearSVC (liblinear dual "
        "CD, tol 1e-8, bias feature 3 so its penalty is about 1e-8) and LogisticRegression "
        "(Newton-CG, tol 1e-12, unregularized intercept), C = 1/(lam n).",
        "SGD: Bottou's schedule eta0/(1 + lam eta0 t), eta0 from his calibration on 1,000 "
        "examples, bias step 0.01 x eta; averaging from the first update (svmasgd uses "
        "(1 + lam eta0 t)^-0.75 steps; ours keeps the SGD schedule). Training seconds exclude "
        "the per-epoch evaluation.",
        "Pegasos replay: the literal replay of the post's code (replay_*) reproduces all 10 "
        "published rows exactly. nbsvm's Pegasos (nbsvm_*) differs slightly for two reasons: "
        "(1) it counts after example t, the post reports step t before seeing example t "
        "(t - 1 examples counted, divided by t), so ours includes one more example's "
        "features and violation; (2) it follows the paper, w shrinks by (1 - 1/t) at every "
        "step, while the post's `update` leaves w untouched when the margin is >= 1. Both "
        "read the file in order, one example per step, no sampling, start from w = 0 and "
        "project on the ball of radius 1/sqrt(lambda); the post counts keys ever added to "
        "its hash map, we count non-zero weights (the same here).",
    ]
    if scale is not None:
        notes.append(
            f"Scale run: synthetic corpus, {scale['rows']:,} rows x {scale['features']:,} "
            f"features, {scale['nnz']:,} non-zeros ({scale['mean_nnz']:.1f} per row), Zipf "
            f"(exponent 1) feature frequencies, values (1 + log tf) idf scaled to unit "
            f"length, labels from a planted sparse rule (141 features among the 3,000 most "
            f"frequent) with {100 * scale['flipped']:.1f}% flipped; "
            f"{100 * scale['unplanted']:.1f}% of the rows hold no planted feature and get a "
            f"random label, so the best test error is about "
            f"{100 * (scale['flipped'] + scale['unplanted'] / 2):.0f}%. Rows held as int64 + float64 "
            f"({scale['array_mb']:.0f} MiB); peak memory of the run {scale['peak_rss_mb']:.0f} "
            f"MiB (liblinear copies the data). 5-epoch time = 5 x the median epoch; Bottou's "
            "0.97 s for 5 epochs was on 2008 hardware and the real data.")
    if full:
        notes.append("RCV1_FULL=1: rows 'full RCV1' trained out of core on the prepared data "
                     "(pipelines/rcv1_full.py).")
    return notes


if __name__ == "__main__":
    try:
        sys.exit(main())
    except NBSVMError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
