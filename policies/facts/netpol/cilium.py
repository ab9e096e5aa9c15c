"""CiliumNetworkPolicy and CiliumClusterwideNetworkPolicy (cilium.io/v2), normalized for reachability.

The semantics (docs.cilium.io, "Policy Enforcement Modes", "Layer 3/4 policies", "Deny policies"):

- a rule set (`spec`, or each of `specs`) selects endpoints by `endpointSelector`: in a
  CiliumNetworkPolicy only endpoints of its namespace, in a clusterwide policy any endpoint (the pod's
  namespace is the label ``io.kubernetes.pod.namespace``; keys may carry a ``k8s:`` or ``any:``
  source prefix);
- an endpoint selected by a rule set with egress (or egressDeny) rules is in default deny for egress
  unless ``enableDefaultDeny.egress`` is false; allows of every rule set and NetworkPolicy are united,
  and ``egressDeny`` always wins over any allow;
- a rule's peers are ORed: ``toEndpoints`` (selectors; in a namespaced policy limited to its namespace
  unless they name one), ``toCIDR`` / ``toCIDRSet`` (with ``except``), ``toEntities`` (``world`` is
  everything outside the cluster, ``cluster`` every endpoint, ``all`` both; other entities are nodes
  and hosts, not modelled), ``toFQDNs`` (names, reported as such: their addresses are only known at
  run time); a rule without any peer field allows every peer. ``toPorts`` (ORed; protocol ``ANY`` is
  every protocol; a port may be a range with ``endPort`` or a named port) limits it; none is every port.
Ingress is the mirror image (``fromEndpoints``, ``fromCIDR``, ``fromCIDRSet``, ``fromEntities``,
``ingressDeny``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stockade.policies.facts.netpol import sets
from stockade.policies.facts.netpol.k8s import Ports
from stockade.policies.facts.netpol.sets import Conn, Interval
from stockade.policies.facts.netpol.topology import Workload, selector_matches

KINDS = frozenset({"CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy"})
NAMESPACE_KEY = "io.kubernetes.pod.namespace"
NAMESPACE_LABEL_PREFIX = "io.cilium.k8s.namespace.labels."
Selector = Mapping[str, Any]


@dataclass(frozen=True)
class Rule:
    endpoints: tuple[Selector, ...] | None  # None: no endpoint selector given
    intervals: tuple[Interval, ...]
    referenced: tuple[Interval, ...]  # every CIDR and except, to cut the address space
    world: bool
    cluster: bool
    fqdns: tuple[str, ...]
    any_peer: bool  # no peer field at all: every peer
    ports: Ports


@dataclass(frozen=True)
class RuleSet:
    namespace: str | None  # None: clusterwide
    selector: Selector
    egress: tuple[Rule, ...]
    egress_deny: tuple[Rule, ...]
    ingress: tuple[Rule, ...]
    ingress_deny: tuple[Rule, ...]
    egress_default_deny: bool
    ingress_default_deny: bool
    name: str

    def selects(self, wl: Workload, namespace_labels: Mapping[str, str]) -> bool:
        if self.namespace is not None and wl.namespace != self.namespace:
            return False
        return endpoint_matches(self.selector, wl, namespace_labels)


def strip_source(key: str) -> str:
    """A label key without its ``k8s:`` or ``any:`` source prefix."""
    for prefix in ("k8s:", "any:"):
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def _normalize(selector: Selector) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(selector.get("matchLabels"), Mapping):
        out["matchLabels"] = {strip_source(str(k)): v for k, v in selector["matchLabels"].items()}
    exprs = selector.get("matchExpressions")
    if isinstance(exprs, list):
        out["matchExpressions"] = [
            {**e, "key": strip_source(str(e.get("key")))} for e in exprs if isinstance(e, Mapping)
        ]
    return out


def names_namespace(selector: Selector) -> bool:
    sel = _normalize(selector)
    keys = set(sel.get("matchLabels") or {}) | {e["key"] for e in sel.get("matchExpressions") or ()}
    return NAMESPACE_KEY in keys


def endpoint_matches(selector: Selector, wl: Workload, namespace_labels: Mapping[str, str]) -> bool:
    return labels_match(selector, wl.labels, wl.namespace, namespace_labels)


def labels_match(
    selector: Selector, pod_labels: Mapping[str, str], namespace: str, namespace_labels: Mapping[str, str]
) -> bool:
    """Whether an endpointSelector selects a pod with these labels in this namespace."""
    labels = dict(pod_labels)
    labels[NAMESPACE_KEY] = namespace
    for k, v in namespace_labels.items():
        labels[NAMESPACE_LABEL_PREFIX + k] = v
    return selector_matches(_normalize(selector), labels)


def _ports(raw: Any) -> Ports:
    if not raw:
        return Ports(sets.ALL)
    numeric: Conn = sets.NONE
    named: list[tuple[str, str]] = []
    for entry in raw:
        for port in (entry.get("ports") or ()) if isinstance(entry, Mapping) else ():
            if not isinstance(port, Mapping):
                continue
            proto = str(port.get("protocol") or "ANY").upper()
            protos = sets.PROTOCOLS if proto == "ANY" else (proto,)
            value = str(port.get("port") or "0")
            if value.isdigit():
                lo = int(value)
                end = port.get("endPort")
                hi = end if isinstance(end, int) and end >= lo else lo
                for p in protos:
                    numeric = sets.union(numeric, sets.conn_of(p) if lo == 0 else sets.conn_of(p, lo, hi))
            else:
                named.extend((p, value) for p in protos)
        if isinstance(entry, Mapping) and not entry.get("ports"):
            numeric = sets.ALL
    return Ports(numeric, tuple(named))


def _rule(raw: Mapping[str, Any], direction: str) -> Rule:
    pre = "to" if direction == "egress" else "from"
    endpoints = raw.get(f"{pre}Endpoints")
    intervals: list[Interval] = []
    referenced: list[Interval] = []
    cidrs: list[tuple[str, tuple[str, ...]]] = [(str(c), ()) for c in raw.get(f"{pre}CIDR") or ()]
    for entry in raw.get(f"{pre}CIDRSet") or ():
        if isinstance(entry, Mapping) and entry.get("cidr"):
            cidrs.append((str(entry["cidr"]), tuple(str(e) for e in entry.get("except") or ())))
    for cidr, excepts in cidrs:
        base = sets.cidr_interval(cidr)
        if base is None:
            continue
        left = [base]
        referenced.append(base)
        for exc in excepts:
            cut = sets.cidr_interval(exc)
            if cut is not None:
                referenced.append(cut)
                left = sets.subtract(left, cut)
        intervals.extend(left)
    entities = {str(e) for e in raw.get(f"{pre}Entities") or ()}
    fqdns = tuple(
        str(f.get("matchName") or f.get("matchPattern"))
        for f in raw.get("toFQDNs") or ()
        if isinstance(f, Mapping) and (f.get("matchName") or f.get("matchPattern"))
    )
    peer_fields = ("Endpoints", "CIDR", "CIDRSet", "Entities", "Services", "Nodes", "Groups")
    any_peer = not any(raw.get(pre + f) for f in peer_fields) and not raw.get("toFQDNs")
    return Rule(
        endpoints=tuple(e if isinstance(e, Mapping) else {} for e in endpoints) if endpoints else None,
        intervals=tuple(intervals),
        referenced=tuple(referenced),
        world=bool(entities & {"world", "world-ipv4", "all"}),
        cluster=bool(entities & {"cluster", "all"}),
        fqdns=fqdns,
        any_peer=any_peer,
        ports=_ports(raw.get("toPorts")),
    )


def _rules(raw: Any, direction: str) -> tuple[Rule, ...]:
    return tuple(_rule(r, direction) for r in raw or () if isinstance(r, Mapping))


def parse(obj: Mapping[str, Any]) -> list[RuleSet]:
    md = obj.get("metadata") or {}
    namespace = str(md.get("namespace") or "default") if obj.get("kind") == "CiliumNetworkPolicy" else None
    specs = [obj["spec"]] if isinstance(obj.get("spec"), Mapping) else []
    specs += [s for s in obj.get("specs") or () if isinstance(s, Mapping)]
    out = []
    for spec in specs:
        selector = spec.get("endpointSelector")
        if not isinstance(selector, Mapping):
            continue  # nodeSelector rule sets select nodes, not endpoints
        default_deny = spec.get("enableDefaultDeny") or {}
        egress, egress_deny = _rules(spec.get("egress"), "egress"), _rules(spec.get("egressDeny"), "egress")
        ingress, ingress_deny = (
            _rules(spec.get("ingress"), "ingress"),
            _rules(spec.get("ingressDeny"), "ingress"),
        )
        out.append(
            RuleSet(
                namespace=namespace,
                selector=selector,
                egress=egress,
                egress_deny=egress_deny,
                ingress=ingress,
                ingress_deny=ingress_deny,
                egress_default_deny=bool(egress or egress_deny) and default_deny.get("egress") is not False,
                ingress_default_deny=bool(ingress or ingress_deny)
                and default_deny.get("ingress") is not False,
                name=f"{namespace}/{md.get('name')}" if namespace else str(md.get("name") or ""),
            )
        )
    return out
