"""A lexicon from labeled documents in one streaming pass (``nbsvm lexicon``)."""
from __future__ import annotations

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.text.hashing import Hasher


def build_lexicon(docs, hasher: Hasher, alpha: float = 1.0, callback=None) -> NBLexicon:
    """One streaming pass over labeled documents; returns the fitted :class:`NBLexicon`.

    ``callback`` receives ``{"stage": "lexicon", "docs": n}`` after each batch.
    """
    from nbsvm.data.batches import hash_batches

    lexicon = NBLexicon(hasher, alpha=alpha)
    lexicon._init_state()
    n = 0
    for batch in hash_batches(docs, hasher):
        codes = np.empty(len(batch), dtype=np.int32)
        for i, label in enumerate(batch.labels):
            if label is None:
                raise NBSVMError("document has no label", **batch.where(i))
            codes[i] = lexicon.code_of(label)
        lexicon.add_batch(batch.ids, batch.offsets, codes)
        n += len(batch)
        if callback:
            callback({"stage": "lexicon", "docs": n})
    if n == 0:
        raise NBSVMError("no labeled documents in the input")
    return lexicon
