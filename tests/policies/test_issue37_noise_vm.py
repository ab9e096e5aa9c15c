"""The compiled VM and the interpreter agree on the issue-37 noise fixes: one STK-RES finding for a
container with no resources (owner chosen by resources.require_* and `rules:`), one STK-IMG-005 note
per pod spec. The real embedded engine (regorus VM and interpreter), no network."""

from __future__ import annotations

import orjson
import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.model import Resource
from tests.policies.test_vm_differential import canonical

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p0", "namespace": "n"},
    "spec": {
        "initContainers": [{"name": "i", "image": "FILLED BY THE OPERATOR"}],
        "containers": [
            {"name": "c", "image": "FILLED BY THE OPERATOR"},
            {"name": "d", "image": "$X", "resources": {"limits": {"cpu": "1"}}},
        ],
    },
}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("{}", ["STK-RES-001", "STK-RES-001", "STK-RES-001", "STK-RES-003"]),
        ("rules: {STK-RES-001: {enabled: false}}", ["STK-RES-002", "STK-RES-002", "STK-RES-003"]),
        ("resources: {require_memory_limit: false}", ["STK-RES-002", "STK-RES-002", "STK-RES-003"]),
        (
            "rules: {STK-RES-001: {enabled: false}, STK-RES-002: {enabled: false}}",
            ["STK-RES-003", "STK-RES-003", "STK-RES-003"],
        ),
    ],
)
def test_vm_equals_interpreter_on_resource_owners(config: str, expected: list[str]) -> None:
    ev = Evaluator.default(parse_config(config))
    engine = ev.engine
    assert isinstance(engine, EmbeddedEngine)
    inp = ev.build_input(Resource(POD), namespace=namespace_info({"metadata": {"labels": {}}}, "n"))
    text = orjson.dumps(inp).decode()
    vm = engine.evaluate_compiled("Pod", text)
    assert vm is not None
    assert canonical(vm) == canonical(engine.evaluate_interpreted("Pod", engine.rules_for("Pod"), text))
    assert sorted(v.rule.id for v in vm if v.rule.id.startswith("STK-RES")) == expected
    assert [v.rule.id for v in vm].count("STK-IMG-005") == 1
