"""Hyper-parameter search for NBSVM on held-out parts of the training data (never a test set).

One reading pass splits the documents (a seeded validation split, or ``k`` folds) and hashes
each part once per n-gram order in the grid into feature caches. Every candidate then trains
from those caches exactly as ``nbsvm train --keep-cache`` would (no reading, tokenizing or
hashing again), and the settings that only act at prediction time (``beta``,
``interpolate``) are scored on the same trained model, so a grid of ``N`` candidates costs
far less than ``N`` runs. The result is a ranked table (mean validation accuracy over the
folds, its spread, log loss when the loss gives probabilities), each row's accuracy on every
validation group, the best settings and the choice (:mod:`nbsvm.models.selection`).

Examples
--------
>>> docs = [("a great film", "pos"), ("dull and awful", "neg")] * 50
>>> result = tune(docs, {"lam": [1e-4, 1e-6], "beta": [1.0, 0.5]}, {"n_bits": 12, "epochs": 2})
>>> len(result.table), result.n_trainings
(4, 2)
>>> sorted(result.best)
['beta', 'lam']
>>> result.chosen == result.best or result.chosen == {"lam": 1e-4, "beta": 1.0}
True
"""

from __future__ import annotations

import itertools
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.config import DEFAULT_GRID, DEFAULTS, TASK_PARAMS
from nbsvm.data.batches import hash_batch, rows_of
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.data.cachestore import ReadyCache
from nbsvm.data.rowencoder import batches as doc_chunks
from nbsvm.data.samples import Splits, deal_parts, split_blocks
from nbsvm.data.store import cache_folder
from nbsvm.errors import NBSVMError
from nbsvm.evaluation.evaluate import evaluate_cache
from nbsvm.io.document import Document
from nbsvm.io.labels import class_order, classes_of
from nbsvm.models.nbsvm import NBSVMClassifier
from nbsvm.models.selection import VALIDATION_GROUPS, beyond_error, paired_gain

if TYPE_CHECKING:
    import os

    import pandas as pd

#: what a grid may vary; the last two only act at prediction time (no retraining)
TUNABLE = (
    "ngrams",
    "loss",
    "optimizer",
    "lam",
    "eta0",
    "alpha",
    "min_df",
    "epochs",
    "beta",
    "interpolate",
)
PREDICTION_ONLY = ("beta", "interpolate")
CHUNK = 512
#: a grid value that stands for the setting ``nbsvm train`` uses without the option: the
#: default for the task, or read from the data (loss, lambda, eta0, min_df...)
DEFAULT = "default"


def model_params(candidate: dict) -> dict:
    """A candidate's grid values as :class:`~nbsvm.NBSVMClassifier` parameters:
    :data:`DEFAULT` as None where None is the parameter's default, else as its value in
    :data:`~nbsvm.config.DEFAULTS`."""
    defaults = NBSVMClassifier().get_params()
    return {
        k: (defaults.get(k) if defaults.get(k) is None else DEFAULTS[k]) if v == DEFAULT else v
        for k, v in candidate.items()
    }


@dataclass
class TuneResult:
    table: pd.DataFrame  # one row per candidate, best first
    best: dict  # the best candidate's grid values (highest accuracy)
    seconds: float
    n_trainings: int  # models trained (candidates x folds, prediction-only merged)
    split: str  # "validation 20%" or "5-fold"
    chosen: dict | None = None  # what to use: ``best``, or the reference within one SE
    reason: str = ""  # why ``chosen``
    standard_error: float = 0.0  # of the best's gain over the reference (0: none)
    groups: pd.DataFrame | None = None  # each row's accuracy on each validation group
    # the settings every candidate shared, as hashed (char_ngrams read from the data)
    settings: dict | None = None


