"""Streaming prediction with a fitted model: one DataFrame of labels, scores and
probabilities per batch of documents (bounded memory).
"""
from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from nbsvm.data.batches import hash_batches
from nbsvm.io.document import Document
from nbsvm.models.nbsvm import NBSVMClassifier


def predict_documents(model: NBSVMClassifier, docs: Iterable[Document]) -> Iterator["pd.DataFrame"]:
    """Yield one DataFrame per batch: ``source, line, [true_label,] label, score[, probability]``.

    For two classes ``score`` is the decision value for ``classes_[1]`` and ``probability``
    that class's probability; for more classes both are those of the predicted class.
    Multi-label: ``label`` is the predicted set (``"a,b"``), then ``probability_<label>``
    (or ``score_<label>`` for losses without probabilities) for every label.
    """
    import pandas as pd

    has_proba = model.has_proba()
    for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
        scores = model.decision_batch(batch, columns=True)
        labels = model.labels_of(scores)
        frame = {"source": batch.sources, "line": batch.lines}
        if any(label is not None for label in batch.labels):
            frame["true_label"] = batch.labels
        frame["label"] = labels
        if model.multilabel:            # every label's own score or probability
            values = model.proba_of(scores) if has_proba else scores
            for k, c in enumerate(model.classes_):
                frame[f"{'probability' if has_proba else 'score'}_{c}"] = values[:, k]
        elif scores.shape[1] == 1:
            frame["score"] = scores[:, 0]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[:, 1]
        else:
            best = np.argmax(scores, axis=1)
            frame["score"] = scores[np.arange(len(best)), best]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[np.arange(len(best)), best]
        yield pd.DataFrame(frame)
