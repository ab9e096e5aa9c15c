"""Kubernetes NetworkPolicy semantics of the reachability engine, one small fixture per point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stockade.policies.facts.netpol import sets
from stockade.policies.facts.netpol.reach import PodsDiffer, Reachability


def ns(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def deploy(
    namespace: str, name: str, labels: dict[str, str], ports: list[dict[str, Any]] | None = None
) -> dict:
    container: dict[str, Any] = {"name": "c", "image": "x"}
    if ports:
        container["ports"] = ports
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}}},
    }


def netpol(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


A = deploy("a", "client", {"app": "client"})
B = deploy("b", "server", {"app": "server"}, [{"name": "http", "containerPort": 8080}])
B2 = deploy("b", "other", {"app": "other"}, [{"name": "http", "containerPort": 9090, "protocol": "UDP"}])
NAMESPACES = [ns("a", team="x"), ns("b", team="y")]
DENY_EGRESS_A = netpol("a", "deny", {"podSelector": {}, "policyTypes": ["Egress"]})
CLIENT = "a/client[Deployment]"
SERVER = "b/server[Deployment]"
OTHER = "b/other[Deployment]"


def lines(*objects: dict[str, Any]) -> set[str]:
    return set(Reachability([*NAMESPACES, A, B, B2, *objects]).connlist())


def from_client(*objects: dict[str, Any]) -> dict[str, str]:
    out = {}
    for line in lines(*objects):
        src, _, rest = line.partition(" => ")
        dst, _, conn = rest.partition(" : ")
        if src == CLIENT:
            out[dst] = conn
    return out


def egress(rules: list[dict[str, Any]], types: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": {"app": "client"}}, "egress": rules}
    if types is not None:
        spec["policyTypes"] = types
    return netpol("a", "allow", spec)


def test_no_policy_allows_everything_including_outside() -> None:
    assert from_client() == {
        SERVER: "All Connections",
        OTHER: "All Connections",
        "0.0.0.0-255.255.255.255[External]": "All Connections",
    }


def test_egress_isolation_with_no_rules_denies_everything() -> None:
    assert from_client(DENY_EGRESS_A) == {}


def test_policy_types_omitted_means_egress_only_with_egress_rules() -> None:
    ingress_only = netpol("a", "ing", {"podSelector": {}, "ingress": [{}]})
    assert CLIENT in {line.split(" => ")[0] for line in lines(ingress_only)}
    assert from_client(egress([{"to": [{"namespaceSelector": {}}], "ports": [{"port": 80}]}])) == {
        SERVER: "TCP 80",
        OTHER: "TCP 80",
    }


def test_rules_of_all_selecting_policies_are_united() -> None:
    one = egress([{"to": [{"namespaceSelector": {"matchLabels": {"team": "y"}}}], "ports": [{"port": 80}]}])
    two = netpol(
        "a", "two", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"port": 443}]}]}
    )
    got = from_client(one, two)
    assert got[SERVER] == "TCP 80,443"
    assert got["0.0.0.0-255.255.255.255[External]"] == "TCP 443"


def test_empty_to_is_any_destination_and_empty_ports_any_port() -> None:
    assert from_client(egress([{}], ["Egress"]))[SERVER] == "All Connections"


def test_pod_and_namespace_selector_in_one_peer_are_anded_separate_peers_ored() -> None:
    anded = egress(
        [
            {
                "to": [
                    {
                        "namespaceSelector": {"matchLabels": {"team": "y"}},
                        "podSelector": {"matchLabels": {"app": "server"}},
                    }
                ]
            }
        ]
    )
    assert set(from_client(anded)) == {SERVER}
    ored = egress(
        [
            {
                "to": [
                    {"namespaceSelector": {"matchLabels": {"team": "y"}}},
                    {"podSelector": {"matchLabels": {"app": "server"}}},
                ]
            }
        ]
    )
    assert set(from_client(ored)) == {SERVER, OTHER}
    # podSelector alone means the policy's own namespace: the server is in another one.
    same_ns = egress([{"to": [{"podSelector": {"matchLabels": {"app": "server"}}}]}])
    assert from_client(same_ns) == {}


def test_match_expressions() -> None:
    expr = {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["server"]}]}
    assert set(from_client(egress([{"to": [{"namespaceSelector": {}, "podSelector": expr}]}]))) == {OTHER}


def test_ip_block_except_narrows_and_splits_the_address_space() -> None:
    got = from_client(
        egress(
            [
                {
                    "to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                    "ports": [{"port": 443}],
                }
            ]
        )
    )
    assert got == {
        "10.0.0.0-10.0.255.255[External]": "TCP 443",
        "10.2.0.0-10.255.255.255[External]": "TCP 443",
    }


def test_end_port_ranges_and_protocols() -> None:
    rule = {
        "to": [{"namespaceSelector": {}}],
        "ports": [{"port": 40000, "endPort": 40999}, {"protocol": "UDP", "port": 53}, {"protocol": "SCTP"}],
    }
    assert from_client(egress([rule]))[SERVER] == "SCTP 1-65535,TCP 40000-40999,UDP 53"


def test_named_port_resolves_on_the_destination_pod_and_protocol() -> None:
    got = from_client(egress([{"to": [{"namespaceSelector": {}}], "ports": [{"port": "http"}]}]))
    # server names http on TCP 8080; other names http on UDP, which a TCP named port does not match.
    assert got == {SERVER: "TCP 8080"}


def test_allowed_is_egress_intersected_with_ingress() -> None:
    out = egress([{"to": [{"namespaceSelector": {}}], "ports": [{"port": 80}, {"port": 8080}]}])
    into = netpol(
        "b",
        "in",
        {
            "podSelector": {"matchLabels": {"app": "server"}},
            "ingress": [
                {"from": [{"namespaceSelector": {"matchLabels": {"team": "x"}}}], "ports": [{"port": "http"}]}
            ],
        },
    )
    assert from_client(out, into) == {SERVER: "TCP 8080", OTHER: "TCP 80,8080"}
    assert not any(line.startswith("0.0.0.0") and SERVER in line for line in lines(into))


def test_connection_sets() -> None:
    tcp = sets.conn_of("TCP", 80, 90)
    assert sets.union(tcp, sets.conn_of("TCP", 91, 100)) == (("TCP", ((80, 100),)),)
    assert sets.intersect(tcp, sets.conn_of("TCP", 85, 200)) == (("TCP", ((85, 90),)),)
    assert sets.intersect(tcp, sets.conn_of("UDP")) == sets.NONE
    assert sets.conn_str(sets.ALL) == "All Connections"


def test_pods_stand_for_their_controller() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "w-1",
            "namespace": "a",
            "labels": {"app": "w"},
            "ownerReferences": [{"controller": True, "kind": "ReplicaSet", "name": "w-5d"}],
        },
        "spec": {"containers": [{"name": "c"}]},
    }
    assert [
        w.key for w in Reachability([pod, dict(pod, metadata={**pod["metadata"], "name": "w-2"})]).workloads
    ] == ["a/w-5d[ReplicaSet]"]


def rs_pod(name: str, labels: dict[str, str], port: int | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c"}
    if port is not None:
        container["ports"] = [{"name": "http", "containerPort": port}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "b",
            "labels": labels,
            "ownerReferences": [{"controller": True, "kind": "ReplicaSet", "name": "web-5d"}],
        },
        "spec": {"containers": [container]},
    }


WEB = "b/web-5d[ReplicaSet]"
STABLE = rs_pod("web-5d-a", {"app": "web"})
CANARY = rs_pod("web-5d-b", {"app": "web", "track": "canary"})


def test_pods_of_one_owner_with_a_label_no_policy_reads_are_one_peer_in_any_order() -> None:
    """A label gap that no selector splits changes nothing: one peer, whichever pod comes first
    (netpol-analyzer accepts such input, its corpus rows with a labels gap)."""
    policy = netpol("b", "web", {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"]})
    for order in ([STABLE, CANARY], [CANARY, STABLE]):
        analysis = Reachability([*NAMESPACES, A, *order, policy])
        assert [w.key for w in analysis.workloads if w.namespace == "b"] == [WEB]
        assert not [line for line in analysis.connlist() if f"=> {WEB}" in line]
        assert f"{WEB} => {CLIENT} : All Connections" in analysis.connlist()


def test_pods_of_one_owner_that_a_policy_tells_apart_are_refused_naming_both() -> None:
    """A policy selects the canary pod only: the answer for the owner would depend on which pod was
    read first (it did), so the analysis refuses, as netpol-analyzer does, naming both pods."""
    policy = netpol(
        "b", "canary", {"podSelector": {"matchLabels": {"track": "canary"}}, "policyTypes": ["Egress"]}
    )
    for order in ([STABLE, CANARY], [CANARY, STABLE]):
        with pytest.raises(PodsDiffer) as err:
            Reachability([*NAMESPACES, A, *order, policy])
        text = str(err.value)
        assert WEB in text and "b/web-5d-a" in text and "b/web-5d-b" in text and "track=canary" in text
        assert f"=> {CLIENT}" in text  # the connection that differs


def test_a_peer_selector_that_splits_pods_of_one_owner_is_refused_too() -> None:
    """Ingress to the client from the canary only (a peer podSelector, in another namespace)."""
    policy = netpol(
        "a",
        "from-canary",
        {
            "podSelector": {},
            "ingress": [
                {
                    "from": [
                        {
                            "namespaceSelector": {"matchLabels": {"team": "y"}},
                            "podSelector": {"matchLabels": {"track": "canary"}},
                        }
                    ]
                }
            ],
        },
    )
    with pytest.raises(PodsDiffer):
        Reachability([*NAMESPACES, A, STABLE, CANARY, policy])


def test_named_ports_that_differ_between_pods_of_one_owner_are_told_apart() -> None:
    """A named port resolves on each pod: 8080 on one, 9090 on the other."""
    policy = netpol(
        "b",
        "web",
        {"podSelector": {}, "ingress": [{"ports": [{"port": "http"}]}], "policyTypes": ["Ingress"]},
    )
    pods = [rs_pod("web-5d-a", {"app": "web"}, 8080), rs_pod("web-5d-b", {"app": "web"}, 9090)]
    with pytest.raises(PodsDiffer, match="ports http=TCP/8080"):
        Reachability([*NAMESPACES, A, *pods, policy])
    # the same port on both: one peer
    same = [rs_pod("web-5d-a", {"app": "web"}, 8080), rs_pod("web-5d-b", {"app": "web", "x": "1"}, 8080)]
    assert f"{CLIENT} => {WEB} : TCP 8080" in Reachability([*NAMESPACES, A, *same, policy]).connlist()


def test_the_cli_refuses_in_one_line_with_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from stockade.cli.main import app

    policy = netpol(
        "b", "canary", {"podSelector": {"matchLabels": {"track": "canary"}}, "policyTypes": ["Egress"]}
    )
    path = tmp_path / "pods.yaml"
    path.write_text("\n---\n".join(json.dumps(o) for o in [*NAMESPACES, A, STABLE, CANARY, policy]))
    result = CliRunner().invoke(app, ["egress", "reach", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "tell them apart" in result.output


def anp(
    name: str, priority: int, egress: list[dict[str, Any]], kind: str = "AdminNetworkPolicy"
) -> dict[str, Any]:
    spec: dict[str, Any] = {"subject": {"namespaces": {"matchLabels": {"team": "x"}}}, "egress": egress}
    if kind == "AdminNetworkPolicy":
        spec["priority"] = priority
    return {
        "apiVersion": "policy.networking.k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


TO_B = [{"namespaces": {"matchLabels": {"team": "y"}}}]


def test_admin_policies_lowest_priority_first_and_first_rule_wins() -> None:
    deny = anp("deny", 20, [{"name": "d", "action": "Deny", "to": TO_B}])
    allow = anp(
        "allow",
        10,
        [
            {
                "name": "a",
                "action": "Allow",
                "to": TO_B,
                "ports": [{"portNumber": {"protocol": "TCP", "port": 80}}],
            }
        ],
    )
    # 80 allowed by the higher-precedence policy (over the NetworkPolicy's deny), the rest to b denied.
    got = from_client(DENY_EGRESS_A, deny, allow)
    assert got == {SERVER: "TCP 80", OTHER: "TCP 80"}


def test_pass_hands_over_to_network_policies_then_baseline() -> None:
    passing = anp("pass", 5, [{"name": "p", "action": "Pass", "to": TO_B}])
    baseline_deny = anp(
        "default", 0, [{"name": "d", "action": "Deny", "to": TO_B}], kind="BaselineAdminNetworkPolicy"
    )
    # Not isolated by a NetworkPolicy: the baseline decides and denies.
    assert set(from_client(passing, baseline_deny)) == {"0.0.0.0-255.255.255.255[External]"}
    # Isolated by a NetworkPolicy allowing 443: the NetworkPolicy decides, the baseline is not consulted.
    np_allow = egress([{"to": [{"namespaceSelector": {}}], "ports": [{"port": 443}]}], ["Egress"])
    assert from_client(passing, baseline_deny, np_allow) == {SERVER: "TCP 443", OTHER: "TCP 443"}


def test_admin_networks_peer_and_named_port() -> None:
    deny_net = anp("net", 1, [{"name": "n", "action": "Deny", "to": [{"networks": ["10.0.0.0/8"]}]}])
    got = from_client(deny_net)
    assert (
        "10.0.0.0-10.255.255.255[External]" not in got
        and got["11.0.0.0-255.255.255.255[External]"] == "All Connections"
    )
    named = anp("named", 1, [{"name": "a", "action": "Allow", "to": TO_B, "ports": [{"namedPort": "http"}]}])
    assert from_client(DENY_EGRESS_A, named) == {SERVER: "TCP 8080", OTHER: "UDP 9090"}


def cnp(namespace: str | None, spec: dict[str, Any]) -> dict[str, Any]:
    kind = "CiliumNetworkPolicy" if namespace else "CiliumClusterwideNetworkPolicy"
    md = {"name": "c", **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "cilium.io/v2", "kind": kind, "metadata": md, "spec": spec}


CLIENT_SEL = {"matchLabels": {"app": "client"}}
TCP_8080 = [{"ports": [{"port": "8080", "protocol": "TCP"}]}]


def test_cilium_to_endpoints_isolates_and_stays_in_the_namespace_unless_named() -> None:
    same_ns = cnp(
        "a",
        {"endpointSelector": CLIENT_SEL, "egress": [{"toEndpoints": [{"matchLabels": {"app": "server"}}]}]},
    )
    assert from_client(same_ns) == {}  # the server is in namespace b
    named = {"matchLabels": {"app": "server", "k8s:io.kubernetes.pod.namespace": "b"}}
    got = from_client(
        cnp("a", {"endpointSelector": CLIENT_SEL, "egress": [{"toEndpoints": [named], "toPorts": TCP_8080}]})
    )
    assert got == {SERVER: "TCP 8080"}


def test_cilium_entities_world_and_cluster() -> None:
    world = cnp("a", {"endpointSelector": CLIENT_SEL, "egress": [{"toEntities": ["world"]}]})
    assert set(from_client(world)) == {"0.0.0.0-255.255.255.255[External]"}
    cluster = cnp(
        "a", {"endpointSelector": CLIENT_SEL, "egress": [{"toEntities": ["cluster"], "toPorts": TCP_8080}]}
    )
    assert from_client(cluster) == {SERVER: "TCP 8080", OTHER: "TCP 8080"}


def test_cilium_egress_deny_wins_over_a_kubernetes_allow() -> None:
    allow_all = egress([{}], ["Egress"])
    deny_imds = cnp(
        None,
        {
            "endpointSelector": {},
            "egressDeny": [{"toCIDR": ["169.254.169.254/32"]}],
            "enableDefaultDeny": {"egress": False},
        },
    )
    got = from_client(allow_all, deny_imds)
    assert "169.254.169.254-169.254.169.254[External]" not in got
    assert got["0.0.0.0-169.254.169.253[External]"] == "All Connections" and got[SERVER] == "All Connections"
    # Deny rules alone put the endpoint in default deny unless enableDefaultDeny.egress is false.
    only_deny = cnp("a", {"endpointSelector": {}, "egressDeny": [{"toCIDR": ["169.254.169.254/32"]}]})
    assert from_client(only_deny) == {}


def test_cilium_fqdns_are_reported_as_names() -> None:
    fqdn = cnp(
        "a",
        {
            "endpointSelector": CLIENT_SEL,
            "egress": [{"toFQDNs": [{"matchName": "pypi.org"}], "toPorts": [{"ports": [{"port": "443"}]}]}],
        },
    )
    reach = Reachability([*NAMESPACES, A, B, B2, fqdn])
    (client,) = reach.find("a", "client")
    report = reach.report(client)
    assert report["egressIsolated"] is True and report["egressPolicies"] == ["a/c"]
    assert [(d["type"], d["peer"], d["conn"]) for d in report["destinations"]] == [
        ("fqdn", "pypi.org", "SCTP 443,TCP 443,UDP 443")
    ]


def calico(kind: str, name: str, spec: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    md = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "projectcalico.org/v3", "kind": kind, "metadata": md, "spec": spec}


def test_calico_orders_policies_and_rules_first_match_wins() -> None:
    deny_imds = calico(
        "GlobalNetworkPolicy",
        "deny-imds",
        {
            "order": 10,
            "selector": "all()",
            "types": ["Egress"],
            "egress": [{"action": "Deny", "destination": {"nets": ["169.254.169.254/32"]}}],
        },
    )
    allow_all = calico(
        "GlobalNetworkPolicy",
        "allow-all",
        {"order": 20, "selector": "all()", "types": ["Egress"], "egress": [{"action": "Allow"}]},
    )
    got = from_client(deny_imds, allow_all)
    assert "169.254.169.254-169.254.169.254[External]" not in got
    assert (
        got["169.254.169.255-255.255.255.255[External]"] == "All Connections"
        and got[SERVER] == "All Connections"
    )
    # The other order: the allow decides first and the deny never applies.
    swapped = calico(
        "GlobalNetworkPolicy",
        "allow-all",
        {"order": 5, "selector": "all()", "types": ["Egress"], "egress": [{"action": "Allow"}]},
    )
    assert from_client(deny_imds, swapped)["169.254.169.254-169.254.169.254[External]"] == "All Connections"


def test_calico_rules_selectors_ports_and_end_of_tier_deny() -> None:
    pol = calico(
        "NetworkPolicy",
        "client",
        {
            "selector": "app == 'client'",
            "types": ["Egress"],
            "egress": [
                {
                    "action": "Allow",
                    "protocol": "TCP",
                    "destination": {
                        "namespaceSelector": "team == 'y'",
                        "selector": "app in {'server'}",
                        "ports": [80, "8000:8099"],
                    },
                },
                {
                    "action": "Allow",
                    "protocol": "UDP",
                    "destination": {"selector": "app == 'server'"},
                },  # own namespace only
            ],
        },
        namespace="a",
    )
    assert from_client(pol) == {SERVER: "TCP 80,8000-8099"}


def test_calico_pass_skips_kubernetes_policies_and_deny_beats_them() -> None:
    passing = calico(
        "GlobalNetworkPolicy",
        "pass",
        {
            "order": 100,
            "selector": "app == 'client'",
            "egress": [{"action": "Pass", "destination": {"nets": ["10.0.0.0/8"]}}],
        },
    )
    got = from_client(DENY_EGRESS_A, passing)  # the Kubernetes default deny (order 1000) never sees 10/8
    assert got == {"10.0.0.0-10.255.255.255[External]": "All Connections"}
    deny_server = calico(
        "GlobalNetworkPolicy",
        "deny",
        {
            "order": 100,
            "selector": "all()",
            "types": ["Egress"],  # omitted, types would include Ingress: every pod's ingress denied
            "egress": [{"action": "Deny", "destination": {"selector": "app == 'server'"}}],
        },
    )
    assert set(from_client(egress([{}], ["Egress"]), deny_server)) == {
        OTHER,
        "0.0.0.0-255.255.255.255[External]",
    }


def tier(name: str, order: float | None = None, default_action: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if order is not None:
        spec["order"] = order
    if default_action is not None:
        spec["defaultAction"] = default_action
    return {"apiVersion": "projectcalico.org/v3", "kind": "Tier", "metadata": {"name": name}, "spec": spec}


IMDS = "169.254.169.254-169.254.169.254[External]"
# A platform team's tier: block the metadata address, pass everything else down to the default tier.
SECURITY_GUARD = calico(
    "GlobalNetworkPolicy",
    "security.imds",
    {
        "tier": "security",
        "order": 1,
        "selector": "all()",
        "types": ["Egress"],
        "egress": [
            {"action": "Deny", "destination": {"nets": ["169.254.169.254/32"]}},
            {"action": "Pass"},
        ],
    },
)


def test_calico_tiers_apply_in_order_and_pass_moves_on() -> None:
    """The security tier (order 100) runs before the default tier (1,000,000): its Deny holds even
    where the default tier's Kubernetes policy allows everything; what it passes reaches that policy."""
    allow_all = egress([{}], ["Egress"])
    got = from_client(tier("security", 100), SECURITY_GUARD, allow_all)
    assert IMDS not in got
    assert got[SERVER] == "All Connections" and got["169.254.169.255-255.255.255.255[External]"]
    # the default tier's own end-of-tier drop still applies to what the security tier passed
    assert from_client(tier("security", 100), SECURITY_GUARD, DENY_EGRESS_A) == {}


