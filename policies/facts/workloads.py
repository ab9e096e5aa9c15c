"""The pod template of every workload kind, so that pod rules are written once.

A rule sees `input.pod = {"spec", "metadata", "path"}` whatever kind was submitted; `path` is where
the template sits in the object, so findings point at the field the user wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# kind -> path of the pod template (an object with metadata + spec) inside the object.
TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": (),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}

WORKLOAD_KINDS: tuple[str, ...] = tuple(TEMPLATE_PATHS)


def pod_template(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return {"spec", "metadata", "path"} for a workload object, or None for other kinds."""
    path = TEMPLATE_PATHS.get(str(obj.get("kind") or ""))
    if path is None:
        return None
    node: Any = obj
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
        if node is None:
            break
    if not isinstance(node, Mapping):
        node = {}
    spec = node.get("spec")
    metadata = node.get("metadata")
    return {
        "spec": spec if isinstance(spec, Mapping) else {},
        "metadata": metadata if isinstance(metadata, Mapping) else {},
        "path": list(path),
    }
