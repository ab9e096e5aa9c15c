"""VAP params read from what the gate knows, not only from the policy directories: the scanned files,
the audited cluster's lists (the real kubernetes client against examples/fleet's fake API server,
which also answers discovery), and the RBAC the deployment renders for the webhook to watch them.

The params shapes follow Kubernetes' documentation ("Validating Admission Policy", parameter
resources): a ConfigMap, and a CRD kind (``rules.example.com/v1`` ``ReplicaLimit``) found by discovery.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.kinds.api import guess_plural
from stockade.scanner.audit import Target, audit_cluster_roles, kinds_to_list, run_audit
from stockade.webhooks.manifests import param_kinds
from tests.fleet import fake, reader

POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas-limit}
spec:
  paramKind: {apiVersion: %(api)s, kind: %(kind)s}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= int(%(field)s)"
    messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed ' + string(%(field)s)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-limit}
spec:
  policyName: replicas-limit
  validationActions: [Deny]
  paramRef: {name: limits, namespace: policy-params, parameterNotFoundAction: Deny}
"""
CONFIGMAP = {"api": "v1", "kind": "ConfigMap", "field": "params.data.maxReplicas"}
CRD = {"api": "rules.example.com/v1", "kind": "ReplicaLimit", "field": "params.maxReplicas"}
LIMITS_CM = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "limits", "namespace": "policy-params"},
    "data": {"maxReplicas": "5"},
}
LIMITS_CR = {
    "apiVersion": "rules.example.com/v1",
    "kind": "ReplicaLimit",
    "metadata": {"name": "limits", "namespace": "policy-params"},
    "maxReplicas": 4,
}


def _deployment(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }


def _policies(tmp_path: Path, shape: dict[str, str]) -> Path:
    d = tmp_path / "policies"
    d.mkdir(parents=True, exist_ok=True)
    (d / "vap.yaml").write_text(POLICY % shape)
    return d


def _vap(findings: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(f["resource"]["name"], f["message"]) for f in findings if f["rule"]["id"].startswith("VAP-")}


def test_scan_reads_params_from_the_scanned_files(tmp_path: Path) -> None:
    policies = _policies(tmp_path, CONFIGMAP)
    manifest = tmp_path / "app.yaml"
    manifest.write_text(yaml.safe_dump_all([LIMITS_CM, _deployment("small", 3), _deployment("big", 7)]))
    result = CliRunner().invoke(
        app, ["scan", str(manifest), "--policy-dir", str(policies), "--format", "json"]
    )
    assert _vap(json.loads(result.stdout)["findings"]) == {("big", "replicas 7 exceed 5")}
    # without the params object anywhere: every object is denied (parameterNotFoundAction: Deny)
    manifest.write_text(yaml.safe_dump_all([_deployment("small", 3)]))
    result = CliRunner().invoke(
        app, ["scan", str(manifest), "--policy-dir", str(policies), "--format", "json"]
    )
    ((name, message),) = _vap(json.loads(result.stdout)["findings"])
    assert name == "small" and "no params object found" in message


def _audit(objects: list[dict[str, Any]], evaluator: Evaluator, crd: bool) -> Any:
    cluster = fake.FakeCluster.from_objects("gpu-1", objects, nodes=1, simulate=False)
    path = "/apis/rules.example.com/v1/replicalimits"
    cluster.extra[path] = ("ReplicaLimit", "rules.example.com/v1", True, True)
    if crd:  # installed: the collection exists (with the params object)
        cluster.collections[path] = [fake._with_identity(dict(LIMITS_CR), "gpu-1")]
    with fake.ServedCluster(cluster) as served:
        return run_audit(
            [Target("gpu-1", lambda: reader(served.url, "gpu-1"))], evaluator, version="t"
        ), cluster


