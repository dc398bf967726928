"""The small-data part of the RCV1 benchmark: the online learners at Bottou's settings
trained epoch by epoch, beside the batch optimum and his published full-data figures."""

from __future__ import annotations

import time

import numpy as np
from rcv1_objective import batch_optimum, calibrate_eta0, primal, test_error

from nbsvm.learners.linear import SGDClassifier
from nbsvm.learners.pegasos import Pegasos

HINGE_LAM, LOG_LAM = 1e-4, 5e-7

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


def online_learners(X, y, seed: int) -> list[dict]:
    """The four learners of the table (and averaged log): name, loss, lambda, the learner,
    and Bottou's epoch count for the same method (for the row at his budget)."""
    eta_h = calibrate_eta0(X, y, "hinge", HINGE_LAM, seed)
    eta_l = calibrate_eta0(X, y, "log", LOG_LAM, seed)
    sgd = dict(schedule="optimal", penalty="l2", fit_intercept=True, bias_rate=0.01, seed=seed)
    hinge = dict(loss="hinge", lam=HINGE_LAM, eta0=eta_h)
    log = dict(loss="log", lam=LOG_LAM, eta0=eta_l)
    # name, the learner's settings, Bottou's epochs, the learner
    table = [
        ("SGD hinge", hinge, 5, SGDClassifier(**hinge, **sgd)),
        ("averaged SGD hinge", hinge, 3, SGDClassifier(**hinge, average=True, **sgd)),
        ("Pegasos (no bias)", dict(hinge, eta0=None), 5, Pegasos(lam=HINGE_LAM, seed=seed)),
        ("SGD log", log, 12, SGDClassifier(**log, **sgd)),
        ("averaged SGD log", log, 8, SGDClassifier(**log, average=True, **sgd)),
    ]
    return [
        dict(
            name=name,
            loss=settings["loss"],
            lam=settings["lam"],
            bottou_epochs=epochs,
            eta0=settings["eta0"],
            learner=learner,
        )
        for name, settings, epochs, learner in table
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
        row = dict(
            epoch=epoch,
            loss=m.last_stats_["loss"] / len(y),
            seconds=trained,
            objective=primal(m.coef_, m.intercept_, X, y, spec["lam"], spec["loss"]),
            test_error=test_error(m.coef_, m.intercept_, Xt, yt),
        )
        history.append(row)
        if epoch <= spec["bottou_epochs"] or epoch % log_every == 0 or epoch == epochs:
            print(
                f"  {spec['name']:<20} epoch {epoch:4d}  loss {row['loss']:.5f}  "
                f"objective {row['objective']:.6f}  test error {100 * row['test_error']:5.2f}%"
                f"  {row['seconds']:.3f} s",
                flush=True,
            )
    return history


def check_objective(spec: dict, data: dict) -> None:
    """Our primal must be the learner's own ``objective`` (SGDClassifier: ``lam/2 ||w||^2 +
    mean loss``, bias not regularized; Pegasos without bias: the same with ``b = 0``)."""
    m = spec["learner"]
    ours = primal(m.coef_, m.intercept_, data["X"], data["y"], spec["lam"], spec["loss"])
    theirs = m.objective(data["X"], data["y"])
    if not np.isclose(ours, theirs, rtol=1e-9):
        raise AssertionError(f"{spec['name']}: objective {theirs} != Bottou's cost {ours}")


def result_row(method, loss, lam, bias, setting, epochs, seconds, objective, gap, error, **where):
    """A tidy row of ``results/rcv1.csv`` (``where``: ``part`` and ``source``, ours on the
    small data by default)."""
    return dict(
        part=where.get("part", "small"),
        method=method,
        loss=loss,
        lam=lam,
        bias=bias,
        setting=setting,
        epochs=epochs,
        train_seconds=seconds,
        objective=objective,
        gap_pct=gap,
        test_error_pct=error,
        source=where.get("source", "ours"),
    )


def batch_optima(data: dict) -> dict:
    """scikit-learn's batch optima, ``{(loss, bias): optimum}``, printed."""
    print("== batch optima (scikit-learn) on the same 3,000 examples", flush=True)
    optima = {}
    for loss, lam, bias in (
        ("hinge", HINGE_LAM, True),
        ("hinge", HINGE_LAM, False),
        ("log", LOG_LAM, True),
    ):
        opt = batch_optimum(data["X"], data["y"], data["Xt"], data["yt"], lam, loss, bias)
        optima[(loss, bias)] = opt
        print(
            f"  {opt['method']:<32} {loss:<5} bias={bias!s:<5} objective "
            f"{opt['objective']:.6f}  test error {100 * opt['test_error']:.2f}%  "
            f"{opt['seconds']:.2f} s ({opt['iterations']} iterations)",
            flush=True,
        )
    return optima


def online_rows(spec: dict, data: dict, epochs: int, log_every: int, seed: int, optima) -> list:
    """One online learner trained: its rows at Bottou's epoch count and at ``epochs``."""
    if spec["eta0"] is not None:
        print(
            f"  {spec['name']}: eta0 {spec['eta0']:g} (Bottou's calibration on 1,000 examples)",
            flush=True,
        )
    history = train_epochs(spec, data, epochs, log_every, seed)
    check_objective(spec, data)
    bias = not spec["name"].startswith("Pegasos")
    optimum = optima[(spec["loss"], bias)]["objective"]
    at_bottou = history[spec["bottou_epochs"] - 1]
    return [
        result_row(
            spec["name"],
            spec["loss"],
            spec["lam"],
            "unregularized" if bias else "none",
            "Bottou's epochs" if h is at_bottou else "long run",
            h["epoch"],
            h["seconds"],
            h["objective"],
            100 * (h["objective"] - optimum) / optimum,
            100 * h["test_error"],
        )
        for h in (at_bottou, history[-1])
    ]


def small_data_rows(data: dict, epochs: int, log_every: int, seed: int) -> list[dict]:
    """Every online learner at Bottou's epoch count and at ``epochs``, and the batch optima,
    as tidy rows (gap: relative excess of the objective over the batch optimum)."""
    optima = batch_optima(data)
    rows = [
        result_row(
            o["method"],
            loss,
            HINGE_LAM if loss == "hinge" else LOG_LAM,
            "unregularized" if bias else "none",
            "optimum",
            None,
            o["seconds"],
            o["objective"],
            0.0,
            100 * o["test_error"],
        )
        for (loss, bias), o in optima.items()
    ]
    print(
        f"== online learners: {epochs} epochs each (progress every epoch up to Bottou's "
        f"count, then every {log_every})",
        flush=True,
    )
    for spec in online_learners(data["X"], data["y"], seed):
        rows += online_rows(spec, data, epochs, log_every, seed, optima)
    return rows


def published_rows() -> list[dict]:
    """Bottou's full-data figures (781,265 / 23,149) as tidy rows."""
    return [
        result_row(
            m,
            loss,
            lam,
            "unregularized" if "svm" in m and "SVM" not in m else "regularized",
            "published",
            e,
            s,
            obj,
            None,
            err,
            part="published (full RCV1, Bottou 2008)",
            source="Bottou, sgd-2.0 README",
        )
        for m, loss, lam, e, s, obj, err in BOTTOU
    ]
