"""The image, resource, GPU, hostPath and ServiceAccount rules (issue 3) decide the same for every kind.

Every workload kind carries a pod template (``policies/kinds/workloads.py``); a rule written against
``input.pod`` must give a bare Pod and the template of a Deployment, StatefulSet, DaemonSet, ReplicaSet,
ReplicationController, Job, CronJob (and PodTemplate) the same verdict: the same rule ids at the same
paths relative to the template. Each case below is wrapped in every kind, evaluated through the public
pipeline (``Evaluator`` with facts from ``facts_for``), and compared with the bare Pod, for every rule of
the library (the Pod Security rules included). The bare Pod's findings of the issue-3 rules are also
checked against the expected ones, so the cases pin down behaviour, not only consistency.

The configuration knobs (resource switches, registry allowlist, digest namespaces, API clients, GPU
namespace labels and node pool) and the ServiceAccount facts are exercised the same way, and the
compiled Rego VM is compared with the interpreter on every object.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import orjson
import pytest
import yaml

from stockade.policies.config.settings import parse_config
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.kinds.workloads import TEMPLATE_PATHS, WORKLOAD_KINDS
from stockade.policies.model import Finding, Resource

ISSUE3_RULES = frozenset(
    {
        "STK-IMG-001",
        "STK-IMG-002",
        "STK-IMG-003",
        "STK-IMG-004",
        "STK-IMG-005",
        "STK-RES-001",
        "STK-RES-002",
        "STK-RES-003",
        "STK-GPU-001",
        "STK-GPU-002",
        "STK-GPU-003",
        "STK-POD-201",
        "STK-SA-001",
        "STK-SA-002",
    }
)

DIGEST = "sha256:" + "0123456789abcdef" * 4
GOOD_IMAGE = f"myacr.azurecr.io/team/app:1.4.2@{DIGEST}"

BASE: dict[str, Any] = {
    "images": {
        "allowed_registries": ["myacr.azurecr.io/", "mcr.microsoft.com/oss/"],
        "require_digest_namespaces": ["prod-*"],
    },
    "gpu": {"node_selector": {"pool": "gpu"}},
    "service_accounts": {"api_clients": [{"names": ["operator-*"]}]},
}


def config(**sections: dict[str, Any]) -> str:
    """stockade.yaml text: BASE with whole `sections` (images=..., gpu=...) merged key by key."""
    merged = copy.deepcopy(BASE)
    for name, values in sections.items():
        merged.setdefault(name, {}).update(values)
    return yaml.safe_dump(merged, sort_keys=True)


BASE_CONFIG = config()

GPU_NAMESPACE = {"metadata": {"name": "ml", "labels": {"stockade.io/gpu": "true"}}}
PLAIN_NAMESPACE = {"metadata": {"name": "ml", "labels": {}}}

Verdict = frozenset[tuple[str, tuple[Any, ...]]]


# ---- building workloads ------------------------------------------------------------------------------


def container(name: str, image: str = GOOD_IMAGE, **extra: Any) -> dict[str, Any]:
    """A container that satisfies every rule (restricted PSS included) unless `extra` says otherwise."""
    c: dict[str, Any] = {
        "name": name,
        "image": image,
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
    }
    c.update(extra)
    return c


def pod_spec(**extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "serviceAccountName": "trainer",
        "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container("app")],
    }
    spec.update(extra)
    return spec


def gpu_container(name: str = "trainer", gpus: Any = 1, **extra: Any) -> dict[str, Any]:
    c = container(name)
    c["resources"] = {
        "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": gpus},
        "limits": {"memory": "64Gi", "nvidia.com/gpu": gpus},
    }
    c.update(extra)
    return c


GPU_SCHEDULING = {
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "nodeSelector": {"pool": "gpu"},
}


def wrap(kind: str, spec: Mapping[str, Any], *, name: str = "w", namespace: str = "ml") -> dict[str, Any]:
    """`spec` as the pod (template) of a `kind` object; every kind gets the same name and labels."""
    labels = {"app": name}
    pod: dict[str, Any] = copy.deepcopy(dict(spec))
    md = {"name": name, "namespace": namespace, "labels": labels}
    template = {"metadata": {"labels": labels}, "spec": pod}
    selector = {"matchLabels": labels}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": kind, "metadata": md, "spec": pod}
    if kind == "PodTemplate":
        return {"apiVersion": "v1", "kind": kind, "metadata": md, "template": template}
    if kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        return {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": md,
            "spec": {"selector": selector, "template": template},
        }
    if kind == "StatefulSet":
        body = {"selector": selector, "serviceName": name, "template": template}
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": md, "spec": body}
    if kind == "ReplicationController":
        return {
            "apiVersion": "v1",
            "kind": kind,
            "metadata": md,
            "spec": {"selector": labels, "template": template},
        }
    if kind == "Job":
        pod.setdefault("restartPolicy", "Never")
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": md, "spec": {"template": template}}
    if kind == "CronJob":
        pod.setdefault("restartPolicy", "Never")
        body = {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": template}}}
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": md, "spec": body}
    raise AssertionError(f"no wrapper for {kind}")


def test_every_workload_kind_has_a_wrapper() -> None:
    assert set(WORKLOAD_KINDS) >= {
        "Pod",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "ReplicationController",
        "Job",
        "CronJob",
    }
    for kind in WORKLOAD_KINDS:
        assert wrap(kind, pod_spec())["kind"] == kind


# ---- evaluating --------------------------------------------------------------------------------------


@cache
def evaluator(config_text: str = BASE_CONFIG) -> Evaluator:
    return Evaluator.default(parse_config(config_text))


def relative(kind: str, path: Iterable[Any]) -> tuple[Any, ...]:
    """A finding's path relative to the pod template ("<object>" first when it lies outside it)."""
    path = tuple(path)
    prefix = TEMPLATE_PATHS[kind]
    if path[: len(prefix)] == prefix:
        return path[len(prefix) :]
    return ("<object>", *path)


