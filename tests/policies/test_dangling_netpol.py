"""STK-NET-010: a NetworkPolicy that selects no pod, decided from the inventory's pod labels where the
inventory is complete (audit, synced webhook), never in a partial scan."""

from __future__ import annotations

from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
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


def _cilium(spec: dict[str, Any], *, clusterwide: bool = False) -> dict[str, Any]:
    md: dict[str, Any] = {"name": "p"} if clusterwide else {"name": "p", "namespace": "ml"}
    kind = "CiliumClusterwideNetworkPolicy" if clusterwide else "CiliumNetworkPolicy"
    return {"apiVersion": "cilium.io/v2", "kind": kind, "metadata": md, **spec}


def _ep(labels: dict[str, str], *, clusterwide: bool = False) -> dict[str, Any]:
    """A Cilium policy with one rule set selecting endpoints by these labels."""
    return _cilium({"spec": {"endpointSelector": {"matchLabels": labels}}}, clusterwide=clusterwide)


def _calico(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "projectcalico.org/v3",
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"types": ["Egress"], "egress": [{"action": "Allow"}], **spec},
    }


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "ai"}}}
POD_NS = "k8s:io.kubernetes.pod.namespace"


def _finding(evaluator: Evaluator, policy: dict[str, Any]) -> Any:
    facts = InventoryFacts(inventory_of([DEPLOYMENT, NAMESPACE, policy], complete=True))
    found = evaluator.evaluate(Resource(policy), operation=Operation.AUDIT, facts=facts.facts(policy))
    return next((f for f in found if f.rule.id == "STK-NET-010"), None)


@pytest.mark.parametrize(
    ("policy", "dangling"),
    [
        (_ep({"app": "apii"}), True),
        (_ep({"k8s:app": "api"}), False),
        (_ep({"any:app": "api", "tier": "web"}), False),
        (_cilium({"spec": {"endpointSelector": {}}}), False),
        # every rule set of `specs` must select nothing
        (
            _cilium({"specs": [{"endpointSelector": {"matchLabels": {"app": s}}} for s in ("x", "api")]}),
            False,
        ),
        (_cilium({"specs": [{"endpointSelector": {"matchLabels": {"app": "x"}}}]}), True),
        # a namespaced policy selects only its namespace's pods, whatever namespace label it names
        (_ep({"app": "api", POD_NS: "prod"}), True),
        (_ep({"app": "api", POD_NS: "ml"}, clusterwide=True), False),
        (_ep({"app": "api", POD_NS: "prod"}, clusterwide=True), True),
        (_ep({"io.cilium.k8s.namespace.labels.team": "ai"}, clusterwide=True), False),
        # kubernetes.io/metadata.name: set by the API server on every namespace, object or not
        (_ep({"io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name": "ml"}, clusterwide=True), False),
        # not decidable from pods' labels: host policies, reserved and ServiceAccount identities
        (_cilium({"spec": {"nodeSelector": {"matchLabels": {"role": "gpu"}}}}, clusterwide=True), None),
        (_ep({"reserved:host": ""}, clusterwide=True), None),
        (_ep({"io.cilium.k8s.policy.serviceaccount": "x"}), None),
        (_calico({"selector": "app == 'apii'"}), True),
        (_calico({"selector": "app == 'api' && tier in {'web', 'db'}"}), False),
        (_calico({"selector": "pcns.team == 'ai' && has(app)"}), False),
        (_calico({"selector": "pcns.team == 'infra'"}), True),
        (_calico({"selector": "pcns.kubernetes.io/metadata.name == 'ml' && has(app)"}), False),
        (_calico({"selector": "all()"}), False),
        (_calico({}), False),
        (_calico({"selector": "app == 'api'", "serviceAccountSelector": "name == 'x'"}), None),
        (_calico({"selector": "projectcalico.org/orchestrator == 'k8s'"}), None),
    ],
)
def test_cilium_and_calico_policies(
    evaluator: Evaluator, policy: dict[str, Any], dangling: bool | None
) -> None:
    facts = InventoryFacts(inventory_of([DEPLOYMENT, NAMESPACE, policy], complete=True)).facts(policy)
    if dangling is None:
        assert "networkPolicy" not in facts
        return
    assert facts["networkPolicy"]["selectsPods"] is (not dangling)
    finding = _finding(evaluator, policy)
    assert (finding is not None) is dangling
    if finding is not None:
        assert finding.path and finding.path[-1] in ("endpointSelector", "selector")
        assert "selects no pod" in finding.message
