"""How a workload's own object exposes it outside the cluster, for rules that only see its pod specs.

Custom workload kinds are evaluated per pod spec, with the object's metadata only
(policies/evaluate.py), so what the rest of the object says about exposure is read here:

    input.facts.exposure = {
        "rayHead": [{"path": [...], "type": "LoadBalancer"}],  # a Ray head Service of that type
    }

KubeRay creates the head Service from the RayCluster spec's ``headGroupSpec``: ``serviceType``, or
the ``type`` of a user-given ``headService`` (ray-operator/apis/ray/v1 raycluster_types.go,
HeadGroupSpec). A RayJob holds the RayCluster spec in ``spec.rayClusterSpec``, a RayService in
``spec.rayClusterConfig``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory

RAY_GROUP = "ray.io"
#: kind -> where the RayClusterSpec sits
RAY_CLUSTER_SPECS: dict[str, tuple[str, ...]] = {
    "RayCluster": ("spec",),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayService": ("spec", "rayClusterConfig"),
}
EXPOSED_TYPES = frozenset({"LoadBalancer", "NodePort"})


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.exposure` for Ray custom resources; {} for other objects."""
    base = RAY_CLUSTER_SPECS.get(str(obj.get("kind")))
    if base is None or not str(obj.get("apiVersion", "")).startswith(f"{RAY_GROUP}/"):
        return {}
    node: Any = obj
    for key in base:
        node = node.get(key) if isinstance(node, Mapping) else None
    head = node.get("headGroupSpec") if isinstance(node, Mapping) else None
    if not isinstance(head, Mapping):
        return {}
    path = [*base, "headGroupSpec"]
    found = []
    if head.get("serviceType") in EXPOSED_TYPES:
        found.append({"path": [*path, "serviceType"], "type": head["serviceType"]})
    service = head.get("headService")
    spec = service.get("spec") if isinstance(service, Mapping) else None
    if isinstance(spec, Mapping) and spec.get("type") in EXPOSED_TYPES:
        found.append({"path": [*path, "headService", "spec", "type"], "type": spec["type"]})
    return {"exposure": {"rayHead": found}} if found else {}
