"""Linear SGD and AdaGrad over lookup-valued sparse rows, one weight vector per output.

This is the state and the epoch driver; the arithmetic lives in :mod:`.kernels.table`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from nbsvm import _small_jobs
from nbsvm._parallel import run_parts
from nbsvm.config import MAX_THREADS, OPTIMIZERS
from nbsvm.errors import NBSVMError
from nbsvm.io.labels import output_targets
from nbsvm.learners.kernels import table_plain
from nbsvm.learners.losses import MULTICLASS_LOSSES, check_loss, resolve_loss

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

STATE_DTYPE = np.float32


def _table():
    """The compiled table kernels, loaded on first use: a small job scores without them
    (:mod:`nbsvm._small_jobs`, :mod:`.kernels.table_plain`)."""
    from nbsvm.learners.kernels import table

    return table


class LinearSGD:
    """Binary (``n_outputs = 1``) or one-vs-rest (``n_outputs = K``) linear learner.

    Feature values come from :attr:`tables` (``tables[k, i]`` is feature i's value for
    output k when present in a row); set them before training. All per-feature state
    is one float32 array ``S_`` of shape ``(n_outputs, n_features, W)``: value, weight
    and (AdaGrad) squared-gradient sum side by side, so memory is
    ``n_outputs * n_features * W * 4`` bytes (W = 2 for SGD; 3 for AdaGrad).

    Parameters
    ----------
    n_features : int
        Length of each weight vector (``2**n_bits``).
    n_outputs : int
        Weight vectors; output ``k`` treats label code ``positive[k]`` as +1.
    loss : str
        A name from :data:`nbsvm.learners.LOSSES` (each output on its own, one against the
        rest), or from :data:`~nbsvm.learners.losses.MULTICLASS_LOSSES` (``softmax``,
        ``multiclass_hinge``: the outputs trained together on one loss of their scores;
        ``positive`` then lists each output's class).
    optimizer : {'sgd', 'adagrad'}
        SGD with Bottou's schedule ``eta0 / (1 + lam*eta0*t)`` and the scaled weight vector,
        or AdaGrad with per-coordinate steps.
    eta0, lam : float
        Initial step size and L2 strength (lambda).
    bias_rate : float or None
        Bias step relative to the weights' (default 0.01 for SGD as in Bottou's svmsgd, 1 for
        AdaGrad, whose per-coordinate steps already adapt).
    threads : int
        AdaGrad only: split each call's examples over this many threads that update the
        shared weights without locks (Hogwild!, Recht et al. 2011; sparse updates rarely
        collide). Faster on several cores, but no longer bit-for-bit reproducible.
        SGD's scaled weight vector cannot be shared this way, so SGD always uses one.
        Outputs are independent, so with ``threads=1`` several outputs train side by side
        on the machine's cores (each output's arithmetic is unchanged: bit for bit the same
        model).
    class_weight : array ``(n_outputs, 2)`` or None
        Output k's weights of its positive and its negative documents (their loss and
        gradient are multiplied by it; scikit-learn's ``class_weight`` acting on the
        steps). With a multi-class loss, ``class_weight[o, 0]`` weighs the documents of
        output o's class.
    unit : bool
        Scale every row to unit L2 norm (of its looked-up values, per output) in training
        and scoring.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([0, 1, 1, 2], np.int32); offsets = np.array([0, 2, 4])
    >>> codes = np.array([1, 0], np.int32)
    >>> m = LinearSGD(3, loss="hinge", optimizer="sgd", eta0=0.5, lam=0.0)
    >>> m.tables[:] = 1.0
    >>> _ = m.epoch(ids, offsets, codes, np.array([0, 1]), positive=[1])
    >>> m.coef()[0].round(2).tolist()
    [0.5, 0.0, -0.5]
    """

    def __init__(
        self,
        n_features,
        n_outputs=1,
        loss="log",
        optimizer="sgd",
        eta0=0.05,
        lam=1e-6,
        bias_rate=None,
        eps=1e-8,
        threads=1,
        unit=False,
        class_weight=None,
        values_only=False,
    ):
        self.n_features = n_features
        self.n_outputs = n_outputs
        self.loss = loss
        self.optimizer = optimizer
        self.eta0 = eta0
        self.lam = lam
        self.bias_rate = bias_rate
        self.eps = eps
        self.threads = threads
        self.unit = unit
        self.class_weight = class_weight
        self._validate()
        # AdaGrad's three fields are not padded to four: with both ends of a row prefetched
        # (nbsvm._prefetch) 12-byte rows are as fast as 16-byte ones, for 25% less state.
        # values_only: the feature values alone, for a backend learner that keeps its own
        # weights (nbsvm.learners.reduction): a third of the state
        self.values_only = values_only
        width = 1 if values_only else 2 if optimizer == "sgd" else 3
        self.S_ = np.zeros((n_outputs, n_features, width), dtype=STATE_DTYPE)
        self.state_ = np.zeros((n_outputs, 3))
        if optimizer == "sgd":
            self.state_[:, 0] = 1.0  # scale s

    def _validate(self):
        self.multiclass = self.loss in MULTICLASS_LOSSES
        if self.multiclass:
            if self.n_outputs < 2:
                raise NBSVMError(
                    f"loss {self.loss!r} trains two or more outputs together; got {self.n_outputs}"
                )
        else:
            check_loss(self.loss)
            self._loss = resolve_loss(self.loss)
        if self.optimizer not in OPTIMIZERS:
            raise NBSVMError(
                f"unknown optimizer {self.optimizer!r}; allowed: {', '.join(OPTIMIZERS)}"
            )
        if not (np.isfinite(self.eta0) and self.eta0 > 0):
            raise NBSVMError(f"eta0 must be a positive number, got {self.eta0!r}")
        if not (np.isfinite(self.lam) and self.lam >= 0):
            raise NBSVMError(f"lambda (lam) must be >= 0, got {self.lam!r}")
        if self.class_weight is not None:
            cw = np.asarray(self.class_weight, dtype=np.float64)
            if cw.shape != (self.n_outputs, 2) or not (np.isfinite(cw).all() and (cw > 0).all()):
                raise NBSVMError(
                    "class_weight must hold a positive (positive, negative) "
                    f"weight pair per output, shape ({self.n_outputs}, 2)"
                )
            self.class_weight = cw
        if not (isinstance(self.threads, (int, np.integer)) and 1 <= self.threads <= MAX_THREADS):
            raise NBSVMError(
                f"threads must be an integer in [1, {MAX_THREADS}], got {self.threads!r}"
            )
        if self.optimizer == "sgd" and self.lam * self.eta0 >= 1:
            raise NBSVMError(
                f"lambda * eta0 must be < 1 for SGD (got {self.lam * self.eta0:g}): "
                "the first L2 step would flip the weights' sign"
            )

    def _check_weights(self) -> None:
        """The kernels index the weights beside each value without bounds checks: a
        ``values_only`` learner never reaches them."""
        if self.values_only:
            raise NBSVMError("this learner keeps feature values only (a backend learner's)")

    def set_class_weight(self, class_weight: ArrayLike | None) -> None:
        """Weigh the documents' steps from now on (``class_weight`` as the parameter; None:
        all 1)."""
        self.class_weight = class_weight
        self._validate()

    @property
    def tables(self) -> np.ndarray:
        """Feature values, shape ``(n_outputs, n_features)`` (a writable view of the state)."""
        return self.S_[:, :, 0]

    def epoch(
        self,
        ids: np.ndarray,
        offsets: np.ndarray,
        codes: np.ndarray,
        order: ArrayLike,
        positive: Sequence[int] | np.ndarray,
        weights: np.ndarray | None = None,
    ) -> float:
        """Run the examples ``order`` once; return their mean loss (before each update).

        ``positive``: each output's positive class code, or a label-set membership matrix
        (:func:`nbsvm.io.labels.output_targets`). ``weights``: each document's weight (its
        loss and gradient are multiplied by it, and by its class weight; None: 1), as
        scikit-learn's ``sample_weight``."""
        self._check_weights()
        order = np.ascontiguousarray(order, dtype=np.int64)
        if weights is not None:
            weights = np.ascontiguousarray(weights, dtype=np.float64)
        if self.multiclass:
            return self._multiclass_epoch(ids, offsets, codes, order, positive, weights)
        losses = np.zeros(self.n_outputs)
        if self.optimizer == "adagrad" and self.threads > 1 and len(order) >= 64 * self.threads:
            for k in range(self.n_outputs):
                losses[k] = self._hogwild(
                    ids, offsets, *output_targets(codes, positive, k), order, k, weights
                )
        else:
            workers = min(self.n_outputs, os.cpu_count() or 1)

            def work(part):
                for k in range(part, self.n_outputs, workers):
                    losses[k] = self._output_epoch(
                        ids, offsets, *output_targets(codes, positive, k), order, k, weights
                    )

            run_parts(work, workers)
        total = 0.0
        for loss in losses:  # summed in output order, as one thread would
            total += loss
        return total / max(1, len(order) * self.n_outputs)

    def _multiclass_epoch(self, ids, offsets, codes, order, positive, weights) -> float:
        """All outputs at once on a multi-class loss; ``positive[k]`` is output k's class
        code. Returns the mean loss per example."""
        if isinstance(positive, np.ndarray) and positive.ndim == 2:
            raise NBSVMError(
                f"loss {self.loss!r} picks one class per document; multi-label "
                "targets need a margin loss"
            )
        positive = np.asarray(positive, dtype=np.int64)
        top = max(int(codes.max(initial=0)), int(positive.max(initial=0))) + 1
        output_of = np.full(top, -1, dtype=np.int32)
        output_of[positive[positive >= 0]] = np.flatnonzero(positive >= 0)
        target = output_of[codes]
        weight = np.zeros(0) if weights is None else weights
        if self.class_weight is not None:  # each document's class weight, times its own
            by_class = self.class_weight[np.maximum(target, 0), 0]
            weight = by_class if weights is None else by_class * weights
        total = _table()._multiclass_epoch(
            ids,
            offsets,
            target,
            weight,
            order,
            self.S_,
            self.state_,
            float(self.eta0),
            float(self.lam),
            float(self._bias_rate()),
            MULTICLASS_LOSSES[self.loss],
            self.optimizer == "adagrad",
            float(self.eps),
            bool(self.unit),
        )
        return total / max(1, len(order))

    def _bias_rate(self) -> float:
        if self.bias_rate is not None:
            return self.bias_rate
        return 0.01 if self.optimizer == "sgd" else 1.0

    def _output_epoch(
        self, ids, offsets, codes, positive, order, k, weights=None, state=None
    ) -> float:
        """One pass of output ``k`` over ``order`` (its scalars in ``state``, default its
        own; ``weights``: each document's, None for 1)."""
        state = self.state_[k] if state is None else state
        y = np.where(codes == positive, 1.0, -1.0)
        weight = np.zeros(0) if weights is None else weights
        if self.class_weight is not None:
            by_class = np.where(codes == positive, *self.class_weight[k])
            weight = by_class if weights is None else by_class * weights
        # the arguments both kernels take first; AdaGrad adds its eps
        args = (
            ids,
            offsets,
            y,
            weight,
            order,
            self.S_[k],
            state,
            float(self.eta0),
            float(self.lam),
            float(self._bias_rate()),
            self._loss.code,
        )
        if self.optimizer == "sgd":
            return _table()._sgd_epoch(*args, bool(self.unit))
        return _table()._adagrad_epoch(*args, float(self.eps), bool(self.unit))

    def _hogwild(self, ids, offsets, codes, positive, order, k, weights=None) -> float:
        """AdaGrad over ``order`` split across threads sharing ``S_[k]`` without locks.

        Each thread starts from the same scalar state (bias, t, bias accumulator); their
        increments are summed afterwards, as if they had shared those scalars too.
        """
        start = self.state_[k].copy()
        parts = np.array_split(order, self.threads)
        states = [start.copy() for _ in parts]
        losses = [0.0] * len(parts)

        def work(i):
            losses[i] = self._output_epoch(
                ids, offsets, codes, positive, parts[i], k, weights, states[i]
            )

        run_parts(work, len(parts))
        self.state_[k] = start + sum(st - start for st in states)
        return float(sum(losses))

    def scale_of(self, k: int) -> float:
        """Output ``k``'s L2 scale ``s`` (``w = s * S_[k, :, 1]``; 1 for AdaGrad). Reading
        the weights through it leaves the state, and so training, as it is; :meth:`coef`
        folds it in."""
        return float(self.state_[k, 0]) if self.optimizer == "sgd" else 1.0

    def coef(self) -> np.ndarray:
        """The weights ``w``, shape ``(n_outputs, n_features)``: a view of the state.

        For SGD the L2 scale is folded into the stored vector first (``v *= s; s = 1``),
        so no second ``n_features`` array is allocated. A ``values_only`` learner has no
        weights: zeros (allocated).
        """
        if self.values_only:
            return np.zeros((self.n_outputs, self.n_features), dtype=self.S_.dtype)
        if self.optimizer == "sgd":
            for k in range(self.n_outputs):
                if self.state_[k, 0] != 1.0:
                    self.S_[k, :, 1] *= self.state_[k, 0]
                    self.state_[k, 0] = 1.0
        return self.S_[:, :, 1]

    def intercept(self) -> np.ndarray:
        return self.state_[:, 1 if self.optimizer == "sgd" else 0].copy()

    def finite(self, chunk: int = 1 << 20) -> bool:
        """Whether the state holds no NaN or infinity (steps that blew up), checked a chunk
        of columns at a time (no temporary the size of the state)."""
        S = self.S_
        return bool(np.isfinite(self.state_).all()) and all(
            np.isfinite(S[:, lo : lo + chunk]).all() for lo in range(0, S.shape[1], chunk)
        )

    def mean_abs_coef(self) -> np.ndarray:
        """Per output, mean |w_i| over the features with a non-zero value (seen features)."""
        if self.values_only:
            return np.zeros(self.n_outputs)
        self.coef()
        return np.array([_table()._mean_abs_weight(self.S_[k]) for k in range(self.n_outputs)])

    def used_features(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Indices of features (among ``lo..hi-1``) with a non-zero value or weight in any
        output (int32)."""
        hi = self.n_features if hi is None else hi
        if self.values_only:
            return np.flatnonzero((self.S_[:, lo:hi, 0] != 0).any(axis=0)).astype(np.int32) + lo
        self.coef()
        return _table()._used_features(self.S_[:, lo:hi]) + np.int32(lo)

    def decision(self, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """``w.x + b`` for CSR rows, shape ``(n_rows, n_outputs)``."""
        self._check_weights()
        n = len(offsets) - 1
        out = np.empty((n, self.n_outputs))
        tmp = np.empty(n)
        b = self.intercept()
        plain = _small_jobs.plain(ids.nbytes)
        for k in range(self.n_outputs):
            if plain:
                tmp = table_plain.scores(
                    ids, offsets, self.S_[k], self.scale_of(k), bool(self.unit)
                )
            else:
                _table()._scores(ids, offsets, self.S_[k], self.scale_of(k), tmp, bool(self.unit))
            out[:, k] = tmp + b[k]
        return out

    def table_sums(self, ids: np.ndarray, offsets: np.ndarray, unit: bool = False) -> np.ndarray:
        """``sum_i tables[k, i]`` over each row's ids, shape ``(n_rows, n_outputs)``; with
        ``unit``, divided by the norm of the row's values."""
        n = len(offsets) - 1
        out = np.empty((n, self.n_outputs))
        tmp = np.empty(n)
        plain = _small_jobs.plain(ids.nbytes)
        for k in range(self.n_outputs):
            if plain:
                tmp = table_plain.table_sums(ids, offsets, self.S_[k], bool(unit))
            else:
                _table()._table_sums(ids, offsets, self.S_[k], tmp, bool(unit))
            out[:, k] = tmp
        return out
