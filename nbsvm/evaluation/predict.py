"""Streaming prediction with a fitted model: one table of labels, scores and
probabilities per batch of documents (bounded memory): columns by name
(:func:`prediction_columns`, what the command line writes without pandas), or a DataFrame
(:func:`predict_documents`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.data.batches import hash_batches
from nbsvm.io.document import Document
from nbsvm.io.labels import key_of

if TYPE_CHECKING:
    import pandas as pd  # the estimator is above: it is only passed in

    from nbsvm.models.nbsvm import NBSVMClassifier


def predict_documents(
    model: NBSVMClassifier,
    docs: Iterable[Document],
    top_k: int | None = None,
    threshold: float | None = None,
) -> Iterator[pd.DataFrame]:
    """Yield one DataFrame per batch: the columns of :func:`prediction_columns`."""
    import pandas as pd

    for columns in prediction_columns(model, docs, top_k, threshold):
        yield pd.DataFrame(columns)


def prediction_columns(
    model: NBSVMClassifier,
    docs: Iterable[Document],
    top_k: int | None = None,
    threshold: float | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one table per batch, ``{column: list or array}``: ``source, line,
    [true_label,] label``, then scores.

    - Two classes: ``score_<c>`` and ``probability_<c>``, named after the positive class
      ``c = classes_[1]`` (the decision value and probability of that class, whatever the
      predicted label).
    - More classes: ``score`` and ``probability`` of the predicted class.
    - Multi-label: ``label`` is the predicted set (``"a,b"``), then ``probability_<label>``
      (or ``score_<label>`` for losses without probabilities) for every label.

    With ``top_k`` or ``threshold``: also ``top1_label, top1_probability, ..., topK_label,
    topK_probability`` (``topI_score`` without probabilities), the best classes first; a
    class below ``threshold`` is left empty (``top_k`` None: every class, by threshold).
    Probabilities are written only where the loss gives them.
    """
    has_proba = model.has_proba()
    classes = np.asarray(model.class_names_, dtype=object)
    ranked = top_k is not None or threshold is not None
    if ranked:  # a bad k or threshold: an error before any row
        model.top_k_of(np.zeros((0, model.n_outputs())), top_k, threshold)
    for batch in hash_batches(docs, model.hasher_, remap=model.column_of_):
        scores = model.decision_batch(batch, columns=True)
        labels = model.labels_of(scores)
        frame: dict[str, Any] = {"source": batch.sources, "line": batch.lines}
        if any(label is not None for label in batch.labels):
            # a label set as its key, whatever the input spelled ('sport , finance' and a
            # list ['sport', 'finance'] alike: 'finance,sport', as the label column)
            frame["true_label"] = (
                [None if t is None else key_of(t) for t in batch.labels]
                if model.multilabel
                else batch.labels
            )
        frame["label"] = labels
        if model.multilabel:  # every label's own score or probability
            values = model.proba_of(scores) if has_proba else scores
            for k, c in enumerate(model.class_names_):
                frame[f"{'probability' if has_proba else 'score'}_{c}"] = values[:, k]
        elif scores.shape[1] == 1:
            positive = model.class_names_[1]
            frame[f"score_{positive}"] = scores[:, 0]
            if has_proba:
                frame[f"probability_{positive}"] = model.proba_of(scores)[:, 1]
        else:  # the predicted label's own score and probability
            index = {c: k for k, c in enumerate(model.class_names_)}
            best = np.fromiter(
                (index[label] for label in labels), dtype=np.int64, count=len(labels)
            )
            frame["score"] = scores[np.arange(len(best)), best]
            if has_proba:
                frame["probability"] = model.proba_of(scores)[np.arange(len(best)), best]
        if ranked:
            positions, values, kind = model.top_k_of(scores, top_k, threshold)
            for i in range(positions.shape[1]):
                frame[f"top{i + 1}_label"] = np.where(
                    positions[:, i] >= 0, classes[np.maximum(positions[:, i], 0)], None
                )
                frame[f"top{i + 1}_{kind}"] = values[:, i]
        yield frame
