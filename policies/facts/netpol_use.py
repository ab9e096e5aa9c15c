"""Whether a Kubernetes NetworkPolicy selects any pod: a policy that selects none protects nothing
(a typo in a label, a renamed app), while its author believes the pods are isolated.

    input.facts.networkPolicy = {"selectsPods": true | false}

Only where the inventory is complete (an audit, a synced webhook): a scan of some files does not see
every workload of the namespace. A policy with an empty podSelector selects every pod of its
namespace, present or future (a namespace's default deny), and is never reported as selecting none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory
from stockade.policies.facts.rbac import selector_matches

DEFAULT_NAMESPACE = "default"


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.networkPolicy` for NetworkPolicies in a complete inventory; {} otherwise."""
    if obj.get("kind") != "NetworkPolicy" or not str(obj.get("apiVersion", "")).startswith(
        "networking.k8s.io/"
    ):
        return {}
    if not inventory.complete:
        return {}
    spec = obj.get("spec")
    selector = spec.get("podSelector") if isinstance(spec, Mapping) else None
    if not isinstance(selector, Mapping):
        return {}
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return {"networkPolicy": {"selectsPods": True}}
    md = obj.get("metadata") or {}
    namespace = str(md.get("namespace") or DEFAULT_NAMESPACE)
    selects = any(selector_matches(selector, labels) for labels in inventory.pod_label_sets(namespace))
    return {"networkPolicy": {"selectsPods": selects}}
