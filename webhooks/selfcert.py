"""The webhook issues and rotates its own serving certificate (`stockade webhook serve
--self-issued-certs`, the Helm chart's default), as Gatekeeper's cert-controller and Kyverno do.

What it keeps, in the webhook's namespace:

- the Secret ``stockade-webhook-certs`` (type Opaque): a self-signed CA (`ca.crt`, `ca.key`) and
  a serving certificate for the Service's DNS names (`tls.crt`, `tls.key`), shared by every replica;
- the ConfigMap ``stockade-webhook-ca-bundle`` (`ca.crt`, public): what the registration hook
  puts in the caBundle when it registers the webhook;
- the caBundle of its own ValidatingWebhookConfiguration ``stockade-webhook`` (read and patched by
  name, never created: the registration hook creates it once a replica is ready);
- the serving pair as files where `serve` reads them (``--tls-cert``/``--tls-key``), replaced
  atomically: the server reloads a changed pair (admission/server.py).

Replicas agree through the API's conflict semantics, never through timing: the first to create the
Secret wins and every other gets 409 AlreadyExists and reads it; a renewal replaces the Secret with
the resourceVersion it read, so of two replicas renewing at once one gets 409 Conflict, reads the
winner's, and uses it. The CA lives 5 years and is rotated 180 days before it ends, its bundle then
carrying the old CA too; serving certificates live 90 days and are renewed 30 days before they end
(by then, by the new CA). The caBundle is patched, with a JSON patch that first tests the object's
resourceVersion, whenever it differs from the Secret's `ca.crt`, and before the files change.

Nothing here logs or returns key material: outcomes name what changed, errors are one line.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from kubernetes import client as k8s_client

from stockade.admission.inventory import describe_error
from stockade.webhooks.certs import (
    CA_CERT,
    CA_KEY,
    CA_RENEW_BEFORE,
    CA_VALIDITY,
    TLS_CERT,
    TLS_KEY,
    CertDirReport,
    plan_pems,
)
from stockade.webhooks.manifests import CA_BUNDLE_MAP, LABELS, NAME, SELF_ISSUED_SECRET

log = logging.getLogger("stockade.webhooks.selfcert")

SERVING_VALIDITY = dt.timedelta(days=90)
SERVING_RENEW_BEFORE = dt.timedelta(days=30)
#: seconds between two looks at the Secret and the webhook configuration
INTERVAL = 60.0
REQUEST_TIMEOUT = (10.0, 30.0)
HTTP_NOT_FOUND, HTTP_CONFLICT = 404, 409
#: rounds of read-decide-write before giving up until the next interval (each lost race is one)
MAX_ROUNDS = 5
_KEYS = (CA_CERT, CA_KEY, TLS_CERT, TLS_KEY)


class SelfCertError(RuntimeError):
    """A request the API server refused, or a Secret that cannot be read; one line, no key material."""


@dataclass(frozen=True, slots=True)
class Reconciled:
    """What one :meth:`SelfIssuer.reconcile` did (no key material)."""

    #: created (this replica issued the CA: a new Secret, or the chart's empty one filled), renewed,
    #: adopted (another replica wrote it first: 409 AlreadyExists or Conflict, then read), kept
    secret: str
    report: CertDirReport
    ca_bundle_patched: bool  # the webhook configuration's caBundle was changed
    configuration_found: bool  # the webhook configuration exists (not yet, before registration)
    files_written: bool

    def __str__(self) -> str:
        parts = [
            f"Secret {self.secret}",
            f"CA {self.report.ca}",
            f"serving certificate {self.report.serving}",
        ]
        if self.ca_bundle_patched:
            parts.append("caBundle patched")
        elif not self.configuration_found:
            parts.append("webhook configuration not registered yet")
        return ", ".join(parts)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _pems(secret: dict[str, Any]) -> dict[str, bytes]:
    data = secret.get("data") or {}
    out = {}
    for key in _KEYS:
        if isinstance(data.get(key), str):
            try:
                out[key] = base64.b64decode(data[key], validate=True)
            except ValueError:
                raise SelfCertError(f"Secret {SELF_ISSUED_SECRET}: {key} is not base64") from None
    return out


def write_atomically(path: Path, data: bytes, mode: int) -> None:
    """Replace `path` with `data` in one rename (a reader sees the old file or the new one)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SelfIssuer:
    """Keeps the webhook's own CA, serving certificate and caBundle in step (see the module doc)."""

    def __init__(
        self,
        api_client: Any,
        namespace: str,
        dns_names: Sequence[str],
        cert_path: Path,
        key_path: Path,
        *,
        configuration: str = NAME,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.core: Any = k8s_client.CoreV1Api(api_client)
        self.admission: Any = k8s_client.AdmissionregistrationV1Api(api_client)
        self.namespace = namespace
        self.dns_names = tuple(dns_names)
        self.cert_path, self.key_path = cert_path, key_path
        self.configuration = configuration
        self.now = now

    # -- one pass -----------------------------------------------------------------------------------

    def reconcile(self) -> Reconciled:
        """Read (or create) the Secret, renew what is due, then bring the CA ConfigMap and the
        webhook configuration's caBundle in step, then the files; raises SelfCertError."""
        outcome, lost = "kept", False
        for _ in range(MAX_ROUNDS):
            secret = self._read("secrets", SELF_ISSUED_SECRET)
            current = _pems(secret) if secret is not None else {}
            report, changed = self._plan(current)
            if not changed:
                break
            pems = {**current, **changed}
            if secret is None:
                written = self._create("secrets", self._secret(pems))  # 409 AlreadyExists: False
            else:
                written = self._replace("secrets", SELF_ISSUED_SECRET, self._secret(pems, secret))
            if written:
                outcome = "created" if secret is None or CA_CERT not in current else "renewed"
                current = pems
                break
            lost = True  # another replica wrote first: read theirs and decide again
        else:
            raise SelfCertError(
                f"Secret {self.namespace}/{SELF_ISSUED_SECRET}: still changing after {MAX_ROUNDS} rounds"
            )
        if lost and outcome == "kept":
            outcome = "adopted"
        bundle = current[CA_CERT]
        self._sync_ca_map(bundle)
        found, patched = self._sync_ca_bundle(bundle)
        written = self._write_files(current[TLS_CERT], current[TLS_KEY])
        return Reconciled(outcome, report, patched, found, written)

    def _plan(self, current: dict[str, bytes]) -> tuple[CertDirReport, dict[str, bytes]]:
        try:
            return plan_pems(
                current,
                self.dns_names,
                self.now(),
                serving_validity=SERVING_VALIDITY,
                serving_renew_before=SERVING_RENEW_BEFORE,
                ca_validity=CA_VALIDITY,
                ca_renew_before=CA_RENEW_BEFORE,
                reissue_on_ca_rotation=False,
            )
        except ValueError as exc:
            raise SelfCertError(f"Secret {self.namespace}/{SELF_ISSUED_SECRET}: {exc}") from None

    def _secret(self, pems: dict[str, bytes], old: dict[str, Any] | None = None) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "name": SELF_ISSUED_SECRET,
            "namespace": self.namespace,
            "labels": dict(LABELS),
        }
        if old is not None:  # replace only the version that was read (409 Conflict otherwise)
            metadata = {**old["metadata"], "resourceVersion": old["metadata"]["resourceVersion"]}
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata,
            "type": "Opaque",
            "data": {k: _b64(pems[k]) for k in _KEYS},
        }

    def _sync_ca_map(self, bundle: bytes) -> None:
        """The public CA bundle the registration hook reads (it never reads the Secret)."""
        text = bundle.decode()
        for _ in range(MAX_ROUNDS):
            current = self._read("configmaps", CA_BUNDLE_MAP)
            if current is not None and (current.get("data") or {}).get(CA_CERT) == text:
                return
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": CA_BUNDLE_MAP, "namespace": self.namespace, "labels": dict(LABELS)},
                "data": {CA_CERT: text},
            }
            if current is None:
                if self._create("configmaps", body):
                    return
            else:
                body["metadata"] = {
                    **current["metadata"],
                    "resourceVersion": current["metadata"]["resourceVersion"],
                }
                if self._replace("configmaps", CA_BUNDLE_MAP, body):
                    return
        raise SelfCertError(
            f"ConfigMap {self.namespace}/{CA_BUNDLE_MAP}: still changing after {MAX_ROUNDS} rounds"
        )

    def _sync_ca_bundle(self, bundle: bytes) -> tuple[bool, bool]:
        """Patch the caBundle of each webhook of the configuration that calls this Service, if it is
        not the Secret's: (found, patched). Absent before the registration hook runs: (False, False)."""
        wanted = _b64(bundle)
        for _ in range(MAX_ROUNDS):
            try:
                response = self.admission.read_validating_webhook_configuration(
                    self.configuration, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
                )
            except k8s_client.ApiException as exc:
                if exc.status == HTTP_NOT_FOUND:
                    return False, False
                raise SelfCertError(
                    f"reading ValidatingWebhookConfiguration {self.configuration}: {describe_error(exc)}"
                ) from None
            config = orjson.loads(response.data)
            ops: list[dict[str, Any]] = []
            for i, hook in enumerate(config.get("webhooks") or []):
                client = hook.get("clientConfig") or {}
                service = client.get("service") or {}
                if service.get("name") != NAME or service.get("namespace") != self.namespace:
                    continue
                if client.get("caBundle") != wanted:
                    ops.append({"op": "test", "path": f"/webhooks/{i}/name", "value": hook.get("name")})
                    ops.append({"op": "add", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": wanted})
            if not ops:
                return True, False
            version = config["metadata"]["resourceVersion"]
            ops.insert(0, {"op": "test", "path": "/metadata/resourceVersion", "value": version})
            try:
                self.admission.patch_validating_webhook_configuration(
                    self.configuration,
                    ops,
                    _content_type="application/json-patch+json",
                    _preload_content=False,
                    _request_timeout=REQUEST_TIMEOUT,
                )
            except k8s_client.ApiException as exc:
                if exc.status in (HTTP_CONFLICT, 422):  # changed since it was read: read it again
                    continue
                raise SelfCertError(
                    f"patching the caBundle of ValidatingWebhookConfiguration {self.configuration}: "
                    f"{describe_error(exc)}"
                ) from None
            return True, True
        raise SelfCertError(
            f"ValidatingWebhookConfiguration {self.configuration}: still changing after {MAX_ROUNDS} rounds"
        )

    def _write_files(self, cert: bytes, key: bytes) -> bool:
        """The pair where the server reads it, key first (the server rejects a half-changed pair and
        loads it whole once the certificate follows); untouched when already the same."""
        try:
            if (
                self.cert_path.is_file()
                and self.key_path.is_file()
                and self.cert_path.read_bytes() == cert
                and self.key_path.read_bytes() == key
            ):
                return False
            self.cert_path.parent.mkdir(parents=True, exist_ok=True)
            self.key_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.key_path, key, 0o600)
            write_atomically(self.cert_path, cert, 0o644)
        except OSError as exc:
            raise SelfCertError(f"writing {self.cert_path}: {exc.strerror or exc}") from None
        return True

    # -- the API --------------------------------------------------------------------------------------

    def _read(self, plural: str, name: str) -> dict[str, Any] | None:
        method = (
            self.core.read_namespaced_secret if plural == "secrets" else self.core.read_namespaced_config_map
        )
        try:
            response = method(name, self.namespace, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except k8s_client.ApiException as exc:
            if exc.status == HTTP_NOT_FOUND:
                return None
            raise SelfCertError(f"reading {plural} {self.namespace}/{name}: {describe_error(exc)}") from None
        out: dict[str, Any] = orjson.loads(response.data)
        return out

    def _create(self, plural: str, body: dict[str, Any]) -> bool:
        """True if created; False if it already exists (another replica was first)."""
        method = (
            self.core.create_namespaced_secret
            if plural == "secrets"
            else self.core.create_namespaced_config_map
        )
        try:
            method(self.namespace, body, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except k8s_client.ApiException as exc:
            if exc.status == HTTP_CONFLICT:
                return False
            name = body["metadata"]["name"]
            raise SelfCertError(f"creating {plural} {self.namespace}/{name}: {describe_error(exc)}") from None
        return True

    def _replace(self, plural: str, name: str, body: dict[str, Any]) -> bool:
        """True if replaced; False on 409 Conflict (changed since read) or 404 (deleted since)."""
        method = (
            self.core.replace_namespaced_secret
            if plural == "secrets"
            else self.core.replace_namespaced_config_map
        )
        try:
            method(name, self.namespace, body, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except k8s_client.ApiException as exc:
            if exc.status in (HTTP_CONFLICT, HTTP_NOT_FOUND):
                return False
            raise SelfCertError(
                f"replacing {plural} {self.namespace}/{name}: {describe_error(exc)}"
            ) from None
        return True

    # -- the loop -------------------------------------------------------------------------------------

    def run(self, stop: threading.Event, interval: float = INTERVAL) -> None:
        """Reconcile every `interval` seconds until `stop` is set; failures are logged (one line) and
        retried at the next interval: the pair already served stays valid for weeks."""
        while not stop.wait(interval):
            try:
                done = self.reconcile()
            except SelfCertError as exc:
                log.warning("self-issued certificate: %s", exc)
            except Exception as exc:  # the loop outlives anything unexpected (a connection error)
                log.warning("self-issued certificate: %s", describe_error(exc))
            else:
                if done.secret != "kept" or done.ca_bundle_patched or done.files_written:
                    log.info("self-issued certificate: %s", done)

    def start(self, interval: float = INTERVAL) -> Callable[[], None]:
        """Run :meth:`run` in a daemon thread; the returned function stops it."""
        stop = threading.Event()
        thread = threading.Thread(
            target=self.run, args=(stop, interval), name="stockade-selfcert", daemon=True
        )
        thread.start()

        def halt() -> None:
            stop.set()
            thread.join(timeout=10)

        return halt


#: where a pod finds its namespace without the downward API
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def pod_namespace() -> str | None:
    """POD_NAMESPACE (the chart sets it from the downward API), else the mounted ServiceAccount's."""
    given = os.environ.get("POD_NAMESPACE", "").strip()
    if given:
        return given
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def read_ca_bundle(api_client: Any, namespace: str) -> bytes | None:
    """The CA bundle the self-issuing webhook publishes (ConfigMap `stockade-webhook-ca-bundle`), for
    the registration hook; None while it does not exist."""
    core: Any = k8s_client.CoreV1Api(api_client)
    try:
        response = core.read_namespaced_config_map(
            CA_BUNDLE_MAP, namespace, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
        )
    except k8s_client.ApiException as exc:
        if exc.status == HTTP_NOT_FOUND:
            return None
        raise SelfCertError(f"reading ConfigMap {namespace}/{CA_BUNDLE_MAP}: {describe_error(exc)}") from None
    text = (orjson.loads(response.data).get("data") or {}).get(CA_CERT)
    return text.encode() if isinstance(text, str) and text else None
