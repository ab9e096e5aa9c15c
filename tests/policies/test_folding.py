"""One finding per problem (policies/folding.py), the same in the three gates.

The scan runs the real CLI on a file; the webhook is the real TLS server on loopback answering a real
AdmissionReview (tests/tls_webhook.py); the audit lists from the fake API server of
examples/fleet/apiserver.py through the real `kubernetes` client (tests/fleet.audit_objects).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import build
from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.folding import fold
from stockade.policies.model import Resource
from tests.fleet import audit_objects
from tests.reviews import admission_review
from tests.tls_webhook import webhook_client

DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ml}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      serviceAccountName: agent
      automountServiceAccountToken: false
      hostNetwork: true
      containers:
      - name: priv
        image: reg.example/agent:1.0
        securityContext: {privileged: true}
        ports: [{containerPort: 9100, hostPort: 9100}]
        resources: {limits: {cpu: "1"}, requests: {cpu: "1"}}
        volumeMounts: [{name: root, mountPath: /host}]
      - name: plain
        image: reg.example/sidecar:1.0
        resources: {limits: {cpu: "1", memory: 1Gi}, requests: {cpu: "1", memory: 1Gi}}
      volumes:
      - name: root
        hostPath: {path: /}
      - name: data
        hostPath: {path: /srv/data}
"""

#: the restricted-profile controls a privileged container also fails
RESTRICTED_GAPS = {"STK-POD-102", "STK-POD-103", "STK-POD-105", "STK-POD-106", "STK-POD-202"}


def scan(tmp_path: Path, text: str, config: str = "{}\n") -> tuple[int, list[dict[str, Any]]]:
    (tmp_path / "m.yaml").write_text(text)
    (tmp_path / "stockade.yaml").write_text(config)
    out = tmp_path / "r.json"
    args = [
        "scan",
        str(tmp_path / "m.yaml"),
        "--config",
        str(tmp_path / "stockade.yaml"),
        "-f",
        "json",
        "-o",
        str(out),
    ]
    done = CliRunner().invoke(build(), args)
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, json.loads(out.read_text())["findings"]


def on(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"]["id"] == rule]


def containers_of(findings: list[dict[str, Any]], rule: str) -> set[str]:
    return {f["location"]["path"].split(".securityContext")[0].rsplit(".", 1)[-1] for f in on(findings, rule)}


def test_a_privileged_containers_restricted_gaps_fold_into_the_privileged_finding(tmp_path: Path) -> None:
    code, findings = scan(tmp_path, DAEMONSET)
    assert code == 1
    (priv,) = on(findings, "STK-POD-003")
    assert {m["rule"] for m in priv["details"]["folded"]} == RESTRICTED_GAPS
    assert all(m["path"].startswith("spec.template.spec.containers[0].") for m in priv["details"]["folded"])
    assert (
        "also fails STK-POD-102, STK-POD-103, STK-POD-105, STK-POD-106, STK-POD-202 here" in priv["message"]
    )
    # the other container's gaps are its own and stay findings of their own
    for rule in RESTRICTED_GAPS:
        assert containers_of(findings, rule) == {"containers[1]"}, rule


def test_hostpath_host_network_and_memory_overlaps_fold_on_the_same_part_only(tmp_path: Path) -> None:
    _, findings = scan(tmp_path, DAEMONSET)
    (forbidden,) = on(findings, "STK-POD-201")
    assert [m["rule"] for m in forbidden["details"]["folded"]] == ["STK-POD-005"]
    # the volume whose path is not forbidden is still reported as a hostPath volume
    assert [f["location"]["path"] for f in on(findings, "STK-POD-005")] == [
        "spec.template.spec.volumes[1].hostPath"
    ]
    (host_network,) = on(findings, "STK-POD-002")
    assert [m["rule"] for m in host_network["details"]["folded"]] == ["STK-POD-006"]
    assert not on(findings, "STK-POD-006")
    (memory,) = on(findings, "STK-RES-001")
    assert [m["rule"] for m in memory["details"]["folded"]] == ["STK-RES-003"]
    assert not on(findings, "STK-RES-003")


def test_a_waived_or_weaker_primary_folds_nothing(tmp_path: Path) -> None:
    waived = """
exceptions:
  - name: gpu-agent
    rules: [STK-POD-003]
    match: {namespaces: [ml], names: [agent]}
    owner: platform@example.com
    expires: "2099-01-01"
    reason: the node agent needs the host
"""
    _, findings = scan(tmp_path, DAEMONSET, waived)
    assert "folded" not in on(findings, "STK-POD-003")[0]["details"]
    for rule in RESTRICTED_GAPS:  # accepted privileged: the remaining gaps are reported as they are
        assert containers_of(findings, rule) == {"containers[0]", "containers[1]"}, rule
    # privileged only warned about: folding the denied gaps into it would turn a deny into a warning
    code, findings = scan(tmp_path, DAEMONSET, "rules: {STK-POD-003: {action: warn}}\n")
    assert code == 1
    # ... only the read-only root filesystem warning, as strong as the privileged one, folds
    assert [m["rule"] for m in on(findings, "STK-POD-003")[0]["details"]["folded"]] == ["STK-POD-202"]
    assert containers_of(findings, "STK-POD-103") == {"containers[0]", "containers[1]"}


def test_one_capability_of_a_role_is_one_finding(tmp_path: Path) -> None:
    role = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: controller}
