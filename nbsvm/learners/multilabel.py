"""Multi-label linear SVM by SGD, as in the Sol toolkit (Fendrich 2012, eq. 12-13; after
Elisseeff & Weston 2001): one hinge per label with indicators in {-1, +1}.

Sol packed a label set into a 32-bit integer and so allowed at most 32 labels; here the
labels are a ``(n, n_labels)`` matrix of +-1, so any number works. Memory grows linearly
with the labels: the weights are a dense ``(n_labels, n_features)`` float64 array (8 bytes
per label and feature), twice that with averaging. With a hashed feature space
``n_features = 2**n_bits``, so 150 labels over 2**18 buckets take 300 MiB (600 MiB
averaged): use fewer bits for many labels.
"""
from __future__ import annotations

from nbsvm.learners import _multi_kernels as K
from nbsvm.learners.multiclass import LinearOutputs


class MultilabelHinge(LinearOutputs):
    """Multi-label classifier: per label ``l`` the hinge ``max(0, 1 - I_l (w_l.x + b_l))``
    (``I_l = +1`` if the example has label ``l``, else ``-1``) plus ``lam/2 sum ||w_l||^2``.

    Step t: all weights shrink by ``1 - eta lam``; every violated label moves
    ``w_l += eta I_l x``, ``b_l += eta I_l``. ``predict`` returns, per example, the tuple
    of labels with a positive score. The progress line's ``mistakes`` counts wrong labels
    (Hamming errors).

    Parameters
    ----------
    lam : float
        L2 strength (the bias, weight of a constant input 1, included).
    schedule : {'pegasos', 'invsqrt', 'optimal', 'constant'}
        Step size at step t (from 1): ``1/(lam t)``, ``eta0/sqrt(t)``,
        ``eta0/(1 + lam eta0 (t - 1))`` or ``eta0`` (see :mod:`.schedules`).
    eta0 : float
    fit_intercept : bool
        Learn a bias per label.
    average : bool
        Predict with the average of all iterates (default) or the last one.
    epochs, seed : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    >>> m = MultilabelHinge(lam=0.1, epochs=30).fit(X, [["a"], ["b"], ["a", "b"], []])
    >>> m.predict(X)
    [('a',), ('b',), ('a', 'b'), ()]
    """

    task = "multilabel"

    def __init__(self, lam=1e-4, schedule="pegasos", eta0=1.0, fit_intercept=True,
                 average=True, epochs=5, seed=0):
        self.lam = lam
        self.schedule = schedule
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.average = average
        self.epochs = epochs
        self.seed = seed

    def _validate(self):
        self._sgd_settings()

    def _pass(self, rows, y, order):
        lam, schedule, eta0 = self._sgd_settings()
        loss, mistakes = K._per_label_epoch(
            rows.indices, rows.values, rows.offsets, y, order, *self._arrays(), K.RULE_SGD,
            1.0, lam, schedule, eta0, bool(self.fit_intercept))
        return {"n": len(order), "loss": float(loss), "mistakes": int(mistakes)}
