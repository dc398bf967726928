"""Step 3 of the data flow: hashed buckets -> naive-Bayes counts and log-count ratios
(:class:`NBLexicon`), the sparse (bucket, class) counts behind it, and which buckets get a
model column."""

from nbsvm.lexicon.nblexicon import NBLexicon

__all__ = ["NBLexicon"]
