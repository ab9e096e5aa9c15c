"""The user-facing ClusterRoles every Kubernetes cluster has: cluster-admin, admin, edit and view.

The API server creates them at start (its bootstrap policy) and keeps them reconciled, so a binding
to `edit` in a manifest means the same everywhere, whether or not the scanned files define `edit`.
Without them, "mallory may create pods in team-b, where team-b/deployer is bound to cluster-admin"
gave no path: the role was "not found" and granted nothing.

The graph (:class:`stockade.policies.facts.rbac.RBACGraph`) adds these objects when the gate's
objects do not define a ClusterRole of the same name; a live cluster's own definitions win (an audit
lists them). They are written as the API server writes them: `admin`, `edit` and `view` are
aggregated ClusterRoles (their rules are the union of the ClusterRoles their selectors match), and
the `system:aggregate-to-*` roles carry the permissions, with the labels that chain them
(view -> edit -> admin). The permissions are those of the bootstrap policy of Kubernetes 1.30 to
1.34 (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`), where these four roles have not changed.
"""

from __future__ import annotations

from typing import Any

RBAC = "rbac.authorization.k8s.io/v1"
BOOTSTRAP_LABEL = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AGG = "rbac.authorization.k8s.io/aggregate-to-"

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")


def _rule(groups: str, resources: str, verbs: tuple[str, ...]) -> dict[str, Any]:
    return {
        "apiGroups": groups.split(",") if groups else [""],
        "resources": resources.split(),
        "verbs": list(verbs),
    }


def _role(name: str, rules: list[dict[str, Any]], *, label: str = "", aggregate: str = "") -> dict[str, Any]:
    labels = dict(BOOTSTRAP_LABEL)
    if label:
        labels[_AGG + label] = "true"
    obj: dict[str, Any] = {
        "apiVersion": RBAC,
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels},
        "rules": rules,
    }
    if aggregate:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {_AGG + aggregate: "true"}}]}
    return obj


_TO_VIEW = [
    _rule(
        "",
        "configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods "
        "replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status",
        READ,
    ),
    _rule(
        "",
        "bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status "
        "resourcequotas resourcequotas/status",
        READ,
    ),
    _rule("", "namespaces", READ),
    _rule("discovery.k8s.io", "endpointslices", READ),
    _rule(
        "apps",
        "controllerrevisions daemonsets daemonsets/status deployments deployments/scale "
        "deployments/status replicasets replicasets/scale replicasets/status statefulsets "
        "statefulsets/scale statefulsets/status",
        READ,
    ),
    _rule("autoscaling", "horizontalpodautoscalers horizontalpodautoscalers/status", READ),
    _rule("batch", "cronjobs cronjobs/status jobs jobs/status", READ),
    _rule(
        "extensions",
        "daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses "
        "ingresses/status networkpolicies replicasets replicasets/scale replicasets/status "
        "replicationcontrollers/scale",
        READ,
    ),
    _rule("policy", "poddisruptionbudgets poddisruptionbudgets/status", READ),
    _rule("networking.k8s.io", "ingresses ingresses/status networkpolicies", READ),
]

_TO_EDIT = [
    _rule("", "pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy", READ),
    _rule("", "serviceaccounts", ("impersonate",)),
    _rule("", "pods pods/attach pods/exec pods/portforward pods/proxy", WRITE),
    _rule("", "pods/eviction", ("create",)),
    _rule(
        "",
        "configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale "
        "secrets serviceaccounts services services/proxy",
        WRITE,
    ),
    _rule("", "serviceaccounts/token", ("create",)),
    _rule(
        "apps",
        "daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale "
        "statefulsets statefulsets/scale",
        WRITE,
    ),
    _rule("autoscaling", "horizontalpodautoscalers", WRITE),
    _rule("batch", "cronjobs jobs", WRITE),
    _rule(
        "extensions",
        "daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets "
        "replicasets/scale replicationcontrollers/scale",
        WRITE,
    ),
    _rule("policy", "poddisruptionbudgets", WRITE),
    _rule("networking.k8s.io", "ingresses networkpolicies", WRITE),
    _rule("coordination.k8s.io", "leases", (*WRITE, *READ)),
]

_TO_ADMIN = [
    _rule("authorization.k8s.io", "localsubjectaccessreviews", ("create",)),
    _rule("rbac.authorization.k8s.io", "rolebindings roles", (*WRITE, *READ)),
]

BOOTSTRAP_CLUSTER_ROLES: tuple[dict[str, Any], ...] = (
    _role(
        "cluster-admin",
        [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ],
    ),
    _role("admin", [], aggregate="admin"),
    _role("edit", [], label="admin", aggregate="edit"),
    _role("view", [], label="edit", aggregate="view"),
    _role("system:aggregate-to-admin", _TO_ADMIN, label="admin"),
    _role("system:aggregate-to-edit", _TO_EDIT, label="edit"),
    _role("system:aggregate-to-view", _TO_VIEW, label="view"),
)

#: the names, for "is this roleRef one every cluster has?"
BOOTSTRAP_NAMES = frozenset(str(r["metadata"]["name"]) for r in BOOTSTRAP_CLUSTER_ROLES)