def test_calico_tier_end_drops_unless_its_default_action_is_pass() -> None:
    only_deny = calico(
        "GlobalNetworkPolicy",
        "security.imds",
        {
            "tier": "security",
            "selector": "all()",
            "types": ["Egress"],
            "egress": [{"action": "Deny", "destination": {"nets": ["169.254.169.254/32"]}}],
        },
    )
    assert from_client(tier("security", 100), only_deny) == {}  # undecided: dropped at the tier's end
    got = from_client(tier("security", 100, "Pass"), only_deny)
    assert IMDS not in got and got[SERVER] == "All Connections"  # passed to the profile, which allows


def test_calico_tier_without_order_comes_after_the_default_tier() -> None:
    """A tier without an order is "infinite": last, so the default tier's drop wins over its Allow;
    given an order before the default tier's, its Allow decides first."""
    late_allow = calico(
        "GlobalNetworkPolicy",
        "late.allow",
        {"tier": "late", "selector": "all()", "types": ["Egress"], "egress": [{"action": "Allow"}]},
    )
    assert from_client(DENY_EGRESS_A, late_allow) == {}
    assert from_client(DENY_EGRESS_A, late_allow, tier("late")) == {}
    early = from_client(DENY_EGRESS_A, late_allow, tier("late", 10))
    assert early[SERVER] == "All Connections" == early["0.0.0.0-255.255.255.255[External]"]
    # a Tier object for the default tier moves it (and the Kubernetes policies in it) too
    assert from_client(DENY_EGRESS_A, late_allow, tier("late", 10), tier("default", 5)) == {}


