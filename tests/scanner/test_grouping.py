"""One row per problem in human reports; every finding and rule id kept in JSON and SARIF."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.model import ExceptionRef
from stockade.scanner.reports.grouping import MAX_MESSAGE, group

runner = CliRunner()

STAR_ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: everything}
rules:
  - apiGroups: ["*"]
    resources: ["*"]
    verbs: ["*"]
"""
HOST_PATHS = """\
apiVersion: v1
kind: Pod
metadata: {name: node-agent, namespace: ops}
spec:
  containers:
    - name: agent
      image: registry.example/agent@sha256:%s
      resources: {requests: {cpu: 10m, memory: 10Mi}, limits: {memory: 10Mi}}
  volumes:
    - {name: a, hostPath: {path: /var/run/docker.sock}}
    - {name: b, hostPath: {path: /etc}}
    - {name: c, hostPath: {path: /var/lib/kubelet}}
""" % ("0" * 64)


def _scan(tmp_path: Path, text: str, *args: str) -> tuple[str, dict[str, object]]:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    table = runner.invoke(app, ["scan", str(manifest), *args], env={"COLUMNS": "200"})
    as_json = runner.invoke(app, ["scan", str(manifest), "-f", "json", *args])
    return table.stdout, json.loads(as_json.stdout)


def _rows(table: str) -> list[str]:
    return [line for line in table.splitlines() if "m.yaml:" in line]


def test_a_wildcard_role_is_one_row_listing_its_capabilities(tmp_path: Path) -> None:
    table, data = _scan(tmp_path, STAR_ROLE)
    ids = [f["rule"]["id"] for f in data["findings"]]  # type: ignore[index]
    # JSON: one finding per capability of the role; the wildcards (`*` in apiGroups, resources and
    # verbs of the one rule) are folded into the sharpest capability that rule grants
    assert len(ids) >= 10 and "STK-RBAC-001" not in ids
    folded = [m["rule"] for f in data["findings"] for m in f["details"].get("folded", ())]  # type: ignore[index, union-attr, attr-defined]
    assert folded.count("STK-RBAC-001") == 3
    rows = _rows(table)
    assert len(rows) == 1, rows
    assert "critical" in rows[0] and f"+{len(set(ids)) - 1}" in rows[0]
    for rule_id in set(ids) - {rows[0].split()[3]}:
        assert f"also {rule_id}:" in table or f"more {rule_id}" in table
    assert f"{len(ids)} findings" in table and "shown as 1 row" in table


def test_host_path_volumes_fold_into_the_pod_security_row(tmp_path: Path) -> None:
    table, data = _scan(tmp_path, HOST_PATHS)
    pod_rules = [f["rule"]["id"] for f in data["findings"] if f["rule"]["id"].startswith("STK-POD")]  # type: ignore[index]
    assert len(pod_rules) >= 6  # 3 volumes x (baseline hostPath, restricted volume types, forbidden path)
    # (the read-only root filesystem warning, STK-POD-202, is a row of its own: another action)
    pod_rows = [r for r in _rows(table) if "STK-POD" in r and "STK-POD-202" not in r]
    assert len(pod_rows) == 1, pod_rows


def test_groups_never_mix_objects_files_or_waived_findings(tmp_path: Path) -> None:
    from stockade.policies.evaluate import Evaluator
    from stockade.scanner.scan import ScanOptions, run_scan
    from stockade.scanner.sources.files import FileSource

    manifest = tmp_path / "m.yaml"
    manifest.write_text(STAR_ROLE)
    evaluator = Evaluator.default()
    result = run_scan(FileSource([str(manifest)]), [], evaluator, ScanOptions(evaluator.config), version="t")
    findings = result.sorted_findings()
    assert len(group(findings)) == 1
    # the same object with the same findings in another file (Volcano's installer and its two
    # variants): one row naming the other file; with any finding different, a row of its own
    other_file = [replace(f, file="other.yaml", line=(f.line or 0) + 40) for f in findings]
    (both,) = group(findings + other_file)
    assert [f.file for f in both.elsewhere] == ["other.yaml"]
    assert both.lines()[-1] == f"the same name and findings in other.yaml:{other_file[0].line}"
    changed = [*other_file[:-1], replace(other_file[-1], message="another message")]
    assert [len(g.elsewhere) for g in group(findings + changed)] == [0, 0]
    # the same file rendered again into another namespace (a kustomize overlay's `namespace:`)
    overlay = [replace(f, resource=replace(f.resource, namespace="kubeflow")) for f in findings]
    (rendered,) = group(findings + overlay)
    assert [f.resource.namespace for f in rendered.elsewhere] == ["kubeflow"]
    assert rendered.lines()[-1].startswith("the same for ClusterRole/kubeflow/everything (")
    other_object = [replace(f, resource=replace(f.resource, name="x")) for f in findings]
    assert len(group(findings + other_object)) == 2
    waiver = ExceptionRef("w", "team", "why", "2099-01-01")
    waived = [replace(findings[0], exception=waiver)]
    assert len(group(findings[1:] + waived)) == 2
    merged = group(findings)[0]
    assert merged.action.value == "deny" and merged.severity.label == "critical"
    assert {f.rule.id for f in merged.findings} == {f.rule.id for f in findings}


