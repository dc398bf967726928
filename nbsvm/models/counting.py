"""What the trainer counts while it hashes the training documents (or reads a kept cache),
before any bucket has a column.

Two classes are counted per class and bucket in dense int32 rows (an
:class:`~nbsvm.lexicon.nblexicon.NBLexicon` counting in memory the trainer lends); from a
third class on, or once a document carries a weight, only each bucket's documents (one
int32 row, ``df``): the classes are then counted by kept column, from the cache
(:mod:`nbsvm.models.kept_columns`). What was counted becomes columns in
:mod:`nbsvm.models.columns` (a lexicon) or :mod:`nbsvm.models.kept_columns` (``df``).
"""

from __future__ import annotations

import mmap
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.data.batches import Batch, hash_batches
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.errors import NoDocuments
from nbsvm.lexicon import _kernels as kernels
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.memory import advise_huge_pages

if TYPE_CHECKING:
    from collections.abc import Iterable

    from nbsvm.io.document import Document
    from nbsvm.models.nbsvm import NBSVMClassifier


class Counting:
    """Counts ``model``'s training documents hashed by ``hasher``; ``notify`` receives
    progress events."""

    def __init__(self, model: NBSVMClassifier, hasher, notify=None, max_memory=None):
        self.model = model
        self.hasher = hasher
        self.notify = notify or (lambda event: None)
        self.max_memory = max_memory  # a document too long to hash within it is refused

    def _per_class(self, n_labels: int) -> bool:
        return n_labels <= 2 and not self.model.multilabel

    def hashing_pass(
        self, docs: Iterable[Document], writer: CacheWriter, store: np.ndarray, mm: mmap.mmap
    ) -> tuple[NBLexicon | None, FeatureCache, np.ndarray | None]:
        """Hash every document once, writing the cache and counting: per class while there
        are two (a lexicon counting in ``store``, lent), then per bucket only (``df``).
        Returns ``(lexicon or None, cache, df or None)``."""
        # (the model's ratios are computed with model.setting("alpha"), never the lexicon's)
        alpha = self.model.alpha
        lexicon: NBLexicon | None = NBLexicon.counting_in(self.hasher, alpha, store, mm)
        df = None
        with writer:
            n = 0
            for batch in hash_batches(docs, self.hasher, max_memory=self.max_memory):
                if n == 0:  # before the first count: a dense corpus counts on huge pages
                    advise_huge_pages(mm, batch.ids.size, store.shape[1])
                codes = writer.add(batch)
                # a third class, or a weighted document: per bucket from here on (the
                # classes are then counted by kept column, from the cache, with weights)
                if df is None and (
                    not self._per_class(len(writer.labels)) or batch.weights is not None
                ):
                    df, lexicon = _to_df(store, mm), None
                if lexicon is not None:  # still counting per class (df is None)
                    for label in writer.labels[lexicon.n_labels :]:
                        lexicon.code_of(label)  # same first-appearance order as the cache
                    lexicon.add_batch(batch.ids, batch.offsets, codes)
                else:
                    kernels.count_df(df, weighed_ids(batch))
                n += len(batch)
                self.notify({"stage": "hash", "docs": n})
            cache = writer.close()
        return lexicon, nonempty(cache), df

    def count_cache(
        self, cache: FeatureCache, store: np.ndarray, mm: mmap.mmap
    ) -> tuple[NBLexicon | None, np.ndarray | None]:
        """What :meth:`hashing_pass` counts, from a kept cache (its ids are each document's
        distinct buckets): ``(lexicon, None)`` for two classes, else ``(None, df)``."""
        # weighted documents are counted by kept column, in float (from_df)
        two = self._per_class(len(cache.labels)) and not cache.weighted
        alpha = self.model.alpha  # (as above)
        lexicon = NBLexicon.counting_in(self.hasher, alpha, store, mm) if two else None
        df = None if two else store[0]
        if lexicon is not None:  # two classes
            for label in cache.labels:
                lexicon.code_of(label)
        n = 0
        for batch in cache.batches(8192):
            if n == 0:  # (as hashing_pass)
                advise_huge_pages(mm, batch.ids.size, store.shape[1])
            if lexicon is not None:
                lexicon.add_batch(
                    batch.ids, batch.offsets, np.asarray(batch.labels, dtype=np.int32)
                )
            else:
                kernels.count_df(df, weighed_ids(batch))
            n += len(batch)
            self.notify({"stage": "count", "docs": n, "total": cache.n_docs})
        if n == 0:
            raise NoDocuments()
        return lexicon, df


def nonempty(cache: FeatureCache) -> FeatureCache:
    if cache.n_docs == 0:
        raise NoDocuments()
    return cache


def weighed_ids(batch: Batch) -> np.ndarray:
    """The ids of the batch's documents that weigh more than 0 (a document of weight 0 is
    read but counts nowhere: its buckets are not seen, as if it were left out)."""
    if batch.weights is None or batch.weights.all():
        return batch.ids
    return batch.ids[np.repeat(batch.weights > 0, np.diff(batch.offsets))]


def _to_df(store, mm) -> np.ndarray:
    """The two classes' count rows summed into the first (documents per bucket); the
    second row's pages go back to the OS."""
    df = store[0]
    np.add(df, store[1], out=df)
    row_bytes = store.shape[1] * 4
    if row_bytes % mmap.PAGESIZE == 0:
        mm.madvise(mmap.MADV_DONTNEED, row_bytes, row_bytes)
    return df
