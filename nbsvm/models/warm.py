"""Continuing training from a saved model with new documents (``train --init``, VW's
``--save_resume``), and models that keep their lexicon's counts for it (``keep_counts``).

A model trained with ``keep_counts`` holds its NB lexicon (:class:`~nbsvm.lexicon.nblexicon.
NBLexicon`: binarized counts per class of every bucket seen) in ``lexicon_`` and in its
file. :func:`fit_keeping_counts` counts the lexicon in a first pass (the documents are read
twice) and trains with it. :func:`continue_training` adds the new documents' counts to a
copy of that lexicon, builds the columns of the combined counts (``min_df`` over all the
documents), starts every bucket both models have from the saved weight, AdaGrad sum, bias
and step counter (:func:`~nbsvm.models.fitting.transfer_state`), and trains its epochs over the new documents.

What equals one run over all the documents: the counts, document frequencies, NB ratios and
kept buckets, exactly. The weights can only equal one run's where the features do not
depend on the counts and the order is the same: ``weighting='binary'``, ``min_df=1``, one
epoch (the first epoch reads the documents in order), one thread; with NB features the
first model's weights were learned on the first documents' ratios, and with more epochs one
run shuffles all the documents together, so the weights differ (the test suite checks
both).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbsvm.data.translate import mapped_buckets
from nbsvm.errors import NBSVMError
from nbsvm.io.document import rereadable
from nbsvm.io.labels import label_set
from nbsvm.lexicon.build import build_lexicon
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.models import history
from nbsvm.models.fitting import Fit
from nbsvm.models.learner_setup import new_linear, output_weights
from nbsvm.models.settings import NO_SEARCH

if TYPE_CHECKING:
    from nbsvm.models._types import Documents
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.models.run import FitRun

#: settings a continued model takes from the saved one, resolved (data defaults included)
RESOLVED = ("alpha", "lam", "min_df", "loss", "optimizer", "eta0", "epochs", "norm", "char_ngrams")


def copy_lexicon(lexicon: NBLexicon) -> NBLexicon:
    """An independent copy (sparse pairs) of a fitted lexicon's counts."""
    return lexicon.copy()


def fit_keeping_counts(model: NBSVMClassifier, docs: Documents, run: FitRun) -> None:
    """``model.fit_documents(docs)`` with ``keep_counts``: count the lexicon in a first
    pass, then train with it; the model keeps it in ``lexicon_``."""
    reread = rereadable(docs)
    corpus: dict = {}
    # the lexicon's alpha is set to the model's once its classes are known (Fit.run)
    lexicon = build_lexicon(reread(), model.validate(), model.alpha, run.callback, corpus=corpus)
    warm = {"corpus": corpus, "keep": True}
    Fit(model, lexicon, run.callback, run.max_memory, warm=warm).run(reread())


def resolved_params(source: NBSVMClassifier) -> dict[str, Any]:
    """``source``'s parameters with the data- and task-dependent defaults it trained with
    written out, so that the continued model trains with the same settings."""
    params = source.get_params()
    for name in RESOLVED:
        params[name] = source.setting(name)
    if params["eta0"] == "auto":
        params["eta0"] = float(source.eta0_)
    # what chose or held out data the first time is not done again on the new documents
    params.update(keep_counts=True, calibrate=None, early_stopping=False, **NO_SEARCH)
    return params


def check_continuable(source: NBSVMClassifier) -> None:
    """Refuse a model that cannot train further (before anything reads its settings):
    quantized, without lexicon counts, of a backend learner, calibrated, or with tuned
    thresholds."""
    source.check_fitted()
    if getattr(source, "quantized_", None):
        raise NBSVMError(
            "a quantized model does not train further: continue from the original model file"
        )
    if "lexicon_" not in source.__dict__:
        raise NBSVMError(
            "the model holds no lexicon counts to add the new documents to: "
            "train it with --keep-counts (keep_counts=True) to continue it later"
        )
    if source.backend_learner is not None:
        raise NBSVMError(
            f"learner {source.learner!r} keeps its own state: continuing "
            "training is for the built-in learner"
        )
    if source.calibrator_ is not None:
        raise NBSVMError(
            "a calibrated model cannot be continued: its calibration was fitted "
            "to the old weights. Continue a model trained without --calibrate"
        )
    if "thresholds_" in source.__dict__:  # they were carried over unchanged, the weights not
        raise NBSVMError(
            "a model with tuned thresholds (--threshold auto) cannot be continued: they were "
            "tuned to the old weights. Continue a model trained without them"
        )


