"""Text to bucket ids: tokenizer, n-grams and MurmurHash3 hashing."""
from .tokenize import tokenize, word_ngrams, char_ngrams
from .hashing import Hasher, bucket_of, validate_n_bits

__all__ = ["tokenize", "word_ngrams", "char_ngrams", "Hasher", "bucket_of", "validate_n_bits"]
