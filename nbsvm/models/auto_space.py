"""What ``--auto`` searches, and the one reading pass its trials train on: the space of
settings (:func:`search_space`, concrete values by :func:`resolve_space`), what the defaults
resolve to on the data (:func:`defaults_on`), the seeded candidates, the rungs' sample sizes,
and the documents hashed into seeded parts on disk (:func:`hash_parts`). How the search
spends its budget and chooses is :mod:`nbsvm.models.auto`."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from nbsvm.config import DEFAULTS, SOFTMAX_LAM
from nbsvm.data.batches import hash_batch, rows_of
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.data.rowencoder import batches as doc_chunks
from nbsvm.data.samples import deal_parts
from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document
from nbsvm.learners.targets import Labels
from nbsvm.text.hashing import Hasher

CHUNK = 512  # documents read and hashed at a time
N_PARTS = 10  # seeded parts; a fold validates two of them
RUNG_FRACTIONS = (1 / 9, 1 / 3, 1.0)
MIN_RUNG_DOCS = 500  # a rung sample never smaller than this (or all)
SMALL_CORPUS_NGRAMS = (
    2_000_000  # n-gram occurrences peeked at first: a corpus ending within is small
)
CHAR_NGRAMS = 4


def search_space(
    multi: bool, multilabel: bool, chars: bool, scripts: bool = False, exact: bool = False
) -> dict:
    """What the search varies, each list starting with the value the defaults use (None:
    the data-dependent default). Chosen on the Wang & Manning corpora (the README's table):
    the n-gram order, NB smoothing (``alpha`` 0.1: 20NG +1 point, MPQA +0.5), L2 strength,
    the loss, unit rows, ``min_df``, plain binarized features (two classes) and
    ``beta``; ``exact``: the exact solver too (a corpus whose rows fit in memory)."""
    space = {
        "ngrams": [3, 2, 1],
        "alpha": [None, 0.1],
        "lam": [None, "flip"],
        "norm": [None, "flip"],
        "min_df": [None, "flip"],
    }
    if multi or multilabel:
        space["loss"] = [None, "hinge"]
        space["epochs"] = [None, 10]
    else:
        space["loss"] = [None, "modified_huber"]
        space["weighting"] = ["nb", "binary"]
    if chars:
        space["char_ngrams"] = [None, "flip"]
    if scripts:
        space["split_scripts"] = [None, "flip"]
    if exact and not multilabel:
        space["learner"] = [None, "dcd"]
    return space


def resolve_space(space: dict, defaults: dict) -> dict:
    """Concrete values: ``None`` -> the default, ``"flip"`` -> the other of two (none where
    the default is neither: a value the user fixed, such as lambda 3e-5 or min_df 3)."""
    other: dict[str, dict[Any, Any]] = {
        "norm": {"l2": "none", "none": "l2"},
        "lam": {DEFAULTS["lam"]: SOFTMAX_LAM, SOFTMAX_LAM: DEFAULTS["lam"]},
        "min_df": {1: 2, 2: 1},
        "split_scripts": {True: False, False: True},
        "char_ngrams": {0: CHAR_NGRAMS, CHAR_NGRAMS: 0},
    }
    out = {}
    for name, values in space.items():
        vals = []
        for v in values:
            if v == "flip" and defaults[name] not in other[name]:
                continue
            v = defaults[name] if v is None else other[name][defaults[name]] if v == "flip" else v
            if v not in vals:
                vals.append(v)
        out[name] = vals
    return out


def defaults_on(estimator: type, base: dict, classes: list, corpus: dict, multilabel: bool) -> dict:
    """What ``base`` resolves to on this data (the task's defaults, the data's defaults)."""
    model = estimator(**base)
    model.corpus_ = corpus
    model.class_names_ = Labels(classes)
    out = {
        name: model.setting(name)
        for name in ("alpha", "lam", "loss", "optimizer", "eta0", "epochs", "norm", "min_df")
    }
    out.update(
        {
            k: getattr(model, k)
            for k in (
                "ngrams",
                "beta",
                "weighting",
                "char_ngrams",
                "split_scripts",
                "learner",
            )
        }
    )
    return out


def candidates(space: dict, defaults: dict, fixed: set, n: int, seed: int) -> list[dict]:
    """The defaults, then a seeded sample of the other combinations (``fixed`` names stay
    at their default)."""
    keys = [k for k in space if k not in fixed]
    combos = [dict(zip(keys, vals)) for vals in itertools.product(*(space[k] for k in keys))]
    default = {k: defaults[k] for k in keys}
    combos = [
        c
        for c in combos
        if c != default
        and not (
            c.get("weighting") == "binary"
            and c.get("alpha", defaults["alpha"]) != defaults["alpha"]
        )
        # binary features have no NB part: a beta the user fixed other than 1 refuses them
        and not (c.get("weighting") == "binary" and "beta" in fixed and defaults["beta"] != 1)
        # the exact solver has its own loss and stopping rule: these would repeat it
        and not (
            c.get("learner") == "dcd"
            and any(c.get(k, defaults[k]) != defaults[k] for k in ("loss", "epochs"))
        )
    ]
    order = np.random.default_rng(seed).permutation(len(combos))
    return [default] + [combos[i] for i in order[: max(0, n - 1)]]


def hash_parts(
    docs: Iterable[Document],
    hashers: dict,
    root: Path,
    seed: int,
    notify: Callable[[dict], None],
) -> dict[Any, list[FeatureCache]]:
    """One pass: each document to a part (each class dealt to the parts in seeded turns:
    :func:`~nbsvm.data.samples.deal_parts`), hashed once per hasher. Returns
    ``{key: [FeatureCache per part]}``."""
    writers = {
        key: [CacheWriter(root / f"{key}" / f"part{p}", h) for p in range(N_PARTS)]
        for key, h in hashers.items()
    }
    rng = np.random.default_rng(seed)
    queues: dict[Any, list] = {}  # each class's turn left (deal_parts)
    seen = 0
    try:
        for chunk in doc_chunks(docs, CHUNK):
            part = deal_parts([d.label for d in chunk], N_PARTS, rng, queues)
            for key, h in hashers.items():
                batch = hash_batch(chunk, h)
                for p in range(N_PARTS):
                    mask = part == p
                    if mask.any():
                        writers[key][p].add(rows_of(batch, mask))
            seen += len(chunk)
            notify({"stage": "hash", "docs": seen})
        if seen < 2 * N_PARTS:
            raise NBSVMError(f"--auto needs at least {2 * N_PARTS} training documents, got {seen}")
        return {key: [w.close() for w in ws] for key, ws in writers.items()}
    except BaseException:
        for ws in writers.values():
            for w in ws:
                w.abort()  # a published part is left alone; the rest is dropped
        raise


def search_bits(n_ids: int, n_bits: int) -> int:
    """Buckets for the search's trials: at least 8 per n-gram occurrence (so at least 8
    per distinct n-gram: few collisions), at most the model's. Each training scans every
    bucket twice; on small corpora that, not the epochs, was most of a trial's time."""
    return int(min(n_bits, max(16, math.ceil(math.log2(max(n_ids, 1))) + 3)))


