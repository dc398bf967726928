"""Multi-class linear learners, and the state every multi-output linear learner shares.

- :class:`LinearOutputs`: one weight row and one bias per class (or label), the last
  iterate and optionally the running average of all iterates (used by PA, MIRA, the
  multi-class and the multi-label hinge);
- :class:`MulticlassHinge`: SGD on the Crammer-Singer multi-class hinge, as in the Sol
  toolkit (Fendrich 2012; Crammer & Singer, JMLR 2001);
- :class:`OneVsRest`: K independent binary learners from the registry, argmax of their
  decision functions.

Memory grows linearly with the number of classes: the weights are a dense
``(n_classes, n_features)`` float64 array (8 bytes per class and feature), twice that with
averaging (the accumulator of the average has the same shape). With a hashed feature space
``n_features = 2**n_bits`` whatever the vocabulary, e.g. 4 classes over 2**18 buckets take
8 MiB, 16 MiB averaged. One-vs-rest holds K binary learners, so the same, plus what each
learner keeps besides its weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm._params import store_params
from nbsvm.compat import InputError
from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.kernels import multi as K
from nbsvm.learners.registry import resolve

if TYPE_CHECKING:
    from nbsvm.data.rows import SparseRows

# the schedules of nbsvm.learners.schedules these kernels implement (t counts steps from 1)
SCHEDULES = {
    "pegasos": K.SCHED_PEGASOS,  # 1 / (lam t) (Shalev-Shwartz et al. 2007); needs lam > 0
    "invsqrt": K.SCHED_INVSQRT,  # eta0 / sqrt(t)
    "optimal": K.SCHED_OPTIMAL,  # eta0 / (1 + lam eta0 (t - 1)) (Bottou 2012)
    "constant": K.SCHED_CONSTANT,  # eta0
}


def choose(name: str, value: Any, table: dict) -> Any:
    """``table[value]``, or an :class:`NBSVMError` naming the allowed values."""
    try:
        return table[value]
    except (KeyError, TypeError):
        raise NBSVMError(f"unknown {name} {value!r}; allowed: {', '.join(table)}") from None


def check_positive(name: str, value: Any, allow_zero: bool = False) -> float:
    """``value`` as a float, if it is a finite number > 0 (or >= 0)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise NBSVMError(
            f"{name} must be a finite number {'>=' if allow_zero else '>'} 0, got {value!r}"
        )
    return v


# the weights' storage (``dtype``): float32 halves the memory of text's wide feature spaces
# (each step computes in float64; 20 Newsgroups with MIRA: the same accuracy)
WEIGHT_DTYPES = {"float64": np.float64, "float32": np.float32}

# the kernels' accumulator when not averaging (not an attribute: the model file format
# cannot hold empty arrays)
NO_AVERAGE = np.zeros((0, 0))