def test_calico_source_ports_and_destination_not_ports() -> None:
    """A Deny limited to a source port blocks no connection (a client picks another source port); an
    Allow with `destination.notPorts` allows every port but those (issue 25)."""
    deny_from_port = calico(
        "GlobalNetworkPolicy",
        "deny-src-1000",
        {
            "order": 10,
            "selector": "all()",
            "types": ["Egress"],
            "egress": [{"action": "Deny", "protocol": "TCP", "source": {"ports": [1000]}}],
        },
    )
    allow_all = calico(
        "GlobalNetworkPolicy",
        "allow-all",
        {"order": 20, "selector": "all()", "types": ["Egress"], "egress": [{"action": "Allow"}]},
    )
    assert from_client(deny_from_port, allow_all)[SERVER] == "All Connections"
    deny_tcp = calico(
        "GlobalNetworkPolicy",
        "deny-tcp",
        {
            "order": 10,
            "selector": "all()",
            "types": ["Egress"],
            "egress": [{"action": "Deny", "protocol": "TCP"}],
        },
    )
    assert "TCP" not in from_client(deny_tcp, allow_all)[SERVER]  # without the source port it does deny TCP
    not_ssh = calico(
        "GlobalNetworkPolicy",
        "not-ssh",
        {
            "order": 10,
            "selector": "all()",
            "types": ["Egress"],
            "egress": [{"action": "Allow", "protocol": "TCP", "destination": {"notPorts": [22]}}],
        },
    )
    assert from_client(not_ssh)[SERVER] == "TCP 1-21,23-65535"


