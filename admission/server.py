"""Serve the webhook over HTTPS with uvicorn: TLS >= 1.2, live certificate reload, worker processes.

**Certificates** rotate (cert-manager, `stockade webhook certs`) while the server runs. The files are
polled (and read at once on SIGHUP); a changed pair is loaded into a *new* ``SSLContext``, which is
checked (the chain parses, the key matches the certificate, the certificate has not expired) and
only then swapped in whole: the listening context's SNI callback hands every new handshake the
current context. A broken pair (half-written, mismatched, empty, expired) is rejected and the old
one keeps serving; each outcome is logged and counted (``stockade_certificate_reloads_total``).
Loading into the live context instead would break TLS: OpenSSL installs the new certificate before
it finds that the key does not match, and every handshake after it fails.

Workers are processes, because regorus holds the GIL. The parent binds the socket once and forks
workers that all accept on it; each worker has its own engine and its own cache, and they keep
their connections and requests even between them (:class:`Share`). SIGTERM or SIGINT
make every worker finish its in-flight requests and stop (uvicorn's graceful shutdown). SIGHUP
reloads the certificate and the config and policies at once (the parent passes it to its workers);
it never stops the server.

**Slow and many clients.** The server is uvicorn with its httptools (llhttp) protocol, kept
because it already gives the keep-alive timeout and flow control on bodies the app has not read
(reading pauses at 64 KiB per connection), and the rest of the stack (Starlette) is ASGI. It
replaced uvicorn's h11 protocol, which parses in Python: the same server answers a request with
about 110 µs less CPU (docs/benchmarks.md). What it lacks, :class:`GuardedProtocol` adds per worker:

- a bound on a request head (request line and headers) still incomplete: past ``MAX_HEAD_BYTES``
  (16 KiB, h11's bound) the client is answered ``400`` and the connection closed; llhttp itself keeps
  no such bound;
- a TLS handshake timeout (asyncio's default is 60 s; uvicorn does not pass one);
- a header timeout: the request line and headers must arrive within ``header_timeout`` seconds of
  the connection, or of the first byte after a response; a connection that sends half a request
  line and stalls is closed (uvicorn closes only idle keep-alive connections);
- a connection bound: up to ``max_connections`` open connections (1,024 by default) are served.
  Past it, room is made by closing a connection that is waiting for a request: an idle kept-alive
  one first (ordinary HTTP: clients reconnect), then one that sent part of its request head and
  stalled, then one silent for half the header timeout since its handshake; so stalled clients
  cannot keep out a client that sends its request promptly. A connection whose request is in
  progress, or silent for less than that (a burst: its request is on its way), is never closed for
  room: when no connection can be, the new one is answered ``503`` with ``Retry-After: 1`` once
  its request head arrives, and closed (the API server's client retries it within its webhook
  timeout). Past twice ``max_connections``, new connections are closed unanswered: that bounds the
  file descriptors and memory a flood can take (about 57 KiB per connection, measured);
- the body timeout is the app's (``admission.body_timeout_seconds``: HTTP 408 and close).

uvicorn's own ``limit_concurrency`` answers 503 to any request past the limit, counting idle and
stalled connections, so stalled clients would turn every real request into an error.
"""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import contextlib
import datetime as dt
import functools
import logging
import multiprocessing
import multiprocessing.connection
import os
import resource
import signal
import socket
import ssl
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn
from cryptography import x509
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from stockade.policies.config.settings import AdmissionConfig

try:
    import uvloop
except ImportError:  # Windows, which uvloop does not run on: asyncio's own loop
    uvloop = None  # type: ignore[assignment]

log = logging.getLogger("stockade.admission")
AppFactory = Callable[[], Starlette]
#: connections the server answers per worker unless ``admission.max_connections`` says otherwise
DEFAULT_MAX_CONNECTIONS = 1024
#: seconds an overloaded client is asked to wait (``Retry-After``)
RETRY_AFTER_SECONDS = 1
#: bytes of a request head received and not yet complete, at most (h11's default bound)
MAX_HEAD_BYTES = 16 * 1024


@dataclass(frozen=True)
class Limits:
    """Per-worker connection limits (from ``admission:`` in stockade.yaml)."""

    header_timeout: float = 5.0
    handshake_timeout: float = 5.0
    max_connections: int = DEFAULT_MAX_CONNECTIONS

    @property
    def silent_grace(self) -> float:
        """Seconds a connection may stay silent after its handshake before it may be closed to make
        room: half its header time (a client sends its request at once; a loaded one, soon)."""
        return self.header_timeout / 2

    @property
    def most_connections(self) -> int:
        """Open connections past which new ones are closed unanswered (the 503s in between)."""
        return 2 * self.max_connections

    @classmethod
    def of(cls, admission: AdmissionConfig) -> Limits:
        return cls(
            header_timeout=admission.header_timeout_seconds,
            handshake_timeout=admission.header_timeout_seconds,
            max_connections=admission.max_connections,
        )


