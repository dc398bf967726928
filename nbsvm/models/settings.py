"""What an NBSVM model's parameters resolve to and whether they are allowed: the hasher
they make, each task-dependent setting for the number of classes (two, more, multi-label),
and the checks that say which values are allowed."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.config import (
    DEFAULTS,
    HASHER_SETTINGS,
    INTERPOLATIONS,
    MAX_THREADS,
    MULTICLASS_DEFAULTS,
    MULTILABEL_DEFAULTS,
    NORMS,
    OPTIMIZERS,
    PEEK_DOCS,
    SOFTMAX_LAM,
    TASK_PARAMS,
    WEIGHTINGS,
    data_default,
)
from nbsvm.data.store import check_cache_dir
from nbsvm.errors import NBSVMError
from nbsvm.learners.calibrator import METHODS
from nbsvm.learners.losses import MULTICLASS_LOSSES, check_loss
from nbsvm.learners.reduction import ONE_CLASS, backend_name, check_backend
from nbsvm.learners.registry import ALGORITHMS, check_learner
from nbsvm.text.hashing import Hasher

if TYPE_CHECKING:
    from nbsvm.data.cachestore import KeptCache, ReadyCache
    from nbsvm.lexicon.nblexicon import NBLexicon
    from nbsvm.models._types import Documents
    from nbsvm.models.nbsvm import NBSVMClassifier


def check_class_weight(cw: object) -> None:
    """``class_weight`` is None, ``'balanced'`` or a dict of positive finite weights."""
    if cw is None or cw == "balanced":
        return
    if (
        not isinstance(cw, dict)
        or not cw
        or not all(
            isinstance(v, (int, float, np.integer, np.floating))
            and not isinstance(v, bool)
            and np.isfinite(v)
            and v > 0
            for v in cw.values()
        )
    ):
        raise NBSVMError(
            f"class_weight must be None, 'balanced' or a dict of positive "
            f"weights by class name, got {cw!r}"
        )


def check_training_options(model: NBSVMClassifier) -> None:
    """The options around the learner: class weights, early stopping, calibration and kept
    counts (:mod:`nbsvm.models.modes`)."""
    check_class_weight(model.class_weight)
    if not isinstance(model.early_stopping, (bool, np.bool_)):
        raise NBSVMError(f"early_stopping must be True or False, got {model.early_stopping!r}")
    if not (_real(model.validation_fraction) and 0.0 < model.validation_fraction < 1.0):
        raise NBSVMError(
            f"validation_fraction must be between 0 and 1, got {model.validation_fraction!r}"
        )
    if not (_whole(model.n_iter_no_change) and model.n_iter_no_change >= 1):
        raise NBSVMError(
            f"n_iter_no_change must be an integer >= 1, got {model.n_iter_no_change!r}"
        )
    if model.class_weight is not None and model.backend_learner is not None:
        raise NBSVMError(
            f"class_weight weighs the built-in learner's steps; learner "
            f"{model.learner!r} does not take it"
        )
    if model.class_weight == "balanced" and model.multilabel:
        raise NBSVMError(
            "class_weight='balanced' is for one class per document; give a "
            "multi-label model its labels' weights by name"
        )
    if model.calibrate is not None and model.calibrate not in METHODS + ("auto",):
        raise NBSVMError(
            f"calibrate must be 'auto', None, 'sigmoid', 'isotonic' or "
            f"'temperature', got {model.calibrate!r}"
        )
    if model.threshold not in (None, "auto"):
        raise NBSVMError(f"threshold must be None or 'auto', got {model.threshold!r}")
    if model.threshold == "auto" and not model.multilabel:
        raise NBSVMError(
            "threshold='auto' tunes each label's threshold of a multi-label model "
            "(multilabel=True, --multilabel); this model predicts one class per document"
        )
    if not isinstance(model.keep_counts, (bool, np.bool_)):
        raise NBSVMError(f"keep_counts must be True or False, got {model.keep_counts!r}")


#: parameters of a model trained without the search (``auto``): its own ranking metric
#: goes with it, or validate refuses the model (--auto-metric needs --auto)
NO_SEARCH: dict[str, Any] = {"auto": False, "auto_metric": None}


def check_multilabel(value: Any) -> None:
    """``multilabel`` is a bool (checked before ``y`` is read by it, too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise NBSVMError(f"multilabel must be True or False, got {value!r}")


def _hasher(model: NBSVMClassifier, words_only: bool = False) -> Hasher:
    """The body of :meth:`~nbsvm.NBSVMClassifier._hasher`."""
    settings = {name: getattr(model, name) for name in HASHER_SETTINGS}
    refuse_char_min_alone(model.char_ngrams, model.char_min)
    settings["char_ngrams"] = 0 if words_only else setting(model, "char_ngrams")
    return Hasher(seed=model.hash_seed, **settings)


def refuse_char_min_alone(char_ngrams: object, char_min: object) -> None:
    """``char_min`` with ``char_ngrams`` left to the data (None), which may choose none:
    refused, saying so (it was 'between 1 and the longest (0)', of a 0 never given)."""
    if char_ngrams is None and char_min:
        raise NBSVMError(
            f"char_min={char_min!r} (the shortest character n-grams) needs char_ngrams, the "
            "longest: left to the data (None) it may choose none; give both"
        )


def backend_learner(model: NBSVMClassifier) -> str | None:
    """The body of :meth:`~nbsvm.NBSVMClassifier.backend_learner`."""
    return backend_name(model.learner)


def setting(model: NBSVMClassifier, name: str, classes: list | None = None) -> Any:
    """The body of :meth:`~nbsvm.NBSVMClassifier.setting`."""
    value = getattr(model, name)
    if name == "epochs" and model.backend_learner and ALGORITHMS[model.backend_learner].batch:
        return 1  # an exact solver keeps its rows in one pass and solves to its tolerance
    if name == "char_ngrams" and value is None:  # read before the hashing pass
        return model.__dict__.get("char_ngrams_", 0)
    if name == "optimizer" and value is None and model.learner in OPTIMIZERS:
        return model.learner  # --learner sgd|adagrad names the optimizer
    corpus = model.__dict__.get("corpus_")  # known after the first pass of a fit
    if name == "min_df" and value is None:
        # the built-in learner and the exact solver only: the backend's online learners
        # lose accuracy on singletons (Pegasos on 2,000 IMDB reviews: 71.95% with min_df
        # 1, over 75% with 2)
        exact = model.backend_learner is None or ALGORITHMS[model.backend_learner].batch
        return data_default("min_df", corpus) if corpus and exact else DEFAULTS["min_df"]
    if classes is None:
        classes = model.__dict__.get("class_names_")
    if name == "lam" and value is None:
        softmax = model.loss == "softmax" and classes is not None
        softmax = softmax and n_outputs(model, classes) > 1
        return SOFTMAX_LAM if softmax else DEFAULTS["lam"]
    if (
        name == "loss"
        and value in MULTICLASS_LOSSES
        and classes is not None
        and n_outputs(model, classes) == 1
    ):
        # two classes have one output: the multi-class loss is its binary form
        return {"softmax": "log", "multiclass_hinge": "hinge"}[value]
    if value is not None or name not in TASK_PARAMS:
        return value
    if model.multilabel:
        return MULTILABEL_DEFAULTS[name]
    if classes is None:
        raise NBSVMError(f"{name} follows the number of classes, which is not known before fitting")
    if n_outputs(model, classes) > 1:
        return MULTICLASS_DEFAULTS[name]
    if name == "eta0" and corpus and setting(model, "optimizer", classes) == "adagrad":
        return data_default("eta0", corpus)  # shorter documents, larger steps
    if name == "norm" and corpus:
        return data_default("norm", corpus)  # unit rows for phrases
    return DEFAULTS[name]


def data_defaulted(model: NBSVMClassifier) -> list[str]:
    """The body of :meth:`~nbsvm.NBSVMClassifier.data_defaulted`."""
    if "corpus_" not in model.__dict__:
        return []
    names = ["min_df"] if model.min_df is None and model.backend_learner is None else []
    if model.char_ngrams is None and "char_ngrams_" in model.__dict__:
        names.append("char_ngrams")
    if (
        model.eta0 is None
        and n_outputs(model) == 1
        and not model.multilabel
        and setting(model, "optimizer") == "adagrad"
    ):
        names.append("eta0")
    if model.norm is None and n_outputs(model) == 1 and not model.multilabel:
        names.append("norm")
    return names


def n_outputs(model: NBSVMClassifier, classes: list | None = None) -> int:
    """The body of :meth:`~nbsvm.NBSVMClassifier.n_outputs`."""
    k = len(model.class_names_ if classes is None else classes)
    return k if model.multilabel or k > 2 else 1


def validate(model: NBSVMClassifier) -> Hasher:
    """The body of :meth:`~nbsvm.NBSVMClassifier.validate`."""
    _check_choices(model)
    _check_numbers(model)
    check_cache_dir(model.cache_dir)  # a file: refused before the hashing pass, not after
    if model.backend_learner is not None and model.lam is not None:  # (the defaults are > 0)
        check_backend(model.backend_learner, model.lam)
    _check_modes(model)
    return _hasher(model)


def _check_choices(model: NBSVMClassifier) -> None:
    """The named choices: loss, optimizer, interpolation, beta, weighting, learner, norm."""
    if model.loss is not None:
        check_loss(model.loss)
    if model.optimizer is not None and model.optimizer not in OPTIMIZERS:
        raise NBSVMError(f"unknown optimizer {model.optimizer!r}; allowed: {', '.join(OPTIMIZERS)}")
    if model.interpolate not in INTERPOLATIONS:
        raise NBSVMError(
            f"unknown interpolation {model.interpolate!r}; allowed: {', '.join(INTERPOLATIONS)}"
        )
    if not (_real(model.beta) and 0.0 <= model.beta <= 1.0):
        raise NBSVMError(f"beta must be in [0, 1], got {model.beta!r}")
    if model.weighting not in WEIGHTINGS:
        raise NBSVMError(f"unknown weighting {model.weighting!r}; allowed: {', '.join(WEIGHTINGS)}")
    check_learner(model.learner)
    if model.learner in OPTIMIZERS and model.optimizer not in (None, model.learner):
        raise NBSVMError(
            f"learner {model.learner!r} is the built-in learner with optimizer "
            f"{model.learner!r}, not {model.optimizer!r}"
        )
    if model.learner == "ovr" and model.loss in MULTICLASS_LOSSES:
        raise NBSVMError(
            f"learner 'ovr' trains one output per class against the rest; "
            f"loss {model.loss!r} trains the classes together"
        )
    if model.learner == "multilabel" and not model.multilabel:
        raise NBSVMError("learner 'multilabel' needs multi-label data (--multilabel)")
    if model.backend_learner is not None and model.interpolate == "weights" and model.beta != 1.0:
        raise NBSVMError(
            f"interpolate='weights' needs the built-in learner's weights; "
            f"with learner {model.learner!r} use interpolate='scores'"
        )
    if model.norm is not None and model.norm not in NORMS:
        raise NBSVMError(f"unknown norm {model.norm!r}; allowed: {', '.join(NORMS)}")
    if model.weighting == "binary" and model.beta != 1.0:
        raise NBSVMError(
            f"weighting='binary' has no NB part to interpolate with: beta "
            f"must be 1, got {model.beta!r}"
        )


def _real(v: object) -> bool:
    """A number, numpy's too (``np.float32(0.5)``, ``np.int64(1)``: what a grid of
    ``np.arange`` holds; the model file writes them as Python numbers), not a bool."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def _whole(v: object) -> bool:
    """An integer, numpy's too (a grid of ``np.arange(1, 4)``), not a bool."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _check_numbers(model: NBSVMClassifier) -> None:
    """The numbers: lambda, alpha, eta0, epochs, min_df, threads, seed."""
    for name in ("lam", "alpha"):
        v = getattr(model, name)
        if v is None:  # by the task (the number of classes; lam: and the loss)
            continue
        if not (_real(v) and np.isfinite(v) and (v > 0 if name == "alpha" else v >= 0)):
            raise NBSVMError(
                f"{'lambda' if name == 'lam' else name} must be a "
                f"{'positive' if name == 'alpha' else 'non-negative'} number, "
                f"got {v!r}"
            )
    eta0: Any = model.eta0
    if not (eta0 in (None, "auto") or (_real(eta0) and np.isfinite(eta0) and eta0 > 0)):
        raise NBSVMError(f"eta0 must be a positive number or 'auto', got {model.eta0!r}")
    if not (model.epochs is None or (_whole(model.epochs) and model.epochs >= 1)):
        raise NBSVMError(f"epochs must be an integer >= 1, got {model.epochs!r}")
    if not (
        model.min_df is None
        or (
            isinstance(model.min_df, (int, np.integer))
            and not isinstance(model.min_df, bool)
            and model.min_df >= 1
        )
    ):
        raise NBSVMError(
            f"min_df must be an integer >= 1 or None (from the data), got {model.min_df!r}"
        )
    if not (_whole(model.threads) and 1 <= model.threads <= MAX_THREADS):
        raise NBSVMError(f"threads must be an integer in [1, {MAX_THREADS}], got {model.threads!r}")
    if not (_whole(model.seed) and model.seed >= 0):
        raise NBSVMError(f"seed must be an integer >= 0, got {model.seed!r}")


def _check_modes(model: NBSVMClassifier) -> None:
    """auto and its budget and metric, the training modes, multi-label."""
    if not isinstance(model.auto, (bool, np.bool_)):
        raise NBSVMError(f"auto must be True or False, got {model.auto!r}")
    if not (_real(model.time_budget) and 0 < model.time_budget < float("inf")):
        raise NBSVMError(
            f"time_budget must be a positive number of seconds, got {model.time_budget!r}"
        )
    allowed = ("micro_f1", "macro_f1") if model.multilabel else ("accuracy", "macro_f1")
    if model.auto_metric is not None and model.auto_metric not in allowed:
        raise NBSVMError(
            f"auto_metric must be None or one of {', '.join(allowed)}"
            f"{' (label sets)' if model.multilabel else ''}, got "
            f"{model.auto_metric!r}"
        )
    if model.auto_metric is not None and not model.auto:
        raise NBSVMError("auto_metric ranks the auto search's trials (--auto-metric needs --auto)")
    check_training_options(model)
    check_multilabel(model.multilabel)
    if model.multilabel and model.loss in MULTICLASS_LOSSES:
        raise NBSVMError(
            f"loss {model.loss!r} picks one class per document; multi-label "
            f"models take a margin loss (log, hinge, squared_hinge, "
            f"modified_huber)"
        )
    if model.multilabel and model.learner in ONE_CLASS:
        raise NBSVMError(
            f"learner {model.learner!r} picks one class per document; "
            f"multi-label models use one binary learner per label (the "
            f"built-in one, 'pa' or 'pegasos') or the multi-label hinge "
            f"('multilabel')"
        )


def unit_rows(model: NBSVMClassifier) -> bool:
    """The body of :meth:`~nbsvm.NBSVMClassifier.unit_rows`."""
    return setting(model, "norm") == "l2"


def read_text_defaults(
    model: NBSVMClassifier,
    docs: Documents,
    lexicon: NBLexicon | None = None,
    kept: KeptCache | ReadyCache | None = None,
) -> Documents:
    """The body of :meth:`~nbsvm.NBSVMClassifier.read_text_defaults`."""
    if model.char_ngrams is not None:
        return docs
    source = lexicon if lexicon is not None else kept  # neither defines __len__ or __bool__
    if source is not None:
        model.char_ngrams_ = source.hasher.char_ngrams
        return docs
    if "char_ngrams_" in model.__dict__ and model.__dict__.get("_peeked") is docs:
        return docs
    if callable(docs) and hasattr(docs, "peek"):
        head = docs.peek(PEEK_DOCS)
    elif callable(docs):
        stream = docs()
        head = list(itertools.islice(stream, PEEK_DOCS))
        getattr(stream, "close", lambda: None)()
    elif isinstance(docs, (list, tuple)):
        head = list(docs[:PEEK_DOCS])
    else:  # an iterator, or an iterable that may be read only once
        stream = iter(docs)
        head = list(itertools.islice(stream, PEEK_DOCS))
        docs = itertools.chain(head, stream)
    model.char_ngrams_ = char_ngrams_default(
        _hasher(model, words_only=True), [d.text for d in head], whole=len(head) < PEEK_DOCS
    )
    model.__dict__["_peeked"] = docs
    return docs


def char_ngrams_default(words: Hasher, texts: list[str], whole: bool = False) -> int:
    """``char_ngrams`` left at None: character 4-grams where the median of the first
    :data:`~nbsvm.config.PEEK_DOCS` texts holds few distinct word n-grams, or where
    ``texts`` are the ``whole`` training corpus and it is small (``words``: the hasher
    without character n-grams; :func:`~nbsvm.config.data_default`)."""
    # the first million characters of each: a median of "long" is decided by then, and
    # a line of many MB would otherwise take its hashing scratch here, unchecked
    head = [t[: 1 << 20] for t in texts[:PEEK_DOCS]]
    lengths = np.diff(words.batch(head)[1]) if head else np.zeros(1)
    corpus = {
        "median_ngrams": float(np.median(lengths)),
        "documents": len(texts) if whole else None,
    }
    return int(data_default("char_ngrams", corpus))
