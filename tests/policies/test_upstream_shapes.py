"""Findings on objects in the real shape of upstream projects (issue 37): wrong facts and repeats.

The files in ``data/upstream_shapes`` follow the upstream objects field by field (KServe's
config/runtimes, KubeRay's ray-cluster.autoscaler.yaml sample, Kubeflow's profile controller as
kubeflow/manifests renders it, node agents' hostPath mounts, a NetworkPolicy to NodeLocal DNSCache).
Each test scans them through the real pipeline (``scanner.scan.scan``: decoding, the inventory, the
facts, the embedded engine) and counts the findings per rule; the counts before the fix are in the
docstrings.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.facts import serviceaccounts
from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS, check_name
from stockade.policies.model import Finding, Resource
from stockade.scanner.scan import ScanOptions, scan

DATA = Path(__file__).parent / "data" / "upstream_shapes"


def _objects(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DATA / name).read_text()) if d]


def _findings(objects: list[dict[str, Any]], config: str = "") -> list[Finding]:
    evaluator = Evaluator.default(parse_config(config or "{}"))
    result = scan([Resource(o) for o in objects], evaluator, ScanOptions(evaluator.config), version="t")
    assert result.errors == []
    return result.findings


def _count(findings: list[Finding], *rules: str) -> Counter[tuple[str, str, str]]:
    return Counter(
        (f.resource.kind, f.template or "", f.rule.id) for f in findings if not rules or f.rule.id in rules
    )


# ---- ServiceAccount semantics of a kind (kinds table: Account) ------------------------------------


def test_serving_runtimes_leave_the_account_to_the_inference_service() -> None:
    """ServingRuntimePodSpec has no serviceAccountName or automountServiceAccountToken: the
    InferenceService that uses the runtime names the account. Before: STK-SA-001 and STK-SA-002 on
    the ClusterServingRuntime, the ServingRuntime and its workerSpec (3 + 3) besides the
    InferenceService's (1 + 1); after: the InferenceService's only."""
    found = _count(_findings(_objects("kserve_runtimes.yaml")), "STK-SA-001", "STK-SA-002", "STK-SA-005")
    assert found == {
        ("InferenceService", "predictor", "STK-SA-001"): 1,
        ("InferenceService", "predictor", "STK-SA-002"): 1,
    }


def test_serving_runtime_pods_carry_inherited_account() -> None:
    runtime = _objects("kserve_runtimes.yaml")[1]
    pods = DEFAULT_WORKLOADS.pods(runtime)
    assert [p["account"] for p in pods] == [{"source": "inherited", "by": "InferenceService"}] * 2
    sa = serviceaccounts.facts(runtime, Inventory(complete=True), pods[0])["serviceAccount"]
    assert (sa["name"], sa["source"], sa["tokenMounted"], sa["exists"]) == ("", "inherited", False, None)


def test_autoscaling_ray_head_runs_as_the_account_kuberay_sets() -> None:
    """With enableInTreeAutoscaling KubeRay runs the head as an account named after the cluster (or
    the head template's own) and binds the autoscaler's Role to it. Before: STK-SA-001 and STK-SA-002
    on the RayCluster's head and worker group and the RayService's head (3 + 3); after: the
    RayCluster's worker group only (its RayService worker names an account without a token)."""
    found = _count(_findings(_objects("ray_autoscaler.yaml")), "STK-SA-001", "STK-SA-002", "STK-SA-005")
    assert found == {
        ("RayCluster", "workerGroupSpecs[small-group]", "STK-SA-001"): 1,
        ("RayCluster", "workerGroupSpecs[small-group]", "STK-SA-002"): 1,
    }


def test_ray_head_account_names_and_conditions() -> None:
    cluster, service = _objects("ray_autoscaler.yaml")
    head, worker = DEFAULT_WORKLOADS.pods(cluster)
    assert head["account"] == {
        "source": "operator",
        "by": "KubeRay",
        "name": "raycluster-autoscaler",
        "when": "spec.enableInTreeAutoscaling",
        "apiClient": True,
    }
    assert worker["account"] == {"source": "pod"}
    # a RayService's cluster has a generated name: the account's name is not known ahead
    assert DEFAULT_WORKLOADS.pods(service)[0]["account"]["name"] == ""
    # the head template's own account wins, and KubeRay needs it to exist
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"] = "ray-head"
    head = DEFAULT_WORKLOADS.pods(cluster)[0]
    assert head["account"]["name"] == "ray-head"
    sa = serviceaccounts.facts(cluster, Inventory(complete=True), head)["serviceAccount"]
    assert (sa["name"], sa["source"], sa["exists"]) == ("ray-head", "operator", False)
    # without autoscaling the head is an ordinary pod spec, and is judged as one
    cluster["spec"]["enableInTreeAutoscaling"] = False
    del cluster["spec"]["headGroupSpec"]["template"]["spec"]["serviceAccountName"]
    assert DEFAULT_WORKLOADS.pods(cluster)[0]["account"] == {"source": "pod"}
    found = _count(_findings([cluster]), "STK-SA-001", "STK-SA-002")
    assert found[("RayCluster", "headGroupSpec", "STK-SA-002")] == 1


def test_an_account_kuberay_creates_is_not_missing() -> None:
    cluster = _objects("ray_autoscaler.yaml")[0]
    head = DEFAULT_WORKLOADS.pods(cluster)[0]
    sa = serviceaccounts.facts(cluster, Inventory(complete=True), head)["serviceAccount"]
    assert (sa["name"], sa["exists"], sa["known"]) == ("raycluster-autoscaler", None, False)


def test_kuberay_check_name() -> None:
    """ray-operator utils.CheckName: the last 50 characters, a leading digit or punctuation -> "r"."""
    assert check_name("raycluster-autoscaler") == "raycluster-autoscaler"
    long = "a" * 10 + "-" + "b" * 49
    assert check_name(long) == "r" + "b" * 49
    assert check_name("1cluster") == "rcluster"
    assert check_name("_x") == "rx"


# ---- cluster DNS addresses ------------------------------------------------------------------------


def test_nodelocal_dns_cache_is_cluster_dns_by_default() -> None:
    """Before: STK-NET-005 said 169.254.20.10/32 on port 53 is "not cluster DNS"; after: NodeLocal
    DNSCache's address is in egress.cluster_dns.addresses by default, and the list is configurable."""
    policy = _objects("hostpath_and_dns.yaml")[1]
    assert parse_config("{}").egress.cluster_dns.addresses == ("169.254.20.10",)
    assert _count(_findings([policy]), "STK-NET-005") == {}
    # a list that is set replaces the default
    found = _count(_findings([policy], "egress: {cluster_dns: {addresses: [10.0.0.10]}}"), "STK-NET-005")
    assert found == {("NetworkPolicy", "", "STK-NET-005"): 1}
    assert _count(_findings([policy], "egress: {cluster_dns: {addresses: []}}"), "STK-NET-005")
    kept = "egress: {cluster_dns: {addresses: [169.254.20.10, 10.0.0.10]}}"
    assert _count(_findings([policy], kept), "STK-NET-005") == {}


# ---- hostPath volumes: one finding per problem, severities that match what is mounted --------------


def test_host_path_volumes_are_reported_once_and_by_risk() -> None:
    """Before: six hostPath volumes gave STK-POD-005 6, STK-POD-101 6 (the same volumes again) and
    STK-POD-201 6 (critical "exposes forbidden /etc" for a read-only /etc/localtime, /etc/os-release,
    /proc/meminfo). After: STK-POD-005 6 (its details name both PSA checks), STK-POD-101 0, and
    STK-POD-201 3: the runtime socket, the /etc directory and a writable /etc/timezone."""
    findings = _findings([_objects("hostpath_and_dns.yaml")[0]])
    found = _count(findings, "STK-POD-005", "STK-POD-101", "STK-POD-201")
    # the three volumes STK-POD-201 reports carry their STK-POD-005 in details.folded (one per problem)
    assert found == {("DaemonSet", "", "STK-POD-005"): 3, ("DaemonSet", "", "STK-POD-201"): 3}
    assert all(
        [m["rule"] for m in f.details["folded"]] == ["STK-POD-005"]
        for f in findings
        if f.rule.id == "STK-POD-201"
    )
    targets = {f.details["hostPath"]: f.details["mount"] for f in findings if f.rule.id == "STK-POD-201"}
    assert targets == {"/var/run/docker.sock": "read-only", "/etc": "read-only", "/etc/timezone": "writable"}
    checks = {tuple(f.details["checks"]) for f in findings if f.rule.id == "STK-POD-005"}
    assert checks == {("hostPathVolumes", "restrictedVolumes")}
    # other restricted volume types are still STK-POD-101's
    daemonset = _objects("hostpath_and_dns.yaml")[0]
    daemonset["spec"]["template"]["spec"]["volumes"].append(
        {"name": "nfs", "nfs": {"server": "s", "path": "/"}}
    )
    assert _count(_findings([daemonset]), "STK-POD-101") == {("DaemonSet", "", "STK-POD-101"): 1}


# ---- RBAC: one finding per object and permission set ----------------------------------------------


def test_kubeflow_profiles_deployment_gets_one_rbac_finding() -> None:
    """Kubeflow's profiles-deployment runs as a cluster-admin account. Before: 14 STK-RBAC-030
    findings on one line (one per catalogue rule id); after: one, whose details list every rule id
    with its permissions and the escalation paths."""
    findings = _findings(_objects("kubeflow_profiles.yaml"))
    rbac = [f for f in findings if f.rule.id == "STK-RBAC-030"]
    assert len(rbac) == 1
    (finding,) = rbac
    assert finding.resource.name == "profiles-deployment"
    assert finding.details["serviceAccount"] == "kubeflow/profiles-controller-service-account"
    assert len(finding.details["rules"]) == 14
    assert set(finding.details["permissions"]) == set(finding.details["rules"])
    assert all(finding.details["permissions"][r] for r in finding.details["rules"])
    assert finding.message.startswith(
        "pods mount the token of ServiceAccount kubeflow/profiles-controller-service-account, which holds "
    )


# ---- Spark: the pods the operator builds from a SparkPodSpec ----------------------------------------


def test_spark_applications_are_judged_as_the_pods_the_operator_builds() -> None:
    """A SparkApplication holds SparkPodSpecs, not pod templates (kubeflow/spark-operator
    api/v1beta2). Before, one without ``driver.template`` (nearly all: upstream's own examples,
    Volcano's) was one empty pod: STK-SA-001 and STK-SA-002 for the driver of every application,
    which names its account in ``driver.serviceAccount`` and creates its executors through the API,
    and nothing of the hostPath both roles mount. Now each role is the pod spark-submit and the
    operator's webhook build: the driver runs as its account and is an API client; an executor
    without an account runs as the driver's from Spark 3.1 (mounting a token that can create pods,
    reported), as "default" before; Spark's CPU and memory requests count as set."""
    findings = _findings(_objects("spark_applications.yaml"))
    accounts = _count(findings, "STK-SA-001", "STK-SA-002")
    assert accounts == {
        ("SparkApplication", "executor", "STK-SA-001"): 2,  # Spark 4: the driver's account; 2.4: default
        ("SparkApplication", "executor", "STK-SA-002"): 1,  # only Spark 2.4's executors run as default
        ("ScheduledSparkApplication", "executor", "STK-SA-001"): 1,
    }
    (default,) = [f for f in findings if f.rule.id == "STK-SA-002"]
    assert default.message.endswith("(spec.executor.serviceAccount is unset)")
    assert default.path == ("spec", "executor", "serviceAccount")
    spark4 = [f for f in findings if f.resource.name == "spark-pi" and f.rule.id == "STK-SA-001"]
    assert [f.template for f in spark4] == ["executor"] and '"spark-operator-spark"' in spark4[0].message
    host = {(f.resource.name, f.template) for f in findings if f.rule.id == "STK-POD-005"}
    assert host == {("spark-pi-v1beta1", "driver"), ("spark-pi-v1beta1", "executor")}
    assert not _count(findings, "STK-RES-001", "STK-RES-002", "STK-RES-003")
    # upstream's securityContext drops ALL, runs as 185, no escalation, RuntimeDefault seccomp
    restricted = {f.resource.name for f in findings if f.rule.id.startswith("STK-POD-1")}
    assert restricted == {"spark-pi-v1beta1"}


def test_a_spark_pod_spec_is_built_as_spark_submit_and_the_webhook_build_it() -> None:
    from stockade.policies.kinds import spark

    app = {
        "image": "spark:3.5.1",
        "sparkVersion": "3.5.1",
        "volumes": [{"name": "data", "hostPath": {"path": "/data"}}, {"name": "unused", "emptyDir": {}}],
        "nodeSelector": {"pool": "spark"},
        "driver": {
            "serviceAccount": "spark",
            "cores": 2,
            "coreLimit": "2500m",
            "memory": "4g",
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            "securityContext": {"privileged": True},
            "sidecars": [{"name": "log", "image": "fluent-bit:3"}],
            "gpu": {"name": "nvidia.com/gpu", "quantity": 1},
            "hostNetwork": True,
            "template": {"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}},
        },
        "executor": {"memory": "512m", "memoryOverhead": "128m", "image": "spark-exec:3.5.1"},
    }
    driver = spark.pod_spec(app, "driver")
    main, sidecar = driver["containers"]
    assert (
        main["name"] == "main"
        and main["image"] == "spark:3.5.1"
        and main["securityContext"] == {"privileged": True}
    )
    assert main["env"] == [{"name": "A", "value": "1"}] and sidecar["name"] == "log"
    assert main["resources"] == {
        "requests": {"cpu": "2", "memory": "4505Mi"},  # 4 GiB and a tenth of it
        "limits": {"cpu": "2500m", "memory": "4505Mi", "nvidia.com/gpu": 1},
    }
    assert driver["volumes"] == [{"name": "data", "hostPath": {"path": "/data"}}]  # only what it mounts
    assert driver["serviceAccountName"] == "spark" and driver["hostNetwork"] is True
    assert driver["nodeSelector"] == {"pool": "spark"}
    executor = spark.pod_spec(app, "executor")
    (container,) = executor["containers"]
    assert container["name"] == "spark-kubernetes-executor" and container["image"] == "spark-exec:3.5.1"
    assert container["resources"]["requests"] == {"cpu": "1", "memory": "640Mi"}
    assert executor["serviceAccountName"] == "spark" and "volumes" not in executor
    assert "serviceAccountName" not in spark.pod_spec({**app, "sparkVersion": "3.0.1"}, "executor")


def test_a_binding_rendered_into_several_namespaces_binds_each() -> None:
    """KServe's localmodel agent, rendered by config/ (namespace kserve) and overlays/kubeflow
    (namespace kubeflow): one ClusterRoleBinding name, each render's naming its own namespace's
    account. Scanned together, the last replaced the first, and the kserve agent was "not an API
    client" (STK-SA-001) though its binding was in the scan. Every variant of a binding now counts."""

    def render(namespace: str) -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "kserve-localmodelnode-agent-rolebinding"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "agent"},
                "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": namespace}],
            },
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": "agent", "namespace": namespace},
                "spec": {
                    "selector": {"matchLabels": {"app": "agent"}},
                    "template": {
                        "metadata": {"labels": {"app": "agent"}},
                        "spec": {
                            "serviceAccountName": "agent",
                            "containers": [{"name": "a", "image": "kserve/agent@sha256:" + "a" * 64}],
                        },
                    },
                },
            },
        ]

    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "agent"},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}],
    }
    findings = _findings([role, *render("kserve"), *render("kubeflow")])
    assert [f.resource.namespace for f in findings if f.rule.id == "STK-SA-001"] == []
