"""Training with a validation part and early stopping (``early_stopping``, ``train --valid``),
as scikit-learn's SGDClassifier spells it: a seeded, stratified ``validation_fraction`` of the
training documents (at most :data:`~nbsvm.models.calibrate.MAX_HELD_OUT`) is held out, the
model trains on the rest, and after each epoch its accuracy on the held-out part is measured;
training stops when it has not improved for ``n_iter_no_change`` epochs, and the weights of
the best epoch are kept (a copy of the learner's state: memory as the model's).

The held-out documents are hashed into the model's columns once, into a feature cache on
disk, when the columns are known; nothing else is kept. The NB lexicon is counted on the
training part only, so no held-out document shapes the features it is scored with.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nbsvm.data.batches import hash_batches
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.errors import NBSVMError, NoDocuments
from nbsvm.evaluation.heldout import accuracy_now
from nbsvm.io.document import rereadable
from nbsvm.models.calibrate import check_seen, split
from nbsvm.models.fitting import Fit

if TYPE_CHECKING:
    from nbsvm.models._types import Documents
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.models.run import FitRun


class EarlyStopping:
    """Called after every epoch (:meth:`after_epoch`): scores the held-out part, keeps the
    best state, says when to stop; :meth:`restore` puts the best state back (before the
    trainer computes the mean weight and names the strongest buckets)."""

    def __init__(self, model, held_docs: Callable, patience: int, notify):
        self.model, self.held_docs, self.patience = model, held_docs, patience
        self.notify = notify
        self.folder = Path(tempfile.mkdtemp(prefix="nbsvm-valid-", dir=model.cache_dir))
        self.cache: FeatureCache | None = None
        self.best, self.best_epoch = -1.0, 0
        self.saved: tuple | None = None
        self.history: dict[int, float] = {}
        self.seconds = 0.0

    def _hash(self) -> FeatureCache:
        """Hash the held-out documents into ``self.cache`` (once); return it."""
        model = self.model
        with CacheWriter(self.folder / "valid", model.hasher_) as writer:
            for batch in hash_batches(self.held_docs(), model.hasher_, remap=model.column_of_):
                for i, label in enumerate(batch.labels):
                    check_seen(model, label, "--valid", **batch.where(i))
                writer.add(batch)
            cache = self.cache = writer.close()
        if cache.n_docs == 0:
            raise NBSVMError(
                "early stopping held out no documents: the training data is too "
                "small for the validation fraction"
            )
        weights = cache.weights(0, cache.n_docs) if cache.weighted else None
        if weights is not None and not model.multilabel and not weights.sum() > 0:
            # (weighted accuracy counts weights: of none at all, every epoch scored 0)
            raise NBSVMError(
                f"early stopping held out {cache.n_docs} documents, all of weight 0, which "
                "count nowhere: nothing to score the epochs by; hold out more "
                "(validation_fraction, --valid) or give those documents weight"
            )
        return cache

    def after_epoch(self, epoch: int, epochs: int) -> bool:
        """Score epoch ``epoch``; True to stop training now."""
        t0 = time.perf_counter()
        cache = self.cache if self.cache is not None else self._hash()
        accuracy = accuracy_now(self.model, cache, columns=True, weighted=True)
        self.history[epoch] = accuracy
        improved = accuracy > self.best
        if improved:
            learner = self.model.linear_
            self.best, self.best_epoch = accuracy, epoch
            # a backend learner keeps its weights in backend_: copied whole
            backend = (
                copy.deepcopy(self.model.backend_)
                if self.model.backend_learner is not None
                else None
            )
            self.saved = (learner.S_[:, :, 1:].copy(), learner.state_.copy(), backend)
        stop = epoch - self.best_epoch >= self.patience and epoch < epochs
        self.seconds += time.perf_counter() - t0
        self.notify(
            {
                "stage": "validation",
                "docs": 0,
                "epoch": epoch,
                "epochs": epochs,
                "accuracy": accuracy,
                "best_epoch": self.best_epoch,
                "stop": stop,
            }
        )
        return stop

    def restore(self) -> None:
        """Put the best epoch's weights back (the trainer calls it after the last epoch)."""
        if self.saved is not None:
            learner = self.model.linear_
            learner.S_[:, :, 1:] = self.saved[0]
            learner.state_[:] = self.saved[1]
            if self.saved[2] is not None:
                self.model.backend_ = self.saved[2]
            self.saved = None

    def finish(self) -> dict:
        """The best epoch's weights in place; what happened, for ``model.validation_``."""
        self.restore()
        return {
            "best_epoch": self.best_epoch,
            "accuracy": self.best,
            "epochs_run": max(self.history, default=0),
            "history": {str(k): v for k, v in self.history.items()},
            "held_out": int(self.cache.n_docs) if self.cache is not None else 0,
            "seconds": round(self.seconds, 3),
        }

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def fit_early_stopping(model: NBSVMClassifier, docs: Documents, run: FitRun) -> dict:
    """``model.fit_documents(docs)`` with ``early_stopping`` (see the module docstring);
    returns what :meth:`EarlyStopping.finish` says (also ``model.validation_``)."""

    reread = rereadable(docs)
    fraction, seed = float(model.validation_fraction), model.seed
    stopper = EarlyStopping(
        model,
        lambda: split(reread(), seed, True, fraction, multilabel=model.multilabel),
        int(model.n_iter_no_change),
        run.notify,
    )
    try:
        Fit(model, None, run.callback, run.max_memory, warm={"after_epoch": stopper}).run(
            split(reread(), seed, False, fraction, multilabel=model.multilabel)
        )
        model.validation_ = stopper.finish()
    except NoDocuments:
        raise NoDocuments(
            f"no training documents: validation_fraction {fraction:g} (--valid) held out "
            "every one; hold out less"
        ) from None
    finally:
        stopper.close()
    return model.validation_