def evaluate(
    obj: Mapping[str, Any],
    *,
    config: str = BASE_CONFIG,
    namespace: Mapping[str, Any] | None = PLAIN_NAMESPACE,
    cluster: Iterable[Mapping[str, Any]] = (),
    facts: bool = True,
) -> list[Finding]:
    """Findings for `obj` with `cluster` (ServiceAccounts...) as the gate's inventory."""
    ns_name = obj["metadata"].get("namespace")
    inv = inventory_of([obj, *cluster])
    return evaluator(config).evaluate(
        Resource(dict(obj)),
        namespace=namespace_info(namespace, ns_name),
        facts=facts_for(obj, inv) if facts else {},
    )


def verdict(kind: str, findings: Iterable[Finding]) -> Verdict:
    return frozenset((f.rule.id, relative(kind, f.path)) for f in findings)


def issue3(v: Verdict) -> Verdict:
    return frozenset(x for x in v if x[0] in ISSUE3_RULES)


# ---- cases -------------------------------------------------------------------------------------------


def p(*parts: Any) -> tuple[Any, ...]:
    """A path relative to the pod template."""
    return ("spec", *parts)


@dataclass(frozen=True)
class Case:
    name: str
    spec: dict[str, Any]
    expected: frozenset[tuple[str, tuple[Any, ...]]]  # issue-3 findings, relative paths
    namespace: dict[str, Any] | None = field(default_factory=lambda: PLAIN_NAMESPACE)
    object_namespace: str = "ml"
    cluster: tuple[dict[str, Any], ...] = ()


