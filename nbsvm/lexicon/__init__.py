"""Step 3 of the data flow: hashed buckets -> naive-Bayes counts and log-count ratios
(:class:`NBLexicon`), the sparse (bucket, class) counts behind it, and which buckets get a
model column."""

from __future__ import annotations

from nbsvm._lazy import lazy_exports

_EXPORTS = {
    "NBLexicon": "nbsvm.lexicon.nblexicon",
}
__all__ = ["NBLexicon"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
