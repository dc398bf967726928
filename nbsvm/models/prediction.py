"""An NBSVM model's learned state as arrays by bucket, and prediction: scores of hashed
batches (NB interpolation included), labels, label sets and probabilities, streamed in
batches so that memory does not grow with the input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nbsvm.config import BUCKET_DTYPE
from nbsvm.data.batches import Batch, hash_batch
from nbsvm.data.translate import check_ids, mapped_buckets, translate
from nbsvm.errors import NBSVMError, not_fitted
from nbsvm.io.document import Document
from nbsvm.io.frames import sample_weights, texts_and_labels
from nbsvm.io.labels import SEPARATOR
from nbsvm.learners.calibrator import Calibrator, sigmoid, softmax
from nbsvm.learners.losses import MULTICLASS_LOSSES, resolve_loss
from nbsvm.learners.sgd import STATE_DTYPE
from nbsvm.models.learner_setup import class_weights
from nbsvm.models.settings import unit_rows

if TYPE_CHECKING:
    from nbsvm.models._types import LabelValues, Texts
    from nbsvm.models.nbsvm import NBSVMClassifier


def _check_columns(batch: Batch, n_columns: int) -> None:
    """Offsets non-decreasing within the ids and every id a column (one compiled pass)."""
    o = batch.offsets
    if o.shape[0] == 0 or o[0] != 0 or o[-1] > batch.ids.shape[0] or np.any(o[1:] < o[:-1]):
        raise NBSVMError("bad batch: offsets go backwards or beyond the ids")
    bad = check_ids(batch.ids, n_columns)
    if bad >= 0:
        raise NBSVMError(f"bad batch: column {int(batch.ids[bad])} outside [0, {n_columns})")


def column_buckets(model: NBSVMClassifier) -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.column_buckets`."""
    if model.column_of_ is None:
        return np.arange(model.linear_.n_features, dtype=BUCKET_DTYPE)
    buckets, columns, in_order = mapped_buckets(model.column_of_)
    if in_order:
        return buckets.astype(BUCKET_DTYPE)
    of_column = np.empty(columns.size, dtype=BUCKET_DTYPE)
    of_column[columns] = buckets  # training lays the columns out hottest first
    return of_column


def _dense(model: NBSVMClassifier, by_column: np.ndarray) -> np.ndarray:
    """``(n_outputs, n_columns)`` values spread over the ``2**n_bits`` buckets (0 where no
    column)."""
    out = np.zeros((model.linear_.n_outputs, 1 << model.hasher_.n_bits), dtype=STATE_DTYPE)
    out[:, column_buckets(model)] = by_column
    return out


def _backend_parts(model: NBSVMClassifier, part: int) -> np.ndarray:
    """Each output's weights (``part`` 1) or bias (2) of the backend learner, which keeps
    them (the model's own state holds the feature values alone)."""
    tables = model.linear_.tables
    return np.array(
        [model.backend_.output_weights(k, tables)[part] for k in range(model.linear_.n_outputs)]
    )


def coef_(model: NBSVMClassifier) -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.coef_`."""
    check_fitted(model)
    if model.backend_learner is not None:
        return _dense(model, _backend_parts(model, 1))
    return _dense(model, model.linear_.coef())


def ratios_(model: NBSVMClassifier) -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.ratios_`."""
    check_fitted(model)
    return _dense(model, model.linear_.tables)


def intercept_(model: NBSVMClassifier) -> np.ndarray:
    check_fitted(model)
    if model.backend_learner is not None:
        return _backend_parts(model, 2).astype(np.float64)
    return model.linear_.intercept()


def check_fitted(model: NBSVMClassifier) -> None:
    """Raise unless the model is fitted, with the parameters its arrays were fitted with:
    ``set_params`` changing the hashing, the task or the learner of a fitted model would
    predict from arrays of another shape, and save a file that cannot load."""
    if "linear_" not in model.__dict__:
        raise not_fitted(model)
    changed = changed_since_fit(model)
    if changed:
        raise NBSVMError(
            f"set_params changed {', '.join(changed)} of a fitted model, whose arrays were "
            "fitted with the former values: set them back, or fit again"
        )


def weights_key(model: NBSVMClassifier, class_weight: Any) -> Any:
    """``class_weight`` as compared: a dict by its classes' names and float weights (a
    loaded model's ``{'1': 3.0}`` is the ``{1: 3}`` or ``{1.0: 3}`` it was fitted with)."""
    if isinstance(class_weight, dict):
        names = model.class_names_of(list(class_weight))
        return dict(zip(names, map(float, class_weight.values())))
    return class_weight


