"""The shared pipeline: scope, namespace level, actions and overrides, exceptions and expiry."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.model import Action, Resource, Severity

TODAY = dt.date(2026, 11, 22)


def privileged(
    kind: str = "Pod", namespace: str = "ml", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": True}}]}
    md = {"name": "w", "namespace": namespace, "labels": labels or {}}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": md, "spec": {"template": {"spec": spec}}}


def ids(findings: list[Any]) -> set[str]:
    return {f.rule.id for f in findings}


def test_system_namespaces_are_out_of_scope_by_default() -> None:
    ev = Evaluator.default()
    assert ev.evaluate(Resource(privileged(namespace="kube-system"))) == []
    assert "STK-POD-003" in ids(ev.evaluate(Resource(privileged())))


def test_scope_is_configurable() -> None:
    ev = Evaluator.default(parse_config("scope:\n  excluded_namespaces: []\n"))
    assert "STK-POD-003" in ids(ev.evaluate(Resource(privileged(namespace="kube-system"))))


def test_privileged_namespace_label_disables_pss() -> None:
    ev = Evaluator.default()
    ns = namespace_info({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}, "ml")
    found = ev.evaluate(Resource(privileged()), namespace=ns)
    assert not any(any(fw.startswith("pss-") for fw in f.rule.frameworks) for f in found)


def test_action_defaults_rule_setting_then_overrides_last_wins() -> None:
    cfg = parse_config(
        "rules:\n  STK-POD-003: {action: warn, severity: low}\n"
        "overrides:\n"
        "  - {rules: ['STK-POD-*'], namespaces: [notebooks], action: audit}\n"
        "  - {rules: [STK-POD-003], namespaces: ['note*'], clusters: [dev-*], action: deny}\n"
    )
    ev = Evaluator.default(cfg)
    (f,) = [f for f in ev.evaluate(Resource(privileged())) if f.rule.id == "STK-POD-003"]
    assert f.action is Action.WARN and f.rule.severity is Severity.LOW
    assert ev.action_for(f.rule, "notebooks", None) is Action.AUDIT
    assert ev.action_for(f.rule, "notebooks", "dev-1") is Action.DENY


def test_exception_matches_and_expired_one_does_not_apply() -> None:
    cfg = parse_config(
        "exceptions:\n"
        "  - {name: live, rules: [STK-POD-003], match: {namespaces: [ml], kinds: [Deployment],"
        " labels: {app: dcgm}}, owner: gpu-team, reason: needs devices, expires: 2026-12-31}\n"
        "  - {name: old, rules: ['STK-POD-*'], match: {names: [w]}, owner: x, reason: why,"
        " expires: 2026-01-31}\n"
        "  - {name: idle, rules: [STK-POD-001], owner: x, reason: why, expires: 2027-01-31}\n"
    )
    ev = Evaluator.default(cfg, today=TODAY)
    waived = [f for f in ev.evaluate(Resource(privileged("Deployment", labels={"app": "dcgm"}))) if f.waived]
    assert [(f.rule.id, f.exception.name if f.exception else None) for f in waived] == [
        ("STK-POD-003", "live")
    ]
    # Other labels: the live exception does not match, the expired one must not either.
    assert not any(f.waived for f in ev.evaluate(Resource(privileged("Deployment"))))
    status = {s.spec.name: (s.status, s.matched) for s in ev.exceptions.statuses()}
    assert status == {"live": ("active", 1), "old": ("expired", 0), "idle": ("unused", 0)}


def test_every_workload_kind_gets_the_same_verdict() -> None:
    ev = Evaluator.default()
    for kind in (
        "Pod",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "ReplicationController",
        "Job",
    ):
        assert "STK-POD-003" in ids(ev.evaluate(Resource(privileged(kind)))), kind
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {"jobTemplate": {"spec": {"template": privileged()}}},
    }
    (f,) = [f for f in ev.evaluate(Resource(cron)) if f.rule.id == "STK-POD-003"]
    assert f.path[:5] == ("spec", "jobTemplate", "spec", "template", "spec")


def test_an_objects_pod_specs_are_computed_once_and_passed_along(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evaluating a workload reads its pod specs once (issue 35): its input, its facts and every
    analyzer are handed them, for each of its pod specs, and never walk the object again."""
    from stockade.policies.evaluate import InventoryFacts
    from stockade.policies.facts import inventory_of
    from stockade.policies.kinds.workloads import WorkloadKinds
    from stockade.policies.model import Origin, Resource

    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "r", "namespace": "ml"},
        "spec": {
            "headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray:2"}]}}},
            "workerGroupSpecs": [
                {"groupName": "cpu", "template": {"spec": {"containers": [{"name": "w", "image": "ray:2"}]}}},
                {"groupName": "gpu", "template": {"spec": {"containers": [{"name": "g", "image": "ray:2"}]}}},
            ],
        },
    }
    evaluator = Evaluator.default()
    source = InventoryFacts(inventory_of([ray]))
    calls: list[str] = []
    original = WorkloadKinds.pods

    def counted(self: WorkloadKinds, obj: Any, info: Any = True) -> list[dict[str, Any]]:
        calls.append(str(obj.get("kind")))
        return original(self, obj, info)

    monkeypatch.setattr(WorkloadKinds, "pods", counted)
    findings = evaluator.evaluate(Resource(ray, Origin(file="ray.yaml")), source=source)
    assert {f.template for f in findings} >= {
        "headGroupSpec",
        "workerGroupSpecs[cpu]",
        "workerGroupSpecs[gpu]",
    }
    assert calls == ["RayCluster"]
