"""NBFeatures: texts -> NB-weighted binarized n-gram features, for any scikit-learn model.

The same features NBSVM trains on (Wang & Manning 2012): each hashed n-gram bucket present
in a document gets its NB log-count ratio ``r``. With two classes there is one ratio per
bucket; with ``K`` classes, one block of columns per class holds each bucket's one-vs-rest
ratio for that class. Only buckets seen in at least ``min_df`` training documents get a
column. ``transform`` returns a ``scipy.sparse`` CSR matrix (scipy is needed only here).

Examples
--------
>>> nb = NBFeatures(ngrams=2, n_bits=12)
>>> X = nb.fit_transform(["a great film", "great fun", "an awful film", "awful, dull"],
...                      ["pos", "pos", "neg", "neg"])
>>> X.shape[0], X.shape[1] == len(nb.buckets_)
(4, True)
>>> bool(nb.transform(["great"]).sum() > 0), bool(nb.transform(["awful"]).sum() < 0)
(True, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from nbsvm._params import Params, store_params
from nbsvm.config import DEFAULTS, HASHER_SETTINGS
from nbsvm.errors import NBSVMError, not_fitted
from nbsvm.io.frames import texts_and_labels
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.models.settings import char_ngrams_default, refuse_char_min_alone
from nbsvm.text.hashing import Hasher

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

    from nbsvm.models._types import LabelValues, Texts

CHUNK = 4096  # texts hashed per compiled call


class NBFeatures(Params):
    """Hashed n-grams weighted by their naive-Bayes log-count ratios, as CSR features.

    Parameters
    ----------
    ngrams, n_bits, char_ngrams, char_min, hash_seed, min_df
        As in :class:`~nbsvm.NBSVMClassifier` (``char_ngrams=None``: character 4-grams
        where the first documents are short, the classifier's rule; ``char_ngrams_``).
    lowercase, split_scripts, nfkc, long_words
        The classifier's tokenizer and defaults (a token per character of Chinese,
        Japanese, Thai...; character 4-grams of tokens over 20 characters), so that text
        without spaces gets features.
    alpha : float
        NB smoothing, 1 by default for any number of classes (the classifier's default
        is 0.5 with more than two: pass ``alpha=0.5`` to match it).
    binary_values : bool
        ``True``: a kept bucket's value is 1 instead of its ratio (plain binarized n-grams).
    """

    if TYPE_CHECKING:  # the parameters' types (store_params sets them)
        ngrams: int
        n_bits: int
        char_ngrams: int | None
        char_min: int
        lowercase: bool
        split_scripts: bool
        nfkc: bool
        long_words: int
        hash_seed: int
        alpha: float
        min_df: int
        binary_values: bool

    def __init__(
        self,
        ngrams=DEFAULTS["ngrams"],
        n_bits=20,
        char_ngrams=None,
        hash_seed=DEFAULTS["hash_seed"],
        alpha=DEFAULTS["alpha"],
        min_df=1,
        binary_values=False,
        char_min=0,
        lowercase=True,
        split_scripts=DEFAULTS["split_scripts"],
        nfkc=DEFAULTS["nfkc"],
        long_words=DEFAULTS["long_words"],
    ):
        store_params(self, locals())

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=True),
            transformer_tags=TransformerTags(preserves_dtype=[]),
            input_tags=InputTags(one_d_array=True, two_d_array=False, string=True),
        )

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "ratios_")

    # -- fitting --------------------------------------------------------------------------
    def fit(
        self,
        X: Texts,
        y: LabelValues | None = None,
        *,
        text_col: str = "text",
        label_col: str = "label",
    ) -> NBFeatures:
        texts, labels = texts_and_labels(X, y, text_col, label_col)
        if labels is None:
            raise NBSVMError("NBFeatures.fit needs labels y (the ratios are per class)")
        if not (isinstance(self.min_df, (int, np.integer)) and self.min_df >= 1):
            raise NBSVMError(f"min_df must be an integer >= 1, got {self.min_df!r}")
        settings = {name: getattr(self, name) for name in HASHER_SETTINGS}
        refuse_char_min_alone(self.char_ngrams, self.char_min)
        if self.char_ngrams is None:
            words = Hasher(seed=self.hash_seed, **dict(settings, char_ngrams=0))
            settings["char_ngrams"] = char_ngrams_default(words, texts, whole=True)
        self.char_ngrams_ = settings["char_ngrams"]
        hasher = Hasher(seed=self.hash_seed, **settings)
        lexicon = NBLexicon(hasher, alpha=self.alpha)
        for start in range(0, len(texts), CHUNK):
            part = texts[start : start + CHUNK]
            codes = np.asarray(
                [lexicon.code_of(str(v)) for v in labels[start : start + CHUNK]], dtype=np.int32
            )
            ids, offsets = hasher.batch(part)
            lexicon.add_batch(ids, offsets, codes)
        # two classes: norms over every seen bucket; more: over the kept ones, as the model
        self.buckets_, ratios = lexicon.kept_ratios(min_df=self.min_df)
        self.ratios_ = ratios.astype(np.float64)  # (n_out, len(buckets_))
        self.classes_ = np.asarray(lexicon.classes_, dtype=object)
        self.hasher_ = hasher
        self.column_of_ = np.full(1 << hasher.n_bits, -1, dtype=np.int32)
        self.column_of_[self.buckets_] = np.arange(self.buckets_.size, dtype=np.int32)
        self.n_features_out_ = self.ratios_.shape[0] * self.buckets_.size
        # what the columns and ratios were made with (binary_values acts in transform)
        self.fit_params_ = {k: v for k, v in self.get_params().items() if k != "binary_values"}
        return self

    def _check_params_unchanged(self) -> None:
        """Refuse a parameter changed since fit (``set_params(ngrams=3)``): the columns
        and ratios are the fitted ones, and a transform would silently ignore it."""
        fitted = getattr(self, "fit_params_", None)
        if fitted is None:  # fitted before the parameters were recorded
            return
        changed = [
            f"{k} ({fitted[k]!r} at fit, {getattr(self, k)!r} now)"
            for k in fitted
            if getattr(self, k) != fitted[k]
        ]
        if changed:
            raise NBSVMError(
                f"NBFeatures parameters changed since fit: {', '.join(changed)}; fit again"
            )

    def transform(self, X: Texts, *, text_col: str = "text") -> csr_matrix:
        """CSR matrix ``(n_docs, n_blocks * len(buckets_))`` of NB-weighted features."""
        if not hasattr(self, "ratios_"):
            raise not_fitted(self)
        self._check_params_unchanged()
        try:
            from scipy import sparse
        except ImportError:
            raise NBSVMError(
                "NBFeatures.transform returns scipy.sparse matrices: pip install scipy"
            ) from None
        texts, _ = texts_and_labels(X, None, text_col, None)
        n_out, n_cols = self.ratios_.shape
        values = np.ones_like(self.ratios_) if self.binary_values else self.ratios_
        parts = []
        for start in range(0, len(texts), CHUNK):
            ids, offsets = self.hasher_.batch(texts[start : start + CHUNK])
            n = len(offsets) - 1
            cols = self.column_of_[ids]  # the hasher's ids are below 2**n_bits
            keep = cols >= 0
            rows = np.repeat(np.arange(n), np.diff(offsets))[keep]
            cols = cols[keep]
            # block k of the columns holds each kept bucket's ratio for output k
            block = np.repeat(np.arange(n_out), cols.size)
            coo = sparse.coo_matrix(
                (
                    values[block, np.tile(cols, n_out)],
                    (np.tile(rows, n_out), block * n_cols + np.tile(cols, n_out)),
                ),
                shape=(n, n_out * n_cols),
            )
            parts.append(coo.tocsr())  # distinct ids per document: no duplicates to sum
        if not parts:
            return sparse.csr_matrix((0, n_out * n_cols))
        out = sparse.vstack(parts, format="csr")
        out.sort_indices()
        return out

    def fit_transform(self, X: Texts, y: LabelValues | None = None, **kw: str) -> csr_matrix:
        return self.fit(X, y, **kw).transform(X, **{k: v for k, v in kw.items() if k == "text_col"})

    def get_feature_names_out(self, input_features: Iterable[str] | None = None) -> np.ndarray:
        """``bucket_<id>`` per column (``<class>:bucket_<id>`` with several blocks)."""
        if not hasattr(self, "ratios_"):
            raise not_fitted(self)
        names = [f"bucket_{b}" for b in self.buckets_]
        if self.ratios_.shape[0] == 1:
            return np.asarray(names, dtype=object)
        return np.asarray([f"{c}:{n}" for c in self.classes_ for n in names], dtype=object)
