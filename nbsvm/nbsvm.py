"""NBSVMClassifier: hashed n-grams + NB lexicon + out-of-core linear learner + interpolation.

The flow of one :meth:`NBSVMClassifier.fit_documents` call:

1. without a lexicon, one streaming pass hashes every document once, counts the lexicon and
   writes the binary feature cache; with a lexicon, the first epoch trains while streaming
   and writing the cache;
2. every further epoch reads the cache memory-mapped in a fresh seeded permutation;
3. the NB ratios are looked up at training time (the cache holds bucket ids only).

Interpolation with NB (``beta``):

- ``scores`` (NBSVM-XL): ``f(x) = beta*(w.x + b) + (1-beta)*(log(N+/N-) + sum_i r_i)``;
- ``weights`` (Wang & Manning 2012): ``w' = (1-beta)*mean|w| + beta*w``, mean over seen buckets.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from . import __version__
from .config import BATCH_DOCS, BUCKET_DTYPE, DEFAULTS, RATIO_DTYPE, WEIGHT_DTYPE
from .errors import NBSVMError
from .features import Batch, CacheWriter, FeatureCache, hash_batch, hash_batches, iter_epoch_order
from .io.readers import Document
from .lexicon import NBLexicon
from .online import _kernels
from .online.losses import resolve_loss
from .online.sgd import LinearSGD, OPTIMIZERS
from .persist import load_npz, save_npz
from .text.hashing import Hasher

INTERPOLATIONS = ("scores", "weights")
EPOCH_CHUNK = 4096          # documents between progress reports inside an epoch


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))   # overflow-free logistic


class NBSVMClassifier:
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
    loss : {'log', 'hinge', 'squared_hinge', 'modified_huber'}
    optimizer : {'sgd', 'adagrad'}
    eta0 : float
        Initial step size.
    l2 : float
        L2 strength (``--lambda`` on the command line).
    beta : float
        Interpolation weight of the linear model against NB, in [0, 1].
    interpolate : {'scores', 'weights'}
    epochs : int
    seed : int
        Seeds the per-epoch shuffles.
    cache_dir : str, optional
        Where the temporary feature cache goes (default: the system's temp folder).

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
                 alpha=DEFAULTS["alpha"], loss=DEFAULTS["loss"], optimizer=DEFAULTS["optimizer"],
                 eta0=DEFAULTS["eta0"], l2=DEFAULTS["l2"], beta=DEFAULTS["beta"],
                 interpolate=DEFAULTS["interpolate"], epochs=DEFAULTS["epochs"],
                 seed=DEFAULTS["seed"], cache_dir=None):
        self.ngrams = ngrams
        self.n_bits = n_bits
        self.char_ngrams = char_ngrams
        self.hash_seed = hash_seed
        self.alpha = alpha
        self.loss = loss
        self.optimizer = optimizer
        self.eta0 = eta0
        self.l2 = l2
        self.beta = beta
        self.interpolate = interpolate
        self.epochs = epochs
        self.seed = seed
        self.cache_dir = cache_dir

    # -- parameters -----------------------------------------------------------------------
    _PARAMS = ("ngrams", "n_bits", "char_ngrams", "hash_seed", "alpha", "loss", "optimizer",
               "eta0", "l2", "beta", "interpolate", "epochs", "seed", "cache_dir")

    def get_params(self, deep=True) -> dict:
        return {p: getattr(self, p) for p in self._PARAMS}

    def set_params(self, **params):
        for k, v in params.items():
            if k not in self._PARAMS:
                raise NBSVMError(f"unknown parameter {k!r}; allowed: {', '.join(self._PARAMS)}")
            setattr(self, k, v)
        return self

    def _hasher(self) -> Hasher:
        return Hasher(ngrams=self.ngrams, n_bits=self.n_bits, char_ngrams=self.char_ngrams,
                      seed=self.hash_seed)

    def _validate(self):
        resolve_loss(self.loss)
        if self.optimizer not in OPTIMIZERS:
            raise NBSVMError(f"unknown optimizer {self.optimizer!r}; allowed: {', '.join(OPTIMIZERS)}")
        if self.interpolate not in INTERPOLATIONS:
            raise NBSVMError(f"unknown interpolation {self.interpolate!r}; allowed: "
                             f"{', '.join(INTERPOLATIONS)}")
        if not (isinstance(self.beta, (int, float)) and 0.0 <= self.beta <= 1.0):
            raise NBSVMError(f"beta must be in [0, 1], got {self.beta!r}")
        if not (isinstance(self.epochs, int) and self.epochs >= 1):
            raise NBSVMError(f"epochs must be an integer >= 1, got {self.epochs!r}")
        if not (isinstance(self.seed, int) and self.seed >= 0):
            raise NBSVMError(f"seed must be an integer >= 0, got {self.seed!r}")
        return self._hasher()

    # -- training -------------------------------------------------------------------------
    def fit(self, X: Iterable[str], y: Iterable) -> "NBSVMClassifier":
        """Fit on texts ``X`` and labels ``y`` (any hashable labels; kept as strings)."""
        docs = (Document(str(label), text, "<fit>", i + 1)
                for i, (text, label) in enumerate(zip(X, y)))
        return self.fit_documents(docs)

    def partial_fit(self, X: Iterable[str], y: Iterable, classes=None) -> "NBSVMClassifier":
        """One pass over a batch, continuing from the current state.

        The first call on an unfitted model needs ``classes``. While a model grows by
        ``partial_fit`` its lexicon counts grow too and the ratios are recomputed for each
        batch (O(2**n_bits) per call: use large batches). After :meth:`fit` or :meth:`load`
        the lexicon is frozen and only the linear model keeps learning.
        """
        hasher = self._validate()
        if not hasattr(self, "coef_"):
            if classes is None:
                raise NBSVMError("the first partial_fit call needs classes=[...] (all labels)")
            classes = sorted({str(c) for c in classes})
            if len(classes) < 2:
                raise NBSVMError(f"need at least two classes, got {classes}")
            self.lexicon_ = NBLexicon(hasher, alpha=self.alpha)
            for c in classes:
                self.lexicon_.code_of(c)
            self.classes_, self.hasher_, self.n_docs_ = classes, hasher, 0
            n_out = 1 if len(classes) == 2 else len(classes)
            self.ratios_ = np.zeros((n_out, 1 << hasher.n_bits), dtype=RATIO_DTYPE)
        texts, labels = list(X), [str(v) for v in y]
        if len(texts) != len(labels):
            raise NBSVMError(f"X has {len(texts)} documents but y has {len(labels)} labels")
        docs = [Document(l, t, "<partial_fit>", i + 1) for i, (t, l) in enumerate(zip(texts, labels))]
        batch = hash_batch(docs, self.hasher_)
        codes = self._codes_for(labels, docs)
        if getattr(self, "lexicon_", None) is not None:
            self.lexicon_.add_batch(batch.ids, batch.offsets, codes)   # codes == lexicon codes
            if self.lexicon_._docs.min() > 0:
                self._set_lexicon(self.lexicon_)
            else:   # until every class has a document the ratios stay zero
                self.class_counts_ = self.lexicon_._docs.copy()
                self._seen = np.any(self.lexicon_._counts > 0, axis=0)
        learner = self._get_learner()
        if len(docs):
            learner.epoch(batch.ids, batch.offsets, codes, np.arange(len(docs)), list(self.ratios_),
                          self._positive_codes())
        self.n_docs_ += len(docs)
        if not hasattr(self, "_seen"):
            self._seen = np.any(self.ratios_ != 0, axis=0)
        self._finish(learner, self.hasher_)
        return self

    def _get_learner(self) -> LinearSGD:
        learner = getattr(self, "_learner", None)
        if learner is None:
            learner = self._new_learner()
            if hasattr(self, "coef_"):        # a loaded model: restore its state
                learner.v_[:] = self.coef_
                learner.state_[:] = self.learner_state_
                if learner.optimizer == "adagrad":
                    buckets, sq = self._sparse_sq
                    learner.sq_[:, buckets] = sq
        self._learner = learner
        return learner

    def fit_documents(self, docs: Iterable[Document], lexicon: NBLexicon | None = None,
                      callback: Callable[[dict], None] | None = None) -> "NBSVMClassifier":
        """Fit on a stream of :class:`~nbsvm.io.Document` (see the module docstring).

        ``callback`` receives progress events: ``{"stage": "hash"|"epoch", ...}``.
        """
        hasher = self._validate()
        for attr in ("_learner", "lexicon_", "coef_"):
            self.__dict__.pop(attr, None)
        notify = callback or (lambda event: None)
        timings = {}
        if lexicon is not None and lexicon.hasher != hasher:
            raise NBSVMError(f"the lexicon was built with {lexicon.hasher.settings()} but the "
                             f"model asks for {hasher.settings()}")
        tmp = Path(tempfile.mkdtemp(prefix="nbsvm-cache-", dir=self.cache_dir))
        try:
            writer = CacheWriter(tmp / "train", hasher)
            t0 = time.perf_counter()
            if lexicon is None:
                lexicon = NBLexicon(hasher, alpha=self.alpha)
                try:
                    n = 0
                    for batch in hash_batches(docs, hasher):
                        codes = writer.add(batch)
                        lex_codes = np.asarray([lexicon.code_of(l) for l in writer.labels],
                                               dtype=np.int32)[codes]
                        lexicon.add_batch(batch.ids, batch.offsets, lex_codes)
                        n += len(batch)
                        notify({"stage": "hash", "docs": n})
                    cache = writer.close()
                except BaseException:
                    writer.abort()
                    raise
                if cache.n_docs == 0:
                    raise NBSVMError("no training documents")
                timings["lexicon_s"] = time.perf_counter() - t0
                self._set_lexicon(lexicon)
                lexicon = None      # free the (classes x 2**n_bits) counts before training
                learner, rng = self._new_learner(), np.random.default_rng(self.seed)
                first_epoch = 1
            else:
                self._set_lexicon(lexicon, alpha=self.alpha)
                lexicon = None
                learner, rng = self._new_learner(), np.random.default_rng(self.seed)
                cache = self._stream_first_epoch(docs, writer, learner, notify)
                first_epoch = 2
            self.n_docs_ = cache.n_docs
            codes = self._cache_codes(cache)
            for epoch in range(first_epoch, self.epochs + 1):
                self._replay_epoch(cache, codes, learner, rng, epoch, notify)
            timings["train_s"] = time.perf_counter() - t0 - timings.get("lexicon_s", 0.0)
            del cache
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self._finish(learner, hasher)
        self.timings_ = timings
        return self

    def _set_lexicon(self, lexicon: NBLexicon, alpha=None):
        self.classes_ = lexicon.classes_
        if len(self.classes_) < 2:
            raise NBSVMError(f"need at least two classes to train, found {self.classes_}")
        self.class_counts_ = lexicon.class_counts_
        self.ratios_ = lexicon.ratios(alpha)
        self.n_seen_buckets_ = lexicon.n_seen_
        self._seen = np.any(lexicon._counts > 0, axis=0)

    def _positive_codes(self) -> list[int]:
        return [1] if len(self.classes_) == 2 else list(range(len(self.classes_)))

    def _new_learner(self) -> LinearSGD:
        return LinearSGD(1 << self.n_bits, n_outputs=self.ratios_.shape[0], loss=self.loss,
                         optimizer=self.optimizer, eta0=self.eta0, l2=self.l2)

    def _codes_for(self, labels: list[str], docs=None) -> np.ndarray:
        """Map label strings to class indices, naming the first document with an unknown one."""
        index = {c: i for i, c in enumerate(self.classes_)}
        out = np.empty(len(labels), dtype=np.int32)
        for i, label in enumerate(labels):
            if label not in index:
                src = docs[i] if docs is not None else None
                raise NBSVMError(f"unknown label {label!r}; the model knows {self.classes_}",
                                 path=getattr(src, "source", None), line=getattr(src, "line", None))
            out[i] = index[label]
        return out

    def _cache_codes(self, cache: FeatureCache) -> np.ndarray:
        table = self._codes_for(cache.labels) if cache.labels else np.zeros(0, np.int32)
        return table[np.asarray(cache.codes)] if cache.n_docs else np.zeros(0, np.int32)

    def _stream_first_epoch(self, docs, writer, learner, notify) -> FeatureCache:
        try:
            n, loss_sum = 0, 0.0
            tables = list(self.ratios_)
            for batch in hash_batches(docs, self._hasher()):
                codes = self._codes_for([d.label for d in batch.docs], batch.docs)
                writer.add(batch)
                order = np.arange(len(batch), dtype=np.int64)
                loss_sum += learner.epoch(batch.ids, batch.offsets, codes, order, tables,
                                          self._positive_codes()) * len(batch)
                n += len(batch)
                notify({"stage": "epoch", "epoch": 1, "epochs": self.epochs, "docs": n,
                        "total": None, "loss": loss_sum / n})
            cache = writer.close()
        except BaseException:
            writer.abort()
            raise
        if cache.n_docs == 0:
            raise NBSVMError("no training documents")
        return cache

    def _replay_epoch(self, cache, codes, learner, rng, epoch, notify):
        n, loss_sum = 0, 0.0
        tables = list(self.ratios_)
        ids, offsets = cache.ids, cache.offsets
        for window in iter_epoch_order(cache.n_docs, rng):
            for start in range(0, len(window), EPOCH_CHUNK):
                order = window[start:start + EPOCH_CHUNK]
                loss_sum += learner.epoch(ids, offsets, codes, order, tables,
                                          self._positive_codes()) * len(order)
                n += len(order)
                notify({"stage": "epoch", "epoch": epoch, "epochs": self.epochs, "docs": n,
                        "total": cache.n_docs, "loss": loss_sum / n})

    def _finish(self, learner: LinearSGD, hasher: Hasher):
        self._learner = learner                 # kept so that partial_fit can continue
        self.coef_ = learner.coef()
        self.intercept_ = learner.intercept()
        self.learner_state_ = learner.state_
        if learner.optimizer == "adagrad":
            self.adagrad_sq_ = learner.sq_
        seen = self._seen
        self.mean_abs_coef_ = np.abs(self.coef_[:, seen]).mean(axis=1) if seen.any() else \
            np.zeros(self.coef_.shape[0])
        del self._seen
        self.hasher_ = hasher

    # -- prediction -----------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise NBSVMError("this model is not fitted yet; call fit() or load a model file")

    def _effective_coef(self) -> np.ndarray:
        if self.interpolate == "weights" and self.beta != 1.0:
            return (1.0 - self.beta) * self.mean_abs_coef_[:, None] + self.beta * self.coef_
        return self.coef_

    def decision_batch(self, batch: Batch) -> np.ndarray:
        """Scores of a hashed batch, shape ``(n_docs, n_outputs)``."""
        self._check_fitted()
        n = len(batch)
        coef = self._effective_coef()
        out = np.empty((n, coef.shape[0]))
        tmp = np.empty(n)
        for k in range(coef.shape[0]):
            _kernels._scores(batch.ids, batch.offsets, self.ratios_[k], coef[k], tmp)
            out[:, k] = tmp + self.intercept_[k]
            if self.interpolate == "scores" and self.beta != 1.0:
                _kernels._table_sums(batch.ids, batch.offsets, self.ratios_[k], tmp)
                out[:, k] = self.beta * out[:, k] + (1.0 - self.beta) * (self._log_prior(k) + tmp)
        return out

    def _log_prior(self, k: int) -> float:
        counts = self.class_counts_.astype(np.float64)
        if len(counts) == 2:
            return float(np.log(counts[1] / counts[0]))
        return float(np.log(counts[k] / (counts.sum() - counts[k])))

    def _batches(self, X) -> Iterator[Batch]:
        docs = (Document(None, text, "<input>", i + 1) for i, text in enumerate(X))
        return hash_batches(docs, self.hasher_)

    def decision_function(self, X: Iterable[str]) -> np.ndarray:
        """Scores: shape ``(n,)`` for two classes (positive = ``classes_[1]``), else ``(n, K)``."""
        self._check_fitted()
        parts = [self.decision_batch(b) for b in self._batches(X)]
        scores = np.concatenate(parts) if parts else np.zeros((0, self.coef_.shape[0]))
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def labels_of(self, scores: np.ndarray) -> np.ndarray:
        classes = np.asarray(self.classes_, dtype=object)
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if scores.ndim == 1:
            return classes[(scores > 0).astype(int)]
        return classes[np.argmax(scores, axis=1)]

    def proba_of(self, scores: np.ndarray) -> np.ndarray:
        """Class probabilities from scores, shape ``(n, K)`` (log and modified Huber losses)."""
        if not resolve_loss(self.loss).has_proba:
            raise NBSVMError(f"loss {self.loss!r} gives no probabilities; use 'log' or "
                             "'modified_huber'")
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        if self.loss == "modified_huber":
            p = (np.clip(scores, -1, 1) + 1) / 2
        else:
            p = _sigmoid(scores)
        if p.ndim == 1:
            return np.column_stack([1 - p, p])
        total = p.sum(axis=1, keepdims=True)
        return np.where(total > 0, p / np.where(total > 0, total, 1), 1.0 / p.shape[1])

    def predict(self, X: Iterable[str]) -> np.ndarray:
        return self.labels_of(self.decision_function(X))

    def predict_proba(self, X: Iterable[str]) -> np.ndarray:
        return self.proba_of(self.decision_function(X))

    def score(self, X, y) -> float:
        return float(np.mean(self.predict(X) == np.asarray([str(v) for v in y], dtype=object)))

    # -- files ----------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the model atomically: seen buckets only, as .npz with a JSON header."""
        self._check_fitted()
        keep = np.flatnonzero(np.any(self.ratios_ != 0, axis=0) | np.any(self.coef_ != 0, axis=0))
        keep = keep.astype(BUCKET_DTYPE)
        if self.optimizer == "adagrad":
            if hasattr(self, "adagrad_sq_"):
                sq = self.adagrad_sq_[:, keep]
            else:   # loaded and never trained further: the stored sparse state
                buckets, stored = self._sparse_sq
                sq = np.zeros((stored.shape[0], keep.size), np.float32)
                sq[:, np.searchsorted(keep, buckets)] = stored
        header = dict(
            package_version=__version__,
            params={p: getattr(self, p) for p in self._PARAMS if p != "cache_dir"},
            hasher=self.hasher_.settings(), classes=list(self.classes_),
            class_counts=[int(c) for c in self.class_counts_], n_docs=int(self.n_docs_),
            n_seen_buckets=int(self.n_seen_buckets_),
            mean_abs_coef=[float(x) for x in self.mean_abs_coef_],
            intercept=[float(x) for x in self.intercept_])
        save_npz(path, "model", header, {
            "buckets": keep,
            "ratios": np.ascontiguousarray(self.ratios_[:, keep]),
            "coef": np.ascontiguousarray(self.coef_[:, keep]),
            "learner_state": np.ascontiguousarray(self.learner_state_, dtype=np.float64),
            **({"adagrad_sq": np.ascontiguousarray(sq)} if self.optimizer == "adagrad" else {})})

    @classmethod
    def load(cls, path) -> "NBSVMClassifier":
        header, arrays = load_npz(path, "model")
        try:
            clf = cls(**header["params"])
            clf._validate()
            clf.hasher_ = Hasher(**header["hasher"])
            clf.classes_ = [str(c) for c in header["classes"]]
            clf.class_counts_ = np.asarray(header["class_counts"], dtype=np.int64)
            clf.n_docs_ = int(header["n_docs"])
            clf.n_seen_buckets_ = int(header["n_seen_buckets"])
            clf.mean_abs_coef_ = np.asarray(header["mean_abs_coef"], dtype=np.float64)
            clf.intercept_ = np.asarray(header["intercept"], dtype=np.float64)
            buckets, ratios, coef = arrays["buckets"], arrays["ratios"], arrays["coef"]
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise NBSVMError(f"corrupted model file: {type(e).__name__}: {e}", path=str(path)) from None
        n_out = 1 if len(clf.classes_) == 2 else len(clf.classes_)
        d = 1 << clf.hasher_.n_bits
        ok = (len(clf.classes_) >= 2 and len(clf.class_counts_) == len(clf.classes_)
              and buckets.ndim == 1 and buckets.dtype == BUCKET_DTYPE
              and ratios.shape == (n_out, buckets.size) and ratios.dtype == RATIO_DTYPE
              and coef.shape == (n_out, buckets.size) and coef.dtype == WEIGHT_DTYPE
              and clf.intercept_.shape == (n_out,) and clf.mean_abs_coef_.shape == (n_out,)
              and (buckets.size == 0 or (buckets.min() >= 0 and buckets.max() < d)))
        if not ok:
            raise NBSVMError("corrupted model file: arrays do not match the header", path=str(path))
        clf.ratios_ = np.zeros((n_out, d), dtype=RATIO_DTYPE)
        clf.ratios_[:, buckets] = ratios
        clf.coef_ = np.zeros((n_out, d), dtype=WEIGHT_DTYPE)
        clf.coef_[:, buckets] = coef
        state = arrays.get("learner_state")
        if state is None or state.shape != (n_out, 3) or state.dtype != np.float64:
            raise NBSVMError("corrupted model file: bad learner state", path=str(path))
        clf.learner_state_ = state.copy()
        if clf.optimizer == "adagrad":
            sq = arrays.get("adagrad_sq")
            if sq is None or sq.shape != (n_out, buckets.size) or sq.dtype != np.float32:
                raise NBSVMError("corrupted model file: bad AdaGrad state", path=str(path))
            # kept sparse: only partial_fit needs it dense (predicting does not)
            clf._sparse_sq = (buckets, sq)
        return clf
