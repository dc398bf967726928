"""What every backend learner shares: the epoch loop, prediction and the scikit-learn
estimator protocol, over the parts in their own modules: input rows (:mod:`.rows`), the
targets and their classes (:mod:`.targets`), saving to ``.npz`` + JSON
(:mod:`.persistence`) and scikit-learn's error conventions (:mod:`.compat`).

A learner subclasses :class:`OnlineLearner` and provides four things:

- ``task``: ``"binary"``, ``"multiclass"``, ``"multilabel"`` or ``"regression"``;
- ``_init_state(n_features, n_outputs)``: allocate the learned arrays (names ending in ``_``);
- ``_pass(rows, y, order) -> dict``: one pass over ``order`` (numba kernels do the work);
  returns *sums* for the progress line, so that passes over blocks add up:
  ``{"n": examples, "loss": summed loss before each update, "mistakes": count}``
  (``loss`` and ``mistakes`` where they mean something for the learner);
- ``_scores(rows) -> ndarray``: ``(n_rows,)`` for binary and regression, else
  ``(n_rows, n_outputs)``.

``y`` reaching ``_pass`` is already encoded: float64 ``+-1`` (binary), int64 class codes
(multiclass), an int8 ``(n, n_labels)`` matrix of ``+-1`` (multilabel) or float64 targets
(regression). Classes are the label values given to ``fit``, sorted (``np.unique`` order):
strings stay strings, ints stay ints, and ``predict`` returns them. For two classes the
second is the positive one (``1`` over ``-1``, ``pos`` over ``neg``), as in the NBSVM model.

Input ``X``: :class:`~nbsvm.data.rows.SparseRows`, a 2-D dense array (or list of lists,
or a pandas DataFrame), any scipy.sparse matrix or array (anything with ``tocsr``), or an
``(indices, values, offsets)`` tuple. scikit-learn conventions are followed without
importing scikit-learn: ``__init__`` only stores parameters, learned attributes end in
``_``, bad input raises :class:`~nbsvm.compat.InputError` (a ``ValueError``), an
unfitted learner raises :class:`NotFittedError`, and ``__sklearn_tags__`` imports
scikit-learn only when scikit-learn itself asks for the tags.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from nbsvm._params import Params
from nbsvm.compat import InputError, NotFittedError
from nbsvm.compat import interop as _interop
from nbsvm.data.rows import SparseRows, _is_matrix, as_rows
from nbsvm.errors import Diverged, NBSVMError
from nbsvm.learners.persistence import PersistenceMixin
from nbsvm.learners.targets import TargetsMixin

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

TASKS = ("binary", "multiclass", "multilabel", "regression")


def _kept(rows: SparseRows, columns: np.ndarray) -> SparseRows:
    """``rows`` of a matrix of a file's own columns (any width but the kept ones'), reduced
    to the columns ``nbsvm learn`` kept (``columns_``: each weight's feature index; the
    others weigh 0, as features unseen in training do, and kept ones past the matrix's
    width are 0 in every row, as the command line reads a narrower file)."""
    if not columns.size:
        return rows
    position = np.full(max(rows.n_features, int(columns[-1]) + 1), -1, dtype=np.int64)
    position[columns] = np.arange(columns.size)
    at = position[rows.indices]
    keep = at >= 0
    kept_before = np.concatenate([[0], np.cumsum(keep)])  # kept entries before each position
    offsets = kept_before[rows.offsets]
    return SparseRows(at[keep], rows.values[keep], offsets, int(columns.size))


def _warn_kept_width(columns: np.ndarray) -> None:
    """A matrix as wide as the kept columns is read as those columns, which a file's own
    matrix of that width is not: say how to make its width tell."""
    import warnings

    warnings.warn(
        f"X has as many columns as the model kept ({columns.size}, of features up to "
        f"{int(columns[-1])}): read as those kept columns (X[:, columns_]); a file's own "
        f"matrix is read as one when it is {int(columns[-1]) + 1} wide "
        f"(load_svmlight_file(..., n_features={int(columns[-1]) + 1}))",
        UserWarning,
        stacklevel=4,
    )


class OnlineLearner(TargetsMixin, PersistenceMixin, Params):
    """Base class of the backend learners, following scikit-learn's estimator conventions:
    ``__init__`` only stores parameters (read back from its signature, :class:`~nbsvm.
    _params.Params`); learned state ends in ``_`` and exists after ``fit``;
    ``get_params``/``set_params``/``score``; scikit-learn's tags on request.

    Examples
    --------
    >>> from nbsvm.learners.pa import PassiveAggressive
    >>> m = PassiveAggressive().fit([[1.0, 0.0], [0.0, 1.0]], ["neg", "pos"])
    >>> m.predict([[2.0, 0.0]]).tolist(), m.classes_, m.score([[0.0, 1.0]], ["pos"])
    (['neg'], ['neg', 'pos'], 1.0)
    """

    if TYPE_CHECKING:  # what each learner provides (the module docstring)

        def _init_state(self, n_features: int, n_outputs: int) -> None: ...

        def _pass(self, rows: SparseRows, y: np.ndarray, order: np.ndarray) -> dict: ...

        def _scores(self, rows: SparseRows) -> np.ndarray: ...

    task = "binary"

    # ---- scikit-learn protocol (scikit-learn is imported only when it asks) -----------
    @property
    def _estimator_type(self) -> str:
        return "regressor" if self.task == "regression" else "classifier"

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        multilabel = self.task == "multilabel"
        tags = Tags(
            estimator_type=self._estimator_type,
            target_tags=TargetTags(
                required=True, multi_output=multilabel, single_output=not multilabel
            ),
            input_tags=InputTags(sparse=True),
        )
        if self.task == "regression":
            tags.regressor_tags = RegressorTags()
        else:
            tags.classifier_tags = ClassifierTags(
                multi_class=self.task != "binary", multi_label=multilabel
            )
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_features_in_"):
            raise _interop(NotFittedError)(
                f"This {type(self).__name__} instance is not fitted yet: call 'fit' (or "
                "'partial_fit') with appropriate arguments before using this estimator."
            )

    # ---- input -----------------------------------------------------------------------
    def _rows(self, X, reset: bool) -> SparseRows:
        """``X`` checked and converted. ``reset`` (the first call of ``fit`` or
        ``partial_fit``): the input sets ``n_features_in_`` and must not be empty; else a
        matrix must have ``n_features_in_`` columns (sparse rows only need indices within
        them)."""
        name = type(self).__name__
        if reset:
            rows = as_rows(X)
            if _is_matrix(X):
                if len(rows) == 0:
                    raise InputError(
                        f"Found array with 0 sample(s) (shape=(0, "
                        f"{rows.n_features})) while a minimum of 1 is required "
                        f"by {name}."
                    )
                if rows.n_features == 0:
                    raise InputError(
                        f"Found array with 0 feature(s) (shape=({len(rows)}, 0))"
                        f" while a minimum of 1 is required by {name}."
                    )
            return rows
        self._check_fitted()
        if _is_matrix(X):
            rows = as_rows(X)
            columns = self.__dict__.get("columns_")
            if columns is not None and rows.n_features != self.n_features_in_:
                rows = _kept(rows, columns)  # the file's columns: those it kept, as the CLI
            elif columns is not None and int(columns[-1]) + 1 != columns.size:
                _warn_kept_width(columns)
            if rows.n_features != self.n_features_in_:
                raise InputError(
                    f"X has {rows.n_features} features, but {name} is expecting "
                    f"{self.n_features_in_} features as input."
                )
            return rows
        return as_rows(X, self.n_features_in_)

    # ---- training --------------------------------------------------------------------
    def _start(self, rows: SparseRows, y, classes):
        seed = getattr(self, "seed", 0)  # (numpy's generator refused others with a traceback)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise NBSVMError(f"seed must be an integer >= 0, got {seed!r}")
        self._set_classes(y, classes)
        self.n_features_in_ = rows.n_features
        self.t_ = 0
        self._init_state(rows.n_features, self.n_outputs_)

    def _step(self, rows: SparseRows, codes, order) -> None:
        # contiguous: a strided order would compile every kernel again for its layout
        order = (
            np.arange(len(rows)) if order is None else np.ascontiguousarray(order, dtype=np.int64)
        )
        self.last_stats_ = self._pass(rows, codes, order)
        self.t_ += len(order)

    def check_params(self) -> None:
        """Refuse a parameter value the learner cannot train with (an error naming it and
        what is allowed); run before any data is read, and again before training."""

    def state_copies(self) -> int:
        """How many float64 arrays of the weights' size training holds (the weights, and
        their average where it is kept), for ``--max-memory``."""
        return 2 if getattr(self, "average", False) else 1

    def can_continue(self) -> bool:
        """Whether :meth:`partial_fit` can go on from this state (a learner that keeps
        what a file does not hold says no once loaded)."""
        return True

    def partial_fit(
        self,
        X: Any,
        y: Any,
        classes: Iterable[Any] | None = None,
        order: ArrayLike | None = None,
    ) -> Self:
        """One pass over the given rows (in ``order``, default as given), continuing from the
        current state. ``classes`` lists every label up front when a first batch may not
        show them all."""
        first = not hasattr(self, "n_features_in_")
        rows = self._rows(X, reset=first)
        y = self._targets(y, len(rows))
        if first:
            self._start(rows, y, classes)
        elif classes is not None:
            self._check_same_classes(y, classes)
        self._step(rows, self._encode(y), order)
        self._refuse_diverged()
        return self

    def settle(self) -> None:
        """Do the work put off until the weights are needed (an exact solver solves the
        rows given so far) and raise :class:`~nbsvm.errors.Diverged` when the state blew
        up: what a trainer calls after an epoch."""
        self._refuse_diverged()

    def _refuse_diverged(self) -> None:
        """Raise :class:`~nbsvm.errors.Diverged` when the learned state is no longer finite
        (as scikit-learn's SGD raises on an overflow): a fit that blew up returned NaN
        scores and predicted one class without a word."""
        bad = self.diverged()
        if bad is not None:
            from nbsvm.learners.hints import divergence_hints

            *first, last = ["scale the feature values down", *divergence_hints(self, cli=False)]
            raise Diverged(
                f"training diverged: the learned state ({bad}) is no longer finite; "
                + (f"{', '.join(first)} or {last}" if first else last),
                bad,
            )

    def _check_same_classes(self, y, classes) -> None:
        """Refuse a later call's ``classes`` unless they are the first call's (as
        scikit-learn's ``partial_fit``): the outputs were made for those."""
        kept = {k: v for k, v in vars(self).items() if k in ("classes_", "y_form_")}
        try:
            self._set_classes(y, classes)
            now = list(self.classes_)
        finally:
            self.__dict__.update(kept)
        if now != list(kept["classes_"]):
            raise InputError(
                f"classes={now[:5]} is not the same as on the first partial_fit call: "
                f"{list(kept['classes_'])[:5]}"
            )

    def fit(self, X: Any, y: Any, *, callback: Callable[[int, dict], object] | None = None) -> Self:
        """Start afresh and run ``self.epochs`` passes, each a new seeded permutation.

        ``callback(epoch, stats)`` is called after every pass (progress lines; keyword
        only: scikit-learn's third argument is ``sample_weight``, which these learners do
        not take)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        rows = self._rows(X, reset=True)
        y = self._targets(y, len(rows))
        self._start(rows, y, None)
        codes = self._encode(y)
        rng = np.random.default_rng(getattr(self, "seed", 0))
        self.history_ = []
        for epoch in range(int(getattr(self, "epochs", 1))):
            self._step(rows, codes, rng.permutation(len(rows)))
            self._refuse_diverged()
            self.history_.append(dict(self.last_stats_))
            if callback is not None:
                callback(epoch + 1, self.last_stats_)
            if self._converged():
                break
        return self

    def _converged(self) -> bool:
        """Stop early (e.g. MIRA after a pass without mistakes)."""
        return False

    # ---- prediction ------------------------------------------------------------------
    @property
    def decision_function(self) -> Callable[[Any], Any]:
        """Scores of a classifier: ``(n,)`` for binary tasks and for multi-class learners
        fitted on two classes (``score[classes_[1]] - score[classes_[0]]``, as scikit-learn
        expects), ``(n, K)`` for more classes or labels. A regressor has none (scikit-learn's
        convention; ``hasattr`` is False): its scores are :meth:`predict`."""
        if self.task == "regression":
            raise AttributeError(
                f"{type(self).__name__} is a regressor and has no decision_function: use predict"
            )
        return self._decision

    def _decision(self, X) -> np.ndarray:
        self._check_fitted()
        s = self._scores(self._rows(X, reset=False))
        if self.task == "multiclass" and s.ndim == 2 and s.shape[1] == 2:
            return s[:, 1] - s[:, 0]
        return s

    def predict(self, X: Any) -> Any:
        self._check_fitted()
        s = self._scores(self._rows(X, reset=False))
        if self.task == "regression":
            return s
        classes = self._class_values()
        if self.task == "binary":
            return classes[(s > 0).astype(np.int64)]
        if self.task == "multiclass":
            return classes[np.argmax(s, axis=1)]
        return [tuple(classes[np.flatnonzero(r > 0)]) for r in s]  # multilabel

    def score(self, X: Any, y: Any) -> float:
        """Accuracy (classification; exact label sets for multi-label) or the coefficient
        of determination R^2 (regression) of the predictions for ``X`` against ``y``."""
        predicted = self.predict(X)
        if self.task == "regression":
            y = self._targets(y, len(predicted))
            total = float(((y - y.mean()) ** 2).sum())
            residual = float(((y - predicted) ** 2).sum())
            if total == 0.0:
                return 1.0 if residual == 0.0 else 0.0
            return 1.0 - residual / total
        if self.task == "multilabel":
            if len(y) != len(predicted):
                raise InputError(f"{len(predicted)} rows but {len(y)} label sets")
            return float(np.mean([set(map(str, t)) == set(p) for t, p in zip(y, predicted)]))
        return self._accuracy(predicted, self._targets(y, len(predicted)))

    @staticmethod
    def _accuracy(predicted: np.ndarray, truth: np.ndarray) -> float:
        """The share of ``predicted`` labels equal to ``truth``'s."""
        if predicted.dtype == object:  # string classes: labels match by name
            return float(np.mean(predicted == np.array([str(v) for v in truth], dtype=object)))
        return float(np.mean(predicted == truth))