CASES = [
    Case("compliant", pod_spec(), frozenset()),
    Case(
        "images",
        pod_spec(
            initContainers=[container("init", f"myacr.azurecr.io.evil.com/x:1@{DIGEST}")],
            containers=[
                container("hub", "nginx"),
                container("tagged", "myacr.azurecr.io/team/app:1.0"),
                container("latest-always", "mcr.microsoft.com/oss/tool:latest", imagePullPolicy="Always"),
                container("port", "myacr.azurecr.io:5000/app", imagePullPolicy="IfNotPresent"),
                container("placeholder", "FILLED BY THE OPERATOR"),
            ],
            ephemeralContainers=[
                {"name": "debug", "image": "myacr.azurecr.io/debug:1", "imagePullPolicy": "Never"}
            ],
            volumes=[{"name": "models", "image": {"reference": "mcr.microsoft.com/oss/models"}}],
        ),
        frozenset(
            {
                ("STK-IMG-001", p("initContainers", 0, "image")),
                ("STK-IMG-001", p("containers", 0, "image")),
                ("STK-IMG-002", p("containers", 0, "image")),
                ("STK-IMG-002", p("containers", 2, "image")),
                ("STK-IMG-001", p("containers", 3, "image")),
                ("STK-IMG-002", p("containers", 3, "image")),
                ("STK-IMG-004", p("containers", 3, "imagePullPolicy")),
                # a placeholder is one note, no registry, tag or pull-policy finding (issue 37)
                ("STK-IMG-005", p("containers", 4, "image")),
                ("STK-IMG-002", p("volumes", 0, "image", "reference")),
            }
        ),
    ),
    Case(
        "digest-namespace",
        pod_spec(containers=[container("pinned"), container("tagged", "myacr.azurecr.io/team/app:1.0")]),
        frozenset(
            {
                ("STK-IMG-003", p("containers", 1, "image")),
            }
        ),
        namespace={"metadata": {"name": "prod-eu"}},
        object_namespace="prod-eu",
    ),
    Case(
        "resources",
        pod_spec(
            initContainers=[container("init", resources={})],
            containers=[
                container("none", resources=None),
                container("limits-only", resources={"limits": {"cpu": "1", "memory": "1Gi"}}),
                container("requests-only", resources={"requests": {"cpu": "1", "memory": "1Gi"}}),
                container("cpu-limit-only", resources={"limits": {"cpu": "1"}}),
                container("memory-only", resources={"limits": {"memory": "1Gi"}}),
            ],
        ),
        frozenset(
            {
                # no CPU or memory quantity at all: one finding, listing everything missing (issue 37)
                ("STK-RES-001", p("initContainers", 0, "resources", "limits", "memory")),
                ("STK-RES-001", p("containers", 0, "resources", "limits", "memory")),
                ("STK-RES-001", p("containers", 2, "resources", "limits", "memory")),
                ("STK-RES-001", p("containers", 3, "resources", "limits", "memory")),
                ("STK-RES-003", p("containers", 3, "resources", "requests", "memory")),
                ("STK-RES-002", p("containers", 4, "resources", "requests", "cpu")),
            }
        ),
    ),
    Case(
        "gpu-misconfigured",
        pod_spec(
            containers=[
                gpu_container(
                    resources={
                        "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 1},
                        "limits": {"memory": "64Gi", "nvidia.com/gpu": 2},
                    }
                ),
                gpu_container(
                    "rdma",
                    resources={
                        "requests": {"cpu": "1", "memory": "1Gi", "rdma/hca_shared_devices_a": 1},
                        "limits": {"memory": "1Gi", "amd.com/gpu": "1"},
                    },
                ),
            ]
        ),
        frozenset(
            {
                ("STK-GPU-001", p("containers", 0, "resources", "requests", "nvidia.com/gpu")),
                ("STK-GPU-001", p("containers", 1, "resources", "requests", "rdma/hca_shared_devices_a")),
                ("STK-GPU-002", p("containers", 0, "resources", "limits", "nvidia.com/gpu")),
                ("STK-GPU-002", p("containers", 1, "resources", "limits", "amd.com/gpu")),
                ("STK-GPU-003", p("tolerations")),
                ("STK-GPU-003", p("nodeSelector", "pool")),
            }
        ),
    ),
    Case(
        "gpu-compliant",
        pod_spec(containers=[gpu_container(gpus="4"), container("sidecar")], **GPU_SCHEDULING),
        frozenset(),
        namespace=GPU_NAMESPACE,
    ),
    Case(
        "gpu-affinity",
        pod_spec(
            containers=[gpu_container()],
            tolerations=[{"operator": "Exists"}],
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "pool", "operator": "In", "values": ["gpu", "gpu-spot"]}
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        frozenset(),
        namespace=GPU_NAMESPACE,
    ),
    Case(
        "host-paths",
        pod_spec(
            volumes=[
                {"name": "dev", "hostPath": {"path": "/dev/nvidia0"}},
                {"name": "sock", "hostPath": {"path": "/var/run//docker.sock/"}},
                {"name": "logs", "hostPath": {"path": "/var/log"}},
                {"name": "run", "hostPath": {"path": "/run"}},
                {"name": "kubelet", "hostPath": {"path": "/var/lib/kubelet/../kubelet/pods"}},
            ]
        ),
        frozenset(
            {
                ("STK-POD-201", p("volumes", 0, "hostPath", "path")),
                ("STK-POD-201", p("volumes", 1, "hostPath", "path")),
                ("STK-POD-201", p("volumes", 3, "hostPath", "path")),
                ("STK-POD-201", p("volumes", 4, "hostPath", "path")),
            }
        ),
    ),
    Case(
        "host-paths-privileged-namespace",
        pod_spec(volumes=[{"name": "dev", "hostPath": {"path": "/dev/nvidiactl"}}]),
        frozenset({("STK-POD-201", p("volumes", 0, "hostPath", "path"))}),
        namespace={"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}},
    ),
    Case(
        "default-service-account",
        {
            k: v
            for k, v in pod_spec().items()
            if k not in ("serviceAccountName", "automountServiceAccountToken")
        },
        frozenset(
            {
                ("STK-SA-001", p("automountServiceAccountToken")),
                ("STK-SA-002", p("serviceAccountName")),
            }
        ),
    ),
    Case(
        "service-account-automounts",
        pod_spec(automountServiceAccountToken=None),
        frozenset({("STK-SA-001", p("automountServiceAccountToken"))}),
        cluster=(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "trainer", "namespace": "ml"},
            },
        ),
    ),
    Case(
        "service-account-opts-out",
        pod_spec(automountServiceAccountToken=None),
        frozenset(),
        cluster=(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "trainer", "namespace": "ml"},
                "automountServiceAccountToken": False,
            },
        ),
    ),
]


