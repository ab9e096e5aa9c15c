"""`stockade.io/ignore-<RULE>` suppression annotations at each gate.

- scan: the real command line (typer's runner, in this process), JSON report;
- the webhook: its ASGI app (starlette's TestClient) with AdmissionReview bodies from tests/reviews.py;
- the audit: `run_audit` through the real kubernetes client against the fake API server of
  tests/fleet.py on loopback.

Scan honours them by default; the webhook and the audit only where `suppressions.admission` /
`suppressions.audit` allow.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from stockade.admission.app import WebhookState, create_app
from stockade.cli.main import app
from stockade.policies.config.settings import Config, parse_config
from stockade.policies.config.waivers import parse_suppression
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Resource
from tests.fleet import audit_objects
from tests.reviews import admission_review

KEY = "stockade.io/ignore-STK-POD-003"
TODAY = dt.date(2026, 6, 1)


def pod(annotations: dict[str, str] | None = None, namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gpu-probe", "namespace": namespace, "annotations": annotations or {}},
        "spec": {
            "containers": [
                {
                    "name": "probe",
                    "image": "registry.example.com/probe@sha256:" + "0" * 64,
                    "securityContext": {"privileged": True},
                }
            ]
        },
    }


def scanned(tmp_path: Path, obj: dict[str, Any], *args: str) -> tuple[int, dict[str, Any]]:
    f = tmp_path / "pod.json"
    f.write_text(json.dumps(obj))
    result = CliRunner().invoke(app, ["scan", str(f), "-f", "json", "--rule", "STK-POD-003", *args])
    return result.exit_code, json.loads(result.stdout)


def pod003(report: dict[str, Any]) -> dict[str, Any]:
    (f,) = [f for f in report["findings"] if f["rule"]["id"] == "STK-POD-003"]
    return f


def test_the_annotation_form() -> None:
    s = parse_suppression(KEY, "reads the GPU devices; expires=2027-01-31")
    assert (s.rule, s.reason, s.expires, s.problem) == (
        "STK-POD-003",
        "reads the GPU devices",
        dt.date(2027, 1, 31),
        None,
    )
    assert parse_suppression(KEY, "  ").problem == "it gives no reason"
    assert parse_suppression(KEY, "expires=2027-01-31").problem == "it gives no reason"
    assert (
        parse_suppression(KEY, "why; expires=31.01.2027").problem == "its expires= is not a date YYYY-MM-DD"
    )
    assert parse_suppression("stockade.io/ignore-stk-pod-003", "a; b").reason == "a; b"


def test_scan_honours_a_suppression_with_its_reason(tmp_path: Path) -> None:
    code, report = scanned(tmp_path, pod({KEY: "DCGM probe reads the GPU devices; expires=2999-01-31"}))
    assert code == 0
    waiver = pod003(report)["exception"]
    assert waiver == {
        "name": KEY,
        "owner": "manifest annotation on Pod/ml/gpu-probe",
        "reason": "DCGM probe reads the GPU devices",
        "expires": "2999-01-31",
    }
    (status,) = report["exceptions"]
    assert (
        status["status"] == "active" and status["matched"] == 1 and status["owner"] == "manifest annotation"
    )


def test_scan_does_not_honour_an_expired_one_and_reports_it_expired(tmp_path: Path) -> None:
    code, report = scanned(tmp_path, pod({KEY: "temporary; expires=2020-01-31"}))
    assert code == 1
    f = pod003(report)
    assert f["exception"] is None and f"({KEY} expired on 2020-01-31)" in f["message"]
    (status,) = report["exceptions"]
    assert status["status"] == "expired" and status["name"] == f"{KEY} on Pod/ml/gpu-probe"


def test_scan_does_not_honour_one_without_a_reason_and_says_so(tmp_path: Path) -> None:
    code, report = scanned(tmp_path, pod({KEY: ""}))
    assert code == 1
    f = pod003(report)
    assert f["exception"] is None and f"({KEY} not honoured: it gives no reason)" in f["message"]


def test_a_suppression_matching_nothing_is_reported_unused(tmp_path: Path) -> None:
    obj = pod({KEY: "was privileged once"})
    obj["spec"]["containers"][0]["securityContext"]["privileged"] = False
    code, report = scanned(tmp_path, obj)
    assert code == 0
    assert [s["status"] for s in report["exceptions"]] == ["unused"]


def test_scan_can_be_told_not_to_honour_them(tmp_path: Path) -> None:
    config = tmp_path / "stockade.yaml"
    config.write_text("suppressions: {scan: false}\n")
    code, report = scanned(tmp_path, pod({KEY: "reason"}), "--config", str(config))
    assert code == 1 and "not honoured at scan: suppressions.scan is false" in pod003(report)["message"]


def _admit(config: Config, obj: dict[str, Any]) -> dict[str, Any]:
    with TestClient(create_app(WebhookState(config=config))) as client:
        body = admission_review(obj, obj["metadata"]["namespace"])
        response: dict[str, Any] = client.post("/validate", json=body).json()["response"]
    return response


@pytest.fixture(scope="module")
def only_pod003() -> str:
    """A config under which the test pod violates STK-POD-003 alone (every other rule it trips, off;
    until none is left, since a rule switched off can hand its finding to another: STK-RES-001 to
    STK-RES-002 on a container without resources)."""
    others: set[str] = set()
    while True:
        text = "rules: {" + ", ".join(f"{rid}: {{enabled: false}}" for rid in sorted(others)) + "}\n"
        findings = Evaluator.default(parse_config(text)).evaluate(Resource(pod()))
        more = {f.rule.id for f in findings if f.rule.id != "STK-POD-003"} - others
        if not more:
            return text
        others |= more


def test_the_webhook_does_not_honour_them_by_default(only_pod003: str) -> None:
    response = _admit(parse_config(only_pod003), pod({KEY: "reason"}))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert "STK-POD-003" in message
    assert f"{KEY} not honoured at admission: suppressions.admission does not allow it" in message


def test_the_webhook_honours_them_where_the_config_allows(only_pod003: str) -> None:
    config = parse_config(
        only_pod003 + "suppressions: {admission: {namespaces: [ml], rules: [STK-POD-003]}}\n"
    )
    assert _admit(config, pod({KEY: "reason"}))["allowed"] is True
    # another namespace, another rule, or no reason: not honoured
    other_ns = _admit(config, pod({KEY: "reason"}, namespace="web"))
    assert other_ns["allowed"] is False and "in namespace web" in other_ns["status"]["message"]
    narrower = parse_config(
        only_pod003 + "suppressions: {admission: {namespaces: ['*'], rules: [STK-RBAC-*]}}\n"
    )
    assert _admit(narrower, pod({KEY: "reason"}))["allowed"] is False
    no_reason = _admit(config, pod({KEY: " "}))
    assert no_reason["allowed"] is False and "it gives no reason" in no_reason["status"]["message"]


def _audited(config: Config, obj: dict[str, Any]) -> Any:
    result = audit_objects([copy.deepcopy(obj)], Evaluator.default(config, today=TODAY), cluster="gpu-1")
    (f,) = [f for f in result.findings if f.rule.id == "STK-POD-003" and f.resource.name == "gpu-probe"]
    return f, result


def test_the_audit_honours_them_only_where_the_config_allows() -> None:
    obj = pod({KEY: "DCGM probe; expires=2027-01-31"})
    f, result = _audited(Config(), obj)
    assert f.exception is None and "not honoured at audit: suppressions.audit does not allow it" in f.message
    allowed = parse_config("suppressions: {audit: {namespaces: [ml], rules: [STK-POD-*]}}\n")
    f, result = _audited(allowed, obj)
    assert f.exception is not None and f.exception.name == KEY and f.exception.reason == "DCGM probe"
    (status,) = [s for s in result.exceptions if s.spec.owner == "manifest annotation"]
    assert status.status == "active" and status.matched == 1
    # past its expiry it stops applying in the audit too, and is reported expired
    expired = pod({KEY: "DCGM probe; expires=2026-05-31"})
    f, result = _audited(allowed, expired)
    assert f.exception is None and "expired on 2026-05-31" in f.message
    assert [s.status for s in result.exceptions if s.spec.owner == "manifest annotation"] == ["expired"]
