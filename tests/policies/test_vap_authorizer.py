"""VAPs' `authorizer` library answered from the RBAC objects a gate knows (policies/frameworks/vap.py
`VapEngine._authorize`, policies/facts/rbac.py `RBACGraph.allowing`), in the three gates.

- A check some binding allows is allowed, in every gate.
- A check no binding allows is denied only where the gate knows every binding (a synced webhook
  cache, a complete audit) and the cluster's authorizers are Node and RBAC (`rbac.authorization_modes`);
  anywhere else it cannot be told, and the policy is reported as not evaluated, never decided on a
  guess.
- The requester's checks need a request: a scan and an audit have none (not evaluated); a
  `serviceAccount(ns, name)` check needs none.

The webhook is the real app (Starlette's TestClient) over a fixed inventory; the audit runs the real
kubernetes client against examples/fleet's fake API server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from starlette.testclient import TestClient
from typer.testing import CliRunner

from stockade.admission.app import WebhookState, create_app
from stockade.cli.main import app
from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts.inventory import Inventory
from tests.fleet import audit_objects
from tests.reviews import admission_review

APPROVERS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: approvers-only}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: >-
      authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace)
      .check('approve').allowed()
    messageExpression: "'not an approver: ' + request.userInfo.username"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: approvers-only}
spec: {policyName: approvers-only, validationActions: [Deny]}
"""
NO_SECRET_READERS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-secret-readers}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: >-
      !authorizer.serviceAccount(object.metadata.namespace, object.spec.template.spec.serviceAccountName)
      .group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()
    message: the workload's ServiceAccount can list Secrets
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-secret-readers}
spec: {policyName: no-secret-readers, validationActions: [Deny]}
"""


def _role(name: str, verbs: list[str], group: str, resource: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": "ml"},
        "rules": [{"apiGroups": [group], "resources": [resource], "verbs": verbs}],
    }


def _binding(name: str, role: str, subject: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": "ml"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
        "subjects": [subject],
    }


APPROVER_RBAC = [
    _role("approver", ["approve"], "apps", "deployments"),
    _binding(
        "alice-approves",
        "approver",
        {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
    ),
]
READER_RBAC = [
    _role("secret-reader", ["get", "list"], "", "secrets"),
    _binding("web-reads", "secret-reader", {"kind": "ServiceAccount", "name": "web", "namespace": "ml"}),
]
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}


def _deployment(name: str = "web", account: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"serviceAccountName": account, "containers": [{"name": "c", "image": "x"}]},
            },
        },
    }


def _dir(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "policies"
    d.mkdir(parents=True, exist_ok=True)
    (d / "vap.yaml").write_text(text)
    return d


def _vap(findings: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((f["action"], f["message"]) for f in findings if f["rule"]["id"].startswith("VAP-"))


def _webhook(
    policies: Path, objects: list[dict[str, Any]], user: str, *, complete: bool, config: str = ""
) -> str:
    inventory = Inventory(complete=complete)
    for obj in objects:
        inventory.add(obj)
    state = WebhookState(
        config=parse_config(config), policy_dirs=(policies,), facts=InventoryFacts(inventory)
    )
    review = admission_review(_deployment(), "ml", user=user, groups=("system:authenticated",))
    with TestClient(create_app(state)) as client:
        response = client.post("/validate", json=review).json()["response"]
    messages = [
        str((response.get("status") or {}).get("message") or ""),
        *(response.get("warnings") or []),
        *(f"{k}: {v}" for k, v in (response.get("auditAnnotations") or {}).items()),  # action audit
    ]
    return "\n".join(
        m for m in messages if "VAP-approvers-only" in m or "approvers-only" in m or "authorizer" in m
    )


def test_the_webhook_answers_the_requesters_checks_from_rbac(tmp_path: Path) -> None:
    policies = _dir(tmp_path, APPROVERS)
    objects = [NAMESPACE, *APPROVER_RBAC]
    assert _webhook(policies, objects, "alice", complete=True) == ""  # her RoleBinding allows approve
    said = _webhook(policies, objects, "bob", complete=True)
    assert "VAP-approvers-only-0" in said and "not an approver: bob" in said  # denied: no binding
    # an incomplete cache cannot tell a missing binding from one it has not seen: not evaluated
    said = _webhook(policies, objects, "bob", complete=False)
    assert "not evaluated by stockade" in said and "does not know every binding" in said
    assert "not an approver" not in said
    # a webhook authorizer (AKS with Azure RBAC) may allow what RBAC does not: not evaluated
    config = "rbac:\n  authorization_modes: [Node, Webhook, RBAC]\n"
    said = _webhook(policies, objects, "bob", complete=True, config=config)
    assert "not evaluated by stockade" in said and "not an approver" not in said
    # and what RBAC allows is allowed whatever the other authorizers
    assert _webhook(policies, objects, "alice", complete=True, config=config) == ""


def test_a_scan_has_no_requester_so_requester_checks_are_not_evaluated(tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(yaml.safe_dump_all([*APPROVER_RBAC, _deployment()]))
    result = CliRunner().invoke(
        app, ["scan", str(manifest), "--policy-dir", str(_dir(tmp_path, APPROVERS)), "--format", "json"]
    )
    ((action, message),) = _vap(json.loads(result.stdout)["findings"])
    assert action == "audit" and "not evaluated by stockade" in message and "no request" in message


def test_service_account_checks_in_scan_and_audit(tmp_path: Path) -> None:
    policies = _dir(tmp_path, NO_SECRET_READERS)
    manifest = tmp_path / "app.yaml"
    # the scanned files grant web list on secrets: decided in a scan, a violation
    manifest.write_text(yaml.safe_dump_all([*READER_RBAC, _deployment()]))
    result = CliRunner().invoke(
        app, ["scan", str(manifest), "--policy-dir", str(policies), "--format", "json"]
    )
    assert _vap(json.loads(result.stdout)["findings"]) == [
        ("deny", "the workload's ServiceAccount can list Secrets")
    ]
    # no grant in the files: the cluster may hold one the scan does not see; not evaluated
    manifest.write_text(yaml.safe_dump_all([_deployment()]))
    result = CliRunner().invoke(
        app, ["scan", str(manifest), "--policy-dir", str(policies), "--format", "json"]
    )
    ((action, message),) = _vap(json.loads(result.stdout)["findings"])
    assert action == "audit" and "not evaluated by stockade" in message

    # a complete audit knows every binding: both answers are decided
    evaluator = Evaluator.default(parse_config(""), [policies])
    audited = audit_objects([NAMESPACE, *READER_RBAC, _deployment()], evaluator)
    got = [(f.action.value, f.message) for f in audited.findings if f.rule.id.startswith("VAP-")]
    assert got == [("deny", "the workload's ServiceAccount can list Secrets")]
    evaluator = Evaluator.default(parse_config(""), [policies])
    audited = audit_objects([NAMESPACE, _deployment()], evaluator)
    assert [f for f in audited.findings if f.rule.id.startswith("VAP-")] == []
