"""Whether a network policy selects any pod: a policy that selects none protects nothing (a typo in a
label, a renamed app), while its author believes the pods are isolated.

    input.facts.networkPolicy = {"selectsPods": true | false, "path": [field of the selector]}

Decided for Kubernetes NetworkPolicies (``spec.podSelector``), CiliumNetworkPolicies and
CiliumClusterwideNetworkPolicies (``endpointSelector`` of ``spec`` and each of ``specs``: the policy
selects no pod when none of its rule sets does) and Calico's namespaced NetworkPolicies
(``spec.selector``, an expression; policies/facts/netpol/calico.py).

Only where the inventory is complete (an audit, a synced webhook): a scan of some files does not see
every workload of the namespace. An empty selector selects every pod of its namespace (or cluster),
present or future (a default deny), and is never reported. Not decided, because the pods' labels
alone cannot tell (the inventory knows the label sets pods run with, and their namespace's labels):

- Cilium rule sets with a ``nodeSelector`` (host policies select nodes) and selectors on labels Cilium
  derives from something else than the pod's labels (``reserved:`` identities, the ServiceAccount
  ``io.cilium.k8s.policy.serviceaccount``, the cluster name);
- Calico selectors on its derived labels (``projectcalico.org/…``, ``pcsa.…``), with a
  ``serviceAccountSelector``, and GlobalNetworkPolicies, which also select host endpoints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stockade.policies.facts.inventory import CALICO_NETWORK_POLICY, Inventory, index_kind
from stockade.policies.facts.netpol import calico, cilium
from stockade.policies.facts.rbac import selector_matches

DEFAULT_NAMESPACE = "default"
#: Calico's prefix of the namespace labels an endpoint inherits
CALICO_NAMESPACE_LABEL_PREFIX = "pcns."
Decision = dict[str, Any]


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.networkPolicy` for network policies in a complete inventory; {} otherwise."""
    if not inventory.complete:
        return {}
    kind = index_kind(obj)
    decision: Decision | None = None
    if kind == "NetworkPolicy" and str(obj.get("apiVersion", "")).startswith("networking.k8s.io/"):
        decision = _kubernetes(obj, inventory)
    elif kind in cilium.KINDS:
        decision = _cilium(obj, inventory)
    elif kind == CALICO_NETWORK_POLICY:
        decision = _calico(obj, inventory)
    return {"networkPolicy": decision} if decision is not None else {}


def _namespace(obj: Mapping[str, Any]) -> str:
    md = obj.get("metadata") or {}
    return str(md.get("namespace") or DEFAULT_NAMESPACE) if isinstance(md, Mapping) else DEFAULT_NAMESPACE


def _kubernetes(obj: Mapping[str, Any], inventory: Inventory) -> Decision | None:
    spec = obj.get("spec")
    selector = spec.get("podSelector") if isinstance(spec, Mapping) else None
    if not isinstance(selector, Mapping):
        return None
    path = ["spec", "podSelector"]
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return {"selectsPods": True, "path": path}
    labels = inventory.pod_label_sets(_namespace(obj))
    return {"selectsPods": any(selector_matches(selector, s) for s in labels), "path": path}


def _cilium_decidable(selector: Mapping[str, Any]) -> bool:
    keys = (
        [str(k) for k in selector.get("matchLabels") or {}]
        if isinstance(selector.get("matchLabels"), Mapping)
        else []
    )
    exprs = selector.get("matchExpressions")
    keys += [str(e.get("key")) for e in exprs if isinstance(e, Mapping)] if isinstance(exprs, list) else []
    for key in keys:
        plain = cilium.strip_source(key)
        if ":" in plain:  # reserved:, cidr:, fqdn: … identities are not pods' labels
            return False
        if plain.startswith("io.cilium.") and not plain.startswith(cilium.NAMESPACE_LABEL_PREFIX):
            return False
    return True


def _cilium(obj: Mapping[str, Any], inventory: Inventory) -> Decision | None:
    spec = obj.get("spec")
    specs = obj.get("specs")
    sets: list[tuple[list[Any], Any]] = []
    if isinstance(spec, Mapping):
        sets.append((["spec", "endpointSelector"], spec))
    if isinstance(specs, list):
        sets += [(["specs", i, "endpointSelector"], s) for i, s in enumerate(specs) if isinstance(s, Mapping)]
    if not sets:
        return None
    clusterwide = obj.get("kind") == "CiliumClusterwideNetworkPolicy"
    namespaces = inventory.pod_namespaces() if clusterwide else [_namespace(obj)]
    for _, rule_set in sets:
        selector = rule_set.get("endpointSelector")
        if not isinstance(selector, Mapping) or not _cilium_decidable(selector):
            return None  # a host policy (nodeSelector), or labels the inventory does not hold
    for path, rule_set in sets:
        selector = rule_set["endpointSelector"]
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            return {"selectsPods": True, "path": path}
        for ns in namespaces:
            ns_labels = inventory.namespace_labels(ns)
            if any(cilium.labels_match(selector, s, ns, ns_labels) for s in inventory.pod_label_sets(ns)):
                return {"selectsPods": True, "path": path}
    return {"selectsPods": False, "path": sets[0][0] if len(sets) == 1 else ["specs"]}


def _calico(obj: Mapping[str, Any], inventory: Inventory) -> Decision | None:
    spec = obj.get("spec")
    if not isinstance(spec, Mapping) or spec.get("serviceAccountSelector"):
        return None
    text = spec.get("selector")
    if isinstance(text, str) and ("projectcalico.org/" in text or "pcsa." in text):
        return None
    path = ["spec", "selector"]
    if not isinstance(text, str) or text.strip() in ("", "all()"):
        return {"selectsPods": True, "path": path}
    try:
        predicate = calico.selector(text)
    except calico.SelectorError:
        return None  # Calico rejects it; the reachability rules report the selector
    namespace = _namespace(obj)
    ns_labels = inventory.namespace_labels(namespace)
    inherited = {CALICO_NAMESPACE_LABEL_PREFIX + k: v for k, v in ns_labels.items()}
    selects = any(predicate({**inherited, **labels}) for labels in inventory.pod_label_sets(namespace))
    return {"selectsPods": selects, "path": path}
