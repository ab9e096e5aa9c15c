"""Fixtures for the admission tests: a fake Kubernetes API server on 127.0.0.1 and a real client for it.

The tests folders have no `__init__.py` and pytest runs with `--import-mode=importlib`, so the fake
server's module is loaded here from its path and handed to tests through fixtures.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import ipaddress
import ssl
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client as k8s_client

#: a bearer token the tests look for in the logs (it must never appear there)
TOKEN = "stockade-test-token-7f3c9a"
LOOPBACK = ipaddress.ip_address("127.0.0.1")


def _load_fake_apiserver() -> Any:
    name = "stockade_tests_fake_apiserver"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("fake_apiserver.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def fake_apiserver_module() -> Any:
    return _load_fake_apiserver()


@pytest.fixture
def fake_apiserver(fake_apiserver_module: Any) -> Iterator[Any]:
    """A started FakeApiServer serving namespaces and serviceaccounts (core/v1)."""
    server = fake_apiserver_module.FakeApiServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def api_client(fake_apiserver: Any) -> Iterator[Any]:
    """The official client, configured for the fake server over plain HTTP, with a bearer token."""
    configuration = k8s_client.Configuration(host=fake_apiserver.url)
    configuration.api_key["authorization"] = f"Bearer {TOKEN}"
    api = k8s_client.ApiClient(configuration)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def tls(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    """A self-signed certificate for 127.0.0.1: the server's SSLContext and the CA file for the client."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake-apiserver")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(LOOPBACK)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "apiserver.crt", tmp_path / "apiserver.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context, cert_file
