"""Cross-layer facts: the AKS cluster a Kubernetes object runs on, joined from the Azure layer.

Some in-cluster controls are only as good as the cluster under them: a NetworkPolicy is not enforced
on a cluster without a network policy engine, a pod labelled for workload identity gets no token on a
cluster without the OIDC issuer and the workload identity webhook, a Kata runtime class needs a Kata
node pool, and a GPU pod's node may have a public IP. Where a gate reads both layers (a scan given an
ARM template or terraform plan *and* manifests; an audit with ``--azure-subscription``), the managed
cluster's settings are handed to every Kubernetes object's rules as:

    input.facts.azure.cluster = {
        "name": "aks-prod", "id": "/subscriptions/…/managedClusters/aks-prod",
        "networkPolicy": "none",          # properties.networkProfile.networkPolicy ("none" when unset)
        "networkDataplane": "azure",      # properties.networkProfile.networkDataplane ("azure" when unset)
        "oidcIssuer": false,              # properties.oidcIssuerProfile.enabled (false when unset)
        "workloadIdentity": false,        # properties.securityProfile.workloadIdentity.enabled
        "nodePools": [{"name": "gpu", "vmSize": "Standard_NC24ads_A100_v4",
                       "enableNodePublicIP": true, "workloadRuntime": "OCIContainer",  # AKS defaults
                       "field": "properties.agentPoolProfiles[1]"}, …],   # where the pool is set
    }

A value a template sets by an expression stockade cannot evaluate keeps its "unknown" marker (the
rules read it as the worst case, as the ``STK-AZ`` rules do). Nothing is handed when only one layer
was read: no managed cluster in the inventory, or an Azure resource itself.

**Which cluster** (:func:`joined_cluster`): the one named by ``Inventory.azure_cluster`` (``azure.cluster``
in stockade.yaml: a name or resource id); else the only managed cluster of the inventory; else the one
whose name is the gate's cluster (``--cluster``, the audit's context). Several clusters and none of
these: no join, and :func:`join_problem` says why (the scan's note). The audit adds to each context's
inventory only the AKS cluster whose FQDN serves that context's API server
(:mod:`stockade.scanner.azure_audit`), so it always has at most one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory
from stockade.policies.model import arm_type

MANAGED_CLUSTER = "Microsoft.ContainerService/managedClusters"
AGENT_POOL = "Microsoft.ContainerService/managedClusters/agentPools"
_POOL_FIELDS = ("name", "vmSize", "enableNodePublicIP", "workloadRuntime", "mode", "osType")
#: what AKS gives a pool that does not set the field
_POOL_DEFAULTS = {"enableNodePublicIP": False, "workloadRuntime": "OCIContainer"}


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _or(value: Any, default: Any) -> Any:
    return default if value is None or value == "" else value


def _names(cluster: Mapping[str, Any]) -> set[str]:
    rid = str(cluster.get("id") or "").lower()
    return {str(cluster.get("name") or "").lower(), rid} - {""}


def candidates(inventory: Inventory) -> list[Mapping[str, Any]]:
    return sorted(inventory.of_kind(MANAGED_CLUSTER), key=lambda c: str(c.get("id") or c.get("name")))


def joined_cluster(inventory: Inventory) -> Mapping[str, Any] | None:
    """The managed cluster the inventory's Kubernetes objects run on, or None (see the module)."""
    clusters = candidates(inventory)
    wanted = (getattr(inventory, "azure_cluster", None) or "").strip().lower()
    if wanted:
        return next((c for c in clusters if wanted in _names(c)), None)
    if len(clusters) == 1:
        return clusters[0]
    gate = (inventory.cluster or "").lower()
    return next((c for c in clusters if gate and gate in _names(c)), None)


def join_problem(inventory: Inventory) -> str | None:
    """Why the inventory's managed clusters are not joined to its Kubernetes objects, or None."""
    clusters = candidates(inventory)
    if not clusters or joined_cluster(inventory) is not None:
        return None
    names = ", ".join(str(c.get("name")) for c in clusters)
    wanted = getattr(inventory, "azure_cluster", None)
    if wanted:
        return f"azure.cluster {wanted!r} names none of the AKS clusters read ({names})"
    return (
        f"{len(clusters)} AKS clusters read ({names}) and the manifests name none: set azure.cluster "
        "in stockade.yaml (or --cluster NAME) to say which one they run on"
    )


def _pool(pool: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _or(pool.get(k), _POOL_DEFAULTS.get(k)) for k in _POOL_FIELDS}


def _pools(cluster: Mapping[str, Any], inventory: Inventory) -> list[dict[str, Any]]:
    pools: dict[str, dict[str, Any]] = {}
    profiles = _get(cluster, "properties", "agentPoolProfiles")
    for i, pool in enumerate(profiles if isinstance(profiles, list) else []):
        if isinstance(pool, Mapping):
            entry = _pool(pool)
            entry["field"] = f"properties.agentPoolProfiles[{i}]"
            pools[str(pool.get("name") or i).lower()] = entry
    rid = str(cluster.get("id") or "").lower()
    name = str(cluster.get("name") or "").lower()
    for pool in inventory.of_kind(AGENT_POOL):
        pid = str(pool.get("id") or "").lower()
        pname = str(pool.get("name") or "")
        if not (pid.startswith(rid + "/agentpools/") or pname.lower().startswith(name + "/")):
            continue
        short = pname.rsplit("/", 1)[-1]
        given = pool.get("properties")
        entry = _pool(given if isinstance(given, Mapping) else {})
        entry["name"] = short
        entry["field"] = f"agentPools/{short} properties"
        pools[short.lower()] = entry  # a separate pool resource wins over the cluster's own profile
    return list(pools.values())


def cluster_summary(cluster: Mapping[str, Any], inventory: Inventory) -> dict[str, Any]:
    props = cluster.get("properties") if isinstance(cluster.get("properties"), Mapping) else {}
    return {
        "name": cluster.get("name"),
        "id": cluster.get("id"),
        "networkPolicy": _or(_get(props, "networkProfile", "networkPolicy"), "none"),
        "networkDataplane": _or(_get(props, "networkProfile", "networkDataplane"), "azure"),
        "oidcIssuer": _or(_get(props, "oidcIssuerProfile", "enabled"), False),
        "workloadIdentity": _or(_get(props, "securityProfile", "workloadIdentity", "enabled"), False),
        "nodePools": _pools(cluster, inventory),
    }


def _cached(inventory: Inventory) -> dict[str, Any] | None:
    key = (inventory.versions.get(MANAGED_CLUSTER, 0), inventory.versions.get(AGENT_POOL, 0))
    cache = getattr(inventory, "_aks_join", None)
    if cache is None or cache[0] != key:
        cluster = joined_cluster(inventory)
        cache = (key, cluster_summary(cluster, inventory) if cluster is not None else None)
        inventory._aks_join = cache  # type: ignore[attr-defined]
    return cache[1]


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    if arm_type(obj) is not None or not inventory.versions.get(MANAGED_CLUSTER):
        return {}
    summary = _cached(inventory)
    return {"azure": {"cluster": summary}} if summary is not None else {}
