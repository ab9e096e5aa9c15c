"""`stockade audit` against live "clusters": the real `kubernetes` client over HTTP on loopback.

The API server is our own fake, `examples/fleet/apiserver.py` (a stdlib `http.server` app serving
paginated LISTs, 403/404 Status bodies and injected 429/503/410 failures; the same server
`make demo` and `bench/audit.py` use). Nothing outside 127.0.0.1 is contacted.
"""

from __future__ import annotations

import math
import re
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.config.settings import load_config, parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.kinds.api import KINDS
from stockade.scanner.audit import Target, run_audit
from stockade.scanner.reports import get_report
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.cluster import ClusterReader, ListError, RateLimiter
from stockade.scanner.sources.files import FileSource
from tests.fleet import fake, reader

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "examples" / "fleet" / "fleet.yaml"


def _reader(url: str, name: str = "c", **options: Any) -> ClusterReader:
    return reader(url, name, **options)


def _audit(served: list[Any], evaluator: Evaluator, **options: Any) -> Result:
    targets = [Target(s.cluster.name, lambda s=s: _reader(s.url, s.cluster.name, **options)) for s in served]
    return run_audit(targets, evaluator, version="test")


@pytest.fixture(scope="module")
def fleet_result() -> Result:
    clusters = fake.load_fleet(FLEET)
    served = [fake.ServedCluster(c) for c in clusters]
    for s in served:
        s.__enter__()
    try:
        return _audit(served, Evaluator.default(load_config(ROOT / "examples/stockade.yaml")))
    finally:
        for s in served:
            s.__exit__()


def _verdicts(result: Result, cluster: str | None) -> set[tuple[str, str | None, str, str, bool]]:
    return {
        (f.resource.kind, f.resource.namespace, f.resource.name, f.rule.id, f.waived)
        for f in result.findings
        if f.resource.cluster == cluster
    }


def test_audit_gives_the_scan_verdicts_for_the_same_objects(fleet_result: Result) -> None:
    """Same manifests, two gates: every (workload, rule, waived) the scan reports, the audit reports.

    The audit evaluates a running pod per template and reports on the owning workload; the scan
    evaluates the workload's template. For these manifests both must agree exactly.
    """
    config = load_config(ROOT / "examples/stockade.yaml")
    manifests = ROOT / "examples/manifests"
    files = FileSource([str(manifests / d) for d in ("cluster", "compliant", "violations", "waived")])
    scanned = run_scan(files, [], Evaluator.default(config), ScanOptions(config), version="test")
    assert not fleet_result.errors
    audited, expected = _verdicts(fleet_result, "aks-prod-eastus"), _verdicts(scanned, None)
    # The API server defaults hostPort = containerPort on the *pods* of a hostNetwork workload, not on
    # its template (Kubernetes >= 1.28): the running pods of triton-hostnet have host ports the scan of
    # the template cannot see, and both gates fold them into the hostNetwork finding (STK-POD-002),
    # so they agree. The audit sees the whole cluster, a scan some files: two example policies select
    # no pod of their namespace (STK-NET-010 is decided only on a complete inventory).
    assert audited - expected == {
        ("NetworkPolicy", "ml-inference", "feature-store-clients", "STK-NET-010", False),
        ("NetworkPolicy", "ml-training", "dataset-downloader-internet", "STK-NET-010", False),
    }
    assert expected - audited == set()


def test_pods_are_folded_into_their_workloads(fleet_result: Result) -> None:
    stats = {c.name: c for c in fleet_result.clusters}
    bm = stats["gpu-bm-1"]
    assert bm.pods == 16 + 6 + 8 + 1  # StatefulSet, Deployment, DaemonSet pods, one bare pod
    # 3 workloads + 1 bare pod + Namespaces and ServiceAccounts (listed objects, evaluated as themselves)
    assert bm.evaluated < bm.pods
    by_workload = {
        (f.resource.kind, f.resource.name): f.replicas
        for f in fleet_result.findings
        if f.resource.cluster == "gpu-bm-1"
    }
    assert by_workload[("DaemonSet", "node-debugger")] == 8
    assert by_workload[("Deployment", "data-loader")] == 6
    assert by_workload[("Pod", "gpu-shell")] == 1
    assert ("StatefulSet", "llm-pretrain") not in by_workload
    assert not any(
        f.resource.kind in ("ReplicaSet", "Pod") and f.resource.name.startswith("data-loader")
        for f in fleet_result.findings
    )