def case_verdict(case: Case, kind: str, **kwargs: Any) -> Verdict:
    obj = wrap(kind, case.spec, namespace=case.object_namespace)
    findings = evaluate(obj, namespace=case.namespace, cluster=case.cluster, **kwargs)
    return verdict(kind, findings)


@cache
def pod_verdict(name: str) -> Verdict:
    (case,) = [c for c in CASES if c.name == name]
    return case_verdict(case, "Pod")


def test_cases_cover_every_issue3_rule() -> None:
    covered = {rule for case in CASES for rule, _ in case.expected}
    assert covered == ISSUE3_RULES
    assert set(evaluator().rules) >= ISSUE3_RULES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bare_pod_findings(case: Case) -> None:
    assert issue3(pod_verdict(case.name)) == case.expected


@pytest.mark.parametrize("kind", [k for k in WORKLOAD_KINDS if k != "Pod"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_template_verdict_equals_pod(case: Case, kind: str) -> None:
    got = case_verdict(case, kind)
    want = pod_verdict(case.name)
    assert got == want, f"{kind} differs from Pod: extra {sorted(got - want)}, missing {sorted(want - got)}"


def test_compliant_case_is_clean_for_every_rule() -> None:
    assert pod_verdict("compliant") == frozenset()
    assert pod_verdict("gpu-compliant") == frozenset()


def test_pss_rules_are_compared_too() -> None:
    """The kind comparison covers the Pod Security rules: a case that trips them trips them everywhere."""
    v = pod_verdict("host-paths")
    assert ("STK-POD-005", p("volumes", 0, "hostPath")) in v
    spec = pod_spec(hostNetwork=True, containers=[container("c", securityContext={"privileged": True})])
    pod = verdict("Pod", evaluate(wrap("Pod", spec)))
    assert {"STK-POD-002", "STK-POD-003"} <= {r for r, _ in pod}
    for kind in WORKLOAD_KINDS:
        assert verdict(kind, evaluate(wrap(kind, spec))) == pod


# ---- messages ----------------------------------------------------------------------------------------


def messages(findings: Iterable[Finding], rule: str) -> list[str]:
    return sorted(f.message for f in findings if f.rule.id == rule)


@pytest.mark.parametrize("kind", ["Pod", "CronJob"])
def test_messages_name_container_and_value(kind: str) -> None:
    (case,) = [c for c in CASES if c.name == "images"]
    found = evaluate(wrap(kind, case.spec))
    assert 'container "hub" image "nginx" has no tag (it resolves to "latest")' in messages(
        found, "STK-IMG-002"
    )
    assert any('"port"' in m and "myacr.azurecr.io:5000/app" in m for m in messages(found, "STK-IMG-001"))
    (case,) = [c for c in CASES if c.name == "resources"]
    found = evaluate(wrap(kind, case.spec))
    assert 'container "requests-only" has no memory limit' in messages(found, "STK-RES-001")
    assert (
        'container "none" sets no CPU or memory resources: no memory limit, CPU request, memory request'
        in messages(found, "STK-RES-001")
    )
    (case,) = [c for c in CASES if c.name == "host-paths"]
    found = evaluate(wrap(kind, case.spec))
    assert any(
        '"/var/run//docker.sock/"' in m and "/var/run/docker.sock" in m
        for m in messages(found, "STK-POD-201")
    )


def test_image_pull_policy_is_a_warning() -> None:
    (case,) = [c for c in CASES if c.name == "images"]
    actions = {f.rule.id: f.action.value for f in evaluate(wrap("Deployment", case.spec))}
    assert actions["STK-IMG-004"] == "warn"
    assert actions["STK-IMG-001"] == actions["STK-IMG-002"] == "deny"


# ---- configuration knobs -----------------------------------------------------------------------------


def rules_for_every_kind(spec: Mapping[str, Any], **kwargs: Any) -> set[str]:
    """Issue-3 rule ids that fire, asserting every kind agrees."""
    verdicts = {kind: issue3(verdict(kind, evaluate(wrap(kind, spec), **kwargs))) for kind in WORKLOAD_KINDS}
    assert len(set(verdicts.values())) == 1, verdicts
    return {r for r, _ in verdicts["Pod"]}


def test_resource_requirements_can_be_switched_off() -> None:
    """A container with no resources is reported once, by the first of STK-RES-001/-002/-003 that is on
    (issue 37); switching a rule off (resources.require_*, or config `rules:`) hands it to the next, so
    what the others require is still reported."""
    spec = pod_spec(containers=[container("c", resources=None)])
    assert rules_for_every_kind(spec) == {"STK-RES-001"}
    off = config(resources={"require_memory_limit": False, "require_cpu_request": False})
    assert rules_for_every_kind(spec, config=off) == {"STK-RES-003"}
    off = config(resources={"require_memory_limit": False})
    assert rules_for_every_kind(spec, config=off) == {"STK-RES-002"}
    off = config(resources={"require_memory_request": False})
    assert rules_for_every_kind(spec, config=off) == {"STK-RES-001"}
    partial = pod_spec(containers=[container("c", resources={"limits": {"cpu": "1"}})])
    assert rules_for_every_kind(partial) == {"STK-RES-001", "STK-RES-003"}


def test_resource_rule_disabled_by_rules_hands_over_the_bare_container() -> None:
    """`rules: {STK-RES-001: {enabled: false}}` is not evaluated at all; the bare container's CPU and
    memory requests are then STK-RES-002's one finding (data.stockade.config.disabled_rules)."""
    spec = pod_spec(containers=[container("c", resources=None)])
    merged = yaml.safe_load(BASE_CONFIG)
    merged["rules"] = {"STK-RES-001": {"enabled": False}}
    found = evaluate(wrap("Deployment", spec), config=yaml.safe_dump(merged))
    res = [f for f in found if f.rule.id.startswith("STK-RES-")]
    assert [f.rule.id for f in res] == ["STK-RES-002"]
    assert res[0].message == 'container "c" sets no CPU or memory resources: no CPU request, memory request'


def test_no_registry_allowlist_checks_no_registry() -> None:
    """Out of the box (no images.allowed_registries) any registry passes: a hardened manifest scans
    clean, and the allowlist is one line of config away (issue 40)."""
    spec = pod_spec(containers=[container("c", "ghcr.io/someone/app:1.0"), container("d", "nginx:1.25")])
    for text in ("", config(images={"allowed_registries": []})):
        assert "STK-IMG-001" not in {f.rule.id for f in evaluate(wrap("StatefulSet", spec), config=text)}


def test_registry_allowlist_entries() -> None:
    spec = pod_spec(containers=[container("hub", f"nginx:1.25@{DIGEST}")])
    assert rules_for_every_kind(spec) == {"STK-IMG-001"}
    for allowed, expected in (
        (["docker.io/library"], set()),
        (["docker.io/"], set()),
        (["index.docker.io/library/nginx"], set()),
        (["docker.io/bitnami/"], {"STK-IMG-001"}),
        (["docker.io/library/nginx-other"], {"STK-IMG-001"}),
    ):
        assert rules_for_every_kind(spec, config=config(images={"allowed_registries": allowed})) == expected


def test_digest_namespaces() -> None:
    spec = pod_spec(containers=[container("c", "myacr.azurecr.io/team/app:1.0", imagePullPolicy="Always")])
    for ns, expected in (("prod-eu", {"STK-IMG-003"}), ("prod", set()), ("ml", set())):
        assert rules_for_every_kind_in(spec, ns) == expected, ns
    every = config(images={"require_digest_namespaces": ["*"]})
    assert rules_for_every_kind_in(spec, "ml", config=every) == {"STK-IMG-003"}


def rules_for_every_kind_in(spec: Mapping[str, Any], ns: str, **kwargs: Any) -> set[str]:
    verdicts = {
        kind: issue3(verdict(kind, evaluate(wrap(kind, spec, namespace=ns), namespace=None, **kwargs)))
        for kind in WORKLOAD_KINDS
    }
    assert len(set(verdicts.values())) == 1, verdicts
    return {r for r, _ in verdicts["Pod"]}


def test_api_clients_exempt_token_mount() -> None:
    spec = pod_spec(automountServiceAccountToken=None)
    assert rules_for_every_kind(spec) == {"STK-SA-001"}
    exempt: list[dict[str, Any]] = [
        {"names": ["w"]},
        {"namespaces": ["m*"]},
        {"labels": {"app": "w"}},
        {"namespaces": ["ml"], "names": ["*"], "labels": {"app": "w"}},
    ]
    for selector in exempt:
        clients = config(service_accounts={"api_clients": [{"names": ["x"]}, selector]})
        assert rules_for_every_kind(spec, config=clients) == set(), selector
    not_exempt: list[dict[str, Any]] = [
        {"namespaces": ["other"]},
        {"labels": {"app": "w", "tier": "x"}},
        {"names": ["x"], "namespaces": ["ml"]},
    ]
    for selector in not_exempt:
        clients = config(service_accounts={"api_clients": [selector]})
        assert rules_for_every_kind(spec, config=clients) == {"STK-SA-001"}, selector


def test_api_client_kind_selector_exempts_only_that_kind() -> None:
    spec = pod_spec(automountServiceAccountToken=None)
    clients = config(service_accounts={"api_clients": [{"kinds": ["Deployment", "Cron*"]}]})
    for kind in WORKLOAD_KINDS:
        fired = {f.rule.id for f in evaluate(wrap(kind, spec), config=clients)}
        assert ("STK-SA-001" in fired) == (kind not in ("Deployment", "CronJob")), kind


def service_account(automount: bool | None) -> dict[str, Any]:
    sa: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "trainer", "namespace": "ml"},
    }
    if automount is not None:
        sa["automountServiceAccountToken"] = automount
    return sa


