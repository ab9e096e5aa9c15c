"""input.facts.egress and the STK-NET rules through the whole evaluator, in partial and complete views."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from stockade.policies.config import ConfigError, parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.model import Resource

WORKLOAD: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "crawler", "namespace": "ml"},
    "spec": {
        "template": {"metadata": {"labels": {"app": "crawler"}}, "spec": {"containers": [{"name": "c"}]}}
    },
}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}


def netpol(name: str, spec: dict[str, Any], namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


DENY_ALL = netpol("deny", {"podSelector": {}, "policyTypes": ["Egress"]})
OTHER_PODS = netpol("other", {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Egress"]})


def egress_facts(*objects: dict[str, Any], complete: bool = False) -> dict[str, Any]:
    facts = facts_for(WORKLOAD, inventory_of(objects, complete=complete))
    return dict(facts["egress"])


@cache
def evaluator() -> Evaluator:
    return Evaluator.default(
        parse_config("egress:\n  allow:\n    - {namespaces: [ml], cidrs: [10.240.0.0/16]}\n")
    )


def net_findings(obj: dict[str, Any], *others: dict[str, Any], complete: bool = False) -> set[str]:
    source = InventoryFacts(inventory_of([obj, *others], complete=complete))
    res = Resource(obj)
    found = evaluator().evaluate(res, namespace=source.namespace(res.namespace), facts=source.facts(obj))
    return {f.rule.id for f in found if f.rule.id.startswith("STK-NET")}


def test_partial_scan_without_the_namespace_or_its_policies_is_unknown() -> None:
    assert egress_facts()["isolated"] is None
    assert egress_facts(netpol("x", {"podSelector": {}}, namespace="elsewhere"))["isolated"] is None
    assert net_findings(WORKLOAD) == set()


def test_the_namespace_object_or_one_of_its_policies_makes_the_scan_authoritative() -> None:
    assert egress_facts(NAMESPACE)["isolated"] is False
    assert egress_facts(OTHER_PODS)["isolated"] is False
    assert net_findings(WORKLOAD, NAMESPACE) == {"STK-NET-001"}
    assert net_findings(WORKLOAD, OTHER_PODS) == {"STK-NET-001"}


def test_a_complete_inventory_knows_there_is_no_policy() -> None:
    facts = egress_facts(complete=True)
    assert facts["isolated"] is False and facts["namespaceDefaultDeny"] is False
    assert facts["cidrs"] == ["0.0.0.0/0", "::/0"]


def test_default_deny_isolates_and_reaches_nothing() -> None:
    facts = egress_facts(DENY_ALL)
    assert facts["isolated"] is True and facts["namespaceDefaultDeny"] is True
    assert facts["policies"] == ["ml/deny"] and facts["cidrs"] == [] and not facts["anyDestination"]
    assert net_findings(WORKLOAD, DENY_ALL) == set()


def test_reachable_cidrs_subtract_except_and_flag_metadata() -> None:
    internet = netpol(
        "internet",
        {
            "podSelector": {"matchLabels": {"app": "crawler"}},
            "policyTypes": ["Egress"],
            "egress": [
                {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "169.254.0.0/16"]}}]}
            ],
        },
    )
    facts = egress_facts(DENY_ALL, internet)
    assert "10.0.0.0/8" not in facts["cidrs"] and "11.0.0.0/8" in facts["cidrs"]
    assert not any(c.startswith("169.254.") for c in facts["cidrs"])
    # 168.63.129.16 is still reachable: the workload is reported (and the policy, by STK-NET-003/006).
    assert net_findings(WORKLOAD, DENY_ALL, internet) == {"STK-NET-006"}
    assert net_findings(internet) == {"STK-NET-003", "STK-NET-006"}


def test_empty_to_reaches_everything() -> None:
    anywhere = netpol(
        "any", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"port": 443}]}]}
    )
    facts = egress_facts(anywhere)
    assert facts["anyDestination"] is True and facts["cidrs"] == ["0.0.0.0/0", "::/0"]
    assert net_findings(anywhere) == {"STK-NET-002"}


def test_allowlisted_policy_is_clean() -> None:
    storage = netpol(
        "storage",
        {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [
                {"to": [{"ipBlock": {"cidr": "10.240.8.0/24"}}], "ports": [{"port": 443}]},
                {
                    "to": [
                        {
                            "namespaceSelector": {
                                "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                            },
                            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                        }
                    ],
                    "ports": [{"protocol": "UDP", "port": 53}],
                },
            ],
        },
    )
    assert net_findings(storage) == set()
    assert net_findings(WORKLOAD, storage) == set()


def test_config_defaults_are_safe() -> None:
    cfg = parse_config("")
    assert cfg.egress.allow == () and cfg.egress.cluster_dns.namespace == "kube-system"
    assert set(cfg.egress.metadata_addresses) == {"169.254.169.254", "168.63.129.16"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "egress:\n  allow:\n    - cidrs: [10.0.0.1/8]\n",
            r"stockade\.yaml:3: egress\.allow\.0\.cidrs: .*host bits",
        ),
        (
            "egress:\n  metadata_addresses: [169.254.169.254/32]\n",
            r"egress\.metadata_addresses: .*not an IP address",
        ),
    ],
)
def test_config_addresses_are_validated(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(text)


def test_calico_network_policy_is_not_read_as_a_kubernetes_one() -> None:
    calico = {
        "apiVersion": "projectcalico.org/v3",
        "kind": "NetworkPolicy",
        "metadata": {"name": "calico", "namespace": "ml"},
        "spec": {
            "selector": "all()",
            "types": ["Egress"],
            "egress": [{"action": "Allow", "destination": {}}],
        },
    }
    # Isolation is computed from Kubernetes NetworkPolicies only: the Calico one neither isolates nor
    # makes the namespace's Kubernetes policies known; its own rules are checked (any destination).
    assert egress_facts(calico)["isolated"] is None
    assert net_findings(calico) == {"STK-NET-002"}
    assert net_findings(WORKLOAD, calico) == set()


def test_an_invalid_cidr_is_reported_not_an_evaluation_error() -> None:
    bad = netpol(
        "bad",
        {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [{"to": [{"ipBlock": {"cidr": "not-a-cidr", "except": ["x"]}}]}],
        },
    )
    assert net_findings(bad) == {"STK-NET-003"}
