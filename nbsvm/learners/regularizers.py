"""Penalties, the ball projection and weight averaging of the SGD learners.

A penalty splits the regularization strength ``lam`` into an L1 part ``lam1`` and an L2
part ``lam2``; the objective is ``lam2/2 ||w||^2 + lam1 ||w||_1 + mean loss``. How each
part is applied without touching every weight at every step (the kernels live in
:mod:`.kernels.linear`, these tricks in :mod:`.kernels.weight_tricks`):

- **L2 by scaling** (Shalev-Shwartz et al. 2007; Bottou 2012): ``w = s * v``; the shrink
  ``w <- (1 - eta lam2) w`` only multiplies ``s``, so a step costs O(non-zeros of x).
  ``s`` is folded back into ``v`` when it leaves ``[1e-6, 1e6]`` (O(n_features), rare).
  A step with ``eta lam2 >= 1`` sets the weights to zero (as scikit-learn does).
- **L1**, on the features of the current example only (lazily), two ways (``l1_method``):

  - ``cumulative``: the cumulative penalty of Tsuruoka, Tsujii & Ananiadou (ACL 2009):
    ``u`` is the total penalty ``sum eta_t lam1`` any weight could have received so far;
    ``q_i`` what weight i actually received. After the gradient step a positive ``w_i``
    becomes ``max(0, w_i - (u + q_i))``, a negative one ``min(0, w_i + (u - q_i))``, and
    ``q_i`` records the change (scikit-learn's rule).
  - ``truncated``: truncated gradient (Langford, Li & Zhang, JMLR 2009, with
    ``theta = inf`` and ``K = 1``, i.e. a soft threshold of ``eta_t lam1`` at every step),
    applied lazily: ``q_i`` holds ``u`` when weight i was last shrunk, and the steps it
    missed (``u - q_i``) are applied when the feature next appears, before the prediction,
    and to every weight at the end of a pass (the weights it leaves are the truncated
    gradient's; soft thresholds in a row add up, so the path is the same).

  With AdaGrad the L1 part is the per-coordinate proximal step ``w_i <- sign(w_i)
  max(0, |w_i| - eta_i lam1)`` on the touched coordinates (Duchi et al. 2011), whatever
  ``l1_method`` says.
- **Projection** onto the ball ``||w|| <= radius`` (Shalev-Shwartz et al. 2007; Zinkevich
  2003): ``||v||^2`` is tracked as ``v`` changes, so projecting only rescales ``s``.
- **Averaging** (ASGD; Polyak & Juditsky 1992, Xu 2011, Bottou's ``svmasgd``): the average
  of the iterates is kept as ``a = A * u + B * v``. A change ``delta`` of ``v`` is matched
  by ``u -= (B / A) delta`` (``a`` unchanged); the step's averaging
  ``a <- (1 - mu) a + mu s v`` then only updates the scalars:
  ``A <- (1 - mu) A``, ``B <- (1 - mu) B + mu s``, with ``mu = 1 / (number of averaged
  iterates)``. Every step is O(non-zeros of x); when ``A`` gets small or ``s`` is folded,
  the average itself is stored in ``u`` again (``A = 1``, ``B = 0``, O(n_features), rare).

Examples
--------
>>> PENALTIES["elasticnet"].split(lam=1e-3, l1_ratio=0.25)
(0.00025, 0.00075)
>>> PENALTIES["l2"].split(lam=1e-3, l1_ratio=0.25)
(0.0, 0.001)
"""

from __future__ import annotations

from dataclasses import dataclass

NONE, L2, L1, ELASTICNET = 0, 1, 2, 3

# how the L1 part is applied (codes for the kernels)
L1_METHODS = {"cumulative": 0, "truncated": 1}


@dataclass(frozen=True)
class Penalty:
    """A regularizer: which share of ``lam`` is L1 (the rest is L2)."""

    name: str
    code: int

    def split(self, lam: float, l1_ratio: float) -> tuple[float, float]:
        """``(lam1, lam2)``: the L1 and L2 strengths for ``lam`` and ``l1_ratio``."""
        share = {NONE: None, L2: 0.0, L1: 1.0, ELASTICNET: l1_ratio}[self.code]
        if share is None:
            return 0.0, 0.0
        return share * lam, (1.0 - share) * lam


PENALTIES = {
    "l2": Penalty("l2", L2),
    "l1": Penalty("l1", L1),
    "elasticnet": Penalty("elasticnet", ELASTICNET),
    "none": Penalty("none", NONE),
}