def test_exceptions_written_for_a_workload_cover_its_pods(fleet_result: Result) -> None:
    dcgm = [f for f in fleet_result.findings if f.resource.name == "dcgm-exporter"]
    assert dcgm and all(f.waived for f in dcgm)
    assert {f.replicas for f in dcgm} == {4}  # one pod per node


def test_cluster_overrides_apply_by_context_name() -> None:
    cluster = fake.FakeCluster.from_objects(
        "aks-dev-westus", fake.load_manifests([FLEET.parent / "gpu-bm-1"])
    )
    cfg = parse_config("overrides:\n  - {rules: ['*'], clusters: ['aks-dev-*'], action: warn}\n")
    with fake.ServedCluster(cluster) as served:
        result = _audit([served], Evaluator.default(cfg))
    assert result.findings and {f.action.value for f in result.findings} == {"warn"}


def _small_cluster(pods: int = 23) -> Any:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps"},
        "spec": {
            "replicas": pods,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}
    return fake.FakeCluster.from_objects("small", [namespace, deployment], nodes=2)


def test_lists_are_paginated_and_counted() -> None:
    cluster = _small_cluster(23)
    with fake.ServedCluster(cluster) as served:
        reader = _reader(served.url, page_size=5)
        pods = reader.list(KINDS["Pod"])
        assert len(pods) == 23 and all(p["kind"] == "Pod" and p["apiVersion"] == "v1" for p in pods)
        pod_requests = [q for path, q, _ in cluster.requests if path == "/api/v1/pods"]
        assert len(pod_requests) == math.ceil(23 / 5)
        assert all(q["limit"] == "5" for q in pod_requests)
        assert [("continue" in q) for q in pod_requests] == [False, True, True, True, True]


def test_at_most_one_request_per_page_of_500() -> None:
    cluster = _small_cluster(1200)
    with fake.ServedCluster(cluster) as served:
        result = _audit([served], Evaluator.default())
    stats = result.clusters[0]
    assert stats.pods == 1200
    pod_requests = [1 for path, _, _ in cluster.requests if path == "/api/v1/pods"]
    assert len(pod_requests) == 3
    listed_kinds = len({path for path, _, _ in cluster.requests})
    assert stats.requests == len(cluster.requests) <= listed_kinds + math.ceil(stats.objects / 500)


def test_throttling_and_server_errors_are_retried() -> None:
    cluster = _small_cluster(3)
    cluster.failures["/api/v1/pods"] = [429, 503, 500]
    with fake.ServedCluster(cluster) as served:
        reader = _reader(served.url)
        assert len(reader.list(KINDS["Pod"])) == 3
    assert reader.stats.retries == 3
    assert [s for p, _, s in cluster.requests if p == "/api/v1/pods"] == [429, 503, 500, 200]


def test_persistent_failure_and_forbidden_kinds_are_coverage_gaps() -> None:
    cluster = _small_cluster(3)
    cluster.failures["/apis/apps/v1/daemonsets"] = [503] * 10
    cluster.forbidden.add("/api/v1/serviceaccounts")
    with fake.ServedCluster(cluster) as served:
        result = _audit([served], Evaluator.default(), max_attempts=3)
    scopes = {g.scope: g.message for g in result.gaps}
    assert set(scopes) == {"small/DaemonSet", "small/ServiceAccount"}
    assert "forbidden" in scopes["small/ServiceAccount"]
    assert "503" in scopes["small/DaemonSet"]
    # the rest of the cluster was still audited
    assert result.clusters[0].reachable and any(f.resource.name == "web" for f in result.findings)


def test_custom_resources_not_installed_are_not_gaps() -> None:
    cluster = _small_cluster(1)
    with fake.ServedCluster(cluster) as served:
        reader = _reader(served.url)
        with pytest.raises(ListError) as err:
            reader.list(KINDS["CiliumNetworkPolicy"])
    assert err.value.status == 404


def test_an_expired_continue_token_restarts_the_list() -> None:
    cluster = _small_cluster(12)
    with fake.ServedCluster(cluster) as served:
        reader = _reader(served.url, page_size=5)
        pages = reader.pages(KINDS["Pod"])
        first = next(pages)
        cluster.failures["/api/v1/pods"] = [410]
        rest = [p for page in pages for p in page]
    assert len(first) == 5
    # the restart re-lists from the first page: 5 + (410) + 5 + 5 + 2
    assert len(rest) == 12
    assert [s for p, _, s in cluster.requests if p == "/api/v1/pods"] == [200, 410, 200, 200, 200]


