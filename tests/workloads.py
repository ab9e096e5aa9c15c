"""Objects of workload kinds for tests: built from the kinds table's own pod paths."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from stockade.policies.kinds.api import WILDCARD, KindInfo, object_kind
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS

#: A privileged Pod as a manifest (the CLI tests' bad input).
BAD_POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: bad
  namespace: ml
spec:
  containers:
    - name: app
      image: nginx
      securityContext:
        privileged: true
"""

PRIVILEGED = {
    "name": "injected",
    "image": "registry.example/injected@sha256:" + "a" * 64,
    "securityContext": {"privileged": True},
}


def at(obj: Any, path: Sequence[str | int]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _written(obj: Any, path: Sequence[str | int]) -> bool:
    try:
        at(obj, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def with_violations_in_last_pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of a workload object whose last pod spec runs a privileged container on the host network."""
    out = copy.deepcopy(obj)
    # the last pod spec written in the object (not one an operator builds where none is: a RayJob's
    # default submitter)
    last = [p for p in DEFAULT_WORKLOADS.pods(out) if _written(out, p["specPath"])][-1]
    spec = at(out, last["specPath"])
    form = DEFAULT_WORKLOADS.info(out).pods[-1].form  # type: ignore[union-attr]
    # a SparkPodSpec's and an Argo template's own containers are its sidecars, which follow the
    # Spark container or the template's main container
    spec.setdefault("sidecars" if form in ("spark", "argo") else "containers", []).append(
        copy.deepcopy(PRIVILEGED)
    )
    if form == "argo":  # a template has no hostNetwork (its workflow's is every pod's): a patch
        spec["podSpecPatch"] = '{"hostNetwork": true}'
    else:
        spec["hostNetwork"] = True
    return out


def build_workload(info: KindInfo, items: int = 3) -> dict[str, Any]:
    """An object of `info` with `items` entries under every wildcard, each pod spec a clean container."""
    group_version = f"{info.group}/{info.version}"
    obj: dict[str, Any] = {
        "apiVersion": group_version,
        "kind": object_kind(info),
        # a kind keyed `Kind.group` shares its name with another group's (Katib's Experiment and
        # Argo Rollouts'): its object gets a name of its own, so that one audit tells them apart
        "metadata": {
            "name": "w" if "." not in info.kind else "w-" + info.group.split(".")[0],
            **({"namespace": "ml"} if info.namespaced else {}),
        },
    }
    for pod_path in info.pods:
        _fill(obj, pod_path.path, pod_path.form, items)
    _groups_of_two(obj)
    return obj


def _groups_of_two(node: Any) -> None:
    """LeaderWorkerSet groups of a leader and a worker: at its default `size` of 1 a group with a
    leaderTemplate has no worker pod (its workerTemplate makes none)."""
    if isinstance(node, dict):
        if "leaderTemplate" in node and "workerTemplate" in node:
            node.setdefault("size", 2)
        for value in node.values():
            _groups_of_two(value)
    elif isinstance(node, list):
        for value in node:
            _groups_of_two(value)


def clean_pod_spec() -> dict[str, Any]:
    return {"containers": [{"name": "main", "image": "registry.example/app@sha256:" + "b" * 64}]}


def _fill(node: dict[str, Any], path: tuple[str, ...], form: str, items: int) -> None:
    if not path:
        if form in ("template", "ray-submitter"):  # a PodTemplateSpec
            node.setdefault("metadata", {"labels": {"app": "w"}})
            node.setdefault("spec", clean_pod_spec())
        elif form == "spark":  # a SparkPodSpec: the operator builds the container from its fields
            node.setdefault("image", clean_pod_spec()["containers"][0]["image"])
        elif form == "argo":  # an Argo Workflows container template: its pod's one container
            node.setdefault("container", {"image": clean_pod_spec()["containers"][0]["image"]})
        elif form == "object":  # an object a controller creates (a Katib trial's Job)
            node.update(
                {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": clean_pod_spec()}}}
            )
        else:
            node.update(clean_pod_spec())
        return
    head, rest = path[0], path[1:]
    if not rest or rest[0] != WILDCARD:
        _fill(node.setdefault(head, {}), rest, form, items)
        return
    if "ReplicaSpecs" in head:  # Kubeflow training jobs: a map of replica type -> replica spec
        mapping = node.setdefault(head, {})
        for name in ("Master", "Worker", "Evaluator")[:items]:
            _fill(mapping.setdefault(name, {}), rest[1:], form, items)
        return
    children = node.setdefault(head, [])
    while len(children) < items:
        children.append({"name": f"item-{len(children)}"})
    for child in children:
        _fill(child, rest[1:], form, items)


def token_secret(ns: str, name: str, account: str) -> dict[str, Any]:
    """A legacy ServiceAccount token Secret (the token controller's type and annotation), with a
    canary token: what reads it must never show its data."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/service-account-token",
        "metadata": {
            "name": name,
            "namespace": ns,
            "annotations": {"kubernetes.io/service-account.name": account},
        },
        "data": {"token": "Y2FuYXJ5LXRva2Vu"},
    }
