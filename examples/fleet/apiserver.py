"""A fake Kubernetes API server for the bundled fleet (stdlib only, 127.0.0.1 only).

`make demo` audits "clusters" without a cluster: each one is this server on a loopback port,
serving the objects of a folder of manifests, plus what the controllers would have made of them
(a Deployment's ReplicaSet and pods, a StatefulSet's and a Job's pods, a DaemonSet's pod per node),
so the audit's folding of pods into workloads is exercised for real. The tests and the audit
benchmark use it too, with generated clusters of any size.

What it implements is what a paginated LIST client depends on, the way kube-apiserver does it:
`GET /api/v1/{plural}` and `GET /apis/{group}/{version}/{plural}` (all namespaces), `limit` and
`continue`, items without `kind`/`apiVersion` (as in real list responses), a `resourceVersion`,
`Status` bodies for errors, 404 for custom resources that are "not installed", 403 for kinds the
fixture marks forbidden, and injected transient failures (429 with Retry-After, 503). Collections
may be virtual (generated page by page) so a 150,000-pod cluster costs the server no memory.

It is deliberately a plain `http.server`: no dependency beyond the standard library, so the demo
runs on a bare install. It checks a bearer token is present (never its value beyond equality).

    python examples/fleet/apiserver.py examples/fleet/fleet.yaml --kubeconfig .demo/kubeconfig
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

TOKEN = "stockade-demo-token"  # a fixture value, not a credential

#: plural path -> (kind, apiVersion, namespaced, custom resource?)
RESOURCES: dict[str, tuple[str, str, bool, bool]] = {
    "/api/v1/namespaces": ("Namespace", "v1", False, False),
    "/api/v1/nodes": ("Node", "v1", False, False),
    "/api/v1/pods": ("Pod", "v1", True, False),
    "/api/v1/podtemplates": ("PodTemplate", "v1", True, False),
    "/api/v1/replicationcontrollers": ("ReplicationController", "v1", True, False),
    "/api/v1/serviceaccounts": ("ServiceAccount", "v1", True, False),
    "/api/v1/services": ("Service", "v1", True, False),
    "/api/v1/configmaps": ("ConfigMap", "v1", True, False),
    "/api/v1/secrets": ("Secret", "v1", True, False),
    "/api/v1/persistentvolumes": ("PersistentVolume", "v1", False, False),
    "/api/v1/persistentvolumeclaims": ("PersistentVolumeClaim", "v1", True, False),
    "/apis/apps/v1/deployments": ("Deployment", "apps/v1", True, False),
    "/apis/apps/v1/replicasets": ("ReplicaSet", "apps/v1", True, False),
    "/apis/apps/v1/statefulsets": ("StatefulSet", "apps/v1", True, False),
    "/apis/apps/v1/daemonsets": ("DaemonSet", "apps/v1", True, False),
    "/apis/batch/v1/jobs": ("Job", "batch/v1", True, False),
    "/apis/batch/v1/cronjobs": ("CronJob", "batch/v1", True, False),
    "/apis/networking.k8s.io/v1/networkpolicies": ("NetworkPolicy", "networking.k8s.io/v1", True, False),
    "/apis/networking.k8s.io/v1/ingresses": ("Ingress", "networking.k8s.io/v1", True, False),
    "/apis/node.k8s.io/v1/runtimeclasses": ("RuntimeClass", "node.k8s.io/v1", False, False),
    "/apis/storage.k8s.io/v1/storageclasses": ("StorageClass", "storage.k8s.io/v1", False, False),
    "/apis/rbac.authorization.k8s.io/v1/roles": ("Role", "rbac.authorization.k8s.io/v1", True, False),
    "/apis/rbac.authorization.k8s.io/v1/rolebindings": (
        "RoleBinding",
        "rbac.authorization.k8s.io/v1",
        True,
        False,
    ),
    "/apis/rbac.authorization.k8s.io/v1/clusterroles": (
        "ClusterRole",
        "rbac.authorization.k8s.io/v1",
        False,
        False,
    ),
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings": (
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io/v1",
        False,
        False,
    ),
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations": (
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        False,
        False,
    ),
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations": (
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        False,
        False,
    ),
    "/apis/apiregistration.k8s.io/v1/apiservices": ("APIService", "apiregistration.k8s.io/v1", False, False),
    # custom resources: served only by clusters whose fixture has objects of the kind ("installed")
    "/apis/cilium.io/v2/ciliumnetworkpolicies": ("CiliumNetworkPolicy", "cilium.io/v2", True, True),
    "/apis/cilium.io/v2/ciliumclusterwidenetworkpolicies": (
        "CiliumClusterwideNetworkPolicy",
        "cilium.io/v2",
        False,
        True,
    ),
    "/apis/projectcalico.org/v3/networkpolicies": ("NetworkPolicy", "projectcalico.org/v3", True, True),
    "/apis/projectcalico.org/v3/globalnetworkpolicies": (
        "GlobalNetworkPolicy",
        "projectcalico.org/v3",
        False,
        True,
    ),
    "/apis/policy.networking.k8s.io/v1alpha1/adminnetworkpolicies": (
        "AdminNetworkPolicy",
        "policy.networking.k8s.io/v1alpha1",
        False,
        True,
    ),
    "/apis/policy.networking.k8s.io/v1alpha1/baselineadminnetworkpolicies": (
        "BaselineAdminNetworkPolicy",
        "policy.networking.k8s.io/v1alpha1",
        False,
        True,
    ),
}
#: Custom resources of AI workload operators (group/version, kind, plural, namespaced), as their CRDs
#: serve them; like the CNI kinds above, a cluster serves one only when its fixture has objects of it.
WORKLOAD_CRDS = [
    ("ray.io/v1", "RayCluster", "rayclusters", True),
    ("ray.io/v1", "RayJob", "rayjobs", True),
    ("ray.io/v1", "RayService", "rayservices", True),
    ("ray.io/v1", "RayCronJob", "raycronjobs", True),
    *(
        ("kubeflow.org/v1", kind, kind.lower() + "s", True)
        for kind in ("PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob", "Notebook")
    ),
    ("kubeflow.org/v2beta1", "MPIJob", "mpijobs", True),
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "trainingruntimes", True),
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", False),
    ("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets", True),
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "leaderworkersets", True),
    ("disaggregatedset.x-k8s.io/v1", "DisaggregatedSet", "disaggregatedsets", True),
    ("batch.volcano.sh/v1alpha1", "Job", "jobs", True),
    ("batch.volcano.sh/v1alpha1", "CronJob", "cronjobs", True),
    ("flow.volcano.sh/v1alpha1", "JobTemplate", "jobtemplates", True),
    ("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices", True),
    ("serving.kserve.io/v1alpha1", "ServingRuntime", "servingruntimes", True),
    ("serving.kserve.io/v1alpha1", "ClusterServingRuntime", "clusterservingruntimes", False),
    ("serving.kserve.io/v1alpha1", "LLMInferenceService", "llminferenceservices", True),
    ("agents.x-k8s.io/v1beta1", "Sandbox", "sandboxes", True),
    ("extensions.agents.x-k8s.io/v1beta1", "SandboxTemplate", "sandboxtemplates", True),
    ("argoproj.io/v1alpha1", "Rollout", "rollouts", True),
    ("argoproj.io/v1alpha1", "Experiment", "experiments", True),
    ("argoproj.io/v1alpha1", "AnalysisTemplate", "analysistemplates", True),
    ("argoproj.io/v1alpha1", "ClusterAnalysisTemplate", "clusteranalysistemplates", False),
    ("argoproj.io/v1alpha1", "AnalysisRun", "analysisruns", True),
    ("kubeflow.org/v1beta1", "Experiment", "experiments", True),
    ("argoproj.io/v1alpha1", "Workflow", "workflows", True),
    ("argoproj.io/v1alpha1", "WorkflowTemplate", "workflowtemplates", True),
    ("argoproj.io/v1alpha1", "ClusterWorkflowTemplate", "clusterworkflowtemplates", False),
    ("argoproj.io/v1alpha1", "CronWorkflow", "cronworkflows", True),
    ("sparkoperator.k8s.io/v1beta2", "SparkApplication", "sparkapplications", True),
    ("sparkoperator.k8s.io/v1beta2", "ScheduledSparkApplication", "scheduledsparkapplications", True),
    ("serving.knative.dev/v1", "Service", "services", True),
    ("serving.knative.dev/v1", "Configuration", "configurations", True),
    ("serving.knative.dev/v1", "Revision", "revisions", True),
    ("operators.coreos.com/v1alpha1", "ClusterServiceVersion", "clusterserviceversions", True),
]
WORKLOAD_PATHS = {
    f"/apis/{api}/{plural}": (kind, api, namespaced, True) for api, kind, plural, namespaced in WORKLOAD_CRDS
}
RESOURCES.update(WORKLOAD_PATHS)
#: kind -> collection path of the built-in kinds and the CNI kinds (Calico's NetworkPolicy shares its
#: kind with the core one, Volcano's Job and CronJob and Knative's Service theirs: not keyed here)
KIND_PATH = {
    kind: path
    for path, (kind, api, _, _) in RESOURCES.items()
    if not api.startswith("projectcalico") and path not in WORKLOAD_PATHS
}
#: (apiVersion group, kind) -> collection path
GROUP_KIND_PATH = {
    (api.split("/")[0] if "/" in api else "", kind): path for path, (kind, api, _, _) in RESOURCES.items()
}


def path_of(obj: Mapping[str, Any]) -> str | None:
    """The collection an object belongs to, by its apiVersion's group and kind."""
    api = str(obj.get("apiVersion") or "")
    return GROUP_KIND_PATH.get((api.split("/")[0] if "/" in api else "", str(obj.get("kind"))))


