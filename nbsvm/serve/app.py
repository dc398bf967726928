"""The HTTP application of ``nbsvm serve``: JSON in and out, an OpenAPI schema at
``/openapi.json``, a page at ``/``.

FastAPI (on Starlette, served by uvicorn) validates requests against typed schemas, answers
malformed JSON and wrong types with 422 and a message, writes the OpenAPI schema from the
same types, and runs plain ``def`` endpoints in a thread pool: scoring never blocks the
event loop, and the numba kernels release the GIL. What FastAPI does not bound is bounded
here: body size (:class:`~nbsvm.serve.limits.BodyLimit`), batch size and text length (413).
A user's mistake is a 4xx; a 500 would be a bug of ours.

Other sites' pages are kept out (:class:`~nbsvm.serve.limits.RequestGuard`): only the hosts
served (localhost by default) are answered, POSTs need a JSON content type and no foreign
``Origin``, reloading over HTTP is off unless ``allow_reload``, and no answer shows a file's
path. Every answer and error is declared in the OpenAPI schema (schemathesis checks it).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import TYPE_CHECKING, cast

import anyio
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from nbsvm._version import __version__
from nbsvm.errors import NBSVMError, shown
from nbsvm.io.decoding import valid_unicode
from nbsvm.serve.bodies import (
    JSON_ERROR_KEY,
    batch_limit,
    bounded,
    bounded_bodies,
    error_list,
    field_names,
)
from nbsvm.serve.learn_routes import LearnState, add_learn_routes, start_learning
from nbsvm.serve.limits import (
    LOCAL_HOSTS,
    AllowedHosts,
    BodyLimit,
    Metrics,
    MetricsMiddleware,
    RequestGuard,
)
from nbsvm.serve.registry import ModelRegistry, ReloadUnderWay, reload_failure
from nbsvm.serve.scoring import describe, explanation, predictions

if TYPE_CHECKING:
    from starlette.routing import Route

    from nbsvm.serve.learning import LearnSettings

MAX_BODY_BYTES = 8 << 20  # a batch of 1,000 long reviews fits
MAX_BATCH = 1000
MAX_TEXT_CHARS = 100_000  # about 40 IMDB reviews' worth in one text
# /explain answers every n-gram's contribution and the shaded HTML: about 200 bytes per
# character of English (20,000 characters of 'a ': 4.1 MB), up to 450 where every
# character is a word or a token of its own (Chinese, punctuation: 9 MB), and costs about
# 50 times predict's CPU per character. 20,000 characters is longer than any IMDB review.
MAX_EXPLAIN_CHARS = 20_000
INLINE_CHARS = 20_000  # requests of less work (characters) are scored on the event loop
#: the work of one class's entries in the answer to one text (the dict of probabilities,
#: made and encoded), in characters scored: 3.4 us against 0.04 us a character. A batch of
#: short texts for a model of many classes is little text and much answer: 1,000 one-letter
#: texts for 200 classes held the event loop 0.7 s (an 18.5 MB answer)
CLASS_ENTRY_CHARS = 100


class PredictRequest(BaseModel):
    """One ``text`` or a batch of ``texts``."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    texts: list[str] | None = None
    model: str | None = Field(None, description="A served model's name (default: the first)")
    # strict: JSON true is no number, "3" no count (pydantic would take both; the schema not)
    top_k: int | None = Field(
        None,
        ge=1,
        le=10_000,
        strict=True,
        description="Also list the k best classes with their probabilities",
    )
    threshold: float | None = Field(
        None,
        strict=True,
        description="Also list the classes whose probability "
        "(score, without probabilities) is at least this; for a "
        "multi-label model it also decides the labels",
    )

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data):
        return bounded(data, field_names(cls), ("texts",))

    @model_validator(mode="after")
    def _one_of(self):
        if (self.text is None) == (self.texts is None):
            raise ValueError("give either 'text' (one document) or 'texts' (a batch)")
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise ValueError("threshold must be a finite number")
        return self  # lone surrogates are replaced where the texts are scored


class ExplainRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    text: str
    model: str | None = None
    class_: str | None = Field(
        None, alias="class", description="The class to explain (default: the predicted one)"
    )

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data):
        return bounded(data, field_names(cls), ())

    @model_validator(mode="after")
    def _unicode(self):
        self.class_ = None if self.class_ is None else valid_unicode(self.class_)
        return self  # the text's lone surrogates are replaced where it is explained


class Prediction(BaseModel):
    label: str | list[str]
    score: float
    probability: float | None = None
    probabilities: dict[str, float] | None = None
    scores: dict[str, float] | None = None
    top: list[dict[str, str | float]] | None = None