def continue_training(source: NBSVMClassifier, docs: Documents, run: FitRun) -> NBSVMClassifier:
    """A new model: ``source`` (fitted with ``keep_counts``) trained further on ``docs``, as
    the module docstring says. ``source`` is left as it is."""
    check_continuable(source)
    reread = rereadable(docs)
    lexicon = copy_lexicon(source.lexicon_)
    known, counted = set(lexicon.classes_), lexicon.n_docs_
    corpus: dict = {}
    build_lexicon(
        reread(),
        source.hasher_,
        source.setting("alpha"),
        run.callback,
        lexicon=lexicon,
        corpus=corpus,
    )
    if corpus.get("documents") and lexicon.n_docs_ == counted:  # as a fresh fit refuses
        raise NBSVMError(
            "every new document weighs 0 (--weight-col, sample_weight): nothing to "
            "continue training on"
        )
    if source.multilabel:  # the lexicon's classes are label sets: "a,b"
        new = sorted(
            {v for key in lexicon.classes_ for v in label_set(key)} - set(source.class_names_)
        )
    else:
        new = sorted(set(lexicon.classes_) - known)
    if new:
        raise NBSVMError(
            f"the new documents have classes the model does not know: "
            f"{', '.join(new)} (the model's are "
            f"{', '.join(source.class_names_)}); train a new model"
        )
    model = type(source)(**resolved_params(source))
    warm = {"source": source, "keep": True}
    Fit(model, lexicon, run.callback, run.max_memory, warm=warm).run(reread())
    model.n_docs_ = int(source.n_docs_) + int(corpus["documents"])
    model.weight_sum_ += float(source.weight_sum_)  # (after Fit: the new documents')
    model.history_ = [dict(e) for e in source.__dict__.get("history_", [])]
    history.record(model, "continue", int(corpus["documents"]))
    label_values = getattr(source, "_label_values", None)
    if label_values:
        model._label_values = dict(label_values)
    return model


def check_bucket_columns_fit(model: NBSVMClassifier) -> None:
    """Refuse, before anything is learned, a model loaded with keep_counts whose learner of
    one column per bucket (:func:`to_bucket_columns`: what its first ``partial_fit``
    makes) would not fit in the memory available (``serve --learn`` had acknowledged a
    request, then stopped learning for good)."""
    if model.column_of_ is None:
        return
    from nbsvm.memory import check_fit_memory, fit_bytes

    classes = list(model.class_names_)
    grown = fit_bytes(
        model.hasher_.n_bits,
        model.n_outputs(classes),
        model.setting("optimizer", classes),
        column_map=False,
        by_column=False,
    )
    # its size follows 2**n_bits, not the kept columns: said before it is taken
    check_fit_memory(grown, None, "learning into a model loaded with keep_counts")


def to_bucket_columns(model: NBSVMClassifier) -> None:
    """Give a loaded model one learner column per bucket (``column_of_`` None), as a model
    growing by ``partial_fit`` has, so that every bucket's ratio can follow its counts:
    ``2**n_bits`` columns per output."""
    if model.column_of_ is None:
        return
    check_bucket_columns_fit(model)
    old = model.linear_
    old.coef()
    new = new_linear(model, model.class_names_, 1 << model.hasher_.n_bits)
    buckets, columns, _ = mapped_buckets(model.column_of_)
    new.S_[:, buckets, :] = old.S_[:, columns, :]
    new.state_[:] = old.state_
    new.set_class_weight(output_weights(model))
    model.linear_, model.column_of_ = new, None
