"""The experiments of the Blitzer benchmark: the per-domain split, settings chosen on
validation, train domain x test domain accuracy and in-domain cross-validation."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from blitzer_data import (
    ALL,
    DOMAINS,
    concat,
    first_per_class,
    stratified_folds,
    validation_split,
)
from blitzer_methods import Method, Progress, accuracy, tidy_row


def split_domains(data: dict, n: int) -> tuple[dict, dict]:
    """``({domain: training part}, {domain: test part})`` by :func:`first_per_class`."""
    train, test = {}, {}
    for domain, examples in data.items():
        fit, held = first_per_class(examples.labels, n)
        train[domain], test[domain] = examples.take(fit), examples.take(held)
    return train, test


def result_row(method: Method, train_domain: str, test_domain: str, split: str, accuracy) -> dict:
    """A tidy row of ``method``'s results."""
    return tidy_row(method.name, method.route, train_domain, test_domain, split, accuracy)


def choose_setting(method: Method, train: dict, cfg) -> tuple[dict, list[dict]]:
    """The setting of ``method.grid`` with the best mean validation accuracy over the
    domains (the first on ties), and one row per setting and domain."""
    rows = []
    for setting in method.grid:
        for domain, part in train.items():
            fit, val = validation_split(part.labels, cfg.seed)
            predict = method.train(part.take(fit), setting, cfg, Progress(False))
            rows.append(
                dict(
                    method=method.name,
                    route=method.route,
                    setting=_shown(setting),
                    domain=domain,
                    accuracy=accuracy(predict, part.take(val)),
                )
            )
        means = [r["accuracy"] for r in rows if r["setting"] == _shown(setting)]
        print(
            f"    validation {_shown(setting)}: mean {100 * np.mean(means):.2f}% "
            f"({', '.join(f'{100 * a:.1f}' for a in means)})",
            flush=True,
        )
    table = pd.DataFrame(rows).groupby("setting", sort=False)["accuracy"].mean()
    best = max(method.grid, key=lambda s: table[_shown(s)])  # max keeps the first on ties
    return best, rows


def _shown(setting: dict) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in setting.items())


def cross_domain(
    method: Method, setting: dict, train: dict, test: dict, cfg, split: str
) -> list[dict]:
    """Train on each domain's training part and on their union; test on every domain."""
    rows = []
    for source in (*DOMAINS, ALL):
        part = concat([train[d] for d in DOMAINS]) if source == ALL else train[source]
        progress = Progress(verbose=source == DOMAINS[0])
        if progress.verbose:
            print(f"    train {source} ({len(part)} reviews), per epoch:", flush=True)
        t0 = time.perf_counter()
        predict = method.train(part, setting, cfg, progress)
        scores = {d: accuracy(predict, test[d]) for d in DOMAINS}
        print(
            f"    train {source:<11} ({len(part)}): {time.perf_counter() - t0:5.2f} s, last "
            f"{progress.last}; test " + " ".join(f"{d} {100 * a:.1f}" for d, a in scores.items()),
            flush=True,
        )
        rows += [result_row(method, source, d, split, a) for d, a in scores.items()]
    return rows


def cross_validation(method: Method, setting: dict, data: dict, cfg) -> list[dict]:
    """In-domain k-fold accuracy over each domain's reviews: mean and standard deviation
    (ddof 1) over the folds."""
    rows = []
    for domain, examples in data.items():
        folds = stratified_folds(examples.labels, cfg.folds, cfg.seed)
        scores = []
        for k in range(cfg.folds):
            predict = method.train(
                examples.take(np.flatnonzero(folds != k)), setting, cfg, Progress(False)
            )
            scores.append(accuracy(predict, examples.take(np.flatnonzero(folds == k))))
        print(
            f"    {cfg.folds}-fold {domain:<11}: "
            + " ".join(f"{100 * s:.1f}" for s in scores)
            + f" -> mean {100 * np.mean(scores):.2f} std {100 * np.std(scores, ddof=1):.2f}",
            flush=True,
        )
        for split, value in (
            (f"{cfg.folds}-fold mean", np.mean(scores)),
            (f"{cfg.folds}-fold std", np.std(scores, ddof=1)),
        ):
            rows.append(result_row(method, domain, domain, split, float(value)))
    return rows
