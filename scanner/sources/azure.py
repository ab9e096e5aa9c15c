"""A live Azure subscription as a source: the ARM resources the ``STK-AZ-*`` rules and facts read.

- **Credentials** come from ``azure-identity``: ``--auth cli`` (the ``az login`` session),
  ``workload-identity`` (a pod labelled ``azure.workload.identity/use: "true"`` whose ServiceAccount
  carries ``azure.workload.identity/client-id``), or ``default`` (``DefaultAzureCredential``'s chain).
  A token is requested once before anything is listed, so a missing credential is one actionable
  message (:class:`AzureAuthError`), never a pile of failed calls.
- **Only list operations** of the management clients are called (storage accounts and the blob
  containers of each account that has a blob service, Storage Sync Services, private endpoints,
  VNets, route tables, firewalls, firewall policy rule collection groups, private DNS zones and their
  VNet links, AKS clusters; Key Vaults, container registries, Azure Machine Learning workspaces and
  Azure AI services accounts). Containers cost one call per account: their ``publicAccess`` is not in
  the account's own properties. Never ``list_keys``, ``regenerate_key``, or any SAS
  operation: stockade needs no data-plane access and asks for none (Reader is enough).
- **Paging and throttling** are the SDK's: ``nextLink`` pages are followed by its pagers, and its
  retry policy retries 429 and 5xx with ``Retry-After`` honoured (``retry_total`` attempts).
- **Raw ARM JSON**: every model is turned back into its REST shape (``as_dict()``), the shape the
  rules read from ARM templates and Resource Graph exports too. Key Vaults, registries, ML
  workspaces and AI services accounts are listed without a management SDK of their own: the
  subscription-wide list operation of their REST API (:data:`REST_LISTS`, api-versions pinned) through
  azure-mgmt-core's ARM pipeline (the same credential, retry policy and transport as the clients),
  whose ``value`` items already are that shape; ``nextLink`` pages are followed.
- **Gaps, not crashes**: a list that is forbidden (403) or keeps failing becomes a
  :class:`~stockade.scanner.result.CoverageGap`; a 404 (a resource provider not registered, a zone
  deleted while listing) means nothing of that type exists.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from stockade.policies.facts.azure import canonical_type
from stockade.scanner.result import CoverageGap

AuthMode = Literal["cli", "workload-identity", "default"]
ARM_SCOPE = "https://management.azure.com/.default"
RETRY_TOTAL = 5
#: the one actionable message when no credential works
AUTH_HELP = {
    "cli": "run `az login` (and `az account set --subscription SUB`), then retry",
    "workload-identity": (
        'run in a pod labelled azure.workload.identity/use: "true" whose ServiceAccount is annotated '
        "with azure.workload.identity/client-id (AZURE_CLIENT_ID, AZURE_TENANT_ID and "
        "AZURE_FEDERATED_TOKEN_FILE are then set)"
    ),
    "default": (
        'run `az login`, or run in a pod labelled azure.workload.identity/use: "true" whose ServiceAccount '
        "is annotated with azure.workload.identity/client-id, or set AZURE_CLIENT_ID/AZURE_TENANT_ID"
    ),
}
HTTP_NOT_FOUND, HTTP_FORBIDDEN = 404, 403
ARM_ENDPOINT = "https://management.azure.com"
#: ARM types listed through their REST API (no management SDK dependency): type -> api-version of the
#: subscription-wide list operation (GET /subscriptions/{id}/providers/{type}); the rules' property
#: names are those of these versions
REST_LISTS: dict[str, str] = {
    "Microsoft.KeyVault/vaults": "2023-07-01",
    "Microsoft.ContainerRegistry/registries": "2023-07-01",
    "Microsoft.MachineLearningServices/workspaces": "2024-04-01",
    "Microsoft.CognitiveServices/accounts": "2023-05-01",
}


class AzureAuthError(Exception):
    """No usable Azure credential; the message says what to do."""


def make_credential(auth: AuthMode) -> Any:
    """The azure-identity credential for ``--auth``; construction errors become :class:`AzureAuthError`."""
    from azure import identity

    try:
        if auth == "cli":
            return identity.AzureCliCredential()
        if auth == "workload-identity":
            return identity.WorkloadIdentityCredential()
        return identity.DefaultAzureCredential(exclude_interactive_browser_credential=True)
    except (ValueError, identity.CredentialUnavailableError) as exc:
        raise AzureAuthError(_auth_message(auth, exc)) from None


def check_credential(credential: Any, auth: AuthMode) -> None:
    """Ask for an ARM token once, so that a missing credential fails before any listing."""
    from azure.core.exceptions import ClientAuthenticationError

    try:
        credential.get_token(ARM_SCOPE)
    except (ClientAuthenticationError, ValueError, OSError) as exc:
        raise AzureAuthError(_auth_message(auth, exc)) from None


def _auth_message(auth: AuthMode, exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return f"no Azure credential (--auth {auth}): {first}. To fix: {AUTH_HELP[auth]}"


@dataclass(slots=True)
class SubscriptionSnapshot:
    """What was listed of one subscription: ARM objects, gaps, and the number of list calls."""

    subscription: str
    resources: list[dict[str, Any]] = field(default_factory=list)
    gaps: list[CoverageGap] = field(default_factory=list)
    lists: int = 0


class AzureReader:
    """Lists one subscription's resources through the Azure management SDK clients."""

    def __init__(self, subscription: str, credential: Any, **client_options: Any) -> None:
        from azure.mgmt.containerservice import ContainerServiceClient
        from azure.mgmt.network import NetworkManagementClient
        from azure.mgmt.privatedns import PrivateDnsManagementClient
        from azure.mgmt.storage import StorageManagementClient
        from azure.mgmt.storagesync import StorageSyncMgmtClient

        options = {"retry_total": RETRY_TOTAL, **client_options}
        self.subscription = subscription
        self.storage = StorageManagementClient(credential, subscription, **options)
        self.network = NetworkManagementClient(credential, subscription, **options)
        self.dns = PrivateDnsManagementClient(credential, subscription, **options)
        self.aks = ContainerServiceClient(credential, subscription, **options)
        self.sync = StorageSyncMgmtClient(credential, subscription, **options)
        self.arm = _arm_client(credential, **options)

    def close(self) -> None:
        for client in (self.storage, self.network, self.dns, self.aks, self.sync, self.arm):
            client.close()

    def __enter__(self) -> AzureReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def snapshot(self) -> SubscriptionSnapshot:
        snap = SubscriptionSnapshot(self.subscription)
        net, sync = self.network, self.sync.storage_sync_services
        listings: list[tuple[str, Callable[[], Iterable[Any]]]] = [
            ("Microsoft.Storage/storageAccounts", self.storage.storage_accounts.list),
            ("Microsoft.ContainerService/managedClusters", self.aks.managed_clusters.list),
            ("Microsoft.Network/privateEndpoints", net.private_endpoints.list_by_subscription),
            ("Microsoft.Network/virtualNetworks", net.virtual_networks.list_all),
            ("Microsoft.Network/routeTables", net.route_tables.list_all),
            ("Microsoft.Network/azureFirewalls", net.azure_firewalls.list_all),
            ("Microsoft.Network/firewallPolicies", net.firewall_policies.list_all),
            ("Microsoft.Network/privateDnsZones", self.dns.private_zones.list),
            (
                "Microsoft.StorageSync/storageSyncServices",
                sync.list_by_subscription,
            ),
        ]
        listings += [
            (kind, functools.partial(self._rest_list, kind, version)) for kind, version in REST_LISTS.items()
        ]
        for kind, call in listings:
            snap.resources.extend(self._list(snap, kind, call))
        for obj in list(snap.resources):
            rg, name = _resource_group(str(obj.get("id") or "")), str(obj.get("name") or "")
            if obj["type"] == "Microsoft.Network/privateDnsZones" and rg:
                snap.resources.extend(
                    self._list(
                        snap,
                        "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
                        functools.partial(self.dns.virtual_network_links.list, rg, name),
                    )
                )
            elif obj["type"] == "Microsoft.Storage/storageAccounts" and rg and _has_blob_service(obj):
                snap.resources.extend(
                    self._list(
                        snap,
                        "Microsoft.Storage/storageAccounts/blobServices/containers",
                        functools.partial(self.storage.blob_containers.list, rg, name),
                    )
                )
            elif obj["type"] == "Microsoft.Network/firewallPolicies" and rg:
                snap.resources.extend(
                    self._list(
                        snap,
                        "Microsoft.Network/firewallPolicies/ruleCollectionGroups",
                        functools.partial(net.firewall_policy_rule_collection_groups.list, rg, name),
                    )
                )
        return snap

    def _rest_list(self, kind: str, api_version: str) -> Iterator[dict[str, Any]]:
        """The resources of one ARM type in the subscription, page by page (REST shape)."""
        from azure.core.rest import HttpRequest

        url: str | None = (
            f"{ARM_ENDPOINT}/subscriptions/{self.subscription}/providers/{kind}?api-version={api_version}"
        )
        while url:
            response = self.arm.send_request(HttpRequest("GET", url))
            response.raise_for_status()
            body = response.json()
            for item in body.get("value") or []:
                if isinstance(item, dict):
                    yield item
            next_link = body.get("nextLink")
            url = next_link if isinstance(next_link, str) and next_link else None

    def _list(
        self, snap: SubscriptionSnapshot, kind: str, call: Callable[[], Iterable[Any]]
    ) -> list[dict[str, Any]]:
        from azure.core.exceptions import HttpResponseError

        snap.lists += 1
        out: list[dict[str, Any]] = []
        try:
            for model in call():
                obj = model.as_dict() if hasattr(model, "as_dict") else dict(model)
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