rules:
- apiGroups: [metrics.k8s.io]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [""]
  resources: [configmaps]
  verbs: ["*"]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [create]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create]
"""
    _, findings = scan(tmp_path, role)
    (wildcard,) = on(findings, "STK-RBAC-001")
    assert wildcard["location"]["path"] == "rules[0].resources"
    assert [m["path"] for m in wildcard["details"]["folded"]] == ["rules[0].verbs", "rules[1].verbs"]
    assert "2 more of the same" in wildcard["message"]
    (pods,) = on(findings, "STK-RBAC-003")  # pods created through Deployments and through Jobs
    assert pods["location"]["path"] == "rules[2]"
    assert [m["path"] for m in pods["details"]["folded"]] == ["rules[3]"]
    assert "also: " in pods["message"] and "jobs" in pods["message"]


def test_fold_keeps_the_engines_findings_and_every_verdict() -> None:
    """The evaluator's own output keeps every control (Pod Security Standards parity per control);
    folding removes findings only into an active primary at least as strong."""
    evaluator = Evaluator.default(parse_config("{}"))
    findings = evaluator.evaluate(Resource(yaml.safe_load(DAEMONSET)))
    ids = [f.rule.id for f in findings]
    assert set(ids) >= RESTRICTED_GAPS and "STK-POD-006" in ids and "STK-RES-003" in ids
    folded = fold(findings)
    assert len(folded) < len(findings)
    strongest = max((f.action.rank, f.rule.severity) for f in findings)
    assert max((f.action.rank, f.rule.severity) for f in folded) == strongest
    assert {f.rule.id for f in findings if f.action.value == "deny"} - {
        m["rule"] for f in folded for m in f.details.get("folded", ())
    } <= {f.rule.id for f in folded}


@pytest.mark.parametrize("gate", ["webhook", "audit"])
def test_the_webhook_and_the_audit_fold_as_the_scan_does(tmp_path: Path, gate: str) -> None:
    obj = yaml.safe_load(DAEMONSET)
    if gate == "webhook":
        review = admission_review(obj, "ml")
        with webhook_client(tmp_path) as client:
            r = client.post(
                "/validate", content=json.dumps(review).encode(), headers={"content-type": "application/json"}
            )
        response = r.json()["response"]
        assert response["allowed"] is False
        message = response["status"]["message"]
        assert "STK-POD-003" in message and "also fails STK-POD-102" in message
        assert message.count("STK-POD-102:") == 1  # the plain container's own, not the privileged one's
    else:
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
        result = audit_objects([ns, obj], Evaluator.default(parse_config("")), cluster="c1")
        (priv,) = [f for f in result.findings if f.rule.id == "STK-POD-003"]
        assert {m["rule"] for m in priv.details["folded"]} == RESTRICTED_GAPS
        assert [f.rule.id for f in result.findings].count("STK-POD-102") == 1
