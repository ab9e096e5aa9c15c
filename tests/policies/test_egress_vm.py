"""The egress rules run on regorus' compiled VM, and the VM agrees with the interpreter on them.

The engine falls back to the interpreter when the VM answers "<undefined>" (a VM limitation), so a
rule that trips the VM is still right but 2-3x slower on every policy object. This checks that no
egress input makes the VM fall back, and that both give the same violations: every policy object of
the examples, and generated NetworkPolicies, Cilium and Calico policies covering each peer shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from stockade.policies.config.settings import load_config
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Resource

ROOT = Path(__file__).resolve().parents[2]
POLICY_KINDS = {
    "NetworkPolicy",
    "GlobalNetworkPolicy",
    "CiliumNetworkPolicy",
    "CiliumClusterwideNetworkPolicy",
}


def example_policies() -> list[dict[str, Any]]:
    out = []
    for path in sorted((ROOT / "examples" / "manifests").rglob("*.yaml")):
        if "broken" in path.parts:
            continue
        out.extend(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") in POLICY_KINDS)
    return out


def generated() -> list[dict[str, Any]]:
    dns = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
    }
    peers: list[dict[str, Any]] = [
        dns,
        {"podSelector": {"matchLabels": {"app": "x"}}},
        {"namespaceSelector": {}},
        {
            "namespaceSelector": {
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "b"]}
                ]
            }
        },
        {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.169.254/32"]}},
        {"ipBlock": {"cidr": "10.240.8.0/24"}},
        {"ipBlock": {"cidr": "not-a-cidr"}},
    ]
    objs: list[dict[str, Any]] = []
    for i, peer in enumerate(peers):
        for ports in ([], [{"protocol": "UDP", "port": 53}], [{"port": 1, "endPort": 1024}]):
            spec = {
                "podSelector": {},
                "policyTypes": ["Egress"],
                "egress": [{"to": [peer], "ports": ports}, {}],
            }
            objs.append(
                {
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "NetworkPolicy",
                    "metadata": {"name": f"np{i}", "namespace": "ml-training"},
                    "spec": spec,
                }
            )
    cilium_rules: list[dict[str, Any]] = [
        {
            "toEndpoints": [
                {"matchLabels": {"k8s:io.kubernetes.pod.namespace": "kube-system", "k8s-app": "kube-dns"}}
            ],
            "toPorts": [
                {"ports": [{"port": "53", "protocol": "ANY"}], "rules": {"dns": [{"matchPattern": "*"}]}}
            ],
        },
        {
            "toEndpoints": [
                {"matchLabels": {"app": "x"}},
                {
                    "matchExpressions": [
                        {"key": "io.kubernetes.pod.namespace", "operator": "NotIn", "values": ["a"]}
                    ]
                },
            ]
        },
        {
            "toCIDRSet": [{"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}],
            "toPorts": [{"ports": [{"port": "https", "protocol": "TCP"}]}],
        },
        {"toEntities": ["world", "cluster"]},
        {"toFQDNs": [{"matchName": "pypi.org"}, {"matchPattern": "*.example.com"}]},
    ]
    for kind, ns in (("CiliumNetworkPolicy", "notebooks"), ("CiliumClusterwideNetworkPolicy", None)):
        md = {"name": "c", **({"namespace": ns} if ns else {})}
        spec = {
            "endpointSelector": {},
            "egress": cilium_rules,
            "egressDeny": [{"toCIDR": ["169.254.169.254/32"]}],
        }
        objs.append({"apiVersion": "cilium.io/v2", "kind": kind, "metadata": md, "spec": spec})
    calico_rules = [
        {"action": "Deny", "destination": {"nets": ["169.254.169.254/32"]}},
        {"action": "Allow", "protocol": "UDP", "destination": {"nets": ["8.8.8.8/32"], "ports": [53]}},
        {"action": "Allow", "destination": {"notNets": ["10.0.0.0/8"]}},
        {"action": "Allow", "destination": {"selector": "app == 'x'"}},
    ]
    objs.append(
        {
            "apiVersion": "projectcalico.org/v3",
            "kind": "GlobalNetworkPolicy",
            "metadata": {"name": "g"},
            "spec": {"selector": "all()", "egress": calico_rules},
        }
    )
    return objs


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(load_config(ROOT / "examples" / "stockade.yaml"))


def test_vm_answers_every_egress_policy_itself_and_agrees(
    evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = evaluator.engine
    assert isinstance(engine, EmbeddedEngine) and engine.uses_vm, engine.vm_error
    fallbacks: list[str] = []
    interpret = engine.evaluate_interpreted

    def recording(agg: str, rules: Any, text: str) -> Any:
        fallbacks.append(orjson.loads(text)["object"]["metadata"]["name"])
        return interpret(agg, rules, text)

    monkeypatch.setattr(engine, "evaluate_interpreted", recording)
    objects = example_policies() + generated()
    found = 0
    for obj in objects:
        resource = Resource(obj)
        inp = evaluator.build_input(resource)
        vm = engine.evaluate(resource.kind, inp)
        rules = engine.rules_for(resource.kind)
        kind = resource.kind if resource.kind in engine.kinds() else "*"
        reference = interpret(kind, rules, orjson.dumps(inp).decode())
        key = lambda v: (v.rule.id, v.msg, tuple(v.path))  # noqa: E731
        assert sorted(map(key, vm)) == sorted(map(key, reference)), obj["metadata"]
        found += len(vm)
    assert fallbacks == [], f"the VM answered <undefined> for {fallbacks}"
    assert len(objects) >= 30 and found > 20
