"""A live Azure subscription as a source: the ARM resources the ``STK-AZ-*`` rules and facts read.

- **Credentials** come from ``azure-identity``: ``--auth cli`` (the ``az login`` session),
  ``workload-identity`` (a pod labelled ``azure.workload.identity/use: "true"`` whose ServiceAccount
  carries ``azure.workload.identity/client-id``), or ``default`` (``DefaultAzureCredential``'s chain).
  A token is requested once before anything is listed, so a missing credential is one actionable
  message (:class:`AzureAuthError`), never a pile of failed calls.
- **Only list operations** are called (storage accounts and the blob
  containers of each account that has a blob service, Storage Sync Services, private endpoints,
  VNets, route tables, firewalls, firewall policy rule collection groups, private DNS zones and their
  VNet links, AKS clusters; Key Vaults, container registries, Azure Machine Learning workspaces and
  Azure AI services accounts; user-assigned managed identities and their federated identity
  credentials, one list per identity; role assignments). Containers cost one call per account: their
  ``publicAccess`` is not in the account's own properties. Never ``list_keys``, ``regenerate_key``, or any SAS
  operation: stockade needs no data-plane access and asks for none (Reader is enough).
- **Raw ARM JSON, whatever SDK is installed**: every list is a GET of the REST list operation with
  its api-version pinned (:data:`REST_LISTS`, :data:`CHILD_LISTS`) through azure-mgmt-core's ARM
  pipeline, and its ``value`` items are kept as the service sent them:
  ``{id, name, type, location, properties: {camelCase…}}``, the shape the rules read from ARM templates
  and Resource Graph exports too. No SDK model class is involved (``as_dict()`` of azure-mgmt-storage
  21.1 returns snake_case keys without ``properties``, of later versions the REST keys).
- **Paging and throttling**: ``nextLink`` pages are followed; the pipeline's retry policy retries 429
  and 5xx with ``Retry-After`` honoured (``retry_total`` attempts).
- **Gaps, not crashes**: a list that is forbidden (403) or keeps failing becomes a
  :class:`~stockade.scanner.result.CoverageGap`; a 404 (a resource provider not registered, a zone
  deleted while listing) means nothing of that type exists.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from stockade.policies.facts.azure import canonical_type
from stockade.scanner.result import CoverageGap

AuthMode = Literal["cli", "workload-identity", "default"]
ARM_SCOPE = "https://management.azure.com/.default"
RETRY_TOTAL = 5
#: what to do when no credential works, by --auth (the environment variables named only when unset)
AUTH_HELP = {
    "cli": "run `az login` (and `az account set --subscription SUB`), then retry",
    "workload-identity": (
        'run in a pod labelled azure.workload.identity/use: "true" whose ServiceAccount is annotated '
        "with azure.workload.identity/client-id (AZURE_CLIENT_ID, AZURE_TENANT_ID and "
        "AZURE_FEDERATED_TOKEN_FILE are then set)"
    ),
    "default": (
        'run `az login`, or run in a pod labelled azure.workload.identity/use: "true" whose ServiceAccount '
        "is annotated with azure.workload.identity/client-id"
    ),
}
#: azure-identity's loggers (and MSAL's): silenced while a token is asked for, their news is the message
IDENTITY_LOGGERS = ("azure.identity", "msal")
_SERVICE_PRINCIPAL_ENV = ("AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET")
_WORKLOAD_ENV = {
    "tenant_id": "AZURE_TENANT_ID",
    "client_id": "AZURE_CLIENT_ID",
    "token_file_path": "AZURE_FEDERATED_TOKEN_FILE",
}
_JWT = re.compile(r"eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*")
_TRAILER = re.compile(r"\s(?:Trace ID|Correlation ID|Timestamp):")
_CAUSE_MAX = 300
HTTP_OK, HTTP_NOT_FOUND, HTTP_FORBIDDEN = 200, 404, 403
ARM_ENDPOINT = "https://management.azure.com"
_NETWORK, _STORAGE = "2024-01-01", "2023-05-01"
#: ARM types listed subscription-wide (GET /subscriptions/{id}/providers/{type}) -> the api-version of
#: that list operation. The rules' property names are those of these versions, pinned here so that
#: what is read never depends on which management SDK (or SDK model classes) is installed.
REST_LISTS: dict[str, str] = {
    "Microsoft.Storage/storageAccounts": _STORAGE,
    "Microsoft.ContainerService/managedClusters": "2024-05-01",
    "Microsoft.Network/privateEndpoints": _NETWORK,
    "Microsoft.Network/virtualNetworks": _NETWORK,
    "Microsoft.Network/routeTables": _NETWORK,
    "Microsoft.Network/azureFirewalls": _NETWORK,
    "Microsoft.Network/firewallPolicies": _NETWORK,
    "Microsoft.Network/privateDnsZones": "2020-06-01",
    "Microsoft.StorageSync/storageSyncServices": "2022-06-01",
    "Microsoft.KeyVault/vaults": "2023-07-01",
    "Microsoft.ContainerRegistry/registries": "2023-07-01",
    "Microsoft.MachineLearningServices/workspaces": "2024-04-01",
    "Microsoft.CognitiveServices/accounts": "2023-05-01",
    "Microsoft.ManagedIdentity/userAssignedIdentities": "2023-01-31",
    # every role assignment at, above and below the subscription (STK-AZ-041 judges their scope)
    "Microsoft.Authorization/roleAssignments": "2022-04-01",
}
#: parent type -> (child type, path below the parent's id, api-version): one list per parent
CHILD_LISTS: dict[str, tuple[str, str, str]] = {
    "Microsoft.Network/privateDnsZones": (
        "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
        "virtualNetworkLinks",
        "2020-06-01",
    ),
    "Microsoft.Storage/storageAccounts": (
        "Microsoft.Storage/storageAccounts/blobServices/containers",
        "blobServices/default/containers",
        _STORAGE,
    ),
    "Microsoft.Network/firewallPolicies": (
        "Microsoft.Network/firewallPolicies/ruleCollectionGroups",
        "ruleCollectionGroups",
        _NETWORK,
    ),
    "Microsoft.ManagedIdentity/userAssignedIdentities": (
        "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
        "federatedIdentityCredentials",
        "2023-01-31",
    ),
}


class AzureAuthError(Exception):
    """No usable Azure credential; the message (one line) says which credential failed, why, and what
    to do."""


class _FailedCredentials(logging.Handler):
    """Collects what the credential chain logs when one of its credentials fails (rather than being
    unavailable): that credential is the real cause."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.failed: list[tuple[str, BaseException]] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if (
            "raised unexpected error" in str(record.msg)
            and len(args) >= 3
            and isinstance(args[2], BaseException)
        ):
            self.failed.append((str(args[1]), args[2]))