def reference_of(
    grid: dict, base: dict, classes: list | None = None, corpus: dict | None = None
) -> dict | None:
    """The candidate with the default settings (``base``, else the defaults, which for
    :data:`~nbsvm.config.TASK_PARAMS` follow ``classes``: two, more, or label sets with
    ``base["multilabel"]``; and ``min_df``, AdaGrad's ``eta0`` and ``norm`` the training
    data described by ``corpus``, as fit reads them) if the grid has it."""
    model = NBSVMClassifier(
        **{k: v for k, v in base.items() if k in NBSVMClassifier._param_names()}
    )
    if corpus is not None:
        model.corpus_ = corpus  # what fit learns in its first pass, for the data defaults
    ref = {
        k: DEFAULT
        if DEFAULT in grid[k]  # the grid's own 'default', whatever else was given
        else base[k]
        if base.get(k) is not None
        else (
            model.setting(k, classes)
            if (k in TASK_PARAMS and classes is not None) or k in ("lam", "min_df")
            else DEFAULTS.get(k)
        )
        for k in grid
    }
    return ref if all(ref[k] in grid[k] for k in grid) else None


def candidates(grid: dict) -> list[dict]:
    """Every combination of the grid's values, in the grid's order."""
    for key in grid:
        if key not in TUNABLE:
            raise NBSVMError(f"cannot tune {key!r}; tunable: {', '.join(TUNABLE)}")
        if not isinstance(grid[key], (list, tuple)) or not grid[key]:
            raise NBSVMError(f"grid values of {key!r} must be a non-empty list")
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def _split_and_hash(
    docs: Iterable[Document],
    orders: list[int],
    base: dict,
    folds: int,
    valid_fraction: float,
    seed: int,
    root: Path,
    notify,
) -> dict:
    """One pass: part of each document (fold), hashed once per n-gram order into caches
    ``root/<order>/part<k>`` (the folds, or the training and validation parts), each
    document in one of them. Returns ``{order: Splits}``."""
    hashers = {n: NBSVMClassifier(**dict(base, ngrams=n)).validate() for n in orders}
    n_parts = max(folds, 2)
    writers = {
        n: [CacheWriter(root / str(n) / f"part{k}", h) for k in range(n_parts)]
        for n, h in hashers.items()
    }
    rng = np.random.default_rng(seed)
    queues: dict = {}  # per class, the folds its next documents go to
    seen = 0
    assignment = root / "folds.i32"  # each document's fold, in reading order
    try:
        for chunk in doc_chunks(docs, CHUNK):
            if folds:
                part = deal_parts([d.label for d in chunk], folds, rng, queues)
                with open(assignment, "ab") as fh:
                    part.astype(np.int32).tofile(fh)
            else:  # part 1 validates
                part = (rng.random(len(chunk)) < valid_fraction).astype(np.int64)
            for n, h in hashers.items():
                batch = hash_batch(chunk, h)  # once; parts keep the reading order
                for k in range(n_parts):
                    if (part == k).any():
                        writers[n][k].add(rows_of(batch, part == k))
            seen += len(chunk)
            notify({"stage": "hash", "docs": seen})
        empty = [k for k, w in enumerate(writers[orders[0]]) if w.n_docs == 0]
        if empty:
            what = "validation" if folds or empty == [1] else "training"
            raise NBSVMError(
                f"the split left no {what} documents ({seen} documents in all): use more "
                "data, another --valid fraction or fewer folds"
            )
        return {
            n: Splits([w.close() for w in parts], root / str(n), assignment if folds else None)
            for n, parts in writers.items()
        }
    except BaseException:
        for parts in writers.values():
            for w in parts:
                w.abort()  # a published cache is left alone; the rest is dropped
        raise


