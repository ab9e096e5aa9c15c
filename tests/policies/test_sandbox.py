"""Sandboxed runtime classes (issue 8): the STK-RT rules, the sandbox facts and the audit's summary.

Every case is evaluated through the public pipeline (``Evaluator`` with ``facts_for`` over an
``Inventory`` that carries the cluster's RuntimeClasses, completeness and name), for every workload kind,
and must give the same STK-RT findings at the same paths relative to the pod template. Cases cover both
profiles (bare metal: the default and every scan; AKS: selected by the cluster's name). The Python
decisions that ``sandbox_summary`` reports are checked against the Rego verdicts on the same cases, and
the compiled Rego VM against the interpreter.
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

from stockade.policies.config.settings import STARTER_CONFIG, Config, ConfigError, parse_config
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.facts import Inventory, facts_for
from stockade.policies.facts import sandbox as sb
from stockade.policies.kinds.workloads import TEMPLATE_PATHS, WORKLOAD_KINDS
from stockade.policies.model import Finding, Resource

AKS_CLUSTERS = {"sandbox": {"clusters": [{"clusters": ["aks-*"], "profile": "aks"}]}}
A100 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
SANDBOX_LABEL = {"stockade.io/sandbox": "required"}

SANDBOX_NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "eval", "labels": SANDBOX_LABEL}}
PLAIN_NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "eval", "labels": {}}}


def runtime_class(
    name: str, handler: str | None, node_selector: Mapping[str, str] | None = None
) -> dict[str, Any]:
    rc: dict[str, Any] = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}}
    if handler is not None:
        rc["handler"] = handler
    if node_selector is not None:
        rc["scheduling"] = {"nodeSelector": dict(node_selector)}
    return rc


GVISOR = runtime_class("gvisor", "runsc", {"pool": "sandbox"})
KATA_AKS = runtime_class("kata-vm-isolation", "kata", {"kubernetes.azure.com/kata-vm-isolation": "true"})


def container(name: str = "c", **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "x", "resources": {"limits": {"memory": "1Gi"}}}
    c.update(extra)
    return c


def gpu_container(resource: str = "nvidia.com/gpu") -> dict[str, Any]:
    return container("g", resources={"limits": {resource: 1}, "requests": {resource: 1}})


def spec(runtime: str | None = None, **extra: Any) -> dict[str, Any]:
    # no automounted token: STK-RT-007 would report it in every high-risk pod (its own cases say so)
    s: dict[str, Any] = {"containers": [container()], "automountServiceAccountToken": False}
    if runtime is not None:
        s["runtimeClassName"] = runtime
    s.update(extra)
    return s


def wrap(kind: str, pod_spec: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    """`pod_spec` (with pod `labels`) as the pod template of a `kind` object, at its TEMPLATE_PATHS."""
    template = {"metadata": {"labels": dict(labels)}, "spec": copy.deepcopy(dict(pod_spec))}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "w", "namespace": "eval"}}
    path = TEMPLATE_PATHS[kind]
    if not path:
        obj["metadata"]["labels"] = dict(labels)
        obj["spec"] = template["spec"]
        return obj
    node = obj
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = template
    return obj


@cache
def evaluator(config_text: str) -> Evaluator:
    return Evaluator.default(parse_config(config_text))


def config_text(*sections: Mapping[str, Any]) -> str:
    merged: dict[str, Any] = {}
    for s in sections:
        for key, value in s.items():
            merged.setdefault(key, {}).update(value)
    return yaml.safe_dump(merged)


def inventory(objects: Iterable[Mapping[str, Any]], *, complete: bool, cluster: str | None) -> Inventory:
    inv = Inventory(complete=complete, cluster=cluster)
    for obj in objects:
        inv.add(obj)
    return inv


@dataclass(frozen=True)
class Case:
    name: str
    spec: dict[str, Any]
    expected: frozenset[tuple[str, tuple[Any, ...]]]  # STK-RT findings, paths relative to the template
    namespace: dict[str, Any] = field(default_factory=lambda: SANDBOX_NS)
    labels: dict[str, str] = field(default_factory=dict)
    classes: tuple[dict[str, Any], ...] = (GVISOR,)
    complete: bool = False
    cluster: str | None = None
    config: tuple[Mapping[str, Any], ...] = ()

    def inventory(self, obj: Mapping[str, Any]) -> Inventory:
        return inventory([obj, self.namespace, *self.classes], complete=self.complete, cluster=self.cluster)

    @property
    def config_text(self) -> str:
        return config_text(*self.config)


def p(*parts: Any) -> tuple[Any, ...]:
    return ("spec", *parts)


def rt(*items: tuple[str, tuple[Any, ...]]) -> frozenset[tuple[str, tuple[Any, ...]]]:
    return frozenset(items)


RT_CLASS = p("runtimeClassName")

CASES = [
    # ---- bare metal (the default profile, and every scan) ----
    Case("high-risk namespace, no class", spec(), rt(("STK-RT-001", RT_CLASS))),
    Case("high-risk, approved class known as runsc", spec("gvisor"), rt()),
    Case("high-risk, approved class not seen (partial)", spec("gvisor"), rt(), classes=()),
    Case(
        "high-risk, approved class missing (complete)",
        spec("gvisor"),
        rt(("STK-RT-002", RT_CLASS)),
        classes=(),
        complete=True,
    ),
    Case(
        "high-risk, approved class whose handler is runc",
        spec("gvisor"),
        rt(("STK-RT-003", RT_CLASS)),
        classes=(runtime_class("gvisor", "runc", {"pool": "sandbox"}),),
    ),
    Case(
        "high-risk, class with a sandbox handler but not approved",
        spec("isolated"),
        rt(("STK-RT-001", RT_CLASS)),
        classes=(runtime_class("isolated", "runsc", {"pool": "sandbox"}),),
    ),
    Case(
        "pod label makes it high-risk",
        spec(),
        rt(("STK-RT-001", RT_CLASS)),
        namespace=PLAIN_NS,
        labels=SANDBOX_LABEL,
    ),
    Case("ordinary workload with host access", spec(hostNetwork=True), rt(), namespace=PLAIN_NS),
    Case(
        "ordinary workload, missing non-sandbox class",
        spec("nvidia"),
        rt(),
        namespace=PLAIN_NS,
        classes=(),
        complete=True,
    ),
    Case(
        "ordinary workload, missing sandbox class",
        spec("kata-qemu"),
        rt(("STK-RT-002", RT_CLASS)),
        namespace=PLAIN_NS,
        classes=(),
        complete=True,
    ),
    Case(
        "sandbox class with every host access",
        spec(
            "gvisor",
            hostNetwork=True,
            hostPID=True,
            hostIPC=True,
            containers=[
                container(securityContext={"privileged": True}, ports=[{"containerPort": 80, "hostPort": 80}])
            ],
            volumes=[{"name": "h", "hostPath": {"path": "/data"}}],
        ),
        rt(
            ("STK-RT-004", p("hostNetwork")),
            ("STK-RT-004", p("hostPID")),
            ("STK-RT-004", p("hostIPC")),
            ("STK-RT-004", p("containers", 0, "securityContext", "privileged")),
            ("STK-RT-004", p("containers", 0, "ports", 0, "hostPort")),
            ("STK-RT-004", p("volumes", 0, "hostPath")),
        ),
        namespace=PLAIN_NS,
    ),
    Case(
        "GPU on an nvproxy-supported model",
        spec("gvisor", containers=[gpu_container()], nodeSelector=A100),
        rt(),
    ),
    Case(
        "GPU not pinned to a supported model",
        spec("gvisor", containers=[gpu_container()]),
        rt(("STK-RT-006", p("nodeSelector", "nvidia.com/gpu.product"))),
    ),
    Case(
        "GPU pinned by the RuntimeClass",
        spec("gvisor", containers=[gpu_container()]),
        rt(),
        classes=(runtime_class("gvisor", "runsc", {"pool": "sandbox", **A100}),),
    ),
    Case(
        "GPU on the configured nvproxy pool only",
        spec("gvisor", containers=[gpu_container()], nodeSelector=A100),
        rt(("STK-RT-006", p("nodeSelector", "pool"))),
        config=({"sandbox": {"baremetal": {"nvproxy": {"node_selector": {"pool": "nvproxy"}}}}},),
    ),
    Case(
        "MIG slice in a sandbox",
        spec("gvisor", containers=[gpu_container("nvidia.com/mig-1g.10gb")], nodeSelector=A100),
        rt(("STK-RT-006", p("containers", 0, "resources", "limits", "nvidia.com/mig-1g.10gb"))),
    ),
    # ---- AKS (selected by the cluster's name) ----
    Case(
        "aks: Kata class",
        spec("kata-vm-isolation"),
        rt(),
        classes=(KATA_AKS,),
        cluster="aks-prod-1",
        config=(AKS_CLUSTERS,),
    ),
    Case(
        "aks: gVisor is not offered",
        spec("gvisor"),
        rt(("STK-RT-001", RT_CLASS), ("STK-RT-003", RT_CLASS)),
        cluster="aks-prod-1",
        config=(AKS_CLUSTERS,),
    ),
    Case(
        "aks: sandboxed GPU is not satisfiable",
        spec("kata-vm-isolation", containers=[gpu_container()], nodeSelector=A100),
        rt(("STK-RT-006", p("containers", 0, "resources", "limits", "nvidia.com/gpu"))),
        classes=(KATA_AKS,),
        cluster="aks-prod-1",
        config=(AKS_CLUSTERS,),
    ),
    Case(
        "aks: missing Kata class",
        spec("kata-vm-isolation"),
        rt(("STK-RT-002", RT_CLASS)),
        classes=(),
        complete=True,
        cluster="aks-prod-1",
        config=(AKS_CLUSTERS,),
    ),
    Case(
        "other cluster keeps the default profile",
        spec("gvisor"),
        rt(),
        cluster="onprem-1",
        config=(AKS_CLUSTERS,),
    ),
]


def evaluate(case: Case, kind: str) -> tuple[dict[str, Any], list[Finding]]:
    obj = wrap(kind, case.spec, case.labels)
    inv = case.inventory(obj)
    ns = case.namespace["metadata"]["name"]
    findings = evaluator(case.config_text).evaluate(
        Resource(obj), namespace=namespace_info(case.namespace, ns), facts=facts_for(obj, inv)
    )
    return obj, findings


def rt_verdict(kind: str, findings: Iterable[Finding]) -> frozenset[tuple[str, tuple[Any, ...]]]:
    prefix = TEMPLATE_PATHS[kind]
    out = set()
    for f in findings:
        if f.rule.id.startswith("STK-RT-"):
            assert tuple(f.path[: len(prefix)]) == prefix, (kind, f.path)
            out.add((f.rule.id, tuple(f.path[len(prefix) :])))
    return frozenset(out)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("kind", WORKLOAD_KINDS)
def test_rules_per_profile_for_every_workload_kind(case: Case, kind: str) -> None:
    _, findings = evaluate(case, kind)
    assert rt_verdict(kind, findings) == case.expected


# ---- the summary's Python decisions agree with the rules ---------------------------------------------

STATUS_RULES = {
    "sandboxed": set(),
    "unverified": set(),
    "class-missing": {"STK-RT-002"},
    "not-a-sandbox-handler": {"STK-RT-003"},
}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_summary_status_agrees_with_the_rules(case: Case) -> None:
    obj, findings = evaluate(case, "Deployment")
    config = parse_config(case.config_text)
    summary = sb.sandbox_summary(case.inventory(obj), [obj], config)
    listed = [(s, e) for s, entries in summary["highRisk"].items() for e in entries]
    fired = {f.rule.id for f in findings} & {"STK-RT-001", "STK-RT-002", "STK-RT-003"}
    if not listed:
        assert "STK-RT-001" not in fired, "the rules call it high-risk, the summary does not"
        return
    ((status, entry),) = listed
    assert entry["kind"] == "Deployment" and entry["runtimeClassName"] == case.spec.get("runtimeClassName")
    if status == "unsandboxed":  # a class named like a sandbox may also be reported for its handler
        assert "STK-RT-001" in fired and fired <= {"STK-RT-001", "STK-RT-003"}, fired
    else:
        assert fired == STATUS_RULES[status], status
    assert summary["counts"][status] == 1 and sum(summary["counts"].values()) == 1


# ---- RuntimeClass objects ----------------------------------------------------------------------------


def class_findings(
    rc: Mapping[str, Any], *, cluster: str | None = None, config: str = ""
) -> set[tuple[str, tuple[Any, ...]]]:
    """STK-RT findings of a RuntimeClass (the VM's, checked against the interpreter's)."""
    ev = evaluator(config)
    inv = inventory([rc], complete=True, cluster=cluster)
    found = ev.evaluate(Resource(dict(rc)), facts=facts_for(rc, inv))
    engine = ev.engine
    assert isinstance(engine, EmbeddedEngine) and engine.uses_vm
    inp = ev.build_input(Resource(dict(rc)), facts=facts_for(rc, inv))
    interpreted = engine.evaluate_interpreted(
        "RuntimeClass", engine.rules_for("RuntimeClass"), orjson.dumps(inp).decode()
    )
    assert {(v.rule.id, v.path, v.msg) for v in interpreted} == {
        (f.rule.id, f.path, f.message) for f in found
    }
    return {(f.rule.id, f.path) for f in found}


def test_runtime_class_rules_bare_metal() -> None:
    assert class_findings(GVISOR) == set()
    assert class_findings(runtime_class("gvisor", "runc", {"pool": "s"})) == {("STK-RT-003", ("handler",))}
    assert class_findings(runtime_class("kata-qemu", "kata-qemu")) == {
        ("STK-RT-005", ("scheduling", "nodeSelector"))
    }
    assert class_findings(runtime_class("sandbox-x", None, {"pool": "s"})) == {("STK-RT-003", ("handler",))}
    assert class_findings(runtime_class("nvidia", "nvidia")) == set()
    assert class_findings(runtime_class("fast", "runsc")) == {("STK-RT-005", ("scheduling", "nodeSelector"))}


def test_runtime_class_rules_aks() -> None:
    aks = config_text(AKS_CLUSTERS)
    assert class_findings(KATA_AKS, cluster="aks-1", config=aks) == set()
    preview = runtime_class(
        "kata-mshv-vm-isolation", "kata", {"kubernetes.azure.com/kata-mshv-vm-isolation": "true"}
    )
    assert class_findings(preview, cluster="aks-1", config=aks) == set()
    assert class_findings(GVISOR, cluster="aks-1", config=aks) == {
        ("STK-RT-003", ("handler",)),
        ("STK-RT-005", ("scheduling", "nodeSelector")),
    }
    assert class_findings(GVISOR, cluster="onprem-1", config=aks) == set()


# ---- the facts ---------------------------------------------------------------------------------------


def test_facts_follow_inventory_completeness() -> None:
    pod = wrap("Pod", spec("gvisor"), {})
    known = sb.facts(pod, inventory([GVISOR], complete=False, cluster="c1"))["runtimeClass"]
    assert known == {
        "cluster": "c1",
        "name": "gvisor",
        "known": True,
        "exists": True,
        "handler": "runsc",
        "nodeSelector": {"pool": "sandbox"},
        "tolerations": [],
        "overhead": None,
    }
    partial = sb.facts(pod, inventory([], complete=False, cluster=None))["runtimeClass"]
    assert (partial["known"], partial["exists"], partial["handler"]) == (False, None, None)
    complete = sb.facts(pod, inventory([], complete=True, cluster=None))["runtimeClass"]
    assert complete["exists"] is False
    unset = sb.facts(wrap("CronJob", spec(), {}), inventory([GVISOR], complete=True, cluster=None))[
        "runtimeClass"
    ]
    assert unset["name"] is None and unset["known"] is False
    assert sb.facts({"kind": "ConfigMap", "metadata": {"name": "x"}}, Inventory()) == {}


def test_facts_of_a_runtime_class_describe_itself() -> None:
    rc = {**runtime_class("kata", "kata-qemu", {"pool": "k"}), "overhead": {"podFixed": {"memory": "160Mi"}}}
    rc["scheduling"]["tolerations"] = [{"key": "sandbox", "operator": "Exists"}]
    got = sb.facts(rc, Inventory(cluster="bm-1"))["runtimeClass"]
    assert got["cluster"] == "bm-1" and got["handler"] == "kata-qemu" and got["known"] is True
    assert got["overhead"] == {"memory": "160Mi"} and got["tolerations"] == [
        {"key": "sandbox", "operator": "Exists"}
    ]


def test_facts_reach_every_workload_kind() -> None:
    inv = inventory([GVISOR], complete=True, cluster=None)
    for kind in WORKLOAD_KINDS:
        assert facts_for(wrap(kind, spec("gvisor"), {}), inv)["runtimeClass"]["handler"] == "runsc", kind


# ---- the audit's summary -----------------------------------------------------------------------------


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def test_sandbox_summary_reports_classes_nodes_and_workloads() -> None:
    workloads = [
        wrap("Deployment", spec("gvisor"), {}),
        wrap("Job", spec(), {}),
        wrap("Pod", spec("runc-fake"), {}),
        wrap("StatefulSet", spec("kata"), {}),
        wrap("CronJob", spec("gvisor", containers=[gpu_container()]), {}),
        {**wrap("Deployment", spec(), {}), "metadata": {"name": "ordinary", "namespace": "apps"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "eval"}},
    ]
    fake = runtime_class("runc-fake", "runc")
    plain = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}
    inv = inventory([SANDBOX_NS, plain, GVISOR, fake], complete=True, cluster="bm-1")
    nodes = [node("n1", pool="sandbox"), node("n2", pool="general"), node("n3", pool="sandbox", gpu="a100")]
    out = sb.sandbox_summary(inv, workloads, Config(), nodes)
    assert (out["cluster"], out["profile"], out["complete"]) == ("bm-1", "baremetal", True)
    assert out["classes"] == [
        {
            "name": "gvisor",
            "handler": "runsc",
            "sandboxHandler": True,
            "approved": True,
            "nodeSelector": {"pool": "sandbox"},
            "nodes": ["n1", "n3"],
        },
        {
            "name": "runc-fake",
            "handler": "runc",
            "sandboxHandler": False,
            "approved": False,
            "nodeSelector": {},
            "nodes": ["n1", "n2", "n3"],
        },
    ]
    assert out["sandboxAvailable"] is True
    names = {s: [(e["kind"], e["runtimeClassName"], e["gpu"]) for e in v] for s, v in out["highRisk"].items()}
    assert names == {
        "sandboxed": [("Deployment", "gvisor", False), ("CronJob", "gvisor", True)],
        "unverified": [],
        "class-missing": [("StatefulSet", "kata", False)],
        "not-a-sandbox-handler": [],
        "unsandboxed": [("Job", None, False), ("Pod", "runc-fake", False)],
    }
    assert out["counts"] == {
        "sandboxed": 2,
        "unverified": 0,
        "class-missing": 1,
        "not-a-sandbox-handler": 0,
        "unsandboxed": 2,
    }
    assert orjson.loads(orjson.dumps(out)) == out  # JSON-ready for the audit report


def test_sandbox_summary_partial_inventory_and_aks_profile() -> None:
    cfg = parse_config(config_text(AKS_CLUSTERS))
    inv = inventory([SANDBOX_NS, runtime_class("gvisor-fake", "runc")], complete=False, cluster="aks-west")
    out = sb.sandbox_summary(inv, [wrap("Job", spec("kata-vm-isolation"), {})], cfg)
    assert out["profile"] == "aks" and out["sandboxAvailable"] is None  # not seen, not absent
    assert out["classes"][0]["nodes"] is None and out["classes"][0]["sandboxHandler"] is False
    assert out["counts"]["unverified"] == 1
    labelled = wrap("Job", spec(), SANDBOX_LABEL)
    labelled["metadata"]["namespace"] = "elsewhere"
    assert sb.sandbox_summary(inv, [labelled], cfg)["counts"]["unsandboxed"] == 1
    # A whole AKS cluster whose only class is gVisor offers no sandbox of its profile.
    bare = sb.sandbox_summary(inventory([GVISOR], complete=True, cluster="aks-1"), [], cfg)
    assert bare["sandboxAvailable"] is False and bare["counts"] == dict.fromkeys(sb.STATUSES, 0)


# ---- configuration -----------------------------------------------------------------------------------


def test_config_defaults_and_profile_selection() -> None:
    cfg = Config().sandbox
    assert cfg.profile_for(None) == "baremetal"
    assert parse_config(STARTER_CONFIG).sandbox == cfg
    multi = parse_config(
        "sandbox:\n  profile: aks\n  clusters:\n"
        "    - {clusters: ['bm-*', 'gpu-*'], profile: baremetal}\n"
        "    - {clusters: ['gpu-aks-*'], profile: aks}\n"
    ).sandbox
    assert [multi.profile_for(c) for c in (None, "bm-1", "gpu-7", "gpu-aks-2", "other")] == [
        "aks",
        "baremetal",
        "baremetal",
        "aks",
        "aks",
    ]
    assert multi.settings("aks").handlers == ("kata*",)


def test_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"sandbox\.selectors\.0\.pod_labels: .*needs namespaces"):
        parse_config("sandbox:\n  selectors:\n    - {}\n")
    with pytest.raises(ConfigError, match=r"stockade.yaml:2: sandbox\.profile"):
        parse_config("sandbox:\n  profile: gke\n")
    with pytest.raises(ConfigError, match=r"sandbox\.aks\.nvproxy: unknown key"):
        parse_config("sandbox:\n  aks: {nvproxy: {}}\n")
    with pytest.raises(ConfigError, match=r"sandbox\.clusters\.0\.clusters"):
        parse_config("sandbox:\n  clusters: [{clusters: [], profile: aks}]\n")


def test_partial_profile_override_keeps_the_platform_defaults() -> None:
    cfg = parse_config("sandbox:\n  aks: {classes: [kata-vm-isolation]}\n").sandbox
    assert cfg.aks.handlers == ("kata*",) and len(cfg.aks.node_selectors) == 2


# ---- the compiled VM agrees with the interpreter -----------------------------------------------------


def test_vm_and_interpreter_agree() -> None:
    for case in CASES:
        ev = evaluator(case.config_text)
        engine = ev.engine
        assert isinstance(engine, EmbeddedEngine) and engine.uses_vm, getattr(engine, "vm_error", None)
        for kind in ("Pod", "CronJob"):
            obj = wrap(kind, case.spec, case.labels)
            inp = ev.build_input(
                Resource(obj),
                namespace=namespace_info(case.namespace, "eval"),
                facts=facts_for(obj, case.inventory(obj)),
            )
            vm = engine.evaluate(kind, inp)
            interpreted = engine.evaluate_interpreted(
                kind, engine.rules_for(kind), orjson.dumps(inp).decode()
            )
            assert sorted((v.rule.id, v.path, v.msg) for v in vm) == sorted(
                (v.rule.id, v.path, v.msg) for v in interpreted
            ), (case.name, kind)


@pytest.mark.parametrize("controller", [None, False, True])
def test_the_vm_itself_answers_for_a_pod_owned_by_a_sandbox(controller: bool | None) -> None:
    """A Pod whose owner is an agent Sandbox (high-risk) is judged by the compiled VM itself, with
    the reason spelled out: not answered undefined and handed to the interpreter. The VM answers
    undefined where the first branch of an `else` chain iterates and fails (the owner that is not
    the controller), which `kind_of_pods` once did."""
    owner: dict[str, Any] = {"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "name": "s1"}
    if controller is not None:
        owner["controller"] = controller
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "agent-run", "namespace": "agents", "ownerReferences": [owner]},
        "spec": {"containers": [{"name": "agent", "image": "registry.example.com/agent:1.0"}]},
    }
    ev = evaluator("{}\n")
    engine = ev.engine
    assert isinstance(engine, EmbeddedEngine)
    facts = facts_for(obj, Inventory())
    inp = ev.build_input(Resource(obj), namespace=namespace_info(None, "agents"), facts=facts)
    raw = engine.compiled_json("Pod", orjson.dumps(inp).decode(), bounded=True)
    assert raw is not None  # the VM's own answer, without an undefined value in it
    reason = "a Pod of Sandbox s1" if controller else "kind Pod"
    assert any(reason in v["msg"] for v in orjson.loads(raw)["STK-RT-001"])
