"""The webhook's CA and serving certificates: chain, names, usage, key file permissions."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from stockade.webhooks.certs import CertificateAuthority


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
