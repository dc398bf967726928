"""What an NBSVM model's parameters resolve to and whether they are allowed: the hasher
they make, each task-dependent setting for the number of classes (two, more, multi-label),
and the checks that say which values are allowed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.config import (
    DEFAULTS,
    MULTICLASS_DEFAULTS,
    MULTILABEL_DEFAULTS,
    TASK_PARAMS,
    data_default,
)
from nbsvm.errors import NBSVMError
from nbsvm.learners.calibrator import METHODS
from nbsvm.learners.losses import MULTICLASS_LOSSES, check_loss
from nbsvm.learners.reduction import ONE_CLASS, backend_name, check_learner
from nbsvm.learners.sgd import OPTIMIZERS
from nbsvm.text.hashing import Hasher

if TYPE_CHECKING:
    from nbsvm.learners.targets import Labels

INTERPOLATIONS = ("scores", "weights")
WEIGHTINGS = ("nb", "binary")  # feature value of a kept bucket: its NB ratio, or 1
NORMS = ("l2", "none")  # row scaling


def check_class_weight(cw) -> None:
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


def check_training_options(model) -> None:
    """The options around the learner: class weights, early stopping, calibration and kept
    counts (:mod:`nbsvm.models.modes`)."""
    check_class_weight(model.class_weight)
    if not isinstance(model.early_stopping, (bool, np.bool_)):
        raise NBSVMError(f"early_stopping must be True or False, got {model.early_stopping!r}")
    if not (
        isinstance(model.validation_fraction, (int, float))
        and not isinstance(model.validation_fraction, bool)
        and 0.0 < model.validation_fraction < 1.0
    ):
        raise NBSVMError(
            f"validation_fraction must be between 0 and 1, got {model.validation_fraction!r}"
        )
    if not (
        isinstance(model.n_iter_no_change, int)
        and not isinstance(model.n_iter_no_change, bool)
        and model.n_iter_no_change >= 1
    ):
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
    if not isinstance(model.keep_counts, (bool, np.bool_)):
        raise NBSVMError(f"keep_counts must be True or False, got {model.keep_counts!r}")


class SettingsMixin:
    """Resolved settings and parameter checks of :class:`~nbsvm.NBSVMClassifier`."""

    if TYPE_CHECKING:  # set by NBSVMClassifier.__init__ (its parameters) and by fitting
        ngrams: int
        n_bits: int
        char_ngrams: int | None
        hash_seed: int
        alpha: float
        min_df: int | None
        loss: str | None
        optimizer: str | None
        eta0: float | str | None
        lam: float
        beta: float
        interpolate: str
        epochs: int | None
        seed: int
        threads: int
        weighting: str
        norm: str | None
        learner: str | None
        multilabel: bool
        auto: bool
        time_budget: float
        auto_metric: str | None
        calibrate: str | None
        class_weight: str | dict[Any, float] | None
        keep_counts: bool
        char_min: int
        lowercase: bool
        early_stopping: bool
        validation_fraction: float
        n_iter_no_change: int
        split_scripts: bool
        nfkc: bool
        long_words: int
        classes_: Labels

    def _hasher(self, words_only: bool = False) -> Hasher:
        """The hasher of these settings (``words_only``: without character n-grams)."""
        chars = 0 if words_only else self.setting("char_ngrams")
        return Hasher(
            ngrams=self.ngrams,
            n_bits=self.n_bits,
            char_ngrams=chars,
            seed=self.hash_seed,
            char_min=self.char_min,
            lowercase=self.lowercase,
            split_scripts=self.split_scripts,
            nfkc=self.nfkc,
            long_words=self.long_words,
        )

    @property
    def backend_learner(self) -> str | None:
        """The backend learner ``learner`` names (None: the built-in one, for ``None``,
        ``'sgd'``, ``'adagrad'`` or ``'ovr'``)."""
        return backend_name(self.learner)

    def setting(self, name: str, classes: list | None = None) -> Any:
        """The value of parameter ``name`` this model trains with: the parameter, or when it
        is None (one of :data:`~nbsvm.config.TASK_PARAMS`), the default for the number of
        classes (known once fitted, or after the training data is counted), or for
        multi-label models :data:`~nbsvm.config.MULTILABEL_DEFAULTS`. ``classes``: for
        these classes instead of the fitted ones."""
        value = getattr(self, name)
        if name == "char_ngrams" and value is None:  # read before the hashing pass
            return self.__dict__.get("char_ngrams_", 0)
        if name == "optimizer" and value is None and self.learner in OPTIMIZERS:
            return self.learner  # --learner sgd|adagrad names the optimizer
        corpus = self.__dict__.get("corpus_")  # known after the first pass of a fit
        if name == "min_df" and value is None:
            # the built-in learner only: the backend's lose accuracy on singletons (Pegasos on
            # 2,000 IMDB reviews: 71.95% with min_df 1, over 75% with 2)
            return (
                data_default("min_df", corpus)
                if corpus and self.backend_learner is None
                else DEFAULTS["min_df"]
            )
        if classes is None:
            classes = self.__dict__.get("classes_")
        if (
            name == "loss"
            and value in MULTICLASS_LOSSES
            and classes is not None
            and self.n_outputs(classes) == 1
        ):
            # two classes have one output: the multi-class loss is its binary form
            return {"softmax": "log", "multiclass_hinge": "hinge"}[value]
        if value is not None or name not in TASK_PARAMS:
            return value
        if self.multilabel:
            return MULTILABEL_DEFAULTS[name]
        if classes is None:
            raise NBSVMError(
                f"{name} follows the number of classes, which is not known before fitting"
            )
        if self.n_outputs(classes) > 1:
            return MULTICLASS_DEFAULTS[name]
        if name == "eta0" and corpus and self.setting("optimizer", classes) == "adagrad":
            return data_default("eta0", corpus)  # shorter documents, larger steps
        if name == "norm" and corpus:
            return data_default("norm", corpus)  # unit rows for phrases
        return DEFAULTS[name]

    def data_defaulted(self) -> list[str]:
        """The settings this model took from its training data (``corpus_``, after the
        first pass): ``min_df``, for two classes ``norm`` and, with AdaGrad, ``eta0``, when
        left at None (:func:`nbsvm.config.data_default`)."""
        if "corpus_" not in self.__dict__:
            return []
        names = ["min_df"] if self.min_df is None and self.backend_learner is None else []
        if self.char_ngrams is None and "char_ngrams_" in self.__dict__:
            names.append("char_ngrams")
        if (
            self.eta0 is None
            and self.n_outputs() == 1
            and not self.multilabel
            and self.setting("optimizer") == "adagrad"
        ):
            names.append("eta0")
        if self.norm is None and self.n_outputs() == 1 and not self.multilabel:
            names.append("norm")
        return names

    def n_outputs(self, classes: list | None = None) -> int:
        """Weight vectors: one for two classes, else one per class (per label when
        ``multilabel``); for ``classes``, or the fitted ones."""
        k = len(self.classes_ if classes is None else classes)
        return k if self.multilabel or k > 2 else 1

    def validate(self) -> Hasher:
        """Check every parameter (an error says what is allowed); return the hasher they
        make."""
        self._check_choices()
        self._check_numbers()
        self._check_modes()
        return self._hasher()

    def _check_choices(self) -> None:
        """The named choices: loss, optimizer, interpolation, beta, weighting, learner, norm."""
        if self.loss is not None:
            check_loss(self.loss)
        if self.optimizer is not None and self.optimizer not in OPTIMIZERS:
            raise NBSVMError(
                f"unknown optimizer {self.optimizer!r}; allowed: {', '.join(OPTIMIZERS)}"
            )
        if self.interpolate not in INTERPOLATIONS:
            raise NBSVMError(
                f"unknown interpolation {self.interpolate!r}; allowed: {', '.join(INTERPOLATIONS)}"
            )
        if not (isinstance(self.beta, (int, float)) and 0.0 <= self.beta <= 1.0):
            raise NBSVMError(f"beta must be in [0, 1], got {self.beta!r}")
        if self.weighting not in WEIGHTINGS:
            raise NBSVMError(
                f"unknown weighting {self.weighting!r}; allowed: {', '.join(WEIGHTINGS)}"
            )
        check_learner(self.learner)
        if self.learner in OPTIMIZERS and self.optimizer not in (None, self.learner):
            raise NBSVMError(
                f"learner {self.learner!r} is the built-in learner with optimizer "
                f"{self.learner!r}, not {self.optimizer!r}"
            )
        if self.learner == "ovr" and self.loss in MULTICLASS_LOSSES:
            raise NBSVMError(
                f"learner 'ovr' trains one output per class against the rest; "
                f"loss {self.loss!r} trains the classes together"
            )
        if self.learner == "multilabel" and not self.multilabel:
            raise NBSVMError("learner 'multilabel' needs multi-label data (--multilabel)")
        if self.backend_learner is not None and self.interpolate == "weights" and self.beta != 1.0:
            raise NBSVMError(
                f"interpolate='weights' needs the built-in learner's weights; "
                f"with learner {self.learner!r} use interpolate='scores'"
            )
        if self.norm is not None and self.norm not in NORMS:
            raise NBSVMError(f"unknown norm {self.norm!r}; allowed: {', '.join(NORMS)}")
        if self.weighting == "binary" and self.beta != 1.0:
            raise NBSVMError(
                f"weighting='binary' has no NB part to interpolate with: beta "
                f"must be 1, got {self.beta!r}"
            )

    def _check_numbers(self) -> None:
        """The numbers: lambda, alpha, eta0, epochs, min_df, threads, seed."""
        for name in ("lam", "alpha"):
            v = getattr(self, name)
            if not (
                isinstance(v, (int, float))
                and not isinstance(v, bool)
                and np.isfinite(v)
                and (v > 0 if name == "alpha" else v >= 0)
            ):
                raise NBSVMError(
                    f"{'lambda' if name == 'lam' else name} must be a "
                    f"{'positive' if name == 'alpha' else 'non-negative'} number, "
                    f"got {v!r}"
                )
        if not (
            self.eta0 in (None, "auto")
            or (
                isinstance(self.eta0, (int, float))
                and not isinstance(self.eta0, bool)
                and self.eta0 > 0
            )
        ):
            raise NBSVMError(f"eta0 must be a positive number or 'auto', got {self.eta0!r}")
        if not (
            self.epochs is None
            or (
                isinstance(self.epochs, int)
                and not isinstance(self.epochs, bool)
                and self.epochs >= 1
            )
        ):
            raise NBSVMError(f"epochs must be an integer >= 1, got {self.epochs!r}")
        if not (
            self.min_df is None
            or (
                isinstance(self.min_df, (int, np.integer))
                and not isinstance(self.min_df, bool)
                and self.min_df >= 1
            )
        ):
            raise NBSVMError(
                f"min_df must be an integer >= 1 or None (from the data), got {self.min_df!r}"
            )
        if not (
            isinstance(self.threads, int)
            and not isinstance(self.threads, bool)
            and 1 <= self.threads <= 64
        ):
            raise NBSVMError(f"threads must be an integer in [1, 64], got {self.threads!r}")
        if not (isinstance(self.seed, int) and self.seed >= 0):
            raise NBSVMError(f"seed must be an integer >= 0, got {self.seed!r}")

    def _check_modes(self) -> None:
        """auto and its budget and metric, the training modes, multi-label."""
        if not isinstance(self.auto, (bool, np.bool_)):
            raise NBSVMError(f"auto must be True or False, got {self.auto!r}")
        if not (
            isinstance(self.time_budget, (int, float))
            and not isinstance(self.time_budget, bool)
            and 0 < self.time_budget < float("inf")
        ):
            raise NBSVMError(
                f"time_budget must be a positive number of seconds, got {self.time_budget!r}"
            )
        allowed = ("micro_f1", "macro_f1") if self.multilabel else ("accuracy", "macro_f1")
        if self.auto_metric is not None and self.auto_metric not in allowed:
            raise NBSVMError(
                f"auto_metric must be None or one of {', '.join(allowed)}"
                f"{' (label sets)' if self.multilabel else ''}, got "
                f"{self.auto_metric!r}"
            )
        if self.auto_metric is not None and not self.auto:
            raise NBSVMError(
                "auto_metric ranks the auto search's trials (--auto-metric needs --auto)"
            )
        check_training_options(self)
        if not isinstance(self.multilabel, (bool, np.bool_)):
            raise NBSVMError(f"multilabel must be True or False, got {self.multilabel!r}")
        if self.multilabel and self.loss in MULTICLASS_LOSSES:
            raise NBSVMError(
                f"loss {self.loss!r} picks one class per document; multi-label "
                f"models take a margin loss (log, hinge, squared_hinge, "
                f"modified_huber)"
            )
        if self.multilabel and self.learner in ONE_CLASS:
            raise NBSVMError(
                f"learner {self.learner!r} picks one class per document; "
                f"multi-label models use one binary learner per label (the "
                f"built-in one, 'pa' or 'pegasos') or the multi-label hinge "
                f"('multilabel')"
            )
