"""ASGI middleware of the server: a bound on request bodies, and request metrics.

Both are plain ASGI (not framework hooks) so that they also see what the framework never
routes: an oversized body is refused with 413 before the application reads it, and a 404 of
an unknown path is counted like any other answer.
"""
from __future__ import annotations

import json
import time

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
BODY_KEY = "nbsvm.body"         # the scope key under which BodyLimit leaves the body read


def json_error(body: bytes) -> str:
    """Why ``body`` is not JSON, in words (FastAPI only says it could not parse it)."""
    try:
        json.loads(body)
    except UnicodeDecodeError as e:
        return f"the body is not UTF-8 text ({e.reason} at byte {e.start})"
    except RecursionError:
        return "the body's JSON is nested too deeply"
    except ValueError as e:
        return f"the body is not JSON: {e}"
    return "the body could not be read as JSON"


async def _send_json(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413: at once when ``Content-Length``
    says so, else as soon as the streamed body passes the limit (the body is read up to the
    limit and then handed to the application: memory per request stays bounded)."""

    def __init__(self, app, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        too_big = f"request body over {self.max_bytes:,} bytes"
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    return await _send_json(send, 400, "Content-Length is not a number")
                if declared > self.max_bytes:
                    return await _send_json(send, 413, too_big)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return await _send_json(send, 413, too_big)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        scope = dict(scope, **{BODY_KEY: body})   # for the message when it is not JSON
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()      # after the body: wait for a disconnect

        return await self.app(scope, replay, send)


class JSONBody:
    """Read every request body as JSON, whatever its ``Content-Type`` says: the API takes
    nothing else, and ``curl -d`` sends ``application/x-www-form-urlencoded`` by default. A
    body that is not JSON still gets FastAPI's 422."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope.get("method") in ("POST", "PUT", "PATCH"):
            headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"content-type"]
            scope = dict(scope, headers=headers + [(b"content-type", b"application/json")])
        return await self.app(scope, receive, send)


class Metrics:
    """Requests by route and status, their latency and the texts scored, in a Prometheus
    registry of their own (``GET /metrics`` renders it; several apps in one process never
    share counters). Paths are labelled by route template (``/models/{name}/reload``),
    unknown ones as ``other``: labels stay few whatever clients send."""

    def __init__(self, routes: list[str]):
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.routes = routes
        self.registry = CollectorRegistry()
        self.requests = Counter("nbsvm_requests", "HTTP requests answered",
                                ["method", "path", "status"], registry=self.registry)
        self.latency = Histogram("nbsvm_request_seconds", "Time to answer a request",
                                 ["path"], registry=self.registry,
                                 buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,
                                          0.2, 0.5, 1.0, 2.0, 5.0))
        self.documents = Counter("nbsvm_documents_scored", "Texts scored (predict and explain)",
                                 ["model"], registry=self.registry)

    def route_of(self, path: str) -> str:
        parts = path.rstrip("/").split("/")
        for route in self.routes:
            pattern = route.rstrip("/").split("/")
            if len(pattern) == len(parts) and all(
                    p == q or (p.startswith("{") and p.endswith("}")) for p, q in zip(pattern, parts)):
                return route
        return "other"

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class MetricsMiddleware:
    """Times every request and counts it in :class:`Metrics` by method, route and status."""

    def __init__(self, app, metrics: Metrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status = 500                    # what the server's error handler answers

        async def sending(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            m = self.metrics
            path = m.route_of(scope.get("path", ""))
            method = scope.get("method", "")
            method = method if method in METHODS else "other"
            m.requests.labels(method, path, str(status)).inc()
            m.latency.labels(path).observe(time.perf_counter() - start)
