"""How a workload's own object exposes it outside the cluster, for rules that only see its pod specs.

Custom workload kinds are evaluated per pod spec, with the object's metadata only
(policies/evaluate.py), so what the rest of the object says about exposure is read here:

    input.facts.exposure = {
        "rayHead": [{"path": [...], "type": "LoadBalancer"}],  # a Ray head Service of that type
        "selectedImages": ["rayproject/ray:2.9.0", ...],      # a Service: the images of the pods
    }                                                         # its selector matches (inventory)

KubeRay creates the head Service from the RayCluster spec's ``headGroupSpec``: ``serviceType``, or
the ``type`` of a user-given ``headService`` (ray-operator/apis/ray/v1 raycluster_types.go,
HeadGroupSpec). A RayJob holds the RayCluster spec in ``spec.rayClusterSpec``, a RayService in
``spec.rayClusterConfig``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stockade.policies.facts.inventory import Inventory
from stockade.policies.facts.rbac import selector_matches

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
    """`input.facts.exposure` for Ray custom resources and Services; {} for other objects."""
    if obj.get("kind") == "Service" and obj.get("apiVersion") == "v1":
        return _service(obj, inventory)
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


def _service(obj: Mapping[str, Any], inventory: Inventory) -> dict[str, Any]:
    """The images of the pods a Service of type LoadBalancer or NodePort sends traffic to: the pods of
    its namespace's workloads and Pods whose labels its selector matches (as far as the gate's
    inventory holds them; a Service without a selector selects none)."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping) or spec.get("type") not in EXPOSED_TYPES:
        return {}
    selector = spec.get("selector")
    if not isinstance(selector, Mapping) or not selector:
        return {}
    namespace = str((obj.get("metadata") or {}).get("namespace") or "default")
    images = {
        image
        for labels, pod_images in inventory.pod_shapes(namespace)
        if selector_matches({"matchLabels": selector}, labels)
        for image in pod_images
    }
    return {"exposure": {"selectedImages": sorted(images)}} if images else {}