@contextmanager
def _identity_quiet() -> Iterator[_FailedCredentials]:
    """azure-identity's and MSAL's loggers go to a collector only (no multi-line warnings on stderr)."""
    collector = _FailedCredentials()
    saved = []
    for name in IDENTITY_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level, logger.propagate))
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.addHandler(collector)
    try:
        yield collector
    finally:
        for logger, level, propagate in saved:
            logger.removeHandler(collector)
            logger.setLevel(level)
            logger.propagate = propagate


def make_credential(auth: AuthMode) -> Any:
    """The azure-identity credential for ``--auth``; construction errors become :class:`AzureAuthError`."""
    from azure import identity

    with _identity_quiet():
        try:
            if auth == "cli":
                return identity.AzureCliCredential()
            if auth == "workload-identity":
                return identity.WorkloadIdentityCredential()
            return identity.DefaultAzureCredential(exclude_interactive_browser_credential=True)
        except (ValueError, identity.CredentialUnavailableError) as exc:
            name = {"cli": "AzureCliCredential", "workload-identity": "WorkloadIdentityCredential"}
            raise AzureAuthError(_auth_message(auth, name.get(auth, "DefaultAzureCredential"), exc)) from None


def check_credential(credential: Any, auth: AuthMode) -> None:
    """Ask for an ARM token once, so that a missing credential fails before any listing."""
    from azure.core.exceptions import ClientAuthenticationError

    with _identity_quiet() as seen:
        try:
            credential.get_token(ARM_SCOPE)
        except (ClientAuthenticationError, ValueError, OSError) as exc:
            name, cause = seen.failed[-1] if seen.failed else (type(credential).__name__, exc)
            raise AzureAuthError(_auth_message(auth, name, cause)) from None


def _auth_message(auth: AuthMode, name: str, exc: BaseException) -> str:
    """One line: which credential, what failed, what to do; never a token or secret."""
    return f"no Azure credential (--auth {auth}): {_cause(name, exc)}. To fix: {_advice(auth, name, exc)}"


def _unset(names: Iterable[str]) -> list[str]:
    return [n for n in names if not os.environ.get(n)]


