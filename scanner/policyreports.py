"""Audit results written back into each cluster as `wgpolicyk8s.io/v1alpha2` PolicyReports.

PolicyReport is the Kubernetes Policy working group's report format; Kyverno, Kubescape and
Falco write it and dashboards (Policy Reporter, Headlamp) read it, so writing it puts stockade's
findings where cluster users already look, without granting them access to the audit's output.

- One `PolicyReport` named `stockade-audit` per namespace with findings, and one
  `ClusterPolicyReport` `stockade-audit` for cluster-scoped objects. Names are fixed, and writes are
  server-side applies (field manager `stockade`, forced), so each audit updates them in place.
  Reports of earlier audits in namespaces that are now clean are deleted.
- Bounded: at most :data:`MAX_RESULTS` results per report (an etcd object is limited to ~1.5 MiB),
  the most severe first; `summary` always counts every finding, and the annotation
  `stockade.io/truncated` says how many results were left out.
- Results: `deny` → `fail`, `warn`/`audit` → `warn`, waived → `skip` (with the waiver's name).
  Messages are the rules' messages: they never contain Secret data.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from typing import Any

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from stockade.policies.model import Action, Finding, format_path
from stockade.scanner.result import Result

GROUP, VERSION = "wgpolicyk8s.io", "v1alpha2"
NAME = "stockade-audit"
MAX_RESULTS = 1000
MANAGED = {"app.kubernetes.io/managed-by": "stockade"}
FIELD_MANAGER = "stockade"


def result_of(f: Finding) -> str:
    if f.waived:
        return "skip"
    return "fail" if f.action is Action.DENY else "warn"


def report_results(findings: Iterable[Finding], now: int) -> tuple[list[dict[str, Any]], dict[str, int], int]:
    """(results, summary, left out) for one report's findings, the most severe first, bounded."""
    ordered = sorted(findings, key=lambda f: (f.waived, -f.rule.severity, f.rule.id, f.resource.display()))
    summary = {"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0}
    results: list[dict[str, Any]] = []
    for f in ordered:
        outcome = result_of(f)
        summary[outcome] += 1
        if len(results) >= MAX_RESULTS:
            continue
        ref = f.resource
        resource = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
        if ref.namespace:
            resource["namespace"] = ref.namespace
        properties = {"action": f.action.value}
        if f.path:
            properties["path"] = format_path(f.path)
        if f.replicas:
            properties["pods"] = str(f.replicas)
        if f.exception is not None:
            properties["exception"] = f.exception.name
        results.append(
            {
                "policy": f.rule.id,
                "rule": f.rule.id,
                "category": f.rule.area,
                "severity": f.rule.severity.label,
                "result": outcome,
                "message": f.message,
                "source": "stockade",
                "scored": True,
                "timestamp": {"seconds": now, "nanos": 0},
                "resources": [resource],
                "properties": properties,
            }
        )
    return results, summary, len(ordered) - len(results)


def build_reports(findings: Iterable[Finding], now: int | None = None) -> list[dict[str, Any]]:
    """The PolicyReport / ClusterPolicyReport objects for one cluster's findings."""
    now = int(time.time()) if now is None else now
    by_ns: dict[str | None, list[Finding]] = {}
    for f in findings:
        by_ns.setdefault(f.resource.namespace, []).append(f)
    out = []
    for ns, fs in sorted(by_ns.items(), key=lambda kv: kv[0] or ""):
        results, summary, left_out = report_results(fs, now)
        md: dict[str, Any] = {"name": NAME, "labels": dict(MANAGED)}
        if left_out:
            md["annotations"] = {"stockade.io/truncated": str(left_out)}
        if ns:
            md["namespace"] = ns
        out.append(
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "PolicyReport" if ns else "ClusterPolicyReport",
                "metadata": md,
                "summary": summary,
                "results": results,
            }
        )
    return out


class PolicyReportWriter:
    """Writes each audited cluster's reports through its kubeconfig context (audit `on_snapshot`)."""

    def __init__(self, config_file: str | None, clients: Mapping[str, Any] | None = None) -> None:
        self.config_file = config_file
        self.clients = dict(clients or {})
        self.messages: list[str] = []

    def _api(self, cluster: str) -> k8s_client.CustomObjectsApi:
        client = self.clients.get(cluster)
        if client is None:
            new_client: Any = k8s_config.new_client_from_config
            client = self.clients[cluster] = new_client(
                config_file=self.config_file, context=cluster, persist_config=False
            )
        return k8s_client.CustomObjectsApi(client)

    def write(self, snap: Any, result: Result) -> None:
        cluster = str(snap.name)
        findings = [f for f in result.findings if f.resource.cluster == cluster]
        try:
            written = self.apply(cluster, build_reports(findings))
        except k8s_client.ApiException as exc:
            self.messages.append(f"{cluster}: PolicyReports not written: HTTP {exc.status} {exc.reason}")
            return
        except Exception as exc:  # connection errors: the audit's results still stand
            self.messages.append(f"{cluster}: PolicyReports not written: {str(exc).splitlines()[0][:200]}")
            return
        self.messages.append(f"{cluster}: {written} PolicyReports written")

    def apply(self, cluster: str, reports: list[dict[str, Any]]) -> int:
        api = self._api(cluster)
        keep: set[str | None] = set()
        for report in reports:
            ns = report["metadata"].get("namespace")
            keep.add(ns)
            common: dict[str, Any] = {
                "field_manager": FIELD_MANAGER,
                "force": True,
                "_content_type": "application/apply-patch+yaml",
            }
            if ns:
                api.patch_namespaced_custom_object(
                    GROUP, VERSION, ns, "policyreports", NAME, report, **common
                )
            else:
                api.patch_cluster_custom_object(
                    GROUP, VERSION, "clusterpolicyreports", NAME, report, **common
                )
        selector = ",".join(f"{k}={v}" for k, v in MANAGED.items())
        existing: Any = api.list_cluster_custom_object(
            GROUP, VERSION, "policyreports", label_selector=selector
        )
        for item in existing.get("items") or []:
            md = item.get("metadata") or {}
            if md.get("name") == NAME and md.get("namespace") not in keep:
                api.delete_namespaced_custom_object(GROUP, VERSION, md["namespace"], "policyreports", NAME)
        if None not in keep:
            with contextlib.suppress(k8s_client.ApiException):
                api.delete_cluster_custom_object(GROUP, VERSION, "clusterpolicyreports", NAME)
        return len(reports)