def tune(
    docs: Iterable[Document],
    grid: dict | None = None,
    base: dict | None = None,
    *,
    valid_fraction: float = 0.2,
    folds: int = 0,
    seed: int = 0,
    workdir: str | os.PathLike[str] | None = None,
    select: str = "1se",
    callback: Callable[[dict], None] | None = None,
) -> TuneResult:
    """Search ``grid`` (``{"lam": [...], "beta": [...]}``; :data:`TUNABLE` names) around the
    fixed settings ``base`` (any :class:`~nbsvm.NBSVMClassifier` parameter) on a seeded
    validation split of ``docs`` (``valid_fraction``) or on ``folds`` folds.

    ``docs`` may be :class:`~nbsvm.io.Document` records or ``(text, label)`` pairs.

    ``select``: ``"best"`` chooses the highest validation accuracy; ``"1se"`` (the
    one-standard-error rule) keeps the default settings when the grid holds them unless the
    best gains more than one standard error over them, paired over the validation groups
    (the folds, or five blocks of the validation split; ``result.groups``), so that noise
    does not move a user off good defaults (``result.reason`` says which applied).
    """
    if select not in ("1se", "best"):
        raise NBSVMError(f"unknown selection {select!r}; allowed: 1se, best")
    if (base or {}).get("multilabel") or any((grid or {}).get("multilabel") or ()):
        # (it failed with KeyError: 'accuracy' once every candidate had trained)
        raise NBSVMError(
            "tune ranks candidates by the accuracy of one label per document: it does not "
            "tune multilabel=True models (threshold='auto' tunes their labels' thresholds)"
        )

    t0 = time.perf_counter()
    notify = callback or (lambda event: None)
    grid = dict(DEFAULT_GRID if grid is None else grid)
    given = dict(base or {})
    base = {k: v for k, v in given.items() if k not in grid}
    if folds == 1 or folds < 0:
        raise NBSVMError(f"folds must be 0 (a validation split) or at least 2, got {folds}")
    if not folds and not 0 < valid_fraction < 1:
        raise NBSVMError(f"the validation fraction must be in (0, 1), got {valid_fraction}")
    cands = candidates(grid)
    for c in cands:  # refuse impossible settings before reading anything
        NBSVMClassifier(**dict(base, **model_params(c))).validate()
    orders = sorted(
        {model_params(c).get("ngrams", base.get("ngrams", DEFAULTS["ngrams"])) for c in cands}
    )
    docs = (_labelled(d, i) for i, d in enumerate(docs))
    root = cache_folder(workdir, "nbsvm-tune-")  # made or refused before any document
    try:
        if base.get("char_ngrams") is None:  # as fit decides it: from a peek at the documents
            peeker = NBSVMClassifier(**base)
            docs = peeker.read_text_defaults(docs)
            base["char_ngrams"] = given["char_ngrams"] = peeker.setting("char_ngrams")
        splits = _split_and_hash(docs, orders, base, folds, valid_fraction, seed, root, notify)
        if not given.get("multilabel"):
            _refuse_one_class_parts(splits[orders[0]])
        groups_of = _validation_groups(splits, folds, root)
        labels = splits[orders[0]].train_labels(0)
        classes = classes_of(labels) if given.get("multilabel") else class_order(labels)
        _warn_of_label_sets(classes)
        # the settings used without tuning: the defaults the training part gives
        ngrams = given.get("ngrams") or DEFAULTS["ngrams"]
        corpus = splits[ngrams].train_corpus(0) if ngrams in splits else None
        reference = reference_of(grid, given, classes, corpus)
        rows, n_trainings = _train_candidates(cands, base, splits, groups_of, root, notify)
        table, best, groups = _ranked(rows, grid)
        sizes = [g.n_docs for gs in groups_of[orders[0]] for g in gs]  # as every order's
        chosen, reason, se = _choose(table, groups, best, reference, select, sizes)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    split = f"{folds}-fold" if folds else f"validation {valid_fraction:.0%}"
    seconds = time.perf_counter() - t0
    return TuneResult(table, best, seconds, n_trainings, split, chosen, reason, se, groups, base)


def _labelled(d: Any, i: int) -> Document:
    """A document to tune on, refused without a label (plain lines: it became class
    None)."""
    doc = d if isinstance(d, Document) else Document(str(d[1]), d[0], "<tune>", i + 1)
    if doc.label is None:
        raise NBSVMError(
            "document has no label: tune reads labelled documents (--format plain-lines "
            "reads text only, for predict)",
            path=doc.source,
            line=doc.line,
        )
    return doc


def _warn_of_label_sets(classes: list) -> None:
    """Classes that read as label sets, as train says them (tune ranked them silently)."""
    from nbsvm.models.fitting import label_sets_among, label_sets_message

    sets = label_sets_among(classes)
    if sets is not None:
        import warnings

        said = label_sets_message(sets, "train --multilabel")
        warnings.warn(f"{said} (tune does not tune multi-label tasks)", UserWarning, stacklevel=4)


