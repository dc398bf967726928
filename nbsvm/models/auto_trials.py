"""The trainings of an ``--auto`` search (:mod:`nbsvm.models.auto`): the hashed parts, each
fold's training sample for a rung and its validation groups, one candidate trained and
scored on every fold, and the reference seconds that work costs (the plan's unit)."""

from __future__ import annotations

import shutil
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nbsvm.data.cache import FeatureCache
from nbsvm.data.cachestore import ReadyCache
from nbsvm.data.samples import join_caches, split_blocks
from nbsvm.errors import NoneKept
from nbsvm.evaluation.evaluate import evaluate_cache
from nbsvm.models.selection import VALIDATION_GROUPS

# The plan is sized in seconds of the reference machine (2 cores, where results/
# robustness.md is measured), predicted from the work each trial does, not timed on the
# fly: a busy or slow machine runs the same trials and chooses the same settings. A
# training costs TRAINING_S (set-up, bucket scans) plus UPDATE_S per n-gram occurrence,
# output and epoch, plus SCORE_S per held-out n-gram occurrence, output and beta; the
# reading pass HASH_S per n-gram occurrence and feature setting. Fitted (non-negative least
# squares) on 396 trials of RT-2k, MPQA, Blitzer domain and 20NG subject lines: within a
# factor of 1.5 of the time measured.
TRAINING_S = 0.05
UPDATE_S = 8e-9
SCORE_S = 5e-8
HASH_S = 1.6e-7
DCD_PASSES = 100  # passes an exact solve is counted as (14-118 on RT-2k, Subj, MPQA)
#: the feature settings a part is hashed with, as the candidates name them
HASHING = ("ngrams", "char_ngrams", "split_scripts")


