"""ASGI middleware of the server: a bound on request bodies, the checks that keep other
sites' pages out (Host, Origin, Content-Type), and request metrics.

All are plain ASGI (not framework hooks) so that they also see what the framework never
routes: an oversized body is refused with 413 before the application reads it, a foreign
Host gets 400 on any path, and a 404 of an unknown path is counted like any other answer.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from nbsvm.errors import shown

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


async def _send_json(send, status: int, detail: str, headers: list | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _HttpMiddleware:
    """An ASGI middleware over ``app``: :meth:`http` handles the HTTP requests, anything
    else (the lifespan events) goes straight to ``app``."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        return await self.http(scope, receive, send)

    async def http(self, scope, receive, send):
        raise NotImplementedError


class BodyLimit(_HttpMiddleware):
    """Refuse request bodies over ``max_bytes`` with 413: at once when ``Content-Length``
    says so, else as soon as the streamed body passes the limit (the body is read up to the
    limit and then handed to the application: memory per request stays bounded). The
    bodies held at once, read or being read, are bounded too: past ``max_held_bytes`` a
    request gets 503 with ``Retry-After`` (clients that send most of a body and then wait
    held 8 MB each, up to 8 GB at the default 1,000 connections)."""

    def __init__(self, app, max_bytes: int, max_held_bytes: int | None = None):
        super().__init__(app)
        self.max_bytes = max_bytes
        self.max_held = max_held_bytes if max_held_bytes is not None else 32 * max_bytes
        self.held = 0  # bytes of the bodies of every request in this process

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        size = [0]
        try:
            await self._http(scope, receive, send, size)
        finally:
            self.held -= size[0]

    async def _http(self, scope: Scope, receive: Receive, send: Send, held: list) -> None:
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
            if self.held + len(chunk) > self.max_held:
                return await _send_json(
                    send,
                    503,
                    f"the server holds {self.max_held:,} bytes of request bodies; retry",
                    [(b"retry-after", b"1")],
                )
            self.held += len(chunk)
            held[0] += len(chunk)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for a disconnect

        return await self.app(scope, replay, send)


LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")  # answered to by default
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def host_of(value: str) -> str | None:
    """The host name of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``),
    lowercased, brackets off; None when it is malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, port = value[1:].partition("]")
        if not bracket or (port and not (port[0] == ":" and port[1:].isdigit())):
            return None
        return name or None
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return None
    return name or None


class AllowedHosts:
    """The host names a server answers to: exact names, ``*.example.com`` (any name under
    it), or ``*`` (any). IPv6 addresses with or without brackets."""

    def __init__(self, hosts):
        names = [h.strip().lower() for h in hosts]
        self.any = "*" in names
        self.suffixes = tuple(h[1:] for h in names if h.startswith("*."))
        self.names = {
            h[1:-1] if h.startswith("[") and h.endswith("]") else h
            for h in names
            if not h.startswith("*")
        }

    def __contains__(self, name: str | None) -> bool:
        if name is None:
            return False
        return self.any or name in self.names or name.endswith(self.suffixes)


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _origin_host(origin: str) -> str | None:
    """The host of an ``Origin`` header; None for ``null`` and for what is not a URL."""
    try:
        return urlsplit(origin.strip()).hostname
    except ValueError:
        return None


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def _charset(content_type: str) -> str | None:
    """The ``charset`` parameter of a Content-Type, lower case, or None."""
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"').lower()
    return None


def _has_body(scope) -> bool:
    length = _header(scope, b"content-length")
    return _header(scope, b"transfer-encoding") is not None or (
        length is not None and length.strip() not in ("", "0")
    )


class RequestGuard(_HttpMiddleware):
    """What a browser must not be able to make this server do, checked before anything is
    read (plain ASGI: 404s and bad methods are guarded too):

    - ``Host`` must name this server (:class:`AllowedHosts`), else 400: a page of another
      site whose name was rebound to 127.0.0.1 (DNS rebinding) sends its own name;
    - a POST with an ``Origin`` of another host is refused (403): a page elsewhere may
      send requests without reading the answers;
    - a POST with a body must say ``Content-Type: application/json`` (415): the only types
      a page may send elsewhere without asking first (CORS) are form and text types, and
      ``curl -d`` sends a form type unless told otherwise.

    Starlette's ``TrustedHostMiddleware`` does the first in plain text ("Invalid host
    header"); this answers JSON like every other error here and names the option to use.
    """

    def __init__(self, app, hosts: AllowedHosts):
        super().__init__(app)
        self.hosts = hosts

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self.refusal(scope)
        if refused is not None:
            return await _send_json(send, *refused)
        return await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """``(status, message)`` for a request refused, None for one let through."""
        if _header(scope, b"transfer-encoding") is not None and (
            _header(scope, b"content-length") is not None
        ):  # RFC 9112 6.3: read one way by this server, another by a proxy in front
            return 400, "a request gives Transfer-Encoding and Content-Length: send one"
        host = _header(scope, b"host")
        if host_of(host or "") not in self.hosts:
            return 400, (
                f"Host {shown(host) if host is not None else '(none)'} is not one this "
                "server answers to; start nbsvm serve with --allowed-host NAME for "
                "each name clients use (or '*' for any)"
            )
        if scope.get("method") in SAFE_METHODS:
            return None
        origin = _header(scope, b"origin")
        if origin is not None and _origin_host(origin) not in self.hosts:
            return 403, (
                f"cross-origin request from {shown(origin)} refused: pages of other "
                "sites may not call this server (--allowed-host adds a host)"
            )
        if scope.get("query_string"):
            # nothing here reads one: POST /predict?model=b&top_k=3 had been answered by
            # the default model without the top classes, as if the query were not there
            return 422, (
                "query parameters are not read: give them in the JSON body "
                '(e.g. {"text": ..., "model": ..., "top_k": 3})'
            )
        encoded = _header(scope, b"content-encoding")
        if encoded is not None and encoded.strip().lower() not in ("", "identity"):
            return 415, (
                f"bodies are read as sent: Content-Encoding {shown(encoded)} is not "
                "taken; send the JSON uncompressed"
            )
        kind = _header(scope, b"content-type")
        charset = _charset(kind) if kind is not None else None
        if charset is not None and charset not in ("utf-8", "utf8"):
            return 415, f"JSON bodies are UTF-8 (RFC 8259): charset {shown(charset)} is not taken"
        if (kind is not None and not _is_json(kind)) or (kind is None and _has_body(scope)):
            return 415, (
                "send the body as JSON with the header Content-Type: application/json "
                "(curl: -H 'Content-Type: application/json' -d '{\"text\": ...}'); got "
                + (f"Content-Type {shown(kind)}" if kind is not None else "none")
            )
        return None


class Metrics:
    """Requests by route and status, their latency and the texts scored, in a Prometheus
    registry of their own (``GET /metrics`` renders it; several apps in one process never
    share counters). Paths are labelled by route template (``/models/{name}/reload``),
    unknown ones as ``other``: labels stay few whatever clients send.

    ``shared``: the folder where the worker processes of one server keep their values
    (prometheus_client's multiprocess mode, ``PROMETHEUS_MULTIPROC_DIR`` set before the
    workers start): ``/metrics`` then sums every worker's, where it had shown the one
    worker that answered (counters going up and down from one scrape to the next)."""

    def __init__(self, routes: list[str], shared: str | None = None):
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.routes = routes
        self.shared = shared
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "nbsvm_requests",
            "HTTP requests answered",
            ["method", "path", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "nbsvm_request_seconds",
            "Time to answer a request",
            ["path"],
            registry=self.registry,
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0),
        )
        self.documents = Counter(
            "nbsvm_documents_scored",
            "Texts scored (predict and explain)",
            ["model"],
            registry=self.registry,
        )

    def route_of(self, path: str) -> str:
        parts = path.rstrip("/").split("/")
        for route in self.routes:
            pattern = route.rstrip("/").split("/")
            if len(pattern) == len(parts) and all(
                p == q or (p.startswith("{") and p.endswith("}")) for p, q in zip(pattern, parts)
            ):
                return route
        return "other"

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

        registry = self.registry
        if self.shared is not None:
            from prometheus_client.multiprocess import MultiProcessCollector

            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=self.shared)
        return generate_latest(registry), CONTENT_TYPE_LATEST


#: The status a request is counted under when its client went away before an answer (a
#: read timeout, a disconnect): nginx's "client closed request", not a server error.
CLIENT_GONE = 499


class MetricsMiddleware(_HttpMiddleware):
    """Times every request and counts it in :class:`Metrics` by method, route and status
    (:data:`CLIENT_GONE` when nothing was answered; 500 when the application failed)."""

    def __init__(self, app, metrics: Metrics):
        super().__init__(app)
        self.metrics = metrics

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()
        status = 500  # what the server's error handler answers
        answered = False

        async def sending(message):
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status, answered = message["status"], True
            await send(message)

        try:
            await self.app(scope, receive, sending)
            if not answered:  # the client went away (or timed out) before an answer
                status = CLIENT_GONE
        finally:
            m = self.metrics
            path = m.route_of(scope.get("path", ""))
            method = scope.get("method", "")
            method = method if method in METHODS else "other"
            m.requests.labels(method, path, str(status)).inc()
            m.latency.labels(path).observe(time.perf_counter() - start)
