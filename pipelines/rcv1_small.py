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
    return [
        dict(
            name="SGD hinge",
            loss="hinge",
            lam=HINGE_LAM,
            bottou_epochs=5,
            eta0=eta_h,
            learner=SGDClassifier(loss="hinge", lam=HINGE_LAM, eta0=eta_h, **sgd),
        ),
        dict(
            name="averaged SGD hinge",
            loss="hinge",
            lam=HINGE_LAM,
            bottou_epochs=3,
            eta0=eta_h,
            learner=SGDClassifier(loss="hinge", lam=HINGE_LAM, eta0=eta_h, average=True, **sgd),
        ),
        dict(
            name="Pegasos (no bias)",
            loss="hinge",
            lam=HINGE_LAM,
            bottou_epochs=5,
            eta0=None,
            learner=Pegasos(lam=HINGE_LAM, seed=seed),
        ),
        dict(
            name="SGD log",
            loss="log",
            lam=LOG_LAM,
            bottou_epochs=12,
            eta0=eta_l,
            learner=SGDClassifier(loss="log", lam=LOG_LAM, eta0=eta_l, **sgd),
        ),
        dict(
            name="averaged SGD log",
            loss="log",
            lam=LOG_LAM,
            bottou_epochs=8,
            eta0=eta_l,
            learner=SGDClassifier(loss="log", lam=LOG_LAM, eta0=eta_l, average=True, **sgd),
        ),
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


def small_data_rows(data: dict, epochs: int, log_every: int, seed: int) -> list[dict]:
    """Every online learner at Bottou's epoch count and at ``epochs``, and the batch optima,
    as tidy rows (gap: relative excess of the objective over the batch optimum)."""
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
    rows = [
        dict(
            part="small",
            method=o["method"],
            loss=loss,
            lam=HINGE_LAM if loss == "hinge" else LOG_LAM,
            bias="unregularized" if bias else "none",
            setting="optimum",
            epochs=None,
            train_seconds=o["seconds"],
            objective=o["objective"],
            gap_pct=0.0,
            test_error_pct=100 * o["test_error"],
            source="ours",
        )
        for (loss, bias), o in optima.items()
    ]
    print(
        f"== online learners: {epochs} epochs each (progress every epoch up to Bottou's "
        f"count, then every {log_every})",
        flush=True,
    )
    for spec in online_learners(data["X"], data["y"], seed):
        if spec["eta0"] is not None:
            print(
                f"  {spec['name']}: eta0 {spec['eta0']:g} (Bottou's calibration on 1,000 examples)",
                flush=True,
            )
        history = train_epochs(spec, data, epochs, log_every, seed)
        check_objective(spec, data)
        bias = not spec["name"].startswith("Pegasos")
        optimum = optima[(spec["loss"], bias)]["objective"]
        for h in (history[spec["bottou_epochs"] - 1], history[-1]):
            rows.append(
                dict(
                    part="small",
                    method=spec["name"],
                    loss=spec["loss"],
                    lam=spec["lam"],
                    bias="unregularized" if bias else "none",
                    setting="Bottou's epochs"
                    if h is history[spec["bottou_epochs"] - 1]
                    else "long run",
                    epochs=h["epoch"],
                    train_seconds=h["seconds"],
                    objective=h["objective"],
                    gap_pct=100 * (h["objective"] - optimum) / optimum,
                    test_error_pct=100 * h["test_error"],
                    source="ours",
                )
            )
    return rows


def published_rows() -> list[dict]:
    """Bottou's full-data figures (781,265 / 23,149) as tidy rows."""
    return [
        dict(
            part="published (full RCV1, Bottou 2008)",
            method=m,
            loss=loss,
            lam=lam,
            bias="unregularized" if "svm" in m and "SVM" not in m else "regularized",
            setting="published",
            epochs=e,
            train_seconds=s,
            objective=obj,
            gap_pct=None,
            test_error_pct=err,
            source="Bottou, sgd-2.0 README",
        )
        for m, loss, lam, e, s, obj, err in BOTTOU
    ]