async def overloaded(scope: Scope, receive: Receive, send: Send) -> None:
    """The answer past the connection bound: 503 with Retry-After, and the connection is closed."""
    body = b'{"error": "the webhook is at its connection limit; retry"}'
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(RETRY_AFTER_SECONDS).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


class Share:
    """The open connections of each worker process, and the requests each has answered, in memory
    they share (made before the fork).

    The workers accept on one socket, and whichever wakes first takes a new connection: a client
    that keeps a few connections alive (the API server does) can end up with most of them on one
    worker, whose loop then queues what the other would have served at once (measured at 1,000
    req/s: 63 % of the requests on one of two workers). A worker holding more than its share
    answers one request with ``Connection: close``; the client opens a new connection, which the
    other worker may take, until they are even. One such close at a time per worker.

    Even connection counts are not even load: a client reuses its most recently used idle connection
    first (Go's ``http.Transport``, the API server's webhook client, does), so at a steady rate a few
    connections carry most requests, and they may all be one worker's (measured: 72 % of the CPU on
    one of two workers, in a run whose p99 was 14.5 ms against 6-8 ms in the others). So a worker
    also closes one connection when, over its last :data:`REQUEST_WINDOW` requests, it answered more
    than :data:`REQUEST_MARGIN` times its even share of all the workers' requests in the same time:
    at most one reconnection (a TLS handshake) per window, and none while the load is even, or while
    it is light (a window that took over :data:`REQUEST_WINDOW_SECONDS`: one keep-alive connection
    at a few requests a second is all one worker's, and costs it nothing)."""

    def __init__(self, counts: Any, index: int, served: Any = None) -> None:
        self.counts = counts  # multiprocessing RawArray("i", workers)
        self.index = index
        self.closing = False
        self.served = served  # multiprocessing RawArray("q", workers), or None
        self._own = self._total = 0  # this worker's and all workers' requests at the window's start
        self._since = self.clock()  # when the window started

    clock = staticmethod(time.monotonic)

    def opened(self) -> None:
        self.counts[self.index] += 1

    def closed(self) -> None:
        self.counts[self.index] -= 1

    def over(self) -> bool:
        """Whether this worker holds more connections than its even share (rounded up)."""
        counts: list[int] = list(self.counts)
        return counts[self.index] > -(-sum(counts) // len(counts))

    def busier(self) -> bool:
        """Count one request of this worker's; at the end of each window of its own requests,
        whether it answered more than its share of all of them (see the class doc)."""
        served = self.served
        if served is None:
            return False
        own: int = served[self.index] + 1
        served[self.index] = own
        if own - self._own < REQUEST_WINDOW:
            return False
        total: int = sum(served)
        now = self.clock()
        busy = (own - self._own) * len(served) > REQUEST_MARGIN * (total - self._total)
        busy = busy and now - self._since <= REQUEST_WINDOW_SECONDS
        self._own, self._total, self._since = own, total, now
        return busy


#: a worker's own requests over which its share of all requests is compared (:meth:`Share.busier`)
REQUEST_WINDOW = 128
#: how far above an even share of the requests a worker closes a connection: 1.2, with two
#: workers, is 60 % of the requests
REQUEST_MARGIN = 1.2
#: a window of this worker's requests that took longer than this is light load: nothing is closed
REQUEST_WINDOW_SECONDS = 1.0


def _count(_action: str) -> None:
    """What a connection that was shed counts by default: nothing (the app's metrics, if any)."""


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header timeout, a bound on an incomplete request head and
    a connection bound (see the module doc)."""

    limits = Limits()
    #: called with "evicted", "overloaded" or "closed" for each connection shed at the bound
    shed: Callable[[str], None] = staticmethod(_count)
    #: the workers' connection counts (several workers), or None
    share: Share | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._closes_for_share = False
        if self.share is not None:
            self.share.opened()
        self._header_timer: asyncio.TimerHandle | None = None
        self._armed_at = 0.0
        self._idle_at: float | None = None
        self._armed_for = self.cycle
        self._overloaded = False
        self._partial = False
        self._head_bytes = 0
        open_now = len(self.connections)
        if open_now > self.limits.max_connections and not self._evict():
            if open_now > self.limits.most_connections:
                log.warning("connection bound reached, new connection closed", extra={"client": self.client})
                self.shed("closed")
                transport.abort()
                return
            # every connection has a request in progress: answer this one 503, Retry-After
            self._overloaded = True
            self.app = overloaded
            self.shed("overloaded")
        self._arm()

    def _eviction_rank(self) -> tuple[int, float] | None:
        """How readily this connection is closed to make room, lowest first, or None if it is not:
        an idle kept-alive connection (closing it is ordinary HTTP; clients reconnect), then one that
        sent part of a request head and stalled (a client sends its head in one write), then one
        silent for half the header timeout since it connected; each the oldest first. A request in
        progress, a connection silent for less than that (its request is on its way: a burst), and a
        connection being answered 503 are not closed."""
        if self._overloaded or self.transport.is_closing():
            return None
        if self._header_timer is None:
            if self.cycle is not None and self.cycle.response_complete and self._idle_at is not None:
                return (0, self._idle_at)
            return None
        if self._partial:
            return (1, self._armed_at)
        if self.loop.time() - self._armed_at >= self.limits.silent_grace:
            return (2, self._armed_at)
        return None

    def _evict(self) -> bool:
        """At the bound, close the connection most readily closed (:meth:`_eviction_rank`) so that a
        new client is served; False when there is none."""
        oldest: GuardedProtocol | None = None
        rank: tuple[int, float] | None = None
        for c in self.connections:
            if not isinstance(c, GuardedProtocol) or c is self:
                continue
            r = c._eviction_rank()
            if r is not None and (rank is None or r < rank):
                oldest, rank = c, r
        if oldest is None:
            return False
        log.warning(
            "connection bound reached, a waiting connection closed",
            extra={"client": oldest.client, "waiting": ("idle", "stalled", "silent")[rank[0] if rank else 0]},
        )
        self.shed("evicted")
        oldest._disarm()
        oldest.transport.abort()
        return True

    def _arm(self) -> None:
        """Start the header deadline for the next request (unless one is running)."""
        self._armed_for = self.cycle
        self._armed_at = self.loop.time()
        self._header_timer = self.loop.call_later(self.limits.header_timeout, self._header_timeout)

    def _disarm(self) -> None:
        self._partial = False
        self._head_bytes = 0
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.cycle is self._armed_for and not self.transport.is_closing():
            log.warning(
                "request headers not received in time, connection closed", extra={"client": self.client}
            )
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        idle = self.cycle is None or self.cycle.response_complete
        if idle and self._header_timer is None and not self.transport.is_closing():
            self._arm()  # the first bytes of a new request on a kept-alive connection
        super().data_received(data)
        if self.cycle is not self._armed_for:
            self._disarm()  # the headers are in: the body's deadline is the app's
        elif self._header_timer is not None:
            self._partial = True  # part of a request head, the rest not (yet) sent
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
                log.warning("request head too large, connection closed", extra={"client": self.client})
                self._disarm()
                self.send_400_response("Request head too large.")

    def on_response_complete(self) -> None:
        self._idle_at = self.loop.time()
        super().on_response_complete()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        share = self.share
        if share is None or self.cycle is None:
            return
        busier = share.busier()  # counted for every request, whether a close is under way or not
        if not share.closing and (share.over() or busier):
            share.closing = self._closes_for_share = True
            self.cycle.keep_alive = False  # this response says Connection: close (see Share)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self.share is not None:
            self.share.closed()
            if self._closes_for_share:
                self.share.closing = False
        super().connection_lost(exc)


def protocol_for(
    limits: Limits, shed: Callable[[str], None] = _count, share: Share | None = None
) -> type[GuardedProtocol]:
    """A protocol class bound to these limits (uvicorn instantiates it per connection)."""
    attributes = {"limits": limits, "shed": staticmethod(shed), "share": share}
    return type("GuardedProtocol", (GuardedProtocol,), attributes)


def server_context(cert: Path, key: Path, *, unexpired: bool = True) -> ssl.SSLContext:
    """A server context serving this pair, or ssl.SSLError/OSError/ValueError saying why not: the
    chain must load, the key must match the certificate (OpenSSL checks it) and, if `unexpired`,
    the certificate must not have expired."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(cert), str(key))
    expired = _expired(cert)
    if unexpired and expired:
        raise ValueError(expired)
    return ctx


def _expired(cert: Path) -> str | None:
    """'the certificate expired at ...' if the first certificate in the file has expired."""
    leaf = x509.load_pem_x509_certificate(cert.read_bytes())
    if leaf.not_valid_after_utc <= dt.datetime.now(dt.UTC):
        return f"the certificate expired at {leaf.not_valid_after_utc.isoformat()}"
    return None


def _stamp(*paths: Path) -> tuple[tuple[int, int, int], ...] | None:
    try:
        return tuple((st.st_ino, st.st_size, st.st_mtime_ns) for st in (p.stat() for p in paths))
    except OSError:
        return None


class Certificates:
    """The serving certificate, swapped whole on reload (see the module doc).

    ``listening`` is the context the server is created with; its SNI callback (called for every
    ClientHello, with or without a server name) moves each new handshake onto ``current``.
    """

    def __init__(self, cert: Path, key: Path, on_reload: Callable[[str], None] = _count) -> None:
        self.cert, self.key = cert, key
        self.on_reload = on_reload
        self._seen = _stamp(cert, key)
        # At start an expired certificate still serves (as it always did), with a warning; a reload
        # to an expired one is rejected.
        self.current = self.listening = server_context(cert, key, unexpired=False)
        expired = _expired(cert)
        if expired:
            log.warning("serving an expired certificate", extra={"error": expired})
        self.listening.sni_callback = self._select

    def _select(self, conn: ssl.SSLObject | ssl.SSLSocket, _name: str | None, ctx: ssl.SSLContext) -> None:
        current = self.current
        if current is not ctx:
            conn.context = current

    def reload(self, *, force: bool = False) -> bool | None:
        """Load the files if they changed (or ``force``): True if the new pair now serves, False if
        it was rejected (the current one keeps serving), None if nothing changed."""
        before = _stamp(self.cert, self.key)
        if before is None or (before == self._seen and not force):
            return None
        try:
            ctx = server_context(self.cert, self.key)
        except (ssl.SSLError, OSError, ValueError) as exc:
            self._seen = before  # not again until the files change (a rotation's second write)
            self.on_reload("rejected")
            log.warning("certificate reload rejected, keeping the current one", extra={"error": str(exc)})
            return False
        if _stamp(self.cert, self.key) != before:
            return None  # changed while it was read: the next poll loads the finished pair
        self._seen = before
        self.current = ctx
        self.on_reload("applied")
        log.info("certificate reloaded", extra={"cert": str(self.cert)})
        return True

    async def watch(self, interval: float = 2.0) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                self.reload()
            except Exception as exc:  # the watcher outlives anything unexpected, as the config one
                log.error("certificate reload failed", extra={"error": type(exc).__name__})


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only for TCP sockets, and
    # without it responses can wait ~40 ms on the client's delayed ACK (measured in bench/webhook.py).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


#: bytes asyncio reads from a TLS connection at once (its default, 256 KiB, is resident per connection)
TLS_READ_BUFFER = 32 * 1024
#: the listen queue (the kernel caps it at net.core.somaxconn, 4096 by default)
BACKLOG = 4096


def _counter(app: Starlette, name: str) -> Callable[[str], None]:
    """``label -> None`` incrementing the app's counter ``name`` (its metrics: app.state.metrics)."""
    metrics = getattr(app.state, "metrics", None)
    counter = getattr(metrics, name, None)
    if counter is None:
        return _count
    return lambda label: counter.labels(label).inc()


def _on_sighup(certs: Certificates, app: Starlette) -> None:
    log.info("SIGHUP: reloading the certificate, the config and the policies")
    certs.reload(force=True)
    reload: Callable[[], None] | None = getattr(app.state, "reload", None)
    if reload is not None:
        reload()


async def serve_on(
    sock: socket.socket,
    app: Starlette,
    cert: Path,
    key: Path,
    *,
    reload_interval: float = 2.0,
    on_start: Callable[[uvicorn.Server], None] | None = None,
    limits: Limits = Limits(),
    share: Share | None = None,
) -> None:
    """Run one uvicorn server on an already-bound socket until it is told to stop.

    `on_start` receives the server, whose `should_exit` stops it gracefully (used by tests);
    `share`, this worker's place among several (:class:`Share`).
    """
    certs = Certificates(cert, key, _counter(app, "certificate_reloads"))
    # asyncio gives every TLS connection a 256 KiB read buffer (filled with zeros, so resident): 1,024
    # connections would take 256 MiB for it alone. One TLS record is at most 16 KiB; reading in 32
    # KiB steps costs nothing measurable, and a stalled connection then holds about 57 KiB in all.
    asyncio.sslproto.SSLProtocol.max_size = TLS_READ_BUFFER
    config = uvicorn.Config(
        app,
        ssl_context_factory=lambda _config, _default: certs.listening,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=10,
        lifespan="on",
        http=protocol_for(limits, _counter(app, "connections_shed"), share),
        ws="none",  # no WebSocket upgrades: a webhook answers HTTP requests only
        timeout_keep_alive=5,
        backlog=BACKLOG,
    )
    config.load()
    server = uvicorn.Server(config)
    if on_start is not None:
        on_start(server)
    reloader = asyncio.create_task(certs.watch(reload_interval))
    # uvicorn creates the server with asyncio's default TLS handshake timeout (60 s) and offers no
    # setting; this loop's create_server gets ours (the attribute lives on this loop object only).
    loop = asyncio.get_running_loop()
    create_server = loop.create_server
    loop.create_server = functools.partial(  # type: ignore[method-assign]
        create_server, ssl_handshake_timeout=limits.handshake_timeout
    )
    hup = threading.current_thread() is threading.main_thread()
    if hup:
        loop.add_signal_handler(signal.SIGHUP, _on_sighup, certs, app)
    try:
        await server.serve(sockets=[sock])
    finally:
        reloader.cancel()
        if hup:
            loop.remove_signal_handler(signal.SIGHUP)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)  # not the default (exit) while stopping


