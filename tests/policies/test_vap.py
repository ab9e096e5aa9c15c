"""ValidatingAdmissionPolicy + binding evaluated with CEL (policies/frameworks/vap.py,
policies/runtimes/cel.py) in the three gates: `stockade scan --policy-dir`, the webhook (a real TLS
server on loopback answering a real AdmissionReview) and the audit (the real kubernetes client against
examples/fleet's fake API server).

The cases follow Kubernetes' documented semantics; the params, match-condition and binding cases are
shaped after Kyverno's CLI tests for VAPs (test/cli/test-validating-admission-policy: with-params,
with-match-conditions, check-deployment-labels), with one deliberate difference: Kyverno's CLI applies a
policy that has no binding, the API server (and stockade) applies it nowhere.
"""

from __future__ import annotations

import json
import re
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from stockade.admission.app import WebhookState
from stockade.cli.main import app
from stockade.policies.config.settings import parse_config
from stockade.policies.engines.library import PolicyError, load_library
from stockade.policies.evaluate import Evaluator
from tests.fleet import audit_objects
from tests.reviews import admission_review
from tests.tls_webhook import CA, Server

REPLICAS_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas-limit}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  variables:
  - {name: limit, expression: "int(params.data.maxReplicas)"}
  validations:
  - expression: "object.spec.replicas <= variables.limit"
    messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed ' + string(variables.limit)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-limit}
spec:
  policyName: replicas-limit
  validationActions: [Deny]
  paramRef: {name: replica-limits, namespace: policy-params, parameterNotFoundAction: Deny}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: replica-limits, namespace: policy-params}
data: {maxReplicas: "5"}
"""

HOSTPATH_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-hostpath}
spec:
  failurePolicy: %(failure)s
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
    namespaceSelector:
      matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]
  matchConditions:
  - {name: red, expression: "object.metadata.labels['color'] == 'red'"}
  validations:
  - expression: "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))"
    message: HostPath volumes are forbidden.
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-hostpath}
spec:
  policyName: no-hostpath
  validationActions: [%(actions)s]
"""


def _deployment(name: str, replicas: int, namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }


def _pod(name: str, labels: dict[str, str] | None, host_path: bool, namespace: str = "ml") -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        md["labels"] = labels
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if host_path:
        spec["volumes"] = [{"name": "h", "hostPath": {"path": "/data"}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def _dir(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "policies"
    d.mkdir(exist_ok=True)
    (d / "vap.yaml").write_text(text)
    return d


def _scan(
    tmp_path: Path, policies: Path, objects: list[dict[str, Any]]
) -> tuple[int, list[dict[str, Any]], str]:
    manifest = tmp_path / "objects.yaml"
    manifest.write_text(yaml.safe_dump_all(objects))
    result = CliRunner().invoke(
        app, ["scan", str(manifest), "--policy-dir", str(policies), "--format", "json"]
    )
    if result.exit_code == 2:
        return 2, [], result.output
    findings = [f for f in json.loads(result.stdout)["findings"] if f["rule"]["id"].startswith("VAP-")]
    return result.exit_code, findings, result.output


def _by_name(findings: list[dict[str, Any]]) -> dict[str, list[tuple[str, str, str]]]:
    out: dict[str, list[tuple[str, str, str]]] = {}
    for f in findings:
        out.setdefault(f["resource"]["name"], []).append((f["rule"]["id"], f["action"], f["message"]))
    return out


def test_params_variables_and_message_expression(tmp_path: Path) -> None:
    policies = _dir(tmp_path, REPLICAS_POLICY)
    _, findings, _ = _scan(tmp_path, policies, [_deployment("small", 3), _deployment("big", 7)])
    assert _by_name(findings) == {"big": [("VAP-replicas-limit-0", "deny", "replicas 7 exceed 5")]}


def test_missing_params_deny_or_allow(tmp_path: Path) -> None:
    without = REPLICAS_POLICY.split("---\napiVersion: v1\nkind: ConfigMap")[0]
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, without), [_deployment("small", 3)])
    (finding,) = findings
    assert finding["rule"]["id"] == "VAP-replicas-limit-0" and "no params object found" in finding["message"]
    allow = without.replace("parameterNotFoundAction: Deny", "parameterNotFoundAction: Allow")
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, allow), [_deployment("small", 3)])
    assert findings == []


