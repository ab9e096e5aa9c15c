"""Calico NetworkPolicy and GlobalNetworkPolicy (projectcalico.org/v3), normalized for reachability.

The semantics (docs.tigera.io, "Calico network policy", "Global network policy", "Policy tiers" and
the selector reference; the Tier type of projectcalico/api):

- policies belong to a tier (``spec.tier``, by default ``default``, which also holds the Kubernetes
  NetworkPolicies). Tiers apply in ascending ``order`` (the default tier's is 1,000,000 unless its
  Tier object says otherwise; a tier without one comes last), ties by name; only the tiers with a
  policy applying to the endpoint take part. A packet a tier leaves undecided is dropped at the end
  of the tier, unless the Tier's ``defaultAction`` is ``Pass``; Pass moves it to the next tier, and
  out of the last one to the namespace profile, which allows.

Within one tier:

- policies apply to the endpoints their ``selector`` matches (a NetworkPolicy only in its namespace;
  a GlobalNetworkPolicy also by ``namespaceSelector``), in the directions of ``types`` (when omitted:
  Ingress, plus Egress if the policy has egress rules);
- the policies that apply are evaluated in ascending ``order`` (none: last), ties by name, with the
  cluster's Kubernetes NetworkPolicies among them at order 1000 (that is how Calico enforces them);
  within a policy the rules in order; the first rule matching a packet decides it: Allow, Deny, or
  Pass (leave the tier for the next one); Log does not decide;
- a packet no rule decided meets the end of the tier (above); an endpoint no policy of any tier
  applies to in a direction is not isolated in that direction;
- a rule matches on ``protocol``, the peer (``nets``/``notNets`` for addresses; ``selector``,
  ``notSelector``, ``namespaceSelector`` for endpoints, in the policy's namespace unless a
  namespaceSelector says otherwise) and the destination ``ports`` (numbers, ``"lo:hi"`` ranges,
  named ports).

Selectors use Calico's expression language: ``all()``, ``has(k)``, ``k == 'v'``, ``k != 'v'``,
``k in {'a','b'}``, ``k not in {...}``, ``!``, ``&&``, ``||`` and parentheses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from stockade.policies.facts.netpol import sets
from stockade.policies.facts.netpol.k8s import directions
from stockade.policies.facts.netpol.sets import Conn, Interval
from stockade.policies.facts.netpol.topology import Workload

Labels = Mapping[str, str]
Predicate = Callable[[Labels], bool]
PROTOCOL_NUMBERS = {"6": "TCP", "17": "UDP", "132": "SCTP"}

_TOKEN = re.compile(
    r"\s*(?:(?P<op>==|!=|&&|\|\||!|\(|\)|\{|\}|,)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<word>[A-Za-z0-9_./\-]+))"
)


class SelectorError(ValueError):
    """A selector Calico would reject."""


DEFAULT_TIER = "default"
#: projectcalico/api's DefaultTierOrder: the default tier's order when no Tier object sets one
DEFAULT_TIER_ORDER = 1_000_000.0


@dataclass(frozen=True)
class Tier:
    """A Tier object: where its policies apply among the tiers, and what ends it (Deny or Pass)."""

    name: str
    order: float
    default_action: str = "Deny"


def is_tier(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "Tier" and str(obj.get("apiVersion") or "").startswith("projectcalico.org/")


def parse_tier(obj: Mapping[str, Any]) -> Tier:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    name = str(md.get("name") or "")
    order = spec.get("order")
    if isinstance(order, int | float) and not isinstance(order, bool):
        ordered = float(order)
    else:
        ordered = DEFAULT_TIER_ORDER if name == DEFAULT_TIER else math.inf
    action = "Pass" if spec.get("defaultAction") == "Pass" else "Deny"
    return Tier(name, ordered, action)


def tier_order(tiers: Mapping[str, Tier]) -> Callable[[str], tuple[float, str]]:
    """Sort key of a tier name: its Tier's order (the default tier's when it has no Tier object)."""

    def key(name: str) -> tuple[float, str]:
        tier = tiers.get(name)
        if tier is not None:
            return tier.order, name
        return (DEFAULT_TIER_ORDER if name == DEFAULT_TIER else math.inf), name

    return key


def is_calico_policy(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") in {"NetworkPolicy", "GlobalNetworkPolicy"} and str(
        obj.get("apiVersion") or ""
    ).startswith("projectcalico.org/")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise SelectorError(f"cannot parse selector at {text[pos:]!r}")
        out.append(m.group("op") or m.group("str") or m.group("word"))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise SelectorError(f"expected {expected or 'a token'}, got {tok!r}")
        self.i += 1
        return tok

    def parse(self) -> Predicate:
        pred = self.disjunction()
        if self.peek() is not None:
            raise SelectorError(f"unexpected {self.peek()!r}")
        return pred

    def disjunction(self) -> Predicate:
        parts = [self.conjunction()]
        while self.peek() == "||":
            self.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else (lambda labels: any(p(labels) for p in parts))

    def conjunction(self) -> Predicate:
        parts = [self.unary()]
        while self.peek() == "&&":
            self.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else (lambda labels: all(p(labels) for p in parts))

    def unary(self) -> Predicate:
        if self.peek() == "!":
            self.take()
            inner = self.unary()
            return lambda labels: not inner(labels)
        if self.peek() == "(":
            self.take()
            inner = self.disjunction()
            self.take(")")
            return inner
        return self.term()

    def _value(self) -> str:
        tok = self.take()
        if tok[:1] in "'\"":
            return tok[1:-1]
        raise SelectorError(f"expected a quoted value, got {tok!r}")

    def _set(self) -> frozenset[str]:
        self.take("{")
        values: set[str] = set()
        while self.peek() != "}":
            values.add(self._value())
            if self.peek() == ",":
                self.take()
        self.take("}")
        return frozenset(values)

    def term(self) -> Predicate:
        word = self.take()
        if word in {"all", "global"} and self.peek() == "(":
            self.take("(")
            self.take(")")
            return lambda labels: True
        if word == "has" and self.peek() == "(":
            self.take("(")
            key = self.take()
            self.take(")")
            return lambda labels: key in labels
        key, op = word, self.take()
        if op == "==":
            value = self._value()
            return lambda labels: labels.get(key) == value
        if op == "!=":
            value = self._value()
            return lambda labels: labels.get(key) != value
        if op == "in":
            values = self._set()
            return lambda labels: labels.get(key) in values
        if op == "not" and self.peek() == "in":
            self.take()
            values = self._set()
            return lambda labels: labels.get(key) not in values
        raise SelectorError(f"unsupported selector operator {op!r}")


def selector(text: Any) -> Predicate:
    """A Calico selector as a predicate over labels; an empty one matches everything."""
    if not isinstance(text, str) or not text.strip():
        return lambda labels: True
    return _Parser(text).parse()


@dataclass(frozen=True)
class Entity:
    """The peer side of a rule (source for ingress, destination for egress)."""

    nets: tuple[Interval, ...] | None  # None: no nets constraint
    not_nets: tuple[Interval, ...]
    selector: Predicate | None
    not_selector: Predicate | None
    namespace_selector: Predicate | None
    referenced: tuple[Interval, ...]

    def matches_block(self, block: Interval) -> bool:
        if self.selector is not None or self.not_selector is not None or self.namespace_selector is not None:
            return False  # endpoint selectors never match addresses outside the cluster
        lo = block[0]
        if self.nets is not None and not any(a <= lo <= z for a, z in self.nets):
            return False
        return not any(a <= lo <= z for a, z in self.not_nets)

    def matches_workload(self, wl: Workload, ns_labels: Labels, home: str | None) -> bool:
        if self.nets is not None:
            return False  # pods have no addresses in a manifest-level model
        if self.namespace_selector is not None:
            if not self.namespace_selector(ns_labels):
                return False
        elif home is not None and wl.namespace != home and (self.selector or self.not_selector):
            return False
        if self.selector is not None and not self.selector(wl.labels):
            return False
        return not (self.not_selector is not None and self.not_selector(wl.labels))


@dataclass(frozen=True)
class Rule:
    action: str
    peer: Entity
    ports: Conn  # numeric destination ports (all protocols allowed by `protocol`)
    named: tuple[tuple[str, str], ...]  # (protocol, port name)

    def conn_on(self, dst: Workload | None) -> Conn:
        conn = self.ports
        if dst is not None:
            for proto, name in self.named:
                for pname, pproto, number in dst.named_ports:
                    if pname == name and (proto == "*" or proto == pproto):
                        conn = sets.union(conn, sets.conn_of(pproto, number, number))
        return conn


@dataclass(frozen=True)
class CalicoPolicy:
    name: str
    namespace: str | None  # None: global
    order: float
    selector: Predicate
    namespace_selector: Predicate | None
    ingress: tuple[Rule, ...] | None  # None: does not apply to ingress
    egress: tuple[Rule, ...] | None
    tier: str = DEFAULT_TIER

    def applies(self, wl: Workload, ns_labels: Labels) -> bool:
        if self.namespace is not None and wl.namespace != self.namespace:
            return False
        if self.namespace_selector is not None and not self.namespace_selector(ns_labels):
            return False
        return self.selector(wl.labels)


def _intervals(cidrs: Any) -> tuple[Interval, ...]:
    found = [sets.cidr_interval(str(c)) for c in cidrs or ()]
    return tuple(i for i in found if i is not None)


def _entity(raw: Any) -> Entity:
    raw = raw if isinstance(raw, Mapping) else {}
    nets = _intervals(raw.get("nets")) if raw.get("nets") else None
    not_nets = _intervals(raw.get("notNets"))
    return Entity(
        nets=nets,
        not_nets=not_nets,
        selector=selector(raw["selector"]) if raw.get("selector") else None,
        not_selector=selector(raw["notSelector"]) if raw.get("notSelector") else None,
        namespace_selector=selector(raw["namespaceSelector"]) if raw.get("namespaceSelector") else None,
        referenced=(*(nets or ()), *not_nets),
    )


def _protocols(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return sets.PROTOCOLS
    name = PROTOCOL_NUMBERS.get(str(raw), str(raw).upper())
    return (name,) if name in sets.PROTOCOLS else ()  # ICMP and others carry no ports we model


def _port_set(raw_ports: Any, protos: tuple[str, ...]) -> tuple[Conn, list[tuple[str, str]]]:
    """Numeric ports and ranges ("8000:8099") as connections of `protos`, and named ports apart."""
    ports: Conn = sets.NONE
    named: list[tuple[str, str]] = []
    for port in raw_ports or ():
        text = str(port)
        lo, sep, hi = text.partition(":")
        if lo.isdigit() and (not sep or hi.isdigit()):
            for p in protos:
                ports = sets.union(ports, sets.conn_of(p, int(lo), int(hi) if sep else int(lo)))
        else:
            named.extend((p, text) for p in protos)
    return ports, named


def _rule(raw: Mapping[str, Any], direction: str) -> Rule:
    """One Calico rule. Connections are modelled by destination port: ``destination.notPorts`` is
    taken out of the ports; a rule that also constrains the *source* port (``source.ports`` or
    ``source.notPorts``) still lets a client connect from another source port, so as a Deny it
    blocks no connection (and as an Allow it allows them: a client picks its source port)."""
    protos = _protocols(raw.get("protocol"))
    action = str(raw.get("action") or "")
    dest: Mapping[str, Any] = raw["destination"] if isinstance(raw.get("destination"), Mapping) else {}
    source: Mapping[str, Any] = raw["source"] if isinstance(raw.get("source"), Mapping) else {}
    peer = _entity(raw.get("destination") if direction == "egress" else raw.get("source"))
    if action == "Deny" and (source.get("ports") or source.get("notPorts")):
        return Rule(action, peer, sets.NONE, ())
    raw_ports = dest.get("ports")
    if raw_ports:
        ports, named = _port_set(raw_ports, protos)
    else:
        ports, named = sets.NONE, []
        for p in protos:
            ports = sets.union(ports, sets.conn_of(p))
    excluded, _ = _port_set(dest.get("notPorts"), protos)  # named notPorts are not modelled
    if excluded:
        ports = sets.difference(ports, excluded)
    return Rule(action, peer, ports, tuple(named))


def parse(obj: Mapping[str, Any]) -> CalicoPolicy:
    """The policy, normalized; a selector Calico would reject raises SelectorError naming the policy."""
    try:
        return _parse(obj)
    except SelectorError as exc:
        md = obj.get("metadata") or {}
        where = "/".join(str(p) for p in (md.get("namespace"), md.get("name")) if p)
        raise SelectorError(f"{obj.get('kind')} {where}: {exc}") from None


def _parse(obj: Mapping[str, Any]) -> CalicoPolicy:
    md = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    namespaced = obj.get("kind") == "NetworkPolicy"
    has_ingress, has_egress = directions(spec.get("types"), spec.get("egress"))
    order = spec.get("order")

    def rules(key: str) -> tuple[Rule, ...]:
        return tuple(_rule(r, key) for r in spec.get(key) or () if isinstance(r, Mapping))

    return CalicoPolicy(
        name=str(md.get("name") or ""),
        namespace=str(md.get("namespace") or "default") if namespaced else None,
        order=float(order) if isinstance(order, int | float) else math.inf,
        selector=selector(spec.get("selector")),
        namespace_selector=None
        if namespaced
        else (selector(spec["namespaceSelector"]) if spec.get("namespaceSelector") else None),
        ingress=rules("ingress") if has_ingress else None,
        egress=rules("egress") if has_egress else None,
        tier=str(spec.get("tier") or DEFAULT_TIER),
    )
