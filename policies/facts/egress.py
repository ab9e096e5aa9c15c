"""Egress facts of a workload: is it isolated for egress, and which addresses may its pods reach.

The egress rules (``policies/rego/egress/``) need, for a workload, what the NetworkPolicies of its
namespace decide for its pods; those are other objects, so it is computed here from the gate's
inventory with the same NetworkPolicy semantics as ``stockade egress reach``
(:mod:`stockade.policies.facts.netpol`):

    input.facts.egress = {
        "isolated": true | false | null,   # some NetworkPolicy selects the pods for Egress;
                                           # null: the namespace's policies are not known here
        "policiesKnown": true | false,     # whether absence of a policy means "none exists"
        "policies": ["ns/name", ...],      # the egress policies selecting the pods
        "namespaceDefaultDeny": true | false | null,  # an egress policy with an empty podSelector
        "cidrs": ["10.240.8.0/24", ...],   # every address range the pods may reach (any port);
                                           # 0.0.0.0/0 and ::/0 when not isolated or a rule has no `to`
        "anyDestination": true | false,    # some selecting rule has an empty `to` (or not isolated)
    }

When is a namespace's set of policies known? In a cluster (admission after the cache synced, audit)
the inventory is complete. A scan of some files sees only part of a cluster, so a workload whose
namespace has no policy in the scan may well be isolated by a policy kept elsewhere: that is
"unknown", not a violation. But when the scan holds the namespace's Namespace object, or at least one
NetworkPolicy of that namespace, the scanned tree is taken to own the namespace's network policies
(the way a platform repository keeps a namespace, its default deny and its allowances together), and a
workload no policy of it selects is reported. Ingress of the destinations does not matter here: the
allowlist is about what a workload's own egress policy opens.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory
from stockade.policies.facts.netpol import k8s, sets
from stockade.policies.facts.netpol.topology import DEFAULT_NAMESPACE, selector_matches
from stockade.policies.facts.workloads import pod_template

EVERYWHERE = ("0.0.0.0/0", "::/0")


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


def facts(obj: Mapping[str, Any], inventory: Inventory) -> dict[str, Any]:
    pod = pod_template(obj)
    if pod is None:
        return {}
    md = obj.get("metadata") or {}
    namespace = str(md.get("namespace") or DEFAULT_NAMESPACE)
    labels = {str(k): str(v) for k, v in (pod["metadata"].get("labels") or {}).items()}
    policies = [
        k8s.parse(p)
        for p in inventory.of_kind("NetworkPolicy")
        if k8s.is_kubernetes_policy(p)
        and str((p.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE) == namespace
    ]
    known = inventory.complete or bool(policies) or inventory.get("Namespace", None, namespace) is not None
    egress = [p for p in policies if p.egress is not None]
    selecting = [p for p in egress if selector_matches(p.pod_selector, labels)]
    default_deny = any(
        not p.pod_selector.get("matchLabels") and not p.pod_selector.get("matchExpressions") for p in egress
    )
    isolated = True if selecting else (False if known else None)
    any_destination = isolated is False
    cidrs: set[str] = set(EVERYWHERE) if isolated is False else set()
    for policy in selecting:
        for rule in policy.egress or ():
            if rule.peers is None:
                any_destination = True
                cidrs.update(EVERYWHERE)
                continue
            for peer in rule.peers:
                cidrs.update(_peer_cidrs(peer))
    return {
        "egress": {
            "isolated": isolated,
            "policiesKnown": known,
            "policies": sorted(p.key for p in selecting),
            "namespaceDefaultDeny": True if default_deny else (False if known else None),
            "cidrs": sorted(cidrs),
            "anyDestination": any_destination,
        }
    }
