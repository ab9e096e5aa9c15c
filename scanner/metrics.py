"""An audit's counts for Prometheus: pushed to a Pushgateway (`audit --push-metrics URL`, the in-cluster
CronJob) or written for node_exporter's textfile collector (`audit --metrics-file PATH`).

Why those two and not the webhook's `/metrics`: an audit is a batch job. It runs, reports and exits,
so there is nothing left to scrape; Prometheus' documented answer for a service-level batch job is the
Pushgateway, and on bare-metal nodes where the audit runs from cron, the textfile collector. Each push
replaces the previous one of the same grouping key (job ``stockade_audit``, the cluster), so a rule
that stopped firing drops out, and ``stockade_audit_last_success_timestamp_seconds`` lets an alert fire
when audits stop (a CronJob that keeps failing pushes nothing new).

Series (one per cluster): ``stockade_audit_findings{rule, severity, action}`` (waived findings are not
counted: they are ``stockade_audit_waived``), ``stockade_audit_objects``, ``stockade_audit_coverage_gaps``,
``stockade_audit_reachable``, ``stockade_audit_last_success_timestamp_seconds`` (only when the cluster
was read completely). Labels never carry object names or messages: the cardinality is rules by actions.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, push_to_gateway, write_to_textfile

from stockade.scanner.result import Result

JOB = "stockade_audit"


def registry_for(result: Result, clusters: list[str], now: float | None = None) -> CollectorRegistry:
    """The series of these audited clusters (findings, objects, gaps), labelled by cluster."""
    registry = CollectorRegistry()
    findings = Gauge(
        "stockade_audit_findings",
        "Findings of the last audit (waived ones excluded), per rule, severity and action.",
        ["cluster", "rule", "severity", "action"],
        registry=registry,
    )
    waived = Gauge(
        "stockade_audit_waived", "Findings waived by an exception.", ["cluster"], registry=registry
    )
    objects = Gauge(
        "stockade_audit_objects", "Objects listed by the last audit.", ["cluster"], registry=registry
    )
    gaps = Gauge(
        "stockade_audit_coverage_gaps",
        "What the last audit could not read (forbidden, failing).",
        ["cluster"],
        registry=registry,
    )
    reachable = Gauge(
        "stockade_audit_reachable",
        "1 when the cluster's API server answered.",
        ["cluster"],
        registry=registry,
    )
    success = Gauge(
        "stockade_audit_last_success_timestamp_seconds",
        "When an audit last read the cluster completely.",
        ["cluster"],
        registry=registry,
    )
    for cluster in clusters:
        ours = [f for f in result.findings if f.resource.cluster == cluster]
        counts = Counter(
            (f.rule.id, f.rule.severity.name.lower(), f.action.value) for f in ours if not f.waived
        )
        for (rule, severity, action), n in sorted(counts.items()):
            findings.labels(cluster=cluster, rule=rule, severity=severity, action=action).set(n)
        waived.labels(cluster=cluster).set(sum(1 for f in ours if f.waived))
        stats = next((c for c in result.clusters if c.name == cluster), None)
        objects.labels(cluster=cluster).set(stats.objects if stats is not None else 0)
        own_gaps = [g for g in result.gaps if g.scope == cluster or g.scope.startswith(f"{cluster}/")]
        gaps.labels(cluster=cluster).set(len(own_gaps))
        is_reachable = stats is not None and stats.reachable
        reachable.labels(cluster=cluster).set(1 if is_reachable else 0)
        if is_reachable and not own_gaps:
            success.labels(cluster=cluster).set(time.time() if now is None else now)
    return registry


def push(result: Result, gateway: str, timeout: float = 10.0) -> list[str]:
    """Push each cluster's series under its own grouping key; one line per failure (never raises:
    the audit's result stands)."""
    failures = []
    for stats in result.clusters:
        try:
            push_to_gateway(
                gateway,
                job=JOB,
                grouping_key={"cluster": stats.name},
                registry=registry_for(result, [stats.name]),
                timeout=timeout,
            )
        except (OSError, ValueError) as exc:  # URLError, refused, HTTP errors; a malformed URL
            first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            failures.append(f"{stats.name}: metrics not pushed: {first}")
    return failures


def write_textfile(result: Result, path: Path) -> None:
    """node_exporter's textfile collector format, every cluster in one file (written atomically)."""
    write_to_textfile(str(path), registry_for(result, [c.name for c in result.clusters]))
