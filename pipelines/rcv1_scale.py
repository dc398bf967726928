"""The scale run of the RCV1 benchmark: seconds per epoch of SGD-hinge and SGD-log on the
synthetic corpus beside liblinear."""

from __future__ import annotations

import time

import numpy as np
from _harness import peak_rss_mb
from rcv1_objective import to_csr
from rcv1_small import HINGE_LAM, LOG_LAM, result_row
from rcv1_synthetic import synthetic_rcv1

from nbsvm.learners.linear import SGDClassifier


def time_sgd_epochs(loss: str, lam: float, data: dict, epochs: int, seed: int) -> dict:
    """Seconds per epoch of SGDClassifier on the synthetic corpus: the kernel pass alone
    (labels encoded once) and ``partial_fit`` as a user calls it (which also checks the rows
    and encodes the string labels every call); median over ``epochs`` after a JIT warm-up."""
    X, y = data["X"], data["y"]
    warm = SGDClassifier(loss=loss, lam=lam, eta0=0.5)
    warm.partial_fit(X.take(np.arange(min(100, len(y)))), y[:100], classes=["-1", "1"])
    m = SGDClassifier(loss=loss, lam=lam, eta0=0.5 if loss == "hinge" else 16.0, seed=seed)
    rng = np.random.default_rng(seed)
    m.partial_fit(X.take(np.arange(1)), y[:1], classes=["-1", "1"])  # allocate the state
    codes = m._encode(y)
    kernel, user = [], []
    for epoch in range(epochs):
        order = rng.permutation(len(y))
        t0 = time.perf_counter()
        m._pass(X, codes, order)  # the epoch's kernel, as fit's inner call
        kernel.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        m.partial_fit(X, y, order=rng.permutation(len(y)))
        user.append(time.perf_counter() - t0)
        print(
            f"  SGD {loss:<5} epoch {2 * epoch + 1}-{2 * epoch + 2}: kernel pass "
            f"{kernel[-1]:.3f} s, partial_fit {user[-1]:.3f} s",
            flush=True,
        )
    return dict(
        kernel=float(np.median(kernel)),
        user=float(np.median(user)),
        test_error=float(np.mean(m.predict(data["Xt"]) != data["yt"])),
        epochs=2 * epochs,
    )


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
    return dict(
        seconds=seconds,
        iterations=int(m.n_iter_),
        test_error=float(np.mean(m.predict(to_csr(data["Xt"])) != data["yt"])),
    )


PART = "scale (synthetic 781,265 x 47,152)"


def generate(n_docs: int, n_test: int, seed: int) -> tuple[dict, dict]:
    """The synthetic corpus, and its statistics (printed)."""
    t0 = time.perf_counter()
    data = synthetic_rcv1(n_docs, n_test, seed)
    X = data["X"]
    nnz = np.diff(X.offsets)
    stats = dict(
        rows=len(X),
        features=X.n_features,
        nnz=int(X.offsets[-1]),
        mean_nnz=float(nnz.mean()),
        median_nnz=float(np.median(nnz)),
        positive=float(np.mean(data["y"] == "1")),
        flipped=data["flipped"],
        unplanted=float(np.mean(to_csr(X) @ data["w"] == 0)),
        seconds=time.perf_counter() - t0,
        array_mb=(X.indices.nbytes + X.values.nbytes + X.offsets.nbytes) / 2**20,
    )
    print(
        f"  generated in {stats['seconds']:.1f} s: {stats['nnz']:,} non-zeros "
        f"({stats['mean_nnz']:.1f} per row, median {stats['median_nnz']:.0f}), "
        f"{100 * stats['positive']:.1f}% positive, {100 * stats['flipped']:.1f}% labels "
        f"flipped; rows take {stats['array_mb']:.0f} MiB as int64 + float64",
        flush=True,
    )
    return data, stats


def sgd_rows(data: dict, epochs: int, seed: int) -> list[dict]:
    """SGD hinge and log: 5 x the median epoch, of the kernel pass and of partial_fit."""
    rows = []
    for loss, lam in (("hinge", HINGE_LAM), ("log", LOG_LAM)):
        r = time_sgd_epochs(loss, lam, data, (epochs + 1) // 2, seed)
        for what, sec in (("kernel pass", r["kernel"]), ("partial_fit", r["user"])):
            setting = f"5 epochs: 5 x the median epoch ({what}, {r['epochs'] // 2} epochs timed)"
            error = 100 * r["test_error"]
            rows.append(
                result_row(
                    f"SGD {loss}",
                    loss,
                    lam,
                    "unregularized",
                    setting,
                    5,
                    5 * sec,
                    None,
                    None,
                    error,
                    part=PART,
                )
            )
    return rows


def scale_rows(n_docs: int, n_test: int, epochs: int, seed: int) -> tuple[list[dict], dict]:
    """Generate the synthetic corpus and time SGD-hinge, SGD-log and liblinear on it."""
    print(f"== scale run: synthetic RCV1-shaped corpus, {n_docs:,} + {n_test:,} rows", flush=True)
    data, stats = generate(n_docs, n_test, seed)
    rows = sgd_rows(data, epochs, seed)
    print("  liblinear (LinearSVC dual CD, hinge) ...", flush=True)
    lib = time_liblinear(HINGE_LAM, data)
    print(
        f"  liblinear: {lib['seconds']:.2f} s ({lib['iterations']} iterations), test error "
        f"{100 * lib['test_error']:.2f}%",
        flush=True,
    )
    setting = f"fit to tol 1e-4 ({lib['iterations']} iterations)"
    rows.append(
        result_row(
            "liblinear (LinearSVC)",
            "hinge",
            HINGE_LAM,
            "regularized (-B 1)",
            setting,
            None,
            lib["seconds"],
            None,
            None,
            100 * lib["test_error"],
            part=PART,
        )
    )
    stats["peak_rss_mb"] = peak_rss_mb()
    print(f"  peak memory of the process so far: {stats['peak_rss_mb']:.0f} MiB", flush=True)
    return rows, stats
