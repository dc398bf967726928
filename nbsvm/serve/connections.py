"""Connections of ``nbsvm serve``: how many it holds, and how long a client may take.

uvicorn bounds a keep-alive connection idle between requests (``timeout_keep_alive``) and
the size of a request's headers (h11's ``max_incomplete_event_size``, 16 KiB), but not a
connection that never sends a whole request: one that opens and stays silent, or sends half
a request line, holds a file descriptor for ever. 19,995 of them from one client used up the
process's descriptors, ``accept()`` failed with a traceback each time and ``/health`` went
unanswered. uvicorn's ``limit_concurrency`` does not help: it answers 503 to *requests*,
and these never make one.

:class:`GuardedH11Protocol` is uvicorn's h11 protocol with two bounds of its own:

- a read deadline: the whole request (headers and body) must arrive within
  ``timeout_read`` seconds of the connection's opening or of its previous answer. Past it,
  a partial request is answered 408 and closed, a silent connection is just closed; a
  client that reads nothing of an answer for as long is dropped with it (reading slowly
  is progress: the clock starts again);
- a connection limit: at ``max_connections``, a new connection closes the one that has
  waited longest on its client (silent, sending a request, or idle between requests; as
  nginx drains its reusable connections), so a flood of idle sockets cannot lock anyone
  out; when every connection is busy with a request the newcomer gets a 503 and is closed.
  Neither writes more than one log line a minute; nor do malformed requests
  (:class:`ThrottledMalformed`).

:func:`descriptor_room` keeps the limit (with the connections ``accept()`` may take in one
go) under ``RLIMIT_NOFILE``, raising the soft limit toward the hard one when it is short,
so the server never runs out of descriptors; :func:`quiet_loop_errors` turns the event
loop's "out of descriptors" tracebacks into a line a minute should it happen all the same.
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import json
import logging
import math
import socket
import struct
import time
import weakref
from collections.abc import Callable

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol

from nbsvm.errors import NBSVMError

BACKLOG = 2048  # uvicorn's: connections the kernel queues, and accept() takes per turn
MIN_BACKLOG = 32  # where the open-file limit is short
RESERVED_FDS = 64  # the process's own descriptors (Python, logs, model files, pipes)
WAITING = (h11.IDLE, h11.SEND_BODY)  # the client's side while the server waits on it
WRITE_CHECK = 1.0  # seconds between looks at an answer the client reads slower than sent
try:  # the bytes in a socket's send queue (Linux, macOS); elsewhere the buffer alone
    import fcntl
    import termios

    _OUTQ: int | None = termios.TIOCOUTQ
except (ImportError, AttributeError):  # pragma: no cover (Windows)
    _OUTQ = None
RESOURCE_ERRNOS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)

logger = logging.getLogger("uvicorn.error")


def _raw_answer(status: int, reason: str, detail: str, headers: str = "") -> bytes:
    """A whole HTTP/1.1 answer that closes the connection, written without h11: for a
    connection that is dropped right after (refused, too slow to send its request, or
    still sending it when the server stops). ``headers``: more, each ending in CRLF."""
    body = json.dumps({"detail": detail}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n{headers}connection: close\r\n\r\n"
    ).encode() + body


TOO_MANY = _raw_answer(
    503, "Service Unavailable", "too many connections, all busy with requests; try again"
)
TOO_SLOW = _raw_answer(408, "Request Timeout", "the request did not arrive in time")
STOPPING = _raw_answer(
    503, "Service Unavailable", "the server is stopping; send the request again",
    headers="retry-after: 1\r\n",
)  # fmt: skip


class Throttled:
    """One warning per ``seconds`` for a recurring event, saying how many were not logged:
    a flood of refused connections must not become a flood of log lines."""

    def __init__(self, seconds: float = 60.0):
        self.seconds = seconds
        self.last = -math.inf
        self.unsaid = 0

    def warn(self, message: str) -> None:
        now = time.monotonic()
        if now - self.last < self.seconds:
            self.unsaid += 1
            return
        more = f" ({self.unsaid:,} more since the last such line)" if self.unsaid else ""
        self.last, self.unsaid = now, 0
        logger.warning(message + more)


_refusals = Throttled()
_out_of_descriptors = Throttled()
_slow_readers = Throttled()


class ThrottledMalformed(logging.Filter):
    """uvicorn logs "Invalid HTTP request received." for every malformed request (bytes that
    are not HTTP, headers over 16 KiB): one such line a minute, saying how many were not."""

    MESSAGE = "Invalid HTTP request received."

    def __init__(self, seconds: float = 60.0):
        super().__init__()
        self.seconds = seconds
        self.last = -math.inf
        self.unsaid = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != self.MESSAGE:
            return True
        now = time.monotonic()
        if now - self.last < self.seconds:
            self.unsaid += 1
            return False
        if self.unsaid:
            record.msg = f"{self.MESSAGE} ({self.unsaid:,} more since the last such line)"
        self.last, self.unsaid = now, 0
        return True


# per server (uvicorn's ServerState): the connections waiting on their clients, longest first
_waiting_by_server: weakref.WeakKeyDictionary[object, dict] = weakref.WeakKeyDictionary()
# per server: the connections whose answers wait on a client reading slower than sent
_paused_by_server: weakref.WeakKeyDictionary[object, set] = weakref.WeakKeyDictionary()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a read deadline and a connection limit (the module's
    docstring says why); the settings come from :class:`ServeConfig`."""

    def __init__(self, config, server_state, app_state, _loop=None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.max_connections = getattr(config, "max_connections", None)
        self.timeout_read = getattr(config, "timeout_read", None)
        self.max_unsent = getattr(config, "max_unsent_bytes", None)
        # the connections whose answers wait on a slow reader (their buffers: the budget)
        self.paused = _paused_by_server.setdefault(server_state, set())
        # insertion-ordered: the first is the one waiting longest (found in O(1) at the limit)
        self.waiting_list = _waiting_by_server.setdefault(server_state, {})
        self.read_deadline: asyncio.TimerHandle | None = None
        self.write_deadline: asyncio.TimerHandle | None = None
        self.write_paused = False  # the client reads slower than the server sends
        self.write_stalled = False  # ... and read nothing for WRITE_CHECK seconds
        self.unsent, self.progress_at = 0, 0.0
        self.refused = False

    # -- the connection limit -------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if (
            self.max_connections is not None
            and len(self.connections) >= self.max_connections
            and not self._make_room()
        ):
            self.refused = True
            self.transport = transport
            transport.write(TOO_MANY)
            transport.close()
            _refusals.warn(
                f"{self.max_connections:,} connections, all busy with requests: "
                "refusing new ones with 503 (--max-connections)"
            )
            return
        super().connection_made(transport)
        _no_delay(transport)
        self._start_waiting()

    def waiting(self) -> bool:
        """Whether the server waits on this client (nothing sent, a request not whole yet,
        idle after an answer, or not reading an answer): closing it loses no work of the
        server's."""
        return not self.transport.is_closing() and (
            self.write_stalled or self.conn.their_state in WAITING
        )

    def _make_room(self) -> bool:
        """Close the connection that has waited longest on its client; False if every one
        is busy with a request."""
        while self.waiting_list:
            oldest = next(iter(self.waiting_list))
            self.waiting_list.pop(oldest)
            if oldest.waiting():
                self.connections.discard(oldest)  # counted out now, not when the loop runs
                oldest._drop()
                return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self._stop_write_deadline()
        self.paused.discard(self)
        if self.refused:  # never started: nothing of uvicorn's to undo
            return
        super().connection_lost(exc)

    # -- the read deadline ----------------------------------------------------------------
    def _start_waiting(self) -> None:
        """The server waits for the next request from now: last in the waiting order, and
        the clock started."""
        self._stop_waiting()
        self.waiting_list[self] = None
        if self.timeout_read is not None:
            self.read_deadline = self.loop.call_later(self.timeout_read, self._too_slow)

    def _stop_waiting(self) -> None:
        self.waiting_list.pop(self, None)
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state not in WAITING:  # the request is whole (or refused)
            self._stop_waiting()

    def eof_received(self) -> bool | None:  # type: ignore[override]
        """The client closed its sending side (``shutdown(SHUT_WR)``, ``nc -N``, some
        HTTP/1.0 clients) after a whole request: the connection stays open for the answer
        and closes after it (uvicorn closed it at once, and an answer computed in the
        thread pool, an explanation, went nowhere). Any other EOF closes it."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and self.conn.their_state is h11.DONE:
            cycle.keep_alive = False
            return True
        return None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # the next request (uvicorn's keep-alive timeout closes the connection first if
        # it stays silent); one pipelined behind the last may be whole already
        if not self.transport.is_closing() and self.conn.their_state in WAITING:
            self._start_waiting()

    def _too_slow(self) -> None:
        """The deadline passed: a partial request gets 408, a silent connection is closed."""
        self.read_deadline = None
        if self.write_paused and not self.write_stalled:  # still sending an answer it reads:
            self._start_waiting()  # the wait for its next request starts again
            return
        if not self.waiting():
            return
        partial = self.conn.their_state is h11.SEND_BODY or bool(self.conn.trailing_data[0])
        started = (
            self.cycle is not None
            and not self.cycle.response_complete
            and self.cycle.response_started
        )
        if partial and not started:
            self.transport.write(TOO_SLOW)
        self._drop()

    def shutdown(self) -> None:
        """The server stops: a request whose body is still arriving is answered 503 and
        closed now (no work of the server's is lost; the client may send it again). uvicorn
        waited ``timeout_graceful_shutdown`` (10 s) on such a client and then cancelled its
        request with a traceback in the log; answers under way finish as uvicorn has it."""
        cycle = self.cycle
        if (
            cycle is not None
            and not cycle.response_started
            and not cycle.response_complete
            and self.conn.their_state is h11.SEND_BODY
        ):
            self.transport.write(STOPPING)
            self._drop()
            return
        super().shutdown()

    # -- the write deadline ---------------------------------------------------------------
    def pause_writing(self) -> None:
        """The client reads slower than the server sends (its socket and ours are full).
        Checked every :data:`WRITE_CHECK` seconds: a client that read nothing since the
        last check is stalled (waited on: the limit may close it for a newcomer), and one
        that read nothing for ``timeout_read`` seconds is dropped with its answer; any
        progress starts the clock again, so a slow reader of a large answer gets it whole.
        Clients that sent requests and never read the answers held every connection (busy:
        never evicted), and their answers' memory, for ever."""
        super().pause_writing()
        self.write_paused = True
        self.unsent, self.progress_at = self._unsent(), self.loop.time()
        if self.write_deadline is None:
            self.write_deadline = self.loop.call_later(WRITE_CHECK, self._check_writing)
        self.paused.add(self)
        self._keep_answers_in_budget()

    def _keep_answers_in_budget(self) -> None:
        """Drop the connections holding the most unsent answer bytes until those of every
        slow reader of this worker fit ``max_unsent``: a client reading 64 bytes every half
        second is progress, never timed out, and 24 such connections held 105 MB of
        /explain answers (1,000 would hold gigabytes)."""
        if self.max_unsent is None:
            return
        held = {c: c._unsent() for c in self.paused}  # ours and the kernel's send queue
        total = sum(held.values())
        # (one slow reader alone keeps its answer, however large: no other waits on it)
        while total > self.max_unsent and len(held) > 1:
            biggest = max(held, key=held.__getitem__)
            total -= held.pop(biggest)
            self.paused.discard(biggest)
            biggest.write_stalled = True  # dropped with its answer, not sent out first
            biggest._drop()
            _slow_readers.warn(
                "answers waiting on slow readers over the budget (--max-bodies-mb): "
                "dropping the connections holding the most"
            )

    def resume_writing(self) -> None:
        super().resume_writing()
        self.paused.discard(self)
        self.write_paused = self.write_stalled = False
        self._stop_write_deadline()
        if self.conn.their_state not in WAITING:
            self.waiting_list.pop(self, None)

    def _stop_write_deadline(self) -> None:
        if self.write_deadline is not None:
            self.write_deadline.cancel()
            self.write_deadline = None

    def _unsent(self) -> int:
        """Bytes of answers not yet taken by the client: the transport's buffer and the
        kernel's send queue (the larger part on a fast link: the buffer alone stays still
        for seconds while the kernel drains its megabytes to a slow reader)."""
        queued = 0
        sock = self.transport.get_extra_info("socket")
        if sock is not None and _OUTQ is not None:
            try:
                queued = struct.unpack("i", fcntl.ioctl(sock.fileno(), _OUTQ, b"\0" * 4))[0]
            except OSError:
                queued = 0
        return self.transport.get_write_buffer_size() + queued

    def _check_writing(self) -> None:
        self.write_deadline = None
        if not self.write_paused or self.transport.is_closing():
            return
        unsent, now = self._unsent(), self.loop.time()
        if unsent < self.unsent:  # the client read some (the answer is not added to meanwhile)
            self.unsent, self.progress_at, self.write_stalled = unsent, now, False
            if self.conn.their_state not in WAITING:
                self.waiting_list.pop(self, None)
        else:
            self.write_stalled = True
            self.waiting_list[self] = None
            if self.timeout_read is not None and now - self.progress_at >= self.timeout_read:
                self._drop()
                return
        self.write_deadline = self.loop.call_later(WRITE_CHECK, self._check_writing)

    def _drop(self) -> None:
        """Close now; a request being read ends for the application as a disconnect. An
        answer the client does not read is thrown away (``close`` would wait to send it)."""
        self._stop_waiting()
        if self.write_stalled:
            # a reset: closed plainly, the kernel kept the megabytes queued for the client
            # (FIN-WAIT-1) until it read them, however slowly
            sock = self.transport.get_extra_info("socket")
            if sock is not None:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
            self.transport.abort()
        else:
            self.transport.close()


def _no_delay(transport: asyncio.Transport) -> None:
    """Send small answers at once (Nagle off), whatever socket the connection came from."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def quiet_loop_errors(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The event loop's exception handler: ``accept()`` out of descriptors (or memory) is
    one line a minute, not a traceback each time; anything else as asyncio logs it."""
    exc = context.get("exception")
    if isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS:
        _out_of_descriptors.warn(
            f"cannot accept connections: {exc.strerror} (the open-file "
            "limit: ulimit -n; or lower --max-connections)"
        )
        return
    if isinstance(exc, ValueError) and "_start_serving" in repr(context.get("handle")):
        return  # the retries asyncio scheduled after the above, once the socket closed
    loop.default_exception_handler(context)


class ServeConfig(Config):
    """uvicorn's Config with :class:`GuardedH11Protocol` and its two settings, and loops
    that log with :func:`quiet_loop_errors`. Picklable: worker processes get a copy."""

    def __init__(
        self,
        app,
        *,
        max_connections: int | None,
        timeout_read: float | None,
        max_unsent_bytes: int | None = None,
        **kwargs,
    ):
        super().__init__(app, http=GuardedH11Protocol, **kwargs)
        self.max_connections = max_connections
        self.timeout_read = timeout_read
        self.max_unsent_bytes = max_unsent_bytes

    def configure_logging(self) -> None:
        super().configure_logging()  # in the main process and in every worker
        error_log = logging.getLogger("uvicorn.error")
        if not any(isinstance(f, ThrottledMalformed) for f in error_log.filters):
            error_log.addFilter(ThrottledMalformed())

    def get_loop_factory(self) -> Callable[[], asyncio.AbstractEventLoop]:
        # older uvicorn versions have no loop factories: their own loop, asyncio's handler
        base = getattr(super(), "get_loop_factory", lambda: None)() or asyncio.new_event_loop

        def new_loop() -> asyncio.AbstractEventLoop:
            loop = base()
            loop.set_exception_handler(quiet_loop_errors)
            return loop

        return new_loop


def descriptor_room(max_connections: int) -> tuple[int, int, str | None]:
    """``(max_connections, backlog, note)`` that the open-file limit holds: the soft
    ``RLIMIT_NOFILE`` is raised (toward the hard one) for ``max_connections``, twice a
    ``backlog`` of :data:`BACKLOG` (asyncio's ``accept()`` takes up to that many connections
    in one turn of the loop before any is refused, while as many closed ones may wait for
    the loop to release them) and :data:`RESERVED_FDS`. Where the hard limit is too low,
    the backlog shrinks first (to :data:`MIN_BACKLOG`), then the connection limit; ``note``
    says what changed (None: nothing)."""
    try:
        import resource
    except ImportError:  # not POSIX: nothing to check
        return max_connections, BACKLOG, None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max_connections + 2 * BACKLOG + RESERVED_FDS
    if soft == resource.RLIM_INFINITY or soft >= need:
        return max_connections, BACKLOG, None
    notes = []
    target = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            notes.append(f"raised the open-file limit from {soft:,} to {target:,}")
            soft = target
        except (ValueError, OSError):
            pass
    room = soft - RESERVED_FDS
    backlog = max(MIN_BACKLOG, min(BACKLOG, (room - max_connections) // 2))
    if room - 2 * backlog < max_connections:
        if room - 2 * backlog < 1:
            raise NBSVMError(
                f"the open-file limit ({soft:,}; ulimit -n) leaves no room for "
                f"connections: {2 * MIN_BACKLOG + RESERVED_FDS:,} descriptors are "
                "needed besides them"
            )
        notes.append(
            f"--max-connections lowered from {max_connections:,} to "
            f"{room - 2 * backlog:,}: the open-file limit is {soft:,} (ulimit -Hn)"
        )
        max_connections = room - 2 * backlog
    return max_connections, backlog, "; ".join(notes) or None


def bind_socket(host: str, port: int) -> socket.socket:
    """The listening address, bound before anything says it serves: a busy port is an
    :class:`NBSVMError` of one line (uvicorn would log it after the start message)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on connections of a socket that says
    # so, and without it each answer's second write waits for the client's delayed ACK
    # (40 ms a request)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise NBSVMError(
                f"port {port} on {host} is already in use (another server?); "
                "choose another with --port"
            ) from None
        raise NBSVMError(f"cannot listen on {host} port {port}: {e.strerror or e}") from None
    sock.set_inheritable(True)  # the worker processes serve it too
    return sock


def serve_on(sock: socket.socket, config: ServeConfig) -> None:
    """``uvicorn.run`` on a socket bound already: one process, or ``config.workers``
    processes sharing it. Raises :class:`NBSVMError` if the server did not start."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            # older uvicorn versions take the function each worker runs; newer ones know it
            extra = (
                {"target": server.run}
                if "target" in inspect.signature(Multiprocess).parameters
                else {}
            )
            Multiprocess(config, sockets=[sock], **extra).run()
        else:
            server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl+C it handled
        pass
    if config.workers == 1 and not server.started:
        raise NBSVMError("the server did not start (see the messages above)")
