"""Scorers: the report of an evaluation summed batch by batch, in bounded memory.

:class:`_Scorer` accumulates a single-label model's confusion matrix, log loss (exactly,
whatever the batching), ROC AUC and expected calibration error; :class:`_LabelSetScorer` a multi-label model's sums for
:func:`~nbsvm.evaluation.metrics.multilabel_report`, mergeable across shards. True labels
the model does not know count as errors. :func:`headline` is a report's one figure.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.data.batches import Batch
from nbsvm.errors import NBSVMError
from nbsvm.evaluation.metrics import (
    AUCHistogram,
    add_sums,
    confusion_matrix,
    multilabel_counts,
    multilabel_report,
    report,
    unseen_key,
)
from nbsvm.evaluation.results import Report
from nbsvm.io.document import Document
from nbsvm.io.labels import label_set
from nbsvm.io.readers import LabelSpellings
from nbsvm.learners.calibrator import ReliabilityHistogram

if TYPE_CHECKING:  # the estimator is above: it is only passed in
    from nbsvm.models.nbsvm import NBSVMClassifier


class _Scorer:
    """Accumulates the confusion matrix and log loss batch by batch.

    True labels the model does not know (``unseen``) are errors whatever is predicted:
    each gets a row of the confusion matrix and a class of the report (recall 0), and the
    log loss is the mean over the documents of known labels (it has no value for others).
    """

    def __init__(
        self,
        model: NBSVMClassifier,
        scores_out: list | None = None,
        correct_out: list | None = None,
    ):
        self.model = model
        self.scores_out = scores_out  # (true codes, scores) per batch, if a list
        self.correct_out = correct_out  # whether each document was right, per batch
        k = len(model.class_names_)
        self.index = {c: i for i, c in enumerate(model.class_names_)}
        self.cm = np.zeros((k, k), dtype=np.int64)
        self.unseen: dict = {}  # label -> predictions per model class
        # an unknown label written as a class is (case, NFC/NFD, an invisible character)
        self.spellings = LabelSpellings(model.class_names_)
        self.has_proba = model.has_proba()
        self.auc = AUCHistogram(model.n_outputs())  # ROC AUC, in bounded memory
        self.reliability = ReliabilityHistogram()  # expected calibration error
        self._partials: list[float] = []  # exact running sum (Shewchuk), see _add
        self.n = 0
        self.n_known = 0

    def _add(self, terms: list[float]) -> None:
        """Add ``terms`` exactly (Shewchuk's partials, as :func:`math.fsum` keeps them), so
        the total does not depend on how documents were batched."""
        partials = self._partials
        for x in terms:
            i = 0
            for y in partials:
                if abs(x) < abs(y):
                    x, y = y, x
                hi = x + y
                lo = y - (hi - x)
                if lo:
                    partials[i] = lo
                    i += 1
                x = hi
            partials[i:] = [x]

    def codes(self, batch: Batch) -> np.ndarray:
        """The batch's true class indices; -1 for a label the model does not know (a
        document without a label is an error naming it)."""
        out = np.empty(len(batch), dtype=np.int32)
        for i, label in enumerate(batch.labels):
            code = self.index.get(label)
            if code is None:
                if label is None:
                    raise NBSVMError("document has no label", **batch.where(i))
                code = -1
            out[i] = code
        return out

    def add_labelled(self, batch: Batch, columns: bool = False) -> None:
        """Score ``batch`` against its own labels (class names)."""
        self.add(batch, self.codes(batch), columns)

    def add(self, batch: Batch, truth: np.ndarray, columns: bool = False, names=None, places=None):
        """Score ``batch`` against ``truth`` (class indices, -1: a label the model does not
        know); ``names``: the label of each of ``batch.labels`` when they are codes,
        ``places``: where each was first seen (a cache's ``first_seen``)."""
        scores = self.model.decision_batch(batch, columns=columns)
        pred = np.array([self.index[c] for c in self.model.labels_of(scores)], dtype=np.int32)
        known = truth >= 0
        if self.correct_out is not None:  # in document order; an unseen label is an error
            self.correct_out.append(known & (pred == np.where(known, truth, -1)))
        if not known.all():
            k = len(self.model.class_names_)
            for i in np.flatnonzero(~known):
                label = batch.labels[i] if names is None else names[batch.labels[i]]
                place = batch.where(int(i)) if places is None else places[batch.labels[i]]
                self.spellings.see(Document(label, "", **_where(place)))
                label = unseen_key(label, self.unseen)
                row = self.unseen.setdefault(label, np.zeros(k, dtype=np.int64))
                row[pred[i]] += 1
            truth, pred, scores = truth[known], pred[known], scores[known]
        self.cm += confusion_matrix(truth, pred, len(self.model.class_names_))
        self.auc.add(scores, truth, binary=self.model.n_outputs() == 1)
        if self.scores_out is not None:
            self.scores_out.append((np.asarray(truth, dtype=np.int32), scores))
        if self.has_proba and len(truth):
            proba = self.model.proba_of(scores)
            self.reliability.add_proba(proba, truth, multilabel=False, predicted=pred)
            p_true = np.clip(proba[np.arange(len(truth)), truth], 1e-15, 1.0)
            self._add((-np.log(p_true)).tolist())
        self.n += len(batch)
        self.n_known += len(truth)

    def parts(self) -> dict:
        """What the report is made of, to be summed with other shards' (:meth:`merge`):
        counts, histograms and the exact partial sums of the log loss."""
        return {
            "cm": self.cm,
            "unseen": dict(self.unseen),
            "partials": list(self._partials),
            "auc": (self.auc.pos, self.auc.neg),
            "reliability": self.reliability.arrays(),
            "n": self.n,
            "n_known": self.n_known,
        }

    def merge(self, parts: dict) -> None:
        """Add another scorer's :meth:`parts` (documents of another shard): the unseen
        labels by name, so that each shard's order of them does not matter."""
        self.cm += parts["cm"]
        for label, row in parts["unseen"].items():
            self.unseen[label] = self.unseen.get(label, 0) + row
        self._add(parts["partials"])
        self.auc.pos += parts["auc"][0]
        self.auc.neg += parts["auc"][1]
        self.reliability.merge(parts["reliability"])
        self.n += parts["n"]
        self.n_known += parts["n_known"]

    def report(self) -> dict:
        if self.n == 0:
            raise NBSVMError("no documents to evaluate")
        rep = report(self.cm, list(self.model.class_names_), unseen=self.unseen)
        if self.has_proba and self.n_known:
            rep["log_loss"] = float(math.fsum(self._partials) / self.n_known)
            rep["ece"] = self.reliability.ece()
            rep["reliability"] = self.reliability.table()
        areas = self.auc.auc()
        if len(areas) == 1:
            if areas[0] is not None:
                rep["roc_auc"] = areas[0]
        else:  # one against the rest, for each class that has both sides
            for c, a in zip(self.model.class_names_, areas):
                if a is not None:
                    rep["per_class"][c]["roc_auc"] = a
            known = [a for a in areas if a is not None]
            if known:
                rep["macro_roc_auc"] = float(np.mean(known))
        if self.unseen:
            rep["unseen_labels"] = {label: int(row.sum()) for label, row in self.unseen.items()}
        return Report(rep)


class _LabelSetScorer:
    """A multi-label model's :class:`_Scorer`: sums for
    :func:`~nbsvm.evaluation.metrics.multilabel_report` batch by batch.

    A true label the model does not know is a label of the report never predicted (each
    document holding it has a false negative, and its set cannot be exactly right).
    """

    def __init__(self, model: NBSVMClassifier):
        self.model = model
        self.index = {c: i for i, c in enumerate(model.class_names_)}
        self.sums: dict | None = None
        self.unseen: dict = {}  # label -> documents holding it
        self.spellings = LabelSpellings(model.class_names_)  # as _Scorer's
        self.parsed: dict = {}  # key -> (known label indices, unknown labels)
        self.n = 0

    def _parse(self, key: str) -> tuple[list, list]:
        """A label field's known outputs and unknown labels, parsed once per distinct key
        (a corpus has few label sets and many documents)."""
        found = self.parsed.get(key)
        if found is None:
            labels = label_set(key)
            found = (
                [self.index[v] for v in labels if v in self.index],
                [v for v in labels if v not in self.index],
            )
            self.parsed[key] = found
        return found

    def add_labelled(self, batch: Batch, columns: bool = False) -> None:
        """Score ``batch`` against its own labels (label-set keys)."""
        self.add(batch, batch.labels, columns)

    def add(self, batch: Batch, keys: list, columns: bool = False):
        """Score ``batch`` against ``keys``, each document's label field (``"a,b"``)."""
        scores = self.model.decision_batch(batch, columns=columns)
        truth = np.zeros(scores.shape, dtype=bool)
        missing = np.zeros(len(keys), dtype=np.int64)  # unknown true labels per document
        for i, key in enumerate(keys):
            if key is None:
                raise NBSVMError("document has no label", **batch.where(i))
            known, unknown = self._parse(key)
            truth[i, known] = True
            missing[i] = len(unknown)
            for label in unknown:
                self.spellings.see(Document(label, "", **_where(batch.where(i))))
                label = unseen_key(label, self.unseen)
                self.unseen[label] = self.unseen.get(label, 0) + 1
        predicted = self.model.label_mask(scores)
        part = multilabel_counts(truth, predicted)
        part["wrong"] += int(missing.sum())
        part["exact"] -= int(((truth == predicted).all(axis=1) & (missing > 0)).sum())
        self.sums = add_sums(self.sums, part)
        self.n += len(batch)

    def parts(self) -> dict:
        """What the report is made of, to be summed with other shards' (:meth:`merge`)."""
        return {"sums": self.sums, "unseen": dict(self.unseen), "n": self.n}

    def merge(self, parts: dict) -> None:
        if parts["n"]:
            self.sums = add_sums(self.sums, parts["sums"])
        for label, n in parts["unseen"].items():
            self.unseen[label] = self.unseen.get(label, 0) + n
        self.n += parts["n"]

    def report(self) -> dict:
        if self.n == 0:
            raise NBSVMError("no documents to evaluate")
        assert self.sums is not None  # every batch (n > 0: one at least) added its sums
        sums, classes = dict(self.sums), list(self.model.class_names_)
        if self.unseen:
            u = len(self.unseen)
            sums["tp"] = np.concatenate([sums["tp"], np.zeros(u, dtype=np.int64)])
            sums["fp"] = np.concatenate([sums["fp"], np.zeros(u, dtype=np.int64)])
            sums["fn"] = np.concatenate([sums["fn"], list(self.unseen.values())])
            classes += list(self.unseen)
        rep = multilabel_report(sums, classes)
        if self.unseen:
            rep["unseen_labels"] = dict(self.unseen)
        return Report(rep)


def _where(place: dict) -> dict:
    """A document's ``{"path", "line"}`` as :class:`Document` names them."""
    return {"source": place.get("path") or "<input>", "line": place.get("line") or 0}


def headline(rep: dict) -> float:
    """A report's one figure: accuracy (multi-label: subset accuracy)."""
    return rep["accuracy"] if "accuracy" in rep else rep["subset_accuracy"]
