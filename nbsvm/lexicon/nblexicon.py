"""The hashed naive-Bayes lexicon: binarized per-class bucket counts and log-count ratios.

Wang & Manning (2012), binarized: for each class c, ``p = alpha + sum of f^`` over documents
of class c and ``q = alpha + sum of f^`` over the other documents, sums and L1 norms taken over
the buckets seen in training (any class); ``r = log((p/||p||_1) / (q/||q||_1))``; unseen
buckets get ``r = 0``. With two classes there is one ratio vector (for ``classes_[1]``
against ``classes_[0]``); with more, one per class against the rest.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nbsvm.config import BUCKET_DTYPE, RATIO_DTYPE, default_alpha
from nbsvm.errors import NBSVMError
from nbsvm.io.frames import texts_and_labels
from nbsvm.io.labels import class_order
from nbsvm.io.npzfile import load_npz, save_npz
from nbsvm.text.hashing import Hasher

if TYPE_CHECKING:
    from nbsvm.lexicon.paircounts import PairCounts


def _pair_counts() -> type[PairCounts]:
    """The sparse counts' class, and with it the compiled kernels, on first use: loading a
    model for prediction never counts (:mod:`nbsvm._small_jobs`)."""
    from nbsvm.lexicon.paircounts import PairCounts

    return PairCounts


def _weighted_docs(header: dict, df: np.ndarray | None) -> int:
    """A weighted lexicon's documents as its header records them (weighted files of the
    first days lack the count: their largest bucket's documents, a lower bound, stand in for
    a count that is only shown)."""
    if "n_docs" in header:
        return int(header["n_docs"])
    return int(df.max()) if df is not None and df.size else 0


def nb_ratios(
    pos_counts: np.ndarray, neg_counts: np.ndarray, alpha: float, out: np.ndarray | None = None
) -> np.ndarray:
    """Log-count ratio over the buckets seen in either count vector (float32, dense)."""
    if out is None:
        out = np.empty(pos_counts.shape[0], dtype=RATIO_DTYPE)
    from nbsvm.lexicon._kernels import two_class_ratios

    two_class_ratios(pos_counts, neg_counts, float(alpha), out)
    return out


class NBLexicon:
    """Binarized per-class bucket counts of a hashed corpus.

    The counts are sparse, one per (bucket, class) pair seen
    (:class:`~nbsvm.lexicon.paircounts.PairCounts`): memory grows with what the corpus holds, not
    with classes x buckets. The trainer lends two dense int32 rows of ``2**n_bits``
    instead (:meth:`counting_in`: an increment is one memory access, and one row becomes
    its bucket -> column map); a third class moves them to pairs, and so does a batch with
    document weights (:meth:`add_batch`): the counts become float64 sums of weights, and the
    lexicon also counts each bucket's documents of weight > 0 (``min_df`` counts those, each
    once: a weight says how much a document counts, not which n-grams the data holds).

    Parameters
    ----------
    hasher : Hasher
        How texts become bucket ids (its settings travel with the lexicon).
    alpha : float or None
        Additive smoothing of the ratios. None: by the number of classes counted
        (:func:`nbsvm.config.default_alpha`: 1 with two, 0.5 with more), as a model's.

    Examples
    --------
    >>> lex = NBLexicon(Hasher(ngrams=1, n_bits=8))
    >>> lex = lex.fit(["good film", "bad film"], ["pos", "neg"])
    >>> lex.classes_
    ['neg', 'pos']
    >>> float(lex.ratios()[0][lex.hasher.buckets("good")[0]]) > 0
    True
    """

    def __init__(self, hasher: Hasher | None = None, alpha: float | None = 1.0):
        self.hasher = hasher or Hasher()
        self.alpha = alpha
        #: documents, n-grams and median n-grams per document of the data counted
        #: (:func:`~nbsvm.lexicon.build.build_lexicon`): train --lexicon's data defaults
        self.corpus_: dict | None = None
        #: a loaded file's alpha was the default of its classes, not a given one
        self.alpha_default_ = False

    # -- counting -------------------------------------------------------------------------
    def _init_state(self, store: np.ndarray | None = None, mm: mmap.mmap | None = None):
        """``store``: optional zeroed int32 array ``(2, 2**n_bits)`` (any strides) to count
        the first two classes in, so that a trainer can lend memory it will reuse; ``mm``:
        the anonymous mapping it lives in. Without it, counts are sparse pairs."""
        if not hasattr(self, "_labels"):
            a = self.alpha
            if not (
                a is None
                or (
                    isinstance(a, (int, float, np.integer, np.floating))
                    and not isinstance(a, bool)
                    and 0 < a < float("inf")
                )
            ):  # inf made NaN ratios, in a file that would not load
                raise NBSVMError(f"alpha must be a positive finite number, got {a!r}")
            self._labels: list[str] = []  # first-appearance order
            self._codes: dict[str, int] = {}  # label -> its index in _labels
            self._mm, self._store = mm, store
            self._pairs: PairCounts | None = _pair_counts()() if store is None else None
            self._docs_store = np.zeros(2, dtype=np.int64)
            self._df: PairCounts | None = None  # weighted: documents per bucket
            self._weighted_docs = 0  # weighted: documents of weight > 0 (else class totals)

    @classmethod
    def counting_in(
        cls, hasher: Hasher, alpha: float | None, store: np.ndarray, mm: mmap.mmap | None
    ) -> NBLexicon:
        """An empty lexicon that counts its first two classes in ``store`` (lent by a
        trainer that reuses the memory; see :meth:`_init_state`)."""
        lexicon = cls(hasher, alpha=alpha)
        lexicon._init_state(store, mm)
        return lexicon

    @classmethod
    def from_label_counts(
        cls,
        hasher: Hasher,
        alpha: float | None,
        by_label: dict,
        df: tuple[np.ndarray, np.ndarray] | None = None,
        n_docs: int = 0,
    ) -> NBLexicon:
        """A lexicon from ``{label: (documents, buckets, counts)}`` (as :meth:`label_counts`
        returns; buckets sorted and distinct); ``df``: a weighted lexicon's documents per
        bucket, ``(buckets, counts)``, and ``n_docs`` its documents (:attr:`n_docs_`)."""
        lexicon = cls(hasher, alpha=alpha)
        lexicon._init_state()
        if df is not None:
            lexicon._pairs.to_weighted()  # type: ignore[union-attr]
            lexicon._docs_store = lexicon._docs_store.astype(np.float64)
            lexicon._df = _pair_counts()()
            lexicon._df.add_counts(df[0], 0, df[1])
            lexicon._weighted_docs = int(n_docs)
        for label in sorted(by_label):
            k = lexicon.code_of(label)
            n, idx, cnt = by_label[label]
            # _init_state() without a store counts in pairs: never None here
            cast("PairCounts", lexicon._pairs).add_counts(idx, k, cnt)
            lexicon._docs_store[k] = n
        return lexicon

    def counts_in(self, store: np.ndarray) -> bool:
        """Whether the counts still live in ``store`` (the lent memory)."""
        return getattr(self, "_store", None) is store

    def code_labels(self) -> list[str]:
        """The labels counted so far, in code order (:meth:`code_of`: first appearance)."""
        return list(getattr(self, "_labels", ()))

    @property
    def n_labels(self) -> int:
        """Classes counted so far (0 before any)."""
        return len(getattr(self, "_labels", ()))

    @property
    def weighted(self) -> bool:
        """Whether the counts are sums of document weights."""
        return getattr(self, "_df", None) is not None

    @property
    def dense(self) -> bool:
        """Whether the counts are dense rows of ``2**n_bits`` (at most two classes)."""
        self._init_state()
        return self._pairs is None

    def code_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Dense counts only (:meth:`counting_in`): ``(counts, rows)``, the count rows in
        code order (a view, no copy) and, for each class of ``classes_``, its row."""
        self._check_fitted()
        if not self.dense:
            raise NBSVMError("the lexicon's counts are sparse; use compact()")
        return self._counts, np.asarray(self._order(), dtype=np.int64)

    def code_of(self, label: str) -> int:
        """Internal code of ``label``, adding the class if it is new."""
        self._init_state()
        # a dict: list.index made counting quadratic in the classes (40,000: 34 s)
        code = self._codes.get(label)
        if code is not None:
            return code
        if label is None:  # an unlabelled document (plain lines) reached the counting
            raise NBSVMError(
                "a document has no label: training reads labelled documents "
                "(--format plain-lines reads text only, for predict)"
            )
        k = len(self._labels)
        if k == 2 and self._pairs is None:
            self._to_pairs()
        if k == len(self._docs_store):  # grow by doubling (new classes are rare)
            docs = np.zeros(2 * k, dtype=self._docs_store.dtype)
            docs[:k] = self._docs_store
            self._docs_store = docs
        self._labels.append(label)
        self._codes[label] = k
        return k

    def _to_pairs(self) -> None:
        """Move the dense counts to sparse (bucket, class) pairs; the rows go back to their
        lender."""
        self._pairs = _pair_counts().from_dense(self._counts)
        self._mm, self._store = None, None

    @property
    def _counts(self) -> np.ndarray:
        # read only while counting dense (before _to_pairs), when the store is lent
        return cast(np.ndarray, self._store)[: len(self._labels)]

    @property
    def _docs(self) -> np.ndarray:
        return self._docs_store[: len(self._labels)]

    def add_batch(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        codes: np.ndarray,
        weights: np.ndarray | None = None,
    ) -> None:
        """Count a CSR batch of binarized documents whose labels are codes from
        :meth:`code_of` (``weights``: each document's, None for 1; documents of weight 0
        count nowhere)."""
        self._init_state()
        if weights is not None and not self.weighted:
            self._to_weighted()
        if self._df is not None:
            self._add_weighted(ids, offsets, codes, weights)
        elif self._pairs is None:
            from nbsvm.lexicon._kernels import count_buckets

            count_buckets(self._counts, self._docs, ids, offsets, codes)
        else:
            self._pairs.add(ids, offsets, codes)
            np.add.at(self._docs_store, codes, 1)

    def _to_weighted(self) -> None:
        """Counts as sums of weights from now on, in pairs, with the documents per bucket
        (so far every document weighed 1: the class counts summed)."""
        if self._pairs is None:
            self._to_pairs()
        pairs = cast("PairCounts", self._pairs)
        self._df = pairs.bucket_sums()
        self._weighted_docs = int(self._docs_store.sum())
        pairs.to_weighted()
        self._docs_store = self._docs_store.astype(np.float64)

    def _add_weighted(self, ids, offsets, codes, weights) -> None:
        codes = np.asarray(codes, dtype=np.int32)
        weights = np.ones(len(codes)) if weights is None else np.asarray(weights, np.float64)
        if not weights.all():  # weight 0: not seen
            keep = weights > 0
            lengths = np.diff(offsets)
            ids = ids[np.repeat(keep, lengths)]
            offsets = np.r_[0, np.cumsum(lengths[keep])].astype(np.int64)
            codes, weights = codes[keep], weights[keep]
        cast("PairCounts", self._pairs).add(ids, offsets, codes, weights)
        cast("PairCounts", self._df).add(ids, offsets, np.zeros(len(codes), dtype=np.int32))
        np.add.at(self._docs_store, codes, weights)
        self._weighted_docs += len(codes)

    def document_counts(self) -> np.ndarray:
        """A weighted lexicon's documents (of weight > 0) per bucket, aligned with the
        buckets of :meth:`compact`."""
        if self._df is None:
            raise NBSVMError("an unweighted lexicon's counts are its documents per bucket")
        buckets, rows = self._df.rows(np.zeros(1, dtype=np.int64))
        pairs = self._pair_view()
        if len(buckets) == pairs.n_buckets():
            return rows[0]
        # a bucket of no document of weight > 0 has no entry: 0, in its place
        seen = np.unique(pairs.keys >> 32)
        out = np.zeros(len(seen), dtype=rows.dtype)
        out[np.searchsorted(seen, buckets)] = rows[0]
        return out

    def partial_fit(self, texts: Iterable[str], labels: Iterable[Any]) -> NBLexicon:
        """Count ``texts`` of classes ``labels``, read and checked as
        :meth:`NBSVMClassifier.fit <nbsvm.NBSVMClassifier.fit>` reads them (a missing
        label, a length mismatch, a text that is not one: refused before anything is
        counted). The counts grow past the data ``corpus_`` described: it is dropped."""
        texts, labels = texts_and_labels(texts, labels, "text", "label")
        if labels is None:
            raise NBSVMError("the lexicon counts labelled documents: give labels")
        codes = np.asarray([self.code_of(str(label)) for label in labels], dtype=np.int32)
        if len(codes):
            ids, offsets = self.hasher.batch(texts)
            self.add_batch(ids, offsets, codes)
            self.corpus_ = None
        return self

    def fit(self, texts: Iterable[str], labels: Iterable[Any]) -> NBLexicon:
        """Count ``texts`` afresh (:meth:`partial_fit` of an empty lexicon; input refused
        leaves the counts as they were)."""
        texts, labels = texts_and_labels(texts, labels, "text", "label")
        for attr in ("_labels", "_codes", "_store", "_mm", "_pairs", "_docs_store"):
            self.__dict__.pop(attr, None)
        self.corpus_ = None
        return self.partial_fit(texts, labels)

    # -- results --------------------------------------------------------------------------
    def _check_fitted(self):
        if not getattr(self, "_labels", None):
            raise NBSVMError("the lexicon has seen no documents")
        if float(self._docs.sum()) == 0:
            raise NBSVMError(
                "every document weighs 0 (--weight-col, sample_weight): the lexicon has "
                "counted nothing"
            )

    @property
    def classes_(self) -> list[str]:
        self._check_fitted()
        return class_order(self._labels)

    @property
    def class_counts_(self) -> np.ndarray:
        """Documents per class, in the order of ``classes_`` (weighted: their weights
        summed)."""
        return self._docs[self._order()].copy()

    @property
    def n_docs_(self) -> int:
        """Documents counted (weighted: those of weight > 0)."""
        self._check_fitted()
        return self._weighted_docs if self.weighted else int(self._docs.sum())

    def _order(self) -> list[int]:
        return [self._codes[c] for c in self.classes_]

    def compact(self, buckets: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(buckets, counts)``: the buckets seen in training (sorted, int32) and the
        binarized counts over them, shape ``(n_classes, len(buckets))``, rows in
        ``classes_`` order. Memory: classes x buckets seen; given ``buckets`` (sorted, each
        seen: the kept ones), classes x those."""
        self._check_fitted()
        pairs = self._pair_view()
        if buckets is not None:
            return buckets, pairs.rows_over(np.asarray(self._order()), buckets)
        return pairs.rows(np.asarray(self._order()))

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(buckets, columns, rows, counts)``: the buckets seen and each non-zero count
        with its bucket's place in ``buckets`` and its class's in ``classes_`` (by bucket,
        then class): :meth:`compact` without its zeros."""
        self._check_fitted()
        return self._pair_view().pairs(np.asarray(self._order()))

    def _pair_view(self) -> PairCounts:
        return self._pairs if self._pairs is not None else _pair_counts().from_dense(self._counts)

    def seen_document_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """``(buckets, documents)``: the buckets seen (sorted) and the documents holding
        each (weighted: of weight > 0), without a row per class."""
        self._check_fitted()
        sums = self._pair_view().bucket_sums()
        buckets = (sums.keys >> 32).astype(np.int32)
        if self.weighted:
            return buckets, self.document_counts()
        return buckets, sums.counts.astype(np.int64)

    def label_counts(self) -> dict:
        """``{label: (documents, buckets, counts)}``, each label's non-zero counts."""
        buckets, counts = self.compact()
        out = {}
        for label, n, row in zip(self.classes_, self.class_counts_, counts):
            nz = np.flatnonzero(row)
            out[label] = (
                n.item(),
                buckets[nz],
                row[nz] if self.weighted else row[nz].astype(np.int64),
            )
        return out

    def copy(self) -> NBLexicon:
        """An independent copy (sparse pairs) of a fitted lexicon's counts."""
        df = None
        if self.weighted:
            df = (self.compact()[0], self.document_counts())
        return NBLexicon.from_label_counts(
            self.hasher, self.alpha, self.label_counts(), df, self.n_docs_ if df is not None else 0
        )

    def counts(self) -> np.ndarray:
        """Binarized bucket counts, dense, shape ``(n_classes, 2**n_bits)``, rows in
        ``classes_`` order (classes x 2**n_bits of memory: :meth:`compact` is sparse)."""
        buckets, counts = self.compact()
        out = np.zeros((counts.shape[0], 1 << self.hasher.n_bits), dtype=counts.dtype)
        out[:, buckets] = counts
        return out

    def document_frequency(self) -> np.ndarray:
        """Documents holding each bucket, dense int64 of ``2**n_bits``."""
        buckets, counts = self.compact()
        df = np.zeros(1 << self.hasher.n_bits, dtype=np.int64)
        df[buckets] = self.document_counts() if self.weighted else counts.sum(axis=0)
        return df

    def kept_ratios(
        self, alpha: float | None = None, min_df: int | np.integer = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(buckets, ratios)``: the buckets seen in at least ``min_df`` documents and
        their NB log-count ratios, shape ``(1, n)`` for two classes (``classes_[1]``
        against ``classes_[0]``, norms over every seen bucket), else ``(K, n)`` (each class
        against the rest, norms over the kept buckets, as the model's columns)."""
        alpha = self.smoothing() if alpha is None else alpha
        classes = self.classes_
        if len(classes) < 2:
            raise NBSVMError(f"need at least two classes, found only {classes}")
        if len(classes) == 2:  # norms over every seen bucket
            buckets, counts = self.compact()
            docs = self.document_counts() if self.weighted else counts.sum(axis=0)
            kept = docs >= max(int(min_df), 1)
            ratios = nb_ratios(counts[1], counts[0], alpha)[None, :]
            return buckets[kept], ratios[:, kept]
        # one-vs-rest: norms over the kept buckets, so only their rows are built (classes
        # x kept, not classes x seen)
        seen, docs = self.seen_document_counts()
        buckets, counts = self.compact(seen[docs >= max(int(min_df), 1)])
        total = counts.sum(axis=0, dtype=counts.dtype)
        return buckets, np.stack([nb_ratios(row, total - row, alpha) for row in counts])

    def ratios(self, alpha: float | None = None, min_df: int = 1) -> np.ndarray:
        """NB log-count ratios, dense: shape ``(1, 2**n_bits)`` for two classes, else
        ``(K, 2**n_bits)`` (:meth:`kept_ratios` keeps only the buckets kept).

        With more than two classes (one-vs-rest), only buckets seen in at least ``min_df``
        documents count, as the model's kept columns do: the others get 0 and stay out of
        the norms. Two classes keep their norms over every seen bucket and every seen
        bucket's ratio."""
        if len(self.classes_) == 2:
            min_df = 1
        buckets, kept = self.kept_ratios(alpha, min_df)
        out = np.zeros((kept.shape[0], 1 << self.hasher.n_bits), dtype=RATIO_DTYPE)
        out[:, buckets] = kept
        return out

    @property
    def n_seen_(self) -> int:
        """Buckets seen in training (any class)."""
        self._check_fitted()
        pairs = self._pairs if self._pairs is not None else _pair_counts().from_dense(self._counts)
        return pairs.n_buckets()

    def smoothing(self) -> float:
        """The alpha the ratios take: the one given, else the default for the classes
        counted so far (what a file records)."""
        return default_alpha(len(self.classes_)) if self.alpha is None else float(self.alpha)

    # -- files ----------------------------------------------------------------------------
    def header(self) -> dict:
        return dict(
            hasher=self.hasher.settings(),
            alpha=self.smoothing(),
            # whether alpha was given or is the default of the classes counted (keys of
            # label sets, for multi-label): a model trained on the lexicon resolves its own
            alpha_given=self.alpha is not None and not self.alpha_default_,
            classes=self.classes_,
            class_counts=self.class_counts_.tolist(),
            **({"weighted": True, "n_docs": self.n_docs_} if self.weighted else {}),
            **({"corpus": self.corpus_} if self.corpus_ else {}),
        )

    def arrays(self) -> dict[str, np.ndarray]:
        """What :meth:`save` writes beside the header: the seen buckets, the counts over
        them (a row per class, or where most are zero, as many classes give, the non-zero
        ones as pairs: ``pair_columns``, ``pair_rows``, ``pair_counts``, ordered by column
        then row) and, weighted, the documents per bucket."""
        pairs = self._pair_view()
        pairs.flush()
        order = np.asarray(self._order())
        size = pairs.counts.itemsize
        if len(pairs.keys) * (8 + size) < len(order) * pairs.n_buckets() * size:
            seen, columns, rows, counts = pairs.pairs(order)
            out = {"buckets": seen, "pair_columns": columns, "pair_rows": rows}
            out["pair_counts"] = counts
        else:
            out = dict(zip(("buckets", "counts"), self.compact()))
        if self.weighted:
            out["df"] = self.document_counts()
        return out

    def save(self, path: str | os.PathLike[str]) -> None:
        """Save sparsely (only seen buckets) with the settings, atomically."""
        save_npz(path, "lexicon", self.header(), self.arrays())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> NBLexicon:
        header, arrays = load_npz(path, "lexicon")
        return cls.from_parts(
            header, arrays.get("buckets"), arrays.get("counts"), path, arrays.get("df"), arrays
        )

    @classmethod
    def from_parts(
        cls,
        header: Any,
        buckets: np.ndarray | None,
        counts: np.ndarray | None,
        path: str | os.PathLike[str],
        df: np.ndarray | None = None,
        arrays: dict | None = None,
        prefix: str = "",
    ) -> NBLexicon:
        """A lexicon from what :meth:`save` writes (a lexicon file, or the part of a model
        file that keeps its counts: ``arrays`` with each name after ``prefix``), every
        value checked."""
        pairs = [(arrays or {}).get(prefix + n) for n in ("pair_columns", "pair_rows")]
        if counts is None and arrays is not None and (prefix + "pair_counts") in arrays:
            return _from_pair_arrays(cls, header, buckets, df, arrays, prefix, path)
        if any(p is not None for p in pairs):
            raise NBSVMError("corrupted lexicon file: pair arrays beside counts", path=str(path))
        try:
            hasher = Hasher(**header["hasher"])
            classes = [str(c) for c in header["classes"]]
            weighted = header.get("weighted", False) is True
            docs = [float(x) if weighted else int(x) for x in header["class_counts"]]
            n_docs = _weighted_docs(header, df) if weighted else 0
            if buckets is None or counts is None or (weighted and df is None):
                raise KeyError("buckets or counts")
            ok = (
                buckets.ndim == 1
                and counts.shape == (len(classes), buckets.shape[0])
                and len(docs) == len(classes)
                and buckets.dtype == BUCKET_DTYPE
                and counts.dtype == (np.float64 if weighted else np.int32)
                and (
                    not weighted
                    or (df is not None and df.shape == buckets.shape and df.dtype == np.int32)
                )
                and (
                    buckets.size == 0
                    or (buckets.min() >= 0 and buckets.max() < (1 << hasher.n_bits))
                )
            )
        except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as e:
            raise NBSVMError(f"corrupted lexicon file: {e}", path=str(path)) from None
        except NBSVMError as e:
            raise NBSVMError(f"corrupted lexicon file: {e.message}", path=str(path)) from None
        if not ok:
            raise NBSVMError(
                "corrupted lexicon file: arrays do not match the header", path=str(path)
            )
        alpha = header.get("alpha")
        problem = (
            "buckets not strictly increasing (unsorted or repeated)"
            if buckets.size > 1 and np.any(np.diff(buckets) <= 0)
            else "negative counts"
            if (counts.size and not counts.min() >= 0)
            or min(docs, default=0) < 0
            or n_docs < 0
            or (df is not None and df.size and df.min() < 0)
            else "counts that are not finite"
            if not (np.isfinite(counts).all() and np.isfinite(docs).all())
            else "a bucket counted in more documents than its class has"
            if counts.size and _over_class(counts, docs)
            else _names_or_alpha_problem(header, classes, alpha)
        )
        if problem:
            raise NBSVMError(f"corrupted lexicon file: {problem}", path=str(path))
        by_label = {c: (n, buckets, row) for c, n, row in zip(classes, docs, counts)}
        df_pair = (buckets, df) if weighted and df is not None else None
        lexicon = cls.from_label_counts(hasher, float(alpha), by_label, df_pair, n_docs)
        return _with_records(lexicon, header, path)


def _over_class(counts: np.ndarray, docs: list) -> bool:
    """Whether a bucket's count in a class exceeds the class's documents (or their summed
    weights: a document counts a bucket once): counts edited by hand (an error said
    later, of weight 0 or empty documents, named nothing of the file)."""
    most = counts.max(axis=1).astype(np.float64)
    limit = np.asarray(docs, dtype=np.float64)
    return bool(np.any(most > limit + 1e-9 * np.maximum(limit, 1.0)))


def _from_pair_arrays(
    cls: type[NBLexicon], header: Any, buckets, df, arrays: dict, prefix: str, path
) -> NBLexicon:
    """:meth:`NBLexicon.from_parts` of counts written as pairs, checked: each pair's column
    and row in range, ordered by column then row without a repeat, every column with one
    pair at least, counts above 0 and finite; the pairs become the lexicon's own."""
    columns, rows, counts = (
        arrays[prefix + n] for n in ("pair_columns", "pair_rows", "pair_counts")
    )
    try:
        hasher = Hasher(**header["hasher"])
        classes = [str(c) for c in header["classes"]]
        weighted = header.get("weighted", False) is True
        docs = np.asarray(header["class_counts"], dtype=np.float64 if weighted else np.int64)
        n_docs = _weighted_docs(header, df) if weighted else 0
        alpha = header.get("alpha")
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as e:
        raise NBSVMError(f"corrupted lexicon file: {e}", path=str(path)) from None
    except NBSVMError as e:
        raise NBSVMError(f"corrupted lexicon file: {e.message}", path=str(path)) from None
    n, k = (0 if buckets is None else len(buckets)), len(classes)
    keys = columns.astype(np.int64) * max(k, 1) + rows if columns.shape == rows.shape else None
    problem = (
        "pair arrays of other shapes or types"
        if buckets is None
        or buckets.ndim != 1
        or buckets.dtype != BUCKET_DTYPE
        or not (columns.ndim == rows.ndim == counts.ndim == 1)
        or not (len(columns) == len(rows) == len(counts))
        or columns.dtype != np.int32
        or rows.dtype != np.int32
        or counts.dtype != (np.float64 if weighted else np.int32)
        or docs.shape != (k,)
        or (weighted and (df is None or df.shape != buckets.shape or df.dtype != np.int32))
        else "buckets not strictly increasing, or out of range"
        if (n > 1 and np.any(np.diff(buckets) <= 0))
        or (n and not (buckets[0] >= 0 and buckets[-1] < (1 << hasher.n_bits)))
        else "pairs out of range or order"
        if keys is None
        or (len(keys) and not (rows.min() >= 0 and rows.max() < k))
        or (len(keys) > 1 and np.any(np.diff(keys) <= 0))
        or not np.array_equal(np.unique(columns), np.arange(n))
        else "counts that are not above 0 and finite"
        if len(counts) and not (np.isfinite(counts).all() and counts.min() > 0)
        else "negative or non-finite counts"
        if not (np.isfinite(docs).all() and (docs >= 0).all())
        or n_docs < 0
        or (weighted and df is not None and df.size and df.min() < 0)
        else _names_or_alpha_problem(header, classes, alpha)
    )
    if problem:
        raise NBSVMError(f"corrupted lexicon file: {problem}", path=str(path))
    lexicon = cls(hasher, alpha=float(alpha))
    lexicon._init_state()
    for c in classes:  # codes in classes order: a pair's row is its code
        lexicon.code_of(c)
    if weighted:
        _weigh(lexicon, buckets, df, n_docs)
    pc = cast("PairCounts", lexicon._pairs)
    pc.keys = (buckets[columns].astype(np.int64) << 32) | rows.astype(np.int64)
    pc.counts = counts.copy()
    lexicon._docs_store[:k] = docs
    return _with_records(lexicon, header, path)


def _weigh(lexicon: NBLexicon, buckets: np.ndarray, df: np.ndarray, n_docs: int) -> None:
    """A new lexicon's counts made sums of weights, with its documents per bucket."""
    cast("PairCounts", lexicon._pairs).to_weighted()
    lexicon._docs_store = lexicon._docs_store.astype(np.float64)
    lexicon._df = _pair_counts()()
    lexicon._df.add_counts(buckets, 0, df)
    lexicon._weighted_docs = int(n_docs)


def _names_or_alpha_problem(header: dict, classes: list[str], alpha: Any) -> str | None:
    """What is wrong with a lexicon file's class names or alpha, if anything."""
    if len(set(classes)) != len(classes):
        return f"repeated class names {classes}"
    if not all(isinstance(c, str) for c in header["classes"]):
        return "classes must be a list of strings"
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float))
        or not np.isfinite(alpha)
        or alpha <= 0
    ):
        return f"bad alpha {alpha!r}"
    return None


