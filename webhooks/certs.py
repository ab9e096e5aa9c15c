"""A certificate authority and serving certificates for the webhook (`cryptography`).

The API server calls the webhook over TLS and checks its certificate against the `caBundle` of the
ValidatingWebhookConfiguration, so the webhook needs a CA of its own and a serving certificate for
its Service's DNS names. The demo and tests use the same code with loopback names.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
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
        cls,
        common_name: str = "stockade-webhook-ca",
        valid: dt.timedelta = dt.timedelta(days=365),
        now: dt.datetime | None = None,
    ) -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = now or dt.datetime.now(dt.UTC)
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
        now: dt.datetime | None = None,
    ) -> Issued:
        """A serving certificate for these names (the first DNS name, or IP, is the common name)."""
        names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
        if not names:
            raise ValueError("a serving certificate needs at least one DNS name or IP address")
        key = ec.generate_private_key(ec.SECP256R1())
        now = now or dt.datetime.now(dt.UTC)
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

    @property
    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )


# -- a certificate directory, kept valid by `stockade webhook certs` ------------------------------------

CA_CERT, CA_KEY, TLS_CERT, TLS_KEY = "ca.crt", "ca.key", "tls.crt", "tls.key"
#: The CA outlives many serving certificates, so rotating a serving certificate never changes the
#: caBundle; it is replaced only when it nears its own end.
CA_VALIDITY = dt.timedelta(days=5 * 365)
CA_RENEW_BEFORE = dt.timedelta(days=180)
#: A year, renewed in its last 30 days: rotation is a re-run of `certs` (or `install`), so the window
#: in which a forgotten run becomes an outage is long; cert-manager mode rotates on its own.
SERVING_VALIDITY = dt.timedelta(days=365)
SERVING_RENEW_BEFORE = dt.timedelta(days=30)


@dataclass(frozen=True, slots=True)
class CertDirReport:
    """What :func:`ensure_certs` did, for one line of output each: never key material."""

    ca: str  # "created" | "kept" | "rotated: <why>"
    serving: str  # "created" | "kept" | "reissued: <why>"
    ca_not_after: dt.datetime
    serving_not_after: dt.datetime
    dns_names: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return self.ca != "kept" or self.serving != "kept"


def _parse_pems(name: str, data: bytes | None) -> list[x509.Certificate]:
    if data is None:
        return []
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError:
        raise ValueError(f"{name} is not a PEM certificate (delete it to have it created again)") from None


def _parse_key(name: str, data: bytes | None) -> ec.EllipticCurvePrivateKey | None:
    if data is None:
        return None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):  # TypeError: an encrypted key
        raise ValueError(
            f"{name} is not an unencrypted PEM private key (delete it to have it created again)"
        ) from None
    return key if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _load_pems(path: Path) -> list[x509.Certificate]:
    return _parse_pems(path.name, _read(path))


def _same_key(key: ec.EllipticCurvePrivateKey | None, cert: x509.Certificate) -> bool:
    return key is not None and key.public_key() == cert.public_key()


def _dns_names(cert: x509.Certificate) -> set[str]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return set(san.get_values_for_type(x509.DNSName))


def _issued_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def ca_bundle(directory: Path) -> bytes:
    """The PEM CA bundle a ValidatingWebhookConfiguration must trust (`ca.crt`: current CA first)."""
    path = directory / CA_CERT
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no CA certificate (run `stockade webhook certs` first)")
    return path.read_bytes()


def serving_dns_names(directory: Path) -> set[str]:
    """The DNS names of `tls.crt` in `directory` (empty when there is none)."""
    served = _load_pems(directory / TLS_CERT)
    return _dns_names(served[0]) if served else set()


def ensure_certs(
    directory: Path,
    dns_names: Sequence[str],
    now: dt.datetime | None = None,
    serving_renew_before: dt.timedelta = SERVING_RENEW_BEFORE,
    ca_renew_before: dt.timedelta = CA_RENEW_BEFORE,
) -> CertDirReport:
    """Create, or keep valid, the CA and serving certificate in `directory`; idempotent (see
    :func:`plan_certs`, which decides, and :meth:`CertPlan.write`)."""
    plan = plan_certs(directory, dns_names, now, serving_renew_before, ca_renew_before)
    plan.write()
    return plan.report


@dataclass(frozen=True, slots=True)
class CertPlan:
    """What :func:`plan_certs` decided: the report and the files to write (nothing written yet)."""

    directory: Path
    report: CertDirReport
    files: dict[str, bytes]  # file name -> content; private keys are written 0600

    def read(self, name: str) -> bytes:
        """A file as it is after :meth:`write` (the planned content, else the current one)."""
        return self.files[name] if name in self.files else (self.directory / name).read_bytes()

    def write(self) -> None:
        if not self.files:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name in (CA_KEY, CA_CERT, TLS_KEY, TLS_CERT):  # each key before its certificate
            if name in self.files:
                if name.endswith(".key"):
                    write_private(self.directory / name, self.files[name])
                else:
                    (self.directory / name).write_bytes(self.files[name])


def check_writable(directory: Path) -> None:
    """Raise OSError unless `directory` can be created or written (before anything else changes)."""
    existing = directory
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise NotADirectoryError(f"{existing}: not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"{existing}: not writable")
    for name in (CA_CERT, CA_KEY, TLS_CERT, TLS_KEY):
        path = directory / name
        if path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(f"{path}: not writable")


def plan_certs(
    directory: Path,
    dns_names: Sequence[str],
    now: dt.datetime | None = None,
    serving_renew_before: dt.timedelta = SERVING_RENEW_BEFORE,
    ca_renew_before: dt.timedelta = CA_RENEW_BEFORE,
) -> CertPlan:
    """Decide, without writing, how to keep the CA and serving certificate in `directory` valid
    (:func:`plan_pems` on the four files). Every file is read (and an unreadable one raises) before
    anything is decided."""
    current = {
        n: data for n in (CA_CERT, CA_KEY, TLS_CERT, TLS_KEY) if (data := _read(directory / n)) is not None
    }
    report, files = plan_pems(
        current, dns_names, now, serving_renew_before=serving_renew_before, ca_renew_before=ca_renew_before
    )
    return CertPlan(directory, report, files)


def plan_pems(
    current: Mapping[str, bytes],
    dns_names: Sequence[str],
    now: dt.datetime | None = None,
    *,
    serving_validity: dt.timedelta = SERVING_VALIDITY,
    serving_renew_before: dt.timedelta = SERVING_RENEW_BEFORE,
    ca_validity: dt.timedelta = CA_VALIDITY,
    ca_renew_before: dt.timedelta = CA_RENEW_BEFORE,
    reissue_on_ca_rotation: bool = True,
) -> tuple[CertDirReport, dict[str, bytes]]:
    """Decide how to keep a CA and serving certificate valid: `current` maps `ca.crt`, `ca.key`,
    `tls.crt`, `tls.key` to their PEM bytes (a missing one is absent); the answer is the report and
    the entries to replace (empty: keep everything). Key material is never part of the report.

    The serving certificate is re-issued when it is missing, does not match its key, was not issued
    by the current CA, expires within `serving_renew_before`, or names other DNS names than asked.
    The CA is kept unless missing, unreadable, or expiring within `ca_renew_before`; a rotated CA's
    `ca.crt` also carries the previous CA until that one expires, so a server still presenting a
    certificate of the old CA stays trusted while the new bundle propagates. With
    `reissue_on_ca_rotation` false (the self-issuing webhook), a serving certificate of a CA still in
    the bundle that expires before that CA is kept: it is replaced at its own renewal, by the new CA,
    once the bundle trusting the new CA has long reached the API server. An unparseable entry raises
    ValueError naming it.
    """
    now = now or dt.datetime.now(dt.UTC)
    wanted = tuple(dict.fromkeys(dns_names))
    if not wanted:
        raise ValueError("a serving certificate needs at least one DNS name")
    cas = _parse_pems(CA_CERT, current.get(CA_CERT))
    ca_key = _parse_key(CA_KEY, current.get(CA_KEY))
    served = _parse_pems(TLS_CERT, current.get(TLS_CERT))
    tls_key = _parse_key(TLS_KEY, current.get(TLS_KEY))
    files: dict[str, bytes] = {}
    ca: CertificateAuthority | None = None
    ca_state = "created"
    if cas and ca_key is not None and _same_key(ca_key, cas[0]):
        if cas[0].not_valid_after_utc - now > ca_renew_before:
            ca, ca_state = CertificateAuthority(ca_key, cas[0]), "kept"
        else:
            ca_state = f"rotated: expires {cas[0].not_valid_after_utc:%Y-%m-%d}"
    elif cas:
        ca_state = "rotated: ca.key missing or does not match ca.crt"
    trusted = [c for c in cas if c.not_valid_after_utc > now]
    if ca is None:
        ca = CertificateAuthority.create(valid=ca_validity, now=now)
        files[CA_KEY] = ca.key_pem
        files[CA_CERT] = ca.cert_pem + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in trusted)
        trusted = [ca.cert, *trusted]

    serving_state = "kept"
    if not served:
        serving_state = "created"
    elif not _same_key(tls_key, served[0]):
        serving_state = "reissued: tls.key missing or does not match tls.crt"
    elif not _issued_by(served[0], ca.cert) and (
        reissue_on_ca_rotation or not _kept_under_old_ca(served[0], trusted)
    ):
        serving_state = "reissued: not issued by the current CA"
    elif served[0].not_valid_after_utc - now <= serving_renew_before:
        serving_state = f"reissued: expires {served[0].not_valid_after_utc:%Y-%m-%d}"
    elif _dns_names(served[0]) != set(wanted):
        serving_state = "reissued: DNS names changed"
    serving_not_after = served[0].not_valid_after_utc if served else now
    if serving_state != "kept":
        issued = ca.issue(wanted, valid=serving_validity, now=now)
        files[TLS_KEY], files[TLS_CERT] = issued.key_pem, issued.cert_pem
        serving_not_after = x509.load_pem_x509_certificate(issued.cert_pem).not_valid_after_utc
    report = CertDirReport(ca_state, serving_state, ca.cert.not_valid_after_utc, serving_not_after, wanted)
    return report, files


def _kept_under_old_ca(served: x509.Certificate, trusted: Sequence[x509.Certificate]) -> bool:
    """Issued by a CA still in the bundle, which outlives it."""
    return any(_issued_by(served, c) and c.not_valid_after_utc >= served.not_valid_after_utc for c in trusted)
