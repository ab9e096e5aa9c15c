"""Reachability over all policies: which workload may open which connection to which peer.

Computed the way np-guard/netpol-analyzer computes its connectivity list, so the two compare line by
line: peers are the workloads plus the disjoint IPv4 blocks cut by every referenced CIDR (sources
from ingress rules, destinations from egress rules, each a partition of 0.0.0.0/0); a connection set
is port ranges per protocol; the allowed connections from A to B are what A's egress allows towards
B intersected with what B's ingress allows from A (a side not isolated allows everything, and
addresses outside the cluster have no policy of their own). A workload's connections to itself are
not listed.

Each direction goes through the tiers a cluster applies: AdminNetworkPolicies first (by priority;
Allow, Deny, or Pass on), then the NetworkPolicies of the CNI (Kubernetes NetworkPolicies united with
Cilium's allows, less Cilium's denies; or Calico's ordered tiers, whose default tier holds the
Kubernetes NetworkPolicies at order 1000), then the BaselineAdminNetworkPolicy for an endpoint no
NetworkPolicy isolates.

Cost: each distinct set of selecting policies is evaluated once (workloads selected by the same
policies share it), selector matches are memoized per namespace, and connection-set operations are
memoized, so the pairwise pass is a few dictionary lookups per pair.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from stockade.policies.facts.netpol import admin, calico, cilium, k8s, sets
from stockade.policies.facts.netpol.sets import ALL, NONE, Conn, Interval
from stockade.policies.facts.netpol.topology import Topology, Workload


class CalicoTier(NamedTuple):
    """The Calico policies of one tier that apply to a workload in one direction, in order."""

    name: str
    default_action: str  # "Deny" or "Pass": what happens to what the tier leaves undecided
    entries: tuple[tuple[str, int], ...]  # ("k", NetworkPolicy index) or ("c", Calico policy index)


@dataclass
class Side:
    """What one direction of a workload allows: per workload, per IP block, and a default, less what
    Cilium deny rules take away (`deny`, which always wins); `fqdns` are Cilium toFQDNs names."""

    default: Conn = NONE  # towards every workload (rules with an empty peer list)
    peers: dict[int, Conn] = field(default_factory=dict)
    ips: list[Conn] = field(default_factory=list)  # per IP block, in the analysis' block order
    fqdns: dict[str, Conn] = field(default_factory=dict)
    deny: Side | None = None

    def towards(self, index: int) -> Conn:
        extra = self.peers.get(index)
        conn = sets.union(self.default, extra) if extra else self.default
        if self.deny is not None:
            conn = sets.difference(conn, self.deny.towards(index))
        return conn


class Connection(NamedTuple):
    src: str
    dst: str
    conn: Conn

    @property
    def text(self) -> str:
        return sets.conn_str(self.conn)

    def line(self) -> str:
        return f"{self.src} => {self.dst} : {self.text}"


def _shape_text(wl: Workload) -> str:
    labels = ",".join(f"{k}={v}" for k, v in sorted(wl.labels.items())) or "no labels"
    ports = ",".join(f"{n}={p}/{num}" for n, p, num in wl.named_ports)
    return labels + (f"; ports {ports}" if ports else "") + ("; hostNetwork" if wl.host_network else "")


def _external(interval: Interval) -> str:
    return f"{sets.interval_str(interval)}[External]"


class PodsDiffer(ValueError):
    """Pods of one owner differ in what a policy selects on, so they are not one peer."""


class Reachability:
    """The connectivity of a set of objects (workloads, Namespaces, NetworkPolicies).

    Pods of one owner are one peer (``ns/name[ReplicaSet]``). When they differ in labels, named ports
    or host network, the analysis is first made with each differing pod on its own: if every one of
    them has the same connections, they are one peer again; if not, :class:`PodsDiffer` names two of
    them, what differs and one connection that differs. netpol-analyzer refuses such input too (when a
    policy's selector reads the differing label); IBM's network-config-analyzer takes the union, which
    would answer for a pod what only its sibling may do.
    """

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        objects = list(objects)
        self._setup(objects, variants=True)
        if self.topology.variants:
            self._check_variants()
            self._setup(objects, variants=False)

    def _setup(self, objects: list[Mapping[str, Any]], variants: bool) -> None:
        self.topology = Topology.build(objects, variants=variants)
        self.policies = [k8s.parse(o) for o in objects if k8s.is_kubernetes_policy(o)]
        admins = [admin.parse(o) for o in objects if o.get("kind") in admin.KINDS]
        # Lowest priority number first; equal priorities (undefined by the API) in name order.
        self.admin_policies = sorted(
            (a for a in admins if not a.baseline), key=lambda a: (a.priority, a.name)
        )
        self.baseline_policies = [a for a in admins if a.baseline]
        self.cilium = [rs for o in objects if o.get("kind") in cilium.KINDS for rs in cilium.parse(o)]
        self.calico = [calico.parse(o) for o in objects if calico.is_calico_policy(o)]
        self.calico_tiers = {t.name: t for t in (calico.parse_tier(o) for o in objects if calico.is_tier(o))}
        egress_refs: list[Interval] = []
        ingress_refs: list[Interval] = []
        for cp in self.calico:
            for crules, refs in ((cp.egress, egress_refs), (cp.ingress, ingress_refs)):
                for cr in crules or ():
                    refs.extend(cr.peer.referenced)
        for rs in self.cilium:
            for crule in (*rs.egress, *rs.egress_deny):
                egress_refs.extend(crule.referenced)
            for crule in (*rs.ingress, *rs.ingress_deny):
                ingress_refs.extend(crule.referenced)
        for ap in admins:
            for arule in ap.egress:
                for apeer in arule.peers:
                    egress_refs.extend(apeer.intervals())
        for policy in self.policies:
            for rules, refs in ((policy.egress, egress_refs), (policy.ingress, ingress_refs)):
                for rule in rules or ():
                    for peer in rule.peers or ():
                        refs.extend(peer.referenced())
        self.dst_blocks = sets.atoms(egress_refs)
        self.src_blocks = sets.atoms(ingress_refs)
        self._selected_in: list[tuple[int, ...]] = []
        self._selected_out: list[tuple[int, ...]] = []
        for wl in self.topology.workloads:
            ins, outs = [], []
            for i, policy in enumerate(self.policies):
                if policy.namespace != wl.namespace or wl.index not in self._selects(policy):
                    continue
                if policy.ingress is not None:
                    ins.append(i)
                if policy.egress is not None:
                    outs.append(i)
            self._selected_in.append(tuple(ins))
            self._selected_out.append(tuple(outs))
        self._cilium_in: list[tuple[int, ...]] = []
        self._cilium_out: list[tuple[int, ...]] = []
        for wl in self.topology.workloads:
            ns_labels = self.topology.namespaces.get(wl.namespace, {})
            chosen = [ci for ci, rs in enumerate(self.cilium) if rs.selects(wl, ns_labels)]
            self._cilium_in.append(
                tuple(ci for ci in chosen if self.cilium[ci].ingress or self.cilium[ci].ingress_deny)
            )
            self._cilium_out.append(
                tuple(ci for ci in chosen if self.cilium[ci].egress or self.cilium[ci].egress_deny)
            )
        # Calico's tiers per workload and direction, in tier order: each (tier, its policies in
        # (order, name) order), the Kubernetes NetworkPolicies at order 1000 of the default tier.
        self._tiers: dict[tuple[str, int], list[CalicoTier]] = {}
        if self.calico:
            tier_key = calico.tier_order(self.calico_tiers)
            for wl in self.topology.workloads:
                ns_labels = self.topology.namespaces.get(wl.namespace, {})
                for direction, selected in (("egress", self._selected_out), ("ingress", self._selected_in)):
                    entries: dict[str, list[tuple[float, str, str, int]]] = {}
                    for pi in selected[wl.index]:
                        entry = (1000.0, f"knp.default.{self.policies[pi].name}", "k", pi)
                        entries.setdefault(calico.DEFAULT_TIER, []).append(entry)
                    for ci, cp in enumerate(self.calico):
                        if (cp.egress if direction == "egress" else cp.ingress) is not None and cp.applies(
                            wl, ns_labels
                        ):
                            entries.setdefault(cp.tier, []).append((cp.order, cp.name, "c", ci))
                    if entries:
                        self._tiers[(direction, wl.index)] = [
                            CalicoTier(
                                name,
                                self._tier_action(name),
                                tuple((kind, i) for _, _, kind, i in sorted(entries[name])),
                            )
                            for name in sorted(entries, key=tier_key)
                        ]
        self._sides: dict[tuple[str, tuple[int, ...], tuple[int, ...]], Side | None] = {}
        self._cilium_peers: dict[tuple[int, int], frozenset[int]] = {}
        self._admin_sets: dict[tuple[int, str, int, int], frozenset[int]] = {}
        self._subjects: dict[int, frozenset[int]] = {}
        self._subject_sigs: dict[int, frozenset[int]] = {}
        self._peer_sigs: dict[tuple[str, int, Interval | None], frozenset[tuple[int, int]]] = {}
        self._layers: dict[tuple[Any, ...], Conn] = {}
        self._peer_cache: dict[tuple[int, str, int, int], frozenset[int]] = {}

    @property
    def workloads(self) -> list[Workload]:
        return self.topology.workloads

    def _selects(self, policy: k8s.NetworkPolicy) -> frozenset[int]:
        return self.topology.pods_matching(policy.namespace, policy.pod_selector)

    def _peer_workloads(self, pi: int, direction: str, rule: k8s.Rule, peer_index: int) -> frozenset[int]:
        key = (pi, direction, rule.index, peer_index)
        hit = self._peer_cache.get(key)
        if hit is None:
            policy = self.policies[pi]
            peer = (rule.peers or ())[peer_index]
            if peer.namespace_selector is None:
                namespaces: tuple[str, ...] = (policy.namespace,)
            else:
                namespaces = self.topology.namespaces_matching(peer.namespace_selector)
            found: set[int] = set()
            for ns in namespaces:
                found |= self.topology.pods_matching(ns, peer.pod_selector)
            hit = frozenset(found)
            self._peer_cache[key] = hit
        return hit

    def egress_policies(self, wl: Workload) -> list[str]:
        """Names of the policies that restrict the workload's egress (NetworkPolicies, then Cilium)."""
        calico_names = [
            self.calico[i].name
            if self.calico[i].namespace is None
            else f"{self.calico[i].namespace}/{self.calico[i].name}"
            for tier in self._tiers.get(("egress", wl.index), [])
            for kind, i in tier.entries
            if kind == "c"
        ]
        return (
            [self.policies[i].key for i in self._selected_out[wl.index]]
            + [self.cilium[ci].name for ci in self._cilium_out[wl.index]]
            + calico_names
        )

    def egress_isolated(self, wl: Workload) -> bool:
        return (
            bool(self._selected_out[wl.index])
            or any(self.cilium[ci].egress_default_deny for ci in self._cilium_out[wl.index])
            or bool(self._tiers.get(("egress", wl.index)))
        )

    def egress(self, wl: Workload) -> Side | None:
        """What the workload's egress allows; None when nothing restricts it (everything)."""
        i = wl.index
        return self._side("egress", self._selected_out[i], self._cilium_out[i], self.dst_blocks, None)

    def ingress(self, wl: Workload) -> Side | None:
        """What the workload's ingress allows; None when nothing restricts it (everything)."""
        i = wl.index
        return self._side("ingress", self._selected_in[i], self._cilium_in[i], self.src_blocks, wl)

    def _side(
        self,
        direction: str,
        selected: tuple[int, ...],
        cil: tuple[int, ...],
        blocks: list[Interval],
        target: Workload | None,
    ) -> Side | None:
        if not selected and not cil:
            return None
        # Ingress named ports resolve on the target itself, so its sides are not shared.
        key = (direction if target is None else f"{direction}:{target.index}", selected, cil)
        if key in self._sides:
            return self._sides[key]
        egress = direction == "egress"
        isolated = bool(selected) or any(
            self.cilium[ci].egress_default_deny if egress else self.cilium[ci].ingress_default_deny
            for ci in cil
        )
        side = Side(ips=[NONE] * len(blocks)) if isolated else Side(default=ALL, ips=[ALL] * len(blocks))
        for pi in selected:
            policy = self.policies[pi]
            rules = policy.egress if egress else policy.ingress
            for rule in rules or ():
                self._add_rule(side, pi, direction, rule, blocks, target)
        deny = Side(ips=[NONE] * len(blocks))
        for ci in cil:
            rs = self.cilium[ci]
            if isolated:
                for crule in rs.egress if egress else rs.ingress:
                    self._add_cilium_rule(side, rs, crule, blocks, target)
            for crule in rs.egress_deny if egress else rs.ingress_deny:
                self._add_cilium_rule(deny, rs, crule, blocks, target)
        result: Side | None = side
        if deny.default or deny.peers or any(deny.ips):
            side.deny = deny
            side.ips = [sets.difference(a, d) for a, d in zip(side.ips, deny.ips, strict=True)]
        elif not isolated:
            result = None
        self._sides[key] = result
        return result

    def _cilium_peer_set(self, rs: cilium.RuleSet, rule: cilium.Rule, j: int) -> frozenset[int]:
        key = (id(rule), j)
        hit = self._cilium_peers.get(key)
        if hit is None:
            selector = (rule.endpoints or ())[j]
            if rs.namespace is not None and not cilium.names_namespace(selector):
                candidates = self.topology.by_namespace.get(rs.namespace, [])
            else:
                candidates = self.topology.workloads
            ns = self.topology.namespaces
            hit = frozenset(
                w.index for w in candidates if cilium.endpoint_matches(selector, w, ns.get(w.namespace, {}))
            )
            self._cilium_peers[key] = hit
        return hit

    def _add_cilium_rule(
        self,
        side: Side,
        rs: cilium.RuleSet,
        rule: cilium.Rule,
        blocks: list[Interval],
        target: Workload | None,
    ) -> None:
        ports = rule.ports
        workloads = self.topology.workloads
        fixed = ports.on(target) if target is not None else ports.numeric
        if rule.any_peer or rule.cluster:
            if ports.named and target is None:
                for wl in workloads:
                    side.peers[wl.index] = sets.union(side.peers.get(wl.index, NONE), ports.on(wl))
            side.default = sets.union(side.default, fixed)
        if rule.any_peer or rule.world:
            side.ips = [sets.union(c, fixed) for c in side.ips]
        elif rule.intervals:
            for b, (lo, _) in enumerate(blocks):
                if any(a <= lo <= z for a, z in rule.intervals):
                    side.ips[b] = sets.union(side.ips[b], fixed)
        for j in range(len(rule.endpoints or ())):
            for index in self._cilium_peer_set(rs, rule, j):
                conn = fixed if target is not None or not ports.named else ports.on(workloads[index])
                side.peers[index] = sets.union(side.peers.get(index, NONE), conn)
        for name in rule.fqdns:
            side.fqdns[name] = sets.union(side.fqdns.get(name, NONE), ports.numeric)

    def _add_rule(
        self,
        side: Side,
        pi: int,
        direction: str,
        rule: k8s.Rule,
        blocks: list[Interval],
        target: Workload | None,
    ) -> None:
        """Add one rule to a side. Named ports resolve on the destination: the target for ingress,
        each peer workload for egress (never on an address outside the cluster)."""
        ports = rule.ports
        workloads = self.topology.workloads
        fixed = ports.on(target) if target is not None else ports.numeric

        def conn_to(index: int) -> Conn:
            return fixed if target is not None or not ports.named else ports.on(workloads[index])

        if rule.peers is None:
            if ports.named and target is None:
                for wl in workloads:
                    side.peers[wl.index] = sets.union(side.peers.get(wl.index, NONE), ports.on(wl))
            side.default = sets.union(side.default, fixed)
            side.ips = [sets.union(c, fixed) for c in side.ips]
            return
        for peer_index, peer in enumerate(rule.peers):
            if peer.is_ip:
                inside = peer.intervals()
                for b, (lo, _) in enumerate(blocks):
                    if any(a <= lo <= z for a, z in inside):
                        side.ips[b] = sets.union(side.ips[b], fixed)
                continue
            for index in self._peer_workloads(pi, direction, rule, peer_index):
                side.peers[index] = sets.union(side.peers.get(index, NONE), conn_to(index))

    def connections(self, sources: Iterable[Workload] | None = None) -> Iterator[Connection]:
        """Every allowed connection with a workload source (or only from `sources`), then from outside."""
        workloads = self.topology.workloads
        tiered = bool(self.admin_policies or self.baseline_policies or self.calico)
        ingress = [self.ingress(w) for w in workloads]
        dst_names = [_external(b) for b in self.dst_blocks]
        for src in workloads if sources is None else sources:
            out = self.egress(src)
            if out is not None and out.default == NONE and not tiered:
                candidates: Iterable[Workload] = (workloads[i] for i in sorted(out.peers))
            else:
                candidates = workloads
            for dst in candidates:
                if dst.key == src.key:  # itself (or, while variants are checked, a sibling pod)
                    continue
                conn = self._allowed(src, dst, out, ingress[dst.index], tiered)
                if conn:
                    yield Connection(src.key, dst.key, conn)
            for b, name in enumerate(dst_names):
                conn = self._through_tiers("egress", src, None, b, out, None)
                if conn:
                    yield Connection(src.key, name, conn)
        if sources is not None:
            return
        for dst in workloads:
            into = ingress[dst.index]
            for b, block in enumerate(self.src_blocks):
                conn = self._through_tiers("ingress", dst, None, b, into, dst)
                if conn:
                    yield Connection(_external(block), dst.key, conn)

    def _allowed(
        self, src: Workload, dst: Workload, out: Side | None, into: Side | None, tiered: bool
    ) -> Conn:
        """What `src` may open to `dst`: its egress (`out`) met by `dst`'s ingress (`into`)."""
        if tiered:
            conn = self._through_tiers("egress", src, dst, -1, out, dst)
        else:
            conn = ALL if out is None else out.towards(dst.index)
        if not conn:
            return NONE
        if tiered:
            back = self._through_tiers("ingress", dst, src, -1, into, dst)
        else:
            back = ALL if into is None else into.towards(src.index)
        return sets.intersect(conn, back)

    def _signature(self, wl: Workload, others: list[Workload]) -> dict[str, Conn]:
        """Every connection of `wl` with `others` and the address blocks, both directions."""
        tiered = bool(self.admin_policies or self.baseline_policies or self.calico)
        out, into = self.egress(wl), self.ingress(wl)
        sig: dict[str, Conn] = {}
        for other in others:
            sig[f"=> {other.key}"] = self._allowed(wl, other, out, self.ingress(other), tiered)
            sig[f"<= {other.key}"] = self._allowed(other, wl, self.egress(other), into, tiered)
        for b, block in enumerate(self.dst_blocks):
            sig[f"=> {_external(block)}"] = self._through_tiers("egress", wl, None, b, out, None)
        for b, block in enumerate(self.src_blocks):
            sig[f"<= {_external(block)}"] = self._through_tiers("ingress", wl, None, b, into, wl)
        for name, conn in (out.fqdns if out is not None else {}).items():
            sig[f"=> {name}"] = conn
        return sig

    def _check_variants(self) -> None:
        """Raise :class:`PodsDiffer` when the differing pods of one owner have different connections."""
        workloads = self.topology.workloads
        for key, indices in sorted(self.topology.variants.items()):
            others = [w for w in workloads if w.key != key]
            first = workloads[indices[0]]
            want = self._signature(first, others)
            for i in indices[1:]:
                wl = workloads[i]
                got = self._signature(wl, others)
                diff = sorted(
                    (k for k in want.keys() | got.keys() if want.get(k, NONE) != got.get(k, NONE)),
                    key=lambda k: ("[External]" in k, k),  # a workload first, when one differs
                )
                if diff:
                    k = diff[0]
                    raise PodsDiffer(
                        f"pods of {key} differ and the policies tell them apart: "
                        f"{first.pod} ({_shape_text(first)}) and {wl.pod} ({_shape_text(wl)}); "
                        f"{k}: {sets.conn_str(want.get(k, NONE))} for the first, "
                        f"{sets.conn_str(got.get(k, NONE))} for the second. "
                        "One peer per owner cannot answer for both; give pods of one owner the labels "
                        "the policies select on, or analyze them as separate owners"
                    )

    def _through_tiers(
        self,
        direction: str,
        subject: Workload,
        peer: Workload | None,
        b: int,
        side: Side | None,
        dst: Workload | None,
    ) -> Conn:
        """One direction of a connection between `subject` and a workload (`peer`) or the address block
        number `b`: the NetworkPolicy side (or Calico's tier instead), then the admin tiers around it."""
        if peer is not None:
            conn = ALL if side is None else side.towards(peer.index)
        else:
            conn = ALL if side is None else side.ips[b]
        isolated = side is not None
        if self.calico:
            conn, isolated = self._tier(direction, subject, peer, None if peer is not None else b, dst)
        if self.admin_policies or self.baseline_policies:
            block = (
                None
                if peer is not None
                else (self.dst_blocks if direction == "egress" else self.src_blocks)[b]
            )
            conn = self._layer(direction, subject, peer, block, conn, isolated, dst)
        return conn

    # -- Calico's tiers -------------------------------------------------------------------------------

    def _tier_action(self, name: str) -> str:
        tier = self.calico_tiers.get(name)
        return tier.default_action if tier is not None else "Deny"

    def _tier(
        self,
        direction: str,
        subject: Workload,
        peer: Workload | None,
        block: int | None,
        dst: Workload | None,
    ) -> tuple[Conn, bool]:
        """(allowed connections, isolated) of one direction through Calico's ordered tiers.

        In each tier that applies, the first rule matching a connection decides it: Allow, Deny, or
        Pass (on to the next tier); what no rule decided is dropped at the end of the tier, or passed on
        when the Tier's defaultAction is Pass. What leaves the last tier reaches the namespace profile,
        which allows."""
        tiers = self._tiers.get((direction, subject.index), [])
        if not tiers:
            return ALL, False
        egress = direction == "egress"
        blocks = self.dst_blocks if egress else self.src_blocks
        current, allowed = ALL, NONE
        for tier in tiers:
            remaining, passed = current, NONE
            for kind, i in tier.entries:
                if not remaining:
                    break
                if kind == "k":
                    side = self._side(direction, (i,), (), blocks, None if egress else subject)
                    if side is None:
                        continue
                    conn = side.towards(peer.index) if peer is not None else side.ips[block or 0]
                    hit = sets.intersect(conn, remaining)
                    allowed = sets.union(allowed, hit)
                    remaining = sets.difference(remaining, hit)
                    continue
                cp = self.calico[i]
                for rule in (cp.egress if egress else cp.ingress) or ():
                    if rule.action not in {"Allow", "Deny", "Pass"}:
                        continue
                    if peer is not None:
                        ns_labels = self.topology.namespaces.get(peer.namespace, {})
                        if not rule.peer.matches_workload(peer, ns_labels, cp.namespace):
                            continue
                    elif block is None or not rule.peer.matches_block(blocks[block]):
                        continue
                    hit = sets.intersect(rule.conn_on(dst), remaining)
                    if rule.action == "Allow":
                        allowed = sets.union(allowed, hit)
                    elif rule.action == "Pass":
                        passed = sets.union(passed, hit)
                    remaining = sets.difference(remaining, hit)
            current = sets.union(passed, remaining) if tier.default_action == "Pass" else passed
            if not current:
                break
        return sets.union(allowed, current), True

    # -- AdminNetworkPolicy / BaselineAdminNetworkPolicy tiers ----------------------------------------

    def _subject(self, pi: int, policy: admin.AdminPolicy) -> frozenset[int]:
        hit = self._subjects.get(pi)
        if hit is None:
            found: set[int] = set()
            for ns in self.topology.namespaces_matching(policy.subject_namespaces):
                found |= self.topology.pods_matching(ns, policy.subject_pods)
            hit = self._subjects[pi] = frozenset(found)
        return hit

    def _admin_peer(self, pi: int, direction: str, rule: admin.Rule, j: int) -> frozenset[int]:
        key = (pi, direction, rule.index, j)
        hit = self._admin_sets.get(key)
        if hit is None:
            peer = rule.peers[j]
            found: set[int] = set()
            if peer.namespace_selector is not None:
                for ns in self.topology.namespaces_matching(peer.namespace_selector):
                    found |= self.topology.pods_matching(ns, peer.pod_selector)
            hit = self._admin_sets[key] = frozenset(found)
        return hit

    def _all_admin(self) -> list[tuple[int, admin.AdminPolicy]]:
        n = len(self.admin_policies)
        return [*enumerate(self.admin_policies), *enumerate(self.baseline_policies, start=n)]

    def _subject_sig(self, wl: Workload) -> frozenset[int]:
        """The admin policies whose subject holds the workload."""
        hit = self._subject_sigs.get(wl.index)
        if hit is None:
            hit = frozenset(pi for pi, p in self._all_admin() if wl.index in self._subject(pi, p))
            self._subject_sigs[wl.index] = hit
        return hit

    def _peer_sig(
        self, direction: str, peer: Workload | None, block: Interval | None
    ) -> frozenset[tuple[int, int]]:
        """The (policy, rule) pairs of a direction whose peers match a workload or an address block."""
        key = (direction, peer.index if peer is not None else -1, block)
        hit = self._peer_sigs.get(key)
        if hit is None:
            found: set[tuple[int, int]] = set()
            for pi, policy in self._all_admin():
                for rule in policy.egress if direction == "egress" else policy.ingress:
                    for j, p in enumerate(rule.peers):
                        if (peer is not None and peer.index in self._admin_peer(pi, direction, rule, j)) or (
                            block is not None and any(lo <= block[0] <= hi for lo, hi in p.intervals())
                        ):
                            found.add((pi, rule.index))
                            break
            hit = self._peer_sigs[key] = frozenset(found)
        return hit

    def _layer(
        self,
        direction: str,
        subject: Workload,
        peer: Workload | None,
        block: Interval | None,
        np_conn: Conn,
        isolated: bool,
        dst: Workload | None,
    ) -> Conn:
        """One direction of a connection through the tiers: AdminNetworkPolicies (first match by
        priority: Allow, Deny, or Pass to the next tier), NetworkPolicies when the subject is isolated,
        else the BaselineAdminNetworkPolicy, else allowed.

        The answer depends only on which policies hold the subject, which rules match the peer, the
        NetworkPolicy verdict and the destination's named ports, so it is memoized on those."""
        subjects = self._subject_sig(subject)
        if not subjects:
            return np_conn if isolated else ALL
        matched = self._peer_sig(direction, peer, block)
        key = (direction, subjects, matched, np_conn, isolated, dst.named_ports if dst is not None else None)
        hit = self._layers.get(key)
        if hit is None:
            hit = self._layers[key] = self._decide(direction, subjects, matched, np_conn, isolated, dst)
        return hit

    def _decide(
        self,
        direction: str,
        subjects: frozenset[int],
        matched: frozenset[tuple[int, int]],
        np_conn: Conn,
        isolated: bool,
        dst: Workload | None,
    ) -> Conn:
        remaining, allowed, passed = ALL, NONE, NONE
        tiers = self._all_admin()
        n = len(self.admin_policies)
        for pi, policy in tiers[:n]:
            if not remaining:
                break
            if pi not in subjects:
                continue
            for rule in policy.egress if direction == "egress" else policy.ingress:
                if (pi, rule.index) not in matched:
                    continue
                hit = sets.intersect(rule.ports.on(dst), remaining)
                if not hit:
                    continue
                if rule.action == "Allow":
                    allowed = sets.union(allowed, hit)
                elif rule.action == "Pass":
                    passed = sets.union(passed, hit)
                remaining = sets.difference(remaining, hit)
        undecided = sets.union(remaining, passed)
        if isolated:
            return sets.union(allowed, sets.intersect(undecided, np_conn))
        for bi, policy in tiers[n:]:
            if bi not in subjects:
                continue
            for rule in policy.egress if direction == "egress" else policy.ingress:
                if undecided and (bi, rule.index) in matched:
                    hit = sets.intersect(rule.ports.on(dst), undecided)
                    if rule.action == "Allow":
                        allowed = sets.union(allowed, hit)
                    undecided = sets.difference(undecided, hit)
        return sets.union(allowed, undecided)

    def find(self, namespace: str, name: str) -> list[Workload]:
        """The workloads named so: every pod spec of a custom resource (``llm`` finds
        ``llm(headGroupSpec)`` and ``llm(workerGroupSpecs[gpu])``), or one of them by its full name."""
        return [
            w
            for w in self.topology.workloads
            if w.namespace == namespace and (w.name == name or w.name.startswith(f"{name}("))
        ]

    def report(self, wl: Workload) -> dict[str, Any]:
        """What one workload can reach, for JSON and table output (its egress, met by each ingress)."""
        destinations: list[dict[str, Any]] = []
        for c in self.connections([wl]):
            entry: dict[str, Any] = {"peer": c.dst, "connections": sets.conn_json(c.conn), "conn": c.text}
            if c.dst.endswith("[External]"):
                lo, _, hi = c.dst.removesuffix("[External]").partition("-")
                entry["type"] = "ipBlock"
                entry["cidrs"] = sets.interval_cidrs(
                    (int(ipaddress.IPv4Address(lo)), int(ipaddress.IPv4Address(hi)))
                )
            else:
                entry["type"] = "workload"
                entry["namespace"] = c.dst.split("/", 1)[0]
            destinations.append(entry)
        out = self.egress(wl)
        for name, conn in sorted((out.fqdns if out is not None else {}).items()):
            if conn:
                destinations.append(
                    {
                        "peer": name,
                        "type": "fqdn",
                        "connections": sets.conn_json(conn),
                        "conn": sets.conn_str(conn),
                    }
                )
        return {
            "workload": wl.key,
            "namespace": wl.namespace,
            "name": wl.name,
            "kind": wl.kind,
            "hostNetwork": wl.host_network,
            "egressIsolated": self.egress_isolated(wl),
            "egressPolicies": self.egress_policies(wl),
            "namespaces": sorted({d["namespace"] for d in destinations if d["type"] == "workload"}),
            "destinations": destinations,
        }

    def connlist(self) -> list[str]:
        """netpol-analyzer's `list` output: one sorted `src => dst : conn` line per allowed connection."""
        return sorted(c.line() for c in self.connections())