#: A collection: a list, or (total, generate(start, stop)) for virtual ones.
Collection = list[dict[str, Any]] | tuple[int, Callable[[int, int], list[dict[str, Any]]]]


def _uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _hash(obj: Any) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:10]


def _with_identity(obj: dict[str, Any], cluster: str) -> dict[str, Any]:
    md = obj.setdefault("metadata", {})
    md.setdefault("uid", _uid(cluster, obj.get("kind", ""), md.get("namespace") or "", md.get("name") or ""))
    md.setdefault("resourceVersion", "1")
    md.setdefault("creationTimestamp", "2026-11-01T00:00:00Z")
    return obj


def _owner(obj: Mapping[str, Any]) -> dict[str, Any]:
    md = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_from_template(
    template: Mapping[str, Any],
    name: str,
    namespace: str,
    owner: Mapping[str, Any] | None,
    cluster: str,
    node: str,
    extra_labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A running pod as a controller would create it from `template` (shares the template's spec parts)."""
    md = dict(template.get("metadata") or {})
    labels = {**(md.get("labels") or {}), **dict(extra_labels or {})}
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**md, "name": name, "namespace": namespace, "labels": labels},
        "spec": {**dict(template.get("spec") or {}), "nodeName": node},
        "status": {"phase": "Running"},
    }
    if owner is not None:
        pod["metadata"]["ownerReferences"] = [_owner(owner)]
    return _with_identity(pod, cluster)


