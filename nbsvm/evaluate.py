"""Streaming evaluation and prediction with a fitted model (bounded memory)."""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

import numpy as np
import pandas as pd

from .errors import NBSVMError
from .features import hash_batches
from .io.readers import Document
from .metrics import confusion_matrix, report
from .nbsvm import NBSVMClassifier
from .online.losses import resolve_loss


def evaluate_documents(model: NBSVMClassifier, docs: Iterable[Document],
                       callback: Callable[[dict], None] | None = None) -> dict:
    """Score labeled documents batch by batch; return :func:`nbsvm.metrics.report`."""
    k = len(model.classes_)
    cm = np.zeros((k, k), dtype=np.int64)
    has_proba = resolve_loss(model.loss).has_proba
    ll_sum, n = 0.0, 0
    for batch in hash_batches(docs, model.hasher_):
        for d in batch.docs:
            if d.label is None:
                raise NBSVMError("document has no label; eval needs labeled input",
                                 path=d.source, line=d.line)
        truth = model._codes_for([d.label for d in batch.docs], batch.docs)
        scores = model.decision_batch(batch)
        pred = model._codes_for(list(model.labels_of(scores)))
        cm += confusion_matrix(truth, pred, k)
        if has_proba:
            proba = model.proba_of(scores)
            ll_sum += float(-np.log(np.clip(proba[np.arange(len(truth)), truth], 1e-15, 1)).sum())
        n += len(batch)
        if callback:
            callback({"stage": "eval", "docs": n})
    if n == 0:
        raise NBSVMError("no documents to evaluate")
    return report(cm, model.classes_, ll_sum if has_proba else None)


def predict_documents(model: NBSVMClassifier, docs: Iterable[Document]) -> Iterator[pd.DataFrame]:
    """Yield one DataFrame per batch: ``source, line, [true_label,] label, score[, probability]``.

    For two classes ``score`` is the decision value for ``classes_[1]`` and ``probability``
    that class's probability; for more classes both are those of the predicted class.
    """
    has_proba = resolve_loss(model.loss).has_proba
    for batch in hash_batches(docs, model.hasher_):
        scores = model.decision_batch(batch)
        labels = model.labels_of(scores)
        frame = {"source": [d.source for d in batch.docs], "line": [d.line for d in batch.docs]}
        if any(d.label is not None for d in batch.docs):
            frame["true_label"] = [d.label for d in batch.docs]
        frame["label"] = labels
        if scores.shape[1] == 1:
            frame["score"] = scores[:, 0]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[:, 1]
        else:
            best = np.argmax(scores, axis=1)
            frame["score"] = scores[np.arange(len(best)), best]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[np.arange(len(best)), best]
        yield pd.DataFrame(frame)
