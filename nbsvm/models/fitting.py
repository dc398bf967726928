"""Fitting an NBSVM model on a stream of documents (``NBSVMClassifier.fit_documents``).

The steps, in order: one hashing pass writes the feature cache and counts (or a kept cache
is counted, or a prebuilt lexicon is taken as it is); the counts become the model's columns,
NB ratios and an empty learner (:mod:`nbsvm.models.columns`); Bottou's calibration picks eta0 when
asked (:mod:`nbsvm.learners.eta0`); the epochs replay the cache in shuffled groups
(:mod:`nbsvm.learners.epochs`), the first translating buckets to columns as it goes, with
checkpoints (:mod:`nbsvm.models.checkpoint`); the n-gram names of the strongest buckets are found
beside the last epochs (:mod:`nbsvm.evaluation.explain`). Everything it sets on the model is the
model's public learned state.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from nbsvm.data.batches import hash_batches
from nbsvm.data.cache import CacheWriter, FeatureCache, corpus_stats
from nbsvm.data.store import cache_folder
from nbsvm.errors import Diverged, NBSVMError, shown
from nbsvm.evaluation.bucket_names import TextSample, ngram_map
from nbsvm.io.document import Document
from nbsvm.io.labels import SEPARATOR, output_order
from nbsvm.learners.epochs import NO_WEIGHTS
from nbsvm.learners.eta0 import calibrate_eta0, calibration_sample
from nbsvm.lexicon.nblexicon import NBLexicon
from nbsvm.memory import check_fit_memory, hashing_bytes, releasable_int32
from nbsvm.models.columns import ColumnBuilder, adopt, seen_buckets
from nbsvm.models.counting import Counting, nonempty
from nbsvm.models.kept_columns import KeptColumns
from nbsvm.models.learner_setup import (
    codes_for,
    epochs_for,
    new_backend,
    positive_codes,
    targets_in,
)
from nbsvm.models.naming import Naming

if TYPE_CHECKING:
    from nbsvm.data.cachestore import KeptCache, ReadyCache
    from nbsvm.models.checkpoint import Checkpoint
    from nbsvm.models.nbsvm import NBSVMClassifier


def refuse_diverged(model: NBSVMClassifier, epoch: int, mean_loss: float) -> None:
    """Stop at the first epoch whose loss is NaN or infinite: its weights are too, a model
    no loader takes back (saved, it would replace a good file with one no command reads).
    A backend learner that reports no loss (the exact solver: NaN) is judged by its
    arrays."""
    if math.isfinite(mean_loss):
        return
    backend = getattr(model, "backend_", None) if model.backend_learner else None
    if backend is not None and math.isnan(mean_loss):
        try:
            for learner in backend.learners:
                learner.settle()  # (an exact solver solves now)
            return
        except Diverged:
            pass
    raise NBSVMError(
        f"training diverged in epoch {epoch} (mean loss {mean_loss}): the weights are no "
        f"longer finite. Lower --eta0 (eta0 {model.setting('eta0')}) or raise --lambda"
        + "".join(f"; {hint}" for hint in _extreme_settings(model))
    )


def _extreme_settings(model: NBSVMClassifier) -> list[str]:
    """Settings far outside what training steps take, which a divergence more likely
    comes from than eta0 (--alpha 1e308, a class weight of 1e300)."""
    hints = []
    alpha = model.alpha
    if isinstance(alpha, (int, float)) and alpha > 1e6:
        hints.append(f"--alpha {alpha:g} is far above 1 (the default)")
    weights = model.class_weight if isinstance(model.class_weight, dict) else {}
    large = {c: w for c, w in weights.items() if isinstance(w, (int, float)) and w > 1e6}
    if large:
        hints.append(
            "--class-weight "
            + ", ".join(f"{c}={w:g}" for c, w in large.items())
            + " scales the steps past what they take"
        )
    return hints


def data_defaults_event(model: NBSVMClassifier) -> dict:
    """The progress event that says what the data-dependent defaults became (after the
    first pass: ``model.corpus_`` is known)."""
    return {
        "stage": "data defaults",
        "docs": 0,
        "corpus": dict(model.corpus_),
        "chosen": {k: model.setting(k) for k in model.data_defaulted()},
    }


def lone_classes_event(model: NBSVMClassifier, cache: FeatureCache) -> dict | None:
    """The event naming classes that hold one training document (None: none do, or the
    counts are weights or label sets): a header line read as a document ('rating' (1)
    beside 'pos' (30)), or text and label swapped (a class per document) trained
    without a word. Up to three are named with the line they came from."""
    counts = np.asarray(model.class_counts_)
    if model.multilabel or counts.dtype.kind not in "iu":
        return None
    alone = [c for c, n in zip(model.class_names_, counts.tolist()) if n == 1]
    if not alone:
        return None
    where = dict(zip(cache.labels, cache.first_seen))
    named = [(c, where.get(c) or {}) for c in alone[:3]]
    # nearly every document alone: text and label swapped, not a few-shot corpus
    stage = "lone classes, most" if 10 * len(alone) >= 9 * counts.sum() else "lone classes"
    return {
        "stage": stage,
        "docs": 0,
        "alone": len(alone),
        "classes": int(counts.size),
        "documents": int(counts.sum()),
        "shown": named,
        # early stopping counted the part left for training: the split, not the file, can
        # leave a class one document (--valid 0.99 of a small file)
        "held_out": float(model.validation_fraction) if model.early_stopping else None,
    }


def label_set_classes_event(model: NBSVMClassifier) -> dict | None:
    """The event naming classes of a single-label model that read as label sets ('pos,neg'
    beside 'pos'): a multi-label file trained without ``--multilabel`` learns each
    combination as a class of its own, without a word (fastText refuses such labels). None
    when no part of a class name holding ``,`` is a class of its own (``'Portland, OR'``
    beside ``'Portland, ME'`` are names)."""
    return None if model.multilabel else label_sets_among(list(model.class_names_))


def label_sets_among(classes: list) -> dict | None:
    """:func:`label_set_classes_event` of single-label ``classes``."""
    names = set(classes)
    sets = [
        c for c in classes if SEPARATOR in c and any(p.strip() in names for p in c.split(SEPARATOR))
    ]
    if not sets:
        return None
    return {
        "stage": "label sets as classes",
        "docs": 0,
        "sets": len(sets),
        "classes": len(classes),
        "shown": sets[:3],
    }


def label_sets_message(event: dict, flag: str) -> str:
    """An API's words for :func:`label_set_classes_event` (``flag``: what learns each
    label there)."""
    return (
        f"{event['sets']} of {event['classes']} classes read as label sets "
        f"({', '.join(map(shown, event['shown']))}): each is a class of its own; "
        f"{flag} learns each label"
    )


def corpus_from_lexicon(
    model: NBSVMClassifier,
    lexicon: NBLexicon,
    corpus: dict | None,
    notify: Callable[[dict], object],
) -> bool:
    """Before a given lexicon's columns are built: refuse a lexicon of one class, and set
    the corpus the data-dependent defaults read: ``corpus`` (continued training), else the
    one the lexicon counted (``nbsvm lexicon`` records it; a file of an earlier version
    does not, and a note says the package's defaults apply). Returns whether the defaults
    were read from the lexicon's (to be announced once the classes are known)."""
    if len(lexicon.classes_) < 2 and not model.multilabel:
        raise NBSVMError(
            f"the lexicon counted one class ({', '.join(lexicon.classes_)}): a model "
            "needs two; count it again on data with every class"
        )
    if corpus is not None:
        model.corpus_ = corpus
        return False
    if lexicon.corpus_:
        model.corpus_ = dict(lexicon.corpus_)
        return True
    if None in (model.min_df, model.eta0, model.norm):
        notify({"stage": "lexicon without corpus", "docs": 0})
    return False


def read_sample(cache: FeatureCache) -> list[str]:
    """The text sample kept with a cache (empty if missing or unreadable: it only names
    buckets in explanations)."""
    try:
        texts = json.loads((cache.folder / "sample.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    return [t for t in texts if isinstance(t, str)] if isinstance(texts, list) else []


class Fit:
    """One ``fit_documents`` run of ``model`` (see its docstring for the arguments)."""

    def __init__(
        self,
        model,
        lexicon: NBLexicon | None = None,
        callback: Callable[[dict], None] | None = None,
        max_memory=None,
        kept: KeptCache | ReadyCache | None = None,
        checkpoint: Checkpoint | None = None,
        warm: dict | None = None,
    ):
        self.model = model
        self.lexicon = lexicon
        # (nbsvm.models.warm) "corpus": the data defaults' statistics, read by the pass
        # that counted the lexicon; "keep": the model keeps the lexicon; "source": a saved
        # model whose weights the common buckets start from; "after_epoch": an
        # EarlyStopping (nbsvm.models.early_stopping) told of every epoch
        self.warm = warm or {}
        self.notify = callback or (lambda event: None)
        self.max_memory = max_memory
        self.kept = kept
        self.checkpoint = checkpoint
        self.timings: dict = {}
        self.naming = Naming(model)  # the strongest buckets named beside the last epochs

    def _check(self):
        """Refuse what cannot work before anything is read; return the hasher."""
        model, lexicon, kept = self.model, self.lexicon, self.kept
        hasher = model.validate()
        if lexicon is None:  # the hashing pass: two int32 rows of 2**n_bits
            check_fit_memory(hashing_bytes(hasher.n_bits), self.max_memory, what="the hashing pass")
        if lexicon is not None and lexicon.hasher != hasher:
            raise NBSVMError(
                f"the lexicon was built with {lexicon.hasher.settings()} but the "
                f"model asks for {hasher.settings()}"
            )
        if kept is not None and kept.hasher != hasher:
            raise NBSVMError(
                f"the kept cache is keyed on {kept.hasher.settings()} but the "
                f"model asks for {hasher.settings()}"
            )
        return hasher

    def run(self, docs: Iterable[Document]) -> None:
        model, kept, notify = self.model, self.kept, self.notify
        hasher = self._check()
        model.forget()
        self.saved = self.checkpoint.load(model) if self.checkpoint is not None else None
        self.builder = ColumnBuilder(model, hasher, self.max_memory, notify)
        self.counting = Counting(model, hasher, notify, self.max_memory)
        self.t0 = time.perf_counter()
        tmp = cache_folder(model.cache_dir, "nbsvm-cache-")
        try:
            cache, sample, first_epoch, translate, ordered = self._columns(docs, hasher, tmp)
            if first_epoch == 1:
                notify({"stage": "lexicon done", "docs": cache.n_docs})
                self.timings["lexicon_s"] = time.perf_counter() - self.t0
            model.n_docs_, model.weight_sum_ = cache.n_docs, cache.weight_sum
            self.timings["cache_ngrams"] = int(cache.n_ids)  # what the epochs stream
            self.timings["cache_bytes"] = cache.nbytes
            positive = targets_in(model, cache)
            self._prepare_learner(cache, positive, translate)
            into = tmp / "columns" if kept is not None else None  # the kept cache stays
            mapper = self._train(cache, positive, sample, first_epoch, translate, ordered, into)
            self.timings["train_s"] = (
                time.perf_counter() - self.t0 - self.timings.get("lexicon_s", 0.0)
            )
            cache.close()
            del cache
            t1 = time.perf_counter()
            model.mean_abs_coef_ = model.linear_.mean_abs_coef()
            if mapper is not None:
                model.ngram_map_ = mapper.result()
            else:
                model.ngram_map_ = ngram_map(model, sample.texts) if sample.texts else {}
            self.timings["ngram_map_wait_s"] = time.perf_counter() - t1
        except NBSVMError as e:
            if kept is not None and kept.owns(e):  # never trip over it again
                cast("KeptCache", kept).discard(str(e))  # a ReadyCache owns no error
                raise NBSVMError(
                    f"{e.message} (the kept cache was removed; the next run "
                    f"hashes the inputs again)",
                    path=e.path,
                ) from None
            raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        model.timings_ = self.timings

    def _columns(self, docs, hasher, tmp: Path):
        """The feature cache and the model's columns: ``(cache, sample, first_epoch,
        translate, ordered)`` (``translate``: epoch 1 maps the cache's buckets to columns;
        ``ordered``: in stored order, as if streamed, instead of shuffled)."""
        model, kept, builder, notify = self.model, self.kept, self.builder, self.notify
        lexicon, self.lexicon = self.lexicon, None  # the only reference: freed after use
        cache, writer, sample, docs = self._open_cache(docs, hasher, tmp)
        if lexicon is None:
            return self._count_columns(docs, hasher, cache, writer, sample)
        announce = corpus_from_lexicon(model, lexicon, self.warm.get("corpus"), notify)
        adopt(model, builder.from_lexicon(lexicon, None))
        if announce:
            notify(data_defaults_event(model))
        sets = label_set_classes_event(model)  # (the lexicon's classes: said as train says)
        if sets is not None:
            notify(sets)
        if self.warm.get("keep"):
            model.lexicon_ = lexicon  # counts for a later train --init (left intact)
            lexicon.alpha = float(model.setting("alpha"))  # its ratios are the model's
        if "source" in self.warm:
            notify(
                {"stage": "init", "docs": 0, "buckets": transfer_state(self.warm["source"], model)}
            )
        del lexicon
        if (
            cache is None
            and kept is None
            and self.saved is None
            and model.backend_learner is None
            and not model.multilabel
        ):
            notify({"stage": "lexicon done", "docs": 0})
            cache = epochs_for(model, notify).stream_first(
                hash_batches(docs, model.hasher_, max_memory=self.max_memory),
                writer,
                model.column_of_,
                lambda batch: codes_for(model, batch.labels, batch),
                positive_codes(model),
            )
            return cache, sample, 2, False, False  # written as columns already
        # a bucket cache (kept, or needed to rebuild epoch 1's columns on resume) replayed
        # in stored order trains exactly as streaming would
        if cache is None:
            cache = self._hash_pass(docs, writer)
        return cache, sample, 1, True, True

    def _open_cache(self, docs, hasher, tmp: Path):
        """A kept cache when one matches, else a writer for a new one: ``(cache, writer,
        sample, docs)``, the documents wrapped to keep a sample of their texts (it names
        the buckets for explanations)."""
        kept, notify = self.kept, self.notify
        cache = kept.open() if kept is not None else None
        if kept is not None:
            notify(
                {
                    "stage": "cache",
                    "reused": cache is not None,
                    "folder": str(kept.folder),
                    "discarded": kept.discarded,
                    "docs": cache.n_docs if cache is not None else 0,
                }
            )
        writer = None
        sample = TextSample(seed=self.model.seed)
        if cache is None:
            # a ReadyCache always opens: only a KeptCache can be missing its cache
            writer = (
                cast("KeptCache", kept).writer()
                if kept is not None
                else CacheWriter(tmp / "train", hasher)
            )
            if kept is not None:  # a later run reusing the cache names buckets too
                writer.attachments["sample.json"] = lambda: json.dumps(sample.texts).encode()
            docs = sample.wrap(docs)
        else:
            sample.texts = read_sample(cache)
        return cache, writer, sample, docs

    def _count_columns(self, docs, hasher, cache, writer, sample):
        """Without a lexicon: the classes counted while hashing (or from the cache), the
        data defaults read, the columns built (:meth:`_columns`' tuple)."""
        model, builder = self.model, self.builder
        # two int32 rows of 2**n_bits in releasable memory: two classes are counted in
        # them, from a third on the documents per bucket (nbsvm.models.columns)
        mm, store = releasable_int32((2, 1 << hasher.n_bits))
        if cache is None:
            lexicon, cache, df = self.counting.hashing_pass(docs, writer, store, mm)
        else:
            lexicon, df = self.counting.count_cache(cache, store, mm)
        model.corpus_ = corpus_stats(cache)  # for the data-dependent defaults
        if lexicon is not None:
            in_store = mm if lexicon.counts_in(store) else None
            seen = seen_buckets(cache, hasher.n_bits)
            adopt(model, builder.from_lexicon(lexicon, in_store, seen=seen))
        else:
            kept = KeptColumns(model, hasher, self.max_memory, self.notify)
            adopt(model, kept.build(cache, df))
        self.notify(data_defaults_event(model))
        for event in (lone_classes_event(model, cache), label_set_classes_event(model)):
            if event is not None:
                self.notify(event)
        # columns that are buckets read the cache as it is (dropped buckets: ratio 0)
        return cache, sample, 1, model.column_of_ is not None, False

    def _hash_pass(self, docs, writer) -> FeatureCache:
        """Hash every document into a bucket cache, without counting or training."""
        with writer:
            n = 0
            for batch in hash_batches(docs, self.model.hasher_, max_memory=self.max_memory):
                writer.add(batch)
                n += len(batch)
                self.notify({"stage": "hash", "docs": n})
            cache = writer.close()
        return nonempty(cache)

    def _prepare_learner(self, cache: FeatureCache, positive, translate: bool) -> None:
        """The backend learners (``learner``), or Bottou's eta0 for ``eta0='auto'``."""
        model = self.model
        if model.backend_learner is not None:
            if cache.weighted:
                raise NBSVMError(NO_WEIGHTS)
            model.backend_ = new_backend(model)
        elif model.setting("eta0") == "auto":
            model.eta0_ = calibrate_eta0(
                model.linear_,
                calibration_sample(
                    cache, positive, model.column_of_ if translate else None, model.seed
                ),
            )
            model.linear_.eta0 = model.eta0_
            self.notify({"stage": "eta0", "eta0": model.eta0_, "docs": 0})

    def _train(self, cache, positive, sample, first_epoch, translate, ordered, into):
        """The epochs (after a checkpoint's, when resuming); returns the n-gram mapper
        started beside the last epochs, if any."""
        model, checkpoint, notify = self.model, self.checkpoint, self.notify
        rng = np.random.default_rng(model.seed)
        if self.saved is not None:
            # rebuild epoch 1's column cache (and the generator's draws) without training
            if translate and first_epoch == 1:
                groups = cache.translated_groups(
                    model.column_of_, None if ordered else rng, into=into
                )
                with contextlib.closing(groups):
                    for _ in groups:
                        notify({"stage": "resume", "docs": 0})
            first_epoch = checkpoint.restore(model, self.saved, rng) + 1
            self.naming.named = self.saved.get("named")  # the naming's snapshot, if taken
            translate = False
            notify({"stage": "resumed", "epoch": first_epoch - 1})
        mapper = None
        epochs = model.setting("epochs")
        run = epochs_for(model, notify)
        stopper = self.warm.get("after_epoch")  # early stopping on a held-out part
        for epoch in range(first_epoch, epochs + 1):
            if mapper is None and stopper is None:  # (early stopping: named afterwards)
                mapper = self.naming.start_at(epoch, first_epoch, epochs, sample.texts)
            groups = None
            if translate and epoch == first_epoch:
                groups = cache.translated_groups(
                    model.column_of_, None if ordered else rng, rewrite=epoch < epochs, into=into
                )
            try:
                loss = run.replay(cache, positive, rng, epoch, groups)
            except Diverged:  # a backend learner's, said in the options' words below
                loss = math.inf
            refuse_diverged(model, epoch, loss)
            if checkpoint is not None and checkpoint.due(epoch, epochs):
                checkpoint.save(model, epoch, rng, named=self.naming.named)
                notify(
                    {"stage": "checkpoint", "epoch": epoch, "docs": 0, "path": str(checkpoint.path)}
                )
            if stopper is not None and stopper.after_epoch(epoch, epochs):
                break
        if stopper is not None:
            stopper.restore()  # the best epoch's weights, before the map
        return mapper


def transfer_state(source: NBSVMClassifier, model: NBSVMClassifier) -> int:
    """Start ``model``'s columns from ``source``'s (a fitted model with a column map) for the
    buckets both have: weight, AdaGrad sum; and the scalars (bias, step counter, bias sum).
    Outputs are matched by class name (:func:`~nbsvm.io.labels.output_order`). Returns how
    many buckets were carried over."""
    src, dst = source.linear_, model.linear_
    if (src.n_outputs, src.optimizer) != (dst.n_outputs, dst.optimizer):
        raise NBSVMError("the saved model's outputs or optimizer differ from the new one's")
    order, sign = output_order(list(source.class_names_), list(model.class_names_), dst.n_outputs)
    src.coef()  # SGD: the scale folded in, so state_ holds s = 1
    d = 1 << model.hasher_.n_bits
    src_of = source.column_of_ if source.column_of_ is not None else np.arange(d, dtype=np.int32)
    dst_of = model.column_of_ if model.column_of_ is not None else np.arange(d, dtype=np.int32)
    both = np.flatnonzero((src_of >= 0) & (dst_of >= 0))
    src_cols, dst_cols = src_of[both], dst_of[both]
    fields = [1, 2] if dst.optimizer == "adagrad" else [1]
    for k, j in enumerate(order):  # one output at a time: no copy of the whole state
        for f in fields:
            dst.S_[k, dst_cols, f] = src.S_[j, src_cols, f]
        dst.state_[k] = src.state_[j]
    # two classes the other way round: the ratios (feature values) change sign with the
    # scores, so the weights stay as they are and only the bias changes sign
    dst.state_[:, 1 if dst.optimizer == "sgd" else 0] *= sign
    return int(both.size)