@dataclass
class PodPlan:
    """The pods one controller runs: `count` pods made from one template."""

    template: Mapping[str, Any]
    namespace: str
    owner: Mapping[str, Any]
    prefix: str
    count: int
    labels: Mapping[str, str]
    per_pod_label: str | None = None  # StatefulSets label each pod with its own name
    nodes: tuple[str, ...] = ()  # DaemonSets: pod i runs on nodes[i]

    def pod(self, i: int, cluster: str, node_of: Callable[[int], str]) -> dict[str, Any]:
        name = f"{self.prefix}-{i}" if self.per_pod_label else f"{self.prefix}-{i:05d}"
        labels = dict(self.labels)
        if self.per_pod_label:
            labels[self.per_pod_label] = name
        node = self.nodes[i] if self.nodes else node_of(i)
        return pod_from_template(self.template, name, self.namespace, self.owner, cluster, node, labels)


def plan_controllers(
    objects: list[dict[str, Any]], cluster: str, nodes: list[str]
) -> tuple[list[dict[str, Any]], list[PodPlan]]:
    """What the controllers make of the workloads: ReplicaSets, and the pods of each controller."""
    replicasets: list[dict[str, Any]] = []
    plans: list[PodPlan] = []
    for obj in objects:
        kind, md, spec = obj.get("kind"), obj.get("metadata") or {}, obj.get("spec") or {}
        if f"/apis/{obj.get('apiVersion')}" in {p.rsplit("/", 1)[0] for p in WORKLOAD_PATHS}:
            continue  # custom resources (Volcano's Job): their operators are not simulated
        ns = md.get("namespace") or "default"
        name = md.get("name") or ""
        template = spec.get("template") or {}
        if kind == "Deployment":
            pth = _hash(template)
            tmd = dict(template.get("metadata") or {})
            tmd["labels"] = {**(tmd.get("labels") or {}), "pod-template-hash": pth}
            rs_template = {**template, "metadata": tmd}
            rs: dict[str, Any] = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{name}-{pth}",
                    "namespace": ns,
                    "labels": dict(tmd["labels"]),
                    "ownerReferences": [_owner(obj)],
                },
                "spec": {"replicas": spec.get("replicas", 1), "template": rs_template},
            }
            replicasets.append(_with_identity(rs, cluster))
            count = int(spec.get("replicas", 1) or 0)
            plans.append(PodPlan(rs_template, ns, rs, f"{name}-{pth}", count, {}))
        elif kind == "StatefulSet":
            labels = {"controller-revision-hash": f"{name}-{_hash(template)}"}
            count = int(spec.get("replicas", 1) or 0)
            plans.append(
                PodPlan(template, ns, obj, name, count, labels, "statefulset.kubernetes.io/pod-name")
            )
        elif kind == "DaemonSet":
            labels = {"controller-revision-hash": _hash(template)}
            on = tuple(nodes or ["node-0"])
            plans.append(PodPlan(template, ns, obj, name, len(on), labels, nodes=on))
        elif kind == "Job":
            labels = {"batch.kubernetes.io/controller-uid": md["uid"], "batch.kubernetes.io/job-name": name}
            count = min(int(spec.get("parallelism", 1) or 1), int(spec.get("completions", 1) or 1))
            plans.append(PodPlan(template, ns, obj, name, count, labels))
    return replicasets, plans