class PredictResponse(BaseModel):
    model: str
    version: int
    predictions: list[Prediction]


class Contribution(BaseModel):
    ngram: str
    kind: str
    bucket: int
    contribution: float
    note: str


class ExplainResponse(BaseModel):
    """``constant + sum(contribution) == score``; ``html``: the text shaded."""

    model_config = ConfigDict(populate_by_name=True)
    class_: str = Field(alias="class")
    score: float
    constant: float
    ngrams: list[Contribution]
    prediction: Prediction
    html: str
    model: str
    version: int


class ModelInfo(BaseModel):
    """A served model, by name (its file's path is not shown)."""

    name: str
    version: int
    loaded_at: float
    classes: list[str]
    multilabel: bool
    probabilities: bool
    ngrams: int
    char_ngrams: int
    n_bits: int
    loss: str | None = None


class Strong(BaseModel):
    ngrams: str
    contribution: float


class ModelDetail(ModelInfo):
    strongest: dict[str, list[Strong]]
    learning: LearnState | None = None  # with nbsvm serve --learn


class Health(BaseModel):
    status: str
    models: dict[str, int]
    # a changed file --watch could not load (the loaded model still serves): why
    not_reloaded: dict[str, str] | None = None


class Reloaded(BaseModel):
    model: str
    version: int
    seconds: float


class Issue(BaseModel):
    loc: list[str]
    msg: str
    type: str


class ErrorResponse(BaseModel):
    """Every 4xx: what is wrong, in words, or (a request of the wrong shape) where."""

    detail: str | list[Issue]


def _errors(**statuses: str) -> dict:
    """OpenAPI ``responses`` for error statuses: ``_errors(e404="no such model")``."""
    return {int(k[1:]): {"model": ErrorResponse, "description": v} for k, v in statuses.items()}


HOST_ERROR = _errors(e400="Host not served here (--allowed-host), or a malformed request")
POST_ERRORS = _errors(
    e403="a cross-origin request (Origin of another host)",
    e404="no model of that name",
    e413="body, batch or text too large",
    e415="the body is not sent as application/json",
    e422="the body is not a valid request (what and where)",
)
EXPLAIN_ERRORS = {
    **POST_ERRORS,
    **_errors(e503="too many explanations waiting (Retry-After)"),
}
LEARN_ERRORS = _errors(
    e401="no or another token than --learn's (Authorization: Bearer TOKEN)",
    e403="learning over HTTP is off (--learn), or a cross-origin request",
    e422="the body is not a valid request, or a label the model does not know",
    e503="too many examples waiting to be learned (Retry-After), or learning stopped",
)


async def _off_the_loop_if_large(chars: int, fn, *args):
    """``fn(*args)``: in the thread pool when its work (``chars``: the characters scored,
    or their equivalent) is large enough that it would hold the event loop (the kernels
    release the GIL), inline otherwise: a review scores in about 0.05 ms, less than the hop
    to a thread and back costs under load."""
    if chars > INLINE_CHARS:
        return await run_in_threadpool(fn, *args)
    return fn(*args)


#: rows of a large answer encoded at a time (:func:`_json_in_pieces`)
ROWS_A_PIECE = 64
#: class entries (texts times classes) from which an answer is encoded in pieces: about 2
#: us each, 40 ms of the GIL held at once; smaller answers keep their Content-Length
PIECES_FROM_ENTRIES = 20_000


def _json_in_pieces(head: dict, key: str, rows: list) -> Iterator[bytes]:
    """``{**head, key: rows}`` as JSONResponse encodes it, in pieces of
    :data:`ROWS_A_PIECE` rows: the encoder holds the GIL for the whole of what it is given
    (0.4 s for an answer of 16 MB, during which the event loop, in another thread, waited
    too); between two pieces the loop runs."""

    def encoded(value) -> str:  # as starlette's JSONResponse renders
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))

    yield (encoded(head)[:-1] + ("," if head else "") + encoded(key) + ":[").encode()
    for start in range(0, len(rows), ROWS_A_PIECE):
        piece = encoded(rows[start : start + ROWS_A_PIECE])[1:-1]
        yield (("," if start else "") + piece).encode()
    yield b"]}"


def _predictions(model, texts: list[str], top_k, threshold) -> list:
    """:func:`predictions` of the texts with lone surrogates as U+FFFD (as a JSON lines file
    and the Python API read them), replaced after the size limits are checked and, for long
    texts, off the event loop: replacing 1.4 million of them takes half a second."""
    return predictions(model, [valid_unicode(t) for t in texts], top_k, threshold)