def changed_since_fit(model: NBSVMClassifier) -> list[str]:
    """The parameters that no longer match what the fitted arrays are for."""
    changed = []
    fitted = model.__dict__.get("hasher_")
    if fitted is not None:
        now = model.validate()
        names = {"seed": "hash_seed"}
        changed += [
            names.get(f, f) for f in fitted.settings() if getattr(now, f) != getattr(fitted, f)
        ]
    if bool(model.multilabel) != model.__dict__.get("fitted_multilabel_", bool(model.multilabel)):
        changed.append("multilabel")
    fitted_weights = model.__dict__.get("fitted_class_weight_", model.class_weight)
    if weights_key(model, model.class_weight) != weights_key(model, fitted_weights):
        changed.append("class_weight")  # the NB prior reads it as the model predicts
    backend = model.__dict__.get("backend_")
    if model.backend_learner != (None if backend is None else backend.name):
        changed.append("learner")
    linear = model.__dict__.get("linear_")
    task = "multilabel" in changed  # (which changes the loss a default resolves to)
    if backend is None and linear is not None and not task and model.setting("loss") != linear.loss:
        changed.append("loss")  # the probabilities are the fitted loss's
    return changed


def decision_batch(model: NBSVMClassifier, batch: Batch, columns: bool = False) -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.decision_batch`."""
    check_fitted(model)
    if not columns:
        batch = translate(batch, model.column_of_)
    else:  # columns from elsewhere: the kernels index the weights with them
        _check_columns(batch, model.linear_.n_features)
    if model.backend_learner is not None:
        scores = model.backend_.decision(
            model.linear_.S_[:, :, 0], batch.ids, batch.offsets, unit_rows(model)
        )
    else:
        scores = model.linear_.decision(batch.ids, batch.offsets)
    if model.beta == 1.0:
        return scores
    nb = model.linear_.table_sums(
        batch.ids, batch.offsets, unit=model.interpolate == "weights" and unit_rows(model)
    )
    if model.interpolate == "scores":
        prior = np.array([log_prior(model, k) for k in range(scores.shape[1])])
        return model.beta * scores + (1.0 - model.beta) * (prior + nb)
    # weights: sum_i r_i ((1-beta) mean|w| + beta w_i) + b
    b = model.linear_.intercept()
    return model.beta * (scores - b) + (1.0 - model.beta) * model.mean_abs_coef_ * nb + b


def log_prior(model: NBSVMClassifier, k: int) -> float:
    """The body of :meth:`~nbsvm.NBSVMClassifier.log_prior`."""
    counts = model.class_counts_.astype(np.float64)
    weights = class_weights(model)  # (weighed as the learner weighs each output)

    def seen(n: float) -> float:  # a class not seen yet (partial_fit) counts half a document
        return n if n > 0 else 0.5

    if model.binary_task():  # both classes weighed, as the learner does
        if weights is not None:
            counts = counts * weights
        return float(np.log(seen(counts[1]) / seen(counts[0])))
    # one against the rest: the class weighed, the rest at 1 (as output_weights)
    # multi-label: a document counts once in the total, under each of its labels
    rest = (model.weight_sum_ if model.multilabel else counts.sum()) - counts[k]
    mine = counts[k] * (weights[k] if weights is not None else 1.0)
    return float(np.log(seen(mine) / seen(rest)))


def _batches(model: NBSVMClassifier, X) -> Iterator[Batch]:
    docs = [Document(None, text, "<input>", i + 1) for i, text in enumerate(X)]
    for start in range(0, len(docs), 4096):
        yield hash_batch(docs[start : start + 4096], model.hasher_)


def decision_function(model: NBSVMClassifier, X: Texts, *, text_col: str = "text") -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.decision_function`."""
    check_fitted(model)
    texts, _ = texts_and_labels(X, None, text_col, None)
    parts = [decision_batch(model, b) for b in _batches(model, texts)]
    n_out = model.linear_.n_outputs
    scores = np.concatenate(parts) if parts else np.zeros((0, n_out))
    # (a multi-label model of one label: (n, 1), as its predict and predict_proba)
    return scores[:, 0] if scores.shape[1] == 1 and not model.multilabel else scores


def calibrator_(model: NBSVMClassifier) -> Calibrator | None:
    """The :class:`~nbsvm.learners.calibrator.Calibrator` fitted with ``calibrate``, or
    None."""
    return model.__dict__.get("_calibrator")


def calibrator__set(model: NBSVMClassifier, value: Calibrator | None) -> None:
    model.__dict__["_calibrator"] = value


def score_rows(model: NBSVMClassifier, scores: np.ndarray) -> np.ndarray:
    """Scores as ``(n, n_outputs)`` float64: the width is the model's, never inferred,
    since ``reshape(n, -1)`` cannot infer it for an empty batch (``n == 0``)."""
    return np.asarray(scores, dtype=np.float64).reshape(len(scores), model.n_outputs())


def label_values(model: NBSVMClassifier, scores: np.ndarray) -> np.ndarray:
    """What a multi-label model compares with its thresholds: calibrated probabilities,
    or the scores."""
    return proba_of(model, scores) if model.calibrator_ is not None else score_rows(model, scores)


def default_threshold(model: NBSVMClassifier) -> float:
    """A label's threshold without ``threshold='auto'``: probability 0.5, or score 0."""
    return 0.5 if model.calibrator_ is not None else 0.0