@pytest.mark.parametrize(
    ("failure", "actions", "expected"),
    [
        ("Fail", "Deny", {"red-host": "deny", "unlabelled": "deny"}),
        ("Ignore", "Deny", {"red-host": "deny"}),
        ("Fail", "Warn", {"red-host": "warn", "unlabelled": "warn"}),
        ("Fail", "Audit, Deny", {"red-host": "deny", "unlabelled": "deny"}),
    ],
)
def test_match_conditions_failure_policy_and_actions(
    tmp_path: Path, failure: str, actions: str, expected: dict[str, str]
) -> None:
    policies = _dir(tmp_path, HOSTPATH_POLICY % {"failure": failure, "actions": actions})
    objects = [
        _pod("red-host", {"color": "red"}, True),
        _pod("red-clean", {"color": "red"}, False),
        _pod("blue-host", {"color": "blue"}, True),  # matchCondition false: not judged
        _pod("unlabelled", None, True),  # labels['color'] errors: failurePolicy decides
        _pod("system", {"color": "red"}, True, namespace="kube-system"),  # namespaceSelector
    ]
    _, findings, _ = _scan(tmp_path, policies, objects)
    got = {name: hits[0][1] for name, hits in _by_name(findings).items()}
    assert got == expected
    messages = {name: hits[0][2] for name, hits in _by_name(findings).items()}
    assert messages["red-host"] == "HostPath volumes are forbidden."
    if "unlabelled" in messages:
        assert (
            "could not be evaluated" in messages["unlabelled"] or "matchCondition" in messages["unlabelled"]
        )


def test_update_only_policies_and_excluded_resources_do_not_apply_to_a_scan(tmp_path: Path) -> None:
    text = HOSTPATH_POLICY % {"failure": "Fail", "actions": "Deny"}
    update_only = text.replace("operations: [CREATE, UPDATE]", "operations: [UPDATE]")
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, update_only), [_pod("red-host", {"color": "red"}, True)])
    assert findings == []
    excluded = text.replace(
        "  matchConditions:",
        "    excludeResourceRules:\n"
        "    - {apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: [pods],\n"
        "       resourceNames: [red-host]}\n"
        "  matchConditions:",
    )
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, excluded), [_pod("red-host", {"color": "red"}, True)])
    assert findings == []


def test_a_policy_without_binding_applies_nowhere(tmp_path: Path) -> None:
    text = (HOSTPATH_POLICY % {"failure": "Fail", "actions": "Deny"}).split("---")[0]
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, text), [_pod("red-host", {"color": "red"}, True)])
    assert findings == []  # the library's own rules still judge the pod


def test_unsupported_library_is_reported_not_passed(tmp_path: Path) -> None:
    text = REPLICAS_POLICY.replace(
        "object.spec.replicas <= variables.limit",
        "object.spec.noSuchLibrary().size() > 0",
    )
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, text), [_deployment("small", 3)])
    (finding,) = findings
    assert finding["action"] == "audit" and "not evaluated by stockade" in finding["message"]
    assert "noSuchLibrary" in finding["message"]


def test_quantity_library(tmp_path: Path) -> None:
    """Kubernetes' quantity library, exact: 1Gi is 1024Mi, 500m is 0.5, and a malformed quantity is
    an evaluation error (failurePolicy Fail: a violation), never a pass."""
    text = REPLICAS_POLICY.replace(
        "object.spec.replicas <= variables.limit",
        "object.spec.template.spec.containers.all(c, has(c.resources) && has(c.resources.limits)"
        " && quantity(c.resources.limits.memory).compareTo(quantity('1Gi')) <= 0"
        " && quantity(c.resources.limits.cpu).isLessThan(quantity('2')))",
    )
    text = re.sub(r"    messageExpression: .*\n", "    message: limits too high\n", text)
    objects = []
    for name, memory, cpu in (
        ("ok", "1024Mi", "500m"),
        ("big", "1025Mi", "1"),
        ("cpu", "1Gi", "2000m"),
        ("bad", "12x", "1"),
    ):
        d = _deployment(name, 1)
        d["spec"]["template"]["spec"]["containers"][0]["resources"] = {
            "limits": {"memory": memory, "cpu": cpu}
        }
        objects.append(d)
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, text), objects)
    got = {name: hits[0][2] for name, hits in _by_name(findings).items()}
    assert set(got) == {"big", "cpu", "bad"}
    assert got["big"] == "limits too high" and "quantities must match" in got["bad"]


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        (REPLICAS_POLICY.replace("policyName: replicas-limit", "policyName: nope"), "names policy 'nope'"),
        (
            REPLICAS_POLICY.replace("object.spec.replicas <= variables.limit", "object.spec.replicas <="),
            "validations[0]",
        ),
    ],
)
def test_broken_policies_are_one_line_errors(tmp_path: Path, broken: str, says: str) -> None:
    policies = _dir(tmp_path, broken)
    with pytest.raises(PolicyError, match=r"vap\.yaml"):
        load_library([policies])
    code, _, output = _scan(tmp_path, policies, [_deployment("small", 3)])
    assert code == 2 and says in output and "Traceback" not in output


