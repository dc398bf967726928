"""Budgeted automatic settings: ``nbsvm train --auto``, ``NBSVMClassifier(auto=True)``.

One reading pass hashes every training document once per feature setting the search may
try (word n-grams of orders 1-3; with short documents or a small corpus, character
4-grams beside them) into ten seeded parts on disk. Validation never leaves the training data: a small corpus
gets 5 folds of two parts (every document held out once), a large one a 20% hold-out.

Successive halving (Jamieson & Talwalkar 2016, the inner loop of Hyperband) spends the
budget, counted in seconds of a reference machine predicted from each trial's work
(:data:`~nbsvm.models.auto_trials.TRAINING_S`: n-gram occurrences x epochs x outputs), so that the plan and the
choice do not depend on how fast or busy the machine is: rung 0 trains the candidates (the defaults first, then a seeded sample of
:func:`search_space`) on a ninth of each fold's training documents, the best third go on to
a third of them, and the best third of those to all of them (no sample under 500
documents: a small corpus has fewer rungs); the defaults go on to every
rung, so that every change is weighed against them on all the data. ``beta`` only acts at
prediction time: each trained model is scored at every ``beta`` for free. Trials are timed
(the first after an untimed run of it, so that compiling the kernels is not counted); when
the first one says the plan cannot fit in the budget, fewer candidates start, and the
search stops when the budget's reference seconds are spent (then it chooses among the last rung's
scores). The search is deterministic for a seed and a budget on any machine; the wall clock
only stops one that has run :data:`OVERRUN` times over its budget (a machine far slower or
busier than the reference), which then keeps the defaults unless its last rung was
complete, and says so in its reason.

The standard-error rule then prefers the defaults: the best candidate of the last rung
is taken only if its gain over them is more than Student's t quantile of standard errors of
that gain at the Bonferroni level for every change the search scored on the same held-out
documents (at any rung: the last rung's few were chosen on them). With accuracy as the
metric the gain is paired document by document over every held-out document (a
McNemar-style test: 3.1 errors for 54 changes on a thousand documents); with F1 it is
paired over the validation groups (the five folds, or five blocks of the hold-out: 7.3
errors for 54 changes, the error itself estimated from five numbers). Else the
defaults stay
(:func:`one_se_choice` says why). The caller trains the final model on all the data with the
choice (:func:`auto_fit`): the model equals ``nbsvm train`` with the settings printed.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document, rereadable
from nbsvm.models.auto_plan import plan_search
from nbsvm.models.fitting import Fit
from nbsvm.models.selection import one_se_choice, t_quantile

if TYPE_CHECKING:
    import pandas as pd

    from nbsvm.models._types import Documents
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.models.run import FitRun

KEEP = 3  # each rung keeps the best third
# a change must gain more standard errors over the defaults than the Bonferroni bound for
# the m changes scored on the held-out documents asks: Student's t quantile at
# 1 - FALSE_CHOICE / m, with the units less one degrees of freedom. The units are the
# held-out documents (accuracy: right or wrong, paired; Dietterich 1998 finds McNemar's
# test on one hold-out keeps its level where resampled t tests do not) or the five
# validation groups (F1 is not a sum over documents). Five groups left too little power:
# t with 4 degrees of freedom asks 4.73 errors for m = 11, and --auto kept the defaults on
# XGraph where a change gained 1.2 points on the test part.
FALSE_CHOICE = 0.05
SAFETY = 0.85  # share of the budget the plan may fill (reference seconds: auto_trials)
OVERRUN = 3.0  # the wall clock stops a search only past 3x its budget


@dataclass
class AutoResult:
    chosen: dict  # the settings to train with (parameter -> value)
    changed: dict  # those of them that differ from the defaults
    reason: str
    table: pd.DataFrame  # every trial: rung, documents, settings changed, score
    seconds: float  # the search's wall time, reading pass included
    budget: float
    split: str  # "5-fold" or "hold-out 20%"
    metric: str
    stopped_by_budget: bool = False
    n_trainings: int = 0

    def header(self) -> dict:
        """What a model file keeps of the search (JSON)."""
        return {
            "changed": self.changed,
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "budget": self.budget,
            "split": self.split,
            "metric": self.metric,
            "trainings": self.n_trainings,
            "stopped_by_budget": self.stopped_by_budget,
        }


def auto_search(
    estimator: type,
    docs: Iterable[Document],
    base: dict | None = None,
    *,
    time_budget: float = 60.0,
    seed: int = 0,
    workdir: str | os.PathLike[str] | None = None,
    callback: Callable[[dict], None] | None = None,
) -> AutoResult:
    """Search settings of ``estimator`` (the class, :class:`~nbsvm.NBSVMClassifier`) for
    ``docs`` (training data only) around the fixed parameters ``base`` within
    ``time_budget`` seconds (see the module docstring). Parameters in ``base`` that differ
    from the defaults are kept as given, not searched."""
    if not (isinstance(time_budget, (int, float)) and time_budget > 0):
        raise NBSVMError(
            f"the time budget must be a positive number of seconds, got {time_budget!r}"
        )
    search = _Search(estimator, base or {}, float(time_budget), seed, callback)
    root = Path(tempfile.mkdtemp(prefix="nbsvm-auto-", dir=workdir))
    try:
        search.read(docs, root)
        search.halve()
        return search.choose()
    finally:
        search.close()
        shutil.rmtree(root, ignore_errors=True)


class _Search:
    """One ``auto_search``: :meth:`read` (the pass and the plan,
    :func:`~nbsvm.models.auto_plan.plan_search`), :meth:`halve` (the rungs, within the
    budget's reference seconds), :meth:`choose` (:func:`rung_choice`)."""

    def __init__(self, estimator: type, base: dict, budget: float, seed: int, callback):
        self.estimator = estimator
        self.t0 = time.perf_counter()
        self.notify = callback or (lambda event: None)
        self.budget, self.seed = budget, seed
        self.base = {
            k: v for k, v in base.items() if k not in ("auto", "time_budget", "auto_metric")
        }
        self.metric = base.get("auto_metric") or (
            "micro_f1" if base.get("multilabel") else "accuracy"
        )
        plain = estimator()
        self.fixed = {k for k, v in self.base.items() if v != getattr(plain, k)}
        model = estimator(**self.base)
        model.validate()
        if model.backend_learner is not None:
            self.fixed |= {"loss", "weighting", "epochs"}
        self.paired: dict = {}  # candidate -> its last trial's right/wrong per document
        self.trials: list = []
        self.n_trainings, self.stopped, self.by_clock = 0, False, False
        self.trial_units = 0.0

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def read(self, docs, root: Path) -> None:
        """The pass and the plan, announced as the ``auto plan`` event."""
        self.plan = plan = plan_search(
            self.estimator, self.base, self.fixed, docs, root, self.seed, self.metric, self.notify
        )
        self.runner = plan.runner
        self.notify(
            {
                "stage": "auto plan",
                "docs": plan.corpus["documents"],
                "candidates": len(plan.cands),
                "split": plan.split,
                "space": {k: v for k, v in plan.space.items() if k not in self.fixed},
                "pass_s": self.elapsed(),
                "budget": self.budget,
                "pass_reference_s": plan.pass_units,
            }
        )

    def trial(self, i: int, rung: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """Candidate ``i`` trained and scored on every fold at ``rung``
        (:meth:`~nbsvm.models.auto_trials.FoldRunner.trial`); with accuracy as the metric,
        also ``self.paired[i]``: whether each held-out document was right."""
        plan = self.plan
        params = {**self.base, **plan.pinned, **plan.cands[i]}
        groups, sizes, took, train_s, self.paired[i] = self.runner.trial(params, rung)
        self.n_trainings += self.runner.n_folds
        return groups, sizes, took, train_s

    def units(self, i: int, rung: int) -> float:
        """Reference seconds of candidate ``i`` at ``rung``, every fold (see
        :data:`~nbsvm.models.auto_trials.TRAINING_S`): the same on any machine."""
        params = {**self.plan.defaults, **self.plan.cands[i]}
        return sum(self.runner.work(params, rung, self.plan.n_outputs).values())

    def spent(self) -> float:
        """Reference seconds spent: the reading pass, then every trial run."""
        return self.plan.pass_units + self.trial_units

    def fit_plan(self, alive: list) -> list:
        """Before any trial: the candidates whose rungs fit in the budget's units (the
        same on any machine)."""
        rungs = range(len(self.plan.sizes))
        mean = {r: float(np.mean([self.units(i, r) for i in alive])) for r in rungs}
        per_cand = sum(mean[r] / KEEP**r for r in rungs)
        # later rungs carry the defaults too: reserved before the candidates are counted
        reserved = sum(self.units(0, r) for r in rungs[1:])
        room = SAFETY * self.budget - self.plan.pass_units - reserved
        fits = max(1, int(room / per_cand))
        if fits < len(alive):
            self.notify(
                {
                    "stage": "auto note",
                    "docs": 0,
                    "note": f"the budget allows {fits} candidate(s) of {len(self.plan.cands)}",
                }
            )
            return alive[:fits]
        return alive

    def halve(self) -> None:
        """The rungs: each trains its candidates on a larger sample and keeps a third
        (and the defaults); sets ``last_scores`` to the last complete rung's."""
        n_rungs = len(self.plan.sizes)
        self.last_scores: dict = {}
        self.last_rung = -1
        alive = self.fit_plan(list(range(len(self.plan.cands))))
        for rung in range(n_rungs):
            scores = {}
            for i in list(alive):
                cost = self.units(i, rung)
                self.by_clock = self.elapsed() > OVERRUN * self.budget
                if self.spent() + cost > self.budget or self.by_clock:
                    self.stopped = True
                    break
                groups, sizes, took, train_s = self.trial(i, rung)
                self.trial_units += cost
                per_beta = sizes @ groups / sizes.sum()  # the pooled score at each beta
                scores[i] = (per_beta, groups, self.paired[i])
                self.record(i, rung, per_beta, took, cost)
            # the highest rung reached: the defaults go first in each, so even a rung the
            # budget cut short weighs what it trained against them on the same sample
            if scores:
                self.last_scores, self.last_rung = scores, rung
            self.runner.free_rung(rung)
            if self.stopped or rung == n_rungs - 1:
                break
            ranked = sorted(scores, key=lambda i: (-scores[i][0].max(), i))
            # the defaults go on too: the one-standard-error rule weighs every change
            # against them on all the data (a small sample favours other settings)
            alive = sorted(set(ranked[: max(1, math.ceil(len(ranked) / KEEP))]) | {0})

    def record(self, i: int, rung: int, per_beta: np.ndarray, took: float, units: float) -> None:
        """A trial in the table, and its event."""
        plan = self.plan
        c = plan.cands[i]
        used = [b for j, b in enumerate(plan.betas) if np.isfinite(per_beta[j])]
        docs = plan.sizes[rung]
        for j, b in enumerate(used):
            self.trials.append(
                dict(
                    rung=rung,
                    documents=docs,
                    candidate=i,
                    changed=_changed(dict(c, beta=b), plan.defaults),
                    score=float(per_beta[j]),
                    seconds=took,
                    reference_s=units,
                )
            )
        best = int(np.argmax(per_beta))
        self.notify(
            {
                "stage": "auto trial",
                "docs": 0,
                "rung": rung,
                "candidate": i,
                "changed": _changed(dict(c, beta=plan.betas[best]), plan.defaults),
                "score": float(per_beta[best]),
                "metric": self.metric,
                "documents": docs,
                "folds": self.runner.n_folds,
                "seconds": took,
                "reference_s": units,
            }
        )

    def choose(self) -> AutoResult:
        """The settings :func:`rung_choice` takes from the last rung reached."""
        plan = self.plan
        settings, reason = rung_choice(
            self.last_scores,
            plan.cands,
            plan.betas,
            plan.defaults,
            self.trials,
            stopped=self.stopped,
            reached_last=self.last_rung == len(plan.sizes) - 1,
            metric=self.metric,
            split=plan.split,
        )
        if self.by_clock:  # not the plan's units: this machine ran past OVERRUN x the budget
            reason += (
                f" (stopped by the wall clock past {OVERRUN:g}x the budget, "
                f"{OVERRUN * self.budget:g} s: this machine is slower or busier than the "
                "reference)"
            )
        return self._result(settings, reason)

    def _result(self, settings: dict, reason: str) -> AutoResult:
        """The search's result: ``settings`` chosen, for ``reason``."""
        import pandas as pd

        plan = self.plan
        chosen = {**self.base, **plan.pinned, **settings}
        if chosen.get("char_ngrams") is None:  # what the data gave, as searched
            chosen["char_ngrams"] = plan.defaults.get("char_ngrams", 0)
        return AutoResult(
            chosen,
            _changed(settings, plan.defaults),
            reason,
            pd.DataFrame(self.trials),
            self.elapsed(),
            self.budget,
            plan.split,
            self.metric,
            self.stopped,
            self.n_trainings,
        )

    def close(self) -> None:
        if hasattr(self, "runner"):
            self.runner.close()


def rung_choice(
    last_scores: dict,
    cands: list,
    betas: list,
    defaults: dict,
    trials: list,
    *,
    stopped: bool,
    reached_last: bool,
    metric: str,
    split: str,
) -> tuple[dict, str]:
    """The settings to train with, and why: the one-standard-error rule
    (:func:`~nbsvm.models.selection.one_se_choice`) over the (candidate, beta) scores of
    the last rung reached (``last_scores``: candidate -> (score at each of ``betas``, each
    validation group's, each held-out document's right/wrong or None)), at Student's t's
    Bonferroni bound for every change among ``trials`` (the table of every rung).
    ``stopped``: the budget ran out, before the last rung (all the training data) unless
    ``reached_last``; then the defaults stay."""
    last = sorted(last_scores.items())
    # the test's units: the held-out documents, paired candidate by candidate (the same
    # documents in the same order for every hashing), else the groups
    by_doc = bool(last) and all(
        p is not None and len(p) == len(last[0][1][2]) for _, (_, _, p) in last
    )
    pool = [
        {
            "settings": dict(cands[i], beta=b),
            "score": float(per_beta[j]),
            "groups": paired[:, j] if by_doc else groups[:, j],
        }
        for i, (per_beta, groups, paired) in last
        for j, b in enumerate(betas)
        if np.isfinite(per_beta[j])
    ]
    # every change scored on these held-out documents at any rung counts: the last rung's
    # few were chosen on the same documents, so their best gain is the best of all (Subj:
    # chosen among 11 at z 2.68 against 2.45 asked, then 0.04 below the defaults on the
    # test part; all 54 compared ask 3.12)
    compared = {tuple(sorted(t["changed"].items())) for t in trials if t["changed"]}
    changes = max(len(compared), sum(1 for p in pool if _changed(p["settings"], defaults)))
    if not pool:  # the reading pass and the first trial took the whole budget
        return dict(defaults), (
            "no trial finished within the budget: the defaults are kept (a larger "
            "--time-budget lets the search run)"
        )
    n_units = len(pool[0]["groups"])
    # t beyond 1,000 degrees of freedom is the normal's within 0.3%: capped (larger)
    n_se = t_quantile(1 - FALSE_CHOICE / max(1, changes), min(1000, max(1, n_units - 1)))
    unit = "validation documents" if by_doc else "validation groups"
    pick, why, _ = one_se_choice(pool, defaults, round(n_se, 2), unit)
    if stopped and not reached_last:
        # no candidate was weighed against the defaults on all the training data: a gain
        # on a small sample is too uncertain to replace them
        pick = next(k for k, p in enumerate(pool) if not _changed(p["settings"], defaults))
        why = (
            "the budget ran out before any candidate was weighed against the defaults on "
            "all the training data: the defaults are kept (a larger --time-budget lets the "
            "search finish)"
        )
    reason = f"{metric} {100 * pool[pick]['score']:.2f}% on {split}: {why}"
    if stopped and reached_last:
        reason += (
            " (the budget ran out: chosen among the candidates of the last rung reached, "
            "the defaults among them)"
        )
    return pool[pick]["settings"], reason


def _changed(settings: dict, defaults: dict) -> dict:
    return {k: v for k, v in settings.items() if defaults.get(k) != v}


def describe(changed: dict) -> str:
    """``ngrams 2, alpha 0.1`` (or ``the defaults``)."""
    return (
        ", ".join(
            f"{'lambda' if k == 'lam' else k} {v:g}"
            if isinstance(v, float)
            else f"{'lambda' if k == 'lam' else k} {v}"
            for k, v in changed.items()
        )
        or "the defaults"
    )


def auto_fit(model: NBSVMClassifier, docs: Documents, run: FitRun) -> AutoResult:
    """``model.fit_documents(docs)`` with ``auto``: search (:func:`auto_search`), set the
    chosen parameters on ``model``, train it on all the documents (read again), and record
    the search in ``model.auto_`` (its table in ``model.auto_table_``)."""
    reread = rereadable(
        docs, "auto reads the training data twice (the search, then the final training)"
    )
    names = set(model.get_params())
    # threshold='auto' tunes the final model's thresholds (fit_documents, after this): a
    # trial trains from a cache it cannot read twice, and is judged at the plain ones
    base = {
        k: v
        for k, v in given_params(model).items()
        if k not in ("auto", "time_budget", "cache_dir", "threshold")
    }
    result = auto_search(
        type(model),
        reread(),
        base,
        time_budget=model.time_budget,
        seed=model.seed,
        workdir=model.cache_dir,
        callback=run.callback,
    )
    model.set_params(**{k: v for k, v in result.chosen.items() if k in names})
    run.notify(
        {
            "stage": "auto chosen",
            "docs": 0,
            "changed": result.changed,
            "reason": result.reason,
            "seconds": result.seconds,
            "budget": result.budget,
            "params": {k: v for k, v in model.get_params().items() if k != "cache_dir"},
        }
    )
    t0 = time.perf_counter()
    Fit(model, None, run.callback, run.max_memory).run(reread())
    model.auto_ = dict(
        result.header(),
        final_training_s=round(time.perf_counter() - t0, 3),
        set={k: v for k, v in model.get_params().items() if k in base and not _same(v, base[k])},
    )
    model.auto_table_ = result.table
    return result


def given_params(model: NBSVMClassifier) -> dict:
    """The model's parameters as the user gave them: those an earlier search set (the
    ``"set"`` of ``auto_``) and that still hold its value are the defaults again, so that
    fitting again searches them again on the new data (they were taken as given, and
    nothing was searched)."""
    params = model.get_params()
    earlier = (model.__dict__.get("auto_") or {}).get("set") or {}
    plain = type(model)().get_params()
    for k, v in earlier.items():
        if k in params and _same(params[k], v):
            params[k] = plain[k]
    return params


def _same(a: object, b: object) -> bool:
    """Whether two parameter values are the same (``1`` is not ``True``; a list read from
    a model file is the tuple given)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)
