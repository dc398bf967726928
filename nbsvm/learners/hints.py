"""What a learner whose state blew up (NaN or infinity) can be given instead, by the
options it takes: one rule for ``nbsvm learn``'s per-epoch check and for the save's
refusal (:mod:`nbsvm.learners.persistence`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbsvm.learners.base import OnlineLearner

#: The schedules whose steps take ``eta0`` (pegasos steps 1/(lambda t)).
ETA0_SCHEDULES = ("optimal", "constant", "invsqrt", "adagrad")


def divergence_hints(learner: OnlineLearner, cli: bool = True) -> list[str]:
    """What a learner whose state blew up can be given instead, by the options it takes
    (a one-vs-rest wrapper: its binary learner's, with the parameters it passes on): a
    smaller step (``--eta0`` where the schedule uses it), more regularization
    (``--lambda``), a smaller ``--C`` (PA, MIRA); ``cli`` False: the Python parameters'
    names (``eta0``, ``lam``, ``C``).

    >>> from nbsvm.learners.registry import make_learner
    >>> divergence_hints(make_learner("pegasos"))
    ['raise --lambda']
    >>> divergence_hints(make_learner("ovr", estimator="sgd"), cli=False)
    ['lower eta0', 'raise lam']
    """
    from nbsvm.learners.registry import make_learner

    params = learner.get_params()
    if "estimator_params" in params:  # one-vs-rest: its binary learner's options
        inner = make_learner(str(params["estimator"]), **(params["estimator_params"] or {}))
        params = inner.get_params()
    names = ("--eta0", "--lambda", "--C") if cli else ("eta0", "lam", "C")
    hints = []
    schedule = params.get("schedule")
    if set(params) & {"eta0", "eta"} and (schedule is None or schedule in ETA0_SCHEDULES):
        hints.append(f"lower {names[0]}")
    if "lam" in params:
        hints.append(f"raise {names[1]}")
    if "C" in params:
        hints.append(f"lower {names[2]}")
    return hints
