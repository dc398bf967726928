"""What the trainers ask of an NBSVM model being fitted (:mod:`nbsvm.models.fitting`,
``partial_fit``, Dask): adopting counted columns, the built-in learner these settings make,
label codes and each output's positive class in a cache, and the epoch driver."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.data.batches import Batch
from nbsvm.data.cache import FeatureCache
from nbsvm.errors import NBSVMError
from nbsvm.io.labels import label_set, membership
from nbsvm.learners.epochs import Epochs
from nbsvm.learners.sgd import LinearSGD
from nbsvm.learners.targets import Labels
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.models.columns import ColumnBuilder, Columns

if TYPE_CHECKING:
    from nbsvm.text.hashing import Hasher


class TrainerHooksMixin:
    """The model's side of training (:class:`~nbsvm.NBSVMClassifier`)."""

    if TYPE_CHECKING:  # the parameters and methods of NBSVMClassifier
        alpha: float
        lam: float
        threads: int
        multilabel: bool
        class_weight: str | dict[Any, float] | None

        @property
        def backend_learner(self) -> str | None: ...

        def setting(self, name: str, classes: list | None = None) -> Any: ...

        def n_outputs(self, classes: list | None = None) -> int: ...

        def _hasher(self, words_only: bool = False) -> Hasher: ...

    def start_from_lexicon(self, lexicon: NBLexicon) -> None:
        """Take classes, counts and NB ratios from ``lexicon`` (weights zero), as a fit
        given that lexicon starts (Dask's trainer builds it across workers)."""
        self.adopt(
            ColumnBuilder(self, lexicon.hasher).from_lexicon(lexicon, None, alpha=self.alpha)
        )

    def adopt(self, columns: Columns) -> None:
        """Adopt what counting built (:mod:`nbsvm.models.columns`) as the learned state."""
        self.classes_, self.class_counts_ = Labels(columns.classes), columns.class_counts
        self.n_seen_buckets_ = columns.n_seen_buckets
        self.column_of_, self.linear_ = columns.column_of, columns.linear
        self.hasher_ = self._hasher()
        self.linear_.set_class_weight(self.output_weights())

    def class_weights(self) -> np.ndarray | None:
        """Each class's weight (``class_weight``; ``balanced``: ``n / (K n_c)`` from the
        training counts, scikit-learn's formula), or None."""
        cw = self.class_weight
        if cw is None:
            return None
        classes = list(self.classes_)
        if isinstance(cw, str):  # "balanced" (validate allows nothing else)
            counts = np.asarray(self.class_counts_, dtype=np.float64)
            return counts.sum() / (len(classes) * np.maximum(counts, 1.0))
        unknown = sorted(set(map(str, cw)) - set(classes))
        if unknown:
            raise NBSVMError(
                f"class_weight names {', '.join(map(repr, unknown))}, not a class "
                f"of the training data; the classes are {', '.join(classes)}"
            )
        named = {str(k): float(v) for k, v in cw.items()}
        return np.array([named.get(c, 1.0) for c in classes])

    def output_weights(self) -> np.ndarray | None:
        """The learner's ``(positive, negative)`` weights per output: two classes, those of
        ``classes_[1]`` and ``classes_[0]``; one against the rest and multi-label, the
        class's own and 1 for the rest (as scikit-learn's SGDClassifier and liblinear
        weigh one-vs-rest); a multi-class loss, the class's own."""
        w = self.class_weights()
        if w is None:
            return None
        if self.n_outputs() == 1:
            return np.array([[w[1], w[0]]])
        return np.column_stack([w, np.ones_like(w)])

    def positive_codes(self) -> list[int]:
        return [1] if self.n_outputs() == 1 else list(range(len(self.classes_)))

    def unit_rows(self) -> bool:
        """Whether documents are scaled to unit norm (``norm``, resolved for the classes)."""
        return self.setting("norm") == "l2"

    def new_linear(self, classes: list, n_columns: int) -> LinearSGD:
        """The built-in learner these settings train for ``classes`` over ``n_columns``
        (feature values and weights zero)."""
        eta0 = self.setting("eta0", classes)
        eta0 = getattr(self, "eta0_", None) if eta0 == "auto" else eta0
        return LinearSGD(
            n_columns,
            n_outputs=self.n_outputs(classes),
            loss=self.setting("loss", classes),
            optimizer=self.setting("optimizer", classes),
            eta0=eta0 or 1.0,
            lam=self.lam,
            threads=self.threads,
            unit=self.setting("norm", classes) == "l2",
        )

    def codes_for(self, labels: list, batch: Batch | None = None) -> np.ndarray:
        """Map label strings to class indices, naming the first document with an unknown one."""
        index = {c: i for i, c in enumerate(self.classes_)}
        out = np.empty(len(labels), dtype=np.int32)
        for i, label in enumerate(labels):
            code = index.get(label)
            if code is None:
                where = batch.where(i) if batch is not None else {}
                if label is None:
                    raise NBSVMError("document has no label", **where)
                raise NBSVMError(
                    f"unknown label {label!r}; the model knows {self.classes_}", **where
                )
            out[i] = code
        return out

    def check_labels(self, labels: list, first_seen: list) -> None:
        """Raise, naming where it was first seen, if a label is not one of ``classes_``."""
        for label, where in zip(labels, first_seen):
            if label not in self.classes_:
                raise NBSVMError(
                    f"unknown label {label!r}; the model knows {self.classes_}", **(where or {})
                )

    def targets_in(self, cache: FeatureCache):
        """Each output's positive class as a code of the cache (-1: absent from the data)."""
        if self.multilabel:  # codes are label sets: a membership matrix
            for key, where in zip(cache.labels, cache.first_seen):
                self.check_labels(list(label_set(key)), [where] * len(label_set(key)))
            return membership(self.classes_, list(cache.labels))
        self.check_labels(cache.labels, cache.first_seen)
        code = {label: i for i, label in enumerate(cache.labels)}
        return [code.get(self.classes_[k], -1) for k in self.positive_codes()]

    def epochs_for(self, notify) -> Epochs:
        """The epoch driver of this model's learner (the built-in one, or the backend's)."""
        return Epochs(
            self.linear_,
            getattr(self, "backend_", None) if self.backend_learner else None,
            self.setting("epochs"),
            notify,
        )
