"""The objects a gate knows about, indexed by kind, namespace and name.

`complete` says whether absence means "does not exist" (a cluster's inventory, or a scan told the
manifests are the whole cluster) or only "not seen" (a scan of some files). Rules must not report a
missing object as missing when the inventory is incomplete.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS
from stockade.policies.model import OLDEST_MINOR, arm_type

#: set by the API server on every namespace (1.21+), so a selector may always name it
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Kinds the analyzers read; others are not kept, so an audit's inventory stays small.
# RBAC kinds: policies/facts/rbac.py; RuntimeClass: policies/facts/sandbox.py (a handful per cluster);
# NetworkPolicy, and the Cilium and Calico policies that isolate pods too: policies/facts/egress.py.
# Calico's namespaced NetworkPolicy shares its kind name with Kubernetes'; it is indexed under
# CALICO_NETWORK_POLICY (its name in stockade.policies.kinds.api) so the two never collide.
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


#: kinds read only through a projection (Inventory.add keeps the ServiceAccounts a Pod runs as, never
#: the Pod): the webhook's cache watches them too, so paths through running pods know them
PROJECTED_KINDS = frozenset({"Pod"})
#: every kind a gate's inventory is filled from
WATCHED_KINDS = INDEXED_KINDS | PROJECTED_KINDS

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
        "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
    }
)


#: version keys of the two projections below (Inventory.versions), read by the RBAC graph's cache
RUNS = "@runs-as"
TOKEN_SECRETS = "@token-secrets"
#: the labels and images of one pod template
PodShape = tuple[frozenset[tuple[str, str]], frozenset[str]]
POD_LABELS = "@pod-labels"
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"
TOKEN_SECRET_ACCOUNT = "kubernetes.io/service-account.name"


def _pod_projection(obj: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[PodShape]] | None:
    """For a workload or Pod, in one pass over its pod templates: the ServiceAccounts its pods run as
    (`default` when none is named) and their (labels, images); None for an object that runs no pods."""
    info = DEFAULT_WORKLOADS.info(obj)
    if info is None or not info.runs_pods:
        return None
    accounts, shapes = set(), set()
    for pod in DEFAULT_WORKLOADS.pods(obj):
        spec = pod.get("spec") or {}
        name = spec.get("serviceAccountName") or spec.get("serviceAccount")
        accounts.add(name if isinstance(name, str) and name else "default")
        labels = (pod.get("metadata") or {}).get("labels") or {}
        images = frozenset(
            str(c["image"])
            for group in ("initContainers", "containers")
            for c in (spec.get(group) or ())
            if isinstance(c, Mapping) and isinstance(c.get("image"), str)
        )
        if isinstance(labels, Mapping):
            shapes.add((frozenset((str(k), str(v)) for k, v in labels.items()), images))
    return frozenset(accounts), frozenset(shapes)


def _shift(counts: dict[Any, int], old: frozenset[Any], new: frozenset[Any]) -> bool:
    """Move one object's contribution to per-item counts from `old` to `new`; whether an item
    appeared or disappeared (the set of counted items changed)."""
    changed = False
    for item in old - new:
        counts[item] -= 1
        if not counts[item]:
            del counts[item]
            changed = True
    for item in new - old:
        counts[item] = counts.get(item, 0) + 1
        changed = changed or counts[item] == 1
    return changed


def _token_account(obj: Mapping[str, Any]) -> str | None:
    """The ServiceAccount a legacy token Secret is for (its annotation), else None. Only the name and
    the annotation are kept: never a Secret's data."""
    if obj.get("kind") != "Secret" or obj.get("type") != TOKEN_SECRET_TYPE:
        return None
    md = obj.get("metadata") or {}
    annotations = md.get("annotations") if isinstance(md, Mapping) else None
    name = annotations.get(TOKEN_SECRET_ACCOUNT) if isinstance(annotations, Mapping) else None
    return name if isinstance(name, str) and name else None


