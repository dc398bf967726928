"""Backend learners saved by ``nbsvm learn``: their files read back, and streaming
evaluation and prediction on sparse-feature files with the settings they were trained with
(format, hashing, index base)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.config import DEFAULT_N_BITS, MAX_BITS, MIN_BITS
from nbsvm.data.rowcache import one_label, regression_target
from nbsvm.data.rowencoder import (
    BATCH_ROWS,
    RowEncoder,
    has_labels,
    is_hashed,
    model_file_format,
    read_rows,
    row_batches,
)
from nbsvm.data.rows import SparseRows
from nbsvm.errors import NBSVMError
from nbsvm.evaluation.metrics import (
    add_regression_sums,
    add_sums,
    confusion_matrix,
    multilabel_counts,
    multilabel_report,
    regression_report,
    regression_sums,
    report,
    unseen_key,
)
from nbsvm.evaluation.results import Report
from nbsvm.io.decoding import check_encoding
from nbsvm.io.sparse import SPARSE_FORMATS, label_number
from nbsvm.learners.base import OnlineLearner

if TYPE_CHECKING:
    import pandas as pd

    from nbsvm.io.decoding import ReadStats


def load_learner(path: str | os.PathLike[str]) -> OnlineLearner:
    model = OnlineLearner.load(path)
    if not hasattr(model, "n_features_in_"):
        raise NBSVMError("the learner in this file was never trained", path=str(path))
    fmt, n_bits = getattr(model, "format_", "svmlight"), getattr(model, "n_bits_", 0)
    base, seed = getattr(model, "index_base_", 0), getattr(model, "hash_seed_", 0)
    hashed = is_hashed(fmt) if isinstance(fmt, str) and fmt in SPARSE_FORMATS else None
    columns = getattr(model, "columns_", None)  # checked when loaded: increasing, one a weight
    if (
        hashed is None
        or any(isinstance(v, bool) or not isinstance(v, int) for v in (n_bits, base, seed))
        or base not in (0, 1)
        or not 0 <= seed < 2**32
        or not (n_bits == 0 or MIN_BITS <= n_bits <= MAX_BITS)  # 0: never hashed
        or (
            hashed
            and not (
                MIN_BITS <= (n_bits or DEFAULT_N_BITS) <= MAX_BITS
                and (
                    1 << (n_bits or DEFAULT_N_BITS) <= model.n_features_in_
                    if columns is None  # every hashed index is a weight's
                    else _width(model) <= 1 << (n_bits or DEFAULT_N_BITS)
                )
            )
        )
    ):
        # hashed indices are < 2**n_bits_ and index the weights (or find their column among
        # columns_): they must fit
        raise NBSVMError(
            f"corrupted learner file: format_={fmt!r}, n_bits_={n_bits!r}, "
            f"index_base_={base!r}, hash_seed_={seed!r} do not fit "
            f"{model.n_features_in_} features",
            path=str(path),
        )
    return model


def _width(model: OnlineLearner) -> int:
    """The feature indices a model's weights cover: below its last column's + 1 when it
    keeps the columns its training data used (``columns_``), else its number of weights."""
    columns = getattr(model, "columns_", None)
    if columns is None:
        return int(model.n_features_in_)
    return int(columns[-1]) + 1 if columns.size else 0


def feature_space(model: OnlineLearner) -> int:
    """How many columns a model's inputs fall in: ``2**n_bits_`` for hashed names, else
    the indices its weights cover (its last column's + 1: the largest index it trained on,
    when it keeps the columns used)."""
    n_bits = getattr(model, "n_bits_", 0)
    return 1 << n_bits if n_bits else _width(model)


def _model_encoder(model: OnlineLearner, path, fmt: str) -> tuple[str, RowEncoder]:
    f = model_file_format(path, fmt, getattr(model, "format_", "svmlight"))
    return f, RowEncoder(
        f,
        getattr(model, "n_bits_", 0) or DEFAULT_N_BITS,
        getattr(model, "hash_seed_", 0),
        n_features=_width(model),
        columns=getattr(model, "columns_", None),
    )


def _stream(model, inputs, fmt, labeled, batch_rows, strict=False, stats=None, encoding="utf-8"):
    """``(records, SparseRows)`` batches of every input, read with the model's settings;
    labeled (eval): a number label spelled otherwise than the model's class of that number
    (``+1`` for ``1``) is refused, as learn refuses it between its files."""
    inputs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    # named features read in another encoding hash to other columns (svmlight's integer
    # indices do not depend on it; a model written before encodings were kept says nothing)
    trained = getattr(model, "encoding_", None)
    encoding = check_encoding(encoding)  # its canonical name, as learn recorded it
    if trained is not None and getattr(model, "n_bits_", 0) and trained != encoding:
        raise NBSVMError(
            f"this model read its training inputs as {trained}: read these with "
            f"--encoding {trained} (given: {encoding})"
        )
    spellings = _class_spellings(model) if labeled else None
    for path in inputs:
        f, encoder = _model_encoder(model, path, fmt)
        _refuse_unknown_base(model, f, path)
        with_labels = labeled if labeled is not None else has_labels(path, f)
        reader = read_rows(
            path,
            f,
            labeled=with_labels,
            index_base=getattr(model, "index_base_", 0),
            strict=strict,
            stats=stats,
            encoding=encoding,
            targets=model.task == "regression",  # 1 and 1.0: one value, as learn reads
            spellings=spellings,
            label_sets=model.task == "multilabel",
        )
        for records in row_batches(reader, batch_rows):
            indices, values, offsets = encoder.encode(records)
            # (Blitzer's records are read with their #label# when they have one)
            truth = with_labels or (f == "blitzer" and any(r.labels for r in records))
            yield records, SparseRows(indices, values, offsets, model.n_features_in_), truth
        if encoder.dropped and stats is not None:
            base = getattr(model, "index_base_", 0)
            stats.note(
                f"{path}: {encoder.dropped:,} feature value(s) in {encoder.dropped_rows:,} "
                f"row(s) have indices past the model's last ({_width(model) - 1 + base}):"
                " weighed 0, as features unseen in training are"
            )


def _refuse_unknown_base(model: OnlineLearner, fmt: str, path) -> None:
    """Refuse to read integer feature indices for a model that does not say where they
    start (one trained in Python and saved): read from 0, a file of 1-based indices (the
    svmlight standard) fell one column off every weight (56.67% where Python scored 100%)."""
    if is_hashed(fmt) or "index_base_" in vars(model):
        return
    raise NBSVMError(
        "this model does not say whether its feature indices start at 0 or 1 (it was not "
        "trained by nbsvm learn): set index_base_ on the learner before saving it (1 when "
        "scikit-learn's load_svmlight_file read its training file without an index 0, the "
        "svmlight standard; 0 when the file had one)",
        path=str(path),
    )


def _class_spellings(model: OnlineLearner) -> dict | None:
    """The model's number classes as :func:`~nbsvm.io.sparse.read_svmlight`'s table of
    first spellings (``{1.0: ('1', ...)}``); None for regression."""
    if model.task == "regression":
        return None
    spellings: dict[float, tuple[str, str, int]] = {}
    words = getattr(model, "format_", "svmlight") != "svmlight"  # (as learn read them)
    # (classes that are numbers, fitted in Python, have no spelling: found by value)
    for name in (c for c in getattr(model, "classes_", []) if isinstance(c, str)):
        value = label_number(name, words)
        if value is not None and value == value:
            spellings.setdefault(value, (name, "the model's classes", 0))
    return spellings


def evaluate_sparse(
    model: OnlineLearner,
    inputs: str | Path | Iterable[str | Path],
    fmt: str = "auto",
    batch_rows: int = BATCH_ROWS,
    callback: Callable[[dict], None] | None = None,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
) -> dict:
    """Metrics of ``model`` on labeled sparse files, streaming in batches.

    Classification: :func:`nbsvm.evaluation.metrics.report` (accuracy, per-class P/R/F1, confusion);
    multi-label: :func:`~nbsvm.evaluation.metrics.multilabel_report`; regression:
    :func:`~nbsvm.evaluation.metrics.regression_report`. Every report has ``task``.
    """
    tally = _Tally(model)
    for records, rows, _ in _stream(model, inputs, fmt, True, batch_rows, strict, stats, encoding):
        tally.add(records, rows)
        if callback:
            callback({"stage": "eval", "docs": tally.n})
    return tally.report()


class _Tally:
    """What :func:`evaluate_sparse` sums batch by batch, by task. A true label the model
    does not know counts as an error, as ``nbsvm eval`` counts it on text: a class of the
    report that is never predicted (recall 0; multi-label: a missed label), listed in
    ``unseen_labels``."""

    def __init__(self, model: OnlineLearner):
        self.model, self.task = model, model.task
        self.classes = [str(c) for c in getattr(model, "classes_", [])]
        self.index = {c: i for i, c in enumerate(self.classes)}
        # classes that are numbers (fitted in Python: -1.0 from load_svmlight_file) take
        # the labels equal to them ('-1'), which were all counted wrong
        self.by_value = {
            float(c): i
            for i, c in enumerate(getattr(model, "classes_", []))
            if isinstance(c, (int, float, np.number)) and not isinstance(c, bool)
        }
        self.unseen: dict[str, int] = {}  # label -> examples holding it
        self.unseen_code: dict[str, int] = {}  # label -> its code, past the classes
        self.cm = np.zeros((len(self.classes),) * 2, np.int64)
        self.unseen_rows: dict[str, np.ndarray] = {}  # label -> its predictions per class
        self.sums: dict | None = None
        self.n = 0

    def _code(self, label: str) -> int:
        """A label's class index; past the model's classes for one it does not know."""
        code = self.index.get(label)
        if code is None and self.by_value:
            value = label_number(label, False)
            code = None if value is None else self.by_value.get(value)
        if code is None:
            label = unseen_key(label, self.unseen)
            n = self.unseen.get(label, 0)
            self.unseen[label] = n + 1
            if not n:  # a new one: the next code past the classes (dicts keep their order)
                self.unseen_code[label] = len(self.classes) + len(self.unseen_code)
            code = self.unseen_code[label]
        return code

    def add(self, records: list, rows: SparseRows) -> None:
        model, k = self.model, len(self.classes)
        if self.task == "regression":
            y = [regression_target(r) for r in records]
            self.sums = add_regression_sums(self.sums, regression_sums(y, model.predict(rows)))
        elif self.task == "multilabel":
            truth = np.zeros((len(records), k), dtype=bool)
            missed = np.zeros(len(records), dtype=np.int64)  # unknown true labels
            for d, r in enumerate(records):
                for code in map(self._code, r.labels):
                    if code < k:
                        truth[d, code] = True
                    else:
                        missed[d] += 1
            predicted = model.decision_function(rows) > 0
            part = multilabel_counts(truth, predicted)
            part["wrong"] += int(missed.sum())
            part["exact"] -= int(((truth == predicted).all(axis=1) & (missed > 0)).sum())
            self.sums = add_sums(self.sums, part)
        else:
            truth = np.array([self._code(one_label(r)) for r in records], np.int64)
            pred = np.array([self.index[str(p)] for p in model.predict(rows)], np.int64)
            known = truth < k
            self.cm += confusion_matrix(truth[known], pred[known], k)
            labels = list(self.unseen_code)  # by code past the classes
            for code, p in zip(truth[~known].tolist(), pred[~known].tolist()):
                row = self.unseen_rows.setdefault(labels[code - k], np.zeros(k, np.int64))
                row[p] += 1
        self.n += len(records)

    def report(self) -> Report:
        if self.n == 0:
            raise NBSVMError("no examples to evaluate")
        if self.task == "regression":
            assert self.sums is not None  # every batch (n > 0: one at least) added its sums
            return Report(regression_report(self.sums))
        classes = self.classes + list(self.unseen)
        if self.task == "multilabel":
            assert self.sums is not None
            sums, u = dict(self.sums), len(self.unseen)
            for name, extra in (
                ("tp", [0] * u),
                ("fp", [0] * u),
                ("fn", list(self.unseen.values())),
            ):
                sums[name] = np.concatenate([sums[name], np.asarray(extra, dtype=np.int64)])
            rep = multilabel_report(sums, classes)
        else:
            rep = report(self.cm, self.classes, unseen=self.unseen_rows)
        if self.unseen:
            rep["unseen_labels"] = dict(self.unseen)
        return Report(rep, task=self.task) if self.task != "multilabel" else Report(rep)


def predict_sparse(
    model: OnlineLearner,
    inputs: str | Path | Iterable[str | Path],
    fmt: str = "auto",
    batch_rows: int = BATCH_ROWS,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
) -> Iterator[pd.DataFrame]:
    """One table per batch: ``source, line, [true_label,] label`` and a score
    (classification; several labels joined by ``,``): two classes, ``score_<c>``, the
    decision value of the positive class ``c = classes_[1]`` whatever the predicted label
    (as ``nbsvm predict`` names it: with ``+1``/``-1`` labels, ``classes_[1]`` is ``-1``);
    more, ``score``, the predicted class's; none for multi-label. ``prediction`` for
    regression.
    Input labels, when the first file has them, are copied to ``true_label`` (empty for
    examples without one)."""
    import pandas as pd

    classes = np.asarray(getattr(model, "classes_", []), dtype=object)
    with_truth = None  # decided by the first file: every table has one header
    batches = _stream(model, inputs, fmt, None, batch_rows, strict, stats, encoding)
    for records, rows, labeled in batches:
        frame = {"source": [r.source for r in records], "line": [r.line for r in records]}
        if with_truth is None:  # (its first rows may be empty label sets, or few and wide)
            with_truth = bool(labeled)
        if with_truth:
            frame["true_label"] = [",".join(r.labels) for r in records]
        scores = (
            model.predict(rows) if model.task == "regression" else model.decision_function(rows)
        )
        if model.task == "regression":
            frame["prediction"] = scores
        elif model.task == "multilabel":
            frame["label"] = [",".join(classes[np.flatnonzero(s > 0)]) for s in scores]
        elif model.task == "binary" or scores.ndim == 1:  # two classes: one score
            frame["label"] = classes[(scores > 0).astype(np.int64)]
            frame[f"score_{classes[1]}"] = scores
        else:
            best = np.argmax(scores, axis=1)
            frame["label"] = classes[best]
            frame["score"] = scores[np.arange(len(best)), best]
        yield pd.DataFrame(frame)
    if with_truth is None:  # as nbsvm predict refuses text with no document (a 0-byte file)
        names = inputs if isinstance(inputs, (str, Path)) else ", ".join(map(str, inputs))
        raise NBSVMError("no examples found (empty input)", path=str(names))
