"""A workload whose manifest names no namespace, and the bindings of its ServiceAccount (issue 37).

argo-rollouts' ``manifests/install.yaml`` (argoproj/argo-rollouts 9f8d111d8f8e) is installed with
``kubectl apply -n argo-rollouts``: its Deployment, ServiceAccount and Role carry no
``metadata.namespace`` while its ClusterRoleBinding names the subject ``argo-rollouts/argo-rollouts``.
A scan judges the Deployment in "default", where no binding names the account; it used to report the
controller's token as "not an API client" (STK-SA-001). Now the binding subject with the same account
name in a namespace no scanned object is in counts: the workload is assumed to be in that namespace
(``input.facts.rbac.assumedNamespaces``), and its account holds what that binding grants.

The real scan pipeline (``stockade.scanner.scan.run_scan`` on files in a temporary directory, the
default config); no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from stockade.policies.config.settings import Config
from stockade.policies.evaluate import Evaluator
from stockade.policies.facts import inventory_of
from stockade.policies.facts.rbac import facts as rbac_facts
from stockade.policies.model import Finding
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource

RBAC = "rbac.authorization.k8s.io/v1"


def argo_rollouts(subject_namespace: str = "argo-rollouts") -> list[dict[str, Any]]:
    """The shape of argo-rollouts' install.yaml: namespaceless objects, a cluster binding into the
    namespace it is applied to."""
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "argo-rollouts"}},
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": "argo-rollouts"},
            "rules": [
                {
                    "apiGroups": ["argoproj.io"],
                    "resources": ["rollouts"],
                    "verbs": ["get", "list", "watch", "update"],
                },
                {
                    "apiGroups": ["apps"],
                    "resources": ["replicasets"],
                    "verbs": ["get", "list", "create", "delete"],
                },
            ],
        },
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "argo-rollouts"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "argo-rollouts",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "argo-rollouts", "namespace": subject_namespace}],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "argo-rollouts"},
            "spec": {
                "selector": {"matchLabels": {"app": "argo-rollouts"}},
                "template": {
                    "metadata": {"labels": {"app": "argo-rollouts"}},
                    "spec": {
                        "serviceAccountName": "argo-rollouts",
                        "containers": [
                            {"name": "argo-rollouts", "image": "quay.io/argoproj/argo-rollouts:v1.8.3"}
                        ],
                    },
                },
            },
        },
    ]


def scan(tmp_path: Path, objects: list[dict[str, Any]]) -> list[Finding]:
    (tmp_path / "install.yaml").write_text(yaml.safe_dump_all(objects))
    evaluator = Evaluator.default(Config())
    result = run_scan(FileSource([str(tmp_path)]), [], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    return result.findings


def token_findings(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule.id == "STK-SA-001" and f.resource.kind == "Deployment"]


def test_argo_rollouts_controller_is_an_api_client(tmp_path: Path) -> None:
    assert token_findings(scan(tmp_path, argo_rollouts())) == []


def test_the_assumed_namespace_is_in_the_fact() -> None:
    objects = argo_rollouts()
    inventory = inventory_of(objects)
    fact = rbac_facts(objects[-1], inventory)["rbac"]
    assert fact["bound"] is True
    assert fact["assumedNamespaces"] == ["argo-rollouts"]
    assert fact["serviceAccount"] == "argo-rollouts/argo-rollouts"


def test_a_namespace_the_scan_defines_is_not_assumed(tmp_path: Path) -> None:
    """When scanned objects are in the binding's namespace, that binding is theirs: the namespaceless
    Deployment is judged in "default", where nothing names its account."""
    role = {
        "apiVersion": RBAC,
        "kind": "Role",
        "metadata": {"name": "r", "namespace": "argo-rollouts"},
        "rules": [],
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "argo-rollouts"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}},
    }
    for other in (role, job):
        found = token_findings(scan(tmp_path, [*argo_rollouts(), other]))
        assert len(found) == 1
        assert "is not an API client" in found[0].message


def test_a_binding_to_another_account_name_does_not_count(tmp_path: Path) -> None:
    objects = argo_rollouts()
    objects[2]["subjects"][0]["name"] = "someone-else"
    assert len(token_findings(scan(tmp_path, objects))) == 1


def test_a_workload_with_a_namespace_is_not_moved(tmp_path: Path) -> None:
    """Only a namespace the manifest leaves out is assumed: a Deployment in "tools" whose account the
    binding names in another namespace is not an API client there."""
    objects = argo_rollouts()
    for obj in (objects[0], objects[-1]):
        obj["metadata"]["namespace"] = "tools"
    assert len(token_findings(scan(tmp_path, objects))) == 1


def test_the_default_namespace_binding_still_wins(tmp_path: Path) -> None:
    assert token_findings(scan(tmp_path, argo_rollouts("default"))) == []
