"""input.facts.egress and the STK-NET rules through the whole evaluator, in partial and complete views."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from stockade.policies.config.settings import ConfigError, parse_config
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


CALICO_ALLOW_ANY = {
    "apiVersion": "projectcalico.org/v3",
    "kind": "NetworkPolicy",
    "metadata": {"name": "calico", "namespace": "ml"},
    "spec": {
        "selector": "app == 'crawler'",
        "types": ["Egress"],
        "egress": [{"action": "Allow", "destination": {}}],
    },
}


def test_calico_network_policy_isolates_and_is_judged_on_its_own() -> None:
    """Isolation is decided as `egress reach` decides it: a Calico policy of the default tier with
    Egress isolates the pods it selects (anything it leaves undecided is denied), and makes the
    namespace's policies known. Its own rules are checked on the policy object (any destination)."""
    facts = egress_facts(CALICO_ALLOW_ANY)
    assert facts["isolated"] is True and facts["policies"] == ["ml/calico"]
    # cidrs describe Kubernetes NetworkPolicies only; the Calico rules check Calico's own destinations
    assert facts["cidrs"] == [] and facts["anyDestination"] is False
    assert net_findings(CALICO_ALLOW_ANY) == {"STK-NET-002"}
    assert net_findings(WORKLOAD, CALICO_ALLOW_ANY) == set()
    other = {**CALICO_ALLOW_ANY, "spec": {**CALICO_ALLOW_ANY["spec"], "selector": "app == 'db'"}}
    assert egress_facts(other)["isolated"] is False  # the namespace is known, the crawler unselected
    assert net_findings(WORKLOAD, other) == {"STK-NET-001"}
    ingress_only = {**CALICO_ALLOW_ANY, "spec": {"selector": "all()", "types": ["Ingress"], "ingress": []}}
    assert egress_facts(ingress_only)["isolated"] is False


def test_calico_and_kubernetes_policies_of_one_name_do_not_collide() -> None:
    """Both kinds are called NetworkPolicy; the inventory keeps them apart by API group."""
    same_name = netpol("calico", {"podSelector": {"matchLabels": {"app": "db"}}, "policyTypes": ["Egress"]})
    for objects in ((same_name, CALICO_ALLOW_ANY), (CALICO_ALLOW_ANY, same_name)):
        assert egress_facts(*objects)["policies"] == ["ml/calico"]
        assert egress_facts(*objects)["isolated"] is True


def test_global_network_policy_isolates_by_namespace_selector() -> None:
    gnp = {
        "apiVersion": "projectcalico.org/v3",
        "kind": "GlobalNetworkPolicy",
        "metadata": {"name": "default-deny"},
        "spec": {"namespaceSelector": "team == 'ml'", "selector": "all()", "types": ["Egress"]},
    }
    labelled = {**NAMESPACE, "metadata": {"name": "ml", "labels": {"team": "ml"}}}
    assert egress_facts(gnp, labelled)["isolated"] is True
    assert egress_facts(gnp, labelled)["policies"] == ["default-deny"]
    assert egress_facts(gnp, NAMESPACE)["isolated"] is False
    # a global policy alone does not make a partial scan authoritative for the namespace
    assert egress_facts(gnp)["isolated"] is None


def cilium_policy(kind: str, spec: dict[str, Any], namespace: str | None = "ml") -> dict[str, Any]:
    md: dict[str, Any] = {"name": "cnp"}
    if namespace:
        md["namespace"] = namespace
    return {"apiVersion": "cilium.io/v2", "kind": kind, "metadata": md, "spec": spec}


def test_cilium_policies_isolate_unless_default_deny_is_off() -> None:
    egress = [{"toEndpoints": [{"matchLabels": {"app": "db"}}]}]
    cnp = cilium_policy(
        "CiliumNetworkPolicy", {"endpointSelector": {"matchLabels": {"app": "crawler"}}, "egress": egress}
    )
    assert egress_facts(cnp)["isolated"] is True and egress_facts(cnp)["policies"] == ["ml/cnp"]
    assert net_findings(WORKLOAD, cnp) == set()
    # enableDefaultDeny.egress: false makes the policy additive: it isolates nothing
    additive = cilium_policy(
        "CiliumNetworkPolicy",
        {"endpointSelector": {}, "egress": egress, "enableDefaultDeny": {"egress": False}},
    )
    assert egress_facts(additive)["isolated"] is False
    assert net_findings(WORKLOAD, additive, complete=True) == {"STK-NET-001"}
    # clusterwide, selecting by the namespace's name label
    ccnp = cilium_policy(
        "CiliumClusterwideNetworkPolicy",
        {"endpointSelector": {"matchLabels": {"k8s:io.kubernetes.pod.namespace": "ml"}}, "egress": egress},
        namespace=None,
    )
    assert egress_facts(ccnp, complete=True)["isolated"] is True
    other_ns = cilium_policy(
        "CiliumClusterwideNetworkPolicy",
        {"endpointSelector": {"matchLabels": {"k8s:io.kubernetes.pod.namespace": "web"}}, "egress": egress},
        namespace=None,
    )
    assert egress_facts(other_ns, complete=True)["isolated"] is False


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


def test_the_explain_text_of_stk_net_001_matches_what_isolates() -> None:
    """Issue 22: `policy explain STK-NET-001` said only Kubernetes NetworkPolicies count, while
    Cilium and Calico policies isolate too (policies/facts/egress.py)."""
    from stockade.policies.engines.library import load_library

    text = load_library().rules["STK-NET-001"].description
    assert "Only Kubernetes NetworkPolicies" not in text
    assert "Cilium" in text and "Calico" in text and "AdminNetworkPolicies do not isolate" in text
