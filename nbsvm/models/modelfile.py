"""Model files: an NBSVM model as ``.npz`` arrays (no object arrays, never pickled) with a
JSON header, written to a temporary name and renamed (:mod:`nbsvm.io.npzfile`).

Arrays: ``buckets`` (the kept buckets, sorted), ``ratios`` and ``coef`` (one row per
output over those buckets), ``learner_state``, AdaGrad's ``adagrad_sq``, the n-gram map for
explanations, and a backend learner's parts. The header holds every parameter, the
hasher, classes and counts, and for labels that were not strings their values
(``label_values``: ``predict`` after ``load`` returns ``1``, not ``'1'``). Loading checks
every shape, dtype and value the kernels rely on, the classes against the arrays first.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm._version import __version__
from nbsvm.config import BUCKET_DTYPE, FORMER_TOKENIZER
from nbsvm.data.translate import mapped_buckets
from nbsvm.errors import NBSVMError
from nbsvm.evaluation.ngram_map import decode_map, encode_map
from nbsvm.io.npzfile import Chunked, load_npz, save_npz
from nbsvm.learners.calibrator import Calibrator
from nbsvm.learners.persistence import label_values, read_label_values
from nbsvm.learners.reduction import NBReduction
from nbsvm.learners.sgd import STATE_DTYPE
from nbsvm.learners.targets import Labels
from nbsvm.lexicon.nblexicon import NBLexicon, checked_corpus
from nbsvm.models import history, quantize
from nbsvm.models.learner_setup import new_linear, output_weights
from nbsvm.text.hashing import Hasher

if TYPE_CHECKING:
    from nbsvm.learners.sgd import LinearSGD
    from nbsvm.models.nbsvm import NBSVMClassifier

#: parameters saved under an older name -> their name now
RENAMED = {"l2": "lam"}


def _check_model_values(clf, learner, buckets, state, path, chunk: int = 1 << 20) -> None:
    """Value checks of a loaded model (its arrays' dtypes and shapes are checked already):
    what the compiled kernels index with must be in range, what they add must be finite
    (the learner's state a chunk of columns at a time: no temporary of its size)."""

    def bad(what):
        raise NBSVMError(f"corrupted model file: {what}", path=str(path))

    if buckets.size and (buckets.min() < 0 or buckets.max() >= 1 << clf.hasher_.n_bits):
        bad(f"buckets outside the {clf.hasher_.n_bits}-bit range")
    if buckets.size > 1 and np.any(np.diff(buckets) <= 0):
        bad("buckets not strictly increasing (unsorted or repeated)")
    if len(set(clf.class_names_)) != len(clf.class_names_):
        bad(f"repeated class names {clf.class_names_}")
    if (
        clf.n_docs_ < 0
        or not 0 <= clf.weight_sum_ < float("inf")
        or np.any(clf.class_counts_ < 0)
        or not 0 <= clf.n_seen_buckets_ <= (1 << clf.hasher_.n_bits)
    ):
        bad("negative or impossible counts")
    S = learner.S_
    for c, name in enumerate(("ratios", "coef", "adagrad_sq")[: S.shape[2]]):
        if not all(
            np.isfinite(S[:, lo : lo + chunk, c]).all() for lo in range(0, S.shape[1], chunk)
        ):
            bad(f"non-finite values in {name}")
    if S.shape[2] > 2 and any(
        (S[:, lo : lo + chunk, 2] < 0).any() for lo in range(0, S.shape[1], chunk)
    ):
        bad("negative values in adagrad_sq")
    for name, a in (("learner_state", state), ("mean_abs_coef", clf.mean_abs_coef_)):
        if not np.isfinite(a).all():
            bad(f"non-finite values in {name}")


def _check_classes_fit_arrays(clf, shapes: dict, path) -> None:
    """The header's classes against the arrays' outputs, checked before any setting that
    follows the number of classes (loss, optimizer, eta0) is read from them: a header that
    lists classes the arrays were not trained for is named as such."""
    classes, counts = clf.class_names_, clf.class_counts_
    if len(classes) < (1 if clf.multilabel else 2):
        raise NBSVMError(
            f"corrupted model file: the header lists {len(classes)} class(es)", path=str(path)
        )
    if len(counts) != len(classes):
        raise NBSVMError(
            f"corrupted model file: the header lists {len(classes)} classes "
            f"but {len(counts)} class counts",
            path=str(path),
        )
    n_out = clf.n_outputs()
    rows = {name: shape[0] if shape else None for name, shape in shapes.items()}
    wrong = sorted({n for n in rows.values() if n != n_out}, key=str)
    if wrong:
        shown = ", ".join(map(str, classes[:5])) + (", ..." if len(classes) > 5 else "")
        held = "; ".join(
            f"{n} ({', '.join(sorted(k for k, m in rows.items() if m == n))})" for n in wrong
        )
        raise NBSVMError(
            f"corrupted model file: the header lists {len(classes)} classes "
            f"({shown}) for {n_out} output{'s' if n_out != 1 else ''}, but the "
            f"arrays hold {held}",
            path=str(path),
        )


#: Buckets looked at per part when saving (with a map, the stored buckets are found once,
#: sized by the kept columns, and written this many at a time; without one, only a part's).
SAVE_PART = 1 << 20


def _stored_parts(clf):
    """The buckets a model file stores, in parts of at most :data:`SAVE_PART` buckets:
    ``(buckets, columns)`` pairs in bucket order, buckets int32, columns int32 or, where
    they are consecutive, a slice (the state is then read as a view, not gathered). With a
    map every mapped bucket (each is a seen one); columns that are buckets store the used
    ones (a value or weight not 0)."""
    learner = clf.linear_
    if clf.column_of_ is None:
        for lo in range(0, learner.n_features, SAVE_PART):
            hi = min(lo + SAVE_PART, learner.n_features)
            # a backend learner's arrays span every column: store them all, so that the
            # columns the file gives back are the ones its weights are indexed by
            used = (
                learner.used_features(lo, hi)
                if clf.backend_learner is None
                else np.arange(lo, hi, dtype=BUCKET_DTYPE)
            )
            yield used, used
        return
    # one scan of the map (two threads), never one per part
    buckets, columns, in_order = mapped_buckets(clf.column_of_)
    for lo in range(0, buckets.size, SAVE_PART):
        hi = min(lo + SAVE_PART, buckets.size)
        yield buckets[lo:hi], slice(lo, hi) if in_order else columns[lo:hi]


#: wall-clock times a fit records (its search's, its calibration's): said as it runs, never
#: saved: the same data, settings and seed give the same file byte for byte (they made two
#: runs' files differ wherever a calibration ran, as --calibrate auto does by default)
TIMES = ("seconds", "final_training_s")


def _without_times(record: dict | None) -> dict | None:
    return None if record is None else {k: v for k, v in record.items() if k not in TIMES}


def save_model(
    clf: NBSVMClassifier,
    path: str | os.PathLike[str],
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write ``clf`` (a fitted :class:`~nbsvm.NBSVMClassifier`) to ``path`` atomically: seen
    buckets only, as .npz with a JSON header (``before_replace``: called once it is
    written, before it replaces ``path``; what it raises leaves ``path`` as it was)."""
    clf.check_fitted()
    _refuse_not_finite(clf.linear_)
    arrays = _state_arrays(clf)
    arrays.update(encode_map(getattr(clf, "ngram_map_", None) or {}))
    backend = None
    if clf.backend_learner is not None:
        backend, own = clf.backend_.parts()
        arrays.update(own)
    header = dict(
        package_version=__version__,
        params={p: v for p, v in clf.get_params().items() if p != "cache_dir"},
        hasher=clf.hasher_.settings(),
        classes=list(clf.class_names_),
        # documents per class, or their summed weights when trained with weights
        class_counts=[c.item() for c in np.asarray(clf.class_counts_)],
        n_docs=int(clf.n_docs_),
        weight_sum=float(clf.weight_sum_),
        n_seen_buckets=int(clf.n_seen_buckets_),
        mean_abs_coef=[float(x) for x in clf.mean_abs_coef_],
    )
    if backend is not None:
        header["backend"] = backend
    _add_records(clf, header, arrays)
    save_npz(path, "model", header, arrays, before_replace)


def _refuse_not_finite(learner: LinearSGD) -> None:
    """A learner whose steps blew up (NaN or infinite weights) is never written: no loader
    takes it back, and written over a good file it would lose that one."""
    if not learner.finite():
        raise NBSVMError(
            "the model's weights are not finite (its training diverged): nothing was saved. "
            "Train it again with a lower eta0 or a larger lambda"
        )


def _state_arrays(clf) -> dict:
    """The learner's state over the stored columns, each array written part by part."""
    learner = clf.linear_
    if not learner.values_only:
        learner.coef()  # fold the SGD scale into the weights
    # every array is written part by part, never a copy of the state or a list of 2**n_bits
    # buckets. With a map the stored buckets are found once (a scan of the whole map) and
    # their ids kept, sized by the kept columns; without one (every bucket a column, as at
    # scale) each array finds its part's again
    kept = list(_stored_parts(clf)) if clf.column_of_ is not None else None

    def stored():
        return iter(kept) if kept is not None else _stored_parts(clf)

    n_out = learner.n_outputs
    quantized = getattr(clf, "quantized_", None)  # (nbsvm.models.quantize)
    n_cols = sum(len(b) for b, _ in stored())
    scale = (
        {c: quantize.scales(clf, c) for c in (0, 1)}
        if quantized and quantized["dtype"] == "int8"
        else None
    )

    def column(c):  # S_[:, columns, c] row by row
        def pieces():
            for k in range(n_out):
                for part, cols in stored():
                    if learner.values_only and c > 0:  # no weights: the file's zeros
                        yield np.zeros(len(part), dtype=STATE_DTYPE)
                    elif quantized and c < 2:
                        yield quantize.encode(
                            learner.S_[k, cols, c],
                            quantized["dtype"],
                            scale[c][k] if scale else 1.0,
                        )
                    else:
                        yield learner.S_[k, cols, c]

        dtype = quantize.DTYPES[quantized["dtype"]] if quantized and c < 2 else STATE_DTYPE
        return Chunked(np.dtype(dtype), (n_out, n_cols), pieces)

    buckets = Chunked(BUCKET_DTYPE, (n_cols,), lambda: (b for b, _ in stored()))
    arrays = {
        "buckets": buckets,
        "ratios": column(0),
        "coef": column(1),
        "learner_state": np.ascontiguousarray(learner.state_, dtype=np.float64),
    }
    if learner.optimizer == "adagrad" and not quantized and not learner.values_only:
        arrays["adagrad_sq"] = column(2)
    if scale is not None:
        arrays["ratios_scale"], arrays["coef_scale"] = scale[0], scale[1]
    return arrays


def _add_records(clf, header: dict, arrays: dict) -> None:
    """What the model keeps beside its weights, when it has it: typed labels, quantization,
    the held-out validation, the lexicon's counts, the data and auto records, the
    calibrated step size and the probability calibration."""
    quantized = getattr(clf, "quantized_", None)  # (nbsvm.models.quantize)
    typed = _label_values(clf)
    if typed is not None:  # labels that were not strings: their values
        header["label_values"] = typed
    if quantized:
        header["quantized"] = quantized
    if isinstance(clf.__dict__.get("validation_"), dict):  # early stopping's run
        header["validation"] = clf.validation_
    lexicon = clf.__dict__.get("lexicon_") if clf.keep_counts else None
    if lexicon is not None:  # keep_counts: for train --init
        header["lexicon"] = lexicon.header()
        arrays.update({f"lexicon_{name}": a for name, a in lexicon.arrays().items()})
    if "corpus_" in clf.__dict__:  # what the data-dependent defaults were read from
        header["corpus"] = clf.corpus_
    if "auto_" in clf.__dict__:  # what --auto changed and why
        header["auto"] = _without_times(clf.auto_)
    if clf.__dict__.get("history_"):  # what it was trained on and continued with
        header["history"] = clf.history_
    if clf.setting("eta0") == "auto" and clf.backend_learner is None:
        header["eta0_"] = float(clf.linear_.eta0)  # what the calibration chose
    if "thresholds_" in clf.__dict__:  # threshold='auto': per label, tuned held out
        header["thresholds"] = [float(v) for v in clf.thresholds_]
    if clf.calibrator_ is not None:  # scores -> probabilities, fitted held out
        header["calibration"], own = clf.calibrator_.arrays()
        header["calibration"]["report"] = _without_times(getattr(clf, "calibration_report_", None))
        arrays.update(own)


def _label_values(clf) -> list | None:
    """The header's ``label_values``: per class the label value fit was given when it was
    not a string (bool, int, float; multi-label: in the label lists), so that ``predict``
    and ``classes_`` after ``load`` return what they returned before (``1``, not ``'1'``);
    None when every label was a string."""
    values = getattr(clf, "_label_values", None)
    if not values:
        return None
    typed = label_values([values.get(c) for c in clf.class_names_])
    return typed if any(v is not None for v in typed) else None


def _load_label_values(clf, header: dict) -> None:
    """``_label_values`` from the header's ``label_values`` (absent in files written
    before format 2, and when every label was a string: predict returns the names)."""
    if "label_values" not in header:
        return
    typed = read_label_values(header["label_values"], len(clf.class_names_))
    clf._label_values = {c: v for c, v in zip(clf.class_names_, typed) if v is not None} or None


def _load_kept_parts(clf, header: dict, arrays: dict, n_out: int, path: str) -> None:
    """What a model keeps beside its weights, checked: the lexicon's counts
    (``keep_counts``), the calibration (``calibrate``) and the labels' thresholds
    (``threshold``)."""
    if "thresholds" in header:
        t = header["thresholds"]
        if not (
            clf.multilabel
            and isinstance(t, list)
            and len(t) == n_out
            and all(isinstance(v, (int, float)) and math.isfinite(v) for v in t)
        ):
            raise NBSVMError(
                f"corrupted model file: 'thresholds' must be {n_out} finite numbers of a "
                "multi-label model",
                path=path,
            )
        clf.thresholds_ = np.array(t, dtype=np.float64)
    if "lexicon" in header or "lexicon_counts" in arrays or "lexicon_pair_counts" in arrays:
        clf.lexicon_ = NBLexicon.from_parts(
            header.get("lexicon"),
            arrays.get("lexicon_buckets"),
            arrays.get("lexicon_counts"),
            path,
            arrays.get("lexicon_df"),
            arrays,
            "lexicon_",
        )
        if clf.lexicon_.hasher != clf.hasher_:
            raise NBSVMError(
                "corrupted model file: the lexicon's hashing differs from the model's", path=path
            )
    if "calibration" in header or "calibration" in arrays:
        if "calibration" not in header or "calibration" not in arrays:
            raise NBSVMError(
                "corrupted model file: calibration header or arrays missing", path=path
            )
        clf.calibrator_ = Calibrator.from_arrays(
            header["calibration"], arrays["calibration"], n_out, clf.multilabel, path
        )
        report = header["calibration"].get("report")
        if isinstance(report, dict):
            clf.calibration_report_ = report


def load_model(cls: type[NBSVMClassifier], path: str | os.PathLike[str]) -> NBSVMClassifier:
    """A model of class ``cls`` read from ``path``, every array checked against the header
    (a corrupted or crafted file is an error naming it, never a crash in a kernel). Its
    ratios, weights and AdaGrad sums are read straight into the learner's state: loading
    holds them once, not once for the file and once for the learner."""
    reading = _StateReading(cls, path)
    header, arrays = load_npz(path, "model", into=reading.into)
    if reading.error is not None:  # the header's, named once the checksum passed
        raise reading.error
    clf, state = reading.clf, arrays["learner_state"]
    learner = reading.quantized_learner(arrays) if "quantized" in header else reading.learner
    if "quantized" in header:
        for c, name in ((0, "ratios_scale"), (1, "coef_scale")):
            if c == 0 or not learner.values_only:
                quantize.scale_in_place(learner.S_[:, :, c], clf.quantized_, arrays.get(name), path)
    buckets = arrays["buckets"]
    _check_model_values(clf, learner, buckets, state, path)
    clf.ngram_map_ = decode_map(arrays, clf.hasher_.n_bits, path) if "map_buckets" in arrays else {}
    _set_learner(clf, learner, buckets, state, path)
    _load_kept_parts(clf, header, arrays, clf.n_outputs(), str(path))
    if clf.backend_learner is not None:
        clf.backend_ = NBReduction.from_parts(
            header.get("backend"),
            {k: v for k, v in arrays.items() if k.startswith("backend")},
            clf.linear_.n_outputs,
            buckets.size,
            str(path),
        )
    return clf


class _StateReading:
    """A model file's header read into a model and an empty learner before any array data
    (:func:`~nbsvm.io.npzfile.load_npz`'s ``into``): the stored ratios, weights and AdaGrad
    sums then go straight into the learner's state. A header that fails its checks is
    kept in ``error`` and every array read as usual, so that an edited file is named by
    its checksum first, as before any array is used."""

    def __init__(self, cls: type[NBSVMClassifier], path: str | os.PathLike[str]) -> None:
        self.cls, self.path = cls, path
        self.error: NBSVMError | None = None
        self.n_columns = 0

    def into(self, header: dict, specs: dict) -> dict:
        try:
            self.clf = clf = _model_from_header(self.cls, header, self.path)
            shapes = {name: spec[0] for name, spec in specs.items()}
            missing = [n for n in ("buckets", "ratios", "coef", "learner_state") if n not in specs]
            if missing:
                raise NBSVMError(f"corrupted model file: array {missing[0]!r} missing")
            _check_classes_fit_arrays(
                clf,
                {n: shapes.get(n) for n in ("ratios", "coef", "learner_state")}
                | {"mean_abs_coef": clf.mean_abs_coef_.shape},
                self.path,
            )
            _load_eta0(clf, header, self.path)
            _check_arrays_match(clf, header, specs, self.path)
            self.n_columns = shapes["buckets"][0]
            if "quantized" in header:
                # 1 or 2 bytes a value in the file, 4 in the state: read whole and copied
                # once the checksum passed (nothing before it larger than the file)
                return {}
            self.learner = learner = new_linear(clf, clf.class_names_, self.n_columns)
        except NBSVMError as e:
            self.error = (
                e
                if e.path is not None
                else NBSVMError(f"corrupted model file: {e.message}", path=str(self.path))
            )
            return {}
        flat = learner.S_.reshape(-1, learner.S_.shape[2])  # (outputs x columns, fields)

        def field(c):
            def sink(piece, start):
                flat[start : start + piece.size, c] = piece

            return sink

        sinks = {"ratios": field(0)}
        if not learner.values_only:  # a backend learner's file holds zeros there
            sinks["coef"] = field(1)
            if "adagrad_sq" in specs and clf.setting("optimizer") == "adagrad":
                sinks["adagrad_sq"] = field(2)  # (shape and dtype checked with the others)
        else:
            sinks["coef"] = lambda piece, start: None
        return sinks

    def quantized_learner(self, arrays: dict) -> LinearSGD:
        """A quantized file's learner, its stored ratios and weights copied in (decoded by
        :func:`~nbsvm.models.quantize.scale_in_place`); read once the checksum passed."""
        try:
            learner = new_linear(self.clf, self.clf.class_names_, self.n_columns)
        except NBSVMError as e:  # settings the learner refuses: a crafted header
            raise NBSVMError(f"corrupted model file: {e.message}", path=str(self.path)) from None
        learner.S_[:, :, 0] = arrays["ratios"]
        if not learner.values_only:
            learner.S_[:, :, 1] = arrays["coef"]
        return learner


def _model_from_header(cls, header: dict, path):
    """The model's parameters, hasher, classes, counts and records from the header."""
    try:
        if not isinstance(header["params"], dict) or not isinstance(header["hasher"], dict):
            raise TypeError("params and hasher must be objects")
        # files from before the norm option were trained without it; before the L2 strength
        # took the backend's name (lam) it was l2; before split_scripts and nfkc, the
        # tokenizer had neither
        params: dict[Any, Any] = {RENAMED.get(k, k): v for k, v in header["params"].items()}
        clf = cls(**{"norm": "none", **FORMER_TOKENIZER, **params})
        if clf.char_ngrams is None:  # read from the training data: as it was hashed
            clf.char_ngrams_ = header["hasher"].get("char_ngrams")
        if clf.validate() != Hasher(**header["hasher"]):
            raise NBSVMError(
                "corrupted model file: the hasher settings do not match the parameters",
                path=str(path),
            )
        clf.hasher_ = Hasher(**header["hasher"])
        if not isinstance(header["classes"], list) or not all(
            isinstance(c, str) for c in header["classes"]
        ):
            raise TypeError("classes must be a list of strings")
        clf.class_names_ = Labels(header["classes"])
        _load_label_values(clf, header)
        counts = header["class_counts"]
        weighted = isinstance(counts, list) and any(isinstance(c, float) for c in counts)
        clf.class_counts_ = np.asarray(counts, dtype=np.float64 if weighted else np.int64)
        clf.class_counts_ = clf.class_counts_.reshape(-1)
        clf.n_docs_ = int(header["n_docs"])
        clf.weight_sum_ = float(header.get("weight_sum", clf.n_docs_))
        clf.n_seen_buckets_ = int(header["n_seen_buckets"])
        clf.mean_abs_coef_ = np.asarray(header["mean_abs_coef"], dtype=np.float64)
        _load_records(clf, header)
        if "quantized" in header:  # float16 / int8 with scales, read into the float32 state
            quantize.stored_dtype(header["quantized"], path)
            clf.quantized_ = header["quantized"]
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise NBSVMError(f"corrupted model file: {type(e).__name__}: {e}", path=str(path)) from None
    except NBSVMError as e:
        if e.path is not None:
            raise
        raise NBSVMError(f"corrupted model file: {e.message}", path=str(path)) from None
    return clf


def _load_records(clf, header: dict) -> None:
    """What the header records of the training: the corpus statistics, the held-out
    validation, the auto search."""
    if "corpus" in header:
        clf.corpus_ = checked_corpus(header["corpus"])
    if isinstance(header.get("validation"), dict):
        clf.validation_ = header["validation"]
    if "auto" in header:
        if not isinstance(header["auto"], dict):
            raise TypeError("auto must be an object")
        clf.auto_ = header["auto"]
    if "history" in header:
        clf.history_ = history.checked(header["history"])


def _load_eta0(clf, header: dict, path) -> None:
    """The calibrated step size of a model trained with ``eta0='auto'``."""
    if clf.setting("eta0") == "auto" and clf.backend_learner is None:
        eta0_ = header.get("eta0_")
        if not (
            isinstance(eta0_, (int, float))
            and not isinstance(eta0_, bool)
            and 0 < eta0_ < float("inf")
        ):
            raise NBSVMError(
                "corrupted model file: eta0 'auto' without a valid eta0_", path=str(path)
            )
        clf.eta0_ = float(eta0_)


def _check_arrays_match(clf, header: dict, specs: dict, path) -> None:
    """The arrays' shapes and dtypes (``specs``: each one's ``(shape, dtype, nbytes)``,
    read before its data) against the header's classes, bits and quantization."""
    n_out = clf.n_outputs()
    shape = {name: spec[0] for name, spec in specs.items()}
    dtype = {name: spec[1] for name, spec in specs.items()}
    stored = (
        quantize.stored_dtype(clf.quantized_, path)
        if "quantized" in header
        else np.dtype(STATE_DTYPE)
    )
    n = shape["buckets"][0] if len(shape.get("buckets", ())) == 1 else -1
    ok = (
        len(clf.class_names_) >= (1 if clf.multilabel else 2)
        and len(clf.class_counts_) == len(clf.class_names_)
        and clf.hasher_.n_bits == clf.n_bits
        and n >= 0
        and dtype["buckets"] == BUCKET_DTYPE
        and all(shape.get(a) == (n_out, n) and dtype[a] == stored for a in ("ratios", "coef"))
        and shape.get("learner_state") == (n_out, 3)
        and dtype["learner_state"] == np.float64
        and clf.mean_abs_coef_.shape == (n_out,)
        and (
            clf.setting("optimizer") != "adagrad"
            or "quantized" in header
            or clf.backend_learner is not None  # the built-in learner's sums: none
            or (shape.get("adagrad_sq") == (n_out, n) and dtype["adagrad_sq"] == STATE_DTYPE)
        )
    )
    if not ok:
        raise NBSVMError("corrupted model file: arrays do not match the header", path=str(path))


def _set_learner(clf, learner, buckets, state, path) -> None:
    """The model's learner, its state filled, and its bucket -> column map."""
    learner.state_[:] = state
    try:  # partial_fit on the loaded model keeps weighing the steps
        learner.set_class_weight(output_weights(clf))
    except NBSVMError as e:
        raise NBSVMError(f"corrupted model file: {e.message}", path=str(path)) from None
    clf.column_of_ = np.full(1 << clf.hasher_.n_bits, -1, dtype=np.int32)
    clf.column_of_[buckets] = np.arange(buckets.size, dtype=np.int32)
    clf.linear_ = learner
