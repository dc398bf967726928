"""Text to bucket ids: tokenizer, n-grams and MurmurHash3 hashing."""

from nbsvm.text.hashing import Hasher, bucket_of, validate_n_bits
from nbsvm.text.tokenize import char_ngrams, tokenize, word_ngrams

__all__ = ["tokenize", "word_ngrams", "char_ngrams", "Hasher", "bucket_of", "validate_n_bits"]