def test_static_pods_owned_by_a_node_are_pods_of_their_own() -> None:
    """Mirror pods of kubeadm / bare-metal control planes are owned by their Node: each is one peer
    named like netpol-analyzer's `kube-system/etcd-node1[Pod]`, never one `node1[Node]` (issue 25)."""
    node = {"apiVersion": "v1", "kind": "Node", "name": "node1", "uid": "n1", "controller": True}

    def static(name: str, app: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "kube-system",
                "labels": {"component": app},
                "ownerReferences": [node],
            },
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }

    reach = Reachability([static("etcd-node1", "etcd"), static("kube-apiserver-node1", "kube-apiserver")])
    assert sorted(w.key for w in reach.workloads) == [
        "kube-system/etcd-node1[Pod]",
        "kube-system/kube-apiserver-node1[Pod]",
    ]


def vm(kind: str = "VirtualMachine", name: str = "db", **extra: Any) -> dict[str, Any]:
    """A KubeVirt object as kubevirt.io/api core/v1 spells it (VMI template under spec.template)."""
    vmi_spec = {
        "domain": {
            "devices": {
                "interfaces": [{"name": "default", "masquerade": {}, "ports": [{"name": "pg", "port": 5432}]}]
            }
        },
        "networks": [{"name": "default", "pod": {}}],
    }
    template = {"metadata": {"labels": {"kubevirt.io/domain": name}}, "spec": vmi_spec}
    if kind == "VirtualMachineInstance":
        return {
            "apiVersion": "kubevirt.io/v1",
            "kind": kind,
            "metadata": {"name": name, "namespace": "b", **template["metadata"], **extra},
            "spec": vmi_spec,
        }
    if kind == "VirtualMachinePool":
        spec: dict[str, Any] = {"virtualMachineTemplate": {"spec": {"template": template}}}
        api = "pool.kubevirt.io/v1alpha1"
    else:
        spec, api = {"template": template}, "kubevirt.io/v1"
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": "b", **extra},
        "spec": spec,
    }


