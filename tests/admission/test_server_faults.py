"""Faults of the webhook server found by hostile probes (issue 36), each against a real uvicorn HTTPS
server on 127.0.0.1 (tests/tls_webhook.py) or a real `stockade webhook serve` process:

- a broken certificate rotation must not break a single TLS handshake;
- a burst of 1,000 concurrent connections is answered, and past the bound the answer is a 503 with
  Retry-After, not a closed connection;
- SIGHUP reloads instead of killing the server;
- a CREATE or UPDATE without an object is denied.

Every wait is bounded by a deadline; servers and processes are stopped in `finally`.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import resource
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from cryptography import x509

from stockade.admission.app import WebhookState
from stockade.admission.server import Limits
from stockade.policies.config import parse_config
from tests.reviews import admission_review
from tests.tls_webhook import CA, Server

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "ok", "namespace": "ml"},
    "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1"}]},
}


def wait_for(what: str, done: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def metric(state: WebhookState, name: str, **labels: str) -> float:
    value = state.metrics.registry.get_sample_value(name, labels)
    return value or 0.0


# -- 1. certificate reload ------------------------------------------------------------------------


class MountedPair:
    """tls.crt and tls.key as a Secret volume holds them: symlinks into `..data`, itself a symlink to
    a timestamped directory, swapped by one rename (Kubernetes' atomic writer). Each state is then
    exactly one (certificate, key) pair, as the server sees it."""

    def __init__(self, root: Path, cert: bytes, key: bytes) -> None:
        self.root = root
        self.n = 0
        self.set(cert, key)
        (root / "tls.crt").symlink_to("..data/tls.crt")
        (root / "tls.key").symlink_to("..data/tls.key")

    @property
    def cert(self) -> Path:
        return self.root / "tls.crt"

    @property
    def key(self) -> Path:
        return self.root / "tls.key"

    def set(self, cert: bytes, key: bytes) -> None:
        self.n += 1
        version = self.root / f"..v{self.n}"
        version.mkdir()
        (version / "tls.crt").write_bytes(cert)
        (version / "tls.key").write_bytes(key)
        tmp = self.root / "..data_tmp"
        tmp.symlink_to(version.name)
        os.replace(tmp, self.root / "..data")


class Handshakes:
    """A client thread that opens TLS connections one after another (each a full handshake and a
    GET /healthz) and counts failures, noting the serial number of the certificate served."""

    def __init__(self, port: int, ca_file: Path) -> None:
        self.port = port
        self.ctx = ssl.create_default_context(cafile=str(ca_file))
        self.ok = 0
        self.failures: Counter[str] = Counter()
        self.serial: int | None = None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        request = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nConnection: close\r\n\r\n"
        while not self._stop.is_set():
            try:
                with (
                    socket.create_connection(("127.0.0.1", self.port), timeout=20) as raw,
                    self.ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
                ):
                    der = tls.getpeercert(binary_form=True)
                    tls.sendall(request.encode())
                    answer = tls.recv(65536)
                assert der is not None and answer.startswith(b"HTTP/1.1 200"), answer[:40]
                self.serial = x509.load_der_x509_certificate(der).serial_number
                self.ok += 1
            except (OSError, AssertionError) as exc:
                self.failures[f"{type(exc).__name__}: {exc}"] += 1

    def more(self, n: int = 20) -> None:
        """Wait until n more handshakes have succeeded (or any failed)."""
        target = self.ok + n
        wait_for(f"{n} more handshakes", lambda: self.ok >= target or bool(self.failures))

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=30)


def test_a_broken_certificate_rotation_never_breaks_a_handshake(tmp_path: Path) -> None:
    """Every broken pair is rejected whole while a client keeps handshaking: zero failures, the old
    certificate keeps serving, each rejection is counted; the good pair and then a new valid pair
    are applied, and the new certificate is the one served after its reload."""
    ca = CA()
    authority = ca.authority
    first = authority.issue(["localhost"], ["127.0.0.1"], dt.timedelta(hours=1))
    other = authority.issue(["localhost"], ["127.0.0.1"], dt.timedelta(hours=1))
    expired = authority.issue(
        ["localhost"],
        ["127.0.0.1"],
        dt.timedelta(hours=1),
        now=dt.datetime.now(dt.UTC) - dt.timedelta(days=1),
    )
    newest = authority.issue(["localhost"], ["127.0.0.1"], dt.timedelta(hours=1))
    mount = tmp_path / "mount"
    mount.mkdir()
    pair = MountedPair(mount, first.cert_pem, first.key_pem)
    state = WebhookState(config=parse_config(""))
    srv = Server(state, pair.cert, pair.key)
    client = Handshakes(srv.port, ca.write_ca(tmp_path / "ca.crt"))
    broken = {
        "the certificate of another key": (other.cert_pem, first.key_pem),
        "the key of another certificate": (first.cert_pem, other.key_pem),
        "a truncated certificate": (first.cert_pem[: len(first.cert_pem) // 2], first.key_pem),
        "a truncated key": (first.cert_pem, first.key_pem[:40]),
        "empty files": (b"", b""),
        "only the key updated (a rotation half done)": (first.cert_pem, newest.key_pem),
        "only the certificate updated": (newest.cert_pem, first.key_pem),
        "garbage": (os.urandom(700), os.urandom(300)),
        "an expired certificate": (expired.cert_pem, expired.key_pem),
    }
    try:
        client.more()
        assert client.serial == first.serial
        for n, (what, (cert, key)) in enumerate(broken.items(), 1):
            pair.set(cert, key)
            wait_for(
                f"{what} to be rejected",
                lambda n=n: metric(state, "stockade_certificate_reloads_total", result="rejected") >= n,
            )
            client.more()
            assert not client.failures, f"after {what}: {client.failures}"
            assert client.serial == first.serial, what
        assert metric(state, "stockade_certificate_reloads_total", result="applied") == 0
        pair.set(first.cert_pem, first.key_pem)  # the good pair again
        wait_for(
            "the good pair",
            lambda: metric(state, "stockade_certificate_reloads_total", result="applied") == 1,
        )
        client.more()
        pair.set(newest.cert_pem, newest.key_pem)  # a new valid pair
        wait_for(
            "the new pair", lambda: metric(state, "stockade_certificate_reloads_total", result="applied") == 2
        )
        client.more()
        wait_for("the new certificate to be served", lambda: client.serial == newest.serial)
        client.more()
    finally:
        client.stop()
        srv.stop()
    assert not client.failures, client.failures
    assert client.serial == newest.serial
    assert metric(state, "stockade_certificate_reloads_total", result="rejected") == len(broken)
