"""Issue 23's controls give the same findings at all three gates.

For each case (a set of objects), the findings of the rules under test on each object are identical
(rule, path, message) in

- the scan (``stockade.scanner.scan.scan``, the CI gate's pipeline),
- the webhook (the AdmissionReview v1 decision path, ``stockade.admission.decide.evaluate``, with the
  inventory a synced cache would hold: the case's other objects), and
- the audit (``run_audit`` through the real ``kubernetes`` client against the fake API server of
  ``examples/fleet/apiserver.py`` on loopback; no pods are simulated, so workloads are judged by their
  templates, as in the other gates; Secrets are reduced to type and key names as the audit reads them).
"""

from __future__ import annotations

from typing import Any

import pytest

from stockade.admission.decide import evaluate
from stockade.admission.review import AdmissionReview
from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Finding, Resource
from stockade.scanner.scan import ScanOptions, scan
from tests.fleet import audit_objects
from tests.reviews import admission_review

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "build"}}


def _deployment(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "build"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


CONTAINER = {"name": "app", "image": "registry.example/ci:1.0"}
TOKEN_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "type": "kubernetes.io/service-account-token",
    "metadata": {
        "name": "robot-token",
        "namespace": "build",
        "annotations": {"kubernetes.io/service-account.name": "build-robot"},
    },
    "data": {"token": "bm90LWEtdG9rZW4="},
}
READS_TOKEN = _deployment(
    "ci",
    {
        "automountServiceAccountToken": False,
        "containers": [
            {
                **CONTAINER,
                "env": [
                    {"name": "T", "valueFrom": {"secretKeyRef": {"name": "robot-token", "key": "token"}}}
                ],
            }
        ],
        "volumes": [{"name": "t", "secret": {"secretName": "robot-token"}}],
    },
)
PROJECTS_TOKEN = _deployment(
    "kube-client",
    {
        "automountServiceAccountToken": False,
        "containers": [CONTAINER],
        "volumes": [{"name": "api", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}],
    },
)
WORKLOAD_IDENTITY = _deployment(
    "wi",
    {
        "automountServiceAccountToken": False,
        "containers": [CONTAINER],
        "volumes": [
            {
                "name": "azure-identity-token",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"path": "t", "audience": "api://AzureADTokenExchange"}}
                    ]
                },
            }
        ],
    },
)

RAY_LB = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "llm", "namespace": "build"},
    "spec": {
        "headGroupSpec": {
            "serviceType": "LoadBalancer",
            "rayStartParams": {},
            "template": {"spec": {"automountServiceAccountToken": False, "containers": [CONTAINER]}},
        }
    },
}
DASHBOARD_LB = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "ray-dashboard", "namespace": "build"},
    "spec": {
        "type": "LoadBalancer",
        "selector": {"app": "ray"},
        "ports": [{"name": "dashboard", "port": 8265}],
    },
}
INTERNAL_LB = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {
        "name": "api",
        "namespace": "build",
        "annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"},
    },
    "spec": {"type": "LoadBalancer", "selector": {"app": "api"}, "ports": [{"name": "https", "port": 443}]},
}
NOTEBOOK_INGRESS = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "Ingress",
    "metadata": {"name": "notebooks", "namespace": "build"},
    "spec": {
        "rules": [
            {
                "host": "nb.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": "jupyter", "port": {"number": 8888}}},
                        }
                    ]
                },
            }
        ]
    },
}

VLLM = _deployment(
    "vllm",
    {
        "automountServiceAccountToken": False,
        "containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6.3"}],
    },
)
VLLM_LB = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "vllm", "namespace": "build"},
    "spec": {
        "type": "LoadBalancer",
        "selector": {"app": "vllm"},
        "ports": [{"name": "http", "port": 80, "targetPort": 8000}],
    },
}

# (case, objects, {(kind, name): expected rule ids among RULES})
RULES = ("STK-SA-001", "STK-SA-003", "STK-SA-004", "STK-RBAC-030", "STK-EXP-001", "STK-EXP-002", "STK-RT-007")
CASES = [
    (
        "legacy-token",
        [TOKEN_SECRET, READS_TOKEN],
        {("Secret", "robot-token"): {"STK-SA-003"}, ("Deployment", "ci"): {"STK-SA-004"}},
    ),
    ("projected-token", [PROJECTS_TOKEN], {("Deployment", "kube-client"): {"STK-SA-001"}}),
    ("workload-identity-token", [WORKLOAD_IDENTITY], {("Deployment", "wi"): set()}),
    (
        "exposure",
        [RAY_LB, DASHBOARD_LB, INTERNAL_LB, NOTEBOOK_INGRESS],
        {
            ("RayCluster", "llm"): {"STK-EXP-001"},
            ("Service", "ray-dashboard"): {"STK-EXP-001", "STK-EXP-002"},
            ("Service", "api"): set(),
            ("Ingress", "notebooks"): {"STK-EXP-001"},
        },
    ),
    (
        "exposed-by-image",
        [VLLM, VLLM_LB],
        {("Deployment", "vllm"): set(), ("Service", "vllm"): {"STK-EXP-001", "STK-EXP-002"}},
    ),
]

Key = tuple[str, tuple[Any, ...], str]


def _mine(findings: list[Finding], kind: str, name: str) -> set[Key]:
    return {
        (f.rule.id, tuple(f.path), f.message)
        for f in findings
        if f.rule.id in RULES and f.resource.kind == kind and f.resource.name == name
    }


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(parse_config(""))


def _audit(evaluator: Evaluator, objects: list[dict[str, Any]]) -> list[Finding]:
    result = audit_objects([NAMESPACE, *objects], evaluator)
    assert result.errors == [], result.errors
    return result.findings


@pytest.mark.parametrize(("case", "objects", "expected"), CASES, ids=[c[0] for c in CASES])
def test_scan_webhook_and_audit_agree(
    case: str, objects: list[dict[str, Any]], expected: dict[tuple[str, str], set[str]], evaluator: Evaluator
) -> None:
    scanned = scan(
        [Resource(o) for o in (NAMESPACE, *objects)], evaluator, ScanOptions(evaluator.config), version="t"
    )
    assert scanned.errors == []
    audited = _audit(evaluator, objects)
    for obj in objects:
        kind, name = obj["kind"], obj["metadata"]["name"]
        mine = _mine(scanned.findings, kind, name)
        assert {k[0] for k in mine} == expected[(kind, name)], (case, kind, name)
        others = [o for o in (NAMESPACE, *objects) if o is not obj]
        request = AdmissionReview.model_validate(admission_review(obj, "build")).request
        webhook = evaluate(request, evaluator, InventoryFacts(inventory_of(others)))
        assert _mine(webhook, kind, name) == mine, (case, "webhook", kind, name)
        assert _mine(audited, kind, name) == mine, (case, "audit", kind, name)
