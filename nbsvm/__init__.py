"""nbsvm: fast, memory-bounded hashed NBSVM and online linear learners for text."""

from nbsvm._version import __version__
from nbsvm.errors import NBSVMError
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.models.nbsvm import NBSVMClassifier
from nbsvm.text.hashing import Hasher

__all__ = ["NBSVMClassifier", "NBLexicon", "Hasher", "NBSVMError", "__version__"]
