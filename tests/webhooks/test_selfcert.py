"""The webhook's self-issued certificate (`stockade.webhooks.selfcert`, `serve --self-issued-certs`,
`register --self-issued-certs`), with the real kubernetes client against the fake API server
(tests/webhooks/fake_apply_server.py: create with 409 AlreadyExists, replace with 409 Conflict on a
stale resourceVersion, JSON patch with `test`), and a real TLS handshake on 127.0.0.1 with the pair
it writes, trusted through the caBundle it patched in.

Proven: a first start fills the chart's empty Secret, publishes the CA and patches the webhook
configuration's caBundle; a second replica reads the same CA and writes nothing; a serving renewal
before expiry replaces the Secret without touching the caBundle, a CA rotation patches it again
(new and old CA); losing a create or a replace race (409) adopts the winner's CA; two replicas at
once agree; a broken Secret is one line; nothing printed carries key material.
"""

from __future__ import annotations

import base64
import datetime as dt
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.webhooks.certs import CA_CERT, CA_KEY, TLS_CERT, TLS_KEY, plan_pems
from stockade.webhooks.install import apply_object
from stockade.webhooks.manifests import (
    CA_BUNDLE_MAP,
    NAME,
    SELF_ISSUED_SECRET,
    Options,
    render,
    service_dns_names,
    webhook_configuration,
)
from stockade.webhooks.selfcert import SelfCertError, SelfIssuer

NS = "ml-admission"
NAMES = service_dns_names(NS)
T0 = dt.datetime.now(dt.UTC).replace(microsecond=0)  # a real handshake checks validity


def _setup(api_client: Any, *, precreated: bool = True, registered: bool = True) -> None:
    """What the chart creates in self-issued mode: the namespace, the empty Secret and ConfigMap,
    and (once the registration hook ran) the webhook configuration, without a caBundle."""
    options = Options(namespace=NS, self_issued=True)
    apply_object(api_client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    if precreated:
        for obj in render(options, ["Pod"]):
            if (obj["kind"], obj["metadata"]["name"]) in (
                ("Secret", SELF_ISSUED_SECRET),
                ("ConfigMap", CA_BUNDLE_MAP),
            ):
                apply_object(api_client, obj)
    if registered:
        configuration = webhook_configuration(options, ["Pod"])
        assert "caBundle" not in configuration["webhooks"][0]["clientConfig"]
        apply_object(api_client, configuration)


def _issuer(api_client: Any, tmp_path: Path, replica: str, now: dt.datetime = T0) -> SelfIssuer:
    d = tmp_path / replica
    return SelfIssuer(api_client, NS, NAMES, d / "tls.crt", d / "tls.key", now=lambda: now)


def _secret(server: Any) -> dict[str, bytes]:
    obj = server.get("secrets", NS, SELF_ISSUED_SECRET)
    return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}


def _ca_bundle(server: Any) -> bytes:
    vwc = server.get("validatingwebhookconfigurations", None, NAME)
    return base64.b64decode(vwc["webhooks"][0]["clientConfig"]["caBundle"])


def _vwc_patches(server: Any) -> list[Any]:
    """The caBundle patches (JSON patches; the registration is a server-side apply)."""
    return [
        c
        for c in server.calls
        if c.content_type == "application/json-patch+json" and "validatingwebhookconfigurations" in c.path
    ]


def _handshake(cert: Path, key: Path, ca_bundle: bytes) -> x509.Certificate:
    """A real TLS handshake on 127.0.0.1, the client trusting `ca_bundle` and checking the name the
    API server calls (`stockade-webhook.<ns>.svc`); the server's certificate."""
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(str(cert), str(key))
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept() -> None:
        conn, _ = listener.accept()
        try:
            with server_ctx.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)
        except (OSError, ssl.SSLError):
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    client_ctx = ssl.create_default_context(cadata=ca_bundle.decode())
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=30) as raw,
            client_ctx.wrap_socket(raw, server_hostname=f"{NAME}.{NS}.svc") as tls,
        ):
            der = tls.getpeercert(binary_form=True)
            assert der is not None
            tls.sendall(b"x")
    finally:
        thread.join(timeout=30)
        listener.close()
    return x509.load_der_x509_certificate(der)


