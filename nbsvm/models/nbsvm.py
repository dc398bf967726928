"""NBSVMClassifier: hashed n-grams + NB lexicon + out-of-core linear learner + interpolation.

The flow of one :meth:`NBSVMClassifier.fit_documents` call:

1. without a lexicon, one streaming pass hashes every document once, counts the lexicon and
   writes the binary feature cache; with a lexicon, the first epoch trains while streaming
   and writing the cache;
2. the learner gets one column per bucket seen in at least ``min_df`` training documents
   (``self.column_of_`` maps buckets to columns, -1 for the others); without a lexicon the
   first epoch reads the cache of buckets, and a thread translates it to columns group by
   group while the previous group trains, writing the translated cache for the later
   epochs (:meth:`~nbsvm.data.features.FeatureCache.translated_groups`);
3. every further epoch replays the cache in a fresh seeded block shuffle
   (:meth:`~nbsvm.data.features.FeatureCache.shuffled_groups`);
4. the NB ratios sit beside the weights in the learner's state (the cache holds ids only).

Interpolation with NB (``beta``):

- ``scores`` (NBSVM-XL): ``f(x) = beta*(w.x + b) + (1-beta)*(log(N+/N-) + sum_i r_i)``;
- ``weights`` (Wang & Manning 2012): ``w' = (1-beta)*mean|w| + beta*w``, the mean taken over
  the buckets with a non-zero ratio (the buckets seen in training, up to exact ties).

Feature values (``weighting``): ``nb`` gives every kept bucket its ratio ``r``; ``binary``
gives it 1 (plain binarized n-grams, the same learner without NB weighting: Wang & Manning's
SVM baseline), which leaves no NB part to interpolate with, so ``beta`` must then be 1.

Memory: two classes are counted in releasable memory; after the pass one row becomes the
bucket-to-column map and the other is returned to the OS, so the peak is about
``2**n_bits * 8`` bytes of counts plus ``16`` bytes per kept column (AdaGrad).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import numpy as np

from nbsvm._params import Params
from nbsvm.lexicon.columns import ColumnBuilder, Columns
from nbsvm.config import BUCKET_DTYPE, DEFAULTS, MULTICLASS_DEFAULTS, MULTILABEL_DEFAULTS, TASK_PARAMS
from nbsvm.training.epochs import Epochs
from nbsvm.errors import NBSVMError, not_fitted
from nbsvm.data.features import Batch, FeatureCache, check_ids, hash_batch, translate
from nbsvm.training.fitting import Fit
from nbsvm.io.frames import texts_and_labels
from nbsvm.io.readers import Document
from nbsvm.io.labels import SEPARATOR, key_of, label_set, membership
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.models.modelfile import load_model, save_model
from nbsvm.training.partial import partial_fit
from nbsvm.learners.losses import MULTICLASS_LOSSES, check_loss, resolve_loss
from nbsvm.learners.sgd import LinearSGD, OPTIMIZERS, STATE_DTYPE
from nbsvm.learners.reduction import SHARED, NBReduction, check_learner
from nbsvm.text.hashing import Hasher

if TYPE_CHECKING:
    from nbsvm.data.cachestore import KeptCache
    from nbsvm.training.checkpoint import Checkpoint

INTERPOLATIONS = ("scores", "weights")
WEIGHTINGS = ("nb", "binary")    # feature value of a kept bucket: its NB ratio, or 1
NORMS = ("l2", "none")           # row scaling



def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))   # overflow-free logistic


def _check_columns(batch: Batch, n_columns: int) -> None:
    """Offsets non-decreasing within the ids and every id a column (one compiled pass)."""
    o = batch.offsets
    if o.shape[0] == 0 or o[0] != 0 or o[-1] > batch.ids.shape[0] or np.any(o[1:] < o[:-1]):
        raise NBSVMError("bad batch: offsets go backwards or beyond the ids")
    bad = check_ids(batch.ids, n_columns)
    if bad >= 0:
        raise NBSVMError(f"bad batch: column {int(batch.ids[bad])} outside [0, {n_columns})")


class NBSVMClassifier(Params):
    """NBSVM (Wang & Manning 2012) scaled out as in NBSVM-XL, in scikit-learn's style.

    Parameters
    ----------
    ngrams : int
        Word n-grams of orders 1..ngrams.
    n_bits : int
        Hash buckets ``2**n_bits``; every state array has that length.
    char_ngrams : int
        Length of character n-grams (0: none).
    hash_seed : int
        MurmurHash3 seed.
    alpha : float
        NB smoothing.
    min_df : int
        Keep only buckets seen in at least this many training documents (1: all).
    loss : {'log', 'hinge', 'squared_hinge', 'modified_huber'} or None
    optimizer : {'sgd', 'adagrad'} or None
    eta0 : float
        Initial step size.
    lam : float
        L2 strength (``--lambda`` on the command line).
    beta : float
        Interpolation weight of the linear model against NB, in [0, 1].
    interpolate : {'scores', 'weights'}
    weighting : {'nb', 'binary'}
        Feature value of a kept bucket: its NB ratio (NBSVM), or 1 (plain binarized
        features, no NB weighting; needs ``beta=1``).
    norm : {'l2', 'none'}
        Scale each document's feature values to unit L2 norm (per output: each class has
        its own ratios) in training and prediction, as TF-IDF does; for corpora whose
        documents run from two lines to thousands (20 Newsgroups). Models saved before this
        option had ``none``.

    learner : {None, 'pa', 'pegasos', 'mira', 'multiclass-hinge'}
        None: the built-in SGD / AdaGrad learner (``optimizer``, ``loss``). A name: that
        learner of the shared backend trained on the same NB-weighted rows
        (:mod:`nbsvm.learners.reduction`; ``lam`` is Pegasos' and the multi-class hinge's lambda).

    multilabel : bool
        Each document has a set of labels (``fit``'s ``y``: lists of labels or ``"a,b"``
        strings; files: ``a,b<TAB>text``). One output per label, trained on that label's
        NB ratios (its documents against the documents without it); a label is predicted
        when its score is above 0. :meth:`predict` gives an indicator matrix,
        :meth:`predict_label_sets` the label tuples, :meth:`score` the subset accuracy.

    ``loss``, ``optimizer``, ``eta0``, ``epochs`` and ``norm`` left at None take the
    default for the number of classes (:meth:`setting`): with two, ``log``, ``adagrad``,
    0.02, 10 and ``none`` (chosen on IMDB); with more, ``modified_huber``, ``sgd``,
    ``auto``, 5 and ``lam`` (one-vs-rest on 20 Newsgroups: 86.7% instead of 80.4%, in half
    the time and memory; :data:`nbsvm.config.MULTICLASS_DEFAULTS`).
    epochs : int
    seed : int
        Seeds the per-epoch shuffles.
    threads : int
        Hogwild! threads for AdaGrad epochs (1: single-threaded and bit-for-bit
        reproducible for a given seed; more: faster on several cores, results vary in the
        last digits from run to run).
    cache_dir : str, optional
        Where the temporary feature cache goes (default: the system's temp folder).

    Attributes
    ----------
    classes_ : list of str
    class_counts_ : int array
        Training documents per class (per label).
    hasher_ : Hasher
    linear_ : LinearSGD
        The built-in learner: per output and kept column the NB value, the weight (and
        AdaGrad's sum); the backend learner's feature values with ``learner``.
    column_of_ : int32 array or None
        Bucket -> column of ``linear_`` (-1: the bucket has no column); None while a model
        grows by :meth:`partial_fit` (columns are buckets).
    backend_ : NBReduction
        With ``learner``: the backend learner(s).

    Examples
    --------
    >>> clf = NBSVMClassifier(ngrams=2, n_bits=12, epochs=5)
    >>> clf = clf.fit(["a great film", "great fun", "an awful film", "awful, dull"],
    ...               ["pos", "pos", "neg", "neg"])
    >>> clf.predict(["great", "awful"]).tolist()
    ['pos', 'neg']
    """

    def __init__(self, ngrams=DEFAULTS["ngrams"], n_bits=DEFAULTS["n_bits"],
                 char_ngrams=DEFAULTS["char_ngrams"], hash_seed=DEFAULTS["hash_seed"],
                 alpha=DEFAULTS["alpha"], min_df=DEFAULTS["min_df"], loss=None,
                 optimizer=None, eta0=None, lam=DEFAULTS["lam"], beta=DEFAULTS["beta"],
                 interpolate=DEFAULTS["interpolate"], epochs=None,
                 seed=DEFAULTS["seed"], threads=DEFAULTS["threads"], cache_dir=None,
                 weighting="nb", norm=None, learner=None, multilabel=False):
        self.ngrams = ngrams
        self.n_bits = n_bits
        self.char_ngrams = char_ngrams
        self.hash_seed = hash_seed
        self.alpha = alpha
        self.min_df = min_df
        self.loss = loss
        self.optimizer = optimizer
        self.eta0 = eta0
        self.lam = lam
        self.beta = beta
        self.interpolate = interpolate
        self.epochs = epochs
        self.seed = seed
        self.threads = threads
        self.cache_dir = cache_dir
        self.weighting = weighting
        self.norm = norm
        self.learner = learner
        self.multilabel = multilabel

    # -- parameters -----------------------------------------------------------------------
    # -- scikit-learn protocol (scikit-learn is never imported unless it asks) -------------
    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(),
                    input_tags=InputTags(one_d_array=True, two_d_array=False, string=True))

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "linear_")

    def _hasher(self) -> Hasher:
        return Hasher(ngrams=self.ngrams, n_bits=self.n_bits, char_ngrams=self.char_ngrams,
                      seed=self.hash_seed)

    def setting(self, name: str, classes: list | None = None):
        """The value of parameter ``name`` this model trains with: the parameter, or when it
        is None (one of :data:`~nbsvm.config.TASK_PARAMS`), the default for the number of
        classes (known once fitted, or after the training data is counted), or for
        multi-label models :data:`~nbsvm.config.MULTILABEL_DEFAULTS`. ``classes``: for
        these classes instead of the fitted ones."""
        value = getattr(self, name)
        if classes is None:
            classes = self.__dict__.get("classes_")
        if name == "loss" and value in MULTICLASS_LOSSES and classes is not None \
                and self.n_outputs(classes) == 1:
            # two classes have one output: the multi-class loss is its binary form
            return {"softmax": "log", "multiclass_hinge": "hinge"}[value]
        if value is not None or name not in TASK_PARAMS:
            return value
        if self.multilabel:
            return MULTILABEL_DEFAULTS[name]
        if classes is None:
            raise NBSVMError(f"{name} follows the number of classes, which is not known "
                             "before fitting")
        return (MULTICLASS_DEFAULTS if self.n_outputs(classes) > 1 else DEFAULTS)[name]

    def n_outputs(self, classes: list | None = None) -> int:
        """Weight vectors: one for two classes, else one per class (per label when
        ``multilabel``); for ``classes``, or the fitted ones."""
        k = len(self.classes_ if classes is None else classes)
        return k if self.multilabel or k > 2 else 1

    def validate(self) -> Hasher:
        """Check every parameter (an error says what is allowed); return the hasher they
        make."""
        if self.loss is not None:
            check_loss(self.loss)
        if self.optimizer is not None and self.optimizer not in OPTIMIZERS:
            raise NBSVMError(f"unknown optimizer {self.optimizer!r}; allowed: {', '.join(OPTIMIZERS)}")
        if self.interpolate not in INTERPOLATIONS:
            raise NBSVMError(f"unknown interpolation {self.interpolate!r}; allowed: "
                             f"{', '.join(INTERPOLATIONS)}")
        if not (isinstance(self.beta, (int, float)) and 0.0 <= self.beta <= 1.0):
            raise NBSVMError(f"beta must be in [0, 1], got {self.beta!r}")
        if self.weighting not in WEIGHTINGS:
            raise NBSVMError(f"unknown weighting {self.weighting!r}; allowed: "
                             f"{', '.join(WEIGHTINGS)}")
        check_learner(self.learner)
        if self.learner is not None and self.interpolate == "weights" and self.beta != 1.0:
            raise NBSVMError(f"interpolate='weights' needs the built-in learner's weights; "
                             f"with learner {self.learner!r} use interpolate='scores'")
        if self.norm is not None and self.norm not in NORMS:
            raise NBSVMError(f"unknown norm {self.norm!r}; allowed: {', '.join(NORMS)}")
        if self.weighting == "binary" and self.beta != 1.0:
            raise NBSVMError(f"weighting='binary' has no NB part to interpolate with: beta "
                             f"must be 1, got {self.beta!r}")
        for name in ("lam", "alpha"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)
                    and (v > 0 if name == "alpha" else v >= 0)):
                raise NBSVMError(f"{'lambda' if name == 'lam' else name} must be a "
                                 f"{'positive' if name == 'alpha' else 'non-negative'} number, "
                                 f"got {v!r}")
        if not (self.eta0 in (None, "auto") or (isinstance(self.eta0, (int, float))
                                        and not isinstance(self.eta0, bool) and self.eta0 > 0)):
            raise NBSVMError(f"eta0 must be a positive number or 'auto', got {self.eta0!r}")
        if not (self.epochs is None or (isinstance(self.epochs, int)
                                        and not isinstance(self.epochs, bool)
                                        and self.epochs >= 1)):
            raise NBSVMError(f"epochs must be an integer >= 1, got {self.epochs!r}")
        if not (isinstance(self.min_df, (int, np.integer)) and self.min_df >= 1):
            raise NBSVMError(f"min_df must be an integer >= 1, got {self.min_df!r}")
        if not (isinstance(self.threads, int) and not isinstance(self.threads, bool)
                and 1 <= self.threads <= 64):
            raise NBSVMError(f"threads must be an integer in [1, 64], got {self.threads!r}")
        if not (isinstance(self.seed, int) and self.seed >= 0):
            raise NBSVMError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.multilabel, (bool, np.bool_)):
            raise NBSVMError(f"multilabel must be True or False, got {self.multilabel!r}")
        if self.multilabel and self.loss in MULTICLASS_LOSSES:
            raise NBSVMError(f"loss {self.loss!r} picks one class per document; multi-label "
                             f"models take a margin loss (log, hinge, squared_hinge, "
                             f"modified_huber)")
        if self.multilabel and self.learner in SHARED:
            raise NBSVMError(f"learner {self.learner!r} picks one class per document; "
                             f"multi-label models use one binary learner per label (the "
                             f"built-in one, 'pa' or 'pegasos')")
        return self._hasher()

    # -- training -------------------------------------------------------------------------
    def fit(self, X, y=None, *, text_col: str = "text",
            label_col: str = "label") -> "NBSVMClassifier":
        """Fit on texts ``X`` and labels ``y``.

        ``X`` is any sequence of strings (list, numpy array, pandas Series, a one-column
        2-D array or DataFrame) or a DataFrame with columns ``text_col`` and, when ``y`` is
        None, ``label_col``. Labels may be any values: the model's ``classes_`` are their
        strings and :meth:`predict` returns the original values (ints stay ints).
        """
        texts, labels = texts_and_labels(X, y, text_col, label_col)
        if labels is None:
            raise NBSVMError("fit needs labels: y, or a DataFrame with a label column")
        if self.multilabel:       # label sets: lists of labels, or 'a,b' strings
            docs = (Document(key_of(label), text, "<fit>", i + 1)
                    for i, (text, label) in enumerate(zip(texts, labels)))
            self.fit_documents(docs)
            self._label_values = None
            return self
        docs = (Document(str(label), text, "<fit>", i + 1)
                for i, (text, label) in enumerate(zip(texts, labels)))
        self.fit_documents(docs)
        self._remember_label_values(labels)
        return self

    def _remember_label_values(self, labels, update=False) -> None:
        """Keep the original label values (ints, bools, ...) for :meth:`predict`."""
        values = {} if not update else dict(getattr(self, "_label_values", None) or {})
        for v in labels:
            if not isinstance(v, str):
                values.setdefault(str(v), v.item() if isinstance(v, np.generic) else v)
        self._label_values = values or None

    def fit_documents(self, docs: Iterable[Document], lexicon: NBLexicon | None = None,
                      callback: Callable[[dict], None] | None = None,
                      max_memory=None, kept: "KeptCache | None" = None,
                      checkpoint: "Checkpoint | None" = None) -> "NBSVMClassifier":
        """Fit on a stream of :class:`~nbsvm.io.Document` (see the module docstring).

        ``callback`` receives progress events: ``{"stage": "hash"|"count"|"epoch"|
        "checkpoint"|"cache", ...}``. Before allocating, the memory training needs is
        estimated from ``n_bits`` (:mod:`nbsvm.memory`) and checked against ``max_memory``
        (bytes or ``"2G"``) and the memory available; again, exactly, once the kept buckets
        are known. ``kept`` (:class:`~nbsvm.data.cachestore.KeptCache`) reads the hashed data from
        an earlier run, or keeps it for later ones; then ``docs`` is only read when there is
        no usable kept cache. ``checkpoint`` (:class:`~nbsvm.training.checkpoint.Checkpoint`) saves
        the state every few epochs and resumes from it.
        """
        fit = Fit(self, lexicon, callback, max_memory, kept, checkpoint)
        del lexicon             # the run holds the only reference: freed once adopted
        fit.run(docs)
        return self

    def forget(self) -> None:
        """Drop every learned attribute (a new fit starts from nothing)."""
        for attr in ("linear_", "lexicon_", "column_of_", "_label_values", "classes_",
                     "backend_"):
            self.__dict__.pop(attr, None)

    def partial_fit(self, X: Iterable[str], y: Iterable, classes=None) -> "NBSVMClassifier":
        """One pass over a batch, continuing from the current state.

        The first call on an unfitted model needs ``classes`` (every label). While a model
        grows by ``partial_fit`` its lexicon counts grow too and the ratios are recomputed
        for each batch (O(2**n_bits) per call: use large batches). After :meth:`fit` or
        :meth:`load` the lexicon is frozen and only the learner keeps learning. Every task
        (``multilabel``: ``y`` holds label sets) and every ``learner``; see
        :mod:`nbsvm.training.partial`.
        """
        return partial_fit(self, X, y, classes)

    def start_from_lexicon(self, lexicon: NBLexicon) -> None:
        """Take classes, counts and NB ratios from ``lexicon`` (weights zero), as a fit
        given that lexicon starts (Dask's trainer builds it across workers)."""
        self.adopt(ColumnBuilder(self, lexicon.hasher).from_lexicon(lexicon, None,
                                                                    alpha=self.alpha))

    def adopt(self, columns: Columns) -> None:
        """Adopt what counting built (:mod:`nbsvm.lexicon.columns`) as the learned state."""
        self.classes_, self.class_counts_ = columns.classes, columns.class_counts
        self.n_seen_buckets_ = columns.n_seen_buckets
        self.column_of_, self.linear_ = columns.column_of, columns.linear
        self.hasher_ = self._hasher()

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
        return LinearSGD(n_columns, n_outputs=self.n_outputs(classes),
                         loss=self.setting("loss", classes),
                         optimizer=self.setting("optimizer", classes), eta0=eta0 or 1.0,
                         lam=self.lam, threads=self.threads,
                         unit=self.setting("norm", classes) == "l2")

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
                raise NBSVMError(f"unknown label {label!r}; the model knows {self.classes_}",
                                 **where)
            out[i] = code
        return out

    def check_labels(self, labels: list, first_seen: list) -> None:
        """Raise, naming where it was first seen, if a label is not one of ``classes_``."""
        for label, where in zip(labels, first_seen):
            if label not in self.classes_:
                raise NBSVMError(f"unknown label {label!r}; the model knows {self.classes_}",
                                 **(where or {}))

    def targets_in(self, cache: FeatureCache):
        """Each output's positive class as a code of the cache (-1: absent from the data)."""
        if self.multilabel:         # codes are label sets: a membership matrix
            for key, where in zip(cache.labels, cache.first_seen):
                self.check_labels(list(label_set(key)), [where] * len(label_set(key)))
            return membership(self.classes_, list(cache.labels))
        self.check_labels(cache.labels, cache.first_seen)
        code = {label: i for i, label in enumerate(cache.labels)}
        return [code.get(self.classes_[k], -1) for k in self.positive_codes()]

    def epochs_for(self, notify) -> Epochs:
        """The epoch driver of this model's learner (the built-in one, or the backend's)."""
        return Epochs(self.linear_, getattr(self, "backend_", None) if self.learner else None,
                      self.setting("epochs"), notify)

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
        else:               # columns from elsewhere: the kernels index the weights with them
            _check_columns(batch, self.linear_.n_features)
        if self.learner is not None:
            scores = self.backend_.decision(self.linear_.S_[:, :, 0], batch.ids,
                                            batch.offsets, self.unit_rows())
        else:
            scores = self.linear_.decision(batch.ids, batch.offsets)
        if self.beta == 1.0:
            return scores
        nb = self.linear_.table_sums(batch.ids, batch.offsets,
                                      unit=self.interpolate == "weights" and self.unit_rows())
        if self.interpolate == "scores":
            prior = np.array([self._log_prior(k) for k in range(scores.shape[1])])
            return self.beta * scores + (1.0 - self.beta) * (prior + nb)
        # weights: sum_i r_i ((1-beta) mean|w| + beta w_i) + b
        b = self.linear_.intercept()
        return self.beta * (scores - b) + (1.0 - self.beta) * self.mean_abs_coef_ * nb + b

    def _log_prior(self, k: int) -> float:
        counts = self.class_counts_.astype(np.float64)
        if self.n_outputs() == 1:
            return float(np.log(counts[1] / counts[0]))
        rest = (self.n_docs_ if self.multilabel else counts.sum()) - counts[k]
        return float(np.log(max(counts[k], 0.5) / max(rest, 0.5)))

    def _batches(self, X) -> Iterator[Batch]:
        docs = [Document(None, text, "<input>", i + 1) for i, text in enumerate(X)]
        for start in range(0, len(docs), 4096):
            yield hash_batch(docs[start:start + 4096], self.hasher_)

    def decision_function(self, X, *, text_col: str = "text") -> np.ndarray:
        """Scores: shape ``(n,)`` for two classes (positive = ``classes_[1]``), else ``(n, K)``."""
        self.check_fitted()
        texts, _ = texts_and_labels(X, None, text_col, None)
        parts = [self.decision_batch(b) for b in self._batches(texts)]
        n_out = self.linear_.n_outputs
        scores = np.concatenate(parts) if parts else np.zeros((0, n_out))
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def labels_of(self, scores: np.ndarray) -> np.ndarray:
        """The predicted label of each row of scores (multi-label: the key ``"a,b"`` of the
        labels whose score is above 0, ``""`` for none)."""
        classes = np.asarray(self.classes_, dtype=object)
        if self.multilabel:
            return np.asarray([SEPARATOR.join(classes[row > 0]) for row in
                               np.asarray(scores).reshape(len(scores), -1)], dtype=object)
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.ndim == 1:
            return classes[(scores > 0).astype(int)]
        return classes[np.argmax(scores, axis=1)]

    def has_proba(self) -> bool:
        """Whether the scores are probabilities' logits or margins (the built-in learner with
        the log or modified Huber loss; the backend learners' margins are not)."""
        loss = self.setting("loss")
        return self.learner is None and (loss == "softmax" or (
            loss not in MULTICLASS_LOSSES and resolve_loss(loss).has_proba))

    def proba_of(self, scores: np.ndarray) -> np.ndarray:
        """Class probabilities from scores, shape ``(n, K)`` (log, modified Huber and
        softmax losses)."""
        loss = self.setting("loss")
        if self.learner is not None:
            raise NBSVMError(f"learner {self.learner!r} gives margins, not probabilities")
        if not self.has_proba():
            raise NBSVMError(f"loss {loss!r} gives no probabilities; use 'log', "
                             "'modified_huber' or 'softmax'")
        if loss == "softmax":
            z = np.exp(scores - scores.max(axis=1, keepdims=True))
            return z / z.sum(axis=1, keepdims=True)
        if scores.ndim == 2 and scores.shape[1] == 1 and not self.multilabel:
            scores = scores[:, 0]
        if loss == "modified_huber":
            p = (np.clip(scores, -1, 1) + 1) / 2
        else:
            p = _sigmoid(scores)
        if self.multilabel:             # each label on its own: no normalization
            return p.reshape(len(p), -1)
        if p.ndim == 1:
            return np.column_stack([1 - p, p])
        total = p.sum(axis=1, keepdims=True)
        return np.where(total > 0, p / np.where(total > 0, total, 1), 1.0 / p.shape[1])

    def predict(self, X, *, text_col: str = "text") -> np.ndarray:
        """Predicted labels: the values given to :meth:`fit` (strings after :meth:`load`).

        Multi-label: an indicator matrix ``(n, len(classes_))`` of 0 / 1 (scikit-learn's
        form; :meth:`predict_label_sets` gives the label tuples)."""
        if self.multilabel:
            scores = self.decision_function(X, text_col=text_col).reshape(-1, self.n_outputs())
            return (scores > 0).astype(np.int64)
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
        return [label_set(key) for key in
                self.labels_of(self.decision_function(X, text_col=text_col))]

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

    # -- files ----------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the model atomically: seen buckets only, as .npz with a JSON header
        (:mod:`nbsvm.models.modelfile`)."""
        save_model(self, path)

    @classmethod
    def load(cls, path) -> "NBSVMClassifier":
        """Read a model file written by :meth:`save`, checking every array."""
        return load_model(cls, path)