class LinearOutputs(OnlineLearner):
    """Base of the linear learners with one weight row per class or label.

    Learned state: ``weights_`` ``(K, n_features + 1)``, whose last column is the bias (the
    weight of a constant input 1); the last iterate is ``state_[0] * weights_``. For the
    average, ``accum_`` (same shape; absent with ``average=False``);
    ``state_ = [scale, scale_sum, n_iterates]`` (see :mod:`.kernels.multi`). Subclasses
    need the parameters ``average``, ``fit_intercept`` and ``dtype`` (the weights'
    storage).
    """

    average: bool  # a parameter of each subclass
    dtype: str  # a parameter of each subclass

    def check_params(self) -> None:
        """Check the parameters (called before every pass)."""

    def _init_state(self, n_features, n_outputs):
        self.check_params()
        dtype = choose("dtype", self.dtype, WEIGHT_DTYPES)
        self.weights_ = np.zeros((n_outputs, n_features + 1), dtype=dtype)
        if self.average:
            self.accum_ = np.zeros((n_outputs, n_features + 1), dtype=dtype)
        self.state_ = np.array([1.0, 1.0, 1.0])  # w_0 = 0 is the first averaged iterate

    def _predicting_weights(self, rows=slice(None)) -> np.ndarray:
        """``(K, n_features + 1)`` (or the ``rows`` asked for): the average of all iterates
        (``average=True``) or the last one, bias last."""
        scale, scale_sum, n_iterates = self.state_
        if not self.average:
            return scale * self.weights_[rows]
        self._check_averaged()
        return (scale_sum * self.weights_[rows] - self.accum_[rows]) / n_iterates

    def output_weights(self, k: int) -> tuple[np.ndarray, float]:
        """Row ``k`` of ``coef_`` and of ``intercept_``, computed alone (no ``(K, n)``
        copy)."""
        row = self._predicting_weights(k)
        return row[:-1], float(row[-1])

    @property
    def coef_(self) -> np.ndarray:
        """``(K, n_features)`` weights used to predict (averaged or last, see ``average``)."""
        return self._predicting_weights()[:, :-1]

    @property
    def intercept_(self) -> np.ndarray:
        return self._predicting_weights()[:, -1].copy()

    def _table(self, rows) -> np.ndarray:
        """The rows' class table, checked against the outputs (the kernels index it by
        class without bounds checks)."""
        table = rows.table()
        if not table.size:  # no table: an empty one of the weights' dtype, so that the
            # kernels compile once per weight dtype (not once more for float32 weights)
            return np.zeros((0, 0), self.weights_.dtype)
        if table.shape[0] != self.weights_.shape[0]:
            raise InputError(
                f"a class table has {table.shape[0]} rows for {self.weights_.shape[0]} outputs"
            )
        return table

    def _scores(self, rows):
        """The rows' scores by the weights :meth:`_predicting_weights` gives, computed from
        the stored arrays (scores are linear in the weights): no ``(K, n_features)`` copy
        of the weights per call."""
        table = self._table(rows)

        def dots(weights):
            out = np.empty((len(rows), weights.shape[0]))
            K._linear_scores(
                rows.indices, rows.values, rows.offsets, table, rows.class_unit, weights, out
            )
            return out

        scale, scale_sum, n_iterates = self.state_
        if not self.average:
            out = scale * dots(self.weights_)
        else:
            self._check_averaged()
            out = (scale_sum * dots(self.weights_) - dots(self.accum_)) / n_iterates
        return out[:, 0] if self.task == "binary" else out

    def _check_averaged(self) -> None:
        if not hasattr(self, "accum_"):
            raise NBSVMError(
                "this model was trained with average=False: it has no averaged weights"
            )

    def _arrays(self):
        """The in-place state the kernels take after the rows and labels."""
        return self.weights_, getattr(self, "accum_", NO_AVERAGE), self.state_

    def _epoch(self, kernel, rows, y, order, *settings, before=()) -> dict:
        """One pass of ``kernel`` over ``order``: its arguments are the rows, ``y``,
        ``order``, ``before``, the state (:meth:`_arrays`), then ``settings``; it returns
        the summed loss and the mistakes, turned into the progress sums."""
        loss, mistakes = kernel(
            rows.indices,
            rows.values,
            rows.offsets,
            self._table(rows),
            rows.class_unit,
            y,
            order,
            *before,
            *self._arrays(),
            *settings,
        )
        return {"n": len(order), "loss": float(loss), "mistakes": int(mistakes)}


class HingeOutputs(LinearOutputs):
    """Base of the hinge learners trained by SGD (multi-class and multi-label): their
    parameters, and the step-size settings checked before every pass.

    Parameters
    ----------
    lam, schedule, eta0, fit_intercept, average, epochs, seed, dtype
        As in :class:`MulticlassHinge`.
    """

    def __init__(
        self,
        lam=1e-4,
        schedule="optimal",
        eta0=1.0,
        fit_intercept=True,
        average=True,
        epochs=5,
        seed=0,
        dtype="float64",
    ):
        store_params(self, locals())

    def check_params(self) -> None:
        self._sgd_settings()

    def _sgd_settings(self):
        """``(lam, schedule code, eta0)`` after checking them."""
        lam = check_positive("lambda (lam)", self.lam, allow_zero=True)
        name = resolve("schedule", self.schedule).name  # the shared names, or an error
        schedule = choose("schedule for this learner", name, SCHEDULES)
        eta0 = check_positive("eta0", self.eta0)
        if schedule == K.SCHED_PEGASOS and lam == 0:
            raise NBSVMError("schedule 'pegasos' (1 / (lam t)) needs lam > 0")
        return lam, schedule, eta0


