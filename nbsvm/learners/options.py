"""A backend learner from command-line options (``nbsvm learn --algorithm NAME --lambda ...``):
each option goes to the parameter the learner's class takes under one of its names, and an
option the learner does not take is an error naming the ones it does."""

from __future__ import annotations

from nbsvm.errors import NBSVMError
from nbsvm.learners.base import OnlineLearner

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
        inner = _option_map(inner_cls, inner_fixed, loop=False)
        inner = {o: p for o, p in inner.items() if o not in option_of}
        passed = {inner[o]: v for o, v in given.items() if o in inner}
        if passed:
            params["estimator_params"] = passed
    refused = [o for o in given if o not in option_of and o not in inner and o not in LOOP_PARAMS]
    if refused:
        allowed = list(option_of) + list(inner) or ["(no options)"]
        raise NBSVMError(
            f"--algorithm {algorithm} does not take {', '.join(refused)}; it "
            f"takes: {', '.join(allowed)}"
        )
    return make_learner(algorithm, **params)