def _check_texts(texts: list[str], max_batch: int, max_chars: int) -> None:
    if len(texts) > max_batch:
        raise HTTPException(413, f"{len(texts):,} texts in one request; at most {max_batch:,}")
    for i, t in enumerate(texts):
        if len(t) > max_chars:
            raise HTTPException(413, f"text {i} has {len(t):,} characters; at most {max_chars:,}")


def create_app(
    models: dict[str, str] | ModelRegistry,
    *,
    watch: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_held_bytes: int | None = None,
    max_batch: int = MAX_BATCH,
    max_text_chars: int = MAX_TEXT_CHARS,
    max_explain_chars: int = MAX_EXPLAIN_CHARS,
    allowed_hosts: Iterable[str] = LOCAL_HOSTS,
    allow_reload: bool = False,
    learn: LearnSettings | None = None,
    metrics_dir: str | None = None,
) -> FastAPI:
    """The ASGI application serving ``models`` (``{name: path}``, loaded and checked now);
    ``app.state.registry`` holds them, ``app.state.metrics`` counts requests.
    ``allowed_hosts``: the ``Host`` names answered (:class:`~nbsvm.serve.limits.AllowedHosts`);
    ``max_held_bytes``: the request bodies held at once (default 32 bodies of the
    largest size; more: 503, :class:`~nbsvm.serve.limits.BodyLimit`);
    ``allow_reload``: whether ``POST /models/NAME/reload`` works (403 otherwise);
    ``learn``: whether and how ``POST /models/NAME/learn`` works (:mod:`.learning`; 403
    without; not with ``watch`` or ``allow_reload``, as ``nbsvm serve --learn`` refuses
    them: a reload would put back a checkpoint over what was learned); ``metrics_dir``:
    the folder the workers of one server share their metrics in
    (:class:`~nbsvm.serve.limits.Metrics`)."""
    if learn is not None and (watch or allow_reload or getattr(models, "watch", False)):
        raise NBSVMError(
            "learn goes without watch and allow_reload: a reload would put back a "
            "checkpoint over what was learned"
        )
    registry = models if isinstance(models, ModelRegistry) else ModelRegistry(models, watch=watch)
    app = FastAPI(
        title="nbsvm",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        responses=HOST_ERROR,
        description="Hashed NBSVM text classification: predict, explain, reload. "
        "POST bodies are JSON (Content-Type: application/json).",
        dependencies=[Depends(batch_limit(max_batch))],  # before any body is validated
    )
    bounded_bodies(app, max_batch)  # before any route is added
    app.state.registry = registry
    metrics = app.state.metrics = Metrics([], shared=metrics_dir)
    served = _lookup(registry)
    _add_error_handlers(app)
    online = app.state.online = start_learning(app, registry, learn)
    _add_model_routes(app, registry, served, online)
    _add_scoring_routes(app, served, metrics, max_batch, max_text_chars)
    _add_explain_routes(app, served, metrics, min(max_text_chars, max_explain_chars))
    _add_admin_routes(app, registry, served, metrics, allow_reload)
    add_learn_routes(
        app,
        online,
        served,
        {**POST_ERRORS, **LEARN_ERRORS},
        max_batch,
        lambda texts, most: _check_texts(texts, most, max_text_chars),
    )
    # the routes with methods are starlette Routes (FastAPI's APIRoute among them)
    metrics.routes[:] = [cast("Route", r).path for r in app.routes if hasattr(r, "methods")]
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, max_held_bytes=max_held_bytes)
    app.add_middleware(RequestGuard, hosts=AllowedHosts(allowed_hosts))  # before any read
    app.add_middleware(MetricsMiddleware, metrics=metrics)  # outermost: sees every answer
    return app


def _lookup(registry: ModelRegistry):
    """``served(name)``: the served model of that name (None: the default one), else 404."""

    def served(name: str | None, look: bool = True):
        try:
            return registry.get(name, look=look)
        except KeyError:
            raise HTTPException(
                404, f"no model named {shown(name)}; served: {registry.names}"
            ) from None

    return served