class MulticlassHinge(HingeOutputs):
    """Multi-class linear SVM by SGD on the Crammer-Singer hinge, as in Sol.

    Minimizes ``lam/2 sum_k ||w_k||^2 + mean max(0, 1 + max_{r != y} s_r - s_y)`` with
    ``s_k = w_k.x + b_k`` (Crammer & Singer, JMLR 2001; Fendrich, *Sol*, 2012, eq. 10-11):
    each step moves the true class towards ``x`` and the most violating class away from it.
    The bias is the weight of a constant input 1, regularized like the others (an
    unregularized bias with Pegasos' steps ``1/(lam t)`` swamps the weights).

    Parameters
    ----------
    lam : float
        L2 strength.
    schedule : {'optimal', 'pegasos', 'invsqrt', 'constant'}
        Step size at step t (from 1): ``eta0/(1 + lam eta0 (t - 1))``, ``1/(lam t)``,
        ``eta0/sqrt(t)`` or ``eta0`` (see :mod:`.schedules`). 'optimal' by default: the
        average of Pegasos' iterates kept its first huge steps on rows that are not unit
        length (iris 36.0% against 92.7%, RCV1 CCAT 69.0% against 90.2%, Blitzer's four
        domains 90.8% against 91.7%; NB features on text keep 'pegasos', nbsvm.learners.
        reduction.ON_TEXT).
    eta0 : float
        Base step of the schedules other than 'pegasos'.
    fit_intercept : bool
        Learn a bias per class.
    average : bool
        Predict with the average of all iterates (default) or the last one.
    epochs, seed : int
        Passes over the data and the seed of their shuffles.
    dtype : {'float64', 'float32'}
        Storage of the weights (and of the average's accumulator); each step computes in
        float64.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.eye(3)
    >>> m = MulticlassHinge(lam=0.01, epochs=20).fit(X, ["a", "b", "c"])
    >>> m.predict(X).tolist()
    ['a', 'b', 'c']
    """

    task = "multiclass"

    def _pass(self, rows, y, order):
        lam, schedule, eta0 = self._sgd_settings()
        return self._epoch(
            K._crammer_singer_epoch, rows, y, order, lam, schedule, eta0, bool(self.fit_intercept)
        )


