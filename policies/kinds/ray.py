"""What KubeRay creates beside a Ray cluster's pods that decides how they are judged.

A RayClusterSpec (a RayCluster's ``spec``, a RayJob's ``spec.rayClusterSpec``, a RayService's
``spec.rayClusterConfig``) with ``networkPolicy`` makes KubeRay's NetworkPolicy controller
(ray-operator/controllers/ray/networkpolicy_controller.go) create one NetworkPolicy for the head pod
(``<cluster>-head``) and one per worker group (``<cluster>-workers-<group>``); KubeRay refuses the
object when the feature gate is off, so a cluster that declares one runs with them. Under ``DenyAll``
(the default mode) or ``DenyAllEgress`` each selects its pods for Egress and allows egress to the
pods of the same Ray cluster (``ray.io/cluster``), then the ``egressRules`` of ``head``, of the
group's ``workerGroups`` entry, else of ``worker`` (raycluster_types.go NetworkPolicyConfig).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stockade.policies.kinds.api import field_at

#: what a RayClusterSpec is under, by the kind holding it
_SPEC = {
    "RayCluster": ("spec",),
    "RayJob": ("spec", "rayClusterSpec"),
    "RayService": ("spec", "rayClusterConfig"),
}
_EGRESS_MODES = frozenset({"DenyAll", "DenyAllEgress"})
#: the name a RayJob's or RayService's cluster gets is generated when it runs
GENERATED = "<generated>"


def operator_network_policy(obj: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """The NetworkPolicy KubeRay creates for the pods of ``pod`` (a pod spec of ``obj``, with its
    ``path``) when it isolates them for egress, or None."""
    prefix = _SPEC.get(str(obj.get("kind") or ""))
    if prefix is None or not str(obj.get("apiVersion") or "").startswith("ray.io/"):
        return None
    spec = field_at(obj, prefix)
    config = spec.get("networkPolicy") if isinstance(spec, Mapping) else None
    if not isinstance(config, Mapping):
        return None
    mode = config.get("mode") or "DenyAll"  # +kubebuilder:default=DenyAll
    if mode not in _EGRESS_MODES:
        return None
    path = list(pod.get("path") or ())
    role = _role(path, len(prefix))
    if role is None:
        return None
    md = obj.get("metadata") or {}
    cluster = str(md.get("name") or "") if prefix == ("spec",) else GENERATED
    if role == "head":
        custom = config.get("head")
        selector = {"ray.io/cluster": cluster, "ray.io/node-type": "head"}
        name = f"{cluster}-head"
    else:
        group = str(field_at(spec, ("workerGroupSpecs", role, "groupName")) or "")
        custom = next(
            (
                g
                for g in config.get("workerGroups") or ()
                if isinstance(g, Mapping) and g.get("groupName") == group
            ),
            config.get("worker"),
        )
        selector = {"ray.io/cluster": cluster, "ray.io/node-type": "worker", "ray.io/group": group}
        name = f"{cluster}-workers-{group}"
    egress: list[Any] = [{"to": [{"podSelector": {"matchLabels": {"ray.io/cluster": cluster}}}]}]
    if isinstance(custom, Mapping):
        egress += [r for r in custom.get("egressRules") or () if isinstance(r, Mapping)]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": md.get("namespace")},
        "spec": {"podSelector": {"matchLabels": selector}, "policyTypes": ["Egress"], "egress": egress},
    }


def _role(path: Sequence[Any], depth: int) -> str | int | None:
    """ "head", a worker group's index, or None: where ``path`` (a pod template's) sits under the spec."""
    rest = list(path[depth:])
    if rest[:1] == ["headGroupSpec"]:
        return "head"
    if rest[:1] == ["workerGroupSpecs"] and len(rest) > 1 and isinstance(rest[1], int):
        return rest[1]
    return None


#: the container KubeRay adds to the head pod of an autoscaling cluster (common/pod.go
#: BuildAutoscalerContainer): its name and the resources it gets unless autoscalerOptions says
AUTOSCALER = "autoscaler"
_AUTOSCALER_RESOURCES = {
    "limits": {"cpu": "500m", "memory": "512Mi"},
    "requests": {"cpu": "500m", "memory": "512Mi"},
}
_AUTOSCALER_ENV = ("RAY_CLUSTER_NAME", "RAY_CLUSTER_NAMESPACE", "RAY_HEAD_POD_NAME", "KUBERAY_CRD_VER")
_START = (
    "ray kuberay-autoscaler --cluster-name $(RAY_CLUSTER_NAME) --cluster-namespace $(RAY_CLUSTER_NAMESPACE)"
)


def head_pod(
    obj: Mapping[str, Any], cluster_path: Sequence[str], pod_spec: Mapping[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The head pod spec of the RayClusterSpec at ``cluster_path`` of ``obj`` with the containers
    KubeRay adds to it, and for each the object field that configures it (``input.pod.injected``:
    where a finding on it points, since nothing of it is in the template): the autoscaler, and the
    submitter of a RayJob in SidecarMode."""
    spec = dict(pod_spec)
    injected: list[dict[str, Any]] = []
    cluster = field_at(obj, cluster_path)
    added = [
        (_autoscaler(cluster, spec), [*cluster_path, "autoscalerOptions"]),
        (sidecar_submitter(field_at(obj, cluster_path[:-1])), [*cluster_path[:-1], "submissionMode"]),
    ]
    for container, at in added:
        if container is not None:
            spec["containers"] = [*(spec.get("containers") or ()), container]
            injected.append({"container": len(spec["containers"]) - 1, "at": at})
    return spec, injected


