"""The peers of a reachability analysis: workloads (with their pod labels and named ports) and namespaces.

A workload is what owns pods: a Deployment, StatefulSet, DaemonSet, Job, CronJob... given as a
manifest, or a Pod, which stands for its controlling owner (``ownerReferences`` with
``controller: true``) when it has one. Names follow np-guard/netpol-analyzer: ``ns/name[Kind]``, an
owner reference without a kind is spelled ``Pod``, and objects without a namespace are in
``default``.

Several pods of one owner are one peer. When they differ in labels, named ports or host network,
each different pod is kept (same key, its own index; :attr:`Topology.variants`) so that the
reachability can check that no policy tells them apart: if none does, they are one peer again; if
one does, the analysis refuses, as netpol-analyzer does (policies/facts/netpol/reach.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stockade.policies.decoding.shape import at
from stockade.policies.facts.inventory import NAMESPACE_NAME_LABEL
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS, WorkloadKinds, group_of
from stockade.policies.kinds.workloads import _mapping as _map

DEFAULT_NAMESPACE = "default"


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


@dataclass(frozen=True, eq=False)
class Workload:
    index: int
    namespace: str
    name: str
    kind: str
    labels: Mapping[str, str]
    # (port name, protocol, number) of every named container port, for named-port resolution.
    named_ports: tuple[tuple[str, str, int], ...]
    host_network: bool
    key: str = ""  # ns/name[Kind], set by Topology.build (read millions of times by reachability)
    pod: str = ""  # the object it was read from (a Pod's own name), for messages

    def shape(self) -> tuple[Any, ...]:
        """What a policy can tell apart: labels, named ports, host network."""
        return (tuple(sorted(self.labels.items())), self.named_ports, self.host_network)


def _named_ports(spec: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    out: list[tuple[str, str, int]] = []
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            if not isinstance(container, Mapping):
                continue
            for port in container.get("ports") or ():
                if not isinstance(port, Mapping):
                    continue
                name, number = port.get("name"), port.get("containerPort")
                if isinstance(name, str) and name and isinstance(number, int):
                    out.append((name, str(port.get("protocol") or "TCP").upper(), number))
    return tuple(out)


#: KubeVirt's kinds whose objects run virtual machines -> the path of their VirtualMachineInstance
#: template (metadata + spec) inside the object ([] for a VirtualMachineInstance itself)
KUBEVIRT_VMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("kubevirt.io", "VirtualMachine"): ("spec", "template"),
    ("kubevirt.io", "VirtualMachineInstanceReplicaSet"): ("spec", "template"),
    ("kubevirt.io", "VirtualMachineInstance"): (),
    ("pool.kubevirt.io", "VirtualMachinePool"): ("spec", "virtualMachineTemplate", "spec", "template"),
}
#: the labels virt-controller puts on a virt-launcher pod beside the VMI's own
#: (kubevirt.io/api core/v1: AppLabel, VirtualMachineNameLabel)
LAUNCHER_APP_LABEL = ("kubevirt.io", "virt-launcher")
VM_NAME_LABEL = "vm.kubevirt.io/name"


def _kubevirt_vm(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The VirtualMachineInstance template of a KubeVirt object that runs VMs, else None."""
    path = KUBEVIRT_VMS.get((group_of(obj.get("apiVersion")) or "", str(obj.get("kind") or "")))
    if path is None:
        return None
    return _map(at(obj, list(path)))


def _vm_ports(spec: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    """Named ports of a VMI's interfaces (``spec.domain.devices.interfaces[].ports``, the ports
    KubeVirt forwards to the guest; ``port`` and ``protocol`` as in a containerPort)."""
    out: list[tuple[str, str, int]] = []
    domain = _map(spec.get("domain"))
    for iface in _map(domain.get("devices")).get("interfaces") or ():
        if not isinstance(iface, Mapping):
            continue
        for port in iface.get("ports") or ():
            if isinstance(port, Mapping):
                name, number = port.get("name"), port.get("port")
                if isinstance(name, str) and name and isinstance(number, int):
                    out.append((name, str(port.get("protocol") or "TCP").upper(), number))
    return tuple(out)


def _identity(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(name, kind) of the workload an object stands for."""
    md = obj.get("metadata") or {}
    kind = str(obj.get("kind") or "")
    if kind in ("Pod", "VirtualMachineInstance"):
        for ref in md.get("ownerReferences") or ():
            # a static (mirror) pod is owned by its Node: it is a pod of its own, as netpol-analyzer
            # lists it (kube-system/etcd-node1[Pod]), not one peer with every static pod of the node
            if (
                isinstance(ref, Mapping)
                and ref.get("controller")
                and ref.get("name")
                and ref.get("kind") != "Node"
            ):
                return str(ref["name"]), str(ref.get("kind") or "Pod")
    return str(md.get("name") or ""), kind


def _vm_pod(obj: Mapping[str, Any], vmi: Mapping[str, Any]) -> dict[str, Any]:
    """The virt-launcher pod of a KubeVirt object, as a peer: the VMI's labels plus the two labels
    virt-controller adds (``kubevirt.io: virt-launcher``, ``vm.kubevirt.io/name: <VMI name>``; a
    VMI made by a VirtualMachine has its name), and the interfaces' named ports."""
    md, spec = _map(vmi.get("metadata")), _map(vmi.get("spec"))
    labels = _str_map(md.get("labels"))
    own = obj.get("metadata") or {}
    if str(obj.get("kind")) in ("VirtualMachine", "VirtualMachineInstance") and own.get("name"):
        labels.setdefault(VM_NAME_LABEL, str(own["name"]))
    labels.setdefault(*LAUNCHER_APP_LABEL)
    ports = [{"name": n, "protocol": p, "containerPort": num} for n, p, num in _vm_ports(spec)]
    return {
        "template": "",
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "compute", "ports": ports}]},
    }