def rung_sizes(n: int) -> list[int]:
    """Training documents of each rung's sample, of ``n`` in a fold: a ninth, a third, all,
    none under :data:`MIN_RUNG_DOCS` (rungs that would be as large merge: a small corpus
    has fewer rungs)."""
    sizes = [min(n, max(MIN_RUNG_DOCS, math.ceil(f * n))) for f in RUNG_FRACTIONS[:-1]]
    return sorted(set(sizes) - {n}) + [n]


def peek(
    docs: Iterator[Document], probe: Hasher
) -> tuple[list[Document], Iterator[Document], float, bool]:
    """The first documents, read until :data:`SMALL_CORPUS_NGRAMS` n-gram occurrences
    (``probe`` hashes them): ``(head, the rest, the first chunk's median n-grams, whether
    the corpus ended within them)``. Short documents or a small corpus also try character
    n-grams (XGraph +1 point, long posts)."""
    head: list[Document] = []
    n_grams, median, ended = 0, 0.0, False
    while n_grams < SMALL_CORPUS_NGRAMS:
        chunk = list(itertools.islice(docs, CHUNK))
        if not chunk:
            ended = True
            break
        lengths = np.diff(hash_batch(chunk, probe).offsets)
        median = median if head else float(np.median(lengths))
        head += chunk
        n_grams += int(lengths.sum())
    return head, docs, median, ended
