"""Rules judged only where they can report: METADATA ``custom.triggers`` and the lean aggregates.

A rule whose every finding needs a key in the input (``"hostPort"`` for host ports, ``"rbac"`` for the
ServiceAccount's permission facts) names those strings as its triggers. The embedded engine judges an
input whose JSON text holds none of them with the kind's lean aggregate, without those rules
(``engines/library.Lean``): most pods write no host field, so the VM skips a third of its work.

The guarantee held here: wherever the lean aggregate answers differently from the full one, the text
holds a trigger (so the full one is asked). Every rule with triggers is made to fire below, on the
inputs the gates build (and on what the Azure and RBAC analyzers add to them), with its triggers
written the ways a manifest may write them; ``\\u`` escapes, which could spell a key without its
letters, always take the full aggregate.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from stockade.policies.config.settings import load_config
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import _TRIGGER_RE, LEAN, load_library
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.model import Origin, Resource, Violation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "manifests"


def _pod(spec: dict[str, Any], labels: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    base = {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]}
    metadata = {"name": "p", "namespace": "ml", "labels": labels or {}, **meta}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {**base, **spec}}


def _container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "registry.example.com/app:1.0", **fields}


#: objects on which each triggered rule reports (some through a rule beside it, the same trigger)
OBJECTS: list[dict[str, Any]] = [
    _pod({"securityContext": {"windowsOptions": {"hostProcess": True}}}),
    _pod({"containers": [_container(securityContext={"windowsOptions": {"hostProcess": True}})]}),
    _pod({"hostNetwork": True}),
    _pod({"hostPID": True}),
    _pod({"hostIPC": True}),
    _pod({"hostNetwork": True, "containers": [_container(ports=[{"containerPort": 8080}])]}),
    _pod({"containers": [_container(securityContext={"privileged": True})]}),
    _pod({"initContainers": [_container(securityContext={"capabilities": {"add": ["SYS_ADMIN"]}})]}),
    _pod({"volumes": [{"name": "h", "hostPath": {"path": "/var/run/docker.sock"}}]}),
    _pod({"containers": [_container(ports=[{"containerPort": 80, "hostPort": 80}])]}),
    _pod({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}),
    _pod({"containers": [_container(securityContext={"appArmorProfile": {"type": "Unconfined"}})]}),
    _pod({}, annotations={"container.apparmor.security.beta.kubernetes.io/app": "unconfined"}),
    _pod({"securityContext": {"seLinuxOptions": {"type": "spc_t"}}}),
    _pod({"containers": [_container(securityContext={"seLinuxOptions": {"user": "root"}})]}),
    _pod({"containers": [_container(securityContext={"procMount": "Unmasked"})]}),
    _pod({"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}}),
    _pod({"containers": [_container(livenessProbe={"httpGet": {"host": "10.0.0.1", "port": 80}})]}),
    _pod({"containers": [_container(lifecycle={"preStop": {"tcpSocket": {"host": "evil", "port": 1}}})]}),
    _pod({}, labels={"azure.workload.identity/use": "true"}),
    _pod({"containers": [_container(env=[{"name": "DB_PASSWORD", "value": "hunter2hunter2"}])]}),
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "vllm", "namespace": "ml"},
        "spec": {"type": "LoadBalancer", "ports": [{"name": "http", "port": 8000}], "selector": {"a": "b"}},
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "ray", "namespace": "ml"},
        "spec": {"type": "NodePort", "ports": [{"name": "dashboard", "port": 8265}]},
    },
    {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "ray", "namespace": "ml"},
        "spec": {"defaultBackend": {"service": {"name": "ray-head", "port": {"number": 8265}}}},
    },
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"password": "hunter2-Secr3t!x"},
    },
]

#: the facts of the cross-layer and RBAC analyzers, which need an inventory, added to an input
AKS = {
    "name": "aks-prod",
    "oidcIssuer": False,
    "workloadIdentity": False,
    "nodePools": [
        {
            "name": "gpu",
            "vmSize": "Standard_NC24ads_A100_v4",
            "enableNodePublicIP": True,
            "workloadRuntime": "OCIContainer",
            "field": "properties.agentPoolProfiles[0]",
        }
    ],
}
RBAC = {
    "bound": False,
    "serviceAccount": "ml/runner",
    "tokenMounted": True,
    "risky": [
        {"id": "STK-RBAC-001", "permission": "* on *", "scope": "cluster", "binding": "b", "role": "r"}
    ],
    "escalations": [],
}
IDENTITY = "azure.workload.identity/use"
#: (object, what is added to its input: "facts" the analyzers hand with an inventory, the "namespace"
#: labels of a cluster)
WITH_FACTS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (_pod({}, labels={IDENTITY: "true"}), {"facts": {"azure": {"cluster": AKS}}}),
    (_pod({"runtimeClassName": "kata-vm-isolation"}), {"facts": {"azure": {"cluster": AKS}}}),
    (
        _pod({"containers": [_container(resources={"limits": {"nvidia.com/gpu": "1"}})]}),
        {"facts": {"azure": {"cluster": AKS}}},
    ),
    (_pod({}), {"facts": {"rbac": RBAC}}),
    (
        _pod({}),
        {
            "facts": {
                "serviceAccount": {"known": True, "annotations": {"azure.workload.identity/client-id": "0"}}
            }
        },
    ),
    (_pod({}, labels={IDENTITY: "true"}), {"facts": {"serviceAccount": {"known": True, "exists": True}}}),
    (
        _pod({"hostNetwork": True}),
        {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}},
    ),
    (
        _pod({"containers": [_container(securityContext={"capabilities": {"add": ["SYS_ADMIN"]}})]}),
        {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}}},
    ),
]


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(load_config(None))


def _texts(evaluator: Evaluator) -> list[tuple[str, str]]:
    """(kind, JSON text) of every input: the objects above, each example manifest, and the inputs with
    the analyzers' facts added."""
    objects = list(OBJECTS)
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        if "broken" not in path.parts:  # the examples of what a scan refuses
            objects += [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    source = InventoryFacts()
    out = []
    for obj in objects:
        for kind, inp in evaluator.inputs(Resource(obj, Origin()), source=source):
            out.append((kind, orjson.dumps(inp).decode()))
    for obj, extra in WITH_FACTS:
        for kind, inp in evaluator.inputs(Resource(obj, Origin()), source=source):
            inp = copy.deepcopy(dict(inp))
            for part, values in extra.items():  # "facts" or "namespace": their keys replaced or merged
                for key, value in values.items():
                    current = inp[part].get(key)
                    inp[part][key] = {**current, **value} if isinstance(current, dict) else value
            out.append((kind, orjson.dumps(inp).decode()))
    return out


def _ids(violations: list[Violation]) -> list[tuple[str, str]]:
    return sorted((v.rule.id, v.msg) for v in violations)


def test_lean_answers_as_the_full_aggregate_wherever_no_trigger_is_written(evaluator: Evaluator) -> None:
    engine = evaluator.engine
    assert isinstance(engine, EmbeddedEngine)
    triggered = {r.id for r in engine.library.rules.values() if r.triggers}
    fired: set[str] = set()
    for kind, text in _texts(evaluator):
        agg = kind if kind in engine._vm_by_kind else "*"
        lean = engine._lean.get(agg)
        if lean is None:
            continue
        full = engine.evaluate_compiled(agg, text)
        slim = engine.evaluate_compiled(lean.kind, text)
        assert full is not None and slim is not None
        for v in full:  # each rule's own triggers, not only its aggregate's: none hides behind another's
            assert not v.rule.triggers or any(t in text for t in v.rule.triggers), (v.rule.id, text)
        if _ids(full) != _ids(slim):
            assert not lean.fits(text), f"{kind}: the lean aggregate misses a finding on {text}"
            fired |= {v.rule.id for v in full} - {v.rule.id for v in slim}
        # and the engine's own choice answers as the full aggregate, always
        assert _ids(engine.evaluate_json(kind, text)) == _ids(full)
    assert fired == triggered, f"rules with triggers never made to report here: {sorted(triggered - fired)}"


def test_a_key_spelled_with_escapes_takes_the_full_aggregate(evaluator: Evaluator) -> None:
    engine = evaluator.engine
    assert isinstance(engine, EmbeddedEngine)
    (kind, inp), *_ = evaluator.inputs(Resource(_pod({"hostNetwork": True}), Origin()))
    text = orjson.dumps(inp).decode().replace('"hostNetwork"', '"host\\u004eetwork"')
    assert '"hostNetwork"' not in text
    assert "STK-POD-002" in {v.rule.id for v in engine.evaluate_json(kind, text)}
    assert engine._aggregate(kind, text) == kind


def test_a_plain_pod_is_judged_by_the_lean_aggregate(evaluator: Evaluator) -> None:
    engine = evaluator.engine
    assert isinstance(engine, EmbeddedEngine)
    (kind, inp), *_ = evaluator.inputs(Resource(_pod({}), Origin()))
    assert engine._aggregate(kind, orjson.dumps(inp)) == kind + LEAN
    (kind, inp), *_ = evaluator.inputs(Resource(_pod({"hostPID": False}), Origin()))
    assert engine._aggregate(kind, orjson.dumps(inp)) == kind  # a trigger written false: full


def test_each_trigger_is_read_by_its_rule() -> None:
    """A trigger is a string the rule's module reads: a stale one,
    left after a rule stops reading the key, would take the full aggregate for nothing, and a
    misspelled one would skip the rule where it must report (the test above catches that)."""
    library = load_library()
    texts = {m.path: m.text for m in library.policy_modules}
    with_triggers = [r for r in library.rules.values() if r.triggers]
    assert len(with_triggers) >= 20
    for rule in with_triggers:
        for trigger in rule.triggers:
            assert _TRIGGER_RE.match(trigger)
            assert trigger.strip('"') in texts[rule.file], (rule.id, trigger)


@pytest.mark.parametrize(
    "bad",
    [
        ["host/Port"],
        ['"a" "b"'],
        "hostPort",
        [""],
        [3],
    ],
)
def test_malformed_triggers_are_refused_with_the_rule_named(tmp_path: Path, bad: Any) -> None:
    from stockade.policies.engines.library import PolicyError

    rule = tmp_path / "r.rego"
    meta = yaml.safe_dump({"custom": {"id": "X-1", "severity": "low", "kinds": ["Pod"], "triggers": bad}})
    body = "".join(f"# {line}\n" for line in meta.splitlines())
    rule.write_text(f"# METADATA\n{body}package x.r\n\nimport rego.v1\n\ndeny contains 1 if input.a\n")
    with pytest.raises(PolicyError, match=r"r\.rego:\d+: METADATA custom\.triggers"):
        load_library([tmp_path], bundled=False)
