"""``POST /models/{name}/learn`` and what ``GET /models/{name}`` adds for a model that
learns (:mod:`nbsvm.serve.learning`): the HTTP side, its schemas and its answers."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException
from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

from nbsvm.errors import NBSVMError
from nbsvm.io.document import MAX_WEIGHT
from nbsvm.serve.bodies import bounded, field_names
from nbsvm.serve.learning import LearnSettings, OnlineModel

if TYPE_CHECKING:
    from nbsvm.serve.registry import ModelRegistry


#: A document's weight: a number from 0 to MAX_WEIGHT (a weight of k counts as k copies);
#: strict: JSON true, false and "1e9" are no numbers (they were read as 1, 0 and 1e9).
Weight = Annotated[float, Field(ge=0, le=MAX_WEIGHT, allow_inf_nan=False, strict=True)]


#: A label as JSON gives it: a string, or a number or true / false for a model whose classes
#: are numbers or bools (fitted in Python on them); the model names it
#: (:meth:`~nbsvm.NBSVMClassifier.names_of`: ``1.0`` is the class of ``1``).
Label = str | StrictBool | int | float


class LearnRequest(BaseModel):
    """One labelled ``text`` (``label``, optional ``weight``) or a batch of ``texts``
    (``labels``, one each, optional ``weights``; a multi-label model takes a list of
    labels per text)."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    label: Label | list[Label] | None = None
    weight: Weight | None = None
    texts: list[str] | None = None
    labels: list[Label | list[Label]] | None = None
    weights: list[Weight] | None = None

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data):
        return bounded(data, field_names(cls), ("texts", "labels", "weights"))

    @model_validator(mode="after")
    def _pairs(self):
        if (self.text is None) == (self.texts is None):
            raise ValueError("give either 'text' and 'label' or 'texts' and 'labels'")
        if self.text is not None and (self.label is None or self.labels is not None):
            raise ValueError("'text' goes with 'label'")
        if self.texts is not None and (self.labels is None or self.label is not None):
            raise ValueError("'texts' go with 'labels'")
        if self.texts is not None and len(self.texts) != len(self.labels or []):
            raise ValueError("as many 'labels' as 'texts'")
        if self.weight is not None and self.text is None:
            raise ValueError("'weight' goes with 'text' ('weights' with 'texts')")
        if self.weights is not None and len(self.weights) != len(self.texts or []):
            raise ValueError("as many 'weights' as 'texts'")
        return self


class Learned(BaseModel):
    model: str
    accepted: int
    sequence: int
    pending: int


class Validation(BaseModel):
    accuracy: float
    documents: int
    sequence: int  # the journal's last sequence the scored model held


class LearnState(BaseModel):
    learned: int
    pending: int
    last_sequence: int
    checkpointed_sequence: int
    # examples whose batch made the weights not finite: not learned (the server's log says
    # which requests), and learning stopped for good (503 to /learn; the log says why)
    refused: int = 0
    stopped: bool = False
    validation: Validation | None = None  # with --learn-validation, at each checkpoint


def start_learning(
    app: FastAPI, registry: ModelRegistry, settings: LearnSettings | None
) -> dict[str, OnlineModel]:
    """Replay each model's journal and start its writer (none without ``settings``); the
    app's shutdown writes what each learned."""
    online: dict[str, OnlineModel] = {}
    if settings is not None:
        _refuse_one_file_twice(registry)
        try:
            for name in registry.names:
                online[name] = OnlineModel(registry, name, settings)
        except BaseException:  # one could not start: the ones started stop
            for learner in online.values():
                learner.close()
            raise

    def close() -> None:
        for learner in online.values():
            learner.close()

    app.router.on_shutdown.append(close)
    return online


def _refuse_one_file_twice(registry: ModelRegistry) -> None:
    """Two names for one model file (``a=m.npz b=./m.npz``, a link): both would learn into
    one file and one journal, numbering requests twice, and each checkpoint would drop what
    the other learned."""
    seen: dict = {}
    for name in registry.names:
        path = registry.paths[name]
        st = os.stat(path)
        for key in (os.path.realpath(path), (st.st_dev, st.st_ino)):
            if key in seen:
                raise NBSVMError(
                    f"models {seen[key]!r} and {name!r} are one file ({path}): with --learn "
                    "each model learns into its own file; serve it under one name"
                )
            seen[key] = name


def add_learn_routes(
    app: FastAPI,
    online: dict[str, OnlineModel],
    served: Callable[[str | None], Any],
    errors: dict,
    max_batch: int,
    check_texts: Callable[[list[str], int], None],
) -> None:
    """``POST /models/{name}/learn`` (403 unless the server learns)."""

    def allowed(name: str, authorization: str | None = Header(None)) -> OnlineModel:
        # a dependency: solved before the body is validated, so that a client without the
        # token learns nothing of what the server would make of its body
        served(name)
        learner = online.get(name)
        if learner is None:
            raise HTTPException(403, "learning over HTTP is off: start nbsvm serve with --learn")
        if not learner.settings.authorized(authorization):
            raise HTTPException(401, "learning needs Authorization: Bearer <the --learn token>")
        return learner

    @app.post(
        "/models/{name}/learn",
        response_model=Learned,
        status_code=202,
        responses=errors,
    )
    def learn(name: str, req: LearnRequest, learner: OnlineModel = Depends(allowed)):
        """Queue labelled texts for the model to learn; 202 once they are in the journal
        (a crash loses nothing acknowledged). Needs ``Authorization: Bearer TOKEN``; off
        (403) unless the server was started with ``--learn``."""
        texts = [req.text] if req.text is not None else req.texts or []
        labels = [req.label] if req.text is not None else list(req.labels or [])
        weights = [req.weight] if req.weight is not None else req.weights
        check_texts(texts, max_batch)
        try:
            return learner.submit(texts, labels, weights)
        except (OverflowError, RuntimeError) as e:  # a full queue; a writer that failed
            raise HTTPException(503, str(e), headers={"Retry-After": "1"}) from None
