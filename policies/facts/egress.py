"""Egress facts of a workload: is it isolated for egress, and which addresses may its pods reach.

The egress rules (``policies/rego/egress/``) need, for a workload, what the NetworkPolicies of its
namespace decide for its pods; those are other objects, so it is computed here from the gate's
inventory with the same NetworkPolicy semantics as ``stockade egress reach``
(:mod:`stockade.policies.facts.netpol`):

    input.facts.egress = {
        "isolated": true | false | null,   # some NetworkPolicy selects the pods for Egress, or a
                                           # Cilium / Calico policy does (as `egress reach` decides);
                                           # null: the namespace's policies are not known here
        "policiesKnown": true | false,     # whether absence of a policy means "none exists"
        "policies": ["ns/name", ...],      # the egress policies selecting the pods (NetworkPolicies,
                                           # then Cilium and Calico policies)
        "namespaceDefaultDeny": true | false | null,  # an egress policy with an empty podSelector
        "cidrs": ["10.240.8.0/24", ...],   # every address range the pods' NetworkPolicies open (any port);
                                           # 0.0.0.0/0 and ::/0 when not isolated or a rule has no `to`
        "anyDestination": true | false,    # some selecting rule has an empty `to` (or not isolated)
        "cidrPorts": [{"cidr": "0.0.0.0/0", "ports": [["TCP", 443, 443], ...]}, ...],
                                           # the same ranges, each with the ports its rules open
                                           # (protocol, first, last); named ports, which name ports
                                           # of destination pods, never open an address range
    }

When is a namespace's set of policies known? In a cluster (admission after the cache synced, audit)
the inventory is complete. A scan of some files sees only part of a cluster, so a workload whose
namespace has no policy in the scan may well be isolated by a policy kept elsewhere: that is
"unknown", not a violation. But when the scan holds the namespace's Namespace object, or at least one
NetworkPolicy of that namespace, the scanned tree is taken to own the namespace's network policies
(the way a platform repository keeps a namespace, its default deny and its allowances together), and a
workload no policy of it selects is reported. Ingress of the destinations does not matter here: the
allowlist is about what a workload's own egress policy opens.

Isolation follows :meth:`stockade.policies.facts.netpol.reach.Reachability.egress_isolated`: a
Kubernetes NetworkPolicy with Egress, a Cilium policy with egress rules (unless its
`enableDefaultDeny.egress` is false), or a Calico policy of the default tier with Egress selecting the
pods. A Cilium-only or Calico-only cluster is therefore not reported as unisolated. The Cilium and
Calico rules check those policies' own destinations per object; `cidrs` covers NetworkPolicies only.
AdminNetworkPolicies do not isolate (they allow, deny or pass specific peers).
"""

from __future__ import annotations

import ipaddress
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stockade.policies.facts.inventory import CALICO_NETWORK_POLICY, Inventory
from stockade.policies.facts.netpol import sets
from stockade.policies.kinds.ray import operator_network_policy
from stockade.policies.kinds.workloads import pod_template

if TYPE_CHECKING:
    # The policy models are imported when the inventory holds a policy of theirs: a workload in a
    # scan without NetworkPolicies (the pre-commit case) needs none of them.
    from stockade.policies.facts.netpol import calico, cilium, k8s

EVERYWHERE = ("0.0.0.0/0", "::/0")
#: the namespace of an object that names none (netpol.topology.DEFAULT_NAMESPACE)
DEFAULT_NAMESPACE = "default"


def _peer_cidrs(peer: k8s.Peer) -> list[str]:
    """The ranges an ipBlock peer reaches, as CIDRs: IPv4 minus its excepts; IPv6 as written."""
    if peer.cidr is None:
        return []
    try:
        net = ipaddress.ip_network(peer.cidr.strip(), strict=False)
    except ValueError:
        return []
    if net.version == 6:
        return [str(net)]
    return [c for interval in peer.intervals() for c in sets.interval_cidrs(interval)]


CILIUM_KINDS = ("CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy")
CALICO_KINDS = (CALICO_NETWORK_POLICY, "GlobalNetworkPolicy")

#: parsed Cilium and Calico policies per inventory, rebuilt when one of their kinds changes
_PARSED: weakref.WeakKeyDictionary[
    Inventory, tuple[tuple[int, ...], list[cilium.RuleSet], list[calico.CalicoPolicy]]
] = weakref.WeakKeyDictionary()


def _cni_policies(inventory: Inventory) -> tuple[list[cilium.RuleSet], list[calico.CalicoPolicy]]:
    """The inventory's Cilium rule sets and Calico policies, parsed once per change of their kinds.

    A policy that cannot be parsed (a Calico selector Calico would reject) isolates nothing here;
    `stockade egress reach` reports it as an input error."""
    versions = tuple(inventory.versions.get(k, 0) for k in (*CILIUM_KINDS, *CALICO_KINDS))
    if not any(versions):
        return [], []  # the inventory never held one
    hit = _PARSED.get(inventory)
    if hit is not None and hit[0] == versions:
        return hit[1], hit[2]
    from stockade.policies.facts.netpol import calico, cilium

    rule_sets = [rs for kind in CILIUM_KINDS for o in inventory.of_kind(kind) for rs in cilium.parse(o)]
    policies: list[calico.CalicoPolicy] = []
    for kind in CALICO_KINDS:
        for o in inventory.of_kind(kind):
            try:
                policies.append(calico.parse(o))
            except calico.SelectorError:
                continue
    _PARSED[inventory] = (versions, rule_sets, policies)
    return rule_sets, policies


