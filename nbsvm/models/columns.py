"""From counts to a compact learner: which buckets get a column, and their NB ratios in the
learner's value field.

Two routes, both ending in :class:`Columns` (what :mod:`nbsvm.models.counting` counted
decides which):

- Two classes are counted per class and bucket in dense int32 rows, a prebuilt lexicon of
  more classes per (bucket, class) pair seen (:meth:`ColumnBuilder.from_lexicon`). Counted
  in memory the trainer lends, one row then becomes the bucket -> column map and the other
  goes back to the OS.
- From a third class on (and for label sets), the hashing pass counts only each bucket's
  documents (``df``); :mod:`nbsvm.models.kept_columns` builds the columns from it.

Only buckets seen in at least ``min_df`` documents get a column: every other bucket has
ratio 0 or is dropped, so it could never carry a feature value. The kept columns are laid
out the hot ones first (:func:`column_layout`), so that the epochs' updates share cache
lines.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm._parallel import run_parts, two_ranges
from nbsvm.errors import NBSVMError, NoneKept
from nbsvm.io.labels import classes_of
from nbsvm.learners.sgd import LinearSGD
from nbsvm.learners.targets import Labels
from nbsvm.lexicon import _kernels as kernels
from nbsvm.lexicon.label_sets import fill_label_ratios, label_set_counts
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.memory import check_fit_memory, fit_bytes, row_width
from nbsvm.models.learner_setup import new_linear, output_weights

if TYPE_CHECKING:
    from nbsvm.data.cache import FeatureCache
    from nbsvm.models.nbsvm import NBSVMClassifier


@dataclass
class Columns:
    """What counting gives a model: its classes (labels), their document counts, how many
    buckets training saw, the bucket -> column map (-1: no column; None: every bucket is
    its own column, see :func:`dense_columns`) and a learner whose value field holds the
    kept columns' NB ratios (weights zero)."""

    classes: list
    class_counts: np.ndarray
    n_seen_buckets: int
    column_of: np.ndarray | None
    linear: LinearSGD


#: Buckets filled between two releases of the counts' pages (4 MB of each int32 row).
FILL_CHUNK = 1 << 20
#: a cache whose n-gram occurrences are under 1/FEW_SEEN of the buckets: the counts are
#: read over its buckets (:func:`seen_buckets`)
FEW_SEEN = 64


def dense_columns(n_buckets: int, n_kept: int, n_outputs: int, optimizer: str) -> bool:
    """Whether every bucket should be its own column: when so many buckets are kept that
    the rows of the few dropped ones cost less than the int32 bucket -> column map (a
    million reviews keep 99% of 2**24 trigram buckets; IMDB keeps 7%). The dropped
    buckets' rows hold ratio 0 and stay 0, so the model scores the same either way.

    >>> dense_columns(1 << 24, 16_500_000, 1, "adagrad"), dense_columns(1 << 24, 1_100_000, 1, "adagrad")
    (True, False)
    """
    row_bytes = row_width(optimizer) * n_outputs
    return (n_buckets - n_kept) * row_bytes <= 4 * n_buckets


