"""The fleet view of an audit: per-cluster and per-area scores, top findings, hot spots.

Shaped here once, in plain data, so the HTML page (and any other format) only lays it out. A
cluster's score in an area is the share of that area's rules with no active finding in the cluster:
the measure Kubescape and the CIS benchmarks use (controls passed / controls evaluated), which stays
comparable between a 5-node and a 5,000-node cluster. An unreachable cluster has no score, and rules
about a kind the audit could not list are not scored (n/a, not passed).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from stockade.policies.compliance import ControlResult, control_results, get_framework
from stockade.policies.model import Finding, Severity
from stockade.scanner.result import AZURE_AREA, AZURE_AUDITED, Result

TOP = 10


@dataclass(slots=True)
class ClusterView:
    name: str
    reachable: bool
    objects: int
    pods: int
    evaluated: int
    requests: int
    findings: int
    waived: int
    score: int | None  # percent of rules passed, all areas
    by_severity: dict[str, int]
    areas: dict[str, int | None]  # area -> percent of the area's rules passed
    gaps: int
    #: rules not scored because a kind they judge could not be listed
    unscored: int = 0
    #: the Azure side: "audited", "not applicable: …" (no AKS cluster serves it), None (not asked)
    azure: str | None = None


@dataclass(slots=True)
class TopFinding:
    rule_id: str
    title: str
    severity: str
    workloads: int
    pods: int
    clusters: int


@dataclass(slots=True)
class Hotspot:
    cluster: str
    namespace: str
    findings: int
    workloads: int
    worst: str


@dataclass(slots=True)
class FleetView:
    clusters: list[ClusterView] = field(default_factory=list)
    areas: list[str] = field(default_factory=list)
    top: list[TopFinding] = field(default_factory=list)
    hotspots: list[Hotspot] = field(default_factory=list)
    framework: str | None = None
    framework_title: str | None = None
    controls: list[ControlResult] = field(default_factory=list)
    max_severity_count: int = 1
    sandbox: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (cluster, sandbox_summary)
    azure: bool = False  # some cluster's Azure side was looked at (--azure-subscription)


def fleet_view(result: Result) -> FleetView | None:
    """The fleet view of an audit result; None for a scan."""
    if not result.clusters:
        return None
    rules = result.rules
    areas = sorted({r.area for r in rules.values()})
    active = result.active
    view = FleetView(areas=areas)
    for stats in result.clusters:
        mine = [f for f in active if f.resource.cluster == stats.name]
        failing = {f.rule.id for f in mine}
        sev = Counter(f.rule.severity.label for f in mine)
        azure = stats.extras.get("azure")
        azure = azure if isinstance(azure, str) else None
        # The Azure rules judge the cluster only where its Azure side was audited; elsewhere (bare
        # metal, or no --azure-subscription) they are not applicable, not passed.
        # Nor are rules about a kind that could not be listed (a coverage gap): scores count only
        # what was read, so a forbidden kind is "n/a", never "passed".
        unread = {g.scope.split("/", 1)[1] for g in result.gaps if g.scope.startswith(stats.name + "/")}
        scored = {
            rid: r
            for rid, r in rules.items()
            if (r.area != AZURE_AREA or azure == AZURE_AUDITED) and not unread.intersection(r.kinds)
        }
        area_scores: dict[str, int | None] = {}
        for area in areas:
            ids = [r for r in scored.values() if r.area == area]
            area_scores[area] = (
                _pct(sum(1 for r in ids if r.id not in failing), len(ids))
                if stats.reachable and ids
                else None
            )
        view.clusters.append(
            ClusterView(
                name=stats.name,
                reachable=stats.reachable,
                objects=stats.objects,
                pods=stats.pods,
                evaluated=stats.evaluated,
                requests=stats.requests,
                findings=len(mine),
                waived=sum(1 for f in result.findings if f.waived and f.resource.cluster == stats.name),
                score=_pct(len(scored) - len(failing & set(scored)), len(scored))
                if stats.reachable
                else None,
                by_severity={s.label: sev.get(s.label, 0) for s in sorted(Severity, reverse=True)},
                areas=area_scores,
                gaps=sum(
                    1 for g in result.gaps if g.scope == stats.name or g.scope.startswith(stats.name + "/")
                ),
                unscored=sum(1 for r in rules.values() if unread.intersection(r.kinds)),
                azure=azure,
            )
        )
    view.azure = any(c.azure is not None for c in view.clusters)
    view.sandbox = [
        (c.name, summary) for c in result.clusters if isinstance(summary := c.extras.get("sandbox"), dict)
    ]
    view.max_severity_count = max([1, *(n for c in view.clusters for n in c.by_severity.values())])
    view.top = _top(active)
    view.hotspots = _hotspots(active)
    if result.framework:
        framework = get_framework(result.framework)
        view.framework, view.framework_title = framework.name, framework.title
        view.controls = control_results(rules, result.findings, framework.name)
    return view


def _pct(passed: int, total: int) -> int | None:
    return round(100 * passed / total) if total else None


def _top(active: list[Finding]) -> list[TopFinding]:
    by_rule: dict[str, list[Finding]] = {}
    for f in active:
        by_rule.setdefault(f.rule.id, []).append(f)
    tops = [
        TopFinding(
            rule_id=rid,
            title=fs[0].rule.title,
            severity=fs[0].rule.severity.label,
            workloads=len({f.resource for f in fs}),
            pods=sum(f.replicas or 0 for f in fs),
            clusters=len({f.resource.cluster for f in fs}),
        )
        for rid, fs in by_rule.items()
    ]
    order = {s.label: s for s in Severity}
    tops.sort(key=lambda t: (-order[t.severity], -t.pods, -t.workloads, t.rule_id))
    return tops[:TOP]


def _hotspots(active: list[Finding]) -> list[Hotspot]:
    by_ns: dict[tuple[str, str], list[Finding]] = {}
    for f in active:
        by_ns.setdefault((f.resource.cluster or "", f.resource.namespace or "(cluster-scoped)"), []).append(f)
    spots = [
        Hotspot(
            cluster=c,
            namespace=ns,
            findings=len(fs),
            workloads=len({f.resource for f in fs}),
            worst=max(f.rule.severity for f in fs).label,
        )
        for (c, ns), fs in by_ns.items()
    ]
    spots.sort(key=lambda h: (-h.findings, h.cluster, h.namespace))
    return spots[:TOP]
