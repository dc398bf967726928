"""The plan of an ``--auto`` search (:mod:`nbsvm.models.auto`): the reading pass (every
training document hashed once per feature setting the search may try, into seeded parts),
what it tells of the corpus, the defaults that gives, the space searched, the candidates,
the split and the reference seconds the pass took."""

from __future__ import annotations

import itertools
import shutil
import unicodedata
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from nbsvm.config import DEFAULTS, data_default
from nbsvm.data.cache import corpus_stats
from nbsvm.data.samples import join_caches
from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document
from nbsvm.io.labels import class_order, classes_of
from nbsvm.models.auto_space import (
    CHAR_NGRAMS,
    candidates,
    defaults_on,
    hash_parts,
    peek,
    resolve_space,
    rung_sizes,
    search_bits,
    search_space,
)
from nbsvm.models.auto_trials import HASH_S, FoldRunner
from nbsvm.text.scripts import split_char_re

FOLDS_BELOW_NGRAMS = 5_000_000  # smaller corpora are cross-validated (5 folds)
N_CANDIDATES = 27  # rung 0's candidates when the budget allows
SCRIPT_PEEK_DOCS = 2_000  # the first documents' characters tell the script ...
SCRIPT_SHARE = 0.05  # ... a share above which both tokenizers are tried
SHORT_DOCUMENTS = (
    100  # median n-grams below which (or in a small corpus) character n-grams are tried
)
BETAS = (1.0, 0.5)  # two classes: scored on each trained model
# the exact solver (--learner dcd) keeps its rows: tried where n-gram occurrences x outputs
# stay below this (about 120 MB of rows while it solves)
EXACT_BELOW = 10_000_000


@dataclass
class SearchPlan:
    """What the reading pass settles before any trial."""

    runner: FoldRunner  # the parts, and the trainings on them
    defaults: dict  # the defaults on this data (every parameter)
    space: dict  # parameter -> the values searched
    betas: list  # the betas each trained model is scored at (the runner's list)
    split: str  # "5-fold" or "hold-out 20%"
    cands: list  # candidate settings, the defaults ({}) first
    pinned: dict  # what the defaults resolve to on all the data, fixed in every trial
    n_outputs: int
    corpus: dict  # what the pass saw (corpus_stats: documents, n-grams, their median)
    sizes: list  # each rung's training documents per fold (the last: all of them)
    pass_units: float  # reference seconds of the reading pass
    weighted: bool  # some document weighs other than 1


def plan_search(
    estimator: type,
    base: dict,
    fixed: set,
    docs: Iterable[Document],
    root: Path,
    seed: int,
    metric: str,
    notify: Callable[[dict], None],
) -> SearchPlan:
    """The pass over ``docs`` (hashed into parts under ``root``) and the plan: the defaults
    of ``estimator`` with the parameters ``base`` (those in ``fixed`` are not searched),
    the space, ``seed``'s candidates and the split."""
    model = estimator(**base)
    head, rest, median, ended = peek(iter(docs), model.validate())
    tried = _tried(base, fixed, head, median, ended)
    hashers = {
        (n, c, s): estimator(**dict(base, ngrams=n, char_ngrams=c, split_scripts=s)).validate()
        for n in tried["orders"]
        for c in tried["chars"]
        for s in tried["scripts"]
    }
    parts = hash_parts(itertools.chain(head, rest), hashers, root, seed, notify)
    key0 = (tried["orders"][0], tried["chars"][0], tried["scripts"][0])
    multilabel = bool(base.get("multilabel"))
    labels = class_order({label for p in parts[key0] for label in p.labels})
    classes = classes_of(labels) if multilabel else labels
    bits = {
        key: search_bits(sum(p.n_ids for p in ps), hashers[key].n_bits) for key, ps in parts.items()
    }
    full = join_caches(parts[key0], root / "stats")
    corpus = corpus_stats(full)
    weighted = full.weighted  # document weights: no backend learner takes them
    full.close()
    shutil.rmtree(root / "stats", ignore_errors=True)
    # fold k validates parts 2k and 2k + 1 (the hold-out: parts 0 and 1)
    n_folds = 5 if corpus["ngrams"] < FOLDS_BELOW_NGRAMS else 1
    sizes = rung_sizes(sum(p.n_docs for p in parts[key0][2:]))  # fold 0's
    runner = FoldRunner(estimator, parts, bits, key0, root, n_folds, sizes, [], metric, multilabel)
    try:
        if not multilabel and len(classes) < 2:
            raise NBSVMError(f"--auto needs at least two classes, got {classes}")
        if not multilabel:
            _check_folds(parts[key0], n_folds)
        return _plan(estimator, base, fixed, runner, corpus, classes, tried, weighted, seed)
    except BaseException:  # (Ctrl-C too) the caller never gets the runner to close
        runner.close()
        raise