def test_kubevirt_virtual_machines_are_peers_with_their_launcher_labels_and_named_ports() -> None:
    """A VirtualMachine runs in a virt-launcher pod that carries the VMI template's labels, plus
    `kubevirt.io: virt-launcher` and `vm.kubevirt.io/name`; its interfaces' ports are named ports."""
    to_db = netpol(
        "b",
        "db",
        {
            "podSelector": {"matchLabels": {"vm.kubevirt.io/name": "db"}},
            "ingress": [{"from": [{"namespaceSelector": {}}], "ports": [{"port": "pg"}]}],
        },
    )
    got = set(Reachability([*NAMESPACES, A, vm(), to_db]).connlist())
    assert f"{CLIENT} => b/db[VirtualMachine] : TCP 5432" in got
    only_launchers = netpol("b", "l", {"podSelector": {"matchLabels": {"kubevirt.io": "virt-launcher"}}})
    assert not [x for x in Reachability([*NAMESPACES, A, vm(), only_launchers]).connlist() if "=> b/db" in x]


def test_every_kubevirt_kind_that_runs_vms_is_one_peer_and_a_vmi_stands_for_its_vm() -> None:
    owned = vm(
        "VirtualMachineInstance",
        ownerReferences=[
            {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": "db", "controller": True}
        ],
    )
    keys = {w.key for w in Reachability([vm(), owned]).workloads}
    assert keys == {"b/db[VirtualMachine]"}
    for kind in ("VirtualMachineInstance", "VirtualMachineInstanceReplicaSet", "VirtualMachinePool"):
        assert [w.key for w in Reachability([vm(kind)]).workloads] == [f"b/db[{kind}]"]
    # the same kinds under another group are not KubeVirt's
    other = dict(vm(), apiVersion="example.com/v1")
    assert Reachability([other]).workloads == []


def test_live_mode_lets_a_launcher_pod_and_a_vmi_stand_for_their_vm() -> None:
    from stockade.cli.egress import CLUSTER_KINDS, _top_level

    assert {"VirtualMachine", "VirtualMachineInstance", "VirtualMachinePool"} <= set(CLUSTER_KINDS)
    launcher = {
        "kind": "Pod",
        "metadata": {
            "ownerReferences": [{"kind": "VirtualMachineInstance", "name": "db", "controller": True}]
        },
    }
    vmi = {
        "kind": "VirtualMachineInstance",
        "metadata": {"ownerReferences": [{"kind": "VirtualMachine", "controller": True}]},
    }
    assert not _top_level(launcher) and not _top_level(vmi) and _top_level(vm())
