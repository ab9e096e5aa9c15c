"""A real webhook over TLS for tests: a throwaway CA and a uvicorn server on 127.0.0.1 in a thread."""

from __future__ import annotations

import contextlib
import datetime as dt
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import uvicorn

from stockade.admission.app import WebhookState, create_app
from stockade.admission.server import Limits, Share, bind, run, serve_on
from stockade.policies.config.settings import load_config
from stockade.webhooks.certs import CertificateAuthority


class CA:
    """Test wrapper over the webhook's own certificate code (stockade.webhooks.certs)."""

    def __init__(self) -> None:
        self.authority = CertificateAuthority.create("stockade-test-ca", dt.timedelta(days=1))

    def write_ca(self, path: Path) -> Path:
        path.write_bytes(self.authority.cert_pem)
        return path

    def issue(self, cert_path: Path, key_path: Path) -> int:
        """Write a serving certificate for localhost/127.0.0.1; return its serial number."""
        issued = self.authority.issue(["localhost"], ["127.0.0.1"], dt.timedelta(hours=1))
        issued.write(cert_path, key_path)
        return issued.serial


def pki_files(directory: Path) -> tuple[Path, Path, Path]:
    """A new CA's certificate and a serving pair it issued, written into `directory`: (ca, cert, key)."""
    ca = CA()
    cert, key = directory / "tls.crt", directory / "tls.key"
    ca.issue(cert, key)
    return ca.write_ca(directory / "ca.crt"), cert, key


class Server:
    """A real TLS server in a background thread, stopped gracefully."""

    def __init__(
        self,
        state: WebhookState,
        cert: Path,
        key: Path,
        limits: Limits = Limits(),
        share: Share | None = None,
    ) -> None:
        self.sock = bind("127.0.0.1", 0)
        self.port = self.sock.getsockname()[1]
        self._server: uvicorn.Server | None = None
        app = create_app(state, reload_interval=0.2)
        self.thread = threading.Thread(
            target=lambda: run(
                serve_on(
                    self.sock,
                    app,
                    cert,
                    key,
                    reload_interval=0.2,
                    on_start=self._started,
                    limits=limits,
                    share=share,
                )
            ),
            daemon=True,
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not (self._server and self._server.started):
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)

    def _started(self, server: uvicorn.Server) -> None:
        self._server = server

    def stop(self) -> None:
        assert self._server is not None
        self._server.should_exit = True
        self.thread.join(timeout=15)
        assert not self.thread.is_alive()


@contextlib.contextmanager
def webhook_client(tmp_path: Path, config_text: str = "{}\n") -> Iterator[httpx.Client]:
    """A real TLS webhook on loopback serving `config_text`, and an HTTPS client that trusts its CA."""
    ca = CA()
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    ca.issue(cert, key)
    config_path = tmp_path / "stockade.yaml"
    config_path.write_text(config_text)
    srv = Server(WebhookState(config=load_config(config_path), config_path=config_path), cert, key)
    ctx = ssl.create_default_context(cafile=str(ca.write_ca(tmp_path / "ca.crt")))
    try:
        with httpx.Client(base_url=f"https://127.0.0.1:{srv.port}", verify=ctx) as client:
            yield client
    finally:
        srv.stop()
