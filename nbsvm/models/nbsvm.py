"""NBSVMClassifier: hashed n-grams + NB lexicon + out-of-core linear learner + interpolation.

The flow of one :meth:`NBSVMClassifier.fit_documents` call:

1. without a lexicon, one streaming pass hashes every document once, counts the lexicon and
   writes the binary feature cache; with a lexicon, the first epoch trains while streaming
   and writing the cache;
2. the learner gets one column per bucket seen in at least ``min_df`` training documents
   (``self.column_of_`` maps buckets to columns, -1 for the others); without a lexicon the
   first epoch reads the cache of buckets, and a thread translates it to columns group by
   group while the previous group trains, writing the translated cache for the later
   epochs (:meth:`~nbsvm.data.cache.FeatureCache.translated_groups`);
3. every further epoch replays the cache in a fresh seeded block shuffle
   (:meth:`~nbsvm.data.cache.FeatureCache.shuffled_groups`);
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

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from nbsvm._params import Params, store_params
from nbsvm.config import DEFAULTS
from nbsvm.errors import NBSVMError
from nbsvm.io.document import Document, rereadable_or_none
from nbsvm.io.frames import sample_weights, texts_and_labels
from nbsvm.io.labels import class_order, key_of, keys_by_value, names_by_value, values_of_names
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.models import history
from nbsvm.models import prediction as _prediction
from nbsvm.models import settings as _settings
from nbsvm.models.modelfile import load_model, save_model

if TYPE_CHECKING:
    import pandas as pd

    from nbsvm.data.batches import Batch
    from nbsvm.data.cachestore import KeptCache, ReadyCache
    from nbsvm.learners.calibrator import Calibrator
    from nbsvm.learners.reduction import NBReduction
    from nbsvm.learners.sgd import LinearSGD
    from nbsvm.learners.targets import Labels
    from nbsvm.models._types import Callback, Documents, LabelValues, MemoryLimit, Texts
    from nbsvm.models.checkpoint import Checkpoint
    from nbsvm.text.hashing import Hasher


#: What a model keeps beside its learned attributes (named with a trailing ``_``).
PRIVATE_STATE = ("_label_values", "_calibrator", "_peeked")


class NBSVMClassifier(Params):
    """NBSVM (Wang & Manning 2012) scaled out as in NBSVM-XL, in scikit-learn's style.

    Parameters
    ----------
    ngrams : int
        Word n-grams of orders 1..ngrams.
    n_bits : int
        Hash buckets ``2**n_bits``; every state array has that length.
    char_ngrams : int or None
        Length of character n-grams (0: none). None (the default): 4 when the first
        2,000 training documents' median is under 100 distinct word n-grams (sentences,
        titles, phrases), else 0, read before the hashing pass (``char_ngrams_``;
        :func:`nbsvm.config.data_default`); :meth:`partial_fit` reads its first batch.
    hash_seed : int
        MurmurHash3 seed.
    alpha : float or None
        NB smoothing. None (default): 1 with two classes, 0.5 with more and for
        multi-label models (:data:`nbsvm.config.MULTICLASS_DEFAULTS`).
    min_df : int or None
        Keep only buckets seen in at least this many training documents (1: all). None
        (default): from the data after the first pass, 1 for a small training set of short
        texts (under 2 million n-gram occurrences in all, the median document under 300
        distinct n-grams), else 2 (:func:`nbsvm.config.data_default`;
        2 when the training data is not hashed by the fit: a given lexicon, partial_fit,
        Dask).
    loss : {'log', 'hinge', 'squared_hinge', 'modified_huber'} or None
    optimizer : {'sgd', 'adagrad'} or None
    eta0 : float, 'auto' or None
        Initial step size; 'auto': Bottou's calibration on a sample. None: by the task;
        for two classes with AdaGrad, from the data: ``0.02 (400 / m) ** 0.7`` within
        [0.02, 0.5], ``m`` the median distinct n-grams per training document (longer
        documents keep 0.02, IMDB's choice; short sentences get larger steps).
    lam : float or None
        L2 strength (``--lambda`` on the command line). None: 1e-4, and 1e-5 for the
        softmax loss over more than two classes.
    beta : float
        Interpolation weight of the linear model against NB, in [0, 1].
    interpolate : {'scores', 'weights'}
    weighting : {'nb', 'binary'}
        Feature value of a kept bucket: its NB ratio (NBSVM), or 1 (plain binarized
        features, no NB weighting; needs ``beta=1``).
    norm : {'l2', 'none'}
        Scale each document's feature values to unit L2 norm (per output: each class has
        its own ratios) in training and prediction, as TF-IDF does; for corpora whose
        documents run from two lines to thousands (20 Newsgroups), and for phrases. None:
        ``l2`` with more classes; with two, from the data: ``l2`` when the median training
        document holds fewer than 16 distinct n-grams (MPQA), else ``none``. Models saved
        before this option had ``none``.

    learner : str or None
        None, 'adagrad', 'sgd', 'ovr': the built-in SGD / AdaGrad learner (``optimizer``,
        ``loss``). A name of :data:`nbsvm.learners.registry.TEXT_LEARNERS` (the registry's
        learners offered on text: ``pa``, ``pegasos``, ``mira``, ...): that learner of the
        shared backend trained on the same NB-weighted rows
        (:mod:`nbsvm.learners.reduction`; ``lam`` goes to the parameter the registry names).

    multilabel : bool
        Each document has a set of labels (``fit``'s ``y``: lists of labels or ``"a,b"``
        strings; files: ``a,b<TAB>text``). One output per label, trained on that label's
        NB ratios (its documents against the documents without it); a label is predicted
        when its score is above 0. :meth:`predict` gives an indicator matrix,
        :meth:`predict_label_sets` the label tuples, :meth:`score` the subset accuracy.
    auto : bool
        Search the settings on held-out parts of the training data within ``time_budget``
        seconds (:mod:`nbsvm.models.auto`: successive halving, the one-standard-error
        rule), set the chosen ones on this estimator and train on all the data with them.
        ``auto_`` records what changed and why (saved in the model file), and in ``"set"``
        the parameters the search set: a later ``fit`` searches those again unless they
        were changed since. Parameters set to other values than their defaults stay as
        given. Needs data that can be read
        twice (``fit``'s lists, a list or a callable for ``fit_documents``).
    time_budget : float
        Seconds the ``auto`` search may take (its reading pass included; the final
        training comes after), predicted from the work of its trials for a 2-core
        reference machine (:mod:`nbsvm.models.auto`), so that the search and its choice
        are the same on any machine; the wall clock stops it only at three times the
        budget.
    auto_metric : None, 'accuracy', 'macro_f1' or 'micro_f1'
        What the ``auto`` search ranks by on the held-out parts. ``None``: accuracy
        (micro F1 for label sets). ``macro_f1`` weighs every class alike: with a rare class
        that matters, accuracy rewards ignoring it. ``micro_f1`` is for label sets only.
    threshold : None or 'auto'
        Multi-label only: ``'auto'`` tunes the labels' decision thresholds for micro F1 on
        a held-out tenth of the training documents (:mod:`nbsvm.models.thresholds`; kept
        in ``thresholds_``, saved with the model, used by predict, eval and serve); None
        predicts a label above 0 (calibrated: above probability 0.5).
    class_weight : None, 'balanced' or dict
        Weigh each document's loss and step by its class's weight (scikit-learn's
        ``class_weight``): ``{"pos": 5}`` (classes not named weigh 1), or ``balanced``,
        ``n / (n_classes * n_c)`` from the training counts. The NB lexicon is unaffected.
        Two classes weigh positives and negatives by their classes; one against the rest
        (and multi-label) weighs output k's positives by class k's weight and its negatives
        by 1, as scikit-learn's SGDClassifier and liblinear do. Built-in learner only.
    char_min : int
        With ``char_ngrams``: character n-grams of every length ``char_min..char_ngrams``
        (0: only ``char_ngrams``), as fastText's ``-minn``/``-maxn``.
    lowercase : bool
        Lowercase the text before tokenizing (False: keep case).
    split_scripts : bool
        Every character of the scripts written without spaces between words (Chinese,
        Japanese, Thai, Lao, Khmer, Myanmar, ...; :mod:`nbsvm.text.scripts`) and the
        fullwidth and CJK punctuation is a token of its own, so that the word n-grams over
        such text are its character n-grams; Latin words and Korean (written with spaces)
        stay words. Models saved before the option load with False, as they were trained.
    nfkc : bool
        Unicode NFKC normalization before lowercasing: fullwidth letters and digits
        (``Ｇｏｏｄ１``) read as ASCII, halfwidth katakana as katakana, ``…`` as ``...``.
    long_words : int
        Without ``char_ngrams``, a token of more than this many characters also gives its
        character 4-grams (0: off): text written without spaces, where a "word" is a whole
        phrase seen once. Ordinary words are shorter and stay words. Models saved before
        the option load with 0.
    early_stopping : bool
        Hold out ``validation_fraction`` of the training documents, report the accuracy on
        them after every epoch, stop when it has not improved for ``n_iter_no_change``
        epochs and keep the best epoch's weights (scikit-learn's names;
        :mod:`nbsvm.models.early_stopping`). ``validation_`` records the run.
    validation_fraction : float
    n_iter_no_change : int
    keep_counts : bool
        Keep the NB lexicon's counts (per class, every bucket seen) in ``lexicon_`` and in
        the model file, so that :meth:`continue_fit` (``train --init``) and
        :meth:`partial_fit` after :meth:`load` add new documents' counts to them
        (:mod:`nbsvm.models.warm`). The documents are read twice (a counting pass first);
        the file grows by about 4 bytes per class and bucket seen, plus 4 per bucket.
    calibrate : {'auto', None, 'sigmoid', 'isotonic', 'temperature'}
        ``'auto'`` (the default): after training, one temperature fitted on the scores of a
        copy trained without a tenth of the documents, where the learner's probabilities
        are known to be off: more than two classes, two of which one holds under a
        quarter of the documents, or scores interpolated with NB (``beta`` under 1), the
        last two from 500 documents on (built-in learner, one label per document, without
        ``keep_counts``); the labels stay those of the model trained on
        all. Skipped, with a ``"calibration skipped"`` event, when the documents cannot be
        read twice. None: never. Otherwise fit a probability calibration (:mod:`nbsvm.models.calibrate`): train without a
        tenth of the documents, fit Platt scaling (``sigmoid``), isotonic regression (for a
        thousand held-out documents or more) or one temperature for all classes (keeps the
        labels; best with many classes) on that tenth's scores, then train on all; ``calibrator_`` maps scores to probabilities (every loss and learner then has
        :meth:`predict_proba`, and labels are the most probable classes) and
        ``calibration_report_`` holds the held-out expected calibration error before and
        after. Needs data that can be read again, as ``auto``.

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
    classes_ : Labels
        The classes as ``y`` gave them (ints stay ints, as scikit-learn's scorers expect);
        classes that are numbers in value order, others in text order.
    class_names_ : Labels
        The same classes as text: what model files, the CLI and the lexicon name them by.
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

    Notes
    -----
    ``loss``, ``optimizer``, ``eta0``, ``epochs`` and ``norm`` left at None take the
    default for the number of classes (:meth:`setting`): with two, ``log``, ``adagrad``,
    0.02, 10 and ``none`` (chosen on IMDB; eta0 and norm then follow the data); with more,
    ``modified_huber``, ``sgd``, ``auto``, 5 and ``l2`` (one-vs-rest on 20 Newsgroups:
    86.7% instead of 80.4%, in half the time and memory;
    :data:`nbsvm.config.MULTICLASS_DEFAULTS`).

    Examples
    --------
    >>> clf = NBSVMClassifier(ngrams=2, n_bits=12, epochs=5)
    >>> clf = clf.fit(["a great film", "great fun", "an awful film", "awful, dull"],
    ...               ["pos", "pos", "neg", "neg"])
    >>> clf.predict(["great", "awful"]).tolist()
    ['pos', 'neg']
    """

    if TYPE_CHECKING:  # the parameters' types, and learned state the fit sets
        ngrams: int
        n_bits: int
        char_ngrams: int | None
        hash_seed: int
        alpha: float | None
        min_df: int | None
        loss: str | None
        optimizer: str | None
        eta0: float | str | None
        lam: float | None
        beta: float
        interpolate: str
        epochs: int | None
        seed: int
        threads: int
        cache_dir: str | None
        weighting: str
        norm: str | None
        learner: str | None
        multilabel: bool
        auto: bool
        time_budget: float
        auto_metric: str | None
        calibrate: str | None
        threshold: str | None
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
        class_names_: Labels
        char_ngrams_: int
        class_counts_: np.ndarray
        n_docs_: int
        weight_sum_: float
        hasher_: Hasher
        linear_: LinearSGD
        column_of_: np.ndarray | None
        backend_: NBReduction
        mean_abs_coef_: np.ndarray
        thresholds_: np.ndarray
        n_seen_buckets_: int
        timings_: dict
        ngram_map_: dict[int, list[tuple[str, int]]]
        calibration_report_: dict
        validation_: dict
        eta0_: float
        lexicon_: NBLexicon
        quantized_: dict
        fitted_multilabel_: bool
        fitted_class_weight_: dict | str | None
        auto_: dict
        auto_table_: pd.DataFrame
        corpus_: dict

    def __init__(
        self,
        ngrams=DEFAULTS["ngrams"],
        n_bits=DEFAULTS["n_bits"],
        char_ngrams=None,
        hash_seed=DEFAULTS["hash_seed"],
        alpha=None,
        min_df=None,
        loss=None,
        optimizer=None,
        eta0=None,
        lam=None,
        beta=DEFAULTS["beta"],
        interpolate=DEFAULTS["interpolate"],
        epochs=None,
        seed=DEFAULTS["seed"],
        threads=DEFAULTS["threads"],
        cache_dir=None,
        weighting="nb",
        norm=None,
        learner=None,
        multilabel=False,
        auto=False,
        time_budget=60.0,
        auto_metric=None,
        calibrate="auto",
        threshold=None,
        class_weight=None,
        keep_counts=False,
        char_min=0,
        lowercase=True,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=2,
        split_scripts=DEFAULTS["split_scripts"],
        nfkc=DEFAULTS["nfkc"],
        long_words=DEFAULTS["long_words"],
    ):
        store_params(self, locals())

    # -- scikit-learn protocol (scikit-learn is never imported unless it asks) -------------
    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
            input_tags=InputTags(one_d_array=True, two_d_array=False, string=True),
        )

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "linear_")

    def __sklearn_clone__(self) -> NBSVMClassifier:
        """An unfitted copy with the parameters as given: those ``auto=True`` chose (it
        writes them into the parameters) are searched again, not taken as the user's (a
        clone of a fitted auto model cross-validated with the settings it chose on every
        fold, the test folds among them)."""
        import copy

        from nbsvm.models.auto import given_params

        # (auto turned off after the fit keeps what the search chose, as given)
        auto = "auto_" in self.__dict__ and self.auto
        params = given_params(self) if auto else self.get_params()
        return type(self)(**copy.deepcopy(params))

    # -- training -------------------------------------------------------------------------
    def fit(
        self,
        X: Texts,
        y: LabelValues | None = None,
        *,
        text_col: str = "text",
        label_col: str = "label",
        sample_weight: Any = None,
    ) -> NBSVMClassifier:
        """Fit on texts ``X`` and labels ``y``.

        ``X`` is any sequence of strings (list, numpy array, pandas Series, a one-column
        2-D array or DataFrame) or a DataFrame with columns ``text_col`` and, when ``y`` is
        None, ``label_col``. Labels may be any values: the model's ``classes_`` are the
        values (ints stay ints, as scikit-learn's scorers look ``pos_label`` up in them),
        ordered by value when they are numbers (:func:`~nbsvm.io.labels.class_order`), and
        :meth:`predict` returns them; ``class_names_`` are their strings (the model file's
        names, the CLI's). Multi-label (``multilabel=True``): ``y`` holds a list of labels
        per document (or an ``'a,b'`` string), or is an indicator matrix ``(n, K)`` of 0 / 1
        whose columns become the classes ``0 .. K-1`` (what MultiLabelBinarizer gives;
        :func:`~nbsvm.io.frames.indicator_sets`).
        ``sample_weight``: each document's weight (finite, >= 0), multiplying its NB counts
        and its learner steps (built-in learner only).
        """
        _settings.check_multilabel(self.multilabel)  # before y is read by it
        texts, labels = texts_and_labels(X, y, text_col, label_col, self.multilabel)
        if labels is None:
            raise NBSVMError("fit needs labels: y, or a DataFrame with a label column")
        weights = sample_weights(sample_weight, len(texts))
        key = key_of if self.multilabel else str  # label sets: lists, or 'a,b' strings
        self.fit_documents(
            lambda: (
                Document(key(label), text, "<fit>", i + 1, w)
                for i, (text, label, w) in enumerate(zip(texts, labels, weights))
            )
        )
        self._remember_label_values(labels)
        _warn_number_strings(labels, self.multilabel)
        _warn_of_notes(self)
        return self

    def _remember_label_values(self, labels) -> None:
        """Keep the original label values (ints, bools, ...) for :meth:`predict` and
        ``classes_`` (multi-label: the values in the label lists)."""
        if self.multilabel:
            labels = [v for t in labels if not isinstance(t, str) for v in t]
        values: dict = {}
        for v in labels:
            if not isinstance(v, str):
                values.setdefault(str(v), v.item() if isinstance(v, np.generic) else v)
        self._label_values: dict | None = values or None

    def fit_documents(
        self,
        docs: Iterable[Document] | Callable[[], Iterable[Document]],
        lexicon: NBLexicon | None = None,
        callback: Callable[[dict], None] | None = None,
        max_memory: MemoryLimit | None = None,
        kept: KeptCache | ReadyCache | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> NBSVMClassifier:
        """Fit on a stream of :class:`~nbsvm.io.Document` (see the module docstring).

        ``callback`` receives progress events: ``{"stage": "hash"|"count"|"epoch"|
        "checkpoint"|"cache", ...}``. Before allocating, the memory training needs is
        estimated from ``n_bits`` (:mod:`nbsvm.memory`) and checked against ``max_memory``
        (bytes or ``"2G"``) and the memory available; again, exactly, once the kept buckets
        are known. ``kept`` (:class:`~nbsvm.data.cachestore.KeptCache`) reads the hashed data from
        an earlier run, or keeps it for later ones; then ``docs`` is only read when there is
        no usable kept cache. ``checkpoint`` (:class:`~nbsvm.models.checkpoint.Checkpoint`) saves
        the state every few epochs and resumes from it. ``docs`` may also be a callable
        returning the stream (``auto`` reads it twice).
        """
        # training's modules (and with them numba) load when a model trains: a command
        # that only loads one and predicts a few documents never imports them
        from nbsvm.models.calibrate import auto_calibrate
        from nbsvm.models.fitting import Fit
        from nbsvm.models.modes import mode_of, run_mode
        from nbsvm.models.run import FitRun
        from nbsvm.models.thresholds import refuse_with_lexicon, tune_thresholds

        try:
            refuse_with_lexicon(self, lexicon)
            docs = self.read_text_defaults(docs, lexicon, kept)
            mode = mode_of(self)  # calibrate, early_stopping, keep_counts, auto
            reread = rereadable_or_none(docs)
            if mode is not None:
                run_mode(self, mode, docs, lexicon, kept, checkpoint, callback, max_memory)
            else:
                fit = Fit(self, lexicon, callback, max_memory, kept, checkpoint)
                del lexicon  # the run holds the only reference: freed once adopted
                fit.run(docs() if callable(docs) else docs)
            if self.calibrate == "auto":
                auto_calibrate(self, reread, FitRun(callback, max_memory))
            if self.threshold == "auto":
                tune_thresholds(self, reread, FitRun(callback, max_memory))
        except BaseException:
            # a fit that fails leaves no model: not one half built (zero weights, or the
            # weights of a refit whose calibration failed), which said it was fitted
            self.forget()
            raise
        self.history_: list[dict] = []  # a fit starts the model's history afresh
        history.record(self, "fit", self.n_docs_)
        return self

    @overload
    def read_text_defaults(
        self,
        docs: Callable[[], Iterable[Document]],
        lexicon: NBLexicon | None = None,
        kept: KeptCache | ReadyCache | None = None,
    ) -> Callable[[], Iterable[Document]]: ...

    @overload
    def read_text_defaults(
        self,
        docs: Iterable[Document],
        lexicon: NBLexicon | None = None,
        kept: KeptCache | ReadyCache | None = None,
    ) -> Iterable[Document]: ...

    def read_text_defaults(
        self,
        docs: Documents,
        lexicon: NBLexicon | None = None,
        kept: KeptCache | ReadyCache | None = None,
    ) -> Documents:
        """Decide ``char_ngrams_`` when ``char_ngrams`` is None: from a prebuilt lexicon or
        kept cache, as they were hashed; else from a peek at the first
        :data:`~nbsvm.config.PEEK_DOCS` documents (their median distinct word n-grams).
        Returns the documents to read on: the same callable, list or tuple, or (any other
        iterable, which may be readable once only) the peeked documents followed by the
        rest. A callable with a ``peek(n)`` method (the CLI's inputs) is peeked through it,
        so that the peek is not counted as a read; the same callable or list is peeked once
        per fit (``nbsvm train`` hands it on from the job to the fit)."""
        return _settings.read_text_defaults(self, docs, lexicon, kept)

    def continue_fit(
        self,
        X: Texts,
        y: LabelValues | None = None,
        *,
        text_col: str = "text",
        label_col: str = "label",
        callback: Callback | None = None,
        sample_weight: Any = None,
    ) -> NBSVMClassifier:
        """Train further on new documents ``X``, ``y`` (as :meth:`fit` takes them, with
        their ``sample_weight``): their
        counts join the lexicon's, and the weights, AdaGrad's sums and the step counters
        continue from this model's (``train --init``; :mod:`nbsvm.models.warm` says what
        equals one training on all the data). The model must have been fitted with
        ``keep_counts``."""
        texts, labels = texts_and_labels(
            X, y, text_col, label_col, self.multilabel, columns=self.classes_
        )
        if labels is None:
            raise NBSVMError("continue_fit needs labels: y, or a DataFrame with a label column")
        keys = self.names_of(labels)
        weights = sample_weights(sample_weight, len(texts))
        return self.continue_documents(
            lambda: (
                Document(k, t, "<fit>", i + 1, w)
                for i, (t, k, w) in enumerate(zip(texts, keys, weights))
            ),
            callback=callback,
        )

    def continue_documents(
        self,
        docs: Documents,
        callback: Callback | None = None,
        max_memory: MemoryLimit | None = None,
    ) -> NBSVMClassifier:
        """:meth:`continue_fit` on a stream of documents (a callable or a list: it is read
        twice)."""
        from nbsvm.models.run import FitRun
        from nbsvm.models.warm import continue_training

        new = continue_training(self, docs, FitRun(callback, max_memory))
        self.forget()
        self.__dict__.update(new.__dict__)
        return self

    def forget(self) -> None:
        """Drop every learned attribute (a new fit starts from nothing): each one whose
        name ends in ``_`` but ``char_ngrams_`` (this fit read it from its data before it
        runs), and the private state the model keeps. A list of the attributes to drop
        missed ``thresholds_`` and ``eta0_``: a refit kept the thresholds tuned for the
        labels before. What others set (scikit-learn's ``_metadata_request``, callback
        contexts) stays."""
        for attr in [
            a
            for a in vars(self)
            if (a.endswith("_") and not a.startswith("__") and a != "char_ngrams_")
            or a in PRIVATE_STATE
        ]:
            del self.__dict__[attr]

    def partial_fit(
        self,
        X: Iterable[str],
        y: Iterable,
        classes: Iterable[Any] | None = None,
        sample_weight: Any = None,
    ) -> NBSVMClassifier:
        """One pass over a batch, continuing from the current state.

        The first call on an unfitted model needs ``classes`` (every label). While a model
        grows by ``partial_fit`` its lexicon counts grow too and the ratios are recomputed
        for each batch (O(2**n_bits) per call: use large batches). After :meth:`fit` or
        :meth:`load` the lexicon is frozen and only the learner keeps learning. Every task
        (``multilabel``: ``y`` holds label sets) and every ``learner``; see
        :mod:`nbsvm.models.partial`. ``sample_weight`` as in :meth:`fit` (on the counts
        while they grow; on the built-in learner's steps).
        """
        from nbsvm.models.partial import partial_fit

        frozen = hasattr(self, "linear_") and getattr(self, "lexicon_", None) is None
        before = int(getattr(self, "n_docs_", 0))
        first = not hasattr(self, "linear_")
        try:
            partial_fit(self, X, y, classes, sample_weight)  # (a refusal first: no warning)
        except BaseException:
            if first:  # a first call that fails decides nothing (its classes, say)
                self.forget()
            raise
        if first and not self.multilabel:
            _warn_of_class_types(classes, y)
        if frozen:
            import warnings

            # (here, not in the library's partial_fit: serve --learn continues such
            # models as its documentation says, batch after batch)
            warnings.warn(
                "this model's NB lexicon is frozen (fitted or loaded without keep_counts): "
                "partial_fit trains the weights of the n-grams it has, and n-grams new to it "
                "get none. keep_counts=True keeps the counts, so that partial_fit grows the "
                "lexicon",
                UserWarning,
                stacklevel=2,
            )
        history.record(self, "partial_fit", self.n_docs_ - before)
        return self

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model atomically: seen buckets only, as .npz with a JSON header
        (:mod:`nbsvm.models.modelfile`)."""
        save_model(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> NBSVMClassifier:
        """Read a model file written by :meth:`save`, checking every array."""
        return load_model(cls, path)

    # -- settings, resolved and checked (models/settings.py) -------------------------------
    def _hasher(self, words_only: bool = False) -> Hasher:
        """The hasher of these settings (``words_only``: without character n-grams)."""
        return _settings._hasher(self, words_only)

    @property
    def backend_learner(self) -> str | None:
        """The backend learner ``learner`` names (None: the built-in one, for ``None``,
        ``'sgd'``, ``'adagrad'`` or ``'ovr'``)."""
        return _settings.backend_learner(self)

    def setting(self, name: str, classes: list | None = None) -> Any:
        """The value of parameter ``name`` this model trains with: the parameter, or when it
        is None (one of :data:`~nbsvm.config.TASK_PARAMS`), the default for the number of
        classes (known once fitted, or after the training data is counted), or for
        multi-label models :data:`~nbsvm.config.MULTILABEL_DEFAULTS`. ``classes``: for
        these classes instead of the fitted ones."""
        return _settings.setting(self, name, classes)

    def data_defaulted(self) -> list[str]:
        """The settings this model took from its training data (``corpus_``, after the
        first pass): ``min_df``, for two classes ``norm`` and, with AdaGrad, ``eta0``, when
        left at None (:func:`nbsvm.config.data_default`)."""
        return _settings.data_defaulted(self)

    def n_outputs(self, classes: list | None = None) -> int:
        """Weight vectors: one for two classes, else one per class (per label when
        ``multilabel``); for ``classes``, or the fitted ones."""
        return _settings.n_outputs(self, classes)

    def binary_task(self) -> bool:
        """Whether one output separates two classes (``classes_[1]`` its positive side):
        two classes, not a multi-label model of one label (whose one output is that
        label's)."""
        return self.n_outputs() == 1 and not self.multilabel

    def validate(self) -> Hasher:
        """Check every parameter (an error says what is allowed); return the hasher they
        make."""
        return _settings.validate(self)

    def unit_rows(self) -> bool:
        """Whether documents are scaled to unit norm (``norm``, resolved for the classes)."""
        return _settings.unit_rows(self)

    # -- learned state and prediction (models/prediction.py) ------------------------------
    def column_buckets(self) -> np.ndarray:
        """Bucket id of each learner column (``[c]``: column ``c``'s). Ascending in a loaded
        model; a fitted one lays its columns out by how many documents each is seen in."""
        return _prediction.column_buckets(self)

    @property
    def coef_(self) -> np.ndarray:
        """Weights by bucket, shape ``(n_outputs, 2**n_bits)`` (a dense copy)."""
        return _prediction.coef_(self)

    @property
    def ratios_(self) -> np.ndarray:
        """NB log-count ratios by bucket, shape ``(n_outputs, 2**n_bits)`` (a dense copy).

        These are the feature values: with ``weighting='binary'``, 1 on every kept bucket.
        """
        return _prediction.ratios_(self)

    @property
    def intercept_(self) -> np.ndarray:
        return _prediction.intercept_(self)

    def check_fitted(self) -> None:
        return _prediction.check_fitted(self)

    def decision_batch(self, batch: Batch, columns: bool = False) -> np.ndarray:
        """Scores of a hashed batch, shape ``(n_docs, n_outputs)``.

        ``columns``: the batch holds model columns already (not bucket ids).
        """
        return _prediction.decision_batch(self, batch, columns)

    def log_prior(self, k: int) -> float:
        """The NB part's log prior odds of output ``k``, from the training counts (weighed
        by ``class_weight``, which reweighs the data the learner sees)."""
        return _prediction.log_prior(self, k)

    def decision_function(self, X: Texts, *, text_col: str = "text") -> np.ndarray:
        """Scores: shape ``(n,)`` for two classes (positive = ``classes_[1]``), else ``(n, K)``
        (multi-label: ``(n, K)`` for any number of labels)."""
        return _prediction.decision_function(self, X, text_col=text_col)

    @property
    def classes_(self) -> Labels:
        """The classes as ``fit``'s ``y`` gave them (see the class docstring); a model
        trained from files, or on strings, has its :attr:`class_names_`."""
        from nbsvm.learners.targets import Labels

        names = self.__dict__.get("class_names_")
        if names is None:
            raise AttributeError("classes_: the model is not fitted")
        values = self.__dict__.get("_label_values")
        return Labels([values.get(c, c) for c in names]) if values else names

    @classes_.setter
    def classes_(self, value: Iterable) -> None:
        from nbsvm.learners.targets import Labels

        self.class_names_ = Labels(str(c) for c in value)

    @classes_.deleter
    def classes_(self) -> None:
        self.__dict__.pop("class_names_", None)

    def names_of(self, labels: Iterable) -> list[str]:
        """Labels as the model names its classes: a value equal to a class's (1.0 or True
        for a model fitted on 1) takes its name (:func:`~nbsvm.io.labels.names_by_value`).
        Multi-label: each label set (a list, or an ``'a,b'`` string) as its key, its labels
        named so (:func:`~nbsvm.io.labels.keys_by_value`)."""
        if self.multilabel:
            return keys_by_value(labels, self._values_of_classes())
        return self.class_names_of(labels)

    def class_names_of(self, classes: Iterable) -> list[str]:
        """Each of ``classes`` (one class or label each, as ``class_weight`` names them)
        as the model names it: a value equal to a class's takes its name."""
        return names_by_value(classes, self._values_of_classes())

    def _values_of_classes(self) -> dict:
        # a model trained from files keeps names only: its numbers are read from them
        return self.__dict__.get("_label_values") or values_of_names(self.class_names_)

    @property
    def calibrator_(self) -> Calibrator | None:
        """The :class:`~nbsvm.learners.calibrator.Calibrator` fitted with ``calibrate``, or
        None."""
        return _prediction.calibrator_(self)

    @calibrator_.setter
    def calibrator_(self, value: Calibrator | None) -> None:
        _prediction.calibrator__set(self, value)

    def label_mask(self, scores: np.ndarray) -> np.ndarray:
        """Multi-label: which labels each row of scores predicts, ``(n, K)`` bool (score
        above 0; calibrated probability above 0.5)."""
        return _prediction.label_mask(self, scores)

    def labels_of(self, scores: np.ndarray) -> np.ndarray:
        """The predicted label of each row of scores (multi-label: the key ``"a,b"`` of the
        labels whose score is above 0, ``""`` for none)."""
        return _prediction.labels_of(self, scores)

    def has_proba(self, own: bool = False) -> bool:
        """Whether the model gives probabilities: calibrated ones, or the scores are
        probabilities' logits (the built-in learner with the log, modified Huber or softmax
        loss; the backend learners' margins are not). ``own``: leave the calibration out."""
        return _prediction.has_proba(self, own)

    def proba_of(self, scores: np.ndarray, own: bool = False) -> np.ndarray:
        """Class probabilities from scores, shape ``(n, K)``: calibrated ones, or the log,
        modified Huber and softmax losses' own (``own``: leave the calibration out)."""
        return _prediction.proba_of(self, scores, own)

    def class_values(self, scores: np.ndarray) -> tuple[np.ndarray, str]:
        """One column per class, ``(n, K)``, of what ranks the classes, and its name:
        ``"probability"`` when the loss gives probabilities, else ``"score"`` (two classes:
        ``-s, s``)."""
        return _prediction.class_values(self, scores)

    def top_k_of(
        self, scores: np.ndarray, k: int | None = None, threshold: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, str]:
        """The ``k`` best classes of each row of scores (all of them for None), best first:
        ``(positions, values, kind)``, positions ``(n, k)`` into ``classes_`` and their
        probabilities (``kind`` ``"probability"``) or scores. With ``threshold``, a class
        whose value is below it has position -1 and value NaN."""
        return _prediction.top_k_of(self, scores, k, threshold)

    def predict_top_k(
        self, X: Texts, k: int = 1, threshold: float | None = None, *, text_col: str = "text"
    ) -> list[list[tuple[Any, float]]]:
        """Each document's ``k`` best classes, best first, with their probabilities (scores
        for losses without probabilities), as fastText's ``predict(text, k, threshold)``:
        ``[[(label, probability), ...], ...]``; with ``threshold``, only the classes at or
        above it."""
        return _prediction.predict_top_k(self, X, k, threshold, text_col=text_col)

    def predict(self, X: Texts, *, text_col: str = "text") -> np.ndarray:
        """Predicted labels: the values given to :meth:`fit`, also after :meth:`load`.

        Multi-label: an indicator matrix ``(n, len(classes_))`` of 0 / 1 (scikit-learn's
        form; :meth:`predict_label_sets` gives the label tuples)."""
        return _prediction.predict(self, X, text_col=text_col)

    def predict_label_sets(self, X: Texts, *, text_col: str = "text") -> list[tuple[Any, ...]]:
        """Multi-label: each document's predicted labels (values of ``classes_``, in its
        order), as a tuple."""
        return _prediction.predict_label_sets(self, X, text_col=text_col)

    def predict_proba(self, X: Texts, *, text_col: str = "text") -> np.ndarray:
        """Class probabilities, shape ``(n, len(classes_))`` (multi-label: each label's
        own probability; the rows do not sum to 1)."""
        return _prediction.predict_proba(self, X, text_col=text_col)

    def score(
        self,
        X: Texts,
        y: LabelValues | None = None,
        *,
        text_col: str = "text",
        label_col: str = "label",
        sample_weight: Any = None,
    ) -> float:
        """Accuracy on ``X``, ``y`` (labels compared as strings; multi-label: the share
        of documents whose whole label set is right, scikit-learn's subset accuracy);
        ``sample_weight``: each document's weight in it, as scikit-learn's ``score``."""
        return _prediction.score(
            self, X, y, text_col=text_col, label_col=label_col, sample_weight=sample_weight
        )

    def evaluate(
        self,
        X: Texts,
        y: LabelValues | None = None,
        *,
        text_col: str = "text",
        label_col: str = "label",
    ) -> dict:
        """The report of ``nbsvm eval`` on ``X``, ``y`` (sequences, or a DataFrame and its
        column names): accuracy, log loss, ROC AUC, macro F1, per-class figures and the
        confusion matrix, as a :class:`~nbsvm.evaluation.results.Report` (a dict that shows
        itself in Jupyter; ``.frame()``, ``.per_class()``, ``.confusion()`` are DataFrames).
        Labels the model does not know count as errors."""
        return _prediction.evaluate(self, X, y, text_col=text_col, label_col=label_col)


def _warn_of_class_types(classes: Any, y: Any) -> None:
    """partial_fit's first call: ``classes`` given as strings and ``y`` as numbers made
    ``classes_`` and ``predict`` strings, which scikit-learn's metrics refuse beside y
    ('Mix of label input types'); its SGDClassifier refuses the call. Said, not refused:
    the classes' types are those of the first call, as documented."""
    try:
        given = np.asarray(list(classes) if classes is not None else [], dtype=object)
        labels = np.asarray(y)
    except (TypeError, ValueError):
        return
    if (
        given.size
        and all(isinstance(c, str) for c in given)
        and labels.dtype.kind in "biuf"
        and labels.size
    ):
        import warnings

        warnings.warn(
            f"classes= are strings ({', '.join(map(repr, given[:3]))}) and y numbers: "
            "classes_ and predict give the strings, which scikit-learn's metrics refuse "
            "beside numbers; give classes= as numbers to predict numbers",
            UserWarning,
            stacklevel=3,
        )


def _warn_of_notes(model: NBSVMClassifier) -> None:
    """What ``nbsvm train`` notes of a fit, as warnings of :meth:`NBSVMClassifier.fit`:
    isotonic on too few held-out documents, label sets taken as classes."""
    import warnings

    from nbsvm.models.fitting import label_set_classes_event, label_sets_message

    note = (model.__dict__.get("calibration_report_") or {}).get("note")
    if note:
        warnings.warn(note, UserWarning, stacklevel=3)
    sets = label_set_classes_event(model)
    if sets is not None:
        flag = "multilabel=True (y as lists, or 'a,b' strings)"
        warnings.warn(label_sets_message(sets, flag), UserWarning, stacklevel=3)


def _warn_number_strings(labels: list, multilabel: bool) -> None:
    """Labels given as strings that read as numbers are ordered by value, as the command
    line reads them from files (``'9'`` before ``'10'``), where scikit-learn orders strings
    as text: its metrics would pair ``predict_proba``'s columns with other classes."""
    if multilabel or not labels or not all(isinstance(v, str) for v in labels):
        return
    distinct = sorted(set(labels))
    ordered = class_order(distinct)
    if ordered != distinct:
        import warnings

        warnings.warn(
            f"y's labels are strings that read as numbers: classes_ orders them by value "
            f"({ordered[:3]}...), scikit-learn orders strings as text ({distinct[:3]}...), "
            "so its metrics (roc_auc, log_loss) would pair the probability columns with "
            "other classes: give the labels as numbers (y.astype(int))",
            UserWarning,
            stacklevel=3,
        )
