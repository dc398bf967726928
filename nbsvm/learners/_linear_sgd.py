"""What :class:`~nbsvm.learners.linear.SGDClassifier` and
:class:`~nbsvm.learners.linear.SGDRegressor` share (:class:`_LinearSGD`): checking the
parameters and resolving their names to parts, the learned state, the calls of the one SGD
and the one AdaGrad kernel (:mod:`.kernels.linear`) and the weights they predict with.
"""

from __future__ import annotations

import numbers

import numpy as np

from nbsvm.data.rows import csr_dot
from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.kernels import linear as K
from nbsvm.learners.kernels.losses import _mean_loss
from nbsvm.learners.registry import resolve
from nbsvm.learners.regularizers import L1_METHODS


def _positive(name, value, allow_zero=False):
    ok = (
        isinstance(value, numbers.Real)
        and np.isfinite(value)
        and (value >= 0 if allow_zero else value > 0)
    )
    if not ok:
        raise NBSVMError(
            f"{name} must be a {'non-negative' if allow_zero else 'positive'} number, got {value!r}"
        )


class _LinearSGD(OnlineLearner):
    """What :class:`SGDClassifier` and :class:`SGDRegressor` share: validation, state,
    the kernel calls and the learned weights."""

    # parameters of each subclass, stored by store_params (declared for mypy)
    loss: str
    eta0: float | str  # 'auto': calibrated
    schedule: str
    penalty: str
    lam: float
    l1_ratio: float
    l1_method: str
    eps: float
    bias_rate: float
    epochs: int
    average: bool | int  # or the update from which to average
    radius: float | None
    _lam1: float  # resolved by check_params
    _lam2: float

    _losses: tuple = ()

    # ---- settings ----------------------------------------------------------------------
    def state_copies(self) -> int:
        """The weights, and as their size: the average (``average``), AdaGrad's sums of
        squared gradients (a per-coordinate schedule) and the L1 penalty's record."""
        self.check_params()
        average = bool(getattr(self, "average", False))  # a parameter of each subclass
        return 1 + average + bool(self._schedule.per_coordinate) + (self._lam1 > 0)

    def check_params(self) -> None:
        """Validate the parameters; set the resolved parts and ``(lam1, lam2)``."""
        if self.loss not in self._losses:
            raise NBSVMError(
                f"{type(self).__name__} takes loss in {', '.join(self._losses)}; got {self.loss!r}"
            )
        self._loss = resolve("loss", self.loss)
        self._schedule = resolve("schedule", self.schedule)
        penalty = resolve("penalty", self.penalty)
        _positive("lambda (lam)", self.lam, allow_zero=True)
        if not (isinstance(self.l1_ratio, numbers.Real) and 0.0 <= self.l1_ratio <= 1.0):
            raise NBSVMError(f"l1_ratio must be in [0, 1], got {self.l1_ratio!r}")
        if self.l1_method not in L1_METHODS:
            raise NBSVMError(
                f"unknown l1_method {self.l1_method!r}; allowed: {', '.join(L1_METHODS)}"
            )
        if self.eta0 not in (None, "auto"):
            _positive("eta0", self.eta0)
        if self.eta0 == "auto" and not self._schedule.uses_eta0:
            raise NBSVMError(
                f"eta0 'auto' calibrates a step size; schedule {self.schedule!r} takes none"
            )
        _positive("eps", self.eps)
        _positive("bias_rate", self.bias_rate, allow_zero=True)
        if not (isinstance(self.epochs, numbers.Integral) and self.epochs >= 1):
            raise NBSVMError(f"epochs must be an integer >= 1, got {self.epochs!r}")
        if not (isinstance(self.average, numbers.Integral) and self.average >= 0):
            raise NBSVMError(
                f"average must be True, False or the update (>= 1) from which to "
                f"average, got {self.average!r}"
            )
        if self.radius is not None:
            _positive("radius", self.radius)
            if self._schedule.per_coordinate:
                raise NBSVMError(
                    "radius (ball projection) needs a global step size: use "
                    "schedule constant, optimal, invsqrt or pegasos, not adagrad"
                )
        self._lam1, self._lam2 = penalty.split(float(self.lam), float(self.l1_ratio))
        if self.schedule == "pegasos" and not self.lam > 0:
            raise NBSVMError("schedule 'pegasos' (1/(lam t)) needs lam > 0")
        if (
            not self._schedule.per_coordinate
            and self.schedule != "pegasos"
            # a calibration to come keeps to the bound itself (its trials are checked)
            and not (self._calibrates() and "eta0_" not in self.__dict__)
            and self._eta0() * self._lam2 >= 1.0
        ):
            raise NBSVMError(
                f"eta0 * lam2 must be < 1 (got {self._eta0() * self._lam2:g}): the "
                "first L2 step would set the weights to zero"
            )

    def _calibrates(self) -> bool:
        """Whether the step size is Bottou's calibration: ``'auto'``, or left unset (None)
        with a schedule that takes one."""
        return self.eta0 == "auto" or (self.eta0 is None and self._schedule.uses_eta0)

    def _eta0(self) -> float:
        """The step size trained with: ``eta0``, or once calibrated ``eta0_`` (1 until
        then, for the checks; 1 for 'pegasos', which takes none)."""
        if self.eta0 is None or self.eta0 == "auto":
            return float(getattr(self, "eta0_", 1.0))
        return float(self.eta0)

    def fit(self, X, y, *, callback=None) -> _LinearSGD:
        self.check_params()
        return super().fit(X, y, callback=callback)

    def _start(self, rows, y, classes):
        super()._start(rows, y, classes)
        if self._calibrates():  # Bottou's calibration on a sample of the first data
            from nbsvm.learners.eta0 import calibrate_learner_eta0

            self.eta0_ = calibrate_learner_eta0(self, rows, y, seed=int(self.seed), classes=classes)

    def __getstate__(self):
        # the resolved loss and schedule hold lambdas; check_params() sets them again before use
        state = self.__dict__.copy()
        state.pop("_loss", None)
        state.pop("_schedule", None)
        return state

    # ---- state -------------------------------------------------------------------------
    def _init_state(self, n_features, n_outputs):
        self.check_params()
        self.v_ = np.zeros(n_features)
        self.state_ = np.zeros(K.STATE_SIZE)
        self.state_[K.SCALE] = 1.0
        self.l1_q_ = np.zeros(0)
        self.avg_u_ = np.zeros(0)
        self.G_ = np.zeros(0)

    def _sized(self, name, needed):
        """The state array ``name``, allocated (zeros) when first needed."""
        a = getattr(self, name)
        if needed and a.shape[0] != self.v_.shape[0]:
            a = np.zeros(self.v_.shape[0])
            setattr(self, name, a)
        return a

    def _pass(self, rows, y, order):
        self.check_params()
        q = self._sized("l1_q_", self._lam1 > 0)
        avg_u = self._sized("avg_u_", bool(self.average))
        y = np.ascontiguousarray(y, dtype=np.float64)
        bias_rate = float(self.bias_rate) if self.fit_intercept else 0.0
        if self._schedule.per_coordinate:
            self._fold_scale()
            total, mistakes = K._adagrad_pass(
                rows.indices,
                rows.values,
                rows.offsets,
                y,
                order,
                self.v_,
                self._sized("G_", True),
                avg_u,
                self.state_,
                self._loss.code,
                self._eta0(),
                self._lam1,
                self._lam2,
                bias_rate,
                float(self.eps),
                int(self.average),
            )
        else:
            total, mistakes = K._sgd_pass(
                rows.indices,
                rows.values,
                rows.offsets,
                y,
                order,
                self.v_,
                q,
                avg_u,
                self.state_,
                self._loss.code,
                self._schedule.code,
                self._eta0(),
                float(self.lam),
                self._lam1,
                self._lam2,
                L1_METHODS[self.l1_method],
                bias_rate,
                float(self.radius or 0.0),
                int(self.average),
            )
            if self._lam1 > 0 and L1_METHODS[self.l1_method] == K.TRUNCATED:
                K._owed_l1(self.v_, q, self.state_, avg_u)
        stats = {"n": len(order), "loss": float(total)}
        if self.task != "regression":
            stats["mistakes"] = int(mistakes)
        return stats

    def _fold_scale(self):
        """Make ``w = v`` (AdaGrad works on unscaled weights)."""
        s = self.state_[K.SCALE]
        if s != 1.0:
            self.v_ *= s
            if self.state_[K.AVG_N] > 0:
                self.state_[K.AVG_B] /= s
            self.state_[K.SCALE] = 1.0

    # ---- learned model -----------------------------------------------------------------
    @property
    def coef_(self) -> np.ndarray:
        """The weights used for prediction: the average of the iterates once averaging has
        started, else the last iterate."""
        st = self.state_
        if st[K.AVG_N] > 0:
            return st[K.AVG_A] * self.avg_u_ + st[K.AVG_B] * self.v_
        return st[K.SCALE] * self.v_

    @property
    def intercept_(self) -> float:
        st = self.state_
        return float(st[K.AVG_BIAS] if st[K.AVG_N] > 0 else st[K.BIAS])

    def _scores(self, rows) -> np.ndarray:
        return csr_dot(self.coef_, rows.indices, rows.values, rows.offsets) + self.intercept_

    def objective(self, X, y) -> float:
        """``lam2/2 ||w||^2 + lam1 ||w||_1 + mean loss`` of the prediction weights on
        ``(X, y)``."""
        self.check_params()
        p = self._decision(X)
        codes = np.ascontiguousarray(self._encode(y), dtype=np.float64)
        w = self.coef_
        return (
            0.5 * self._lam2 * float(w @ w)
            + self._lam1 * float(np.abs(w).sum())
            + _mean_loss(p, codes, self._loss.code)
        )