def _cause(name: str, exc: BaseException) -> str:
    if isinstance(exc, OSError) and "WorkloadIdentity" in name:
        path = exc.filename or os.environ.get("AZURE_FEDERATED_TOKEN_FILE") or "?"
        return (
            f"{name}: cannot read the federated token file {path} (AZURE_FEDERATED_TOKEN_FILE): "
            f"{exc.strerror or type(exc).__name__}"
        )
    text = str(exc)
    if "Attempted credentials:" in text:
        attempts = re.findall(
            r"^\t(\w+): (.*(?:\n(?!\t).*)*)", text.split("Attempted credentials:", 1)[1], re.M
        )
        parts = [f"{n}: {_unavailable(n, m)}" for n, m in attempts if n in _CHAIN_SHOWN]
        return f"{name} found no available credential ({'; '.join(parts)})"
    return f"{name}: {_unavailable(name, text)}"


#: the credentials of DefaultAzureCredential's chain a failure message names (the others are noise here)
_CHAIN_SHOWN = (
    "EnvironmentCredential",
    "WorkloadIdentityCredential",
    "ManagedIdentityCredential",
    "AzureCliCredential",
)


def _unavailable(name: str, message: str) -> str:
    """azure-identity's message for one credential, as one short line."""
    missing = re.search(r"Missing required arguments: (.*)", message)
    if "WorkloadIdentity" in name and missing:
        args = re.findall(r"'(\w+)'", missing.group(1))
        return ", ".join(_WORKLOAD_ENV.get(a, a) for a in args) + " not set"
    if name == "EnvironmentCredential" and "not fully configured" in message:
        unset = _unset(_SERVICE_PRINCIPAL_ENV[:2])
        if not os.environ.get("AZURE_CLIENT_SECRET") and not os.environ.get("AZURE_CLIENT_CERTIFICATE_PATH"):
            unset.append("AZURE_CLIENT_SECRET (or AZURE_CLIENT_CERTIFICATE_PATH)")
        return ", ".join(unset) + " not set" if unset else "environment variables not fully configured"
    return _clean(message) or "unavailable"


def _clean(message: str) -> str:
    """Whole sentences of a message, on one line, without troubleshooting links, MSAL's trace trailer,
    tokens or the client secret; at most about 300 characters."""
    text = " ".join(message.split())
    secret = os.environ.get("AZURE_CLIENT_SECRET")
    if secret:
        text = text.replace(secret, "[redacted]")
    text = _TRAILER.split(_JWT.sub("[redacted]", text))[0]
    out = ""
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if not sentence or re.search(r"https?://|troubleshoot", sentence, re.I):
            continue
        if re.fullmatch(r"\w+ authentication unavailable\.", sentence):
            continue  # said by the credential's name and the reason that follows
        if out and len(out) + len(sentence) > _CAUSE_MAX:
            break
        out = f"{out} {sentence}".strip()
    return out[:_CAUSE_MAX].rstrip(". ")


def _advice(auth: AuthMode, name: str, exc: BaseException) -> str:
    from azure.core.exceptions import ClientAuthenticationError

    failed = isinstance(exc, ClientAuthenticationError) and "Attempted credentials:" not in str(exc)
    if "WorkloadIdentity" in name and isinstance(exc, OSError):
        return (
            'label the pod azure.workload.identity/use: "true" (the workload identity webhook projects '
            "the token file) and check that AZURE_FEDERATED_TOKEN_FILE names that file"
        )
    if "WorkloadIdentity" in name and failed:
        return (
            "check the federated identity credential of AZURE_CLIENT_ID: its issuer must be the "
            "cluster's OIDC issuer URL and its subject system:serviceaccount:NAMESPACE:SERVICEACCOUNT"
        )
    if name in ("EnvironmentCredential", "ClientSecretCredential") and failed:
        return (
            "check AZURE_CLIENT_SECRET: the secret's value (not its id), not expired, of the app "
            "registration AZURE_CLIENT_ID in AZURE_TENANT_ID"
        )
    if name == "ManagedIdentityCredential" and failed:
        return "check the managed identity assigned to this VM or pod (AZURE_CLIENT_ID: a user-assigned one)"
    if name == "AzureCliCredential" or auth == "cli":
        return AUTH_HELP["cli"]
    if auth == "workload-identity":
        return AUTH_HELP["workload-identity"]
    unset = _unset(_SERVICE_PRINCIPAL_ENV)
    if not unset:
        return AUTH_HELP["default"]
    return f"{AUTH_HELP['default']}, or set {' and '.join(unset)} (a service principal)"


@dataclass(slots=True)
class SubscriptionSnapshot:
    """What was listed of one subscription: ARM objects, gaps, and the number of list calls."""

    subscription: str
    resources: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[CoverageGap] = field(default_factory=list)
    lists: int = 0


