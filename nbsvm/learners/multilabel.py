"""Multi-label linear SVM by SGD, as in the Sol toolkit (Fendrich 2012, eq. 12-13; after
Elisseeff & Weston 2001): one hinge per label with indicators in {-1, +1}.

Sol packed a label set into a 32-bit integer and so allowed at most 32 labels; here the
labels are a ``(n, n_labels)`` matrix of +-1, so any number works. Memory grows linearly
with the labels: the weights are a dense ``(n_labels, n_features)`` float64 array (8 bytes
per label and feature), twice that with averaging. With a hashed feature space
``n_features = 2**n_bits``, so 150 labels over 2**18 buckets take 300 MiB (600 MiB
averaged): use fewer bits for many labels.

``y`` comes in three forms (:func:`target_form`), all trained the same way: label sets (the
command line's), scikit-learn's 0/1 indicator matrix, or one label per example.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbsvm.compat import InputError
from nbsvm.errors import NBSVMError
from nbsvm.learners.kernels import multi as K
from nbsvm.learners.multiclass import HingeOutputs
from nbsvm.learners.targets import Labels, unique_labels

# the forms of y (``y_form_``; a learner fitted on label sets has no ``y_form_``, as before
# the other forms existed, so that its model file is unchanged)
FORMS = ("sets", "indicator", "labels")


def target_form(y: Any) -> str:
    """How a multi-label ``y`` is given:

    - ``"indicator"``: scikit-learn's multi-label convention, a 2-D ``(n, n_labels)``
      matrix of 0/1 (an array, a DataFrame, a scipy.sparse matrix, or lists of equal length
      holding only 0 and 1, as scikit-learn reads them);
    - ``"labels"``: a 1-d sequence of scalar labels (one per example; a column vector too);
    - ``"sets"``: anything else, a sequence of label sets (lists, tuples, sets of labels).

    A 2-D array of numbers other than 0/1 is refused (scikit-learn's multi-class
    multi-output, not supported); the same numbers as lists are label sets.

    Examples
    --------
    >>> target_form([["a"], ["a", "b"]]), target_form([("a",), ("b",)])
    ('sets', 'sets')
    >>> target_form(np.array([[0, 1], [1, 1]])), target_form([[0, 1], [1, 1]])
    ('indicator', 'indicator')
    >>> target_form(["a", "b"]), target_form(np.array([[3], [1]]))
    ('labels', 'labels')
    """
    if hasattr(y, "tocsr"):  # scipy.sparse (scipy not imported)
        return "indicator"
    try:
        a = np.asarray(y)
    except (ValueError, TypeError):  # ragged: label sets of several sizes
        return "sets"
    if a.ndim == 1:
        if a.dtype != object:
            return "labels"
        scalar = all(isinstance(v, (str, bytes)) or not hasattr(v, "__iter__") for v in a)
        return "labels" if scalar else "sets"
    if a.ndim != 2 or a.shape[1] == 0 or a.dtype.kind not in "biuf":
        return "sets"
    array = hasattr(y, "ndim")  # an array or a DataFrame, not lists
    if a.shape[1] == 1:
        return "labels" if array else "sets"  # a column vector (warned, raveled)
    if np.isin(a, (0, 1)).all():
        return "indicator"
    if array:
        raise InputError(
            "Multi-label y must be a 0/1 indicator matrix: got a 2-D y with "
            "other values (multi-class multi-output is not supported)"
        )
    return "sets"


class MultilabelHinge(HingeOutputs):
    """Multi-label classifier: per label ``l`` the hinge ``max(0, 1 - I_l (w_l.x + b_l))``
    (``I_l = +1`` if the example has label ``l``, else ``-1``) plus ``lam/2 sum ||w_l||^2``.

    Step t: all weights shrink by ``1 - eta lam``; every violated label moves
    ``w_l += eta I_l x``, ``b_l += eta I_l``. The progress line's ``mistakes`` counts wrong
    labels (Hamming errors).

    ``y`` may be given three ways (:func:`target_form`), each with its own ``predict``:

    - label sets (``[["a"], ["a", "b"], []]``): ``classes_`` are the labels' names
      (strings) and ``predict`` returns, per example, the tuple of labels with a positive
      score;
    - a 0/1 indicator matrix ``(n, n_labels)`` (scikit-learn's multi-label convention):
      ``classes_`` are ``0 .. n_labels - 1`` and ``predict`` returns an int64 indicator
      matrix;
    - one label per example (1-d): each example has that one label; ``classes_`` keep the
      labels' type and ``predict`` returns the highest-scoring label, as a multi-class
      classifier (``decision_function`` is then ``(n,)`` for two classes, the second's
      score minus the first's).

    The same labels in any form train the same weights.

    Parameters
    ----------
    lam, schedule, eta0, fit_intercept, average, epochs, seed, dtype
        As in :class:`~nbsvm.learners.multiclass.MulticlassHinge`, with a bias per label
        (the weight of a constant input 1, penalized like the others). The schedule is
        'optimal' by default, as there: the average of Pegasos' iterates kept its first
        huge steps (micro-F1, Pegasos against 'optimal': RCV1 CCAT as one label 0.748
        against 0.896, 20 Newsgroups TF-IDF top,group 0.258 against 0.680, iris 0.500
        against 0.762, scikit-learn's make_multilabel_classification 0.498 against 0.590;
        NB features on text keep Pegasos, nbsvm.learners.reduction.ON_TEXT).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    >>> m = MultilabelHinge(lam=0.1, epochs=30).fit(X, [["a"], ["b"], ["a", "b"], []])
    >>> m.predict(X)
    [('a',), ('b',), ('a', 'b'), ()]
    >>> Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    >>> MultilabelHinge(lam=0.1, epochs=30).fit(X, Y).predict(X).tolist()
    [[1, 0], [0, 1], [1, 1], [0, 0]]
    """

    task = "multilabel"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = True  # one label per example: multi-class
        return tags

    def _pass(self, rows, y, order):
        lam, schedule, eta0 = self._sgd_settings()
        return self._epoch(
            K._per_label_epoch,
            rows,
            y,
            order,
            K.RULE_SGD,
            1.0,
            lam,
            schedule,
            eta0,
            bool(self.fit_intercept),
        )

    # ---- the forms of y ---------------------------------------------------------------
    def _form(self) -> str:
        """The form of ``y`` this learner was fitted on (label sets unless told)."""
        form = getattr(self, "y_form_", "sets")
        if form not in FORMS:
            raise NBSVMError(f"bad y_form_ {form!r}; known: {', '.join(FORMS)}")
        return form

    def _targets(self, y, n_rows: int):
        if y is None:
            return super()._targets(y, n_rows)
        form = target_form(y)
        if hasattr(self, "n_features_in_") and form != self._form():
            raise InputError(
                f"y is given as {form} but {type(self).__name__} was fitted on {self._form()}"
            )
        if form == "labels":
            return self._target_array(y, n_rows)
        if form == "indicator":
            Y = np.asarray(y.toarray() if hasattr(y, "toarray") else y)
            if len(Y) != n_rows:
                raise InputError(
                    f"{n_rows} rows but {len(Y)} labels: X and y have "
                    "inconsistent numbers of samples"
                )
            return Y
        return super()._targets(y, n_rows)

    def _set_classes(self, y, classes=None):
        form = target_form(y)
        if form == "sets":
            return super()._set_classes(y, classes)
        self.y_form_ = form
        if form == "labels":
            self.classes_ = unique_labels(classes if classes is not None else y)
            return
        if classes is not None and list(classes) != list(range(y.shape[1])):
            raise InputError(
                f"an indicator y's classes are its columns 0..{y.shape[1] - 1}, "
                f"got {list(classes)[:5]}"
            )
        self.classes_ = Labels(range(y.shape[1]))

    def _encode(self, y) -> np.ndarray:
        form = self._form()
        if form == "indicator":
            if y.shape[1] != len(self.classes_):
                raise InputError(
                    f"y has {y.shape[1]} labels, but {type(self).__name__} has {len(self.classes_)}"
                )
            return np.where(y != 0, 1, -1).astype(np.int8)
        if form == "labels":
            codes = self._codes(y)
            Y = -np.ones((len(codes), len(self.classes_)), dtype=np.int8)
            Y[np.arange(len(codes)), codes] = 1
            return Y
        return super()._encode(y)

    def _decision(self, X) -> np.ndarray:
        s = super()._decision(X)
        if self._form() == "labels" and s.shape[1] == 2:
            return s[:, 1] - s[:, 0]
        return s

    def predict(self, X: Any) -> Any:
        """Per example: the tuple of labels with a positive score (label sets), the 0/1
        row of them (indicator matrix) or the highest-scoring label (one label each)."""
        form = self._form()
        if form == "sets":
            return super().predict(X)
        self._check_fitted()
        s = self._scores(self._rows(X, reset=False))
        if form == "indicator":
            return (s > 0).astype(np.int64)
        return self._class_values()[np.argmax(s, axis=1)]

    def score(self, X: Any, y: Any) -> float:
        """Accuracy: of exact label sets (or indicator rows), or of the one label."""
        form = self._form()
        if form == "sets":
            return super().score(X, y)
        predicted = self.predict(X)
        truth = self._targets(y, len(predicted))
        if form == "indicator":
            if truth.shape != predicted.shape:
                raise InputError(f"y has shape {truth.shape}, predictions {predicted.shape}")
            return float(np.mean(np.all(predicted == (truth != 0), axis=1)))
        return self._accuracy(predicted, truth)