def run(main: Coroutine[Any, Any, None]) -> None:
    """Run a server coroutine on the event loop every worker uses: uvloop's (libuv, its TLS and
    transports in C). At 1,000 req/s on two cores it took the p99 from 25-47 ms to 13-23 ms
    (docs/benchmarks.md)."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop if uvloop is not None else None) as runner:
        runner.run(main)


def _worker(
    sock: socket.socket,
    factory: AppFactory,
    cert: Path,
    key: Path,
    limits: Limits,
    share: Share | None = None,
) -> None:
    run(serve_on(sock, factory(), cert, key, limits=limits, share=share))


def raise_file_limit(limits: Limits) -> int:
    """Raise this process's soft RLIMIT_NOFILE to what the connection bound needs (each connection
    is a descriptor, plus the engine's pipes, the inventory's sockets, logs); return the limit."""
    want = limits.most_connections + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < want:
        soft = want if hard == resource.RLIM_INFINITY else min(want, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < want:
        log.warning(
            "open files limited below the connection bound: connections past it wait in the listen queue",
            extra={"nofile": soft, "wanted": want},
        )
    return soft


def serve(
    sock: socket.socket,
    cert: Path,
    key: Path,
    factory: AppFactory,
    workers: int = 1,
    limits: Limits = Limits(),
) -> int:
    """Serve on a bound socket (:func:`bind`) until SIGTERM/SIGINT; with workers > 1, in that many
    forked processes. SIGHUP reloads (each worker's) certificate and config; it never stops them.
    Returns 0 after a requested stop, or the number of workers that ended on their own with a non-zero
    exit code (one that could not start, say): the first such worker stops the others, so a server
    never runs on quietly with fewer workers than it was given."""
    raise_file_limit(limits)
    # Ignored until each worker's loop handles it, so that a SIGHUP while starting cannot kill one.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if workers <= 1:
        _worker(sock, factory, cert, key, limits)
        return 0
    ctx = multiprocessing.get_context("fork")
    counts, served = ctx.RawArray("i", workers), ctx.RawArray("q", workers)
    procs = [
        ctx.Process(
            target=_worker, args=(sock, factory, cert, key, limits, Share(counts, i, served)), daemon=False
        )
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    stopping = False

    def send(signum: int) -> None:
        for p in procs:
            if p.is_alive() and p.pid is not None:
                os.kill(p.pid, signum)

    def stop_all() -> None:
        send(signal.SIGTERM)  # uvicorn finishes in-flight requests, then exits

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if signum == signal.SIGHUP:  # reload, in every worker
            send(signal.SIGHUP)
            return
        stopping = True
        stop_all()

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGHUP, forward)
    failed = 0
    running = list(procs)
    while running:
        ended = multiprocessing.connection.wait([p.sentinel for p in running])
        for p in [p for p in running if p.sentinel in ended]:
            p.join()
            running.remove(p)
            if p.exitcode != 0 and not stopping:
                failed += 1
                stopping = True
                log.error(
                    "worker process %s ended with exit code %s, stopping the others",
                    p.pid,
                    p.exitcode,
                    extra={"exit_code": p.exitcode},
                )
                stop_all()
    return failed
