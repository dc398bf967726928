"""An NBSVM model's learned state as arrays by bucket, and prediction: scores of hashed
batches (NB interpolation included), labels, label sets and probabilities, streamed in
batches so that memory does not grow with the input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nbsvm.config import BUCKET_DTYPE
from nbsvm.data.batches import Batch, hash_batch
from nbsvm.data.translate import check_ids, translate
from nbsvm.errors import NBSVMError, not_fitted
from nbsvm.io.document import Document
from nbsvm.io.frames import texts_and_labels
from nbsvm.io.labels import SEPARATOR, key_of, label_set
from nbsvm.learners.calibrator import sigmoid, softmax
from nbsvm.learners.losses import MULTICLASS_LOSSES, resolve_loss
from nbsvm.learners.sgd import STATE_DTYPE

if TYPE_CHECKING:
    from nbsvm.learners.reduction import NBReduction
    from nbsvm.learners.sgd import LinearSGD
    from nbsvm.learners.targets import Labels
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.text.hashing import Hasher


def _check_columns(batch: Batch, n_columns: int) -> None:
    """Offsets non-decreasing within the ids and every id a column (one compiled pass)."""
    o = batch.offsets
    if o.shape[0] == 0 or o[0] != 0 or o[-1] > batch.ids.shape[0] or np.any(o[1:] < o[:-1]):
        raise NBSVMError("bad batch: offsets go backwards or beyond the ids")
    bad = check_ids(batch.ids, n_columns)
    if bad >= 0:
        raise NBSVMError(f"bad batch: column {int(batch.ids[bad])} outside [0, {n_columns})")


class PredictionMixin:
    """Learned arrays and prediction of :class:`~nbsvm.NBSVMClassifier`."""

    if TYPE_CHECKING:  # the parameters, learned state and methods of NBSVMClassifier
        beta: float
        interpolate: str
        learner: str | None
        multilabel: bool
        classes_: Labels
        class_counts_: np.ndarray
        n_docs_: int
        hasher_: Hasher
        linear_: LinearSGD
        column_of_: np.ndarray | None
        backend_: NBReduction
        mean_abs_coef_: np.ndarray

        @property
        def backend_learner(self) -> str | None: ...

        def setting(self, name: str, classes: list | None = None) -> Any: ...

        def n_outputs(self, classes: list | None = None) -> int: ...

        def unit_rows(self) -> bool: ...

        def class_weights(self) -> np.ndarray | None: ...

    # -- learned state (views of the learner's arrays) --------------------------------------
    def column_buckets(self) -> np.ndarray:
        """Bucket id of each learner column (sorted)."""
        if self.column_of_ is None:
            return np.arange(self.linear_.n_features, dtype=BUCKET_DTYPE)
        return np.flatnonzero(self.column_of_ >= 0).astype(BUCKET_DTYPE)

    def _dense(self, field: int) -> np.ndarray:
        out = np.zeros((self.linear_.n_outputs, 1 << self.hasher_.n_bits), dtype=STATE_DTYPE)
        out[:, self.column_buckets()] = self.linear_.S_[:, :, field]
        return out

    @property
    def coef_(self) -> np.ndarray:
        """Weights by bucket, shape ``(n_outputs, 2**n_bits)`` (a dense copy)."""
        self.check_fitted()
        self.linear_.coef()
        return self._dense(1)

    @property
    def ratios_(self) -> np.ndarray:
        """NB log-count ratios by bucket, shape ``(n_outputs, 2**n_bits)`` (a dense copy).

        These are the feature values: with ``weighting='binary'``, 1 on every kept bucket.
        """
        self.check_fitted()
        return self._dense(0)

    @property
    def intercept_(self) -> np.ndarray:
        self.check_fitted()
        return self.linear_.intercept()

    # -- prediction -----------------------------------------------------------------------
    def check_fitted(self):
        if "linear_" not in self.__dict__:
            raise not_fitted(self)

    def decision_batch(self, batch: Batch, columns: bool = False) -> np.ndarray:
        """Scores of a hashed batch, shape ``(n_docs, n_outputs)``.

        ``columns``: the batch holds model columns already (not bucket ids).
        """
        self.check_fitted()
        if not columns:
            batch = translate(batch, self.column_of_)
        else:  # columns from elsewhere: the kernels index the weights with them
            _check_columns(batch, self.linear_.n_features)
        if self.backend_learner is not None:
            scores = self.backend_.decision(
                self.linear_.S_[:, :, 0], batch.ids, batch.offsets, self.unit_rows()
            )
        else:
            scores = self.linear_.decision(batch.ids, batch.offsets)
        if self.beta == 1.0:
            return scores
        nb = self.linear_.table_sums(
            batch.ids, batch.offsets, unit=self.interpolate == "weights" and self.unit_rows()
        )
        if self.interpolate == "scores":
            prior = np.array([self._log_prior(k) for k in range(scores.shape[1])])
            return self.beta * scores + (1.0 - self.beta) * (prior + nb)
        # weights: sum_i r_i ((1-beta) mean|w| + beta w_i) + b
        b = self.linear_.intercept()
        return self.beta * (scores - b) + (1.0 - self.beta) * self.mean_abs_coef_ * nb + b

    def _log_prior(self, k: int) -> float:
        """The NB part's log prior odds of output ``k``, from the training counts (weighed
        by ``class_weight``, which reweighs the data the learner sees)."""
        counts = self.class_counts_.astype(np.float64)
        weights = self.class_weights() if not self.multilabel else None
        if self.n_outputs() == 1:  # both classes weighed, as the learner does
            if weights is not None:
                counts = counts * weights
            return float(np.log(counts[1] / counts[0]))
        # one against the rest: the class weighed, the rest at 1 (as output_weights)
        rest = (self.n_docs_ if self.multilabel else counts.sum()) - counts[k]
        mine = counts[k] * (weights[k] if weights is not None else 1.0)
        return float(np.log(max(mine, 0.5) / max(rest, 0.5)))

    def _batches(self, X) -> Iterator[Batch]:
        docs = [Document(None, text, "<input>", i + 1) for i, text in enumerate(X)]
        for start in range(0, len(docs), 4096):
            yield hash_batch(docs[start : start + 4096], self.hasher_)

    def decision_function(self, X, *, text_col: str = "text") -> np.ndarray:
        """Scores: shape ``(n,)`` for two classes (positive = ``classes_[1]``), else ``(n, K)``."""
        self.check_fitted()
        texts, _ = texts_and_labels(X, None, text_col, None)
        parts = [self.decision_batch(b) for b in self._batches(texts)]
        n_out = self.linear_.n_outputs
        scores = np.concatenate(parts) if parts else np.zeros((0, n_out))
        return scores[:, 0] if scores.shape[1] == 1 else scores

    @property
    def calibrator_(self):
        """The :class:`~nbsvm.learners.calibrator.Calibrator` fitted with ``calibrate``, or
        None."""
        return self.__dict__.get("_calibrator")

    @calibrator_.setter
    def calibrator_(self, value):
        self.__dict__["_calibrator"] = value

    def score_rows(self, scores) -> np.ndarray:
        """Scores as ``(n, n_outputs)`` float64: the width is the model's, never inferred,
        since ``reshape(n, -1)`` cannot infer it for an empty batch (``n == 0``)."""
        return np.asarray(scores, dtype=np.float64).reshape(len(scores), self.n_outputs())

    def label_mask(self, scores: np.ndarray) -> np.ndarray:
        """Multi-label: which labels each row of scores predicts, ``(n, K)`` bool (score
        above 0; calibrated probability above 0.5)."""
        if self.calibrator_ is not None:
            return self.proba_of(scores) > 0.5
        return self.score_rows(scores) > 0

    def labels_of(self, scores: np.ndarray) -> np.ndarray:
        """The predicted label of each row of scores (multi-label: the key ``"a,b"`` of the
        labels whose score is above 0, ``""`` for none)."""
        classes = np.asarray(self.classes_, dtype=object)
        if self.multilabel:
            return np.asarray(
                [SEPARATOR.join(classes[row]) for row in self.label_mask(scores)], dtype=object
            )
        if self.calibrator_ is not None:  # the class of the highest calibrated probability
            return classes[np.argmax(self.proba_of(scores), axis=1)]
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.ndim == 1:
            return classes[(scores > 0).astype(int)]
        return classes[np.argmax(scores, axis=1)]

    def has_proba(self, own: bool = False) -> bool:
        """Whether the model gives probabilities: calibrated ones, or the scores are
        probabilities' logits (the built-in learner with the log, modified Huber or softmax
        loss; the backend learners' margins are not). ``own``: leave the calibration out."""
        if self.calibrator_ is not None and not own:
            return True
        loss = self.setting("loss")
        return self.backend_learner is None and (
            loss == "softmax" or (loss not in MULTICLASS_LOSSES and resolve_loss(loss).has_proba)
        )

    def proba_of(self, scores: np.ndarray, own: bool = False) -> np.ndarray:
        """Class probabilities from scores, shape ``(n, K)``: calibrated ones, or the log,
        modified Huber and softmax losses' own (``own``: leave the calibration out)."""
        if len(scores) == 0:  # an empty batch: no rows, one column per class
            self._check_proba(own)
            return np.zeros((0, len(self.classes_)))
        if self.calibrator_ is not None and not own:
            return self.calibrator_.probabilities(scores)
        self._check_proba(own)
        loss = self.setting("loss")
        if loss == "softmax":
            return softmax(scores)
        if scores.ndim == 2 and scores.shape[1] == 1 and not self.multilabel:
            scores = scores[:, 0]
        if loss == "modified_huber":
            p = (np.clip(scores, -1, 1) + 1) / 2
        else:
            p = sigmoid(scores)
        if self.multilabel:  # each label on its own: no normalization
            return p.reshape(len(p), -1)
        if p.ndim == 1:
            return np.column_stack([1 - p, p])
        total = p.sum(axis=1, keepdims=True)
        return np.where(total > 0, p / np.where(total > 0, total, 1), 1.0 / p.shape[1])

    def _check_proba(self, own: bool = False) -> None:
        """Raise, saying why, when the model gives no probabilities (any batch size)."""
        if self.calibrator_ is not None and not own:
            return
        if self.backend_learner is not None:
            raise NBSVMError(f"learner {self.learner!r} gives margins, not probabilities")
        if not self.has_proba():
            raise NBSVMError(
                f"loss {self.setting('loss')!r} gives no probabilities; use "
                "'log', 'modified_huber' or 'softmax'"
            )

    def class_values(self, scores: np.ndarray) -> tuple[np.ndarray, str]:
        """One column per class, ``(n, K)``, of what ranks the classes, and its name:
        ``"probability"`` when the loss gives probabilities, else ``"score"`` (two classes:
        ``-s, s``)."""
        if self.has_proba():
            return self.proba_of(scores), "probability"
        scores = self.score_rows(scores)
        if scores.shape[1] == 1 and not self.multilabel:
            scores = np.column_stack([-scores[:, 0], scores[:, 0]])
        return scores, "score"

    def top_k_of(
        self, scores: np.ndarray, k: int | None = None, threshold: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, str]:
        """The ``k`` best classes of each row of scores (all of them for None), best first:
        ``(positions, values, kind)``, positions ``(n, k)`` into ``classes_`` and their
        probabilities (``kind`` ``"probability"``) or scores. With ``threshold``, a class
        whose value is below it has position -1 and value NaN."""
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise NBSVMError(f"k must be a positive whole number, got {k!r}")
        values, kind = self.class_values(scores)
        if threshold is not None:
            if not np.isfinite(threshold) or (
                kind == "probability" and not 0.0 <= threshold <= 1.0
            ):
                raise NBSVMError(
                    f"threshold is a {kind} for this model"
                    + (": between 0 and 1" if kind == "probability" else ": a finite number")
                    + f", got {threshold!r}"
                )
        k = values.shape[1] if k is None else min(int(k), values.shape[1])
        positions = np.argsort(-values, axis=1, kind="stable")[:, :k]
        best = np.take_along_axis(values, positions, axis=1)
        if threshold is not None:
            below = best < threshold
            positions = np.where(below, -1, positions)
            best = np.where(below, np.nan, best)
        return positions, best, kind

    def predict_top_k(
        self, X, k: int = 1, threshold: float | None = None, *, text_col: str = "text"
    ) -> list[list[tuple[str, float]]]:
        """Each document's ``k`` best classes, best first, with their probabilities (scores
        for losses without probabilities), as fastText's ``predict(text, k, threshold)``:
        ``[[(label, probability), ...], ...]``; with ``threshold``, only the classes at or
        above it."""
        positions, values, _ = self.top_k_of(
            self.decision_function(X, text_col=text_col), k, threshold
        )
        classes = self.classes_
        return [
            [(classes[j], float(v)) for j, v in zip(row, vals) if j >= 0]
            for row, vals in zip(positions, values)
        ]

    def predict(self, X, *, text_col: str = "text") -> np.ndarray:
        """Predicted labels: the values given to :meth:`fit`, also after :meth:`load`.

        Multi-label: an indicator matrix ``(n, len(classes_))`` of 0 / 1 (scikit-learn's
        form; :meth:`predict_label_sets` gives the label tuples)."""
        if self.multilabel:
            scores = self.score_rows(self.decision_function(X, text_col=text_col))
            return self.label_mask(scores).astype(np.int64)
        labels = self.labels_of(self.decision_function(X, text_col=text_col))
        values = getattr(self, "_label_values", None)
        if values:
            out = [values.get(v, v) for v in labels]
            kinds = {type(v) for v in out}
            return np.asarray(out, dtype=object if len(kinds) > 1 else None)
        return labels

    def predict_label_sets(self, X, *, text_col: str = "text") -> list[tuple[str, ...]]:
        """Multi-label: each document's predicted labels, as a sorted tuple."""
        if not self.multilabel:
            raise NBSVMError("predict_label_sets is for multi-label models; use predict")
        return [
            label_set(key) for key in self.labels_of(self.decision_function(X, text_col=text_col))
        ]

    def predict_proba(self, X, *, text_col: str = "text") -> np.ndarray:
        """Class probabilities, shape ``(n, len(classes_))`` (multi-label: each label's
        own probability; the rows do not sum to 1)."""
        return self.proba_of(self.decision_function(X, text_col=text_col))

    def score(self, X, y=None, *, text_col: str = "text", label_col: str = "label") -> float:
        """Accuracy on ``X``, ``y`` (labels compared as strings; multi-label: the share
        of documents whose whole label set is right, scikit-learn's subset accuracy)."""
        texts, labels = texts_and_labels(X, y, text_col, label_col)
        if self.multilabel:
            predicted = self.labels_of(self.decision_function(texts))
            return float(np.mean([p == key_of(t) for p, t in zip(predicted, labels)]))
        predicted = self.labels_of(self.decision_function(texts))
        return float(np.mean(predicted == np.asarray([str(v) for v in labels], dtype=object)))

    def evaluate(self, X, y=None, *, text_col: str = "text", label_col: str = "label"):
        """The report of ``nbsvm eval`` on ``X``, ``y`` (sequences, or a DataFrame and its
        column names): accuracy, log loss, ROC AUC, macro F1, per-class figures and the
        confusion matrix, as a :class:`~nbsvm.evaluation.results.Report` (a dict that shows
        itself in Jupyter; ``.frame()``, ``.per_class()``, ``.confusion()`` are DataFrames).
        Labels the model does not know count as errors."""
        from nbsvm.evaluation.evaluate import evaluate_documents
        from nbsvm.io.labels import key_of

        texts, labels = texts_and_labels(X, y, text_col, label_col)
        if self.multilabel:
            labels = [key_of(v) if not isinstance(v, str) else v for v in labels]
        docs = (
            Document(str(label), text, "<input>", i + 1)
            for i, (text, label) in enumerate(zip(texts, labels))
        )
        return evaluate_documents(cast("NBSVMClassifier", self), docs)

    # -- files ----------------------------------------------------------------------------
