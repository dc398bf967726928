"""Step-size schedules of the SGD learners.

Each schedule has a registry name, an integer code the numba kernels switch on and a
plain-Python :meth:`Schedule.rate`. ``t`` is the number of updates made before the current
one (0 for the first step), counted over all epochs:

========== ===================================== ==============================================
name       step ``eta_t``                         source
========== ===================================== ==============================================
constant   ``eta0``
optimal    ``eta0 / (1 + lam * eta0 * t)``        Bottou (2012), "Stochastic gradient descent
                                                  tricks"; tends to ``1 / (lam t)``
invsqrt    ``eta0 / sqrt(1 + t)``                 Zinkevich (2003)
pegasos    ``1 / (lam * (1 + t))`` (no ``eta0``)  Shalev-Shwartz, Singer & Srebro (2007)
adagrad    ``eta0 / sqrt(G_i + eps)`` per         Duchi, Hazan & Singer (2011), JMLR 12
           coordinate, ``G_i`` the sum of the
           squared gradients of coordinate i
           (this step's included)
========== ===================================== ==============================================

Examples
--------
>>> SCHEDULES["optimal"].rate(t=20, eta0=0.5, lam=0.1)
0.25
>>> SCHEDULES["pegasos"].rate(t=0, eta0=0.5, lam=0.1)
10.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numba import njit

CONSTANT, OPTIMAL, INVSQRT, PEGASOS, ADAGRAD = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True, inline="always")
def rate(code, t, eta0, lam):
    """The step of update ``t`` (from 0) of a global schedule: the one table every
    kernel reads (AdaGrad's per-coordinate step is computed where ``G_i`` is)."""
    if code == CONSTANT:
        return eta0
    if code == OPTIMAL:
        return eta0 / (1.0 + lam * eta0 * t)
    if code == INVSQRT:
        return eta0 / math.sqrt(1.0 + t)
    return 1.0 / (lam * (1.0 + t))  # PEGASOS


@dataclass(frozen=True)
class Schedule:
    """A step-size rule; ``per_coordinate`` schedules (AdaGrad) keep a state per feature."""

    name: str
    code: int
    per_coordinate: bool
    uses_eta0: bool

    def rate(self, t: float, eta0: float, lam: float, G: float = 0.0, eps: float = 1e-8) -> float:
        """The step for update number ``t`` (from 0); ``G`` is AdaGrad's squared-gradient
        sum of the coordinate."""
        if self.code == ADAGRAD:
            return eta0 / math.sqrt(G + eps)
        return rate(self.code, float(t), float(eta0), float(lam))  # one compiled signature


SCHEDULES = {
    "constant": Schedule("constant", CONSTANT, False, True),
    "optimal": Schedule("optimal", OPTIMAL, False, True),
    "invsqrt": Schedule("invsqrt", INVSQRT, False, True),
    "pegasos": Schedule("pegasos", PEGASOS, False, False),
    "adagrad": Schedule("adagrad", ADAGRAD, True, True),
}
