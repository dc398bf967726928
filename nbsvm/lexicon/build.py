"""A lexicon from labeled documents in one streaming pass (``nbsvm lexicon``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.text.hashing import Hasher

if TYPE_CHECKING:
    from nbsvm.io.document import Document


def build_lexicon(
    docs: Iterable[Document],
    hasher: Hasher,
    alpha: float | None = 1.0,
    callback: Callable[[dict], None] | None = None,
    lexicon: NBLexicon | None = None,
    corpus: dict | None = None,
) -> NBLexicon:
    """One streaming pass over labeled documents; returns the fitted :class:`NBLexicon`.

    ``callback`` receives ``{"stage": "lexicon", "docs": n}`` after each batch.
    ``lexicon``: add to this one's counts (more data for a lexicon counted before).
    ``corpus``: a dict that receives what the data-dependent defaults read (as
    :func:`nbsvm.data.cache.corpus_stats`: documents, n-grams, median n-grams per document);
    a new lexicon keeps them too (``corpus_``, saved in its file).
    """
    from nbsvm.data.batches import hash_batches

    fresh = lexicon is None
    if lexicon is None:
        lexicon = NBLexicon(hasher, alpha=alpha)
    lexicon._init_state()
    n = 0
    lengths = np.zeros(1 << 16, dtype=np.int64)  # capped histogram: memory stays flat
    n_ids = 0
    for batch in hash_batches(docs, hasher):
        n_ids += int(batch.offsets[-1] - batch.offsets[0])
        lengths += np.bincount(np.minimum(np.diff(batch.offsets), (1 << 16) - 1), minlength=1 << 16)
        codes = np.empty(len(batch), dtype=np.int32)
        for i, label in enumerate(batch.labels):
            if label is None:
                raise NBSVMError("document has no label", **batch.where(i))
            codes[i] = lexicon.code_of(label)
        lexicon.add_batch(batch.ids, batch.offsets, codes, batch.weights)
        n += len(batch)
        if callback:
            callback({"stage": "lexicon", "docs": n})
    if n == 0:
        raise NBSVMError("no labeled documents in the input")
    stats = dict(
        documents=n,
        ngrams=n_ids,
        median_ngrams=int(np.searchsorted(np.cumsum(lengths), (n + 1) // 2)),
    )
    if corpus is not None:
        corpus.update(stats)
    # what train --lexicon reads its data-dependent defaults from (counts added to an
    # earlier lexicon: these documents only, so none)
    lexicon.corpus_ = stats if fresh else None
    return lexicon
