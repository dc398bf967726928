"""nbsvm: fast, memory-bounded hashed NBSVM and online linear learners for text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbsvm._lazy import lazy_exports
from nbsvm._version import __version__
from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.text.hashing import Hasher

_EXPORTS = {
    "NBSVMClassifier": "nbsvm.models.nbsvm",
    "NBLexicon": "nbsvm.lexicon.nblexicon",
    "Hasher": "nbsvm.text.hashing",
}
__all__ = ["NBSVMClassifier", "NBLexicon", "Hasher", "NBSVMError", "__version__"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