@dataclass
class Topology:
    """Workloads and namespace labels, with memoized selector matching."""

    workloads: list[Workload] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    by_namespace: dict[str, list[Workload]] = field(default_factory=dict)
    # key -> the indices of an owner's pods that differ (labels, named ports, host network)
    variants: dict[str, list[int]] = field(default_factory=dict)
    _ns_cache: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _pod_cache: dict[tuple[str, str], frozenset[int]] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        objects: Iterable[Mapping[str, Any]],
        kinds: WorkloadKinds = DEFAULT_WORKLOADS,
        variants: bool = True,
    ) -> Topology:
        """Workloads: every pod spec of an object whose pods run (a RayCluster's head and each worker
        group, named ``ns/llm(workerGroupSpecs[gpu])[RayCluster]``); templates (PodTemplate, a
        TrainingRuntime) are not peers. With `variants`, the differing pods of one owner are kept."""
        topo = cls()
        seen: dict[str, list[Workload]] = {}
        for obj in objects:
            kind = str(obj.get("kind") or "")
            md = obj.get("metadata") or {}
            if kind == "Namespace":
                name = str(md.get("name") or "")
                labels = _str_map(md.get("labels"))
                labels[NAMESPACE_NAME_LABEL] = name
                topo.namespaces[name] = labels
                continue
            namespace = str(md.get("namespace") or DEFAULT_NAMESPACE)
            vm = _kubevirt_vm(obj)
            if vm is not None:
                pods = [_vm_pod(obj, vm)]
            else:
                info = kinds.info(obj)
                if info is None or not info.runs_pods:
                    continue
                pods = kinds.pods(obj)
            name, owner_kind = _identity(obj)
            for pod in pods:
                shown = f"{name}({pod['template']})" if pod["template"] else name
                wl = Workload(
                    index=len(topo.workloads),
                    namespace=namespace,
                    name=shown,
                    kind=owner_kind,
                    labels=_str_map(pod["metadata"].get("labels")),
                    named_ports=_named_ports(pod["spec"]),
                    host_network=pod["spec"].get("hostNetwork") is True,
                    key=f"{namespace}/{shown}[{owner_kind}]",
                    pod=f"{namespace}/{md.get('name') or ''}",
                )
                same = seen.setdefault(wl.key, [])
                if same and (not variants or any(w.shape() == wl.shape() for w in same)):
                    continue
                same.append(wl)
                if len(same) > 1:
                    topo.variants[wl.key] = [w.index for w in same]
                topo.workloads.append(wl)
                topo.by_namespace.setdefault(namespace, []).append(wl)
        for namespace in topo.by_namespace:
            topo.namespaces.setdefault(namespace, {NAMESPACE_NAME_LABEL: namespace})
        return topo

    def namespaces_matching(self, selector: Mapping[str, Any] | None) -> tuple[str, ...]:
        key = _selector_key(selector)
        hit = self._ns_cache.get(key)
        if hit is None:
            hit = tuple(n for n, labels in self.namespaces.items() if selector_matches(selector, labels))
            self._ns_cache[key] = hit
        return hit

    def pods_matching(self, namespace: str, selector: Mapping[str, Any] | None) -> frozenset[int]:
        key = (namespace, _selector_key(selector))
        hit = self._pod_cache.get(key)
        if hit is None:
            hit = frozenset(
                w.index for w in self.by_namespace.get(namespace, ()) if selector_matches(selector, w.labels)
            )
            self._pod_cache[key] = hit
        return hit


def _selector_key(selector: Mapping[str, Any] | None) -> str:
    return json.dumps(selector, sort_keys=True, separators=(",", ":"))


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Kubernetes LabelSelector semantics; an empty selector matches everything.

    An unknown operator matches nothing (the API server would have rejected the object).
    """
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(str(key)) != str(value):
            return False
    for expr in selector.get("matchExpressions") or ():
        if not isinstance(expr, Mapping):
            return False
        key = str(expr.get("key"))
        op = expr.get("operator")
        values = {str(v) for v in expr.get("values") or ()}
        present = key in labels
        if op == "In":
            ok = present and labels[key] in values
        elif op == "NotIn":
            ok = not present or labels[key] not in values
        elif op == "Exists":
            ok = present
        elif op == "DoesNotExist":
            ok = not present
        else:
            ok = False
        if not ok:
            return False
    return True
