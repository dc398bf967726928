"""A backend learner from command-line options (``nbsvm learn --algorithm NAME --lambda ...``):
each option goes to the parameter the learner's class takes under one of its names, and an
option the learner does not take is an error naming the ones it does."""

from __future__ import annotations

from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner
from nbsvm.learners.hints import ETA0_SCHEDULES

# CLI option -> the learner parameter names it may stand for (the first one a class takes)
OPTION_PARAMS = {
    "--loss": ("loss",),
    "--schedule": ("schedule",),
    "--penalty": ("penalty",),
    "--l1": ("l1", "l1_ratio"),
    "--lambda": ("lam",),
    "--eta0": ("eta0", "eta"),
    "--C": ("C",),
    "--radius": ("radius",),
    "--average": ("average",),
    "--estimator": ("estimator",),
}
# run by the epoch loop here; passed on too when the learner has them (for the record)
LOOP_PARAMS = {"--epochs": "epochs", "--seed": "seed"}
# options a learner takes but that act only with some values of another of its parameters:
# option -> (that parameter, the values where the option acts, what the option is)
ACTS_ONLY_WITH = {
    "--l1": ("penalty", ("elasticnet",), "the share of lambda on L1 of --penalty elasticnet"),
    "--eta0": (
        "schedule",
        ETA0_SCHEDULES,
        "the step size of --schedule optimal, constant, invsqrt or adagrad (pegasos steps "
        "1/(lambda t))",
    ),
}


def learner_class_for(algorithm: str) -> tuple[type[OnlineLearner], dict]:
    """The class behind ``--algorithm NAME`` and its fixed parameters."""
    from nbsvm.learners.registry import ALGORITHMS, resolve

    resolve("algorithm", algorithm)  # unknown name: the registry's error
    entry = ALGORITHMS[algorithm]
    try:
        cls = entry.load()
    except (ImportError, AttributeError):
        cls = None
    if not (isinstance(cls, type) and issubclass(cls, OnlineLearner)):
        raise NBSVMError(
            f"--algorithm {algorithm} is not available in this build "
            f"({entry.module_path}.{entry.cls} is missing or not an OnlineLearner)"
        )
    return cls, entry.fixed


def _option_map(cls, fixed: dict, loop: bool = True) -> dict:
    """CLI option -> the parameter of ``cls`` it sets (options ``cls`` does not take left out)."""
    takes = cls._param_names()
    options = list(OPTION_PARAMS.items())
    if loop:
        options += [(o, (p,)) for o, p in LOOP_PARAMS.items()]
    found = {}
    for option, candidates in options:
        for p in candidates:
            if p in takes and p not in fixed:
                found[option] = p
                break
    return found


def make_learner_from_options(algorithm: str, options: dict) -> OnlineLearner:
    """A learner for ``--algorithm`` from the options the user gave (``None``: not given).

    ``options`` maps CLI option names (``"--lambda"``...) to values. An option the algorithm
    does not take is an error that lists the options it does take. A wrapper with
    ``estimator_params`` (one-vs-rest) passes the options it does not take itself on to its
    binary learner (``--estimator``, by default its own default).

    Examples
    --------
    >>> make_learner_from_options("ogd", {"--eta0": 2.5, "--radius": 1.0, "--C": None})
    OGDRegressor(eta=2.5)
    >>> make_learner_from_options("ogd", {"--lambda": 1e-4})
    Traceback (most recent call last):
    ...
    nbsvm.errors.NBSVMError: --algorithm ogd does not take --lambda; it takes: --eta0, --radius, --epochs, --seed
    """
    import inspect

    from nbsvm.learners.registry import make_learner

    cls, fixed = learner_class_for(algorithm)
    option_of = _option_map(cls, fixed)
    given = {o: v for o, v in options.items() if v is not None}
    params = {option_of[o]: v for o, v in given.items() if o in option_of}
    inner = {}
    if "estimator_params" in cls._param_names():
        estimator = params.get("estimator")
        if estimator is None:
            estimator = inspect.signature(cls.__init__).parameters["estimator"].default
        # the binary learner's fixed settings (adagrad's schedule) cannot be set either
        inner_cls, inner_fixed = learner_class_for(estimator)
        if inner_cls.task != "binary":  # refused here, before any file is read
            raise NBSVMError(
                f"--algorithm {algorithm} needs a binary --estimator; {estimator!r} is "
                f"{inner_cls.task}"
            )
        inner = _option_map(inner_cls, inner_fixed, loop=False)
        inner = {o: p for o, p in inner.items() if o not in option_of}
        passed = {inner[o]: v for o, v in given.items() if o in inner}
        if passed:
            params["estimator_params"] = passed
        _refuse_inactive(
            f"{algorithm} --estimator {estimator}",
            inner_cls,
            inner_fixed,
            passed,
            {o: inner[o] for o in given if o in inner},
        )
    refused = [o for o in given if o not in option_of and o not in inner and o not in LOOP_PARAMS]
    if refused:
        allowed = list(option_of) + list(inner) or ["(no options)"]
        raise NBSVMError(
            f"--algorithm {algorithm} does not take {', '.join(refused)}; it "
            f"takes: {', '.join(allowed)}"
        )
    _refuse_inactive(
        algorithm, cls, fixed, params, {o: option_of[o] for o in given if o in option_of}
    )
    return make_learner(algorithm, **params)


def _refuse_inactive(algorithm: str, cls, fixed: dict, params: dict, given: dict) -> None:
    """Refuse an option given where it would be ignored (:data:`ACTS_ONLY_WITH`): ``-a
    sgd --l1 0.5`` trained the default L2 model, the same weights. ``given``: option ->
    the parameter it set."""
    import inspect

    from nbsvm.learners.registry import resolve

    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()}
    for option, (other, acting, what) in ACTS_ONLY_WITH.items():
        if option not in given:
            continue
        value = params.get(other, fixed.get(other, defaults.get(other)))
        if isinstance(value, str):
            resolve(other, value)  # an unknown name is said as such, not as this option
        if value is not None and value not in acting:
            raise NBSVMError(
                f"--algorithm {algorithm} with {other} {value!r} does not use {option}: it is "
                f"{what}"
            )