def label_mask(model: NBSVMClassifier, scores: np.ndarray) -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.label_mask`."""
    thresholds = model.__dict__.get("thresholds_")  # threshold='auto': per label
    return label_values(model, scores) > (
        default_threshold(model) if thresholds is None else thresholds
    )


def labels_of(model: NBSVMClassifier, scores: np.ndarray) -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.labels_of`."""
    classes = np.asarray(model.class_names_, dtype=object)
    if model.multilabel:
        return np.asarray(
            [SEPARATOR.join(sorted(classes[row])) for row in label_mask(model, scores)],
            dtype=object,  # a key: its labels sorted as text (label_set), whatever classes_' order
        )
    if model.calibrator_ is not None:  # the class of the highest calibrated probability
        return classes[_best(model, scores, proba_of(model, scores))]
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.ndim == 1:
        return classes[(scores > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


def has_proba(model: NBSVMClassifier, own: bool = False) -> bool:
    """The body of :meth:`~nbsvm.NBSVMClassifier.has_proba`."""
    if model.calibrator_ is not None and not own:
        return True
    loss = model.setting("loss")
    return model.backend_learner is None and (
        loss == "softmax" or (loss not in MULTICLASS_LOSSES and resolve_loss(loss).has_proba)
    )


def proba_of(model: NBSVMClassifier, scores: np.ndarray, own: bool = False) -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.proba_of`."""
    if len(scores) == 0:  # an empty batch: no rows, one column per class
        _check_proba(model, own)
        return np.zeros((0, len(model.class_names_)))
    if model.calibrator_ is not None and not own:
        return model.calibrator_.probabilities(scores)
    _check_proba(model, own)
    loss = model.setting("loss")
    if loss == "softmax":
        return softmax(scores)
    if scores.ndim == 2 and scores.shape[1] == 1 and not model.multilabel:
        scores = scores[:, 0]
    if loss == "modified_huber":
        p = (np.clip(scores, -1, 1) + 1) / 2
    else:
        p = sigmoid(scores)
    if model.multilabel:  # each label on its own: no normalization
        return p.reshape(len(p), -1)
    if p.ndim == 1:
        return np.column_stack([1 - p, p])
    total = p.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1), 1.0 / p.shape[1])


