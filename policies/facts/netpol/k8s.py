"""Kubernetes NetworkPolicy (networking.k8s.io/v1), normalized for evaluation.

The semantics, from the API reference and the network-policy concepts page:

- a policy selects pods of its own namespace by ``podSelector`` (empty: all of them);
- it applies to ingress and/or egress by ``policyTypes``; when omitted, Ingress always, Egress only
  if the policy has egress rules. A selected pod is *isolated* in that direction; what it may then
  do is the union of all rules of all policies selecting it (no policy can deny);
- within a rule, peers (``to``/``from``) and ``ports`` are ANDed, the entries of each are ORed;
  an empty or missing peer list means every destination/source, an empty ``ports`` every port;
- in one peer ``namespaceSelector`` and ``podSelector`` are ANDed; a ``podSelector`` alone means the
  policy's namespace; ``ipBlock`` matches addresses outside the cluster's pods, ``except`` narrows it;
- ``port`` may be a number (with ``endPort`` a range) or a named container port, resolved on the
  destination pod for that protocol (protocol defaults to TCP).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stockade.policies.facts.netpol import sets
from stockade.policies.facts.netpol.sets import Conn, Interval
from stockade.policies.facts.netpol.topology import DEFAULT_NAMESPACE, Workload

Selector = Mapping[str, Any]


@dataclass(frozen=True)
class Ports:
    numeric: Conn
    named: tuple[tuple[str, str], ...] = ()  # (protocol, port name)

    def on(self, workload: Workload) -> Conn:
        """The connection set on a destination workload: numbers, plus its names that resolve."""
        if not self.named:
            return self.numeric
        conn = self.numeric
        for proto, name in self.named:
            for pname, pproto, number in workload.named_ports:
                if pname == name and pproto == proto:
                    conn = sets.union(conn, sets.conn_of(proto, number, number))
        return conn


@dataclass(frozen=True)
class Peer:
    pod_selector: Selector | None  # None: every pod of the namespaces selected
    namespace_selector: Selector | None  # None: the policy's own namespace
    cidr: str | None = None  # an ipBlock peer
    excepts: tuple[str, ...] = ()

    @property
    def is_ip(self) -> bool:
        return self.cidr is not None

    def intervals(self) -> list[Interval]:
        """IPv4 ranges of an ipBlock peer (cidr minus except); empty for IPv6 or pod peers."""
        if self.cidr is None:
            return []
        base = sets.cidr_interval(self.cidr)
        if base is None:
            return []
        out = [base]
        for exc in self.excepts:
            cut = sets.cidr_interval(exc)
            if cut is not None:
                out = sets.subtract(out, cut)
        return out

    def referenced(self) -> list[Interval]:
        """The ranges whose boundaries split the address space: the ipBlock's own ranges (cidr minus
        except), as netpol-analyzer draws its disjoint blocks. Two adjacent excepts (two halves of
        10/8) leave one gap, so no boundary between them: one block ``10.0.0.0-10.255.255.255``."""
        return self.intervals()


@dataclass(frozen=True)
class Rule:
    peers: tuple[Peer, ...] | None  # None: any peer (empty or missing to/from)
    ports: Ports
    index: int


@dataclass(frozen=True)
class NetworkPolicy:
    namespace: str
    name: str
    pod_selector: Selector
    ingress: tuple[Rule, ...] | None  # None: the policy does not apply to ingress
    egress: tuple[Rule, ...] | None

    @functools.cached_property
    def key(self) -> str:
        """namespace/name, made once: every workload the policy selects lists it in its egress facts
        (an audit's 13,000 workloads held 730,000 copies of it, 46 MiB, when each access made one)."""
        return f"{self.namespace}/{self.name}"


def is_kubernetes_policy(obj: Mapping[str, Any]) -> bool:
    """A networking.k8s.io NetworkPolicy: Calico's projectcalico.org/v3 NetworkPolicy shares the kind
    but not the semantics (ordered rules with actions)."""
    api_version = str(obj.get("apiVersion") or "networking.k8s.io/v1")
    return obj.get("kind") == "NetworkPolicy" and api_version.startswith("networking.k8s.io/")


def directions(types: Any, egress_rules: Any) -> tuple[bool, bool]:
    """(applies to ingress, applies to egress): the listed types, else Ingress always and Egress when
    there are egress rules. Kubernetes' policyTypes and Calico's types default alike."""
    if types:
        return "Ingress" in types, "Egress" in types
    return True, bool(egress_rules)


def _ports(raw: Any) -> Ports:
    if not raw:
        return Ports(sets.ALL)
    numeric: Conn = sets.NONE
    named: list[tuple[str, str]] = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            continue
        proto = str(entry.get("protocol") or "TCP").upper()
        port = entry.get("port")
        if port is None:
            numeric = sets.union(numeric, sets.conn_of(proto))
        elif isinstance(port, int) and not isinstance(port, bool):
            end = entry.get("endPort")
            hi = end if isinstance(end, int) and end >= port else port
            numeric = sets.union(numeric, sets.conn_of(proto, port, hi))
        elif isinstance(port, str) and port.isdigit():
            numeric = sets.union(numeric, sets.conn_of(proto, int(port), int(port)))
        elif isinstance(port, str):
            named.append((proto, port))
    return Ports(numeric, tuple(named))


def _peer(raw: Any) -> Peer | None:
    if not isinstance(raw, Mapping):
        return None
    block = raw.get("ipBlock")
    if isinstance(block, Mapping):
        return Peer(
            None, None, str(block.get("cidr") or ""), tuple(str(e) for e in block.get("except") or ())
        )
    pods, nss = raw.get("podSelector"), raw.get("namespaceSelector")
    if pods is None and nss is None:
        return None
    return Peer(
        pods if isinstance(pods, Mapping) else ({} if pods is not None else None),
        nss if isinstance(nss, Mapping) else ({} if nss is not None else None),
    )


def _rules(raw: Any, peers_key: str) -> tuple[Rule, ...]:
    out: list[Rule] = []
    for i, rule in enumerate(raw or ()):
        if not isinstance(rule, Mapping):
            continue
        raw_peers = rule.get(peers_key)
        peers = None
        if raw_peers:
            peers = tuple(p for p in (_peer(r) for r in raw_peers) if p is not None)
        out.append(Rule(peers, _ports(rule.get("ports")), i))
    return tuple(out)


def parse(obj: Mapping[str, Any]) -> NetworkPolicy:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    has_ingress, has_egress = directions(spec.get("policyTypes"), spec.get("egress"))
    selector = spec.get("podSelector")
    return NetworkPolicy(
        namespace=str(md.get("namespace") or DEFAULT_NAMESPACE),
        name=str(md.get("name") or ""),
        pod_selector=selector if isinstance(selector, Mapping) else {},
        ingress=_rules(spec.get("ingress"), "from") if has_ingress else None,
        egress=_rules(spec.get("egress"), "to") if has_egress else None,
    )
