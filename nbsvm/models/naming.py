"""Naming a model's strongest buckets while it trains: the n-grams of a text sample that
fall in them (:func:`~nbsvm.evaluation.bucket_names.ngram_map_of`), found in a thread beside
the last :data:`MAPPER_EPOCHS` epochs from a snapshot of the weights before them, so that
training does not wait for it and the result does not depend on timing."""

from __future__ import annotations

import concurrent.futures
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.evaluation.bucket_names import ngram_map_of, strongest_columns
from nbsvm.learners.kernels.table import _mean_abs_weight

if TYPE_CHECKING:
    from nbsvm.models.nbsvm import NBSVMClassifier

#: Epochs the naming runs beside, from the weights before them: on IMDB it takes 0.25 s,
#: and beside the last epoch alone (0.15 s) training waited for it
MAPPER_EPOCHS = 2


class Naming:
    """The naming of ``model``'s strongest buckets during one fit. ``named``: the columns
    its snapshot chose (a bitmap), once chosen, or restored from a checkpoint; a run
    resumed after the naming's start names them as the uninterrupted run did."""

    def __init__(self, model: NBSVMClassifier, named: np.ndarray | None = None):
        self.model = model
        self.named = named

    def start_at(
        self, epoch: int, first_epoch: int, epochs: int, texts: list[str]
    ) -> concurrent.futures.Future | None:
        """The naming, started at the first of the last epochs (from epoch 2 on) from the
        weights now, whatever epoch the run began at: resumed at it, from the restored
        weights; resumed after it, from :attr:`named`. Else None (named after the epochs,
        from the last weights: a checkpoint of the release before kept no snapshot)."""
        start = max(2, epochs + 1 - MAPPER_EPOCHS)
        if not texts or self.model.backend_learner is not None:
            return None
        if epoch == start:
            self.named = self._snapshot()
        elif not (epoch == first_epoch > start and self.named is not None):
            return None
        model = self.model
        pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nbsvm-map")
        future = pool.submit(ngram_map_of, self.named, model.column_of_, model.hasher_, texts)
        pool.shutdown(wait=False)  # the compiled tokenizer releases the GIL
        return future

    def _snapshot(self) -> np.ndarray:
        """The strongest columns by the weights now, row by row."""
        model = self.model
        learner = model.linear_  # read only: folding the SGD scale would change training
        mean_abs = None
        if model.beta != 1.0 and model.interpolate == "weights":
            mean_abs = np.array(
                [
                    _mean_abs_weight(learner.S_[k]) * learner.scale_of(k)
                    for k in range(learner.n_outputs)
                ]
            )
        return strongest_columns(model, mean_abs=mean_abs)
