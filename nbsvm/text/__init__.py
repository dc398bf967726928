"""Text to bucket ids: tokenizer, n-grams and MurmurHash3 hashing."""

from __future__ import annotations

from nbsvm._lazy import lazy_exports

# the tokenizer's functions are bound here at once: one of them shares its module's name
# (nbsvm.text.tokenize), which a lazy attribute would leave to the module once imported
from nbsvm.text.tokenize import char_ngrams, tokenize, word_ngrams

_EXPORTS = {
    "Hasher": "nbsvm.text.hashing",
    "bucket_of": "nbsvm.text.hashing",
    "validate_n_bits": "nbsvm.text.hashing",
}
__all__ = ["tokenize", "word_ngrams", "char_ngrams", "Hasher", "bucket_of", "validate_n_bits"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