def _node_of(nodes: list[str]) -> Callable[[int], str]:
    return lambda i: nodes[i % len(nodes)] if nodes else "node-0"


def simulate_controllers(
    objects: list[dict[str, Any]], cluster: str, nodes: list[str]
) -> list[dict[str, Any]]:
    """ReplicaSets and every pod, as objects (module docstring)."""
    replicasets, plans = plan_controllers(objects, cluster, nodes)
    node_of = _node_of(nodes)
    return replicasets + [plan.pod(i, cluster, node_of) for plan in plans for i in range(plan.count)]


def virtual_pods(
    plans: list[PodPlan], cluster: str, nodes: list[str]
) -> tuple[int, Callable[[int, int], list[dict[str, Any]]]]:
    """The pods of `plans` as a virtual collection: made page by page, never all at once."""
    import bisect

    starts: list[int] = []
    total = 0
    for plan in plans:
        starts.append(total)
        total += plan.count
    node_of = _node_of(nodes)

    def generate(start: int, stop: int) -> list[dict[str, Any]]:
        out = []
        for index in range(start, stop):
            p = bisect.bisect_right(starts, index) - 1
            out.append(plans[p].pod(index - starts[p], cluster, node_of))
        return out

    return total, generate


def load_manifests(paths: Iterable[Path]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in paths:
        files = (
            sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
            if path.is_dir()
            else [path]
        )
        for file in files:
            for doc in yaml.safe_load_all(file.read_text(encoding="utf-8")):
                if not isinstance(doc, dict) or "kind" not in doc:
                    continue
                out.extend(doc.get("items") or [] if doc.get("kind") == "List" else [doc])
    return out


@dataclass
class FakeCluster:
    """One cluster's collections and behaviour."""

    name: str
    collections: dict[str, Collection] = field(default_factory=dict)  # path -> objects
    installed_custom: set[str] = field(default_factory=set)
    forbidden: set[str] = field(default_factory=set)  # paths answering 403
    #: custom resources beyond RESOURCES (a CRD a test installs): path -> (kind, apiVersion, namespaced, True)
    extra: dict[str, tuple[str, str, bool, bool]] = field(default_factory=dict)
    failures: dict[str, list[int]] = field(default_factory=dict)  # path -> statuses to answer first
    requests: list[tuple[str, dict[str, str], int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: objects written with PATCH (server-side apply), keyed (group/version, plural, namespace, name)
    written: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    patches: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)  # path, content type, query

    @classmethod
    def from_objects(
        cls, name: str, objects: Iterable[dict[str, Any]], *, nodes: int = 3, simulate: bool = True
    ) -> FakeCluster:
        objs = [_with_identity(copy.deepcopy(o), name) for o in objects]
        node_names = [f"{name}-node-{i}" for i in range(nodes)]
        objs += [
            _with_identity({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {}}}, name)
            for n in node_names
        ]
        if simulate:
            objs += simulate_controllers(objs, name, node_names)
        cluster = cls(name)
        for obj in objs:
            path = path_of(obj)
            if path is not None:
                cluster.collections.setdefault(path, []).append(obj)  # type: ignore[union-attr]
        return cluster

    def answer(self, path: str, query: Mapping[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self.lock:
            queued = self.failures.get(path)
            status = queued.pop(0) if queued else None
        if status is not None:
            headers = {"Retry-After": "0"} if status == 429 else {}
            return status, _status(status, "injected failure"), headers
        collection_key = _collection_key(path)
        if collection_key is not None and any(k[:2] == collection_key for k in self.written):
            items = [o for k, o in sorted(self.written.items()) if k[:2] == collection_key]
            selector = query.get("labelSelector")
            if selector:
                wanted = dict(p.split("=", 1) for p in selector.split(","))
                items = [
                    o
                    for o in items
                    if wanted.items() <= ((o.get("metadata") or {}).get("labels") or {}).items()
                ]
            return (
                200,
                {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items},
                {},
            )
        parts = path.strip("/").split("/")
        if (parts[0] == "apis" and len(parts) == 3) or parts == ["api", "v1"]:
            return self._discovery(path)
        if path in self.forbidden:
            return 403, _status(403, f"{path.rsplit('/', 1)[-1]} is forbidden: User cannot list resource"), {}
        resources = {**RESOURCES, **self.extra}
        custom = resources.get(path, ("", "", True, True))[3]
        if custom and path not in self.collections:  # a CRD that is not installed
            return 404, _status(404, "the server could not find the requested resource"), {}
        collection: Collection = self.collections.get(path, [])
        total = len(collection) if isinstance(collection, list) else collection[0]
        limit = int(query.get("limit") or 0) or total or 1
        start = 0
        if query.get("continue"):
            try:
                start = int(base64.urlsafe_b64decode(query["continue"].encode()).decode())
            except ValueError:
                return 400, _status(400, "invalid continue token"), {}
        stop = min(total, start + limit)
        items = collection[start:stop] if isinstance(collection, list) else collection[1](start, stop)
        listed = []
        for obj in items:
            item = dict(obj)
            item.pop("kind", None)
            item.pop("apiVersion", None)
            listed.append(item)
        kind, api_version, _, _ = resources.get(path, ("List", "v1", True, True))
        md: dict[str, Any] = {"resourceVersion": "1000"}
        if stop < total:
            md["continue"] = base64.urlsafe_b64encode(str(stop).encode()).decode()
            md["remainingItemCount"] = total - stop
        return 200, {"kind": f"{kind}List", "apiVersion": api_version, "metadata": md, "items": listed}, {}

    def _discovery(self, path: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        """A group-version's APIResourceList (``GET /apis/{group}/{version}``, ``/api/v1``): its kinds,
        custom ones only while installed (they have a collection); 404 when it serves none."""
        resources = [
            {"name": p.rsplit("/", 1)[1], "kind": kind, "namespaced": namespaced, "verbs": ["list", "watch"]}
            for p, (kind, _, namespaced, custom) in {**RESOURCES, **self.extra}.items()
            if p.rsplit("/", 1)[0] == path and (not custom or p in self.collections)
        ]
        if not resources:
            return 404, _status(404, "the server could not find the requested resource"), {}
        group_version = path.split("/", 2)[2] if path.startswith("/apis/") else "v1"
        return 200, {"kind": "APIResourceList", "groupVersion": group_version, "resources": resources}, {}


def _collection_key(path: str) -> tuple[str, str] | None:
    """("group/version", plural) of an all-namespaces collection path under /apis."""
    parts = path.strip("/").split("/")
    if len(parts) == 4 and parts[0] == "apis":
        return f"{parts[1]}/{parts[2]}", parts[3]
    return None


def _object_key(path: str) -> tuple[str, str, str, str] | None:
    """(group/version, plural, namespace, name) of an object path under /apis."""
    parts = path.strip("/").split("/")
    if len(parts) == 7 and parts[0] == "apis" and parts[3] == "namespaces":
        return f"{parts[1]}/{parts[2]}", parts[5], parts[4], parts[6]
    if len(parts) == 5 and parts[0] == "apis":
        return f"{parts[1]}/{parts[2]}", parts[3], "", parts[4]
    return None


def _status(code: int, message: str) -> dict[str, Any]:
    reasons = {403: "Forbidden", 404: "NotFound", 429: "TooManyRequests", 503: "ServiceUnavailable"}
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reasons.get(code, "BadRequest"),
        "code": code,
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        cluster = self.server.cluster
        if not _authorized(self.headers.get("Authorization")):
            status, body, headers = 401, _status(401, "Unauthorized"), {}
        else:
            status, body, headers = cluster.answer(url.path, query)
        with cluster.lock:
            cluster.requests.append((url.path, query, status))
        data = json.dumps(body).encode() if self.server.encoder is None else self.server.encoder(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _write(self, method: str) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        cluster = self.server.cluster
        key = _object_key(url.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, body = 200, {}
        if not _authorized(self.headers.get("Authorization")):
            status, body = 401, _status(401, "Unauthorized")
        elif key is None:
            status, body = 404, _status(404, "not found")
        elif method == "PATCH":
            body = json.loads(raw or b"{}")
            with cluster.lock:
                cluster.written[key] = body
                cluster.patches.append((url.path, str(self.headers.get("Content-Type")), query))
        else:
            with cluster.lock:
                found = cluster.written.pop(key, None)
            status, body = (200, _status(200, "deleted")) if found else (404, _status(404, "not found"))
        with cluster.lock:
            cluster.requests.append((url.path, query, status))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PATCH(self) -> None:
        self._write("PATCH")

    def do_DELETE(self) -> None:
        self._write("DELETE")

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests and the demo read stdout
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    cluster: FakeCluster
    encoder: Callable[[Any], bytes] | None = None


def _authorized(header: str | None) -> bool:
    """The API server's bearer-token check: the scheme is case-insensitive (the in-cluster loader of the
    kubernetes client sends ``bearer``), the token exact."""
    scheme, _, token = (header or "").partition(" ")
    return scheme.lower() == "bearer" and token == TOKEN


class ServedCluster:
    """A FakeCluster served on 127.0.0.1 (an ephemeral port) in a background thread."""

    def __init__(self, cluster: FakeCluster, encoder: Callable[[Any], bytes] | None = None) -> None:
        self.cluster = cluster
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.cluster = cluster
        self.httpd.encoder = encoder
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, name=f"fake-{cluster.name}", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ServedCluster:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def kubeconfig(servers: Mapping[str, str], current: str | None = None) -> dict[str, Any]:
    """A kubeconfig with one context per served cluster (name -> URL), token authentication."""
    names = list(servers)
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": url}} for n, url in servers.items()],
        "users": [{"name": "stockade-auditor", "user": {"token": TOKEN}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "stockade-auditor"}} for n in names],
        "current-context": current or (names[0] if names else ""),
    }


def load_fleet(spec_file: Path) -> list[FakeCluster]:
    """The clusters a fleet.yaml describes (manifest folders relative to the file)."""
    spec = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
    out = []
    for entry in spec["clusters"]:
        objects = load_manifests(spec_file.parent / p for p in entry["manifests"])
        cluster = FakeCluster.from_objects(entry["name"], objects, nodes=int(entry.get("nodes", 3)))
        cluster.forbidden = {KIND_PATH[k] for k in entry.get("forbidden", [])}
        out.append(cluster)
    return out


def main(argv: list[str]) -> int:
    """Serve a fleet until interrupted; write its kubeconfig (for trying `stockade audit` by hand)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("fleet", type=Path)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: until ^C)")
    args = parser.parse_args(argv)
    served = [ServedCluster(c) for c in load_fleet(args.fleet)]
    for s in served:
        s.__enter__()
    args.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
    args.kubeconfig.write_text(yaml.safe_dump(kubeconfig({s.cluster.name: s.url for s in served})))
    print(f"serving {len(served)} clusters; kubeconfig: {args.kubeconfig}", flush=True)
    try:
        deadline = time.monotonic() + args.seconds if args.seconds else None
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        for s in served:
            s.__exit__()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
