"""The shared backend's learners on NBSVM's text features (``nbsvm train --learner NAME``).

A reduction in Vowpal Wabbit's sense: the learners of :mod:`nbsvm.learners` are wrapped, not
re-implemented. The NBSVM trainer hashes, counts and caches as always; each cached group
of documents becomes explicit-valued rows (:class:`~nbsvm.data.rows.SparseRows`) whose
values are the NB ratios of the document's kept columns (scaled to unit norm with
``norm='l2'``), and the backend learner makes one ``partial_fit`` pass over them in the
epoch's shuffled order.

- Binary learners (``pa``, ``pegasos``): one learner for two classes; with more, the
  backend's one-vs-rest reduction (:class:`~nbsvm.learners.multiclass.OneVsRest`,
  ``fit_outputs``), each class's learner on rows of its own class's ratios.
- Native multi-class and multi-label learners (``mira``, ``multiclass-hinge``,
  ``multilabel``): one learner scoring every class. With two classes it sees the
  NB-weighted vector; with more, each class sees the document through its own ratios, the
  joint feature map of structured prediction ``phi(x, k) = r_k o x`` (Sol; Fendrich 2012)
  over the binarized n-grams, each class's row scaled to unit norm with ``norm='l2'``
  (:attr:`~nbsvm.data.rows.SparseRows.class_table`). Model files written before the joint
  map (binarized rows shared by the classes) are read as they were trained.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.io.labels import output_targets
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.registry import ALGORITHMS, TEXT_LEARNERS, make_learner

if TYPE_CHECKING:
    from nbsvm.data.rows import SparseRows

# --learner name -> the backend parameter that takes NBSVM's lambda (lam), if any; which
# share one feature vector for all outputs; which pick one class per document (the registry)
LEARNERS = {name: ALGORITHMS[name].lam for name in TEXT_LEARNERS}
SHARED = tuple(name for name in TEXT_LEARNERS if ALGORITHMS[name].shared)
ONE_CLASS = tuple(name for name in TEXT_LEARNERS if ALGORITHMS[name].one_class)
# parameters of a backend learner on text that differ from its own defaults. The hinge
# learners by SGD (Pegasos steps, shrinkage) learn no bias input on text: a constant 1 beside
# unit-norm rows moves the biases as much as all the weights. Without it (accuracy, or micro
# F1): 20NG multiclass-hinge 81.86 -> 84.16, Blitzer domain 76.47 -> 78.88, 20NG subject
# lines 69.74 -> 71.85, multi-label 20NG 0.627 -> 0.783; MIRA's closed-form steps neither
# gain nor lose (-0.4, 0.0, +0.45 on the same three), so it keeps its bias.
# Their weights are stored as float32 (each step still computes in float64): text's
# feature spaces are wide (20 Newsgroups: 1.1M columns x 20 classes, 177 MB a copy), and
# on 20NG each keeps its accuracy to the hundredth: mira 84.23%, multiclass-hinge 84.16%,
# pa (unigrams, 2**20) 86.35%.
ON_TEXT: dict[str, dict[str, object]] = {
    "mira": {"dtype": "float32"},
    "pa": {"dtype": "float32"},
    # (Pegasos' steps, as measured above; on arrays it defaults to 'optimal')
    "multiclass-hinge": {"fit_intercept": False, "dtype": "float32", "schedule": "pegasos"},
    "multilabel": {"fit_intercept": False, "dtype": "float32", "schedule": "pegasos"},
}


def backend_name(name: str | None) -> str | None:
    """The backend learner a ``--learner`` name stands for (None: the built-in one)."""
    return name if name in LEARNERS else None


def nb_rows(
    ids: np.ndarray, offsets: np.ndarray, table: np.ndarray | None, unit: bool, n_features: int
) -> SparseRows:
    """CSR rows of model columns ``ids`` with values ``table[ids]`` (1 when ``table`` is
    None), each row divided by its L2 norm when ``unit`` (an all-zero row stays zero)."""
    indices = ids.astype(np.int64)
    values = np.ones(ids.shape[0]) if table is None else table[ids].astype(np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if unit and values.size:
        row = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        norms = np.sqrt(np.bincount(row, weights=values * values, minlength=offsets.shape[0] - 1))
        values /= np.where(norms > 0, norms, 1.0)[row]
    from nbsvm.data.rows import SparseRows  # compiled: a backend learner at work

    return SparseRows(indices, values, offsets, int(n_features))


def _params(name: str, lam: float) -> dict:
    """The parameters NBSVM gives backend learner ``name`` (NBSVM's L2 strength ``lam``
    under the name the learner takes it by)."""
    params: dict[str, object] = dict(ON_TEXT.get(name, {}))
    lam_param = LEARNERS[name]
    if lam_param is not None:
        params[lam_param] = lam
    return params


def check_backend(name: str, lam: float) -> None:
    """Refuse a setting backend learner ``name`` cannot train with, before any text is
    read (``lam`` 0 for a learner whose steps divide by it)."""
    make_learner(name, **_params(name, lam)).check_params()


class NBReduction:
    """Backend learner(s) for an NBSVM model with ``n_outputs`` outputs (1 for two classes,
    else one per class) over ``n_features`` model columns."""

    def __init__(self, name: str, n_outputs: int, n_features: int, lam: float, seed: int):
        if name not in LEARNERS:
            raise NBSVMError(f"unknown backend learner {name!r}; allowed: {', '.join(LEARNERS)}")
        self.name, self.n_outputs, self.n_features = name, n_outputs, n_features
        params = _params(name, lam)
        self.shared = name in SHARED or n_outputs == 1
        self.joint = True  # several outputs: each class sees the document by its own ratios
        if self.shared:
            self._shared = [make_learner(name, seed=seed, **params)]
        else:  # one-vs-rest: the backend's reduction, each class on its own rows
            from nbsvm.learners.multiclass import OneVsRest

            self.ovr = OneVsRest(name, estimator_params=params, seed=seed)
            self.ovr.start_outputs(n_outputs)

    @property
    def learners(self) -> list:
        """The backend learners: the shared one, or the one-vs-rest reduction's, one per
        output."""
        return self._shared if self.shared else self.ovr.estimators_

    @property
    def _multi_shared(self) -> bool:
        """One learner scoring several outputs (not one output's binary learner)."""
        return self.shared and (self.n_outputs > 1 or self.name == "multilabel")

    def _rows(self, tables, ids, offsets, unit, k) -> SparseRows:
        if not self._multi_shared:
            return nb_rows(ids, offsets, tables[k], unit, self.n_features)
        if not self.joint:  # a model file from before the joint map: shared binarized rows
            return nb_rows(ids, offsets, None, unit, self.n_features)
        rows = nb_rows(ids, offsets, None, False, self.n_features)
        rows.class_table, rows.class_unit = tables, unit
        return rows

    def can_continue(self) -> bool:
        """Whether every learner can go on training (:meth:`OnlineLearner.can_continue`)."""
        return all(learner.can_continue() for learner in self.learners)

    def partial_fit(
        self,
        tables: np.ndarray,
        ids: np.ndarray,
        offsets: np.ndarray,
        codes: np.ndarray,
        order: np.ndarray,
        positive: Sequence[int] | np.ndarray,
        unit: bool,
    ) -> None:
        """One pass over a group's documents in ``order``; ``positive[k]`` is output
        ``k``'s class as a code of ``codes`` (or a multi-label membership matrix:
        :func:`nbsvm.io.labels.output_targets`)."""
        order = np.asarray(order, dtype=np.int64)
        if self.shared:
            rows = self._rows(tables, ids, offsets, unit, 0)
            if self.name == "multilabel":  # an indicator matrix of the outputs
                y = np.empty((len(codes), self.n_outputs), dtype=np.int64)
                for k in range(self.n_outputs):
                    own, pos = output_targets(codes, positive, k)
                    y[:, k] = own == pos
                classes = list(range(self.n_outputs))
            elif self.n_outputs == 1:
                own, pos = output_targets(codes, positive, 0)
                y, classes = (own == pos).astype(np.int64), [0, 1]
            else:
                output_of = np.full(
                    max(int(codes.max(initial=0)), max(positive)) + 1, -1, dtype=np.int64
                )
                output_of[np.asarray(positive)] = np.arange(self.n_outputs)
                y, classes = output_of[codes], list(range(self.n_outputs))
            self.learners[0].partial_fit(rows, y, classes=classes, order=order)
            return
        targets = np.empty((len(codes), self.n_outputs), dtype=bool)
        for k in range(self.n_outputs):
            own, pos = output_targets(codes, positive, k)
            targets[:, k] = own == pos
        self.ovr.fit_outputs(lambda k: self._rows(tables, ids, offsets, unit, k), targets, order)

    def decision(
        self, tables: np.ndarray, ids: np.ndarray, offsets: np.ndarray, unit: bool
    ) -> np.ndarray:
        """Scores, shape ``(n_rows, n_outputs)``."""
        if self.shared:
            s = self.learners[0].decision_function(self._rows(tables, ids, offsets, unit, 0))
            return s.reshape(-1, 1) if s.ndim == 1 else s
        return self.ovr.output_scores(lambda k: self._rows(tables, ids, offsets, unit, k))

    def output_weights(
        self, k: int, tables: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray, float]:
        """Output ``k``'s linear model over the columns: ``(values, w, b)``, its score being
        ``sum_i x_i w_i + b`` with ``x_i`` the document's row values (``values[i]``, or 1
        for the shared binarized rows when ``values`` is None; divided by the row's norm
        with ``unit``)."""
        if self._multi_shared:
            w, b = self.learners[0].output_weights(k)
            return (tables[k] if self.joint else None), w, b
        learner = self.learners[0 if self.shared else k]
        if hasattr(learner, "output_weights") and learner.task == "multiclass":
            # a multi-class learner on two classes scores classes_[1] - classes_[0]
            (w0, b0), (w1, b1) = learner.output_weights(0), learner.output_weights(1)
            return tables[k], w1 - w0, b1 - b0
        w = np.asarray(learner.coef_, dtype=np.float64).reshape(-1)
        return tables[k], w, float(np.asarray(learner.intercept_).reshape(-1)[0])

    # -- model files: every learner's parts under its own prefix ---------------------------
    def parts(self) -> tuple[dict, dict]:
        headers, arrays = [], {}
        for j, learner in enumerate(self.learners):
            header, own = learner.saved_parts()
            headers.append(header)
            arrays.update({f"backend{j}.{name}": a for name, a in own.items()})
        return {"name": self.name, "learners": headers, "joint": self.joint}, arrays

    @classmethod
    def from_parts(
        cls,
        header: object,
        arrays: dict,
        n_outputs: int,
        n_features: int,
        path: str | None = None,
    ) -> NBReduction:
        if not (isinstance(header, dict) and isinstance(header.get("learners"), list)):
            raise NBSVMError("corrupted model file: bad backend learner header", path=path)
        if header.get("name") not in LEARNERS:
            raise NBSVMError(
                f"corrupted model file: unknown backend learner {header.get('name')!r}", path=path
            )
        obj = cls.__new__(cls)
        obj.name, obj.n_outputs, obj.n_features = header["name"], n_outputs, n_features
        obj.shared = obj.name in SHARED or n_outputs == 1
        obj.joint = header.get("joint", False) is True  # absent: written before the joint map
        if len(header["learners"]) != (1 if obj.shared else n_outputs):
            raise NBSVMError("corrupted model file: wrong number of backend learners", path=path)
        loaded = []
        for j, h in enumerate(header["learners"]):
            prefix = f"backend{j}."
            own = {k[len(prefix) :]: a for k, a in arrays.items() if k.startswith(prefix)}
            learner = OnlineLearner.from_parts(h, own, path)
            if getattr(learner, "n_features_in_", None) != n_features:
                raise NBSVMError(
                    "corrupted model file: a backend learner of another width", path=path
                )
            loaded.append(learner)
        if obj.shared:
            obj._shared = loaded
        else:
            from nbsvm.learners.multiclass import OneVsRest

            obj.ovr = OneVsRest(obj.name)
            obj.ovr.start_outputs(n_outputs, loaded)
        return obj
