"""The objects a gate knows about, indexed by kind, namespace and name.

`complete` says whether absence means "does not exist" (a cluster's inventory, or a scan told the
manifests are the whole cluster) or only "not seen" (a scan of some files). Rules must not report a
missing object as missing when the inventory is incomplete.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from stockade.policies.model import arm_type

# Kinds the analyzers read; others are not kept, so an audit's inventory stays small.
# RBAC kinds: policies/facts/rbac.py; RuntimeClass: policies/facts/sandbox.py (a handful per cluster);
# NetworkPolicy, and the Cilium and Calico policies that isolate pods too: policies/facts/egress.py.
# Calico's namespaced NetworkPolicy shares its kind name with Kubernetes'; it is indexed under
# CALICO_NETWORK_POLICY (its name in stockade.policies.kinds) so the two never collide.
CALICO_NETWORK_POLICY = "NetworkPolicy.projectcalico.org"
INDEXED_KINDS = frozenset(
    {
        "Namespace",
        "ServiceAccount",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "RuntimeClass",
        "NetworkPolicy",
        "CiliumNetworkPolicy",
        "CiliumClusterwideNetworkPolicy",
        CALICO_NETWORK_POLICY,
        "GlobalNetworkPolicy",
    }
)


def index_kind(obj: Mapping[str, Any]) -> str:
    """The kind an object is indexed under: its `kind`, but Calico's NetworkPolicy by its group."""
    kind = str(obj.get("kind") or "")
    if kind == "NetworkPolicy" and str(obj.get("apiVersion") or "").startswith("projectcalico.org/"):
        return CALICO_NETWORK_POLICY
    return kind


# Azure resources the Azure analyzer reads (policies/facts/azure.py ARM_TYPES), keyed by their id
INDEXED_ARM_TYPES = frozenset(
    {
        "Microsoft.ContainerService/managedClusters",
        "Microsoft.ContainerService/managedClusters/agentPools",
        "Microsoft.Network/privateEndpoints",
        "Microsoft.Network/privateDnsZones",
        "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
        "Microsoft.Network/virtualNetworks",
        "Microsoft.Network/virtualNetworks/subnets",
        "Microsoft.Network/routeTables",
        "Microsoft.Network/azureFirewalls",
        "Microsoft.Network/firewallPolicies/ruleCollectionGroups",
    }
)


class Inventory:
    def __init__(self, *, complete: bool = False, cluster: str | None = None) -> None:
        self.complete = complete
        # The cluster these objects come from (audit context, webhook's cluster); None in a scan.
        # It selects per-cluster settings such as the sandbox profile (facts/sandbox.py).
        self.cluster = cluster
        # kind -> (namespace, name) -> object: analyzers read one kind at a time (of_kind), often
        # once per evaluated object, so a kind's objects must not cost a walk over every kind's.
        self._objects: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {}
        # Bumped per kind on every add/remove, so analyzers can cache what they derive from a kind.
        self.versions: dict[str, int] = {}

    def add(self, obj: Mapping[str, Any]) -> None:
        azure = arm_type(obj)
        if azure is not None:
            if azure in INDEXED_ARM_TYPES:
                self.versions[azure] = self.versions.get(azure, 0) + 1
                self._objects.setdefault(azure, {})[("", str(obj.get("id") or obj.get("name") or ""))] = obj
            return
        kind = index_kind(obj)
        if kind not in INDEXED_KINDS:
            return
        md = obj.get("metadata") or {}
        self.versions[kind] = self.versions.get(kind, 0) + 1
        self._objects.setdefault(kind, {})[(str(md.get("namespace") or ""), str(md.get("name") or ""))] = obj

    def remove(self, kind: str, namespace: str | None, name: str) -> None:
        self.versions[kind] = self.versions.get(kind, 0) + 1
        self._objects.get(kind, {}).pop((namespace or "", name), None)

    def get(self, kind: str, namespace: str | None, name: str) -> Mapping[str, Any] | None:
        return self._objects.get(kind, {}).get((namespace or "", name))

    def of_kind(self, kind: str) -> Iterator[Mapping[str, Any]]:
        return iter(self._objects.get(kind, {}).values())

    def objects(self) -> list[Mapping[str, Any]]:
        """Every object kept, all kinds (a copy of the list: safe to use after the caller's lock)."""
        return [o for by_key in self._objects.values() for o in by_key.values()]

    @property
    def version(self) -> int:
        """Grows with every add or remove: a cheap "has anything changed" for derived data."""
        return sum(self.versions.values())

    def __len__(self) -> int:
        return sum(len(objects) for objects in self._objects.values())