def _check_folds(parts: list, n_folds: int) -> None:
    """Each fold's training documents hold every class, or at least two: a class whose
    every document is held out of a fold (one or two documents of it, in that fold's two
    parts) leaves a two-class task nothing to train on there (refused: it was 'need at
    least two classes to train, found [pos]' of data with two), and trains models of the
    other classes in a task of more (said)."""
    every = {label for p in parts for label in p.labels}
    for fold in range(n_folds):
        held = (2 * fold, 2 * fold + 1)
        train = {label for i, p in enumerate(parts) if i not in held for label in p.labels}
        missing = ", ".join(repr(c) for c in sorted(every - train, key=str)[:3])
        where = f"fold {fold + 1}'s training documents" if n_folds > 1 else "the training part"
        split = f"--auto's {n_folds}-fold split" if n_folds > 1 else "--auto's hold-out"
        if len(train) < 2:
            raise NBSVMError(
                f"{split} holds every document of class {missing} out of {where}, "
                f"which leaves only class {', '.join(map(repr, train))}: --auto needs at "
                "least 3 documents of each class (give more of it, or train without --auto)"
            )
        if missing:
            warnings.warn(
                f"{split} holds every document of class(es) {missing} out of {where}: "
                "that fold's candidates are models of the other classes (3 documents or "
                "more of each class keep it in every fold)",
                UserWarning,
                stacklevel=4,
            )


def _tried(base: dict, fixed: set, head: list[Document], median: float, ended: bool) -> dict:
    """The feature settings the pass hashes: n-gram orders, character n-grams (for short
    documents or a small corpus, beside the data's default) and tokenizers (for text in
    scripts written without spaces), each list the default's value first."""
    try_chars = (median < SHORT_DOCUMENTS or ended) and "char_ngrams" not in fixed
    # char_ngrams left at None: the default the data gives (character 4-grams for short
    # texts), the other tried beside it
    chars0 = base.get("char_ngrams", 0)
    if chars0 is None:
        corpus = {"median_ngrams": median, "documents": len(head) if ended else None}
        chars0 = data_default("char_ngrams", corpus)
    # text in the scripts written without spaces (a share of its characters): their
    # tokenizer is searched too. Their letters only: the split punctuation (curly quotes,
    # dashes, ellipses) made 22% of English dialogue "written without spaces"
    text = "".join(d.text for d in head[:SCRIPT_PEEK_DOCS])
    letters = sum(unicodedata.category(c)[0] == "L" for c in split_char_re().findall(text))
    try_scripts = "split_scripts" not in fixed and letters > SCRIPT_SHARE * max(1, len(text))
    split0 = base.get("split_scripts", DEFAULTS["split_scripts"])
    return {
        "orders": [base.get("ngrams", 3)] if "ngrams" in fixed else [3, 2, 1],
        "chars": [chars0] + ([CHAR_NGRAMS if chars0 == 0 else 0] if try_chars else []),
        "scripts": [split0] + ([not split0] if try_scripts else []),
        "chars0": chars0,
        "try_chars": try_chars,
        "try_scripts": try_scripts,
    }


def _plan(
    estimator: type,
    base: dict,
    fixed: set,
    runner: FoldRunner,
    corpus: dict,
    classes: list,
    tried: dict,
    weighted: bool,
    seed: int,
) -> SearchPlan:
    """The defaults on this data, the space, the candidates, the split and the units the
    pass took."""
    multilabel = runner.multilabel
    multi = multilabel or len(classes) > 2
    defaults = defaults_on(
        estimator, dict(base, char_ngrams=tried["chars0"]), classes, corpus, multilabel
    )
    n_out = len(classes) if multi else 1
    # the exact solver needs some L2 (lambda 0 given: an unbounded dual), and takes neither
    # weights (of documents or classes) nor interpolate='weights' (the built-in learner's)
    exact = (
        corpus["ngrams"] * n_out < EXACT_BELOW
        and not weighted
        and defaults["lam"] > 0
        and base.get("class_weight") is None
        and base.get("interpolate") != "weights"
        # the built-in learner's settings the user gave: the exact solver takes none (its
        # trials ignored them, and a model of it would drop them)
        and not fixed & {"loss", "optimizer", "eta0", "epochs", "threads"}
    )
    space = resolve_space(
        search_space(multi, multilabel, tried["try_chars"], tried["try_scripts"], exact),
        defaults,
    )
    runner.betas[:] = (
        [defaults["beta"]]
        if multi or "beta" in fixed
        else [defaults["beta"]] + [b for b in BETAS if b != defaults["beta"]]
    )
    return SearchPlan(
        runner=runner,
        defaults=defaults,
        space=space,
        betas=runner.betas,
        split="5-fold" if runner.n_folds == 5 else "hold-out 20%",
        cands=candidates(space, defaults, fixed, N_CANDIDATES, seed),
        pinned={
            k: defaults[k]
            for k in ("min_df", "eta0", "norm")
            if k not in fixed
            and defaults[k] != "auto"
            and not (k == "eta0" and base.get("learner") not in (None, "sgd", "adagrad", "ovr"))
        },
        n_outputs=n_out,
        corpus=corpus,
        sizes=runner.sizes,
        pass_units=HASH_S * sum(p.n_ids for ps in runner.parts.values() for p in ps),
        weighted=weighted,
    )
