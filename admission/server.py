"""Serve the webhook over HTTPS with uvicorn: TLS >= 1.2, live certificate reload, worker processes.

Certificates rotate (cert-manager, `stockade webhook certs`) while the server runs. The files are
polled, and a changed pair is loaded into the live `SSLContext`: new handshakes use the new
certificate, connections in flight are untouched, and a broken pair is ignored (the old one stays).

Workers are processes, because regorus holds the GIL. The parent binds the socket once and forks
workers that all accept on it; each worker has its own engine and its own cache. SIGTERM or SIGINT
make every worker finish its in-flight requests and stop (uvicorn's graceful shutdown).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import uvicorn
from starlette.applications import Starlette

log = logging.getLogger("stockade.admission")
AppFactory = Callable[[], Starlette]


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
    )
    config.load()
    assert config.ssl is not None
    config.ssl.minimum_version = ssl.TLSVersion.TLSv1_2
    server = uvicorn.Server(config)
    if on_start is not None:
        on_start(server)
    reloader = asyncio.create_task(watch_certificates(config.ssl, cert, key, reload_interval))
    try:
        await server.serve(sockets=[sock])
    finally:
        reloader.cancel()


def _worker(sock: socket.socket, factory: AppFactory, cert: Path, key: Path) -> None:
    asyncio.run(serve_on(sock, factory(), cert, key))


def serve(host: str, port: int, cert: Path, key: Path, factory: AppFactory, workers: int = 1) -> None:
    """Serve until SIGTERM/SIGINT; with workers > 1, in that many forked processes."""
    sock = bind(host, port)
    if workers <= 1:
        _worker(sock, factory, cert, key)
        return
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=_worker, args=(sock, factory, cert, key), daemon=False) for _ in range(workers)
    ]
    for p in procs:
        p.start()

    def forward(_signum: int, _frame: FrameType | None) -> None:
        for p in procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: uvicorn finishes in-flight requests, then exits

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for p in procs:
        p.join()