@pytest.mark.parametrize(
    ("pod_setting", "sa_setting", "mounted"),
    [
        (None, False, False),
        (None, True, True),
        (None, None, True),
        (False, True, False),
        (True, False, True),
        (False, None, False),
    ],
)
def test_token_mount_follows_pod_then_service_account(
    pod_setting: bool | None, sa_setting: bool | None, mounted: bool
) -> None:
    spec = pod_spec(automountServiceAccountToken=pod_setting)
    # a pod that sets true asks for the token: an API client by its own declaration (issue 22)
    expected = {"STK-SA-001"} if mounted and pod_setting is not True else set()
    assert rules_for_every_kind(spec, cluster=[service_account(sa_setting)]) == expected


def test_a_service_account_a_binding_names_is_an_api_client() -> None:
    """Issue 22: decided from the RBAC graph of the gate, not a hand-kept list: a binding naming the
    ServiceAccount (or its user name) makes the workload an API client; a binding to a group of
    accounts (system:serviceaccounts) does not."""
    spec = pod_spec(automountServiceAccountToken=None)
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "lease"},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}],
    }

    def binding(subject: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "ml"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "lease"},
            "subjects": [subject],
        }

    named = binding({"kind": "ServiceAccount", "name": "trainer", "namespace": "ml"})
    user = binding({"kind": "User", "name": "system:serviceaccount:ml:trainer"})
    group = binding({"kind": "Group", "name": "system:serviceaccounts"})
    assert rules_for_every_kind(spec, cluster=[service_account(None), role, named]) == set()
    assert rules_for_every_kind(spec, cluster=[service_account(None), role, user]) == set()
    assert rules_for_every_kind(spec, cluster=[service_account(None), role, group]) == {"STK-SA-001"}