class Inventory:
    def __init__(self, *, complete: bool = False, cluster: str | None = None) -> None:
        self.complete = complete
        # The cluster these objects come from (audit context, webhook's cluster); None in a scan.
        # It selects per-cluster settings such as the sandbox profile (facts/sandbox.py).
        self.cluster = cluster
        # The AKS cluster (a name or resource id, `azure.cluster` in stockade.yaml) the Kubernetes
        # objects run on, when the inventory holds several managed clusters (facts/aks_cluster.py)
        self.azure_cluster: str | None = None
        # The Kubernetes minor version the objects are for (rbac.kubernetes_version, set by the gate):
        # what the API server authorizes differs by version (policies/facts/rbac.py). Unknown: the
        # oldest supported, which allows the most.
        self.kubernetes_minor = OLDEST_MINOR
        # kind -> (namespace, name) -> object: analyzers read one kind at a time (of_kind), often
        # once per evaluated object, so a kind's objects must not cost a walk over every kind's.
        self._objects: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {}
        # Bumped per kind on every add/remove, so analyzers can cache what they derive from a kind.
        self.versions: dict[str, int] = {}
        # Projections of objects that are not kept (policies/facts/rbac.py reads them): the
        # ServiceAccounts each workload's or Pod's pods run as, keyed (kind, namespace, name); and the
        # legacy token Secrets, (namespace, name) -> the ServiceAccount they hold a token of.
        self._runs: dict[tuple[str, str, str], frozenset[str]] = {}
        # namespace -> ServiceAccount -> how many workloads/pods run as it; RUNS is bumped only when
        # an account starts or stops running somewhere, not on every pod (the webhook sees pods churn)
        self._running: dict[str, dict[str, int]] = {}
        self._token_secrets: dict[tuple[str, str], str] = {}
        # namespace -> the label sets of the pods its workloads and Pods run, with how many objects
        # run each (policies/facts/netpol_use.py: which NetworkPolicies select no pod)
        self._labels: dict[tuple[str, str, str], frozenset[PodShape]] = {}
        self._label_sets: dict[str, dict[PodShape, int]] = {}

    def add(self, obj: Mapping[str, Any], *, variant: bool = False) -> None:
        """Keep ``obj``, replacing the object of its kind, namespace and name (a watch's update);
        with ``variant``, beside it when they differ (``facts.inventory_of``'s renders)."""
        azure = arm_type(obj)
        if azure is not None:
            if azure in INDEXED_ARM_TYPES:
                self.versions[azure] = self.versions.get(azure, 0) + 1
                self._objects.setdefault(azure, {})[("", str(obj.get("id") or obj.get("name") or ""))] = obj
            return
        kind = index_kind(obj)
        md = obj.get("metadata") or {}
        key = (str(md.get("namespace") or ""), str(md.get("name") or ""))
        if kind not in INDEXED_KINDS:
            projection = _pod_projection(obj)
            if projection is not None:
                self._set_runs((kind, *key), projection[0])
                self._set_labels((kind, *key), projection[1])
            elif kind == "Secret":
                account = _token_account(obj)
                if account is not None or key in self._token_secrets:
                    if account is None:
                        del self._token_secrets[key]
                    else:
                        self._token_secrets[key] = account
                    self.versions[TOKEN_SECRETS] = self.versions.get(TOKEN_SECRETS, 0) + 1
            return
        self.versions[kind] = self.versions.get(kind, 0) + 1
        objects = self._objects.setdefault(kind, {})
        if variant:
            n = 1
            while key in objects and objects[key] != obj:
                n += 1
                key = (key[0], f"{md.get('name') or ''}\x00{n}")
        objects[key] = obj

    def remove(self, kind: str, namespace: str | None, name: str) -> None:
        self.versions[kind] = self.versions.get(kind, 0) + 1
        self._objects.get(kind, {}).pop((namespace or "", name), None)
        self._set_runs((kind, namespace or "", name), frozenset())
        self._set_labels((kind, namespace or "", name), frozenset())
        if kind == "Secret" and self._token_secrets.pop((namespace or "", name), None) is not None:
            self.versions[TOKEN_SECRETS] = self.versions.get(TOKEN_SECRETS, 0) + 1

    def _set_runs(self, key: tuple[str, str, str], accounts: frozenset[str]) -> None:
        old = self._runs.pop(key, frozenset())
        if accounts:
            self._runs[key] = accounts
        counts = self._running.setdefault(key[1], {})
        changed = _shift(counts, old, accounts)
        if not counts:
            del self._running[key[1]]
        if changed:
            self.versions[RUNS] = self.versions.get(RUNS, 0) + 1

    def _set_labels(self, key: tuple[str, str, str], sets: frozenset[PodShape]) -> None:
        old = self._labels.pop(key, frozenset())
        if sets:
            self._labels[key] = sets
        if old == sets:
            return
        counts = self._label_sets.setdefault(key[1], {})
        _shift(counts, old, sets)
        if not counts:
            del self._label_sets[key[1]]
        self.versions[POD_LABELS] = self.versions.get(POD_LABELS, 0) + 1

    def pod_label_sets(self, namespace: str) -> list[dict[str, str]]:
        """The label sets of the pods that workloads and Pods of a namespace run."""
        return [dict(labels) for labels in {labels for labels, _ in self._label_sets.get(namespace, {})}]

    def pod_namespaces(self) -> list[str]:
        """The namespaces whose workloads and Pods run pods."""
        return sorted(self._label_sets)

    def pod_shapes(self, namespace: str) -> list[tuple[dict[str, str], frozenset[str]]]:
        """(labels, images) of the pods that workloads and Pods of a namespace run."""
        return [(dict(labels), images) for labels, images in self._label_sets.get(namespace, {})]

    def running_accounts(self) -> dict[str, frozenset[str]]:
        """namespace -> the ServiceAccounts its workloads' and pods' pods run as."""
        return {ns: frozenset(counts) for ns, counts in self._running.items()}

    def token_account(self, namespace: str, secret: str) -> str | None:
        """The ServiceAccount a legacy token Secret holds a token of, if the Secret was seen."""
        return self._token_secrets.get((namespace, secret))

    def holds_token_secrets(self) -> bool:
        """Whether any legacy token Secret was seen (else no pod can read one that is known)."""
        return bool(self._token_secrets)

    def token_secrets(self) -> dict[tuple[str, str], str]:
        """(namespace, Secret name) -> the ServiceAccount of every legacy token Secret seen."""
        return dict(self._token_secrets)

    def namespace_labels(self, name: str) -> dict[str, str]:
        """A namespace's labels as the API server keeps them: its Namespace object's (when seen) plus
        ``kubernetes.io/metadata.name``, which the API server sets on every namespace."""
        ns = self.get("Namespace", None, name)
        md = ns.get("metadata") if ns is not None else None
        labels = md.get("labels") if isinstance(md, Mapping) else None
        out = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}
        out[NAMESPACE_NAME_LABEL] = name
        return out

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
