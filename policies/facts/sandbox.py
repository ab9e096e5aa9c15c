"""The RuntimeClass a workload names, and the per-cluster sandbox report of the audit.

Whether a workload is really sandboxed depends on another object: the RuntimeClass it names must
exist, and its `handler` (the CRI runtime the kubelet asks for) must be gVisor (`runsc`) or Kata
(`kata*`), whatever the class is called. A class named `gvisor` whose handler is `runc` sandboxes
nothing. So the class is looked up here, once, by the same code in every gate, and handed to the
`runtime` rules (policies/rego/runtime/) as:

    input.facts.runtimeClass = {
        "cluster": "aks-prod-1" | null,  # Inventory.cluster: selects the sandbox profile; null in a scan
        "name": "gvisor" | null,          # the pod's spec.runtimeClassName (a RuntimeClass: its own name)
        "known": true | false,            # the RuntimeClass object was seen
        "exists": true | false | null,    # null: not seen in an incomplete inventory (a partial scan)
        "handler": "runsc" | null,        # the class's handler, when known
        "nodeSelector": {...},            # the class's scheduling.nodeSelector ({} when none or unknown)
        "tolerations": [...],             # the class's scheduling.tolerations
        "overhead": {...} | null,         # the class's overhead.podFixed
    }

Only workloads (every kind with a pod template) and RuntimeClass objects get it. In a scan the
inventory is the scanned set, which is incomplete: a class that is not in it is "unknown", never
"missing" (`exists: null`), so nothing is reported for a manifest repository that does not hold the
cluster's RuntimeClasses.

Which workloads are high-risk, which classes a profile approves and which handlers are sandboxes is
configuration (`sandbox:` in stockade.yaml), decided in Rego (policies/rego/lib/sandbox.rego) from
`data.stockade.config`, because analyzers do not see the configuration. The audit's per-cluster
summary (:func:`sandbox_summary`) decides the same questions in Python with the functions below;
tests/policies/test_sandbox.py checks that the two agree on every case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from stockade.policies.config.settings import (
    Config,
    SandboxConfig,
    SandboxProfile,
    SandboxProfileName,
    SandboxSelector,
    glob_match,
)
from stockade.policies.facts.inventory import Inventory
from stockade.policies.kinds.workloads import pod_template, pod_templates
from stockade.policies.model import is_mapping

SandboxStatus = Literal["sandboxed", "unverified", "class-missing", "not-a-sandbox-handler", "unsandboxed"]

#: NVIDIA MIG slices as extended resources (mixed strategy); nvproxy cannot sandbox them.
MIG_PREFIX = "nvidia.com/mig-"

#: Every status :func:`sandbox_summary` reports, in the order it lists them.
STATUSES: tuple[SandboxStatus, ...] = (
    "sandboxed",
    "unverified",
    "class-missing",
    "not-a-sandbox-handler",
    "unsandboxed",
)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if is_mapping(value) else {}


def _class_facts(
    cluster: str | None, name: str | None, rc: Mapping[str, Any] | None, complete: bool
) -> dict[str, Any]:
    scheduling = _mapping((rc or {}).get("scheduling"))
    tolerations = scheduling.get("tolerations")
    overhead = _mapping((rc or {}).get("overhead")).get("podFixed")
    handler = (rc or {}).get("handler")
    return {
        "cluster": cluster,
        "name": name,
        "known": rc is not None,
        "exists": True if rc is not None else (False if complete else None),
        "handler": handler if isinstance(handler, str) else None,
        "nodeSelector": dict(_mapping(scheduling.get("nodeSelector"))),
        "tolerations": list(tolerations) if isinstance(tolerations, list) else [],
        "overhead": dict(overhead) if is_mapping(overhead) else None,
    }


def runtime_class_name(pod_spec: Mapping[str, Any]) -> str | None:
    """spec.runtimeClassName, None when unset or empty (the cluster's default runtime)."""
    name = pod_spec.get("runtimeClassName")
    return name if isinstance(name, str) and name else None


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.runtimeClass` for a RuntimeClass, or one pod spec of a workload (``input.pod``, by
    default its first)."""
    if obj.get("kind") == "RuntimeClass":
        name = _mapping(obj.get("metadata")).get("name")
        return {
            "runtimeClass": _class_facts(
                inventory.cluster, name if isinstance(name, str) else None, obj, True
            )
        }
    pod = pod_template(obj) if pod is None else pod
    if pod is None:
        return {}
    name = runtime_class_name(pod["spec"])
    rc = inventory.get("RuntimeClass", None, name) if name is not None else None
    return {"runtimeClass": _class_facts(inventory.cluster, name, rc, inventory.complete)}


# ---- the decisions of policies/rego/lib/sandbox.rego, for the audit's summary -----------------------


def _labels_match(want: Mapping[str, str], *have: Mapping[str, Any]) -> bool:
    return all(any(h.get(k) == v for h in have) for k, v in want.items())


def high_risk_selector(
    config: SandboxConfig,
    namespace: str | None,
    namespace_labels: Mapping[str, Any],
    object_labels: Mapping[str, Any],
    pod_labels: Mapping[str, Any],
) -> SandboxSelector | None:
    """The first selector of `sandbox.selectors` that makes a workload high-risk, or None."""
    for sel in config.selectors:
        if (
            glob_match(sel.namespaces, namespace)
            and _labels_match(sel.namespace_labels, namespace_labels)
            and _labels_match(sel.pod_labels, object_labels, pod_labels)
        ):
            return sel
    return None


def approved_class(settings: SandboxProfile, name: str | None) -> bool:
    """The profile approves this RuntimeClass name (an exact name) for high-risk workloads."""
    return name is not None and name in settings.classes


def sandbox_handler(settings: SandboxProfile, handler: str | None) -> bool:
    """The handler is one of the profile's sandbox runtimes (runsc, kata*)."""
    return handler is not None and glob_match(settings.handlers, handler)


def claims_sandbox(config: SandboxConfig, settings: SandboxProfile, name: str | None) -> bool:
    """The class presents itself as a sandbox: approved by the profile, or named like one."""
    return name is not None and (approved_class(settings, name) or glob_match(config.class_patterns, name))


def status_of(settings: SandboxProfile, class_facts: Mapping[str, Any]) -> SandboxStatus:
    """How well a high-risk workload is sandboxed, from its `input.facts.runtimeClass`."""
    name = class_facts.get("name")
    if not approved_class(settings, name if isinstance(name, str) else None):
        return "unsandboxed"
    if class_facts.get("known"):
        return (
            "sandboxed" if sandbox_handler(settings, class_facts.get("handler")) else "not-a-sandbox-handler"
        )
    return "class-missing" if class_facts.get("exists") is False else "unverified"


def selects(node_labels: Mapping[str, Any], node_selector: Mapping[str, Any]) -> bool:
    """A node carries every label of a nodeSelector (an empty selector selects every node)."""
    return all(node_labels.get(k) == v for k, v in node_selector.items())


def _ref(obj: Mapping[str, Any]) -> dict[str, Any]:
    md = _mapping(obj.get("metadata"))
    return {"kind": obj.get("kind"), "namespace": md.get("namespace"), "name": md.get("name")}


def sandbox_summary(
    inventory: Inventory,
    workloads: Iterable[Mapping[str, Any]],
    config: Config,
    nodes: Iterable[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The audit's per-cluster sandbox report, as plain JSON-ready data.

    `inventory` is the cluster's (its `cluster` picks the profile; its Namespaces give the labels the
    selectors read; its RuntimeClasses are reported); `workloads` are the objects to classify (any
    kind with a pod template; the audit passes one per owner); `nodes` are the cluster's Node objects,
    or None when they were not listed, and then no node matching is reported (`nodes: null`). Node
    is deliberately not an indexed kind: only this summary needs nodes, and the webhook's cache must
    not watch them.

    Returns::

        {
          "cluster": str | None, "profile": "aks" | "baremetal", "complete": bool,
          "classes": [{"name", "handler", "sandboxHandler": bool, "approved": bool,
                       "nodeSelector": {...}, "nodes": [node names] | None}],   # sorted by name
          "sandboxAvailable": bool | None,     # some class is approved and has a sandbox handler;
                                               # None: none seen in an incomplete inventory
          "highRisk": {status: [{"kind", "namespace", "name", "runtimeClassName", "gpu": bool}]},
          "counts": {status: int},             # every status of STATUSES, zeros included
        }

    Statuses of high-risk workloads (those a `sandbox.selectors` entry matches): `sandboxed` (an
    approved class with a sandbox handler), `unverified` (an approved class not seen in an incomplete
    inventory), `class-missing` (an approved class the cluster lacks: STK-RT-002), `not-a-sandbox-handler`
    (an approved class whose handler is not a sandbox: STK-RT-003), `unsandboxed` (no class, or one the
    profile does not approve: STK-RT-001). `gpu` tells whether the pods ask for GPUs (STK-RT-006
    decides whether that can be satisfied).
    """
    sandbox = config.sandbox
    profile: SandboxProfileName = sandbox.profile_for(inventory.cluster)
    settings = sandbox.settings(profile)
    node_list = None if nodes is None else list(nodes)
    classes = []
    for rc in sorted(
        inventory.of_kind("RuntimeClass"), key=lambda o: str(_mapping(o.get("metadata")).get("name"))
    ):
        cf = facts(rc, inventory)["runtimeClass"]
        matching = None
        if node_list is not None:
            matching = sorted(
                str(_mapping(n.get("metadata")).get("name"))
                for n in node_list
                if selects(_mapping(_mapping(n.get("metadata")).get("labels")), cf["nodeSelector"])
            )
        classes.append(
            {
                "name": cf["name"],
                "handler": cf["handler"],
                "sandboxHandler": sandbox_handler(settings, cf["handler"]),
                "approved": approved_class(settings, cf["name"]),
                "nodeSelector": cf["nodeSelector"],
                "nodes": matching,
            }
        )
    available: bool | None = any(c["approved"] and c["sandboxHandler"] for c in classes)
    if not available and not inventory.complete:
        available = None
    by_status: dict[str, list[dict[str, Any]]] = {s: [] for s in STATUSES}
    for obj, pod in ((o, p) for o in workloads for p in pod_templates(o)):
        md = _mapping(obj.get("metadata"))
        namespace = md.get("namespace")
        ns_obj = inventory.get("Namespace", None, namespace) if isinstance(namespace, str) else None
        ns_labels = _mapping(_mapping((ns_obj or {}).get("metadata")).get("labels"))
        pod_labels = _mapping(pod["metadata"].get("labels"))
        selector = high_risk_selector(sandbox, namespace, ns_labels, _mapping(md.get("labels")), pod_labels)
        if selector is None and not pod["highRisk"]:
            continue
        cf = facts(obj, inventory, pod)["runtimeClass"]
        entry = {
            **_ref(obj),
            **({"template": pod["template"]} if pod["template"] else {}),
            "runtimeClassName": cf["name"],
            "gpu": uses_gpu(pod["spec"], config.gpu.resources),
        }
        by_status[status_of(settings, cf)].append(entry)
    return {
        "cluster": inventory.cluster,
        "profile": profile,
        "complete": inventory.complete,
        "classes": classes,
        "sandboxAvailable": available,
        "highRisk": by_status,
        "counts": {s: len(v) for s, v in by_status.items()},
    }


def uses_gpu(pod_spec: Mapping[str, Any], gpu_resources: Iterable[str]) -> bool:
    """Some init or regular container asks for a GPU (a resource of `gpu.resources`, or an NVIDIA MIG
    slice `nvidia.com/mig-*`) in a quantity written as something other than zero."""
    names = set(gpu_resources)
    for field in ("initContainers", "containers"):
        for c in pod_spec.get(field) or ():
            res = _mapping(_mapping(c).get("resources"))
            for kind in ("limits", "requests"):
                for r, q in _mapping(res.get(kind)).items():
                    gpu = r in names or str(r).startswith(MIG_PREFIX)
                    if gpu and str(q).strip() not in ("0", "0m", "None", ""):
                        return True
    return False


__all__ = [
    "STATUSES",
    "SandboxStatus",
    "approved_class",
    "claims_sandbox",
    "facts",
    "high_risk_selector",
    "runtime_class_name",
    "sandbox_handler",
    "sandbox_summary",
    "selects",
    "status_of",
    "uses_gpu",
]
