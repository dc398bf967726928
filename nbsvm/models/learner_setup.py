"""What the fit engine derives from an NBSVM model's settings (:mod:`nbsvm.models.fitting`,
``partial_fit``, ``--init``, loading): the class weights, the built-in learner these
settings make, label codes and each output's positive class in a cache, and the epoch
driver. Functions of the model, not methods: the estimator stays its parameters, its
learned state and its public methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from nbsvm.data.batches import Batch
from nbsvm.data.cache import FeatureCache
from nbsvm.errors import NBSVMError
from nbsvm.io.labels import label_set, membership
from nbsvm.learners.epochs import Epochs
from nbsvm.learners.reduction import NBReduction
from nbsvm.learners.sgd import LinearSGD

if TYPE_CHECKING:
    from nbsvm.models.nbsvm import NBSVMClassifier


def class_weights(model: NBSVMClassifier) -> np.ndarray | None:
    """Each class's weight (``class_weight``; ``balanced``: ``n / (K n_c)`` from the
    training counts, scikit-learn's formula), or None."""
    cw = model.class_weight
    if cw is None:
        return None
    classes = list(model.class_names_)
    if isinstance(cw, str):  # "balanced" (validate allows nothing else)
        counts = np.asarray(model.class_counts_, dtype=np.float64)
        # counts are sums of weights, which may be below 1: only an empty class (no
        # document to weigh) is left at 1
        weights = np.ones(len(classes))
        seen = counts > 0
        weights[seen] = counts.sum() / (len(classes) * counts[seen])
        return weights
    # a key equal to a class's value names it (1.0 or np.float64(1) for a class fitted
    # on 1), as scikit-learn's dict lookup does
    named = dict(zip(model.class_names_of(list(cw)), map(float, cw.values())))
    unknown = sorted(set(named) - set(classes))
    if unknown:
        raise NBSVMError(
            f"class_weight names {', '.join(map(repr, unknown))}, not a class "
            f"of the training data; the classes are {', '.join(classes)}"
        )
    return np.array([named.get(c, 1.0) for c in classes])


def output_weights(model: NBSVMClassifier) -> np.ndarray | None:
    """The learner's ``(positive, negative)`` weights per output: two classes, those of
    ``classes_[1]`` and ``classes_[0]``; one against the rest and multi-label, the
    class's own and 1 for the rest (as scikit-learn's SGDClassifier and liblinear
    weigh one-vs-rest); a multi-class loss, the class's own."""
    w = class_weights(model)
    if w is None:
        return None
    if model.binary_task():
        return np.array([[w[1], w[0]]])
    return np.column_stack([w, np.ones_like(w)])


def positive_codes(model: NBSVMClassifier) -> list[int]:
    return [1] if model.n_outputs() == 1 else list(range(len(model.class_names_)))


def new_linear(model: NBSVMClassifier, classes: list, n_columns: int) -> LinearSGD:
    """The built-in learner these settings train for ``classes`` over ``n_columns``
    (feature values and weights zero); with a backend learner, the feature values alone."""
    eta0 = model.setting("eta0", classes)
    eta0 = getattr(model, "eta0_", None) if eta0 == "auto" else eta0
    # the task the arrays are for (prediction.check_fitted refuses set_params changing it)
    model.fitted_multilabel_ = bool(model.multilabel)
    # and the class weights its steps and its NB prior (read as it predicts) weighed by
    cw = model.class_weight
    model.fitted_class_weight_ = dict(cw) if isinstance(cw, dict) else cw
    return LinearSGD(
        n_columns,
        n_outputs=model.n_outputs(classes),
        loss=model.setting("loss", classes),
        optimizer=model.setting("optimizer", classes),
        eta0=eta0 or 1.0,
        lam=model.setting("lam", classes),
        threads=model.threads,
        unit=model.setting("norm", classes) == "l2",
        values_only=model.backend_learner is not None,  # the backend keeps the weights
    )


def codes_for(model: NBSVMClassifier, labels: list, batch: Batch | None = None) -> np.ndarray:
    """Map label strings to class indices, naming the first document with an unknown one."""
    index = {c: i for i, c in enumerate(model.class_names_)}
    out = np.empty(len(labels), dtype=np.int32)
    for i, label in enumerate(labels):
        code = index.get(label)
        if code is None:
            where = batch.where(i) if batch is not None else {}
            if label is None:
                raise NBSVMError("document has no label", **where)
            raise NBSVMError(
                f"unknown label {label!r}; the model knows {model.class_names_}", **where
            )
        out[i] = code
    return out


def check_labels(model: NBSVMClassifier, labels: list, first_seen: list) -> None:
    """Raise, naming where it was first seen, if a label is not one of ``classes_``."""
    for label, where in zip(labels, first_seen):
        if label not in model.class_names_:
            raise NBSVMError(
                f"unknown label {label!r}; the model knows {model.class_names_}", **(where or {})
            )


def targets_in(model: NBSVMClassifier, cache: FeatureCache) -> np.ndarray | list[int]:
    """Each output's positive class as a code of the cache (-1: absent from the data)."""
    if model.multilabel:  # codes are label sets: a membership matrix
        for key, where in zip(cache.labels, cache.first_seen):
            check_labels(model, list(label_set(key)), [where] * len(label_set(key)))
        return membership(model.class_names_, list(cache.labels))
    check_labels(model, cache.labels, cache.first_seen)
    code = {label: i for i, label in enumerate(cache.labels)}
    return [code.get(model.class_names_[k], -1) for k in positive_codes(model)]


def epochs_for(model: NBSVMClassifier, notify: Callable[[dict], None]) -> Epochs:
    """The epoch driver of this model's learner (the built-in one, or the backend's)."""
    return Epochs(
        model.linear_,
        getattr(model, "backend_", None) if model.backend_learner else None,
        model.setting("epochs"),
        notify,
    )


def new_backend(model: NBSVMClassifier) -> NBReduction:
    """The backend learner(s) ``learner`` names, over the columns of ``model.linear_``
    (its feature values), with the model's ``lam`` and seed."""
    return NBReduction(
        cast(str, model.backend_learner),
        model.linear_.n_outputs,
        model.linear_.n_features,
        model.setting("lam"),
        model.seed,
    )
