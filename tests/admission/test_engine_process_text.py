"""The engine process receives inputs as JSON text (serialised once, in the parent) and its VM reads
that text as it is (policies/engines/process.py).

The webhook (`webhook serve`) evaluates in a child process; its verdicts must be those of the engine
in this process, object for object, since the admission gate and the scan must agree.
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.engines.base import RuleEvaluationError, enabled_rules
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import load_library
from stockade.policies.engines.process import (
    ProcessEngine,
    _batch,
    _compiled_answer,
    _decoded,
    _evaluate_batch,
)
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.model import Origin, Resource

DIGEST = "sha256:fdb33018a81755570f074a21085deecee8cad34e586370eda4457d1b5bd45327"


def _pod(name: str, **container: Any) -> dict[str, Any]:
    base = {
        "name": "app",
        "image": f"registry.example.com/ml/app@{DIGEST}",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
    }
    base.update(container)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"containers": [base]},
    }


def _deployment(name: str, pod: dict[str, Any]) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": copy.deepcopy(pod["spec"])},
        },
    }


OBJECTS = [
    _pod("clean"),
    _pod("privileged", securityContext={"privileged": True}),
    _pod("latest", image="docker.io/library/nginx:latest"),
    _pod("env-secret", env=[{"name": "DB_PASSWORD", "value": "hunter2-correct-horse"}]),
    _deployment("deploy-clean", _pod("x")),
    _deployment("deploy-root", _pod("y", securityContext={"runAsUser": 0, "privileged": True})),
]


def _verdicts(evaluator: Evaluator) -> list[list[tuple[str, str, tuple[Any, ...], str]]]:
    facts = InventoryFacts()
    out = []
    for obj in OBJECTS:
        findings = evaluator.evaluate(Resource(obj, Origin()), source=facts)
        out.append(sorted((f.rule.id, f.action.value, f.path, f.message) for f in findings))
    return out


def test_the_engine_process_gives_the_verdicts_of_the_engine_in_this_process() -> None:
    config = parse_config("admission: {evaluation_timeout_seconds: 60}\n")  # a loaded machine
    here = _verdicts(Evaluator.default(config))
    isolated = Evaluator.default(config, isolated=True)
    try:
        there = _verdicts(isolated)
    finally:
        isolated.engine.close()  # type: ignore[attr-defined]
    assert here == there
    flagged = {rid for findings in here for rid, *_ in findings}
    assert {"STK-CRED-001", "STK-POD-003", "STK-IMG-002"} <= flagged  # the mix is judged, not all allowed
    assert here[0] != here[1]


def test_an_input_json_cannot_carry_fails_as_the_evaluation_error_it_was_in_the_child() -> None:
    """An integer beyond 64 bits cannot be serialised: the parent now serialises, and says so as the
    child did (a RuleEvaluationError naming the encoder's error), and the child keeps serving."""
    config = parse_config("admission: {evaluation_timeout_seconds: 60}\n")
    isolated = Evaluator.default(config, isolated=True)
    try:
        huge = _pod("huge")
        huge["spec"]["containers"][0]["ports"] = [{"containerPort": 2**70}]
        with pytest.raises(RuleEvaluationError, match="TypeError: Integer exceeds 64-bit range"):
            isolated.violations(Resource(huge, Origin()), source=InventoryFacts())
        assert _verdicts(isolated)[1]  # still answering
    finally:
        isolated.engine.close()  # type: ignore[attr-defined]


def test_an_object_with_several_pod_specs_crosses_whole() -> None:
    """A RayCluster's head and worker groups are several inputs: the batch path, same verdicts."""
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "ml"},
        "spec": {
            "headGroupSpec": {"template": copy.deepcopy({"spec": _pod("h")["spec"]})},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "template": {"spec": _pod("w", securityContext={"privileged": True})["spec"]},
                }
            ],
        },
    }
    config = parse_config("admission: {evaluation_timeout_seconds: 60}\n")
    here = Evaluator.default(config)
    isolated = Evaluator.default(config, isolated=True)
    try:
        key = lambda fs: sorted((f.rule.id, f.path, f.message, f.template or "") for f in fs)  # noqa: E731
        got = key(isolated.evaluate(Resource(ray, Origin()), source=InventoryFacts()))
        assert got == key(here.evaluate(Resource(ray, Origin()), source=InventoryFacts()))
        assert any(rid == "STK-POD-003" for rid, *_ in got)
    finally:
        isolated.engine.close()  # type: ignore[attr-defined]


CUSTOM_POD_RULE = (
    "# METADATA\n# title: no pods named custom\n# custom:\n#   id: CUSTOM-POD-001\n#   severity: high\n"
    '#   kinds: [Pod]\npackage custom.pods\n\nimport rego.v1\n\ndeny contains {"msg": "named custom"} if '
    '{\n\tinput.object.metadata.name == "privileged"\n}\n'
)


@pytest.mark.parametrize("custom", [False, True])
def test_the_child_sends_the_vm_text_only_when_the_vm_alone_judges(custom: bool, tmp_path: Path) -> None:
    """With the library alone, the child answers with the compiled VM's own JSON text (b"R"), which
    the parent reads into the violations the in-process engine finds; a rule of a policy directory
    for the kind (interpreted) sends it through the full evaluation instead, and it still decides."""
    dirs = []
    if custom:
        (tmp_path / "pods.rego").write_text(CUSTOM_POD_RULE)
        dirs = [tmp_path]
    config = parse_config("")
    library = load_library(tuple(dirs))
    engine = EmbeddedEngine(library, config.rule_data(), enabled_rules(config, library))
    evaluator = Evaluator.default(config, dirs)
    for obj in OBJECTS:
        inputs = evaluator.inputs(Resource(obj, Origin()), source=InventoryFacts())
        payload = _batch(inputs)[1:]
        answer = _compiled_answer(engine, payload)
        expected = _evaluate_batch(engine, payload)
        if custom and obj["kind"] == "Pod":
            assert answer is None
            assert any(v.rule.id == "CUSTOM-POD-001" for v in expected) is (
                obj["metadata"]["name"] == "privileged"
            )
            continue
        assert answer is not None and answer[:1] == b"R"
        found = ProcessEngine._violations(SimpleNamespace(library=library), _decoded(answer))  # type: ignore[arg-type]
        assert found == expected
