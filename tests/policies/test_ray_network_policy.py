"""A Ray cluster's `spec.networkPolicy`: the NetworkPolicies KubeRay creates for its pods
(ray-operator/controllers/ray/networkpolicy_controller.go, `stockade.policies.kinds.ray`) decide its
egress. KubeRay's own sample `ray-cluster.network-policy-deny-all.yaml` was "no NetworkPolicy selects
these pods for egress" (the review of the whole kuberay repository). Real parts: the scan pipeline
with the bundled library."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.kinds.ray import GENERATED, operator_network_policy

DATA = Path(__file__).parent / "data" / "ray_network_policy.yaml"


def _net_findings() -> dict[tuple[str, str, str | None], str]:
    out = CliRunner().invoke(app, ["scan", str(DATA), "-f", "json"])
    findings = orjson.loads(out.stdout)["findings"]
    return {
        (f["resource"]["name"], f["rule"]["id"], f["location"].get("template")): f["message"]
        for f in findings
        if f["rule"]["id"].startswith("STK-NET")
    }


def test_the_policies_kuberay_creates_isolate_the_pods_and_their_rules_are_judged() -> None:
    found = _net_findings()
    assert ("isolated", "STK-NET-001", "headGroupSpec") not in found
    assert ("isolated", "STK-NET-001", "workerGroupSpecs[gpu]") not in found
    assert ("open", "STK-NET-001", "headGroupSpec") in found  # no networkPolicy: nothing created
    # the head's own egress rule opens port 80 everywhere, the metadata endpoint included; the gpu
    # group's entry (which replaces `worker`) allows DNS only
    assert "168.63.129.16 on TCP 80" in found[("isolated", "STK-NET-006", "headGroupSpec")]
    assert ("isolated", "STK-NET-006", "workerGroupSpecs[gpu]") not in found


def test_the_created_policy_is_kuberays() -> None:
    head = {"path": ["spec", "headGroupSpec", "template"]}
    worker = {"path": ["spec", "rayClusterSpec", "workerGroupSpecs", 0, "template"]}
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "namespace": "ml"}}
    assert operator_network_policy({**cluster, "spec": {}}, head) is None
    assert (
        operator_network_policy({**cluster, "spec": {"networkPolicy": {"mode": "DenyAllIngress"}}}, head)
        is None
    )
    policy = operator_network_policy({**cluster, "spec": {"networkPolicy": {}}}, head)  # DenyAll by default
    assert policy is not None and policy["metadata"]["name"] == "c-head"
    assert policy["spec"]["podSelector"] == {
        "matchLabels": {"ray.io/cluster": "c", "ray.io/node-type": "head"}
    }
    assert policy["spec"]["egress"] == [{"to": [{"podSelector": {"matchLabels": {"ray.io/cluster": "c"}}}]}]
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "j"},
        "spec": {
            "rayClusterSpec": {
                "networkPolicy": {"mode": "DenyAllEgress", "worker": {"egressRules": [{"to": []}]}},
                "workerGroupSpecs": [{"groupName": "cpu"}],
            }
        },
    }
    policy = operator_network_policy(job, worker)
    assert policy is not None and policy["metadata"]["name"] == f"{GENERATED}-workers-cpu"
    assert policy["spec"]["egress"][1] == {"to": []}
