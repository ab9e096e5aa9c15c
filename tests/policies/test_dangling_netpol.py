"""STK-NET-010: a NetworkPolicy that selects no pod, decided from the inventory's pod labels where the
inventory is complete (audit, synced webhook), never in a partial scan."""

from __future__ import annotations

from typing import Any

import pytest

from stockade.policies.config import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Operation, Resource

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "api", "namespace": "ml"},
    "spec": {"template": {"metadata": {"labels": {"app": "api", "tier": "web"}}, "spec": {"containers": []}}},
}


def _policy(selector: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"podSelector": selector, "policyTypes": ["Ingress"]},
    }


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(parse_config(""))


def _warned(
    evaluator: Evaluator, policy: dict[str, Any], objects: list[dict[str, Any]], complete: bool
) -> bool:
    facts = InventoryFacts(inventory_of([*objects, policy], complete=complete))
    found = evaluator.evaluate(Resource(policy), operation=Operation.AUDIT, facts=facts.facts(policy))
    return any(f.rule.id == "STK-NET-010" for f in found)


def test_a_typo_in_the_selector_is_reported(evaluator: Evaluator) -> None:
    assert _warned(evaluator, _policy({"matchLabels": {"app": "apii"}}), [DEPLOYMENT], complete=True)


@pytest.mark.parametrize(
    "selector",
    [
        {"matchLabels": {"app": "api"}},
        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "db"]}]},
        {},  # every pod of the namespace, present or future
    ],
)
def test_selecting_pods_is_not_reported(evaluator: Evaluator, selector: dict[str, Any]) -> None:
    assert not _warned(evaluator, _policy(selector), [DEPLOYMENT], complete=True)


def test_a_partial_scan_does_not_decide(evaluator: Evaluator) -> None:
    assert not _warned(evaluator, _policy({"matchLabels": {"app": "apii"}}), [DEPLOYMENT], complete=False)


def test_other_namespaces_pods_do_not_count_and_removal_is_seen(evaluator: Evaluator) -> None:
    other = {**DEPLOYMENT, "metadata": {"name": "api", "namespace": "prod"}}
    assert _warned(evaluator, _policy({"matchLabels": {"app": "api"}}), [other], complete=True)
    inventory = inventory_of([DEPLOYMENT], complete=True)
    assert inventory.pod_label_sets("ml") == [{"app": "api", "tier": "web"}]
    inventory.remove("Deployment", "ml", "api")
    assert inventory.pod_label_sets("ml") == []