def _refuse_one_class_parts(splits: Splits) -> None:
    """A training part of one class trains nothing: say it is the split's doing (it was
    'need at least two classes to train, found [food]' of data with two). A part without
    some of the classes trains a model of the others: said (a rare class's two documents
    in one fold made that fold's candidates two-class models, and its row's mean and
    spread mixed them with the other folds' three-class ones, without a word)."""
    every = set()
    for s in range(len(splits)):
        every |= set(splits.train_labels(s)) | set(splits.valid(s).labels)
    if len(every) < 2:  # the data's own: no split can help
        raise NBSVMError(f"need at least two classes to tune, found {sorted(every, key=str)}")
    for s in range(len(splits)):
        labels = splits.train_labels(s)
        if len(labels) < 2:
            raise NBSVMError(
                f"the split left {splits.train_docs(s)} training document(s), all of class "
                f"{', '.join(map(str, labels))}: use a smaller --valid fraction, fewer "
                "folds or more data"
            )
        missing = sorted(every - set(labels))
        if missing:
            import warnings

            warnings.warn(
                f"{'fold' if len(splits) > 1 else 'the split'}"
                f"{f' {s + 1}' if len(splits) > 1 else ''} trains without class(es) "
                f"{', '.join(map(repr, missing[:3]))} (every document of it is held out): "
                "its candidates are models of the other classes, and the table mixes them; "
                "fewer folds or more data of the class keep it",
                UserWarning,
                stacklevel=3,
            )


def _validation_groups(splits_of: dict, folds: int, root: Path) -> dict:
    """The validation groups of each order's splits, over which the one-standard-error rule
    pairs a gain: the folds, or equal blocks of the validation split."""
    held = min(sp.valid(s).n_docs for sp in splits_of.values() for s in range(len(sp)))
    if not folds and held < VALIDATION_GROUPS:  # a block would be empty ("no documents")
        raise NBSVMError(
            f"the validation split holds {held} document(s), fewer than the "
            f"{VALIDATION_GROUPS} blocks the choice compares candidates over: use a larger "
            "--valid fraction, --folds, or more data"
        )
    return {
        n: [
            [sp.valid(s)]
            if folds
            else split_blocks([sp.valid(s)], root / str(n) / "blocks", VALIDATION_GROUPS)
            for s in range(len(sp))
        ]
        for n, sp in splits_of.items()
    }


def _train_candidates(cands, base, splits_of, groups_of, root: Path, notify) -> tuple[list, int]:
    """Every candidate trained on every split and scored on its groups: the table's rows
    and the number of trainings. Candidates that differ only in prediction-time settings
    share one trained model; the splits are the outer loop, so that each split's training
    cache is made once."""
    trained: dict = {}
    for c in cands:
        key = tuple(sorted((k, v) for k, v in c.items() if k not in PREDICTION_ONLY))
        trained.setdefault(key, []).append(c)
    keys_of: dict[int, list] = {}
    for key in trained:
        keys_of.setdefault(
            dict(base, **model_params(dict(key))).get("ngrams", DEFAULTS["ngrams"]), []
        ).append(key)
    total = sum(len(splits_of[n]) * len(keys) for n, keys in keys_of.items())
    scores: dict[int, list[tuple]] = {id(c): [] for c in cands}
    n_trainings = 0
    for n, keys in keys_of.items():
        for s in range(len(splits_of[n])):
            train = splits_of[n].train(s)
            for key in keys:
                t1 = time.perf_counter()
                clf = _fit_split(dict(base, **model_params(dict(key))), key, train, root)
                n_trainings += 1
                train_s = time.perf_counter() - t1
                for c in trained[key]:
                    scored = _score_split(clf, c, base, groups_of[n][s])
                    scores[id(c)].append((*scored, train_s, getattr(clf, "eta0_", None)))
                notify({"stage": "tune", "docs": n_trainings, "total": total})
        splits_of[n].release()
    rows = [_row(c, scores[id(c)], base) for group in trained.values() for c in group]
    return rows, n_trainings


