"""Text to bucket ids: tokenizer, n-grams and MurmurHash3 hashing."""
from nbsvm.text.tokenize import tokenize, word_ngrams, char_ngrams
from nbsvm.text.hashing import Hasher, bucket_of, validate_n_bits

__all__ = ["tokenize", "word_ngrams", "char_ngrams", "Hasher", "bucket_of", "validate_n_bits"]
