"""A new user's first hour (issue 40): with no configuration at all, a hardened Deployment passes every
gate (an image pinned by digest from any registry, restricted Pod Security, resources, its own
ServiceAccount without a token), and the same Deployment made unsafe does not."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from starlette.testclient import TestClient
from typer.testing import CliRunner

from stockade.admission.app import WebhookState, create_app
from stockade.cli.main import app
from stockade.policies.config.settings import load_config
from tests.reviews import admission_review

DIGEST = "sha256:" + "4" * 64

HARDENED: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "inference", "namespace": "ml"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "inference"}},
        "template": {
            "metadata": {"labels": {"app": "inference"}},
            "spec": {
                "serviceAccountName": "inference",
                "automountServiceAccountToken": False,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 10001,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [
                    {
                        "name": "server",
                        "image": f"ghcr.io/acme/inference-server@{DIGEST}",
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "resources": {
                            "requests": {"cpu": "500m", "memory": "1Gi"},
                            "limits": {"cpu": "2", "memory": "2Gi"},
                        },
                    }
                ],
            },
        },
    },
}


def _unsafe() -> dict[str, Any]:
    obj = copy.deepcopy(HARDENED)
    obj["spec"]["template"]["spec"]["containers"][0]["securityContext"]["privileged"] = True
    return obj


def _scan(tmp_path: Path, obj: dict[str, Any]) -> Any:
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(yaml.safe_dump(obj))
    return CliRunner().invoke(app, ["scan", str(manifest), "--no-config", "-f", "json"])


def test_a_hardened_deployment_scans_clean_with_no_config(tmp_path: Path) -> None:
    clean = _scan(tmp_path, HARDENED)
    assert clean.exit_code == 0, clean.output
    unsafe = _scan(tmp_path, _unsafe())
    assert unsafe.exit_code == 1 and "STK-POD-003" in unsafe.output


def test_the_webhook_admits_it_with_no_config() -> None:
    state = WebhookState(config=load_config(None))
    with TestClient(create_app(state)) as client:
        ok = client.post("/validate", json=admission_review(HARDENED, namespace="ml")).json()["response"]
        bad = client.post("/validate", json=admission_review(_unsafe(), namespace="ml")).json()["response"]
    assert ok["allowed"] is True, ok
    assert bad["allowed"] is False and "STK-POD-003" in bad["status"]["message"]