@dataclass
class FoldRunner:
    """The parts of one search (per hashing key: ten seeded parts on disk; fold k
    validates parts 2k and 2k + 1, the hold-out parts 0 and 1) and the trainings on them.
    ``sizes``: each rung's training documents per fold (the last: all of them)."""

    estimator: type
    parts: dict  # hashing key -> its ten parts (FeatureCache)
    bits: dict  # hashing key -> the n_bits its samples are folded to
    key0: tuple  # the defaults' hashing key
    root: Path
    n_folds: int
    sizes: list
    betas: list
    metric: str
    multilabel: bool
    samples: dict = field(default_factory=dict)

    def key_of(self, params: dict) -> tuple:
        """Which parts (hashing settings) ``params`` train on."""
        return tuple(v if params.get(k) is None else params[k] for k, v in zip(HASHING, self.key0))

    def sample(self, key: tuple, fold: int, rung: int) -> tuple[FeatureCache, list[FeatureCache]]:
        """Fold ``fold``'s training sample for ``rung`` and its validation groups: the
        held-out parts (a fold is a group), or five blocks of them (the hold-out)."""
        if (key, fold, rung) not in self.samples:
            held = [self.parts[key][i] for i in (2 * fold, 2 * fold + 1)]
            train = [p for i, p in enumerate(self.parts[key]) if i not in (2 * fold, 2 * fold + 1)]
            total = sum(p.n_docs for p in train)
            limit = total if rung == len(self.sizes) - 1 else min(total, self.sizes[rung])
            folder = self.root / "samples" / f"{key}-{fold}-{rung}"
            groups = self.root / "samples" / f"{key}-{fold}-valid"
            if not groups.exists():  # the held-out documents: shared by the rungs
                n_blocks = 1 if self.n_folds > 1 else VALIDATION_GROUPS
                for block in split_blocks(held, groups, n_blocks, self.bits[key]):
                    block.close()
            valid = [FeatureCache(block) for block in sorted(groups.iterdir())]
            sample = join_caches(train, folder, limit, self.bits[key])
            if len(sample.labels) < 2 and limit < total and not self.multilabel:
                # the first documents of a rare class's parts held none of it: the whole
                # fold (the same documents for every candidate), not a sample of one class
                sample.close()
                shutil.rmtree(folder)
                sample = join_caches(train, folder, total, self.bits[key])
                if key == self.key0:  # said once, not per hashing of the same documents
                    warnings.warn(
                        f"--auto's rung {rung + 1} sample of fold {fold + 1} held one class: "
                        f"that fold trains on its whole training part ({total} documents, "
                        f"not {limit}) at that rung",
                        UserWarning,
                        stacklevel=2,
                    )
            self.samples[(key, fold, rung)] = (sample, valid)
        return self.samples[(key, fold, rung)]

    def trial(self, params: dict, rung: int) -> tuple:
        """``params`` trained on each fold's sample for ``rung``: its score on each
        validation group at each beta (-inf where beta does not apply; a row per group),
        the held-out documents of each group, the seconds (beyond joining the samples, done
        once per rung), the seconds of the epochs, and with accuracy as the metric whether
        each held-out document was right (a row per document, in the same order for every
        candidate; a column per beta; else None)."""
        key = self.key_of(params)
        groups, sizes, right = [], [], []
        train_s, t1 = 0.0, time.perf_counter()
        for fold in range(self.n_folds):  # the samples first: joined once per rung
            self.sample(key, fold, rung)
        joined = time.perf_counter() - t1
        by_doc = self.metric == "accuracy" and not self.multilabel
        for fold in range(self.n_folds):
            train, valid = self.sample(key, fold, rung)
            clf = self.estimator(
                **dict(params, beta=1.0, cache_dir=str(self.root), n_bits=train.hasher.n_bits)
            )
            with warnings.catch_warnings():
                # a trial is judged by its score: dcd stopping at max_iter on a sample (it
                # solves when first scored) is not the model's, and a note mid-search each
                # time would say it is; the final fit says it
                warnings.simplefilter("ignore", UserWarning)
                try:
                    clf.fit_documents(iter(()), kept=ReadyCache(train.folder, train.hasher))
                except NoneKept:  # e.g. text without spaces read as one token per document
                    clf = None
                train_s += clf.timings_["train_s"] if clf is not None else 0.0
                for cache in valid:
                    row, docs, n_docs = self._score(clf, cache, by_doc)
                    groups.append(row)
                    sizes.append(n_docs)
                    right.append(docs)
        paired = np.concatenate(right) if by_doc else None
        took = time.perf_counter() - t1 - joined
        return np.array(groups), np.array(sizes), took, train_s, paired

    def _score(self, clf, cache: FeatureCache, by_doc: bool) -> tuple:
        """One validation group's score at each beta, its documents right or wrong (with
        ``by_doc``) and its size."""
        row = np.full(len(self.betas), -np.inf)
        docs = np.zeros((cache.n_docs if by_doc else 0, len(self.betas)), dtype=bool)
        if clf is None:  # a candidate that kept no n-gram: the lowest score, nothing right
            return row, docs, cache.n_docs
        rep: dict = {}
        for j, b in enumerate(self.betas if clf.weighting == "nb" else self.betas[:1]):
            clf.beta = b
            correct: list | None = [] if by_doc else None
            rep = evaluate_cache(clf, cache, correct_out=correct)
            row[j] = rep[self.metric]
            if correct:
                docs[:, j] = np.concatenate(correct)
        return row, docs, rep["n_docs"]

    def work(self, params: dict, rung: int, outputs: int) -> dict:
        """Reference seconds of training ``params`` (every default resolved) at ``rung`` on
        every fold: trainings, updates, scoring."""
        key = self.key_of(params)
        train = self.parts[key][2:]
        share = self.sizes[rung] / max(1, sum(p.n_docs for p in train))
        train_ids = share * sum(p.n_ids for p in train)
        valid_ids = sum(p.n_ids for p in self.parts[key][:2])
        passes = DCD_PASSES if params.get("learner") == "dcd" else params["epochs"]
        return {
            "trainings": self.n_folds * TRAINING_S,
            "updates": self.n_folds * outputs * passes * train_ids * UPDATE_S,
            "scoring": self.n_folds * outputs * len(self.betas) * valid_ids * SCORE_S,
        }

    def free_rung(self, rung: int) -> None:
        """Close and remove the samples of ``rung`` (a later rung joins larger ones)."""
        for key in [k for k in self.samples if k[2] == rung]:
            train, valid = self.samples.pop(key)
            train.close()
            for cache in valid:
                cache.close()
            shutil.rmtree(train.folder, ignore_errors=True)

    def close(self) -> None:
        for train, valid in self.samples.values():
            train.close()
            for cache in valid:
                cache.close()
        for caches in self.parts.values():
            for cache in caches:
                cache.close()
