"""Where each kind the library knows lives in the Kubernetes API: group, version, plural, scope.

Every gate that talks to a cluster needs this table: the audit lists these kinds, the webhook's
inventory cache watches some of them, and the webhook's deployment grants read access to exactly
those. Keeping it in one place means a rule area that starts reading a new kind adds one line here
and every gate (and the least-privilege ClusterRoles generated from it) follows.

Custom resources (Cilium, Calico, AdminNetworkPolicy, PolicyReport) are listed with the version
stockade reads; a cluster that does not serve them answers 404, which the audit records as "not
installed" rather than as a coverage gap.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, NamedTuple, cast


class KindInfo(NamedTuple):
    """One kind's REST coordinates."""

    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    custom: bool = False  # served only when a CRD is installed; 404 means "not installed"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def list_path(self) -> str:
        """The all-namespaces collection path, e.g. ``/apis/apps/v1/deployments``."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/{self.plural}"


_ALL = (
    KindInfo("", "v1", "namespaces", "Namespace", False),
    KindInfo("", "v1", "nodes", "Node", False),
    KindInfo("", "v1", "pods", "Pod", True),
    KindInfo("", "v1", "podtemplates", "PodTemplate", True),
    KindInfo("", "v1", "replicationcontrollers", "ReplicationController", True),
    KindInfo("", "v1", "serviceaccounts", "ServiceAccount", True),
    KindInfo("", "v1", "services", "Service", True),
    KindInfo("", "v1", "configmaps", "ConfigMap", True),
    KindInfo("", "v1", "secrets", "Secret", True),
    KindInfo("", "v1", "persistentvolumes", "PersistentVolume", False),
    KindInfo("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True),
    KindInfo("apps", "v1", "deployments", "Deployment", True),
    KindInfo("apps", "v1", "replicasets", "ReplicaSet", True),
    KindInfo("apps", "v1", "statefulsets", "StatefulSet", True),
    KindInfo("apps", "v1", "daemonsets", "DaemonSet", True),
    KindInfo("batch", "v1", "jobs", "Job", True),
    KindInfo("batch", "v1", "cronjobs", "CronJob", True),
    KindInfo("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True),
    KindInfo("networking.k8s.io", "v1", "ingresses", "Ingress", True),
    KindInfo("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False),
    KindInfo("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
    KindInfo("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    KindInfo("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    KindInfo("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    KindInfo("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    KindInfo(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        False,
    ),
    KindInfo(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        False,
    ),
    KindInfo("cilium.io", "v2", "ciliumnetworkpolicies", "CiliumNetworkPolicy", True, True),
    KindInfo(
        "cilium.io", "v2", "ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy", False, True
    ),
    KindInfo("projectcalico.org", "v3", "networkpolicies", "NetworkPolicy.projectcalico.org", True, True),
    KindInfo("projectcalico.org", "v3", "globalnetworkpolicies", "GlobalNetworkPolicy", False, True),
    KindInfo("projectcalico.org", "v3", "tiers", "Tier", False, True),
    KindInfo(
        "policy.networking.k8s.io", "v1alpha1", "adminnetworkpolicies", "AdminNetworkPolicy", False, True
    ),
    KindInfo(
        "policy.networking.k8s.io",
        "v1alpha1",
        "baselineadminnetworkpolicies",
        "BaselineAdminNetworkPolicy",
        False,
        True,
    ),
)

#: kind -> where it lives. Calico's namespaced NetworkPolicy shares its kind name with the core one,
#: so it is keyed by ``Kind.group``; everything else by its kind.
KINDS: dict[str, KindInfo] = {k.kind: k for k in _ALL}


def kind_info(kind: str) -> KindInfo | None:
    return KINDS.get(kind)


def object_kind(info: KindInfo) -> str:
    """The `kind` field objects of this collection carry (Calico's NetworkPolicy is plain `NetworkPolicy`)."""
    return info.kind.split(".", 1)[0]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def list_call(api_client: Any, info: KindInfo) -> Callable[..., Any]:
    """The `kubernetes` client's generated list method for a kind, across all namespaces.

    The generated methods (rather than a hand-built request) carry authentication, token refresh,
    TLS and proxy settings, and accept ``limit``, ``_continue``, ``_preload_content=False`` (the raw
    response, no model classes) and ``_request_timeout`` in every client version pyproject allows.
    Non-core groups go through ``CustomObjectsApi.list_cluster_custom_object``, which is the plain
    ``/apis/{group}/{version}/{plural}`` collection for built-in kinds too.
    """
    from kubernetes import client as k8s_client

    if info.group:
        api = k8s_client.CustomObjectsApi(api_client)
        return functools.partial(api.list_cluster_custom_object, info.group, info.version, info.plural)
    if info.version != "v1":
        raise ValueError(f"core kinds are v1, not {info.version} ({info.kind})")
    name = f"list_{_snake(info.kind)}" + ("_for_all_namespaces" if info.namespaced else "")
    method = getattr(k8s_client.CoreV1Api(api_client), name, None)
    if not callable(method):
        raise ValueError(f"the kubernetes client has no CoreV1Api.{name} for {info.kind}")
    return cast(Callable[..., Any], method)
