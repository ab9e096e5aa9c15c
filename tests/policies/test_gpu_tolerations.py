"""STK-GPU-003's toleration matching against Kubernetes' own (k8s.io/api/core/v1
Toleration.ToleratesTaint, as the rule's METADATA states it), field by field: every pod toleration
over a domain of keys, operators, values and effects (absent, null, empty and set), against
configured tolerations of each shape, through the compiled VM every gate runs. The rule decides a
toleration written as configured without the field-by-field matching (`written`); this holds both
paths to the same answer.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest
import yaml

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.model import Resource

ABSENT = object()
KEYS = [ABSENT, None, "", "nvidia.com/gpu", "other"]
OPERATORS = [ABSENT, None, "", "Exists", "Equal", "Bogus"]
VALUES = [ABSENT, None, "", "a", "b"]
EFFECTS = [ABSENT, None, "", "NoSchedule", "NoExecute"]

#: configured tolerations (gpu.tolerations: a key, operator Exists unless Equal): the default one,
#: Equal with a value, without an effect, both, an empty key
CONFIGURED = [
    {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Equal", "value": "a", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Equal", "value": "a"},
    {"key": "", "operator": "Exists", "effect": "NoSchedule"},
]


def _field(t: dict[str, Any], name: str) -> Any:
    value = t.get(name, "")
    return "" if value is None else value


def tolerates(t: dict[str, Any], want: dict[str, Any]) -> bool:
    """Kubernetes' ToleratesTaint, the configured toleration standing for the taint, with the rule's
    reading of what the configuration leaves open (no effect: any; operator Exists: any value)."""
    effect, key, op = _field(t, "effect"), _field(t, "key"), _field(t, "operator")
    effect_ok = effect == "" or effect == _field(want, "effect") or _field(want, "effect") == ""
    key_ok = (key == "" and op == "Exists") or (key != "" and key == _field(want, "key"))
    value_ok = op == "Exists" or (
        op in ("", "Equal")
        and (_field(want, "operator") == "Exists" or _field(t, "value") == _field(want, "value"))
    )
    return effect_ok and key_ok and value_ok


def _toleration(key: Any, operator: Any, value: Any, effect: Any) -> dict[str, Any]:
    fields = {"key": key, "operator": operator, "value": value, "effect": effect}
    return {k: v for k, v in fields.items() if v is not ABSENT}


@pytest.mark.parametrize("configured", CONFIGURED, ids=lambda w: ",".join(f"{k}={v}" for k, v in w.items()))
def test_every_pod_toleration_is_matched_as_kubernetes_matches_it(configured: dict[str, Any]) -> None:
    config = parse_config(yaml.safe_dump({"gpu": {"tolerations": [configured]}}))
    (want,) = config.rule_data()["gpu"]["tolerations"]  # as the rules read it: every field present
    evaluator = Evaluator.default(config)
    engine = evaluator.engine
    pods = [_toleration(*f) for f in itertools.product(KEYS, OPERATORS, VALUES, EFFECTS)]
    pods += [configured, want]  # exactly as configured
    checked = 0
    bad: list[Any] = []
    for t in pods:
        spec = {
            "tolerations": [t],
            "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        }
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": spec}
        resource = Resource(obj)
        inp = evaluator.build_input(resource, namespace=namespace_info(None, "ml"), facts={})
        found = {v.rule.id for v in engine.evaluate("Pod", orjson.loads(orjson.dumps(inp)))}
        if ("STK-GPU-003" not in found) is not tolerates(t, want):
            bad.append((t, "STK-GPU-003" not in found))
        checked += 1
    assert bad == [], (len(bad), bad[:6])
    assert checked == len(KEYS) * len(OPERATORS) * len(VALUES) * len(EFFECTS) + 2