def test_first_start_fills_the_secret_publishes_the_ca_and_patches_the_ca_bundle(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    _setup(api_client)
    issuer = _issuer(api_client, tmp_path, "a")
    done = issuer.reconcile()
    assert done.secret == "created" and done.ca_bundle_patched and done.files_written
    assert (done.report.ca, done.report.serving) == ("created", "created")
    stored = _secret(apply_server)
    assert set(stored) == {CA_CERT, CA_KEY, TLS_CERT, TLS_KEY}
    assert _ca_bundle(apply_server) == stored[CA_CERT]
    published = apply_server.get("configmaps", NS, CA_BUNDLE_MAP)["data"][CA_CERT]
    assert published.encode() == stored[CA_CERT]
    assert issuer.cert_path.read_bytes() == stored[TLS_CERT]
    assert issuer.key_path.read_bytes() == stored[TLS_KEY]
    assert issuer.key_path.stat().st_mode & 0o077 == 0
    served = _handshake(issuer.cert_path, issuer.key_path, _ca_bundle(apply_server))
    san = served.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(san.get_values_for_type(x509.DNSName)) == set(NAMES)
    # only its own objects, by name: the Secret and ConfigMap replaced, the configuration patched
    writes = {(c.method, c.path) for c in apply_server.calls if c.method in ("PUT", "POST", "PATCH")}
    assert writes >= {
        ("PUT", f"/api/v1/namespaces/{NS}/secrets/{SELF_ISSUED_SECRET}"),
        ("PUT", f"/api/v1/namespaces/{NS}/configmaps/{CA_BUNDLE_MAP}"),
        ("PATCH", f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{NAME}"),
    }
    assert "PRIVATE KEY" not in str(done)


def test_a_second_replica_reads_the_same_ca_and_writes_nothing(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    _setup(api_client)
    _issuer(api_client, tmp_path, "a").reconcile()
    version = apply_server.get("secrets", NS, SELF_ISSUED_SECRET)["metadata"]["resourceVersion"]
    calls = len(apply_server.calls)
    second = _issuer(api_client, tmp_path, "b", T0 + dt.timedelta(minutes=3))
    done = second.reconcile()
    assert done.secret == "kept" and not done.ca_bundle_patched and done.files_written
    assert (done.report.ca, done.report.serving) == ("kept", "kept")
    assert second.cert_path.read_bytes() == (tmp_path / "a" / "tls.crt").read_bytes()
    assert apply_server.get("secrets", NS, SELF_ISSUED_SECRET)["metadata"]["resourceVersion"] == version
    assert [c.method for c in apply_server.calls[calls:]] == ["GET", "GET", "GET"]  # Secret, CA map, config
    # and again: nothing changes, not even the files
    assert not second.reconcile().files_written


def test_renewal_before_expiry_renews_the_serving_certificate_then_rotates_the_ca_and_patches_again(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    _setup(api_client)
    _issuer(api_client, tmp_path, "a").reconcile()
    first = _secret(apply_server)
    assert len(_vwc_patches(apply_server)) == 1

    # 61 days on, the 90-day serving certificate is within its last 30 days: renewed, same CA
    renewal = _issuer(api_client, tmp_path, "a", T0 + dt.timedelta(days=61))
    done = renewal.reconcile()
    assert done.secret == "renewed" and done.report.serving.startswith("reissued: expires")
    assert done.report.ca == "kept" and not done.ca_bundle_patched
    second = _secret(apply_server)
    assert second[CA_CERT] == first[CA_CERT] and second[TLS_CERT] != first[TLS_CERT]
    assert renewal.cert_path.read_bytes() == second[TLS_CERT]
    assert len(_vwc_patches(apply_server)) == 1

    # 179 days before the CA ends: a new CA, the bundle carries both, the caBundle patched again
    ca_end = x509.load_pem_x509_certificate(first[CA_CERT]).not_valid_after_utc
    rotation = _issuer(api_client, tmp_path, "a", ca_end - dt.timedelta(days=179))
    done = rotation.reconcile()
    assert (
        done.secret == "renewed" and done.report.ca.startswith("rotated: expires") and done.ca_bundle_patched
    )
    third = _secret(apply_server)
    bundle = x509.load_pem_x509_certificates(third[CA_CERT])
    assert len(bundle) == 2 and bundle[1] == x509.load_pem_x509_certificate(first[CA_CERT])
    assert _ca_bundle(apply_server) == third[CA_CERT]
    assert apply_server.get("configmaps", NS, CA_BUNDLE_MAP)["data"][CA_CERT].encode() == third[CA_CERT]
    assert len(_vwc_patches(apply_server)) == 2
    served = x509.load_pem_x509_certificate(third[TLS_CERT])
    served.verify_directly_issued_by(bundle[0])  # the expired serving certificate: by the new CA


def _winner_secret(namespace: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Another replica's Secret, as it would have written it."""
    _, pems = plan_pems({}, NAMES, T0)
    data = {k: base64.b64encode(v).decode() for k, v in pems.items()}
    return {
        "metadata": {"name": SELF_ISSUED_SECRET, "namespace": namespace},
        "type": "Opaque",
        "data": data,
    }, pems


@pytest.mark.parametrize("precreated", [False, True], ids=["create: 409 AlreadyExists", "fill: 409 Conflict"])
def test_losing_the_race_adopts_the_winners_ca(
    precreated: bool, apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    """Without the chart's empty Secret the first replica creates it (POST); with it, fills it (PUT
    with the resourceVersion it read). Either way, another replica writes first: 409, read, adopt."""
    _setup(api_client, precreated=precreated)
    other, pems = _winner_secret(NS)
    apply_server.race_next["secrets"] = other
    issuer = _issuer(api_client, tmp_path, "a")
    done = issuer.reconcile()
    assert done.secret == "adopted" and (done.report.ca, done.report.serving) == ("kept", "kept")
    statuses = [(c.method, c.status) for c in apply_server.calls if "/secrets" in c.path]
    assert (("POST" if not precreated else "PUT"), 409) in statuses
    assert _secret(apply_server)[CA_CERT] == pems[CA_CERT]
    assert issuer.cert_path.read_bytes() == pems[TLS_CERT]
    assert _ca_bundle(apply_server) == pems[CA_CERT]


def test_two_replicas_starting_at_once_agree_on_one_ca(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    _setup(api_client)
    results: dict[str, Any] = {}

    def start(replica: str) -> None:
        results[replica] = _issuer(api_client, tmp_path, replica).reconcile()

    threads = [threading.Thread(target=start, args=(r,)) for r in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert set(results) == {"a", "b", "c"}
    assert sorted(r.secret for r in results.values()).count("created") == 1
    stored = _secret(apply_server)
    for replica in "abc":
        assert (tmp_path / replica / "tls.crt").read_bytes() == stored[TLS_CERT]
    assert _ca_bundle(apply_server) == stored[CA_CERT]


def test_before_registration_the_ca_is_published_and_the_configuration_patched_later(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    _setup(api_client, registered=False)
    issuer = _issuer(api_client, tmp_path, "a")
    done = issuer.reconcile()
    assert not done.configuration_found and "not registered yet" in str(done)
    # the registration hook reads the published CA and registers with it
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": apply_server.url}}],
                "users": [{"name": "u", "user": {"token": "registrar-token-5c2e"}}],
                "contexts": [{"name": "fake-ctx", "context": {"cluster": "fake", "user": "u"}}],
                "current-context": "fake-ctx",
            }
        )
    )
    args = ["webhook", "register", "--kubeconfig", str(kubeconfig), "--namespace", NS, "--self-issued-certs"]
    result = CliRunner().invoke(app, [*args, "--wait", "0"])
    assert result.exit_code == 0, result.output
    assert "registrar-token-5c2e" not in result.output and "PRIVATE KEY" not in result.output
    assert _ca_bundle(apply_server) == _secret(apply_server)[CA_CERT]
    assert not issuer.reconcile().ca_bundle_patched


def test_register_without_a_published_ca_is_one_line(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    apply_object(api_client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "fake", "cluster": {"server": apply_server.url}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "fake", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    args = [
        "webhook",
        "register",
        "--kubeconfig",
        str(kubeconfig),
        "-n",
        NS,
        "--self-issued-certs",
        "--wait",
        "0",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "has no ca.crt" in result.output and "Traceback" not in result.output


def test_a_broken_secret_is_one_line_and_left_alone(
    apply_server: Any, api_client: Any, tmp_path: Path
) -> None:
    _setup(api_client)
    broken = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SELF_ISSUED_SECRET, "namespace": NS},
        "type": "Opaque",
        "data": {CA_CERT: base64.b64encode(b"not a certificate").decode()},
    }
    apply_object(api_client, broken)
    with pytest.raises(SelfCertError) as caught:
        _issuer(api_client, tmp_path, "a").reconcile()
    assert "ca.crt is not a PEM certificate" in str(caught.value) and "\n" not in str(caught.value)
    assert _secret(apply_server) == {CA_CERT: b"not a certificate"}


def test_serve_without_a_namespace_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    monkeypatch.setattr("stockade.webhooks.selfcert.SERVICE_ACCOUNT_NAMESPACE", tmp_path / "absent")
    args = ["webhook", "serve", "--tls-cert", str(tmp_path / "c"), "--tls-key", str(tmp_path / "k")]
    result = CliRunner().invoke(app, [*args, "--self-issued-certs"])
    assert result.exit_code == 2 and "POD_NAMESPACE" in result.output, result.output