def _with_records(lexicon: NBLexicon, header: dict, path: str | os.PathLike[str]) -> NBLexicon:
    """``lexicon`` with what its file records beside the counts: the corpus counted, and
    whether its alpha was given (files of earlier versions: as given)."""
    lexicon.corpus_ = _file_corpus(header, path)
    lexicon.alpha_default_ = header.get("alpha_given", True) is False
    return lexicon


def _file_corpus(header: dict, path: str | os.PathLike[str]) -> dict | None:
    """A lexicon file's ``corpus``, checked (None in files of earlier versions)."""
    if header.get("corpus") is None:
        return None
    try:
        return checked_corpus(header["corpus"])
    except TypeError as e:
        raise NBSVMError(f"corrupted lexicon file: {e}", path=str(path)) from None


#: what the data-dependent defaults read of a corpus (a lexicon's or a model's file keeps it)
CORPUS_KEYS = ("documents", "ngrams", "median_ngrams")


def checked_corpus(corpus: Any) -> dict:
    """A file's ``corpus`` header, checked (TypeError: not three counts)."""
    if not (
        isinstance(corpus, dict)
        and all(
            isinstance(corpus.get(k), int)
            and not isinstance(corpus.get(k), bool)
            and corpus[k] >= 0
            for k in CORPUS_KEYS
        )
    ):
        raise TypeError("corpus must hold three counts")
    return {k: corpus[k] for k in CORPUS_KEYS}