def _check_proba(model: NBSVMClassifier, own: bool = False) -> None:
    """Raise, saying why, when the model gives no probabilities (any batch size)."""
    if model.calibrator_ is not None and not own:
        return
    if model.backend_learner is not None:
        raise NBSVMError(f"learner {model.learner!r} gives margins, not probabilities")
    if not has_proba(model):
        raise NBSVMError(
            f"loss {model.setting('loss')!r} gives no probabilities; use "
            "'log', 'modified_huber' or 'softmax'"
        )


def class_values(model: NBSVMClassifier, scores: np.ndarray) -> tuple[np.ndarray, str]:
    """The body of :meth:`~nbsvm.NBSVMClassifier.class_values`."""
    if has_proba(model):
        return proba_of(model, scores), "probability"
    scores = score_rows(model, scores)
    if scores.shape[1] == 1 and not model.multilabel:
        scores = np.column_stack([-scores[:, 0], scores[:, 0]])
    return scores, "score"


def _best_first(model: NBSVMClassifier, scores: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each row's class positions, best first: by ``values`` (one column per class), ties
    by score, then by class order. Probabilities tie (flat beyond a margin for modified
    Huber, steps of an isotonic calibration): predict, top-k and the calibration figures
    then all name the class of the higher score."""
    raw = score_rows(model, scores)
    if raw.shape[1] == 1 and values.shape[1] == 2:
        raw = np.column_stack([-raw[:, 0], raw[:, 0]])
    return np.lexsort((-raw, -values), axis=1)


def _best(model: NBSVMClassifier, scores: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each row's first class of :func:`_best_first`, without sorting the row: among the
    classes of the highest value, the one of the highest score."""
    raw = score_rows(model, scores)
    if raw.shape[1] == 1 and values.shape[1] == 2:
        raw = np.column_stack([-raw[:, 0], raw[:, 0]])
    top = values == values.max(axis=1, keepdims=True)
    return np.where(top, raw, -np.inf).argmax(axis=1)


def top_k_of(
    model: NBSVMClassifier, scores: np.ndarray, k: int | None = None, threshold: float | None = None
) -> tuple[np.ndarray, np.ndarray, str]:
    """The body of :meth:`~nbsvm.NBSVMClassifier.top_k_of`."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise NBSVMError(f"k must be a positive whole number, got {k!r}")
    values, kind = class_values(model, scores)
    if threshold is not None:
        number = isinstance(threshold, (int, float, np.integer, np.floating))
        if (
            not number
            or isinstance(threshold, bool)
            or not np.isfinite(threshold)
            or (kind == "probability" and not 0.0 <= threshold <= 1.0)
        ):
            raise NBSVMError(
                f"threshold is a {kind} for this model"
                + (": between 0 and 1" if kind == "probability" else ": a finite number")
                + f", got {threshold!r}"
            )
    k = values.shape[1] if k is None else min(int(k), values.shape[1])
    positions = _best_first(model, scores, values)[:, :k]
    best = np.take_along_axis(values, positions, axis=1)
    if threshold is not None:
        below = best < threshold
        positions = np.where(below, -1, positions)
        best = np.where(below, np.nan, best)
    return positions, best, kind


def predict_top_k(
    model: NBSVMClassifier,
    X: Texts,
    k: int = 1,
    threshold: float | None = None,
    *,
    text_col: str = "text",
) -> list[list[tuple[Any, float]]]:
    """The body of :meth:`~nbsvm.NBSVMClassifier.predict_top_k`."""
    positions, values, _ = top_k_of(
        model, decision_function(model, X, text_col=text_col), k, threshold
    )
    classes = list(model.classes_)  # the label values, as predict returns them
    return [
        [(classes[j], float(v)) for j, v in zip(row, vals) if j >= 0]
        for row, vals in zip(positions, values)
    ]


def predict(model: NBSVMClassifier, X: Texts, *, text_col: str = "text") -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.predict`."""
    if model.multilabel:
        scores = score_rows(model, decision_function(model, X, text_col=text_col))
        return label_mask(model, scores).astype(np.int64)
    labels = labels_of(model, decision_function(model, X, text_col=text_col))
    values = getattr(model, "_label_values", None)
    if values:
        out = [values.get(v, v) for v in labels]
        if not out:  # no documents: the classes' own type (not numpy's float64 for [])
            return np.asarray(list(model.classes_))[:0]
        kinds = {type(v) for v in out}
        return np.asarray(out, dtype=object if len(kinds) > 1 else None)
    return labels


def predict_label_sets(
    model: NBSVMClassifier, X: Texts, *, text_col: str = "text"
) -> list[tuple[Any, ...]]:
    """The body of :meth:`~nbsvm.NBSVMClassifier.predict_label_sets`."""
    if not model.multilabel:
        raise NBSVMError("predict_label_sets is for multi-label models; use predict")
    classes = list(model.classes_)  # the values fit was given, in their order
    scores = score_rows(model, decision_function(model, X, text_col=text_col))
    return [tuple(classes[k] for k in np.flatnonzero(row)) for row in label_mask(model, scores)]


def predict_proba(model: NBSVMClassifier, X: Texts, *, text_col: str = "text") -> np.ndarray:
    """The body of :meth:`~nbsvm.NBSVMClassifier.predict_proba`."""
    return proba_of(model, decision_function(model, X, text_col=text_col))


def score(
    model: NBSVMClassifier,
    X: Texts,
    y: LabelValues | None = None,
    *,
    text_col: str = "text",
    label_col: str = "label",
    sample_weight: Any = None,
) -> float:
    """The body of :meth:`~nbsvm.NBSVMClassifier.score`."""
    texts, labels = _labelled(model, X, y, text_col, label_col, "score")
    if not texts:  # the mean of nothing: nan and a numpy warning, where evaluate refuses
        raise NBSVMError("no documents to score")
    weights = np.asarray(sample_weights(sample_weight, len(texts)))
    if not weights.sum() > 0:
        raise NBSVMError("sample_weight is 0 for every document: no accuracy to take")
    predicted = labels_of(model, decision_function(model, texts))
    names = model.names_of(labels)
    right = predicted == np.asarray(names, dtype=object)
    return float(np.average(right, weights=weights))


def evaluate(
    model: NBSVMClassifier,
    X: Texts,
    y: LabelValues | None = None,
    *,
    text_col: str = "text",
    label_col: str = "label",
) -> dict:
    """The body of :meth:`~nbsvm.NBSVMClassifier.evaluate`."""
    from nbsvm.evaluation.evaluate import evaluate_documents

    model.check_fitted()  # (an AttributeError from deep inside, before)
    texts, labels = _labelled(model, X, y, text_col, label_col, "evaluate")
    labels = model.names_of(labels)
    docs = (
        Document(str(label), text, "<input>", i + 1)
        for i, (text, label) in enumerate(zip(texts, labels))
    )
    return evaluate_documents(cast("NBSVMClassifier", model), docs)

    # -- files ----------------------------------------------------------------------------


def _labelled(model, X, y, text_col: str, label_col: str, what: str) -> tuple[list[str], list]:
    """The texts and true labels ``score`` and ``evaluate`` compare the predictions with;
    without labels an error saying where they go (a TypeError from deep inside, before)."""
    texts, labels = texts_and_labels(
        X, y, text_col, label_col, model.multilabel, columns=getattr(model, "classes_", None)
    )
    if labels is None:
        raise NBSVMError(
            f"{what} compares predictions with the true labels: pass y (or a DataFrame "
            "holding label_col)"
        )
    return texts, labels