def test_an_unreachable_cluster_is_a_gap_and_the_others_are_audited() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"  # bound, never listening: refused
        cluster = _small_cluster(2)
        with fake.ServedCluster(cluster) as served:
            targets = [
                Target("dead", lambda: _reader(dead, "dead", max_attempts=2)),
                Target("small", lambda: _reader(served.url, "small")),
            ]
            result = run_audit(targets, Evaluator.default(), version="test")
    reach = {c.name: c.reachable for c in result.clusters}
    assert reach == {"dead": False, "small": True}
    assert [g.scope for g in result.gaps] == ["dead"]
    assert "cannot reach the API server" in result.gaps[0].message
    assert any(f.resource.cluster == "small" for f in result.findings)


def test_secrets_are_listed_as_key_names_only() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "storage", "namespace": "apps"},
        "data": {"azurestorageaccountkey": "c2VjcmV0"},
        "stringData": {"token": "hunter2"},
        "type": "Opaque",
    }
    cluster = fake.FakeCluster.from_objects("s", [secret], simulate=False)
    with fake.ServedCluster(cluster) as served:
        listed = _reader(served.url).list(KINDS["Secret"])
    assert listed == [
        {
            "metadata": listed[0]["metadata"],
            "type": "Opaque",
            "kind": "Secret",
            "apiVersion": "v1",
            "dataKeys": ["azurestorageaccountkey", "token"],
        }
    ]
    assert "c2VjcmV0" not in orjson.dumps(listed).decode()
    assert "hunter2" not in orjson.dumps(listed).decode()


def test_rate_limiter_spaces_requests_beyond_the_burst() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    limiter = RateLimiter(qps=10, burst=2, clock=lambda: now[0])
    for _ in range(5):
        limiter.acquire(sleep)
    assert slept == pytest.approx([0.1, 0.1, 0.1])


# --- the command ---------------------------------------------------------------------------------


@pytest.fixture()
def kubeconfig(tmp_path: Path) -> Any:
    clusters = fake.load_fleet(FLEET)
    served = [fake.ServedCluster(c) for c in clusters]
    for s in served:
        s.__enter__()
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(fake.kubeconfig({s.cluster.name: s.url for s in served})))
    _SERVED.clear()
    _SERVED.update({s.cluster.name: s.cluster for s in served})
    yield path
    for s in served:
        s.__exit__()


def test_cli_audits_every_context_into_one_json_report(kubeconfig: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "--kubeconfig",
            str(kubeconfig),
            "--all-contexts",
            "--config",
            str(ROOT / "examples/stockade.yaml"),
            "--format",
            "json",
            "--output",
            str(out),
        ],
    )
    # the fixture fleet forbids one kind: a coverage gap, so the audit is incomplete (exit 2)
    assert result.exit_code == 2, result.output
    assert "audit incomplete: 1 coverage gap(s)" in result.output
    doc = orjson.loads(out.read_bytes())
    assert doc["gaps"]
    clusters = Counter(f["resource"]["cluster"] for f in doc["findings"])
    assert set(clusters) == {"aks-prod-eastus", "gpu-bm-1"}
    assert "2/2 clusters" in result.output
    reported = CliRunner().invoke(
        app, ["audit", "--kubeconfig", str(kubeconfig), "--all-contexts", "--no-fail-on-gaps", "-f", "json"]
    )
    assert reported.exit_code == 1, reported.output  # the gaps are still in the report
    assert orjson.loads(reported.stdout)["gaps"] == doc["gaps"]


def test_cli_current_context_and_errors(kubeconfig: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "--kubeconfig", str(kubeconfig), "--format", "json"])
    assert ok.exit_code == 1
    assert {f["resource"]["cluster"] for f in orjson.loads(ok.stdout)["findings"]} == {"aks-prod-eastus"}
    unknown = runner.invoke(app, ["audit", "--kubeconfig", str(kubeconfig), "--context", "nope"])
    assert unknown.exit_code == 2 and "unknown context(s): nope" in unknown.output
    missing = runner.invoke(app, ["audit", "--kubeconfig", str(tmp_path / "absent")])
    assert missing.exit_code == 2 and "cannot read kubeconfig" in missing.output


