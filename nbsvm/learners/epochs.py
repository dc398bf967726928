"""The epoch driver: :func:`run_epoch`, the one loop every trainer runs over a shuffled
cache (``nbsvm train``, Dask's workers, ``nbsvm learn``), and :class:`Epochs`, NBSVM
training's use of it: one pass of the learner over the cached documents, group by group in
the cache's shuffled order, with progress events; or the first pass over documents as they
are hashed (a prebuilt lexicon knows the columns before any document).

The learner is the built-in one (:class:`~nbsvm.learners.sgd.LinearSGD`, called on chunks
of a group so that progress is reported every :data:`EPOCH_CHUNK` documents) or a backend
reduction (:class:`~nbsvm.learners.reduction.NBReduction`, one ``partial_fit`` call a group).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.data.cache import FeatureCache
from nbsvm.data.translate import translate
from nbsvm.errors import NBSVMError, NoDocuments

if TYPE_CHECKING:
    from nbsvm.data.batches import Batch
    from nbsvm.data.cache import CacheWriter

#: Why a backend learner refuses weighted documents.
NO_WEIGHTS = (
    "document weights (--weight-col, sample_weight) act on the built-in learner's steps; "
    "the backend learners (--learner) do not take them"
)

#: Documents between progress reports.
EPOCH_CHUNK = 4096


def check_cache_fits(cache: FeatureCache, n_columns: int) -> None:
    """The cache's ids (checked below ``cache.id_limit`` as its blocks are read) must be
    columns of the learner: the epoch kernels index the state with them unchecked."""
    if cache.id_limit > n_columns:
        raise NBSVMError(
            f"corrupted feature cache: ids up to {cache.id_limit - 1} for a "
            f"model of {n_columns} columns",
            path=str(cache.folder),
        )


def run_epoch(
    groups: Generator[tuple, Any, Any],
    step: Callable[..., Iterable[dict]],
    report: Callable[[dict], object] | None = None,
) -> dict:
    """The one epoch loop of every trainer (``nbsvm train``, Dask's workers, ``nbsvm
    learn``): each group of a shuffled epoch goes through ``step(*group)``, which yields
    the stats of what it learned (``{"n": examples, "loss": summed loss, ...}``, one dict
    per part, so that a long group reports as it goes); they are summed, and
    ``report(sums)`` is called after each part. Returns the sums. ``groups`` is closed on
    any exit, so that an error or Ctrl-C stops a reading thread before the caller removes
    the cache folder."""
    sums: dict = {}
    with contextlib.closing(groups):
        for group in groups:
            for stats in step(*group):
                for key, value in stats.items():
                    sums[key] = sums.get(key, 0) + value
                if report is not None:
                    report(sums)
    return sums


class Epochs:
    """Runs ``linear`` (or ``backend`` over ``linear``'s feature values) for ``epochs``
    epochs in all, reporting ``{"stage": "epoch", "epoch", "epochs", "docs", "total",
    "loss"}`` to ``notify`` (``loss``: the mean before each update so far)."""

    def __init__(self, linear, backend, epochs: int, notify: Callable[[dict], None]):
        self.linear = linear
        self.backend = backend
        self.epochs = epochs
        self.notify = notify

    def _report(self, epoch, n, total, loss_sum) -> None:
        self.notify(
            {
                "stage": "epoch",
                "epoch": epoch,
                "epochs": self.epochs,
                "docs": n,
                "total": total,
                "loss": loss_sum / n,
            }
        )

    def replay(
        self,
        cache: FeatureCache,
        positive: Sequence[int] | np.ndarray,
        rng: np.random.Generator,
        epoch: int,
        groups: Generator[tuple, Any, Any] | None = None,
    ) -> float:
        """One epoch over ``cache`` in shuffled groups (``groups``: another source of
        ``(ids, offsets, codes, order, weights)``, e.g. the first epoch's translation of
        buckets). Returns the epoch's mean loss (NaN or infinite: the steps blew up)."""
        if groups is None:
            check_cache_fits(cache, self.linear.n_features)
        sums = run_epoch(
            groups or cache.shuffled_groups(rng),
            lambda ids, offsets, codes, order, weights: self._steps(
                ids, offsets, codes, order, positive, weights
            ),
            lambda sums: self._report(epoch, sums["n"], cache.n_docs, sums["loss"]),
        )
        return sums["loss"] / sums["n"] if sums.get("n") else 0.0

    def _steps(self, ids, offsets, codes, order, positive, weights=None):
        """The learner over one group: the backend in one call, the built-in learner in
        chunks of :data:`EPOCH_CHUNK` documents (progress as it goes)."""
        if self.backend is not None:
            if weights is not None:
                raise NBSVMError(NO_WEIGHTS)
            yield {
                "n": len(order),
                "loss": self._backend_pass(ids, offsets, codes, order, positive),
            }
            return
        for start in range(0, len(order), EPOCH_CHUNK):
            part = order[start : start + EPOCH_CHUNK]
            loss = self.linear.epoch(ids, offsets, codes, part, positive, weights)
            yield {"n": len(part), "loss": loss * len(part)}

    def stream_first(
        self,
        batches: Iterable[Batch],
        writer: CacheWriter,
        column_of: np.ndarray,
        codes_for: Callable[[Batch], np.ndarray],
        positive: Sequence[int] | np.ndarray,
    ) -> FeatureCache:
        """Epoch 1 over hashed ``batches`` as they come, each written to ``writer`` as model
        columns (``column_of``; buckets the lexicon never saw have ratio 0 and are dropped);
        ``codes_for(batch)`` gives its class codes. Returns the cache written."""
        with writer:
            n, loss_sum = 0, 0.0
            for batch in batches:
                codes = codes_for(batch)
                batch = translate(batch, column_of)
                writer.add(batch)
                loss_sum += self.linear.epoch(
                    batch.ids, batch.offsets, codes, np.arange(len(batch)), positive, batch.weights
                ) * len(batch)
                n += len(batch)
                self._report(1, n, None, loss_sum)
            cache = writer.close()
        if cache.n_docs == 0:
            raise NoDocuments()
        return cache

    def _backend_pass(self, ids, offsets, codes, order, positive) -> float:
        """One pass of the backend learner(s) over a group; their mean loss (nan when the
        learner reports none)."""
        self.backend.partial_fit(
            self.linear.tables, ids, offsets, codes, order, positive, self.linear.unit
        )
        losses = [learner.last_stats_.get("loss") for learner in self.backend.learners]
        if any(v is None for v in losses):
            return float("nan")
        return float(sum(losses)) / len(losses)
