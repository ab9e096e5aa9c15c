"""Cross-resource facts of the Azure side: private endpoints, private DNS links, AKS egress.

Azure resources are ARM-shaped objects (``id``, ``type``, ``name``, ``properties``) from a live
subscription, a Resource Graph export, an ARM template or a terraform plan. A storage account's
private endpoints, the DNS zones that resolve them, and an AKS cluster's route to its firewall all
live in other resources, so they are computed here, by the same code for every source, and handed to
the ``STK-AZ-*`` rules as ``input.facts``:

    input.facts.storage = {            # for Microsoft.Storage/storageAccounts
        "privateEndpoints": {"blob": ["Approved"], "file": ["Pending"]},  # statuses per sub-resource
        "dnsZones": {"blob": {"zone": "privatelink.blob.core.windows.net", "found": true,
                              "unlinkedVnets": ["/subscriptions/…/virtualnetworks/vnet-aks"]}},
        "clusterVnets": [...],         # VNets of the AKS clusters seen (ids, lower case)
        "endpointsUnknown": null,      # or why not every endpoint is known (a template's loop not read)
        "complete": true,              # a live audit (absence means absent), not some files
    }
    input.facts.privateLink = {        # for Key Vaults, container registries, Azure ML workspaces and
        "statuses": ["Approved"],      # Azure AI services accounts (PRIVATE_LINK_TYPES): the status of
        "endpointsUnknown": null,      # each private endpoint connection (own list, else the endpoints
        "complete": true,              # declared beside it); unknown as for storage
    }
    input.facts.federation = {         # for userAssignedIdentities/federatedIdentityCredentials
        "clusterIssuers": ["https://eastus.oic.prod-aks.azure.com/tenant/uid"],  # lower case, no "/"
        "clusters": 1, "issuersKnown": true,   # every AKS cluster read has a concrete issuer URL
        "complete": true,
    }
    input.facts.aks = {                # for Microsoft.ContainerService/managedClusters
        "defaultRoute": {"found": true, "nextHopType": "VirtualAppliance",
                         "nextHopIpAddress": "10.0.1.4", "firewall": "fw-hub"} | null,
        "routeKnown": true,            # the cluster subnet's route table was seen
        "firewallWildcardRules": ["allow-all: *"],   # application rules of that firewall with "*"
        "complete": true,
    }

ARM types are case-insensitive; :func:`canonical_type` gives the spelling rules name in METADATA.
Resource ids are compared in lower case; resources from templates and plans whose ids are not known
yet carry ``/providers/<type>/<name>`` ids, matched by type and name (storage account names are
globally unique; so are Key Vault and registry names; ML workspaces and AI services accounts are
matched by type and name too, which two resource groups of one plan could share).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stockade.policies.model import UNKNOWN_PREFIX, arm_type

if TYPE_CHECKING:
    from stockade.policies.facts.inventory import Inventory

STORAGE_ACCOUNT = "Microsoft.Storage/storageAccounts"
BLOB_CONTAINER = "Microsoft.Storage/storageAccounts/blobServices/containers"
STORAGE_SYNC = "Microsoft.StorageSync/storageSyncServices"
MANAGED_CLUSTER = "Microsoft.ContainerService/managedClusters"
AGENT_POOL = "Microsoft.ContainerService/managedClusters/agentPools"
PRIVATE_ENDPOINT = "Microsoft.Network/privateEndpoints"
DNS_ZONE = "Microsoft.Network/privateDnsZones"
DNS_LINK = "Microsoft.Network/privateDnsZones/virtualNetworkLinks"
VNET = "Microsoft.Network/virtualNetworks"
SUBNET = "Microsoft.Network/virtualNetworks/subnets"
ROUTE_TABLE = "Microsoft.Network/routeTables"
FIREWALL = "Microsoft.Network/azureFirewalls"
FIREWALL_POLICY = "Microsoft.Network/firewallPolicies"
RULE_COLLECTION_GROUP = "Microsoft.Network/firewallPolicies/ruleCollectionGroups"
KEY_VAULT = "Microsoft.KeyVault/vaults"
CONTAINER_REGISTRY = "Microsoft.ContainerRegistry/registries"
ML_WORKSPACE = "Microsoft.MachineLearningServices/workspaces"
AI_ACCOUNT = "Microsoft.CognitiveServices/accounts"
USER_IDENTITY = "Microsoft.ManagedIdentity/userAssignedIdentities"
FEDERATED_CREDENTIAL = "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials"
ROLE_ASSIGNMENT = "Microsoft.Authorization/roleAssignments"
#: the resources holding models, images, secrets and inference endpoints whose private endpoints the
#: STK-AZ private-link rules judge (input.facts.privateLink)
PRIVATE_LINK_TYPES: tuple[str, ...] = (KEY_VAULT, CONTAINER_REGISTRY, ML_WORKSPACE, AI_ACCOUNT)

#: the ARM types stockade reads, in their canonical spelling
ARM_TYPES: tuple[str, ...] = (
    STORAGE_ACCOUNT,
    BLOB_CONTAINER,
    STORAGE_SYNC,
    MANAGED_CLUSTER,
    AGENT_POOL,
    PRIVATE_ENDPOINT,
    DNS_ZONE,
    DNS_LINK,
    VNET,
    SUBNET,
    ROUTE_TABLE,
    FIREWALL,
    FIREWALL_POLICY,
    RULE_COLLECTION_GROUP,
    *PRIVATE_LINK_TYPES,
    USER_IDENTITY,
    FEDERATED_CREDENTIAL,
    ROLE_ASSIGNMENT,
)
_CANONICAL = {t.lower(): t for t in ARM_TYPES}

#: the privatelink zone of each storage sub-resource (public Azure cloud)
PRIVATELINK_ZONES = {
    "blob": "privatelink.blob.core.windows.net",
    "file": "privatelink.file.core.windows.net",
    "dfs": "privatelink.dfs.core.windows.net",
    "queue": "privatelink.queue.core.windows.net",
    "table": "privatelink.table.core.windows.net",
    "web": "privatelink.web.core.windows.net",
}


def canonical_type(kind: str) -> str:
    """The canonical spelling of an ARM type (Resource Graph exports lower-case them)."""
    return _CANONICAL.get(kind.lower(), kind)


def ref_key(resource_id: str) -> str:
    """A comparable key for a resource id: ``provider.namespace/type/name`` (child types too), lower case.

    Subscriptions and resource groups are dropped so that a template's ``/providers/…`` id matches
    the live one; this is only used for globally unique names (storage accounts) or together with
    the zone name (DNS links).
    """
    text = resource_id.strip().lower().rstrip("/")
    _, sep, tail = text.rpartition("/providers/")
    return tail if sep else text


def vnet_of_subnet(subnet_id: str) -> str:
    text = subnet_id.strip().lower()
    return text.split("/subnets/", 1)[0] if "/subnets/" in text else ""


def _props(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    props = obj.get("properties")
    return props if isinstance(props, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _of_type(inventory: Inventory, kind: str) -> Iterable[Mapping[str, Any]]:
    return inventory.of_kind(kind)


class _Index:
    """What every storage account's and cluster's facts share, computed once per inventory.

    Without it each account would walk every private endpoint and zone link again: `stockade scan`
    of a 4,000-resource export took 13.6 s of CPU, and takes 2.2 s with it. The index is kept on the
    inventory and rebuilt when the inventory's size changes (audits and scans build it once, then
    only read it).
    """

    def __init__(self, inventory: Inventory) -> None:
        self.size = len(inventory)
        self.connections = _endpoint_connections(inventory)
        self.zones, self.links = _zone_links(inventory)
        self.vnets = _cluster_vnets(inventory)


def _index(inventory: Inventory) -> _Index:
    index: _Index | None = getattr(inventory, "_azure_index", None)
    if index is None or index.size != len(inventory):
        index = _Index(inventory)
        inventory._azure_index = index  # type: ignore[attr-defined]
    return index


# --- storage accounts ----------------------------------------------------------------------------


def _endpoint_connections(inventory: Inventory) -> dict[str, list[tuple[str, list[str], str]]]:
    """Private endpoint connections per target (ref key): (endpoint id, group ids, status)."""
    out: dict[str, list[tuple[str, list[str], str]]] = {}
    for pe in _of_type(inventory, PRIVATE_ENDPOINT):
        props = _props(pe)
        for field, default in (
            ("privateLinkServiceConnections", "Approved"),
            ("manualPrivateLinkServiceConnections", "Pending"),
        ):
            for conn in _list(props.get(field)):
                cprops = _props(conn) if isinstance(conn, Mapping) else {}
                target = cprops.get("privateLinkServiceId")
                if not isinstance(target, str) or not target:
                    continue
                status = _get(cprops, "privateLinkServiceConnectionState", "status") or default
                groups = [str(g).lower() for g in _list(cprops.get("groupIds"))]
                out.setdefault(ref_key(target), []).append(
                    (str(pe.get("id") or "").lower(), groups, str(status))
                )
    return out


def _cluster_vnets(inventory: Inventory) -> list[str]:
    vnets: set[str] = set()
    for cluster in _of_type(inventory, MANAGED_CLUSTER):
        for pool in _list(_props(cluster).get("agentPoolProfiles")):
            vnet = vnet_of_subnet(str(_get(pool, "vnetSubnetID") or ""))
            if vnet:
                vnets.add(vnet)
    for pool in _of_type(inventory, AGENT_POOL):
        vnet = vnet_of_subnet(str(_props(pool).get("vnetSubnetID") or ""))
        if vnet:
            vnets.add(vnet)
    return sorted(vnets)


def _zone_links(inventory: Inventory) -> tuple[set[str], dict[str, set[str]]]:
    """Zone names seen, and the VNets (ids, lower case) each zone name is linked to."""
    zones = {str(z.get("name") or "").lower() for z in _of_type(inventory, DNS_ZONE)}
    links: dict[str, set[str]] = {}
    for link in _of_type(inventory, DNS_LINK):
        zone = _link_zone(link)
        vnet = str(_get(_props(link), "virtualNetwork", "id") or "").strip().lower()
        if zone and vnet:
            links.setdefault(zone, set()).add(vnet)
    return zones, links


def _link_zone(link: Mapping[str, Any]) -> str:
    """The zone of a virtualNetworkLinks resource: from its id, else its ``zone/link`` name."""
    rid = str(link.get("id") or "").lower()
    if "/privatednszones/" in rid:
        return rid.split("/privatednszones/", 1)[1].split("/", 1)[0]
    name = str(link.get("name") or "").lower()
    return name.split("/", 1)[0] if "/" in name else ""


def _connection_statuses(obj: Mapping[str, Any], kind: str, index: _Index) -> dict[str, list[str]]:
    """The statuses of a resource's private endpoint connections, per sub-resource (group id).

    A live resource (or a Resource Graph export) lists its connections, and the approval state lives
    on the target's side; the endpoint resource, when seen, says which sub-resource each one serves.
    Templates and plans have no such list: there the endpoints declared beside the resource count.
    """
    key = ref_key(str(obj.get("id") or f"/providers/{kind}/{obj.get('name')}"))
    connections = index.connections.get(key, [])
    groups_of = {pe_id: groups for pe_id, groups, _ in connections}
    statuses: dict[str, list[str]] = {}
    own = [c for c in _list(_props(obj).get("privateEndpointConnections")) if isinstance(c, Mapping)]
    if own:
        for conn in own:
            cprops = _props(conn)
            pe_id = str(_get(cprops, "privateEndpoint", "id") or "").lower()
            status = str(_get(cprops, "privateLinkServiceConnectionState", "status") or "Pending")
            for group in groups_of.get(pe_id) or ["unknown"]:
                statuses.setdefault(group, []).append(status)
    else:
        for _, groups, status in connections:
            for group in groups or ["unknown"]:
                statuses.setdefault(group, []).append(status)
    return statuses


def _endpoints_unknown(obj: Mapping[str, Any]) -> str | None:
    """Why the resource's private endpoints are not all known: a template's copy loop that may create
    them was not read (the ARM reader writes ``privateEndpointConnections`` unknown, saying which);
    None when they are."""
    own = _props(obj).get("privateEndpointConnections")
    if isinstance(own, str) and own.startswith(UNKNOWN_PREFIX):
        return own[len(UNKNOWN_PREFIX) :].removesuffix("]")
    return None


def storage_facts(account: Mapping[str, Any], inventory: Inventory) -> dict[str, Any]:
    index = _index(inventory)
    statuses = _connection_statuses(account, STORAGE_ACCOUNT, index)
    zones, links, vnets = index.zones, index.links, index.vnets
    dns: dict[str, Any] = {}
    for group, zone in PRIVATELINK_ZONES.items():
        linked = links.get(zone, set())
        dns[group] = {
            "zone": zone,
            "found": zone in zones,
            "unlinkedVnets": [v for v in vnets if v not in linked],
        }
    return {
        "storage": {
            "privateEndpoints": {g: sorted(s) for g, s in sorted(statuses.items())},
            "endpointsUnknown": _endpoints_unknown(account),
            "dnsZones": dns,
            "clusterVnets": vnets,
            "complete": inventory.complete,
        }
    }


# --- Key Vaults, registries, ML workspaces, AI services accounts -----------------------------------


def private_link_facts(obj: Mapping[str, Any], kind: str, inventory: Inventory) -> dict[str, Any]:
    """The statuses of every private endpoint connection of the resource (each has one sub-resource:
    vault, registry, amlworkspace, account), sorted."""
    statuses = _connection_statuses(obj, kind, _index(inventory))
    return {
        "privateLink": {
            "statuses": sorted(s for group in statuses.values() for s in group),
            "endpointsUnknown": _endpoints_unknown(obj),
            "complete": inventory.complete,
        }
    }


# --- AKS clusters --------------------------------------------------------------------------------


def _subnet(subnet_id: str, inventory: Inventory) -> Mapping[str, Any] | None:
    wanted = subnet_id.strip().lower()
    for subnet in _of_type(inventory, SUBNET):
        if str(subnet.get("id") or "").lower() == wanted:
            return subnet
    for vnet in _of_type(inventory, VNET):
        for subnet in _list(_props(vnet).get("subnets")):
            if isinstance(subnet, Mapping) and str(subnet.get("id") or "").lower() == wanted:
                return subnet
    return None


def _by_id(inventory: Inventory, kind: str, resource_id: str) -> Mapping[str, Any] | None:
    wanted = resource_id.strip().lower()
    for obj in _of_type(inventory, kind):
        if str(obj.get("id") or "").lower() == wanted:
            return obj
    return None


def _firewall_at(ip: str, inventory: Inventory) -> Mapping[str, Any] | None:
    """The firewall with this private IP; in a template (where the IP is only known after deployment
    and the route says ``[reference(resourceId('…/azureFirewalls', 'fw')).…privateIPAddress]``), the
    firewall that expression names."""
    if ip.startswith("[") and "azurefirewalls" in ip.lower():
        named = set(re.findall(r"azurefirewalls/([^/'\")]+)", ip.lower()))
        for fw in _of_type(inventory, FIREWALL):
            name = str(fw.get("name") or "").lower()
            if name in named or f"'{name}'" in ip.lower():
                return fw
        return None
    for fw in _of_type(inventory, FIREWALL):
        for conf in _list(_props(fw).get("ipConfigurations")):
            if _get(conf, "properties", "privateIPAddress") == ip:
                return fw
    return None


def _wildcard_rules(firewall: Mapping[str, Any], inventory: Inventory) -> list[str]:
    """Allowing application rules of a firewall (classic rules or its policy) whose targets include ``*``."""
    found: list[str] = []
    for coll in _list(_props(firewall).get("applicationRuleCollections")):
        if str(_get(coll, "properties", "action", "type") or "Allow").lower() != "allow":
            continue
        for rule in _list(_get(coll, "properties", "rules")):
            if "*" in [str(f).strip() for f in _list(_get(rule, "targetFqdns"))]:
                found.append(f"{_get(coll, 'name')}/{_get(rule, 'name')}")
    policy_id = str(_get(_props(firewall), "firewallPolicy", "id") or "").lower()
    if policy_id:
        for group in _of_type(inventory, RULE_COLLECTION_GROUP):
            if not str(group.get("id") or "").lower().startswith(policy_id + "/"):
                continue
            for coll in _list(_props(group).get("ruleCollections")):
                if str(_get(coll, "action", "type") or "Allow").lower() != "allow":
                    continue
                for rule in _list(_get(coll, "rules")):
                    if _get(rule, "ruleType") != "ApplicationRule":
                        continue
                    if "*" in [str(f).strip() for f in _list(_get(rule, "targetFqdns"))]:
                        found.append(f"{_get(group, 'name')}/{_get(coll, 'name')}/{_get(rule, 'name')}")
    return found


def aks_facts(cluster: Mapping[str, Any], inventory: Inventory) -> dict[str, Any]:
    subnet_ids = [
        str(_get(pool, "vnetSubnetID") or "")
        for pool in _list(_props(cluster).get("agentPoolProfiles"))
        if _get(pool, "vnetSubnetID")
    ]
    route: dict[str, Any] | None = None
    known = False
    wildcard: list[str] = []
    for subnet_id in subnet_ids[:1]:  # outbound traffic leaves through the system pool's subnet
        subnet = _subnet(subnet_id, inventory)
        table_id = str(_get(subnet, "properties", "routeTable", "id") or "")
        table = _by_id(inventory, ROUTE_TABLE, table_id) if table_id else None
        known = subnet is not None and (table is not None or not table_id)
        for r in _list(_props(table).get("routes")) if table is not None else []:
            if _get(r, "properties", "addressPrefix") == "0.0.0.0/0":
                ip = str(_get(r, "properties", "nextHopIpAddress") or "")
                firewall = _firewall_at(ip, inventory) if ip else None
                route = {
                    "found": True,
                    "nextHopType": _get(r, "properties", "nextHopType"),
                    "nextHopIpAddress": ip or None,
                    "firewall": firewall.get("name") if firewall is not None else None,
                }
                if firewall is not None:
                    wildcard = _wildcard_rules(firewall, inventory)
    return {
        "aks": {
            "defaultRoute": route,
            "routeKnown": known,
            "firewallWildcardRules": wildcard,
            "complete": inventory.complete,
        }
    }


# --- federated identity credentials -----------------------------------------------------------------


def _issuer(url: Any) -> str:
    return url.strip().rstrip("/").lower() if isinstance(url, str) else ""


def federation_facts(inventory: Inventory) -> dict[str, Any]:
    """The OIDC issuer URLs of the AKS clusters read beside a federated identity credential: a
    credential for a Kubernetes subject whose issuer is none of them trusts a cluster stockade was
    not given (``clusters`` counts the clusters read; issuers only known after deployment, such as a
    template's ``reference()``, are not listed and leave ``issuersKnown`` false)."""
    issuers, unknown = [], False
    clusters = list(_of_type(inventory, MANAGED_CLUSTER))
    for cluster in clusters:
        url = _get(_props(cluster), "oidcIssuerProfile", "issuerURL")
        if isinstance(url, str) and url.startswith("https://"):
            issuers.append(_issuer(url))
        else:
            unknown = True
    return {
        "federation": {
            "clusterIssuers": sorted(set(issuers)),
            "clusters": len(clusters),
            "issuersKnown": bool(clusters) and not unknown,
            "complete": inventory.complete,
        }
    }


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    kind = arm_type(obj)
    if kind == FEDERATED_CREDENTIAL:
        return federation_facts(inventory)
    if kind == STORAGE_ACCOUNT:
        return storage_facts(obj, inventory)
    if kind == MANAGED_CLUSTER:
        return aks_facts(obj, inventory)
    if kind in PRIVATE_LINK_TYPES:
        return private_link_facts(obj, kind, inventory)
    return {}