def test_audit_lists_the_param_kinds_configmap_and_crd_by_discovery(tmp_path: Path) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    workloads = [namespace, _deployment("small", 3), _deployment("big", 7)]

    evaluator = Evaluator.default(parse_config(""), [_policies(tmp_path / "cm", CONFIGMAP)])
    result, _ = _audit([*workloads, LIMITS_CM], evaluator, crd=False)
    got = {(f.resource.name, f.message) for f in result.findings if f.rule.id.startswith("VAP-")}
    assert got == {("big", "replicas 7 exceed 5")}

    evaluator = Evaluator.default(parse_config(""), [_policies(tmp_path / "crd", CRD)])
    kinds = kinds_to_list(evaluator)
    (param,) = [k for k in kinds if k.kind == "ReplicaLimit"]
    assert param.plural == ""  # not in the table: discovered in each cluster
    result, cluster = _audit(workloads, evaluator, crd=True)
    got = {(f.resource.name, f.message) for f in result.findings if f.rule.id.startswith("VAP-")}
    assert got == {("big", "replicas 7 exceed 4")}
    asked = [p for p, _, _ in cluster.requests]
    assert "/apis/rules.example.com/v1" in asked and "/apis/rules.example.com/v1/replicalimits" in asked
    assert not result.gaps

    # the CRD is not installed: discovery answers 404; nothing of the kind exists, the params are
    # missing and parameterNotFoundAction Deny reports every object, as the API server would
    result, _ = _audit(workloads, evaluator, crd=False)
    messages = {(f.resource.name, f.message) for f in result.findings if f.rule.id.startswith("VAP-")}
    assert {n for n, _ in messages} == {"small", "big"}
    assert all("no params object found" in m for _, m in messages)

    # the audit's RBAC names the param kinds (the CRD by the plural its tooling derives)
    (reader_role, _) = audit_cluster_roles(kinds)
    assert {
        "apiGroups": ["rules.example.com"],
        "resources": ["replicalimits"],
        "verbs": ["list"],
    } in reader_role["rules"]


def test_webhook_rbac_watches_the_param_kinds(tmp_path: Path) -> None:
    files = ((("vap.yaml", POLICY % CRD),), (("vap.yaml", POLICY % CONFIGMAP),))
    (crd,) = param_kinds(files[0])
    assert (crd.group, crd.version, crd.plural, crd.kind) == (
        "rules.example.com",
        "v1",
        "replicalimits",
        "ReplicaLimit",
    )
    (cm,) = param_kinds(files[1])
    assert (cm.group, cm.plural) == ("", "configmaps")
    unbound = POLICY.split("---")[0] % CRD
    assert param_kinds((("vap.yaml", unbound),)) == []
    assert [guess_plural(k) for k in ("Policy", "Gateway", "Ingress", "Mesh", "Box", "ReplicaLimit")] == [
        "policies",
        "gateways",
        "ingresses",
        "meshes",
        "boxes",
        "replicalimits",
    ]


def test_a_secret_as_params_shows_key_names_never_values(tmp_path: Path) -> None:
    """A messageExpression cannot carry a Secret's data into a report: a Secret as params is its key
    names (``dataKeys``), as the audit lists Secrets, in every gate."""
    policy = (POLICY % {"api": "v1", "kind": "Secret", "field": "'1'"}).replace(
        "messageExpression: \"'replicas ' + string(object.spec.replicas) + ' exceed ' + string('1')\"",
        "messageExpression: \"'leak ' + string(params.?data.?token.orValue('none')) + ' keys ' + "
        "params.dataKeys.join(',')\"",
    )
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "vap.yaml").write_text(policy)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "limits", "namespace": "policy-params"},
        "data": {"token": "c2VjcmV0LXZhbHVlLTQy"},
        "stringData": {"password": "hunter2-value"},
    }
    manifest = tmp_path / "app.yaml"
    manifest.write_text(yaml.safe_dump_all([secret, _deployment("big", 7)]))
    result = CliRunner().invoke(
        app, ["scan", str(manifest), "--policy-dir", str(policies), "--format", "json"]
    )
    assert _vap(json.loads(result.stdout)["findings"]) == {("big", "leak none keys password,token")}
    assert "c2VjcmV0LXZhbHVlLTQy" not in result.output and "hunter2-value" not in result.output