def _fit_split(params: dict, key: tuple, train: FeatureCache, root: Path) -> NBSVMClassifier:
    """A model of ``params`` trained on one split's training cache (NB interpolation is a
    prediction-time setting, applied when scoring)."""
    clf = NBSVMClassifier(**dict(params, beta=1.0, cache_dir=str(root)))
    try:
        clf.fit_documents(iter(()), kept=ReadyCache(train.folder, train.hasher))
    except NBSVMError as e:  # the grid's value, not an option of tune, is at fault
        shown = ", ".join(f"{k}={v}" for k, v in key)
        raise NBSVMError(f"the grid's {shown or 'defaults'} cannot train: {e.message}") from None
    return clf


def _ranked(rows: list, grid: dict):
    """The table ranked (highest accuracy, then lowest log loss, then the earlier
    candidate), the best candidate's grid values, and each row's accuracy per group."""
    import pandas as pd

    table = pd.DataFrame(rows)
    table["_order"] = np.arange(len(table))
    table = table.sort_values(
        ["accuracy", "log_loss", "_order"], ascending=[False, True, True], na_position="last"
    )
    table = table.drop(columns="_order").reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    best = {k: _plain(table.loc[0, k]) for k in grid}
    groups = pd.DataFrame(
        np.vstack(table["_groups"].to_list()),
        columns=[f"group{g}" for g in range(len(table.loc[0, "_groups"]))],
    )
    return table.drop(columns="_groups"), best, groups


def _score_split(clf, c: dict, base: dict, groups: list) -> tuple:
    """Candidate ``c``'s prediction-time settings on ``clf`` (trained on one split), scored
    on that split's validation groups: accuracy and log loss over all of them, and the
    accuracy of each."""
    c = model_params(c)
    clf.beta = c.get("beta", base.get("beta", DEFAULTS["beta"]))
    clf.interpolate = c.get("interpolate", base.get("interpolate", DEFAULTS["interpolate"]))
    clf.validate()
    reps = [evaluate_cache(clf, g) for g in groups]
    sizes = np.array([r["n_docs"] for r in reps], float)
    accs = np.array([r["accuracy"] for r in reps])
    loss = np.array([r.get("log_loss", np.nan) for r in reps])
    return sizes @ accs / sizes.sum(), sizes @ loss / sizes.sum(), accs


def _row(c: dict, scores: list, base: dict) -> dict:
    """The table row of candidate ``c`` from its ``(accuracy, log loss, group accuracies,
    train seconds, eta0)`` per split."""
    acc = np.array([x[0] for x in scores])
    row = dict(
        c,
        accuracy=float(acc.mean()),
        accuracy_std=float(acc.std(ddof=1)) if acc.size > 1 else 0.0,
        log_loss=float(np.mean([x[1] for x in scores])),
        train_seconds=float(np.mean([x[3] for x in scores])),
        _groups=np.concatenate([x[2] for x in scores]),
    )
    if c.get("eta0", base.get("eta0")) == "auto":
        row["eta0_chosen"] = float(np.median([x[4] for x in scores]))
    return row


def _choose(table, groups, best: dict, reference: dict | None, select: str, sizes: list):
    """``(chosen, reason, standard error)``: the best (the table's first row), or with
    ``select="1se"`` the reference when the best's gain over it, paired over the
    validation groups (of ``sizes`` documents: the gain is over all of them), is not more
    than one standard error (:mod:`nbsvm.models.selection`)."""
    if reference is None or reference == best:
        return best, "the best validation accuracy", 0.0
    at = int(
        np.flatnonzero(np.logical_and.reduce([table[k] == v for k, v in reference.items()]))[0]
    )
    a, ref_acc = float(table.loc[0, "accuracy"]), float(table.loc[at, "accuracy"])
    gain, se = paired_gain(groups.loc[0], groups.loc[at], sizes)
    where = (
        f"{100 * gain:.2f} points over the defaults ({100 * ref_acc:.2f}%), one standard "
        f"error {100 * se:.2f} over {groups.shape[1]} validation groups"
    )
    if select != "1se":
        return best, "the best validation accuracy", se
    if not beyond_error(gain, se):
        return (
            reference,
            (
                f"the defaults: the best ({100 * a:.2f}%) gains {where}; no "
                f"candidate is better than noise, so the defaults stay"
            ),
            se,
        )
    return best, f"the best beats the defaults: {where}", se


def _plain(v):
    """numpy scalars from the table as plain Python values (for JSON and command lines)."""
    return v.item() if isinstance(v, np.generic) else v
