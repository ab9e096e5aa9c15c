"""The compiled Rego VM and the tree-walking interpreter of regorus must agree on every input.

The engine evaluates on regorus' RVM for speed and keeps the interpreter as the reference (and for
error isolation). This runs every object of the Kyverno pod-security corpus (when present) and a set
of generated objects, under each Pod Security level, through both and compares the violations.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import orjson

from stockade.policies.engine import EmbeddedEngine
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.model import Resource, Violation

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "kyverno_policies.jsonl"


def generated() -> list[dict[str, Any]]:
    contexts = [
        {},
        {"privileged": True, "allowPrivilegeEscalation": True, "runAsUser": 0, "procMount": "Unmasked"},
        {"capabilities": {"add": ["SYS_ADMIN", "NET_BIND_SERVICE"], "drop": ["ALL"]}, "runAsNonRoot": False},
        {"seccompProfile": {"type": "Unconfined"}, "seLinuxOptions": {"type": "spc_t", "user": "root"}},
        {"appArmorProfile": {"type": "Unconfined"}, "windowsOptions": {"hostProcess": True}},
    ]
    pods = []
    for i, (sc, host) in enumerate(itertools.product(contexts, [False, True])):
        spec: dict[str, Any] = {
            "hostNetwork": host,
            "hostPID": host,
            "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]} if host else {},
            "volumes": [{"name": "h", "hostPath": {"path": "/dev/nvidia0"}}] if host else [],
            "containers": [
                {
                    "name": f"c{i}",
                    "image": "x",
                    "securityContext": sc,
                    "ports": [{"containerPort": 80, "hostPort": 80 if host else 0}],
                    "livenessProbe": {"httpGet": {"host": "10.0.0.1" if host else "", "port": 80}},
                }
            ],
        }
        pods.append(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "n"}, "spec": spec}
        )
    # GPU and extended resources: requests without limits, equal and different quantities in every
    # spelling, null and empty values, GPU scheduling with and without tolerations and node selection.
    quantities: list[Any] = [1, "1", "1000m", 2, "2", None, "", "bad"]
    for i, (request, limit) in enumerate(itertools.product(quantities, [*quantities, "absent"])):
        limits = {} if limit == "absent" else {"nvidia.com/gpu": limit, "rdma/hca": limit}
        resources = {
            "requests": {"nvidia.com/gpu": request, "rdma/hca": request, "cpu": "1"},
            "limits": limits,
        }
        gpu_spec: dict[str, Any] = {
            "containers": [{"name": "g", "image": "x", "resources": resources}],
            "initContainers": [
                {"name": "i", "image": "x", "resources": {"requests": {"example.com/dev": "1"}}}
            ],
        }
        if i % 3 == 0:
            gpu_spec["tolerations"] = [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ]
        if i % 2 == 0:
            gpu_spec["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"g{i}", "namespace": "n"},
                "spec": gpu_spec,
            }
        )
    return pods


def corpus_objects() -> list[dict[str, Any]]:
    if not CORPUS.exists():
        return []
    out = []
    with CORPUS.open() as fh:
        for line in fh:
            row = json.loads(line)
            if ":pod-security/" in row["source"]:
                out.extend(o for o in row["objects"] if isinstance(o, dict) and o.get("kind"))
    return out


def canonical(violations: list[Violation]) -> list[bytes]:
    return sorted(
        orjson.dumps(
            {"rule": v.rule.id, "msg": v.msg, "path": list(v.path), "details": dict(v.details)},
            option=orjson.OPT_SORT_KEYS,
        )
        for v in violations
    )


def test_vm_equals_interpreter_on_every_input() -> None:
    ev = Evaluator.default()
    engine = ev.engine
    assert isinstance(engine, EmbeddedEngine) and engine.uses_vm, engine.vm_error
    objects = generated() + corpus_objects()
    compared = 0
    for obj, level in itertools.product(objects, ["privileged", "baseline", "restricted"]):
        ns = namespace_info({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": level}}}, "n")
        resource = Resource(obj)
        inp = ev.build_input(resource, namespace=ns)
        kind = resource.kind if resource.kind in engine.kinds() else "*"
        rules = engine.rules_for(resource.kind)
        if not rules:
            continue
        text = orjson.dumps(inp).decode()
        vm = engine.evaluate_compiled(kind, text)
        # None would mean the VM gave no answer and the engine fell back to the interpreter: the
        # comparison would then be empty, and every request would pay the interpreter's price.
        assert vm is not None, ("the VM gave no answer", obj.get("metadata"), level)
        interpreted = engine.evaluate_interpreted(kind, rules, text)
        assert canonical(vm) == canonical(interpreted), (obj.get("metadata"), level)
        compared += 1
    assert compared >= len(generated()) * 3
    print(f"\nVM vs interpreter: {compared} evaluations identical")
