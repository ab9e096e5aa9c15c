"""Serve the webhook over HTTPS with uvicorn: TLS >= 1.2, live certificate reload, worker processes.

Certificates rotate (cert-manager, `stockade webhook certs`) while the server runs. The files are
polled, and a changed pair is loaded into the live `SSLContext`: new handshakes use the new
certificate, connections in flight are untouched, and a broken pair is ignored (the old one stays).

Workers are processes, because regorus holds the GIL. The parent binds the socket once and forks
workers that all accept on it; each worker has its own engine and its own cache. SIGTERM or SIGINT
make every worker finish its in-flight requests and stop (uvicorn's graceful shutdown).

**Slow and many clients.** The server is uvicorn (h11), kept because it already gives the
keep-alive timeout, a bound on an incomplete request's buffered bytes (h11's 16 KiB) and flow
control on bodies the app has not read (reading pauses at 64 KiB per connection), and the rest
of the stack (Starlette) is ASGI. What it lacks, :class:`GuardedProtocol` adds per worker:

- a TLS handshake timeout (asyncio's default is 60 s; uvicorn does not pass one);
- a header timeout: the request line and headers must arrive within ``header_timeout`` seconds of
  the connection, or of the first byte after a response; a connection that sends half a request
  line and stalls is closed (uvicorn closes only idle keep-alive connections);
- a connection cap: past ``max_connections`` open connections, the connection that has waited
  longest for its request headers is closed (a stalled or idle client), or the new one when every
  connection has a request in progress; stalled clients cannot take every file descriptor, and
  cannot keep out a client that sends its request promptly;
- the body timeout is the app's (``admission.body_timeout_seconds``: HTTP 408 and close).

uvicorn's own ``limit_concurrency`` answers 503 to any request past the limit, counting idle and
stalled connections, so stalled clients would turn every real request into an error.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import multiprocessing.connection
import signal
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from stockade.policies.config.settings import AdmissionConfig

log = logging.getLogger("stockade.admission")
AppFactory = Callable[[], Starlette]


@dataclass(frozen=True)
class Limits:
    """Per-worker connection limits (from ``admission:`` in stockade.yaml)."""

    header_timeout: float = 5.0
    handshake_timeout: float = 5.0
    max_connections: int = 256

    @classmethod
    def of(cls, admission: AdmissionConfig) -> Limits:
        return cls(
            header_timeout=admission.header_timeout_seconds,
            handshake_timeout=admission.header_timeout_seconds,
            max_connections=admission.max_connections,
        )


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout and a connection cap (see the module doc)."""

    limits = Limits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._armed_at = 0.0
        self._armed_for = self.cycle
        if len(self.connections) > self.limits.max_connections and not self._evict():
            log.warning("connection limit reached, new connection closed", extra={"client": self.client})
            transport.abort()
            return
        self._arm()

    def _evict(self) -> bool:
        """At the cap, close the connection that has waited longest for its request headers (a
        stalled client, or an idle kept-alive one) so that a new client is served; False when every
        connection has a request in progress."""
        waiting = [
            c
            for c in self.connections
            if isinstance(c, GuardedProtocol) and c is not self and c._header_timer is not None
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c._armed_at)
        log.warning(
            "connection limit reached, oldest waiting connection closed", extra={"client": oldest.client}
        )
        oldest._disarm()
        oldest.transport.abort()
        return True

    def _arm(self) -> None:
        """Start the header deadline for the next request (unless one is running)."""
        self._armed_for = self.cycle
        self._armed_at = self.loop.time()
        self._header_timer = self.loop.call_later(self.limits.header_timeout, self._header_timeout)

    def _disarm(self) -> None:
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

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def protocol_for(limits: Limits) -> type[GuardedProtocol]:
    """A protocol class bound to these limits (uvicorn instantiates it per connection)."""
    return type("GuardedProtocol", (GuardedProtocol,), {"limits": limits})


def _mtimes(*paths: Path) -> tuple[float, ...] | None:
    try:
        return tuple(p.stat().st_mtime for p in paths)
    except OSError:
        return None


async def watch_certificates(ctx: ssl.SSLContext, cert: Path, key: Path, interval: float = 2.0) -> None:
    seen = _mtimes(cert, key)
    while True:
        await asyncio.sleep(interval)
        now = _mtimes(cert, key)
        if now is None or now == seen:
            continue
        try:
            ctx.load_cert_chain(str(cert), str(key))
        except (ssl.SSLError, OSError) as exc:
            # Half-written during rotation, or a mismatched pair: keep serving the old one.
            log.warning("certificate reload failed, keeping the current one", extra={"error": str(exc)})
            continue
        seen = now
        log.info("certificate reloaded", extra={"cert": str(cert)})


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only for TCP sockets, and
    # without it responses can wait ~40 ms on the client's delayed ACK (measured in bench/webhook.py).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


async def serve_on(
    sock: socket.socket,
    app: Starlette,
    cert: Path,
    key: Path,
    *,
    reload_interval: float = 2.0,
    on_start: Callable[[uvicorn.Server], None] | None = None,
    limits: Limits = Limits(),
) -> None:
    """Run one uvicorn server on an already-bound socket until it is told to stop.

    `on_start` receives the server, whose `should_exit` stops it gracefully (used by tests).
    """
    config = uvicorn.Config(
        app,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=10,
        lifespan="on",
        http=protocol_for(limits),
        timeout_keep_alive=5,
    )
    config.load()
    assert config.ssl is not None
    config.ssl.minimum_version = ssl.TLSVersion.TLSv1_2
    server = uvicorn.Server(config)
    if on_start is not None:
        on_start(server)
    reloader = asyncio.create_task(watch_certificates(config.ssl, cert, key, reload_interval))
    # uvicorn creates the server with asyncio's default TLS handshake timeout (60 s) and offers no
    # setting; this loop's create_server gets ours (the attribute lives on this loop object only).
    loop = asyncio.get_running_loop()
    create_server = loop.create_server
    loop.create_server = functools.partial(  # type: ignore[method-assign]
        create_server, ssl_handshake_timeout=limits.handshake_timeout
    )
    try:
        await server.serve(sockets=[sock])
    finally:
        reloader.cancel()


def _worker(sock: socket.socket, factory: AppFactory, cert: Path, key: Path, limits: Limits) -> None:
    asyncio.run(serve_on(sock, factory(), cert, key, limits=limits))


def serve(
    sock: socket.socket,
    cert: Path,
    key: Path,
    factory: AppFactory,
    workers: int = 1,
    limits: Limits = Limits(),
) -> int:
    """Serve on a bound socket (:func:`bind`) until SIGTERM/SIGINT; with workers > 1, in that many
    forked processes. Returns 0 after a requested stop, or the number of workers that ended on their
    own with a non-zero exit code (one that could not start, say): the first such worker stops the
    others, so a server never runs on quietly with fewer workers than it was given."""
    if workers <= 1:
        _worker(sock, factory, cert, key, limits)
        return 0
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=_worker, args=(sock, factory, cert, key, limits), daemon=False)
        for _ in range(workers)
    ]
    for p in procs:
        p.start()
    stopping = False

    def stop_all() -> None:
        for p in procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: uvicorn finishes in-flight requests, then exits

    def forward(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        stop_all()

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
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
