"""Analyzers: cross-object knowledge computed once in Python and handed to rules as `input.facts`.

Rego never walks the whole cluster. Each gate builds an :class:`Inventory` from what it can see (the
scanned set, the admission cache, a cluster's lists), and :func:`facts_for` gives each object the
facts its rules need, computed by the same code in every gate.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory

__all__ = ["Inventory", "analyzers", "facts_for", "inventory_of"]

Analyzer = Callable[[Mapping[str, Any], Inventory, "Mapping[str, Any] | None"], dict[str, Any]]


@functools.cache
def analyzers() -> tuple[Analyzer, ...]:
    """The analyzers, in the order their facts are merged. Imported on first use, so that importing a
    leaf of this package (workloads, inventory) does not import every analyzer: they import modules
    (shape, the network-policy models) that themselves import those leaves."""
    from stockade.policies.facts import (
        azure,
        credentials,
        egress,
        exposure,
        netpol_use,
        rbac,
        sandbox,
        serviceaccounts,
    )

    return (
        serviceaccounts.facts,
        rbac.facts,
        sandbox.facts,
        egress.facts,
        azure.facts,
        exposure.facts,
        credentials.facts,
        netpol_use.facts,
    )


def facts_for(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts` of an object; for a workload, of one of its pod specs (``input.pod``; the first
    one when not given), since each may run as another ServiceAccount, RuntimeClass or labels."""
    from stockade.policies.kinds.workloads import pod_template

    if pod is None:
        pod = pod_template(obj)
    out: dict[str, Any] = {}
    for analyzer in analyzers():
        out.update(analyzer(obj, inventory, pod))
    return out


def inventory_of(objects: Iterable[Mapping[str, Any]], *, complete: bool = False) -> Inventory:
    inv = Inventory(complete=complete)
    for obj in objects:
        inv.add(obj)
    return inv
