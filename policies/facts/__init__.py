"""Analyzers: cross-object knowledge computed once in Python and handed to rules as `input.facts`.

Rego never walks the whole cluster. Each gate builds an :class:`Inventory` from what it can see (the
scanned set, the admission cache, a cluster's lists), and :func:`facts_for` gives each object the
facts its rules need, computed by the same code in every gate.

Owns: the :class:`Inventory` (:mod:`.inventory`) and one module per analyzer, listed in
:data:`ANALYZERS` (each imported when an object it reads is first evaluated): ServiceAccounts and
RBAC (:mod:`.rbac`, the effective permissions and escalation paths), sandbox runtime classes,
egress reach (:mod:`.egress` over the network-policy models of :mod:`.netpol`), Azure private links
and identities, the AKS cluster under Kubernetes objects (:mod:`.aks_cluster`), exposure,
credentials, network-policy use, image references (:mod:`.images`).

May import: :mod:`stockade.policies.model`, :mod:`stockade.policies.kinds`,
:mod:`stockade.policies.decoding`, :mod:`stockade.policies.config`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.workloads import pod_template

__all__ = ["ANALYZERS", "AnalyzerEntry", "Inventory", "facts_for", "inventory_of"]

Analyzer = Callable[[Mapping[str, Any], Inventory, "Mapping[str, Any] | None"], dict[str, Any]]

#: the analyzers' `facts` functions, by module name, once imported
_LOADED: dict[str, Analyzer] = {}


class AnalyzerEntry(NamedTuple):
    """One analyzer: the `facts` function of :mod:`stockade.policies.facts.<module>`, imported the first
    time an object it reads is evaluated (a one-file scan of a Deployment never imports the RBAC
    graph, the Ray exposure reader or the network-policy use check).

    `kinds`: the objects (their `kind`) it gives facts for; None: any object (every analyzer of pod
    specs). `inventory_kinds`: it reads any object once the gate's inventory has held one of these
    (`Inventory.versions`). For any other object its `facts` returns {}:
    tests/policies/test_facts_registry.py holds each entry to its module's own kinds, and every
    object's facts, analyzers skipped, to those of all the analyzers run on it."""

    module: str
    kinds: frozenset[str] | None = None
    inventory_kinds: tuple[str, ...] = ()

    def reads(self, obj: Mapping[str, Any], inventory: Inventory) -> bool:
        return (
            self.kinds is None
            or obj.get("kind") in self.kinds
            or any(inventory.versions.get(k) for k in self.inventory_kinds)
        )

    @property
    def facts(self) -> Analyzer:
        found = _LOADED.get(self.module)
        if found is None:
            found = _LOADED[self.module] = importlib.import_module(f"{__name__}.{self.module}").facts
        return found


#: RoleBinding and ClusterRoleBinding (rbac.BINDING_KINDS): what makes a workload's RBAC facts
_BINDINGS = ("RoleBinding", "ClusterRoleBinding")

#: The analyzers, in the order their facts are merged.
ANALYZERS: tuple[AnalyzerEntry, ...] = (
    AnalyzerEntry("serviceaccounts"),
    AnalyzerEntry("rbac", kinds=frozenset(_BINDINGS), inventory_kinds=_BINDINGS),
    AnalyzerEntry("sandbox"),
    AnalyzerEntry("egress"),
    AnalyzerEntry("azure"),
    AnalyzerEntry("aks_cluster"),
    # Services and the Ray custom resources (exposure.RAY_CLUSTER_SPECS)
    AnalyzerEntry("exposure", kinds=frozenset({"Service", "RayCluster", "RayJob", "RayService"})),
    AnalyzerEntry("credentials"),
    # Kubernetes' and Calico's NetworkPolicy (one kind name), Cilium's policies (netpol.cilium.KINDS)
    AnalyzerEntry(
        "netpol_use",
        kinds=frozenset({"NetworkPolicy", "CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy"}),
    ),
    AnalyzerEntry("images"),
)


def facts_for(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts` of an object; for a workload, of one of its pod specs (``input.pod``; the first
    one when not given), since each may run as another ServiceAccount, RuntimeClass or labels."""
    if pod is None:
        pod = pod_template(obj)
    out: dict[str, Any] = {}
    for facts in _plan(obj, inventory):
        out.update(facts(obj, inventory, pod))
    return out


#: the kinds whose presence in an inventory brings in an analyzer (AnalyzerEntry.inventory_kinds)
_INVENTORY_KINDS = tuple(dict.fromkeys(k for a in ANALYZERS for k in a.inventory_kinds))
#: the analyzers that read an object, by its kind and which of _INVENTORY_KINDS the inventory has held
_PLANS: dict[tuple[str, tuple[bool, ...]], tuple[Analyzer, ...]] = {}
#: kinds kept in _PLANS at most (a stream of made-up kinds cannot grow it without bound)
_MOST_PLANS = 4096


def _plan(obj: Mapping[str, Any], inventory: Inventory) -> tuple[Analyzer, ...]:
    """The `facts` functions of the analyzers that read ``obj`` (AnalyzerEntry.reads), decided once per
    kind and inventory state rather than ten tests per pod spec: what `reads` looks at is the object's
    kind and which inventory kinds the inventory has held."""
    kind = obj.get("kind")
    if not isinstance(kind, str):
        kind = ""  # not a kind's name: no analyzer of named kinds reads it (a list could not be asked)
    versions = inventory.versions
    key = (kind, tuple([bool(versions.get(k)) for k in _INVENTORY_KINDS]))
    plan = _PLANS.get(key)
    if plan is None:
        plan = tuple(a.facts for a in ANALYZERS if a.reads({"kind": kind}, inventory))
        if len(_PLANS) < _MOST_PLANS:
            _PLANS[key] = plan
    return plan


def inventory_of(
    objects: Iterable[Mapping[str, Any]], *, complete: bool = False, renders: bool = False
) -> Inventory:
    """The inventory of ``objects``. ``renders``: they may come from several renders of one install
    (a chart and its committed output, kustomize overlays into other namespaces), where a binding of
    one name names another namespace's accounts in each: every variant of a binding is kept (grants
    add up), where a cluster's API server holds one object per name and the last would replace the
    others (KServe's localmodel ClusterRoleBinding of config/, overlays/kubeflow and the chart: two
    of the three controllers were "not an API client")."""
    inv = Inventory(complete=complete)
    for obj in objects:
        inv.add(obj, variant=renders and obj.get("kind") in _BINDINGS)
    return inv