def test_token_mount_without_facts_uses_pod_setting() -> None:
    """Without facts (no analyzers ran), only the pod's own setting is known; unset counts as mounted."""
    unset = pod_spec(automountServiceAccountToken=None)
    assert rules_for_every_kind(unset, cluster=[service_account(False)], facts=False) == {"STK-SA-001"}
    assert rules_for_every_kind(pod_spec(), facts=False) == set()


def test_service_account_not_in_inventory() -> None:
    spec = pod_spec(automountServiceAccountToken=None)
    found = evaluate(wrap("Job", spec))
    (msg,) = messages(found, "STK-SA-001")
    assert 'ServiceAccount "trainer"' in msg


def test_gpu_namespace_unknown_is_not_reported() -> None:
    spec = pod_spec(containers=[gpu_container()], **GPU_SCHEDULING)
    assert rules_for_every_kind(spec) == {"STK-GPU-002"}
    assert rules_for_every_kind(spec, namespace=None) == set()
    assert rules_for_every_kind(spec, namespace=GPU_NAMESPACE) == set()


def test_gpu_node_pool_configuration() -> None:
    spec = pod_spec(
        containers=[gpu_container()], tolerations=[{"key": "sku", "operator": "Equal", "value": "gpu"}]
    )
    sku = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert rules_for_every_kind(spec, namespace=GPU_NAMESPACE, config=config(gpu={"node_selector": {}})) == {
        "STK-GPU-003"
    }
    pool = config(gpu={"tolerations": sku, "node_selector": {}})
    assert rules_for_every_kind(spec, namespace=GPU_NAMESPACE, config=pool) == set()
    selector = config(gpu={"tolerations": sku, "node_selector": {"accelerator": "h100"}})
    found = evaluate(wrap("DaemonSet", spec), namespace=GPU_NAMESPACE, config=selector)
    assert verdict("DaemonSet", found) == {("STK-GPU-003", p("nodeSelector", "accelerator"))}
    labels = config(gpu={"tolerations": sku, "node_selector": {}, "namespace_labels": {"team": "ml"}})
    assert rules_for_every_kind(spec, namespace=GPU_NAMESPACE, config=labels) == {"STK-GPU-002"}


