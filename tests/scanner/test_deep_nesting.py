"""A document nested deeper than the decoders accept (policies/decode.py MAX_DEPTH) is a one-line
error naming the file in a scan, and a denial in the webhook: never a traceback (the policy engines'
JSON encoders stop near 255 levels, which a JSON manifest could otherwise reach)."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from stockade.admission.app import WebhookState
from stockade.admission.bounds import malformed
from stockade.cli.main import build
from stockade.policies.config import load_config
from stockade.policies.decode import MAX_DEPTH, deeper_than
from stockade.policies.facts.workloads import DEFAULT_WORKLOADS
from tests.reviews import admission_review
from tests.tls_webhook import CA, Server


def _deep(levels: int) -> dict[str, Any]:
    inner: dict[str, Any] = {"a": "x"}
    for _ in range(levels):
        inner = {"n": inner}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "deep", "namespace": "ml"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:1"}], "extra": inner}}},
    }


def test_depth_is_measured_without_recursion() -> None:
    assert not deeper_than(_deep(MAX_DEPTH - 10))
    assert deeper_than(_deep(MAX_DEPTH))
    assert deeper_than(_deep(50_000))  # far beyond Python's recursion limit


def test_scan_of_a_deep_json_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(_deep(600)))
    result = CliRunner().invoke(build(), ["scan", str(path)])
    assert result.exit_code == 2, result.output
    assert f"deep.json: nesting deeper than {MAX_DEPTH} levels" in result.output
    assert "Traceback" not in result.output


def test_webhook_denies_a_deep_object(tmp_path: Path) -> None:
    assert malformed(_deep(600), DEFAULT_WORKLOADS) == f"nesting deeper than {MAX_DEPTH} levels"
    ca = CA()
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    ca.issue(cert, key)
    config_path = tmp_path / "stockade.yaml"
    config_path.write_text("{}\n")
    srv = Server(WebhookState(config=load_config(config_path), config_path=config_path), cert, key)
    ctx = ssl.create_default_context(cafile=str(ca.write_ca(tmp_path / "ca.crt")))
    try:
        with httpx.Client(base_url=f"https://127.0.0.1:{srv.port}", verify=ctx) as client:
            body = json.dumps(admission_review(_deep(600), "ml")).encode()
            r = client.post("/validate", content=body, headers={"content-type": "application/json"})
    finally:
        srv.stop()
    assert r.status_code == 200
    response = r.json()["response"]
    assert response["allowed"] is False
    assert "nesting deeper than" in response["status"]["message"]


def test_audit_reports_a_deep_object_as_an_error_of_that_object() -> None:
    """Through the real `kubernetes` client against the fake API server of examples/fleet/apiserver.py
    on loopback: a custom resource may keep unknown fields, so a live object can be deeper than any
    decoder would accept. 270 levels: beyond the engines' encoders (255)."""
    import importlib
    import sys

    from kubernetes import client as k8s_client

    from stockade.policies.config import parse_config
    from stockade.policies.evaluate import Evaluator
    from stockade.scanner.audit import Target, run_audit
    from stockade.scanner.sources.cluster import ClusterReader

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "fleet"))
    fake: Any = importlib.import_module("apiserver")
    deep = _deep(270)
    deep["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    deep["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    cluster = fake.FakeCluster.from_objects("c1", [ns, deep], nodes=1, simulate=False)
    with fake.ServedCluster(cluster) as served:

        def reader() -> ClusterReader:
            cfg = k8s_client.Configuration()
            cfg.host = served.url
            cfg.api_key = {"authorization": fake.TOKEN}
            cfg.api_key_prefix = {"authorization": "Bearer"}
            cfg.retries = False
            return ClusterReader(k8s_client.ApiClient(cfg), "c1", sleep=lambda s: None)

        result = run_audit([Target("c1", reader)], Evaluator.default(parse_config("")), version="t")
    assert [(e.file, e.message) for e in result.errors] == [
        ("c1/Deployment/ml/deep", f"nesting deeper than {MAX_DEPTH} levels: not evaluated")
    ]
