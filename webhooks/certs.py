"""A certificate authority and serving certificates for the webhook (`cryptography`).

The API server calls the webhook over TLS and checks its certificate against the `caBundle` of the
ValidatingWebhookConfiguration, so the webhook needs a CA of its own and a serving certificate for
its Service's DNS names. The demo and tests use the same code with loopback names.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


@dataclass(frozen=True, slots=True)
class Issued:
    """A serving certificate and its private key, PEM-encoded."""

    cert_pem: bytes
    key_pem: bytes
    serial: int

    def write(self, cert_path: Path, key_path: Path) -> None:
        write_private(key_path, self.key_pem)
        cert_path.write_bytes(self.cert_pem)


def write_private(path: Path, data: bytes) -> None:
    """Write a private key readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


class CertificateAuthority:
    """An ECDSA P-256 CA that issues serving certificates."""

    def __init__(self, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate) -> None:
        self.key = key
        self.cert = cert

    @classmethod
    def create(
        cls, common_name: str = "stockade-webhook-ca", valid: dt.timedelta = dt.timedelta(days=365)
    ) -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + valid)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        return cls(key, cert)

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(
        self,
        dns_names: Sequence[str] = (),
        ip_addresses: Sequence[str] = (),
        valid: dt.timedelta = dt.timedelta(days=90),
    ) -> Issued:
        """A serving certificate for these names (the first DNS name, or IP, is the common name)."""
        names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
        if not names:
            raise ValueError("a serving certificate needs at least one DNS name or IP address")
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        serial = x509.random_serial_number()
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name((list(dns_names) + list(ip_addresses))[0]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(serial)
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + valid)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return Issued(cert.public_bytes(serialization.Encoding.PEM), key_pem, serial)
