"""The webhook's CA and serving certificates: chain, names, usage, key file permissions, rotation."""

from __future__ import annotations

import datetime as dt
import ipaddress
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.webhooks.certs import CA_RENEW_BEFORE, SERVING_RENEW_BEFORE, CertificateAuthority, ensure_certs


def test_issued_certificate_chains_to_the_ca_and_names_the_service(tmp_path: Path) -> None:
    ca = CertificateAuthority.create()
    issued = ca.issue(["stockade.stockade-system.svc"], ["127.0.0.1"])
    issued.write(tmp_path / "tls.crt", tmp_path / "tls.key")
    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    cert.verify_directly_issued_by(ca.cert)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["stockade.stockade-system.svc"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert cert.serial_number == issued.serial
    assert stat.S_IMODE((tmp_path / "tls.key").stat().st_mode) == 0o600


def test_a_certificate_needs_a_name() -> None:
    with pytest.raises(ValueError, match="at least one DNS name or IP address"):
        CertificateAuthority.create().issue()


# -- the certificate directory: creation, idempotence, rotation (time injected) ---------------------------

NAMES = ["stockade-webhook.stockade-system.svc", "stockade-webhook.stockade-system.svc.cluster.local"]
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def _serving(directory: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate((directory / "tls.crt").read_bytes())


def _cas(directory: Path) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates((directory / "ca.crt").read_bytes())


def test_certs_are_created_then_kept(tmp_path: Path) -> None:
    report = ensure_certs(tmp_path, NAMES, now=T0)
    assert (report.ca, report.serving) == ("created", "created")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    for key in ("ca.key", "tls.key"):
        assert stat.S_IMODE((tmp_path / key).stat().st_mode) == 0o600
    _serving(tmp_path).verify_directly_issued_by(_cas(tmp_path)[0])
    before = _files(tmp_path)
    again = ensure_certs(tmp_path, list(reversed(NAMES)), now=T0 + dt.timedelta(days=300))
    assert (again.ca, again.serving, again.changed) == ("kept", "kept", False)
    assert _files(tmp_path) == before


def test_serving_certificate_is_reissued_before_expiry_and_the_ca_kept(tmp_path: Path) -> None:
    ensure_certs(tmp_path, NAMES, now=T0)
    ca_before = (tmp_path / "ca.crt").read_bytes()
    expires = _serving(tmp_path).not_valid_after_utc
    report = ensure_certs(tmp_path, NAMES, now=expires - SERVING_RENEW_BEFORE + dt.timedelta(minutes=1))
    assert report.ca == "kept" and report.serving.startswith("reissued: expires")
    assert (tmp_path / "ca.crt").read_bytes() == ca_before  # the caBundle does not change
    assert _serving(tmp_path).not_valid_after_utc > expires
    _serving(tmp_path).verify_directly_issued_by(_cas(tmp_path)[0])


def test_changed_names_or_a_foreign_key_reissue(tmp_path: Path) -> None:
    ensure_certs(tmp_path, NAMES, now=T0)
    report = ensure_certs(tmp_path, [*NAMES, "webhook.example.com"], now=T0)
    assert report.serving == "reissued: DNS names changed"
    san = _serving(tmp_path).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "webhook.example.com" in san.get_values_for_type(x509.DNSName)
    (tmp_path / "tls.key").write_bytes(CertificateAuthority.create().key_pem)
    assert ensure_certs(tmp_path, NAMES, now=T0).serving.startswith("reissued: tls.key")


def test_an_expiring_ca_is_rotated_and_the_old_one_stays_trusted(tmp_path: Path) -> None:
    ensure_certs(tmp_path, NAMES, now=T0)
    (old_ca,) = _cas(tmp_path)
    near = old_ca.not_valid_after_utc - CA_RENEW_BEFORE + dt.timedelta(days=1)
    report = ensure_certs(tmp_path, NAMES, now=near)
    assert (
        report.ca.startswith("rotated: expires")
        and report.serving == "reissued: not issued by the current CA"
    )
    new_ca, kept_old = _cas(tmp_path)
    assert kept_old == old_ca and new_ca != old_ca
    _serving(tmp_path).verify_directly_issued_by(new_ca)
    # Once the old CA has expired, the next rotation drops it from the bundle.
    later = new_ca.not_valid_after_utc - CA_RENEW_BEFORE + dt.timedelta(days=1)
    ensure_certs(tmp_path, NAMES, now=later)
    assert old_ca not in _cas(tmp_path) and len(_cas(tmp_path)) == 2


def test_the_certs_command_never_prints_key_material(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["webhook", "certs", "--output-dir", str(tmp_path), "--dns", "hook.example.com"]
    )
    assert result.exit_code == 0, result.output
    assert "CA: created" in result.output and "serving certificate: created" in result.output
    assert "hook.example.com" in result.output
    keys = [(tmp_path / k).read_text() for k in ("ca.key", "tls.key")]
    assert "PRIVATE" not in result.output and not any(k.splitlines()[1] in result.output for k in keys)
    result = runner.invoke(
        app, ["webhook", "certs", "--output-dir", str(tmp_path), "--dns", "hook.example.com"]
    )
    assert "CA: kept" in result.output and "serving certificate: kept" in result.output
    manager = runner.invoke(app, ["webhook", "certs", "--cert-manager", "--namespace", "guard"])
    assert manager.exit_code == 0
    assert (
        "kind: Certificate" in manager.output
        and "cert-manager.io/inject-ca-from: guard/stockade-webhook" in manager.output
    )