def test_policy_reports_are_written_back_in_place_and_bounded(kubeconfig: Path, monkeypatch: Any) -> None:
    from stockade.scanner import policyreports

    runner = CliRunner()
    args = ["audit", "--kubeconfig", str(kubeconfig), "--context", "gpu-bm-1", "--write-policy-reports"]
    args += ["--no-fail-on-gaps"]
    args += ["--config", str(ROOT / "examples/stockade.yaml"), "--format", "json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output
    assert "gpu-bm-1: 2 PolicyReports written" in first.output
    doc = orjson.loads(first.stdout)
    cluster = _served_cluster(kubeconfig, "gpu-bm-1")
    reports = {k[2]: v for k, v in cluster.written.items() if k[1] == "policyreports"}
    assert set(reports) == {"pretrain", "infra-debug"}
    assert all(ct == "application/apply-patch+yaml" for _, ct, _ in cluster.patches)
    assert all(q == {"fieldManager": "stockade", "force": "true"} for _, _, q in cluster.patches)
    pretrain = reports["pretrain"]
    assert pretrain["kind"] == "PolicyReport" and pretrain["metadata"]["name"] == "stockade-audit"
    n_pretrain = sum(1 for f in doc["findings"] if f["resource"]["namespace"] == "pretrain")
    assert pretrain["summary"]["fail"] + pretrain["summary"]["warn"] == n_pretrain == len(pretrain["results"])
    assert {r["resources"][0]["name"] for r in pretrain["results"]} == {"data-loader", "gpu-shell"}
    # a second audit updates the same objects; a namespace that became clean loses its report
    cluster.written.pop(("wgpolicyk8s.io/v1alpha2", "policyreports", "infra-debug", "stockade-audit"))
    cluster.written[("wgpolicyk8s.io/v1alpha2", "policyreports", "old-ns", "stockade-audit")] = {
        "metadata": {
            "name": "stockade-audit",
            "namespace": "old-ns",
            "labels": {"app.kubernetes.io/managed-by": "stockade"},
        }
    }
    assert runner.invoke(app, args).exit_code == 1
    assert {k[2] for k in cluster.written if k[1] == "policyreports"} == {"pretrain", "infra-debug"}
    # bounded: results are capped, the summary still counts everything
    monkeypatch.setattr(policyreports, "MAX_RESULTS", 3)
    capped = policyreports.build_reports(
        [f for f in _audit_findings(kubeconfig) if f.resource.namespace == "pretrain"]
    )[0]
    assert len(capped["results"]) == 3
    assert capped["metadata"]["annotations"]["stockade.io/truncated"] == str(n_pretrain - 3)
    assert capped["summary"]["fail"] + capped["summary"]["warn"] == n_pretrain


_SERVED: dict[str, Any] = {}


def _served_cluster(kubeconfig: Path, name: str) -> Any:
    return _SERVED[name]


def _audit_findings(kubeconfig: Path) -> list[Any]:
    from stockade.scanner.sources.cluster import ClusterReader as Reader

    target = Target("gpu-bm-1", lambda: Reader.from_kubeconfig(str(kubeconfig), "gpu-bm-1"))
    return run_audit(
        [target], Evaluator.default(load_config(ROOT / "examples/stockade.yaml")), version="t"
    ).findings


def test_framework_limits_the_audit_and_reports_controls(kubeconfig: Path, tmp_path: Path) -> None:
    from stockade.policies.compliance import controls

    runner = CliRunner()
    base = [
        "audit",
        "--kubeconfig",
        str(kubeconfig),
        "--all-contexts",
        "--framework",
        "CIS_AKS",
    ]  # any spelling
    base += ["--no-fail-on-gaps"]
    as_json = runner.invoke(app, [*base, "--format", "json"])
    assert as_json.exit_code == 1, as_json.output
    doc = orjson.loads(as_json.stdout)
    assert doc["findings"] and all(f["rule"]["frameworks"] for f in doc["findings"])
    evaluator = Evaluator.default()
    assert all(controls(evaluator.rules[f["rule"]["id"]], "cis-aks") for f in doc["findings"])
    page = tmp_path / "cis.html"
    assert runner.invoke(app, [*base, "--format", "html", "--output", str(page)]).exit_code == 1
    html = page.read_text()
    assert "CIS Azure Kubernetes Service Benchmark" in html
    assert "<code>4.2.1</code>" in html  # privileged containers: failed by the node-debugger DaemonSet
    table = runner.invoke(app, base)
    assert table.exit_code == 1
    assert re.search(r"4\.2\.1\s+fail\s+STK-POD-003", table.stdout)
    unknown = runner.invoke(app, ["audit", "--kubeconfig", str(kubeconfig), "--framework", "sox"])
    assert unknown.exit_code == 2 and "unknown framework 'sox'" in unknown.output
    close = runner.invoke(app, ["audit", "--kubeconfig", str(kubeconfig), "--framework", "nsa-cisaa"])
    assert close.exit_code == 2 and "did you mean nsa-cisa" in close.output


def test_control_results_pass_fail_and_waivers() -> None:
    from stockade.policies.compliance import control_results, controls

    evaluator = Evaluator.default()
    privileged = evaluator.rules["STK-POD-003"]
    assert controls(privileged, "cis-k8s") and controls(privileged, "cis-aks") == ["4.2.1"]
    assert controls(privileged, "pss-baseline") == ["STK-POD-003"]
    results = {c.control: c for c in control_results(evaluator.rules, [], "cis-aks")}
    assert results["4.2.1"].status == "pass" and results["4.2.1"].findings == 0


@pytest.mark.parametrize("fmt", ["table", "json", "sarif", "junit", "markdown", "html"])
def test_every_format_renders_an_audit_with_clusters_and_gaps(fleet_result: Result, fmt: str) -> None:
    from stockade.scanner.result import CoverageGap

    fleet_result.gaps.append(CoverageGap("gpu-bm-1/ClusterRoleBinding", "clusterrolebindings forbidden: 403"))
    try:
        text = get_report(fmt).render(fleet_result)
    finally:
        fleet_result.gaps.pop()
    assert "gpu-bm-1" in text and "aks-prod-eastus" in text
    assert "clusterrolebindings forbidden" in text
    assert "c2VjcmV0" not in text


def test_progress_shows_each_cluster_on_a_terminal(kubeconfig: Path) -> None:
    from rich.console import Console

    from stockade.cli.audit import _RichProgress

    console = Console(record=True, force_terminal=True, width=120)
    progress = _RichProgress(console)
    targets = [
        Target(name, lambda n=name: ClusterReader.from_kubeconfig(str(kubeconfig), n))
        for name in ("aks-prod-eastus", "gpu-bm-1")
    ]
    with progress:
        run_audit(targets, Evaluator.default(), version="test", progress=progress)
    screen = console.export_text()
    assert "aks-prod-eastus" in screen and "gpu-bm-1" in screen
    assert re.search(r"\d+ findings", screen)


def test_evaluation_in_worker_processes_gives_the_same_findings() -> None:
    from stockade.scanner.scan import PARALLEL_OBJECTS, ScanOptions

    objects: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}]
    for i in range(PARALLEL_OBJECTS + 50):
        container = {"name": "c", "image": "nginx" if i % 3 else "myregistry.azurecr.io/x:1"}
        if i % 5 == 0:
            container["securityContext"] = {"privileged": True}
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"web-{i}", "namespace": "apps"},
                "spec": {
                    "replicas": 2,
                    "template": {
                        "metadata": {"labels": {"app": f"web-{i}"}},
                        "spec": {"containers": [container]},
                    },
                },
            }
        )
    cluster = fake.FakeCluster.from_objects("many", objects, nodes=2)
    evaluator = Evaluator.default()

    def findings(workers: int) -> set[tuple[Any, ...]]:
        with fake.ServedCluster(cluster) as served:
            target = Target("many", lambda: _reader(served.url, "many"))
            options = ScanOptions(evaluator.config, workers=workers)
            result = run_audit([target], evaluator, version="test", options=options)
        assert not result.errors and result.clusters[0].evaluated > PARALLEL_OBJECTS
        return {(f.resource, f.rule.id, f.message, f.replicas) for f in result.findings}

    serial, parallel = findings(1), findings(2)
    assert serial and serial == parallel


def test_each_cluster_reports_its_sandbox_classes_and_high_risk_workloads(fleet_result: Result) -> None:
    summaries = {c.name: c.extras["sandbox"] for c in fleet_result.clusters}
    aks = summaries["aks-prod-eastus"]
    assert isinstance(aks, dict)
    handlers = {c["name"]: c["handler"] for c in aks["classes"]}
    assert handlers["gvisor"] == "runsc" and handlers["kata-vm-isolation"] == "kata"
    assert handlers["gvisor-debug"] == "runc"  # examples/manifests/violations/sandbox.yaml
    assert all(c["nodes"] is not None for c in aks["classes"])  # Nodes were listed
    assert sum(aks["counts"].values()) >= 1  # the model-eval namespace is labelled for sandboxes
    bare = summaries["gpu-bm-1"]
    assert isinstance(bare, dict) and bare["classes"] == []
    html = get_report("html").render(fleet_result)
    assert "Sandboxed runtime classes" in html and "kata-vm-isolation" in html
    doc = orjson.loads(get_report("json").render(fleet_result))
    assert {c["name"]: c["sandbox"]["profile"] for c in doc["clusters"]} == {
        "aks-prod-eastus": aks["profile"],
        "gpu-bm-1": bare["profile"],
    }
