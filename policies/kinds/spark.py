"""The pods kubeflow/spark-operator runs for a SparkApplication: what ``input.pod.spec`` is for its
driver and for its executors.

A SparkApplication holds no PodSpec. Its ``spec.driver`` and ``spec.executor`` are SparkPodSpecs
(api/v1beta2/sparkapplication_types.go; v1beta1 has the same fields): spark-submit builds each pod
from the role's ``template`` (a PodTemplateSpec, Spark 3 and later), its image (``image``, else the
application's), its ServiceAccount and its CPU and memory, then the operator's pod webhook
(internal/webhook/sparkpod_defaulter.go) completes it: the container's ``securityContext`` and the
pod's ``podSecurityContext`` replace the template's, ``env``/``envFrom``/``volumeMounts``/``ports``
are added to the Spark container, ``sidecars`` and ``initContainers`` to the pod, the application's
``volumes`` that the role mounts, ``hostNetwork``, ``hostAliases``, ``tolerations``, ``affinity``,
``nodeSelector`` (the application's and the role's), ``dnsConfig``, ``schedulerName``,
``shareProcessNamespace``, ``terminationGracePeriodSeconds``, a GPU limit and a memory limit.

Before this module a SparkApplication without a template was judged as one empty pod: "runs as the
namespace's default ServiceAccount" of a driver that names its own, and nothing of its hostPath
volumes or privileged containers.

Spark's own semantics kept here: the container spark-submit fills is the template's first (else
one named ``spark-kubernetes-driver`` / ``spark-kubernetes-executor``); CPU request ``coreRequest``,
else ``cores`` (default 1), CPU limit ``coreLimit``; memory request and limit ``memory`` (default
1g) plus ``memoryOverhead`` (default 10 %, at least 384 MiB), ``memoryLimit`` replacing the limit;
an executor without its own ServiceAccount runs as the driver's from Spark 3.1
(``spark.kubernetes.authenticate.executor.serviceAccountName`` falls back to the driver's), as the
namespace's default before. The driver creates and watches its executors: it is an API client.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: the container spark-submit creates when the role has no template
CONTAINERS = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}
#: pod-level fields the operator's webhook sets from the role (SparkPodSpec name -> PodSpec name)
_REPLACED = {
    "podSecurityContext": "securityContext",
    "affinity": "affinity",
    "dnsConfig": "dnsConfig",
    "schedulerName": "schedulerName",
    "shareProcessNamespace": "shareProcessNamespace",
    "terminationGracePeriodSeconds": "terminationGracePeriodSeconds",
}
#: list fields the webhook appends to (pod level)
_APPENDED = ("tolerations", "hostAliases")
_JAVA_MEMORY = re.compile(r"^\s*(\d+)\s*([kmgtp]?)b?\s*$", re.I)
_MIB = {"": 1 / (1024 * 1024), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024, "p": 1024**3}
#: Spark's memory overhead: a tenth of the memory, at least 384 MiB (spark.driver.memoryOverhead)
_OVERHEAD_FACTOR, _OVERHEAD_MIN_MIB = 0.1, 384


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _mib(value: Any) -> int | None:
    """A Java memory string ("512m", "2g", "1024") in MiB; None where it is not one."""
    match = _JAVA_MEMORY.match(value) if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return max(value // (1024 * 1024), 0)
    if match is None:
        return None
    return int(int(match.group(1)) * _MIB[match.group(2).lower()])


def _spark_version(app: Mapping[str, Any]) -> tuple[int, int] | None:
    found = re.match(r"^\s*v?(\d+)\.(\d+)", str(app.get("sparkVersion") or ""))
    return (int(found.group(1)), int(found.group(2))) if found else None


def service_account(app: Mapping[str, Any], role: str) -> str | None:
    """The ServiceAccount a role's pods run as, None for the namespace's default: the role's own
    ``serviceAccount``, else its template's; an executor without one runs as the driver's from
    Spark 3.1 (or an unknown version)."""
    own = _role_account(app, role)
    if own or role != "executor":
        return own
    version = _spark_version(app)
    return _role_account(app, "driver") if version is None or version >= (3, 1) else None


def _role_account(app: Mapping[str, Any], role: str) -> str | None:
    node = _mapping(app.get(role))
    for value in (
        node.get("serviceAccount"),
        _mapping(_mapping(node.get("template")).get("spec")).get("serviceAccountName"),
    ):
        if isinstance(value, str) and value:
            return value
    return None


def _resources(node: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    """The Spark container's resources: the template's, with what spark-submit and the webhook set."""
    requests = dict(_mapping(base.get("requests")))
    limits = dict(_mapping(base.get("limits")))
    cores = node.get("coreRequest") if node.get("coreRequest") is not None else node.get("cores")
    requests["cpu"] = str(cores) if cores is not None else "1"
    if node.get("coreLimit") is not None:
        limits["cpu"] = str(node["coreLimit"])
    memory = _mib(node.get("memory")) if node.get("memory") is not None else 1024
    overhead = _mib(node.get("memoryOverhead"))
    if memory is not None:
        total = memory + (
            overhead if overhead is not None else max(int(memory * _OVERHEAD_FACTOR), _OVERHEAD_MIN_MIB)
        )
        requests["memory"] = limits["memory"] = f"{total}Mi"
    limit = _mib(node.get("memoryLimit"))
    if limit is not None:
        limits["memory"] = f"{limit}Mi"
    gpu = _mapping(node.get("gpu"))
    if (
        isinstance(gpu.get("name"), str)
        and gpu["name"]
        and isinstance(gpu.get("quantity"), int)
        and gpu["quantity"] > 0
    ):
        limits[gpu["name"]] = gpu["quantity"]
    return {"requests": requests, "limits": limits}


def _container(
    app: Mapping[str, Any], node: Mapping[str, Any], role: str, base: Mapping[str, Any]
) -> dict[str, Any]:
    container = dict(base) or {"name": CONTAINERS[role]}
    image = node.get("image") or app.get("image") or base.get("image")
    if image is not None:
        container["image"] = image
    if app.get("imagePullPolicy") is not None:
        container["imagePullPolicy"] = app["imagePullPolicy"]
    container["resources"] = _resources(node, _mapping(base.get("resources")))
    if node.get("securityContext") is not None:
        container["securityContext"] = node["securityContext"]
    env = _list(base.get("env")) + _list(node.get("env"))
    env += [{"name": str(k), "value": v} for k, v in _mapping(node.get("envVars")).items()]
    if env:
        container["env"] = env
    for field in ("envFrom", "volumeMounts"):
        merged = _list(base.get(field)) + _list(node.get(field))
        if merged:
            container[field] = merged
    ports = _list(base.get("ports")) + [
        {"name": p.get("name"), "containerPort": p.get("containerPort"), "protocol": p.get("protocol")}
        for p in _list(node.get("ports"))
        if isinstance(p, Mapping)
    ]
    if ports:
        container["ports"] = ports
    if node.get("lifecycle") is not None:
        container["lifecycle"] = node["lifecycle"]
    return container


def pod_spec(app: Mapping[str, Any], role: str) -> dict[str, Any]:
    """The PodSpec of a role's pods (``role``: "driver" or "executor") of the SparkApplicationSpec
    ``app``."""
    node = _mapping(app.get(role))
    spec = dict(_mapping(_mapping(node.get("template")).get("spec")))
    containers = [c for c in _list(spec.get("containers")) if isinstance(c, Mapping)]
    main = _container(app, node, role, containers[0] if containers else {})
    spec["containers"] = [main, *containers[1:], *_list(node.get("sidecars"))]
    init = _list(spec.get("initContainers")) + _list(node.get("initContainers"))
    if init:
        spec["initContainers"] = init
    account = service_account(app, role)
    if account:
        spec["serviceAccountName"] = account
    if node.get("hostNetwork") is True:
        spec["hostNetwork"] = True
    for field, target in _REPLACED.items():
        if node.get(field) is not None:
            spec[target] = node[field]
    for field in _APPENDED:
        merged = _list(spec.get(field)) + _list(node.get(field))
        if merged:
            spec[field] = merged
    selector = {
        **_mapping(spec.get("nodeSelector")),
        **_mapping(app.get("nodeSelector")),
        **_mapping(node.get("nodeSelector")),
    }
    if selector:
        spec["nodeSelector"] = selector
    mounted = {
        m.get("name")
        for c in spec["containers"][:1]
        for m in _list(c.get("volumeMounts"))
        if isinstance(m, Mapping)
    }
    volumes = _list(spec.get("volumes")) + [
        v for v in _list(app.get("volumes")) if isinstance(v, Mapping) and v.get("name") in mounted
    ]
    if volumes:
        spec["volumes"] = volumes
    secrets = [{"name": s} for s in _list(app.get("imagePullSecrets")) if isinstance(s, str)]
    if secrets:
        spec["imagePullSecrets"] = _list(spec.get("imagePullSecrets")) + secrets
    return spec


def pod_metadata(obj: Mapping[str, Any], app: Mapping[str, Any], role: str) -> dict[str, Any]:
    """The labels and annotations a role's pods carry: the template's, the application's labels
    (the driver's), the role's, and the operator's own (spark-role, sparkoperator.k8s.io/app-name)."""
    node = _mapping(app.get(role))
    template = _mapping(_mapping(node.get("template")).get("metadata"))
    name = _mapping(obj.get("metadata")).get("name")
    labels = {
        **_mapping(template.get("labels")),
        **(_mapping(_mapping(obj.get("metadata")).get("labels")) if role == "driver" else {}),
        **_mapping(node.get("labels")),
        "spark-role": role,
        "sparkoperator.k8s.io/launched-by-spark-operator": "true",
    }
    if isinstance(name, str):
        labels["sparkoperator.k8s.io/app-name"] = name
    annotations = {**_mapping(template.get("annotations")), **_mapping(node.get("annotations"))}
    return {"labels": labels, "annotations": annotations}
