"""``NBSVMClassifier.partial_fit``: training batch by batch, for every task and learner.

A model started by ``partial_fit`` has a growing lexicon: its columns are the ``2**n_bits``
buckets themselves (state: outputs x ``2**n_bits``; choose ``n_bits`` for it), the lexicon's
counts grow with each batch and the ratios are recomputed from them before the batch is
learned (O(``2**n_bits``) per call: use large batches). After ``fit`` or ``load`` the
lexicon is frozen and only the learner keeps learning, on the model's kept columns; unless
the model kept its counts (``keep_counts``): then the first call gives it a column per
bucket again (:func:`~nbsvm.models.warm.to_bucket_columns`) and its counts grow as above.

Single-label models count each class; multi-label ones count each label-set key and take
each label's counts as the sum over the keys holding it (:func:`~nbsvm.models.columns.
label_set_counts`), as ``fit`` from a lexicon does. The learner is the built-in one or the
backend's (``learner``), each making one pass over the batch in its order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.data.batches import hash_batch
from nbsvm.data.translate import translate
from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document
from nbsvm.io.frames import check_labels as check_label_values
from nbsvm.io.frames import one_label_each, sample_weights, texts_and_labels
from nbsvm.io.labels import (
    class_order,
    classes_of,
    key_of,
    label_set,
    membership,
    output_order,
)
from nbsvm.learners.epochs import NO_WEIGHTS
from nbsvm.learners.targets import Labels
from nbsvm.lexicon.label_sets import fill_label_ratios, label_set_counts
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.models.learner_setup import (
    check_labels,
    codes_for,
    new_backend,
    new_linear,
    output_weights,
    positive_codes,
)
from nbsvm.models.settings import char_ngrams_default, unit_rows

if TYPE_CHECKING:
    from nbsvm.models._types import LabelValues, Texts
    from nbsvm.models.nbsvm import NBSVMClassifier


def partial_fit(
    model: NBSVMClassifier,
    X: Texts,
    y: LabelValues,
    classes: Iterable[Any] | None = None,
    sample_weight: Any = None,
) -> NBSVMClassifier:
    """One pass of ``model`` over the batch ``(X, y)`` (see the module docstring;
    ``sample_weight``: each document's weight, on its counts and its steps)."""
    hasher = model.validate()
    check_learnable(model)
    if not hasattr(model, "linear_"):
        _start(model, hasher, classes)
    else:
        _check_continued(model, classes)
    texts, values = texts_and_labels(
        X, y, "text", "label", model.multilabel, columns=model.classes_
    )
    if values is None:
        raise NBSVMError("partial_fit needs labels y")
    if model.char_ngrams is None and model.n_docs_ == 0 and texts:
        # fit's rule, on the first batch of documents (nothing hashed yet: the hasher can
        # still change; a first call that failed or held none decides nothing)
        model.char_ngrams_ = char_ngrams_default(model._hasher(words_only=True), texts)
        model.hasher_ = model.lexicon_.hasher = model.validate()
    # the classes' types are those of the first call (fit's y, or classes=), as
    # scikit-learn's classes_ are: later labels are names of them
    labels = model.names_of(values)
    weights = sample_weights(sample_weight, len(texts))
    docs = [
        Document(lab, t, "<partial_fit>", i + 1, w)
        for i, (t, lab, w) in enumerate(zip(texts, labels, weights))
    ]
    batch = hash_batch(docs, model.hasher_)
    if batch.weights is not None and model.backend_learner is not None:
        raise NBSVMError(NO_WEIGHTS)
    lexicon = getattr(model, "lexicon_", None)
    if lexicon is not None and model.column_of_ is not None:  # loaded with keep_counts
        from nbsvm.models.warm import to_bucket_columns

        to_bucket_columns(model)
    codes, positive = _targets(model, labels, batch, lexicon)
    if lexicon is not None:
        lexicon.add_batch(
            batch.ids, batch.offsets, _lexicon_codes(model, lexicon, codes), batch.weights
        )
        _refresh_values(model, lexicon)
    batch = translate(batch, model.column_of_)
    if len(docs):
        order = np.arange(len(docs))
        if model.backend_learner is not None:
            model.backend_.partial_fit(
                model.linear_.tables,
                batch.ids,
                batch.offsets,
                codes,
                order,
                positive,
                unit_rows(model),
            )
        else:
            model.linear_.epoch(batch.ids, batch.offsets, codes, order, positive, batch.weights)
    model.n_docs_ += len(docs)
    if lexicon is not None:  # the documents under class_counts_ (the multi-label NB prior's)
        model.weight_sum_ += float(sum(weights))
    model.mean_abs_coef_ = model.linear_.mean_abs_coef()
    return model


def check_learnable(model: NBSVMClassifier) -> None:
    """Refuse a model whose state no longer trains (what ``serve --learn`` checks before
    taking any request): quantized, with thresholds or a calibration fitted to the
    weights it has, of a backend learner saved with its counts, or with counts whose
    learner of a column per bucket would not fit in memory."""
    if getattr(model, "quantized_", None):
        raise NBSVMError(
            "a quantized model does not train further (its AdaGrad sums and "
            "small weights are gone): continue from the original model file"
        )
    if (
        model.backend_learner is not None
        and model.__dict__.get("lexicon_") is not None
        and model.column_of_ is not None
    ):  # its counts would grow over every bucket, and the backend's state cannot follow
        raise NBSVMError(
            f"learner {model.learner!r} keeps its own state over the model's columns: a "
            "model saved with keep_counts does not train further with it. Train it without "
            "keep_counts to go on with partial_fit"
        )
    backend = model.__dict__.get("backend_")
    if backend is not None and not backend.can_continue():
        raise NBSVMError(
            f"learner {model.learner!r} loaded from a file does not train further: it keeps "
            "rows a model file does not hold (train it again on all the data)"
        )
    if "thresholds_" in model.__dict__:
        raise NBSVMError(
            "a model with tuned thresholds (threshold='auto') does not train further: they "
            "were tuned to the old weights. Continue a model trained without them"
        )
    calibrator = model.calibrator_
    if calibrator is not None:
        # its probabilities (and a binary model's labels, read from them) would stay those
        # of the old weights while the scores moved
        raise NBSVMError(
            f"a calibrated model ({calibrator.method}) does not train further: its "
            "calibration was fitted to the old weights. Continue a model trained with "
            "calibrate=None (--calibrate none), or with keep_counts, which is never "
            "calibrated by default"
        )
    if getattr(model, "lexicon_", None) is not None:  # (its first partial_fit grows it)
        from nbsvm.models.warm import check_bucket_columns_fit

        check_bucket_columns_fit(model)


def _check_continued(model: NBSVMClassifier, classes: Iterable[Any] | None) -> None:
    """A call after the first: the model as fitted (set_params has not changed what the
    arrays are for), ``classes`` if given the model's (scikit-learn's rule: a class added
    there was ignored without a word)."""
    model.check_fitted()
    given = None if classes is None else {str(c) for c in classes}
    if given is not None and given != set(model.class_names_):
        raise NBSVMError(
            f"classes={sorted(given)} is not the same as the model's classes "
            f"{list(model.class_names_)} (from the first partial_fit call or fit): a model "
            "keeps the classes it started with"
        )


def _start(model, hasher, classes) -> None:
    """The first call: the classes (labels), an empty growing lexicon, and the learner
    over every bucket."""
    if classes is None:
        raise NBSVMError("the first partial_fit call needs classes=[...] (all labels)")
    classes = list(classes)  # read once: a generator is read to its end here
    if model.multilabel:
        check_label_values(classes, "classes")
        model._remember_label_values([classes])
        classes = classes_of(key_of([c]) for c in classes)
        if not classes:
            raise NBSVMError("the first partial_fit call needs classes=[...] (all labels)")
    else:
        classes = one_label_each(classes, "classes")  # a column of classes, as y is read
        check_label_values(classes, "classes")  # 1 and 1.0, 'ö' in NFC and NFD: one class each
        model._remember_label_values(list(classes))
        classes = class_order(str(c) for c in classes)
        if len(classes) < 2:
            raise NBSVMError(f"need at least two classes, got {classes}")
    model.lexicon_ = NBLexicon(hasher, alpha=model.setting("alpha", classes))
    if not model.multilabel:
        for c in classes:  # codes in classes_ order
            model.lexicon_.code_of(c)
    model.class_names_, model.hasher_, model.n_docs_ = Labels(classes), hasher, 0
    model.weight_sum_ = 0.0
    model.class_counts_ = np.zeros(len(classes), dtype=np.int64)
    model.n_seen_buckets_ = 0
    model.column_of_ = None  # growing lexicon: columns are buckets
    model.linear_ = new_linear(model, classes, 1 << hasher.n_bits)
    if isinstance(model.class_weight, str):
        raise NBSVMError(
            "class_weight='balanced' needs the class counts of all the data, "
            "which partial_fit does not see; give the weights by name"
        )
    model.linear_.set_class_weight(output_weights(model))
    if model.backend_learner is not None:
        model.backend_ = new_backend(model)


def _targets(model, labels, batch, lexicon):
    """``(codes, positive)`` of the batch for the learners: class indices and each
    output's class, or label-set key codes and their membership matrix."""
    if not model.multilabel:
        return codes_for(model, labels, batch), positive_codes(model)
    for i, key in enumerate(labels):
        check_labels(model, list(label_set(key)), [batch.where(i)] * len(label_set(key)))
    if lexicon is not None:  # the lexicon's codes: every key seen so far
        codes = np.asarray([lexicon.code_of(key) for key in labels], dtype=np.int32)
        keys = lexicon.code_labels()
    else:
        keys = sorted(set(labels))
        index = {key: c for c, key in enumerate(keys)}
        codes = np.asarray([index[key] for key in labels], dtype=np.int32)
    return codes, membership(model.class_names_, keys)


def _lexicon_codes(model, lexicon, codes: np.ndarray) -> np.ndarray:
    """The lexicon's codes of the batch's classes. ``codes`` index ``classes_``; a
    lexicon numbers its classes in the order it first met them, which after ``fit``
    (``keep_counts``) is the data's: counted under ``codes`` themselves, the documents of
    one class went to another (multi-label codes are the lexicon's already)."""
    if model.multilabel:
        return codes
    to_lexicon = np.asarray([lexicon.code_of(c) for c in model.class_names_], dtype=np.int32)
    return to_lexicon[codes]


def _refresh_values(model, lexicon) -> None:
    """Every column's value from the lexicon's counts so far (as fit computes them:
    buckets in fewer than ``min_df`` documents carry none)."""
    tables = model.linear_.tables
    if model.multilabel:
        buckets, counts, kept_df, docs, n_seen = label_set_counts(
            lexicon, model.class_names_, model.setting("min_df")
        )
        ratios = np.zeros((len(model.class_names_), len(buckets), 1), dtype=tables.dtype)
        fill_label_ratios(ratios, counts, kept_df, float(model.setting("alpha")))
        ratios = ratios[:, :, 0]
        model.class_counts_ = docs
        model.n_seen_buckets_ = n_seen
    else:
        buckets, ratios = _in_model_order(model, lexicon)
        model.n_seen_buckets_ = lexicon.n_seen_
    tables[:] = 0.0
    tables[:, buckets] = 1.0 if model.weighting == "binary" else ratios


def _in_model_order(model, lexicon) -> tuple[np.ndarray, np.ndarray]:
    """The lexicon's class counts (into ``model.class_counts_``) and kept ratios, in the
    order of ``model.class_names_``: a model saved when classes that are numbers ordered as
    text ('10' before '2') has them the other way round from its lexicon, and its rows
    taken as they come inverted it on the first call (two classes: the one ratio of
    ``classes_[1]`` against ``classes_[0]`` changes sign). A class declared (``classes=``)
    without a document yet has the smoothing's uniform counts, and the other classes their
    ratios (all stayed 0 until every class had a document: the learner saw empty rows and
    predicted one class)."""
    order = [lexicon.classes_.index(c) for c in model.class_names_]
    model.class_counts_ = lexicon.class_counts_[order]
    buckets, ratios = lexicon.kept_ratios(min_df=model.setting("min_df"))
    rows, sign = output_order(lexicon.classes_, list(model.class_names_), ratios.shape[0])
    if sign > 0 and rows == list(range(len(rows))):
        return buckets, ratios
    return buckets, sign * ratios[rows]