#: the inventory's Kubernetes NetworkPolicies, parsed, by namespace; rebuilt when that kind changes
_K8S_PARSED: weakref.WeakKeyDictionary[Inventory, tuple[int, dict[str, list[k8s.NetworkPolicy]]]] = (
    weakref.WeakKeyDictionary()
)


def _k8s_policies(inventory: Inventory, namespace: str) -> list[k8s.NetworkPolicy]:
    """The Kubernetes NetworkPolicies of `namespace`, parsed once per change of the kind (not once per
    workload: an audit of 10,000 workloads over 500 policies parsed 5 million of them)."""
    version = inventory.versions.get("NetworkPolicy", 0)
    if not version:
        return []  # the inventory never held one
    hit = _K8S_PARSED.get(inventory)
    if hit is None or hit[0] != version:
        from stockade.policies.facts.netpol import k8s

        by_namespace: dict[str, list[k8s.NetworkPolicy]] = {}
        for p in inventory.of_kind("NetworkPolicy"):
            if k8s.is_kubernetes_policy(p):
                ns = str((p.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE)
                by_namespace.setdefault(ns, []).append(k8s.parse(p))
        hit = (version, by_namespace)
        _K8S_PARSED[inventory] = hit
    return hit[1].get(namespace, [])


def _cni_isolation(namespace: str, labels: dict[str, str], inventory: Inventory) -> tuple[list[str], bool]:
    """(names of the Cilium/Calico policies isolating the pods for egress, whether the namespace has
    any namespaced Cilium/Calico policy at all: then, like a NetworkPolicy, its policies are known)."""
    rule_sets, policies = _cni_policies(inventory)
    if not rule_sets and not policies:
        return [], False
    from stockade.policies.facts.netpol.topology import Workload

    ns_labels = inventory.namespace_labels(namespace)
    wl = Workload(0, namespace, "", "", labels, (), False)
    names = [
        rs.name  # already "ns/name" for namespaced ones, as `egress reach` lists them
        for rs in rule_sets
        if rs.egress_default_deny and rs.selects(wl, ns_labels)
    ]
    names += [
        cp.name if cp.namespace is None else f"{cp.namespace}/{cp.name}"
        for cp in policies
        if cp.egress is not None and cp.applies(wl, ns_labels)
    ]
    owned = any(rs.namespace == namespace for rs in rule_sets) or any(
        cp.namespace == namespace for cp in policies
    )
    return sorted(set(names)), owned


def _selecting(policies: list[k8s.NetworkPolicy], labels: dict[str, str]) -> list[k8s.NetworkPolicy]:
    """The policies whose podSelector matches the pods' labels."""
    if not policies:
        return []
    from stockade.policies.facts.netpol.topology import selector_matches

    return [p for p in policies if selector_matches(p.pod_selector, labels)]


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.egress` for one pod spec of a workload (``input.pod``, by default its first); {}
    for other objects."""
    pod = pod_template(obj) if pod is None else pod
    if pod is None or pod.get("namespaced") is False:
        return {}  # a cluster-scoped template's pods run in namespaces not known here
    md = obj.get("metadata") or {}
    namespace = str(md.get("namespace") or DEFAULT_NAMESPACE)
    labels = {str(k): str(v) for k, v in (pod["metadata"].get("labels") or {}).items()}
    policies = _k8s_policies(inventory, namespace)
    cni_names, cni_owned = _cni_isolation(namespace, labels, inventory)
    known = (
        inventory.complete
        or bool(policies)
        or cni_owned
        or inventory.get("Namespace", None, namespace) is not None
    )
    egress = [p for p in policies if p.egress is not None]
    selecting = _selecting(egress, labels)
    created = operator_network_policy(obj, pod)  # what KubeRay creates for a Ray cluster's pods
    if created is not None:
        from stockade.policies.facts.netpol import k8s

        selecting.append(k8s.parse(created))
    default_deny = any(
        not p.pod_selector.get("matchLabels") and not p.pod_selector.get("matchExpressions") for p in egress
    )
    isolated = True if selecting or cni_names else (False if known else None)
    any_destination = isolated is False
    cidrs: set[str] = set(EVERYWHERE) if isolated is False else set()
    ports: dict[str, sets.Conn] = {c: sets.ALL for c in cidrs}

    def opens(ranges: list[str], conn: sets.Conn) -> None:
        cidrs.update(ranges)
        for c in ranges:
            ports[c] = sets.union(ports.get(c, sets.NONE), conn)

    for policy in selecting:
        for rule in policy.egress or ():
            if rule.peers is None:
                any_destination = True
                opens(list(EVERYWHERE), rule.ports.numeric)
                continue
            for peer in rule.peers:
                opens(_peer_cidrs(peer), rule.ports.numeric)
    return {
        "egress": {
            "isolated": isolated,
            "policiesKnown": known,
            "policies": sorted(p.key for p in selecting) + cni_names,
            "namespaceDefaultDeny": True if default_deny else (False if known else None),
            "cidrs": sorted(cidrs),
            "anyDestination": any_destination,
            "cidrPorts": [
                {"cidr": c, "ports": [[proto, lo, hi] for proto, ranges in ports[c] for lo, hi in ranges]}
                for c in sorted(cidrs)
            ],
        }
    }