class OneVsRest(OnlineLearner):
    """One binary learner per class (``estimator``, any binary algorithm of
    :data:`nbsvm.learners.registry.ALGORITHMS`), trained independently on "this class or
    not"; predicts the class whose learner scores highest.

    Parameters
    ----------
    estimator : str
        Registry name of the binary learner, e.g. ``'pa'`` or ``'pegasos'``.
    estimator_params : dict, optional
        Parameters of every binary learner, stored as given (as scikit-learn's ``clone``
        requires). Not ``epochs`` or ``seed``: the passes are this learner's (every binary
        learner sees the same shuffled order).
    epochs, seed : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.eye(3)
    >>> m = OneVsRest("pa", estimator_params={"C": 1.0}, epochs=3).fit(X, ["a", "b", "c"])
    >>> m.predict(X).tolist(), m.decision_function(X).shape
    (['a', 'b', 'c'], (3, 3))
    """

    task = "multiclass"

    def __init__(self, estimator="pa", estimator_params=None, epochs=5, seed=0):
        store_params(self, locals())  # estimator_params as given: fit refuses a non-dict

    def _make_binary(self):
        from nbsvm.learners.registry import make_learner

        params = {} if self.estimator_params is None else self.estimator_params
        if not isinstance(params, dict):
            raise NBSVMError(
                f"estimator_params must be a dict of the binary learner's "
                f"parameters, got {params!r}"
            )
        for name in ("epochs", "seed"):
            if name in params:
                raise NBSVMError(
                    f"set {name} on OneVsRest, not in estimator_params: the "
                    "binary learners share its passes"
                )
        learner = make_learner(self.estimator, **params)
        if learner.task != "binary":
            raise NBSVMError(
                f"OneVsRest needs a binary estimator; {self.estimator!r} is {learner.task}"
            )
        return learner

    def check_params(self) -> None:
        self._make_binary().check_params()

    def state_copies(self) -> int:
        return self._make_binary().state_copies()  # each output's binary learner's

    def _init_state(self, n_features, n_outputs):
        self._binary = [self._make_binary() for _ in range(n_outputs)]

    def _learners(self) -> list:
        """The binary learners, rebuilt from the saved state after :meth:`load`."""
        if getattr(self, "_binary", None) is None:
            self._binary = []
            for k, scalars in enumerate(self.estimator_state_):
                learner = self._make_binary()
                for name, value in scalars.items():
                    setattr(learner, name, value)
                prefix = f"est{k}_"
                for name, value in vars(self).items():
                    if name.startswith(prefix) and isinstance(value, np.ndarray):
                        setattr(learner, name[len(prefix) :], value)
                self._binary.append(learner)
        return self._binary

    def _pass(self, rows, y, order):
        return self.fit_outputs(lambda k: rows, y[:, None] == np.arange(self.n_outputs_), order)

    def fit_outputs(
        self, rows_of: Callable[[int], SparseRows], targets: np.ndarray, order: np.ndarray
    ) -> dict:
        """One pass of every output's binary learner in ``order``: learner ``k`` on its own
        rows ``rows_of(k)`` (the same rows for plain one-vs-rest; NBSVM gives each class
        its own NB-valued rows) with ``targets[:, k]`` (bool) as its positives; returns the
        summed stats. Learners are made for ``targets``' columns on the first call."""
        if getattr(self, "_binary", None) is None and "estimator_state_" not in vars(self):
            self.start_outputs(targets.shape[1])
        stats = {"n": len(order), "loss": 0.0, "mistakes": 0}
        for k, learner in enumerate(self._learners()):
            learner.partial_fit(
                rows_of(k), np.where(targets[:, k], "1", "0"), classes=["0", "1"], order=order
            )
            for key in ("loss", "mistakes"):
                stats[key] += learner.last_stats_.get(key, 0)
        return stats

    def start_outputs(self, n_outputs: int, learners: list | None = None) -> None:
        """Make the ``n_outputs`` binary learners (or adopt ``learners``, e.g. loaded)."""
        self._binary = (
            list(learners)
            if learners is not None
            else [self._make_binary() for _ in range(n_outputs)]
        )

    def output_scores(self, rows_of: Callable[[int], SparseRows]) -> np.ndarray:
        """Each output's score on its own rows ``rows_of(k)``, shape ``(n, n_outputs)``."""
        return np.stack(
            [learner.decision_function(rows_of(k)) for k, learner in enumerate(self._learners())],
            axis=1,
        )

    @property
    def estimators_(self) -> list:
        """The binary learners, one per output."""
        return self._learners()

    def _converged(self):
        return all(learner._converged() for learner in self._learners())

    def settle(self) -> None:
        for learner in self._learners():
            learner.settle()

    def diverged(self) -> str | None:
        # its binary learners' arrays, as saved_parts names them (they are not this
        # learner's own until it is saved: the epochs never saw a blown-up one)
        if getattr(self, "_binary", None) is None and "estimator_state_" not in vars(self):
            return None  # (not fitted: nothing learned)
        for k, learner in enumerate(self._learners()):
            bad = learner.diverged()
            if bad is not None:
                return f"est{k}_{bad}"
        return None

    def _scores(self, rows):
        return np.stack([learner.decision_function(rows) for learner in self._learners()], axis=1)

    def saved_parts(self) -> tuple[dict, dict]:
        # the binary learners' state becomes this learner's: arrays est<k>_<name>, scalars
        # in estimator_state_ (the base class saves attributes ending in "_"); so files and
        # checkpoints hold them
        self.estimator_state_ = []
        for k, learner in enumerate(self._learners()):
            for name, value in learner.state_arrays().items():
                setattr(self, f"est{k}_{name}", value)
            self.estimator_state_.append(learner.state_scalars())
        return super().saved_parts()