def test_gpu_resources_are_configurable() -> None:
    spec = pod_spec(
        containers=[
            container(
                "c", resources={"requests": {"cpu": "1"}, "limits": {"memory": "1Gi", "example.com/npu": 1}}
            )
        ]
    )
    assert rules_for_every_kind(spec) == set()
    npu = config(gpu={"resources": ["example.com/npu"]})
    assert rules_for_every_kind(spec, config=npu) == {"STK-GPU-002", "STK-GPU-003"}


# ---- the compiled VM agrees with the interpreter -----------------------------------------------------


def test_vm_and_interpreter_agree_on_every_case() -> None:
    ev = evaluator()
    engine = ev.engine
    assert isinstance(engine, EmbeddedEngine)
    assert engine.uses_vm, engine.vm_error
    for case in CASES:
        for kind in WORKLOAD_KINDS:
            obj = wrap(kind, case.spec, namespace=case.object_namespace)
            inp = ev.build_input(
                Resource(obj),
                namespace=namespace_info(case.namespace, case.object_namespace),
                facts=facts_for(obj, inventory_of([obj, *case.cluster])),
            )
            vm = engine.evaluate(kind, inp)
            interpreted = engine.evaluate_interpreted(
                kind, engine.rules_for(kind), orjson.dumps(inp).decode()
            )

            def key(v: Any) -> tuple[str, tuple[Any, ...], str]:
                return (v.rule.id, v.path, v.msg)

            assert sorted(map(key, vm)) == sorted(map(key, interpreted)), (case.name, kind)
