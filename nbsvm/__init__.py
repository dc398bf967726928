"""nbsvm: fast, memory-bounded hashed NBSVM and online linear learners for text."""
__version__ = "0.1.0"

from nbsvm.errors import NBSVMError  # noqa: E402
from nbsvm.models.nbsvm import NBSVMClassifier  # noqa: E402
from nbsvm.lexicon.nblexicon import NBLexicon  # noqa: E402
from nbsvm.text.hashing import Hasher  # noqa: E402

__all__ = ["NBSVMClassifier", "NBLexicon", "Hasher", "NBSVMError", "__version__"]
