"""AdminNetworkPolicy and BaselineAdminNetworkPolicy (policy.networking.k8s.io/v1alpha1), normalized.

The semantics (network-policy-api, "AdminNetworkPolicy" and "BaselineAdminNetworkPolicy"):

- cluster-scoped; ``subject`` selects pods by ``namespaces`` (a namespace selector) or ``pods``
  (``namespaceSelector`` + ``podSelector``);
- AdminNetworkPolicies are evaluated before NetworkPolicies, lowest ``priority`` first; within one,
  rules in order; the first rule whose peers and ports match a connection decides it: ``Allow`` and
  ``Deny`` are final, ``Pass`` skips every remaining AdminNetworkPolicy rule and hands the connection
  to the NetworkPolicies;
- connections no AdminNetworkPolicy decided (or passed) are decided by the NetworkPolicies when the
  pod is isolated in that direction; otherwise by the BaselineAdminNetworkPolicy (first matching rule,
  ``Allow`` or ``Deny``), and allowed when it has no matching rule either;
- peers: ``namespaces``, ``pods``, and for egress ``networks`` (CIDRs); ports: ``portNumber``,
  ``portRange`` and ``namedPort`` (resolved on the destination pod); no ports means every port.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stockade.policies.facts.netpol import sets
from stockade.policies.facts.netpol.sets import Conn, Interval
from stockade.policies.facts.netpol.topology import Workload

KINDS = frozenset({"AdminNetworkPolicy", "BaselineAdminNetworkPolicy"})
Selector = Mapping[str, Any]


@dataclass(frozen=True)
class Ports:
    numeric: Conn
    named: tuple[str, ...] = ()

    def on(self, workload: Workload | None) -> Conn:
        conn = self.numeric
        if workload is not None:
            for name in self.named:
                for pname, proto, number in workload.named_ports:
                    if pname == name:
                        conn = sets.union(conn, sets.conn_of(proto, number, number))
        return conn


@dataclass(frozen=True)
class Peer:
    namespace_selector: Selector | None  # None with networks set: an address peer
    pod_selector: Selector | None  # None: every pod of the namespaces
    networks: tuple[str, ...] = ()

    def intervals(self) -> list[Interval]:
        found = [sets.cidr_interval(c) for c in self.networks]
        return [i for i in found if i is not None]


@dataclass(frozen=True)
class Rule:
    action: str  # Allow | Deny | Pass
    peers: tuple[Peer, ...]
    ports: Ports
    index: int


@dataclass(frozen=True)
class AdminPolicy:
    kind: str
    name: str
    priority: int
    subject_namespaces: Selector
    subject_pods: Selector | None  # None: every pod of the subject namespaces
    ingress: tuple[Rule, ...]
    egress: tuple[Rule, ...]

    @property
    def baseline(self) -> bool:
        return self.kind == "BaselineAdminNetworkPolicy"


def _selector(value: Any) -> Selector:
    return value if isinstance(value, Mapping) else {}


def _ports(raw: Any) -> Ports:
    if not raw:
        return Ports(sets.ALL)
    numeric: Conn = sets.NONE
    named: list[str] = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            continue
        number, span, name = entry.get("portNumber"), entry.get("portRange"), entry.get("namedPort")
        if isinstance(number, Mapping) and isinstance(number.get("port"), int):
            proto = str(number.get("protocol") or "TCP").upper()
            numeric = sets.union(numeric, sets.conn_of(proto, number["port"], number["port"]))
        elif (
            isinstance(span, Mapping)
            and isinstance(span.get("start"), int)
            and isinstance(span.get("end"), int)
        ):
            proto = str(span.get("protocol") or "TCP").upper()
            numeric = sets.union(numeric, sets.conn_of(proto, span["start"], span["end"]))
        elif isinstance(name, str) and name:
            named.append(name)
    return Ports(numeric, tuple(named))


def _peer(raw: Any) -> Peer | None:
    if not isinstance(raw, Mapping):
        return None
    if raw.get("namespaces") is not None:
        return Peer(_selector(raw["namespaces"]), None)
    pods = raw.get("pods")
    if isinstance(pods, Mapping):
        return Peer(_selector(pods.get("namespaceSelector")), _selector(pods.get("podSelector")))
    networks = raw.get("networks")
    if isinstance(networks, list) and networks:
        return Peer(None, None, tuple(str(n) for n in networks))
    return None  # nodes and other peers select no workload and no address we model


def _rules(raw: Any, peers_key: str) -> tuple[Rule, ...]:
    out: list[Rule] = []
    for i, rule in enumerate(raw or ()):
        if not isinstance(rule, Mapping):
            continue
        peers = tuple(p for p in (_peer(r) for r in rule.get(peers_key) or ()) if p is not None)
        out.append(Rule(str(rule.get("action") or ""), peers, _ports(rule.get("ports")), i))
    return tuple(out)


def parse(obj: Mapping[str, Any]) -> AdminPolicy:
    spec = obj.get("spec") or {}
    subject = spec.get("subject") or {}
    if isinstance(subject.get("pods"), Mapping):
        ns_sel = _selector(subject["pods"].get("namespaceSelector"))
        pod_sel: Selector | None = _selector(subject["pods"].get("podSelector"))
    else:
        ns_sel, pod_sel = _selector(subject.get("namespaces")), None
    priority = spec.get("priority")
    return AdminPolicy(
        kind=str(obj.get("kind")),
        name=str((obj.get("metadata") or {}).get("name") or ""),
        priority=priority if isinstance(priority, int) else 0,
        subject_namespaces=ns_sel,
        subject_pods=pod_sel,
        ingress=_rules(spec.get("ingress"), "from"),
        egress=_rules(spec.get("egress"), "to"),
    )