def test_three_gates_give_the_same_verdict(tmp_path: Path) -> None:
    policies = _dir(tmp_path, REPLICAS_POLICY)
    objects = [_deployment("small", 3), _deployment("big", 7)]
    _, scanned, _ = _scan(tmp_path, policies, objects)
    scan = {(f["resource"]["name"], f["rule"]["id"], f["message"]) for f in scanned}

    evaluator = Evaluator.default(parse_config(""), [policies])
    audited = audit_objects(
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}, *objects], evaluator
    )
    audit = {
        (f.resource.name, f.rule.id, f.message) for f in audited.findings if f.rule.id.startswith("VAP-")
    }

    ca = CA()
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    ca.issue(cert, key)
    srv = Server(WebhookState(config=parse_config(""), policy_dirs=(policies,)), cert, key)
    webhook = set()
    try:
        with httpx.Client(
            base_url=f"https://127.0.0.1:{srv.port}",
            verify=ssl.create_default_context(cafile=str(ca.write_ca(tmp_path / "ca.crt"))),
        ) as client:
            for obj in objects:
                review = admission_review(obj, "ml", user="alice", uid=f"uid-{obj['metadata']['name']}")
                answer = client.post("/validate", json=review).json()["response"]
                message = (answer.get("status") or {}).get("message") or ""
                if "VAP-replicas-limit-0" in message:
                    webhook.add((obj["metadata"]["name"], "VAP-replicas-limit-0", "replicas 7 exceed 5"))
                    assert answer["allowed"] is False and "replicas 7 exceed 5" in message
    finally:
        srv.stop()
    expected = {("big", "VAP-replicas-limit-0", "replicas 7 exceed 5")}
    assert scan == expected and audit == expected and webhook == expected


def test_audit_annotations_ride_with_the_violation(tmp_path: Path) -> None:
    text = REPLICAS_POLICY.replace(
        "  validations:\n",
        "  auditAnnotations:\n"
        "  - {key: replicas, valueExpression: \"'asked ' + string(object.spec.replicas)\"}\n"
        "  - {key: never, valueExpression: 'null'}\n"
        "  validations:\n",
    )
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, text), [_deployment("big", 7)])
    (finding,) = findings
    assert finding["details"]["auditAnnotations"] == {"replicas-limit/replicas": "asked 7"}


@pytest.mark.parametrize(("failure", "expected"), [("Fail", 1), ("Ignore", 0)])
def test_an_audit_annotation_error_denies_under_fail(tmp_path: Path, failure: str, expected: int) -> None:
    """As the API server decides it: an auditAnnotation whose valueExpression errors is a denial
    under failurePolicy Fail (rule VAP-<policy>-auditAnnotations), even with no validations."""
    text = (
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n"
        "metadata: {name: annotate}\nspec:\n"
        f"  failurePolicy: {failure}\n"
        "  matchConstraints:\n    resourceRules:\n"
        "    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}\n"
        "  auditAnnotations:\n  - {key: owner, valueExpression: \"object.metadata.labels['owner']\"}\n"
        "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n"
        "metadata: {name: annotate}\nspec: {policyName: annotate, validationActions: [Deny]}\n"
    )
    _, findings, _ = _scan(tmp_path, _dir(tmp_path, text), [_deployment("small", 3)])
    assert [f["rule"]["id"] for f in findings] == ["VAP-annotate-auditAnnotations"] * expected
