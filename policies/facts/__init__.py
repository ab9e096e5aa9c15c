"""Analyzers: cross-object knowledge computed once in Python and handed to rules as `input.facts`.

Rego never walks the whole cluster. Each gate builds an :class:`Inventory` from what it can see (the
scanned set, the admission cache, a cluster's lists), and :func:`facts_for` gives each object the
facts its rules need, computed by the same code in every gate.

Owns: the :class:`Inventory` (:mod:`.inventory`) and one module per analyzer, listed in
:data:`ANALYZERS`: ServiceAccounts and RBAC (:mod:`.rbac`, the effective permissions and escalation
paths), sandbox runtime classes, egress reach (:mod:`.egress` over the network-policy models of
:mod:`.netpol`), Azure private links and identities, the AKS cluster under Kubernetes objects
(:mod:`.aks_cluster`), exposure, credentials, network-policy use, image references (:mod:`.images`).

May import: :mod:`stockade.policies.model`, :mod:`stockade.policies.kinds`,
:mod:`stockade.policies.decoding`, :mod:`stockade.policies.config`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stockade.policies.facts import (
    aks_cluster,
    azure,
    credentials,
    egress,
    exposure,
    images,
    netpol_use,
    rbac,
    sandbox,
    serviceaccounts,
)
from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.workloads import pod_template

__all__ = ["ANALYZERS", "Inventory", "facts_for", "inventory_of"]

Analyzer = Callable[[Mapping[str, Any], Inventory, "Mapping[str, Any] | None"], dict[str, Any]]

#: The analyzers, in the order their facts are merged.
ANALYZERS: tuple[Analyzer, ...] = (
    serviceaccounts.facts,
    rbac.facts,
    sandbox.facts,
    egress.facts,
    azure.facts,
    aks_cluster.facts,
    exposure.facts,
    credentials.facts,
    netpol_use.facts,
    images.facts,
)


def facts_for(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts` of an object; for a workload, of one of its pod specs (``input.pod``; the first
    one when not given), since each may run as another ServiceAccount, RuntimeClass or labels."""
    if pod is None:
        pod = pod_template(obj)
    out: dict[str, Any] = {}
    for analyzer in ANALYZERS:
        out.update(analyzer(obj, inventory, pod))
    return out


def inventory_of(objects: Iterable[Mapping[str, Any]], *, complete: bool = False) -> Inventory:
    inv = Inventory(complete=complete)
    for obj in objects:
        inv.add(obj)
    return inv