def _autoscaler(cluster: Any, pod_spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The autoscaler container KubeRay adds to the head pod of a RayClusterSpec with
    ``enableInTreeAutoscaling: true`` (DefaultHeadPodTemplate), or None: the head container's image,
    the default resources, then ``autoscalerOptions`` (image, pull policy, resources, env, envFrom,
    volume mounts, securityContext, command, args) as mergeAutoscalerOverrides applies them."""
    if not isinstance(cluster, Mapping) or cluster.get("enableInTreeAutoscaling") is not True:
        return None
    options = cluster.get("autoscalerOptions")
    options = options if isinstance(options, Mapping) else {}
    containers = [c for c in pod_spec.get("containers") or () if isinstance(c, Mapping)]
    container: dict[str, Any] = {
        "name": AUTOSCALER,
        "image": containers[0].get("image") if containers else None,
        "imagePullPolicy": "IfNotPresent",
        "env": [{"name": n} for n in _AUTOSCALER_ENV],
        "args": [_START],
        "resources": _AUTOSCALER_RESOURCES,
    }
    for key in ("resources", "image", "imagePullPolicy", "securityContext", "command", "args"):
        if options.get(key) is not None:
            container[key] = options[key]
    for key in ("env", "envFrom", "volumeMounts"):
        if isinstance(options.get(key), list) and options[key]:
            container[key] = [*container.get(key, ()), *options[key]]
    return container


#: the container KubeRay submits a RayJob from (utils.SubmitterContainerName, common/job.go
#: GetDefaultSubmitterContainer): the head's image, and these resources
SUBMITTER = "ray-job-submitter"
#: the name of the submitter pod KubeRay builds where a RayJob names no submitterPodTemplate (its
#: findings' pod template: "RayJob/x, default submitter", not a field the object does not have)
DEFAULT_SUBMITTER = "default submitter"
_SUBMITTER_RESOURCES = {
    "limits": {"cpu": "1", "memory": "1Gi"},
    "requests": {"cpu": "500m", "memory": "200Mi"},
}


def submitter_container(job_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The submitter container KubeRay builds for a RayJobSpec (``job_spec``)."""
    head = field_at(job_spec, ("rayClusterSpec", "headGroupSpec", "template", "spec", "containers", 0))
    image = head.get("image") if isinstance(head, Mapping) else None
    return {"name": SUBMITTER, "image": image, "resources": _SUBMITTER_RESOURCES}


def default_submitter(job_spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The submitter pod spec of a RayJobSpec that submits from a Job (K8sJobMode, the default)
    and has no submitterPodTemplate (common/job.go GetSubmitterTemplate), or None."""
    if job_spec.get("submitterPodTemplate") is not None:
        return None
    if (job_spec.get("submissionMode") or "K8sJobMode") != "K8sJobMode":
        return None
    if not isinstance(job_spec.get("rayClusterSpec"), Mapping):
        return None  # a job on an existing cluster (clusterSelector): its head image is not here
    return {"containers": [submitter_container(job_spec)], "restartPolicy": "Never"}


def sidecar_submitter(job_spec: Any) -> dict[str, Any] | None:
    """The submitter container KubeRay adds to the head pod of a RayJobSpec in SidecarMode
    (rayjob_controller.go getSubmitterContainer), or None."""
    if not isinstance(job_spec, Mapping) or job_spec.get("submissionMode") != "SidecarMode":
        return None
    return submitter_container(job_spec)