def _release(mm, row_len: int, row: int, start: int, end: int) -> None:
    """Hand back to the OS the whole pages of int32 row ``row`` (of ``row_len``, in ``mm``)
    between entries ``start`` and ``end``."""
    page = mmap.PAGESIZE
    lo = row * row_len * 4 + start * 4
    hi = row * row_len * 4 + end * 4
    lo = -(-lo // page) * page
    hi = hi // page * page
    if hi > lo:
        mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


class ColumnBuilder:
    """Counts and builds :class:`Columns` for ``model``'s settings: ``alpha``, ``min_df``,
    ``weighting``, ``multilabel``, and the learner ``new_linear(model, classes, n_columns)``
    makes. ``notify`` receives progress events; ``max_memory`` as ``--max-memory``."""

    def __init__(self, model, hasher, max_memory=None, notify=None):
        self.model = model
        self.hasher = hasher
        self.max_memory = max_memory
        self.notify = notify or (lambda event: None)

    # -- per class, from a lexicon ------------------------------------------------------------
    def from_lexicon(
        self,
        lexicon: NBLexicon,
        mm: mmap.mmap | None = None,
        alpha: float | None = None,
        seen: np.ndarray | None = None,
    ) -> Columns:
        """Columns from a lexicon's per-class counts: its dense rows (two classes), or its
        counts over the buckets seen (sparse, more classes). With ``mm`` (the releasable
        memory two classes were counted in), the positive class's row is overwritten by
        the map and the other row is released. ``seen``: the buckets the dense rows
        counted, sorted (:func:`seen_buckets`): the rows are read over these only."""
        model = self.model
        if model.multilabel:
            return self._from_label_sets(lexicon)
        classes = lexicon.classes_
        if len(classes) < 2:
            raise NBSVMError(f"need at least two classes to train, found {classes}")
        alpha = float(model.setting("alpha", classes) if alpha is None else alpha)
        min_df = int(model.setting("min_df"))
        buckets, counts, rows, df, all_seen = self._class_counts(lexicon, classes, seen, min_df)
        # two passes over the count columns, each split over two threads: first counts per
        # range, then columns from each range's start
        bounds = two_ranges(counts.shape[1])
        parts = _seen_sums(counts, df, min_df, bounds)
        n_seen = parts[0][0] + parts[1][0]
        sums = parts[0][1] + parts[1][1]
        n_kept = parts[0][2].sum() + parts[1][2].sum()
        n_seen_buckets = int(n_seen) if all_seen is None else all_seen
        refuse_none_kept(int(n_kept), n_seen_buckets, model.setting("min_df"))
        binary = len(classes) == 2
        if not binary:  # one-vs-rest ratios: norms over the kept buckets
            n_seen, sums = n_kept, parts[0][3] + parts[1][3]
        # with two classes counted in lent memory, the learner is filled range by range and
        # each range's count pages go back to the OS as soon as it is done (the map, when
        # there is one, overwrites one row): the counts and the learner never add up
        in_place = mm is not None and binary and buckets is None
        n_out, optimizer = model.n_outputs(classes), model.setting("optimizer", classes)
        dense = in_place and dense_columns(counts.shape[1], int(n_kept), n_out, optimizer)
        n_columns = counts.shape[1] if dense else int(n_kept)
        # before the learner takes its memory: a test set hashed alongside can be hashed now
        self.notify({"stage": "columns", "docs": 0, "columns": n_columns, "dense": dense})
        held = 0 if in_place else len(classes) * counts.shape[1] * counts.itemsize
        self._check_fit(lexicon.hasher.n_bits, classes, n_columns, dense, held)
        learner = new_linear(model, classes, n_columns)
        if dense:
            column_of = None  # columns are buckets
        elif in_place:
            column_of = counts[rows[1]]  # int32 row, rewritten in place
        else:
            column_of = np.empty(counts.shape[1], dtype=np.int32)
        spent = (rows if dense else rows[:1]) if in_place else rows[:0]
        ratios = (counts, rows, binary, alpha, n_seen, sums, int(model.setting("min_df")), df)
        target = (learner.S_, column_of if column_of is not None else counts[0], dense)
        layout = column_layout([p[2] for p in parts], model.backend_learner is None)
        _fill_ranges(ratios, target, bounds, layout, spent, mm)
        binary_values(model, learner)
        if buckets is not None:
            # sparse counts are never counted in place, so never dense: column_of is an array
            assert column_of is not None
            column_of = _by_bucket(buckets, column_of, lexicon.hasher.n_bits)
        return Columns(classes, lexicon.class_counts_, n_seen_buckets, column_of, learner)

    def _check_fit(self, n_bits: int, classes: list, n_columns: int, dense: bool, held: int):
        """Refuse (``--max-memory``) a learner of ``n_columns`` (a map unless ``dense``)
        beside ``held`` bytes of counts."""
        model = self.model
        needed = fit_bytes(
            n_bits,
            model.n_outputs(classes),
            model.setting("optimizer", classes),
            n_columns=n_columns,
            n_classes=len(classes),
            best_copy=bool(model.early_stopping),
            column_map=not dense,
            by_column=False,
        )
        check_fit_memory(needed + held, self.max_memory)

    def _class_counts(self, lexicon: NBLexicon, classes: list, seen, min_df: int) -> tuple:
        """:func:`_class_counts`, checked first where they are laid out by kept bucket."""
        seen_docs = None
        if len(classes) > 2 and not lexicon.dense:  # int32 counts by kept bucket
            seen_docs = lexicon.seen_document_counts()  # (read once: the counts use it too)
            self._check_counts_fit(seen_docs[1], classes, cell_bytes=4)
        return _class_counts(lexicon, seen, min_df, seen_docs)

    def _check_counts_fit(self, docs: np.ndarray, classes: list, cell_bytes: int) -> None:
        """Before the counts of a lexicon of many classes are laid out, one row of
        ``cell_bytes`` per class over the kept buckets (``docs``: each seen bucket's
        documents): refuse when they and the learner would not fit (they were allocated
        first: a lexicon of 2,000 labels took 2 GB before --max-memory 1G refused it)."""
        model = self.model
        n_kept = int(np.count_nonzero(docs >= max(int(model.setting("min_df")), 1)))
        needed = fit_bytes(
            self.hasher.n_bits,
            model.n_outputs(classes),
            model.setting("optimizer", classes),
            n_columns=n_kept,
            n_classes=len(classes),
            best_copy=bool(model.early_stopping),
        )
        check_fit_memory(needed + len(classes) * n_kept * cell_bytes, self.max_memory)

    def _from_label_sets(self, lexicon: NBLexicon) -> Columns:
        """Multi-label columns from a lexicon whose classes are label-set keys (``a,b``;
        see :func:`label_set_counts`): the ratios equal :meth:`from_df`'s bit for bit."""
        model = self.model
        classes = classes_of(lexicon.classes_)
        if not classes:
            raise NBSVMError(
                "no labels to train on: multi-label fields are 'a,b' lists and "
                "every document's was empty"
            )
        # the per-label counts (float64 sums, then int64, then laid out hottest first) are
        # built over the kept buckets
        seen, documents = lexicon.seen_document_counts()
        self._check_counts_fit(documents, classes, cell_bytes=24)
        buckets, counts, kept_df, docs, n_seen = label_set_counts(
            lexicon, classes, model.setting("min_df")
        )
        refuse_none_kept(len(buckets), int(n_seen), model.setting("min_df"))
        if model.backend_learner is None:  # laid out as column_layout lays the others:
            # by documents (a weighted lexicon's kept_df sums their weights)
            order = hottest_first(documents[np.searchsorted(seen, buckets)])
            buckets, counts, kept_df = buckets[order], counts[:, order], kept_df[order]
        check_fit_memory(
            fit_bytes(
                self.hasher.n_bits,
                model.n_outputs(classes),
                model.setting("optimizer", classes),
                n_columns=len(buckets),
                n_classes=len(classes),
                best_copy=bool(model.early_stopping),
            ),
            self.max_memory,
        )
        learner = new_linear(model, classes, len(buckets))
        label_ratios(model, learner, counts, kept_df)
        column_of = np.full(1 << self.hasher.n_bits, -1, dtype=np.int32)
        column_of[buckets] = np.arange(len(buckets), dtype=np.int32)
        return Columns(classes, docs, n_seen, column_of, learner)


def refuse_none_kept(n_kept: int, n_seen: int, min_df: int) -> None:
    """A model without a column predicts the class prior whatever the text: when ``min_df``
    leaves none of the buckets seen, say so instead of saving one."""
    if n_kept == 0 and n_seen > 0:
        raise NoneKept(
            f"no n-gram is kept: min_df={min_df} is above the documents of every one of "
            f"the {n_seen:,} buckets seen (lower --min-df)"
        )


def seen_buckets(cache: FeatureCache, n_bits: int) -> np.ndarray | None:
    """The buckets a cache's documents hold, sorted, when they are few: under 1 /
    :data:`FEW_SEEN` of the ``2**n_bits`` (else None). Building columns from dense count
    rows scans every bucket twice (0.2 s at 2**24, most of a small fit); sorting a small
    corpus's ids costs milliseconds."""
    if cache.n_ids * FEW_SEEN >= 1 << n_bits:
        return None
    ids = [batch.ids for batch in cache.batches(1 << 16)]
    return np.unique(np.concatenate(ids)).astype(np.int32) if ids else np.zeros(0, np.int32)


def _class_counts(
    lexicon: NBLexicon, seen: np.ndarray | None = None, min_df: int = 1, seen_docs=None
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray, int | None]:
    """``(buckets, counts, rows, df, all_seen)``: a dense lexicon's rows by bucket
    (``buckets`` None), or a sparse one's counts over the buckets it saw (columns to map
    back to ``buckets``; with more than two classes over those ``min_df`` keeps only,
    ``all_seen`` then counting every bucket seen: classes x kept, not classes x seen), or a
    dense one's over the buckets ``seen`` (every bucket it counted: the rows are zero
    elsewhere); ``rows``: each class's row of ``counts``; ``df``: a weighted lexicon's
    documents per column (min_df counts those), else empty. ``seen_docs``: the lexicon's
    :meth:`~nbsvm.lexicon.nblexicon.NBLexicon.seen_document_counts`, when read already."""
    weighted = lexicon.weighted
    if lexicon.dense and seen is not None:
        codes, order = lexicon.code_counts()
        counts = np.stack([codes[row][seen] for row in order])
        df = lexicon.document_counts() if weighted else np.zeros(0, np.int32)
        return seen, counts, np.arange(len(order), dtype=np.int64), df, None
    if lexicon.dense:
        counts, rows = lexicon.code_counts()
        df = lexicon.document_counts() if weighted else np.zeros(0, np.int32)
        return None, counts, rows, df, None
    rows = np.arange(len(lexicon.classes_), dtype=np.int64)
    if len(rows) > 2:  # one-vs-rest: only the kept buckets' counts matter
        all_buckets, docs = seen_docs or lexicon.seen_document_counts()
        kept = docs >= max(min_df, 1)
        buckets, counts = lexicon.compact(all_buckets[kept])
        df = docs[kept].astype(np.int32) if weighted else np.zeros(0, np.int32)
        return buckets, counts, rows, df, len(all_buckets)
    buckets, counts = lexicon.compact()
    df = lexicon.document_counts() if weighted else np.zeros(0, np.int32)
    return buckets, counts, rows, df, None


def _by_bucket(buckets: np.ndarray, column_of: np.ndarray, n_bits: int) -> np.ndarray:
    """A map over the seen buckets spread over all ``2**n_bits`` (-1: no column)."""
    by_bucket = np.full(1 << n_bits, -1, dtype=np.int32)
    by_bucket[buckets] = column_of
    return by_bucket


def _seen_sums(counts: np.ndarray, df: np.ndarray, min_df: int, bounds) -> list:
    """:func:`~nbsvm.lexicon._kernels.seen_sums` over the two ranges of ``bounds``, one
    thread each."""
    parts: list[Any] = [None, None]

    def count(k):
        parts[k] = kernels.seen_sums(counts, df, min_df, int(bounds[k]), int(bounds[k + 1]))

    run_parts(count, 2)
    return parts


#: The hot columns: the most seen, by powers of two of documents, as many as fit in 2**16
#: columns (768 KB of AdaGrad rows an output, within a core's L2 cache). Laid out first,
#: the others after them (each part in bucket order), they put most of an epoch's updates
#: on few cache lines (Zipf): IMDB's 43,069 hot columns of 1,401,242 hold over half of
#: its 13 million kept n-grams, and an epoch takes 0.183 s instead of 0.231 (one thread),
#: bit for bit the same arithmetic. Two parts keep the rank table's lookups one row each
#: (:func:`nbsvm.data.translate.rank_map`).
HOT_COLUMNS = 1 << 16


def column_layout(
    kept: list[np.ndarray], tiered: bool = True, budget: int | None = None
) -> tuple[list[np.ndarray], int]:
    """``(cursors, hot_bits)`` from the kept columns each range has per bit length of
    their documents (:func:`~nbsvm.lexicon._kernels.seen_sums`): columns whose documents
    have ``hot_bits`` bits or more are hot (:func:`hot_bits`); each range's cursors are its
    first hot column and its first other one, the ranges in order within each part. Not
    ``tiered``: every column in bucket order (a backend learner's own arrays are saved by
    column, and a loaded model numbers its columns in bucket order).

    >>> cursors, bits = column_layout([np.array([0, 2, 1]), np.array([0, 3, 0])], budget=1)
    >>> [c.tolist() for c in cursors], bits
    ([[0, 1], [1, 3]], 2)
    """
    counts = np.stack(kept).astype(np.int64)
    bits = hot_bits(counts.sum(axis=0), budget) if tiered else 0
    hot = counts[:, bits:].sum(axis=1)
    other = counts.sum(axis=1) - hot
    n_hot = int(hot.sum())
    cursors = [np.array([hot[:k].sum(), n_hot + other[:k].sum()]) for k in range(len(kept))]
    return [c.astype(np.int64) for c in cursors], bits


def hot_bits(by_bit_length: np.ndarray, budget: int | None = None) -> int:
    """The fewest bits of documents whose columns (``by_bit_length[b]``: the columns of
    ``b`` bits) number ``budget`` (:data:`HOT_COLUMNS`) or fewer: 0 when every column fits.

    >>> hot_bits(np.array([0, 5, 3, 2]), budget=5), hot_bits(np.array([0, 5, 3, 2]))
    (2, 0)
    """
    above = np.r_[np.cumsum(by_bit_length[::-1])[::-1], 0]  # columns of b bits or more
    return int(np.argmax(above <= (HOT_COLUMNS if budget is None else budget)))


def hottest_first(df: np.ndarray, budget: int | None = None) -> np.ndarray:
    """The order :func:`column_layout` lays out columns seen in ``df`` documents in (given
    in bucket order): the hot ones, then the others (frexp's exponent is the bit length).

    >>> hottest_first(np.array([1, 5, 2, 7, 3, 0.5]), budget=3).tolist()
    [1, 3, 0, 2, 4, 5]
    """
    bits = np.maximum(np.frexp(np.asarray(df, dtype=np.float64))[1], 0)  # (below 1: 0)
    cut = hot_bits(np.bincount(bits, minlength=64), budget)
    return np.argsort(bits < cut, kind="stable")


def _fill_ranges(ratios: tuple, target: tuple, bounds, layout: tuple, spent, mm) -> None:
    """The kept columns' NB ratios written into the learner, the two ranges of ``bounds``
    on two threads, :data:`FILL_CHUNK` buckets at a time (``layout``: each range's
    cursors and the hot bits, :func:`column_layout`); after each chunk the count rows
    ``spent`` give its pages back (``mm``). ``ratios``: ``compact_ratios``' counts, rows, binary, alpha,
    n_seen, sums, min_df and df; ``target``: the learner's state, the column map, dense."""
    counts = ratios[0]
    S, column_of, dense = target
    cursors, bits = layout

    def fill(k):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        for start in range(lo, hi, FILL_CHUNK):
            end = min(start + FILL_CHUNK, hi)
            kernels.compact_ratios(*ratios, S, column_of, start, end, cursors[k], bits, dense)
            for row in spent:
                _release(mm, counts.shape[1], int(row), start, end)

    run_parts(fill, 2)


def label_ratios(
    model: NBSVMClassifier, learner: LinearSGD, counts: np.ndarray, kept_df: np.ndarray
) -> None:
    """Multi-label NB ratios from the counts by kept column into the learner's value
    field (:func:`fill_label_ratios`)."""
    fill_label_ratios(learner.S_, counts, kept_df, float(model.setting("alpha")))
    if counts.base is not None and counts.base is learner.S_:  # counted in the weights
        learner.S_[:, :, 1] = 0.0
    binary_values(model, learner)


def binary_values(model: NBSVMClassifier, learner: LinearSGD) -> None:
    """``weighting='binary'``: every kept column's value is 1 instead of its ratio."""
    if model.weighting == "binary":
        learner.S_[:, :, 0] = 1.0


def start_from_lexicon(model: NBSVMClassifier, lexicon: NBLexicon) -> None:
    """Take classes, counts and NB ratios from ``lexicon`` (weights zero), as a fit
    given that lexicon starts (Dask's trainer builds it across workers)."""
    adopt(model, ColumnBuilder(model, lexicon.hasher).from_lexicon(lexicon, None))


def adopt(model: NBSVMClassifier, columns: Columns) -> None:
    """Adopt what counting built (:mod:`nbsvm.models.columns`) as the learned state: a
    class whose documents all weigh 0 (or data that weigh nothing) is refused, as a class
    never seen would be: its ratios and prior would be those of no data."""
    counts = np.asarray(columns.class_counts, dtype=np.float64)
    if not counts.sum() > 0:
        raise NBSVMError("every document weighs 0 (--weight-col, sample_weight): nothing to learn")
    if counts.min() <= 0:  # (a label of label sets too: its output would learn nothing)
        empty = [c for c, n in zip(columns.classes, counts) if n <= 0]
        kind = "label" if model.multilabel else "class"
        raise NBSVMError(
            f"{kind} {empty[0]!r} has only documents of weight 0 (--weight-col, "
            f"sample_weight): every {kind} needs a document of weight > 0"
        )
    if columns.n_seen_buckets == 0:  # (it trained a model of the prior alone, without a word)
        raise NoneKept(
            "every document is empty: no word or character n-gram was read, so the model "
            "could only predict the class prior (is the text in another column or field?)"
        )
    model.class_names_, model.class_counts_ = Labels(columns.classes), columns.class_counts
    model.n_seen_buckets_ = columns.n_seen_buckets
    model.column_of_, model.linear_ = columns.column_of, columns.linear
    model.hasher_ = model._hasher()
    model.linear_.set_class_weight(output_weights(model))
