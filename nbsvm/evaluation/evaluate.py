"""Streaming evaluation of a fitted model (bounded memory): documents hashed batch by batch,
or a feature cache hashed with the model's settings, scored into a report; a multi-label
model's sums per shard for Dask.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.data.batches import hash_batches
from nbsvm.data.cache import FeatureCache
from nbsvm.errors import NBSVMError
from nbsvm.evaluation.scoring import _LabelSetScorer, _Scorer
from nbsvm.io.document import Document

if TYPE_CHECKING:  # the estimator is above: it is only passed in
    from nbsvm.models.nbsvm import NBSVMClassifier


def evaluation_parts(model: NBSVMClassifier, docs: Iterable[Document]) -> dict:
    """The evaluation of ``docs``, as parts to be merged with other shards'
    (:func:`report_of_parts`): how Dask evaluates shards."""
    scorer = _LabelSetScorer(model) if model.multilabel else _Scorer(model)
    for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
        scorer.add_labelled(batch, columns=True)
    return scorer.parts()


def report_of_parts(model: NBSVMClassifier, parts: list) -> dict:
    """The report of :func:`evaluate_documents` over every shard's
    :func:`evaluation_parts` (equal to one evaluation of all their documents)."""
    scorer = _LabelSetScorer(model) if model.multilabel else _Scorer(model)
    for part in parts:
        scorer.merge(part)
    return scorer.report()


def evaluate_documents(
    model: NBSVMClassifier,
    docs: Iterable[Document],
    callback: Callable[[dict], None] | None = None,
    scores_out: list | None = None,
) -> dict:
    """Score labeled documents batch by batch; return :func:`nbsvm.evaluation.metrics.report`.

    A document whose label the model does not know counts as an error; such labels get a
    class of the report and are listed in ``unseen_labels`` (label -> documents).
    ``scores_out``: a list that receives ``(true class indices, decision scores)`` per batch
    for the documents of known labels (for ROC and precision-recall curves: 8 bytes per
    document and output are kept).
    """
    if model.multilabel and scores_out is not None:
        raise NBSVMError("ROC and precision-recall plots are drawn for single-label models")
    scorer = _LabelSetScorer(model) if model.multilabel else _Scorer(model, scores_out)
    # the hasher thread also maps buckets to model columns
    for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
        scorer.add_labelled(batch, columns=True)
        if callback:
            callback({"stage": "eval", "docs": scorer.n})
    return scorer.report()


def evaluate_cache(
    model: NBSVMClassifier,
    cache: FeatureCache,
    callback: Callable[[dict], None] | None = None,
    columns: bool = False,
    scores_out: list | None = None,
    correct_out: list | None = None,
) -> dict:
    """Score the documents of a feature cache (hashed with the model's settings).

    ``columns``: the cache holds model columns already (translated when it was written).
    ``scores_out``: as in :func:`evaluate_documents`.
    ``correct_out``: a list that receives, per batch, whether each document (in the
    cache's order) was classified right: paired comparisons of two models document by
    document (single-label models).
    """
    if cache.hasher != model.hasher_:
        raise NBSVMError(
            "the cache was hashed with other settings than the model's", path=str(cache.folder)
        )
    if model.multilabel:
        sets = _LabelSetScorer(model)
        for batch in cache.batches(2048):
            sets.add(batch, [cache.labels[c] for c in batch.labels], columns)
            if callback:
                callback({"stage": "eval", "docs": sets.n})
        return sets.report()
    # a label the model does not know is an error of every document that has it
    to_class = np.array(
        [
            model.class_names_.index(label) if label in model.class_names_ else -1
            for label in cache.labels
        ]
        or [0],
        dtype=np.int32,
    )
    scorer = _Scorer(model, scores_out, correct_out)
    for batch in cache.batches(2048):
        codes = to_class[np.asarray(batch.labels, dtype=np.int64)]
        scorer.add(batch, codes, columns, names=cache.labels, places=cache.first_seen)
        if callback:
            callback({"stage": "eval", "docs": scorer.n})
    return scorer.report()