class AzureReader:
    """Lists one subscription's resources as ARM REST JSON, through one ARM pipeline."""

    def __init__(self, subscription: str, credential: Any, **client_options: Any) -> None:
        options = {"retry_total": RETRY_TOTAL, **client_options}
        self.subscription = subscription
        self.arm = _arm_client(credential, **options)

    def close(self) -> None:
        self.arm.close()

    def __enter__(self) -> AzureReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def snapshot(self) -> SubscriptionSnapshot:
        snap = SubscriptionSnapshot(self.subscription)
        base = f"/subscriptions/{self.subscription}/providers"
        for kind, version in REST_LISTS.items():
            snap.resources.extend(self._list(snap, kind, f"{base}/{kind}", version))
        for obj in list(snap.resources):
            child = CHILD_LISTS.get(obj["type"])
            rid = str(obj.get("id") or "")
            if child is None or not _resource_group(rid):
                continue
            kind, suffix, version = child
            if kind.endswith("/containers") and not _has_blob_service(obj):
                continue
            snap.resources.extend(self._list(snap, kind, f"{quote(rid)}/{suffix}", version))
        return snap

    def _pages(self, path: str, api_version: str) -> Iterator[dict[str, Any]]:
        """The ``value`` items of a list operation, page by page (``nextLink``), as the REST API sent them."""
        from azure.core.exceptions import HttpResponseError
        from azure.core.rest import HttpRequest
        from azure.mgmt.core.exceptions import ARMErrorFormat

        url: str | None = f"{ARM_ENDPOINT}{path}?api-version={api_version}"
        while url:
            response = self.arm.send_request(HttpRequest("GET", url))
            if response.status_code != HTTP_OK:
                raise HttpResponseError(response=response, error_format=ARMErrorFormat)
            body = response.json()
            if not isinstance(body, dict):
                raise ValueError("the list response is not a JSON object")
            for item in body.get("value") or []:
                if isinstance(item, dict):
                    yield item
            next_link = body.get("nextLink")
            url = next_link if isinstance(next_link, str) and next_link else None

    def _list(
        self, snap: SubscriptionSnapshot, kind: str, path: str, api_version: str
    ) -> list[dict[str, Any]]:
        from azure.core.exceptions import AzureError, HttpResponseError

        snap.lists += 1
        out: list[dict[str, Any]] = []
        try:
            for obj in self._pages(path, api_version):
                obj["type"] = canonical_type(str(obj.get("type") or kind))
                out.append(obj)
        except HttpResponseError as exc:
            status = exc.status_code
            if status == HTTP_NOT_FOUND:
                return []  # provider not registered / parent gone: nothing of this type
            what = "forbidden" if status == HTTP_FORBIDDEN else "could not be listed"
            reason = (str(exc.message or exc.reason or "").splitlines() or [""])[0][:200]
            snap.gaps.append(
                CoverageGap(f"azure/{self.subscription}/{kind}", f"{kind} {what}: {status} {reason}")
            )
            return []
        except (AzureError, ValueError) as exc:  # connection failures after the retries, a body not JSON
            reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            snap.gaps.append(
                CoverageGap(f"azure/{self.subscription}/{kind}", f"{kind} could not be listed: {reason}")
            )
            return []
        return out


def _arm_client(credential: Any, **options: Any) -> Any:
    """An ARM pipeline with the management clients' policies: bearer token for ARM, retries (429 and
    5xx, ``Retry-After`` honoured), the same transport and options."""
    from azure.core.pipeline import policies
    from azure.mgmt.core import ARMPipelineClient
    from azure.mgmt.core.policies import ARMChallengeAuthenticationPolicy, ARMHttpLoggingPolicy

    transport = options.pop("transport", None)
    chain = [
        policies.RequestIdPolicy(**options),
        policies.HeadersPolicy(**options),
        policies.UserAgentPolicy(sdk_moniker="stockade", **options),
        policies.ProxyPolicy(**options),
        policies.ContentDecodePolicy(**options),
        policies.RetryPolicy(**options),
        ARMChallengeAuthenticationPolicy(credential, ARM_SCOPE),
        policies.CustomHookPolicy(**options),
        ARMHttpLoggingPolicy(**options),
    ]
    extra = {"transport": transport} if transport is not None else {}
    return ARMPipelineClient(base_url=ARM_ENDPOINT, policies=chain, **extra)


def _has_blob_service(account: dict[str, Any]) -> bool:
    """FileStorage accounts hold file shares only; every other kind has a blob service."""
    return str(account.get("kind") or "") != "FileStorage"


def _resource_group(resource_id: str) -> str:
    parts = resource_id.split("/")
    lowered = [p.lower() for p in parts]
    if "resourcegroups" in lowered:
        i = lowered.index("resourcegroups")
        return parts[i + 1] if i + 1 < len(parts) else ""
    return ""
