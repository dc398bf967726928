"""``nbsvm quantize``: a model file read, quantized (:func:`nbsvm.models.quantize.quantize`)
and written to another file."""

from __future__ import annotations

import os

from nbsvm.errors import NBSVMError
from nbsvm.models.nbsvm import NBSVMClassifier
from nbsvm.models.quantize import quantize


def quantize_file(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    dtype: str = "int8",
    cutoff: float = 0.0,
    keep: float | None = None,
) -> dict:
    """Read the model file ``src``, quantize it (:func:`quantize`) and write ``dst``
    (atomically); returns what was done with both files' sizes in bytes."""
    if os.path.exists(src) and os.path.exists(dst) and os.path.samefile(src, dst):
        raise NBSVMError(
            "the quantized model would replace the original: write it to another file",
            path=str(dst),
        )
    clf = NBSVMClassifier.load(src)
    if getattr(clf, "quantized_", None):
        raise NBSVMError(
            "the model is quantized already: quantize the original model file", path=str(src)
        )
    before = os.path.getsize(src)
    done = quantize(clf, dtype, cutoff, keep)
    clf.save(dst)
    return dict(done, bytes_before=before, bytes_after=os.path.getsize(dst))
