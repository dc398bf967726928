"""The training modes that read the documents more than once, or hold part of them out:
``calibrate``, ``early_stopping``, ``keep_counts`` and ``auto``. One table says which
runner each has and why it cannot start from a lexicon, a kept cache or a checkpoint;
:meth:`~nbsvm.NBSVMClassifier.fit_documents` hands a model with one of them set to
:func:`run_mode`. A mode's runner trains through ``fit_documents`` again with its own
parameter cleared (calibration around early stopping, say), or through
:class:`~nbsvm.models.fitting.Fit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nbsvm.errors import NBSVMError
from nbsvm.models.auto import auto_fit
from nbsvm.models.calibrate import calibrated_fit
from nbsvm.models.early_stopping import fit_early_stopping
from nbsvm.models.run import FitRun
from nbsvm.models.warm import fit_keeping_counts

if TYPE_CHECKING:
    from nbsvm.data.cachestore import KeptCache, ReadyCache
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.models._types import Callback, Documents, MemoryLimit
    from nbsvm.models.checkpoint import Checkpoint
    from nbsvm.models.nbsvm import NBSVMClassifier

#: parameter -> (what it does that a prepared start would skip, its runner)
MODES = {
    "calibrate": ("trains twice, on parts of the data it chooses", calibrated_fit),
    "early_stopping": ("holds out part of the data it reads", fit_early_stopping),
    "keep_counts": ("counts the lexicon in a pass of its own", fit_keeping_counts),
    "auto": ("chooses the hashing settings itself", auto_fit),
}
#: modes that cannot go together, and what to do instead
EXCLUSIVE = {
    ("early_stopping", "auto"): "train with the settings auto chose",
    ("early_stopping", "keep_counts"): "continue training without a held-out part",
    ("auto", "keep_counts"): "train with the settings auto chose and keep_counts=True",
    # the counts are kept to continue training, which a calibration fitted to the old
    # weights forbids
    ("calibrate", "keep_counts"): "a calibrated model cannot be continued; calibrate the "
    "continued model instead",
}


#: each mode's parameter with the command line's option, as refusals say them
_OPTIONS = {"early_stopping": "--valid", "keep_counts": "--keep-counts", "auto": "--auto"}


def _said(name: str) -> str:
    option = _OPTIONS.get(name, f"--{name.replace('_', '-')}")
    return f"{name} ({option})"


def mode_of(model: NBSVMClassifier) -> str | None:
    """The first mode ``model`` has set (in :data:`MODES` order), or None.
    ``calibrate='auto'`` is not one: it calibrates after an ordinary fit, where it can
    (:func:`nbsvm.models.calibrate.auto_calibrate`)."""
    return next((name for name in MODES if mode_of_named(model, name)), None)


def mode_of_named(model: NBSVMClassifier, name: str) -> bool:
    """Whether mode ``name`` is set (``calibrate='auto'`` is not a mode)."""
    return bool(getattr(model, name)) and not (name == "calibrate" and model.calibrate == "auto")


def check_modes(model: NBSVMClassifier) -> None:
    """Refuse modes that cannot go together, and keep_counts for a backend learner (the
    counts are kept to continue training, which is the built-in learner's)."""
    for (a, b), instead in EXCLUSIVE.items():
        if mode_of_named(model, a) and mode_of_named(model, b):
            raise NBSVMError(f"{_said(b)} is not available with {_said(a)}: {instead}")
    if model.keep_counts and model.threshold == "auto":  # (as calibrate: see EXCLUSIVE)
        raise NBSVMError(
            f"threshold='auto' (--threshold auto) is not available with {_said('keep_counts')}: "
            "a model with tuned thresholds cannot be continued; tune the continued model's"
        )
    if model.keep_counts and model.backend_learner is not None:
        raise NBSVMError(
            "keep_counts keeps the counts to continue training (--init, partial_fit), which "
            f"is for the built-in learner: learner {model.learner!r} keeps its own state"
        )


def run_mode(
    model: NBSVMClassifier,
    name: str,
    docs: Documents,
    lexicon: NBLexicon | None,
    kept: KeptCache | ReadyCache | None,
    checkpoint: Checkpoint | None,
    callback: Callback | None,
    max_memory: MemoryLimit | None,
) -> None:
    """Train ``model`` in mode ``name`` (see the module docstring)."""
    model.validate()
    check_modes(model)
    why, runner = MODES[name]
    if lexicon is not None or kept is not None or checkpoint is not None:
        raise NBSVMError(
            f"{name} {why}: give the documents, not a lexicon, a kept cache or a checkpoint"
        )
    runner(model, docs, FitRun(callback, max_memory))