def test_a_long_message_is_cut_with_its_length_in_human_output_only() -> None:
    from stockade.policies.model import Action, Finding, ResourceRef, Rule, Severity

    rule = Rule("STK-X-001", "t", "d", "x", Severity.HIGH, (), (), "r", "data.x", "x.rego")
    long = "word " * 1000
    f = Finding(rule, Action.DENY, long, ResourceRef("v1", "Pod", "a", "p"))
    (g,) = group([f])
    assert len(g.lines()[0]) < MAX_MESSAGE + 40 and "(5000 characters in all)" in g.lines()[0]
    assert f.message == long


#: a workload of `kind` named `name` in `namespace` running `image` (its token not mounted)
WORKLOAD = """\
apiVersion: apps/v1
kind: {kind}
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      automountServiceAccountToken: false
      containers: [{{name: c, image: "{image}"}}]
---
"""


def _workloads(kind: str, image: str, placed: list[tuple[str, str]]) -> str:
    return "".join(WORKLOAD.format(kind=kind, name=n, namespace=ns, image=image) for n, ns in placed)


def _rule_rows(table: str, rule: str) -> list[str]:
    return [line for line in table.splitlines() if "m.yaml:" in line and rule in line]


def test_a_namespace_without_egress_isolation_is_one_row_naming_its_workloads(tmp_path: Path) -> None:
    """STK-NET-001 says the same of every workload of a namespace, and its fix is one NetworkPolicy
    for the namespace: kubeflow/manifests had 45 such rows in 9 namespaces. One row per namespace
    now names the other workloads; JSON keeps one finding per workload."""
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n"
    placed = [("a", "ml"), ("b", "ml"), ("c", "ml"), ("d", "web")]
    text = namespace % "ml" + namespace % "web"
    text += _workloads("Deployment", "registry.example/app@sha256:" + "0" * 64, placed)
    table, data = _scan(tmp_path, text, "--rule", "STK-NET-001")
    assert len(data["findings"]) == 4  # type: ignore[arg-type]
    assert len(_rule_rows(table, "STK-NET-001")) == 2, table
    words = " ".join(table.split())  # the Finding column wraps
    assert "the same for Deployment/ml/b (" in words and "Deployment/ml/c (" in words
    assert "Deployment/web/d" in words and "the same for Deployment/web" not in words


def test_placeholder_images_are_one_row_for_the_run(tmp_path: Path) -> None:
    """STK-IMG-005 says what a run could not check (an image field an operator fills in): gpu-operator's
    20 operand templates were 20 rows. One row now names the others; JSON keeps each."""
    text = _workloads("DaemonSet", "FILLED BY THE OPERATOR", [("a", "gpu"), ("b", "gpu"), ("c", "other")])
    table, data = _scan(tmp_path, text, "--rule", "STK-IMG-005")
    assert len(data["findings"]) == 3  # type: ignore[arg-type]
    assert len(_rule_rows(table, "STK-IMG-005")) == 1, table
    words = " ".join(table.split())
    assert "the same for DaemonSet/gpu/b (" in words and "DaemonSet/other/c (" in words


#: a Pod that names no ServiceAccount
DEFAULT_ACCOUNT = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: apps}\n"
    "spec: {containers: [{name: web, image: nginx:1.27}]}\n"
)


def test_the_default_account_and_its_mounted_token_are_one_row(tmp_path: Path) -> None:
    """A pod template that names no ServiceAccount runs as "default" with its token mounted: one
    mistake, one row (the review of the whole kuberay repository counted ~300 rows of the pair, two per
    Ray head and worker group). JSON keeps both findings."""
    table, data = _scan(tmp_path, DEFAULT_ACCOUNT)
    ids = {f["rule"]["id"] for f in data["findings"]}  # type: ignore[index]
    assert {"STK-SA-001", "STK-SA-002"} <= ids
    rows = [r for r in _rows(table) if "STK-SA" in r]
    assert len(rows) == 1 and "+1" in rows[0], rows