def _add_error_handlers(app: FastAPI) -> None:
    """Errors as JSON: a user's error (bad input, unknown class) and malformed JSON are
    422, saying what is wrong and never echoing the input."""

    @app.exception_handler(NBSVMError)
    async def _user_error(request: Request, exc: NBSVMError):
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        # FastAPI answers a body json.loads rejects (bad UTF-8, nesting too deep) with a bare
        # 400; it is malformed JSON like any other: 422, saying what is wrong
        # (the request kept why: BoundedBodyRequest, without parsing it again)
        if exc.status_code == 400 and JSON_ERROR_KEY in request.scope:
            return JSONResponse({"detail": request.scope[JSON_ERROR_KEY]}, status_code=422)
        return await http_exception_handler(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        # FastAPI's own answer echoes the input, which may hold what JSON cannot say back
        # (NaN, lone surrogates): where and what only
        return JSONResponse({"detail": error_list(exc.errors())}, status_code=422)


def _add_model_routes(app: FastAPI, registry: ModelRegistry, served, online: dict) -> None:
    """The page at ``/``, ``GET /health``, ``/models`` and ``/models/{name}``."""
    page = resources.files("nbsvm.serve").joinpath("page.html").read_text(encoding="utf-8")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index():
        return HTMLResponse(page)

    @app.get("/health", response_model=Health, response_model_exclude_none=True)
    async def health():
        """Liveness: the models served and their versions, and (``not_reloaded``) each
        changed file ``--watch`` could not load, the loaded model still serving."""
        models = {s.name: s.version for s in registry.all()}
        failed = registry.not_reloaded()
        return {"status": "ok", "models": models, **({"not_reloaded": failed} if failed else {})}

    # load balancers ask with HEAD (it had been 405); the headers of GET, no body
    app.add_api_route("/health", health, methods=["HEAD"], include_in_schema=False)

    @app.get("/models", response_model=list[ModelInfo])
    async def list_models():
        """Every served model by name: classes, settings, version (never its file's path)."""
        return [describe(s) for s in registry.all()]

    @app.get(
        "/models/{name}",
        response_model=ModelDetail,
        responses=_errors(e404="no model of that name"),
    )
    async def model_info(name: str):
        """One model, with each class's strongest n-grams."""
        s = served(name)
        detail = dict(describe(s), strongest=s.strongest)
        if name in online:
            detail["learning"] = online[name].state()
        return detail


def _add_scoring_routes(
    app: FastAPI, served, metrics: Metrics, max_batch: int, max_text_chars: int
) -> None:
    """``POST /predict`` and ``/models/{name}/predict``."""

    async def predict_with(name, req: PredictRequest):
        if name is not None and req.model is not None and req.model != name:
            raise HTTPException(  # one was used, the other ignored, without a word
                422,
                f"the path names model {shown(name)} and the body {shown(req.model)}: name one",
            )
        s = served(name if name is not None else req.model)
        texts = [req.text] if req.text is not None else req.texts
        assert texts is not None  # PredictRequest's validator asks for text or texts
        _check_texts(texts, max_batch, max_text_chars)

        entries = len(texts) * len(s.model.class_names_)
        work = sum(map(len, texts)) + entries * CLASS_ENTRY_CHARS

        def answer() -> Response:
            rows = _predictions(s.model, texts, req.top_k, req.threshold)
            # plain dicts of str and float, already the schema's shape: no second
            # validation; a large answer is encoded in pieces, in the thread pool
            head = {"model": s.name, "version": s.version}
            if entries >= PIECES_FROM_ENTRIES:
                pieces = _json_in_pieces(head, "predictions", rows)
                return StreamingResponse(pieces, media_type="application/json")
            return JSONResponse(dict(head, predictions=rows))

        response = await _off_the_loop_if_large(work, answer)
        metrics.documents.labels(s.name).inc(len(texts))
        return response

    @app.post(
        "/predict",
        response_model=PredictResponse,
        response_model_exclude_none=True,
        responses=POST_ERRORS,
    )
    async def predict(req: PredictRequest):
        """Label, score and probabilities of one text or a batch."""
        return await predict_with(None, req)

    @app.post(
        "/models/{name}/predict",
        response_model=PredictResponse,
        response_model_exclude_none=True,
        responses=POST_ERRORS,
    )
    async def predict_model(name: str, req: PredictRequest):
        """:func:`predict` with the model named in the path."""
        return await predict_with(name, req)


#: explanations a worker holds waiting or running (more: 503 with Retry-After)
MAX_EXPLAIN_QUEUE = 64
#: the status of a request whose client left before it was served (nginx's 499)
CLIENT_GONE = 499


def _add_explain_routes(app: FastAPI, served, metrics: Metrics, max_chars: int) -> None:
    """``POST /explain`` and ``/models/{name}/explain`` (texts up to ``max_chars``: see
    :data:`MAX_EXPLAIN_CHARS`)."""

    # one explanation at a time per worker: each holds the GIL for most of its time, and
    # four at once starved the event loop (a /predict beside them waited up to 0.9 s). The
    # queue waits on the event loop, not in the thread pool: a hundred waiting explains
    # held the pool's 40 threads, and a long /predict, a reload or /learn waited 17 s
    one_at_a_time = anyio.Lock()
    queued = [0]  # explanations waiting or running

    def explained(s, req: ExplainRequest) -> JSONResponse:
        found = explanation(s.model, valid_unicode(req.text), req.class_)
        # the schema's shape already: its bytes made here, in the thread, not validated
        # and encoded again on the event loop (megabytes for a long text: every request
        # waited on them)
        return JSONResponse(dict(found, model=s.name, version=s.version))

    async def explain_with(name, req: ExplainRequest, request: Request):
        s = served(name if name is not None else req.model)
        if len(req.text) > max_chars:
            raise HTTPException(
                413,
                f"the text has {len(req.text):,} characters; /explain takes at most "
                f"{max_chars:,} (--max-explain-chars): explain a part of it",
            )
        if queued[0] >= MAX_EXPLAIN_QUEUE:  # each takes up to 0.1 s: a bounded wait
            raise HTTPException(
                503,
                f"{queued[0]} explanations are waiting: try again shortly",
                headers={"Retry-After": "1"},
            )
        queued[0] += 1
        try:
            async with one_at_a_time:
                # a client gone while its request waited is not explained: 300 requests
                # sent and dropped at once held every later /explain for 40 s
                if await request.is_disconnected():
                    return Response(status_code=CLIENT_GONE)
                answer = await run_in_threadpool(explained, s, req)
        finally:
            queued[0] -= 1
        metrics.documents.labels(s.name).inc()
        return answer

    @app.post(
        "/explain",
        response_model=ExplainResponse,
        response_model_exclude_none=True,
        responses=EXPLAIN_ERRORS,
    )
    async def explain(req: ExplainRequest, request: Request):
        """Each n-gram's contribution to a text's score (``constant + sum == score``, as
        ``nbsvm explain --text``), the prediction, and the text shaded as HTML."""
        return await explain_with(None, req, request)

    @app.post(
        "/models/{name}/explain",
        response_model=ExplainResponse,
        response_model_exclude_none=True,
        responses=EXPLAIN_ERRORS,
    )
    async def explain_model(name: str, req: ExplainRequest, request: Request):
        """:func:`explain` with the model named in the path."""
        return await explain_with(name, req, request)


def _add_admin_routes(
    app: FastAPI, registry: ModelRegistry, served, metrics: Metrics, allow_reload: bool
) -> None:
    """``POST /models/{name}/reload`` (403 unless ``allow_reload``) and ``GET /metrics``."""

    @app.post(
        "/models/{name}/reload",
        response_model=Reloaded,
        responses={
            **POST_ERRORS,
            **_errors(
                e403="reloading over HTTP is off (--allow-reload), or a cross-origin request",
                e409="the file on the server does not load; the loaded model still serves",
                e503="another reload of the model is under way (Retry-After)",
            ),
        },
    )
    def reload(name: str):
        """Read the model's file again and swap it in atomically: requests in flight
        finish on the old model. A file that does not load leaves the old one serving (409:
        the server's file, not the request, is at fault).
        Off (403) unless the server was started with ``--allow-reload``."""
        if not allow_reload:
            raise HTTPException(
                403,
                "reloading over HTTP is off: start nbsvm serve with "
                "--allow-reload (or --watch to reload changed files)",
            )
        served(name, look=False)  # 404; not a --watch reload of its own, refusing this one
        start = time.perf_counter()
        try:
            s = registry.reload(name)
        except (NBSVMError, OSError) as e:  # not a model, missing, unreadable, not a file
            raise HTTPException(409, reload_failure(name, registry.paths[name], e)) from None
        except ReloadUnderWay as e:
            raise HTTPException(503, str(e), headers={"Retry-After": "1"}) from None
        return {
            "model": s.name,
            "version": s.version,
            "seconds": round(time.perf_counter() - start, 4),
        }

    @app.get("/metrics", response_class=PlainTextResponse)
    async def metrics_text():
        """Requests, latency histogram and documents scored (Prometheus text format)."""
        body, kind = metrics.render()
        return Response(body, media_type=kind)


def app_from_environment() -> FastAPI:
    """The application a uvicorn worker process builds (``--workers`` > 1): its settings
    come from ``NBSVM_SERVE`` (JSON written by ``nbsvm serve``)."""
    import json
    import os

    config = json.loads(os.environ["NBSVM_SERVE"])
    return create_app(config.pop("models"), **config)
