"""The RBAC permission graph: who can do what, with Kubernetes' own RBAC semantics, and how far it leads.

Per-object rules (``policies/rego/rbac``) judge a Role or binding alone. What a subject can actually
do needs the whole graph: every binding naming it (or a group it is in), the role each one refers to,
aggregated ClusterRoles, and the scope of each binding. This module computes that once per inventory
(:meth:`RBACGraph.of` caches it until an RBAC object changes), and hands rules the results as facts:

- ``who_can`` / ``grants_of``: effective permissions, decided as the API server's RBAC authorizer does
  (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac and pkg/apis/rbac/v1/evaluation_helpers.go):
  a ClusterRoleBinding grants everywhere; a RoleBinding only inside its namespace, never cluster-scoped
  resources or non-resource URLs; ``*`` matches subresources, ``pods`` does not match ``pods/exec`` but
  ``*/exec`` does; empty ``resourceNames`` means all names and a create of a collection never matches a
  rule with names; an aggregated ClusterRole is the union of the roles its selectors match; a
  ServiceAccount is also the user ``system:serviceaccount:<ns>:<name>`` and in the groups
  ``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and ``system:authenticated``.
- ``risky``: which escalation-capable permissions (``RISKY``, the catalogue the Rego rules use too,
  ``policies/rego/lib/rbac.rego``) a subject holds, and through which binding and role.
- ``escalations_from`` / ``escalations_via``: escalation paths, breadth first, as chains of steps
  ("can create pods in N, so it acts as the ServiceAccounts of N"; "can impersonate ..."; "can mint
  tokens for ..."; "can bind/escalate roles, so it holds any permission"), each ending at a node
  that adds escalation-capable permissions neither the start nor a shorter path already gives. The
  ServiceAccounts of a namespace (and of every namespace) are one node each, named by the accounts
  that hold what it adds; reachability per node is memoized, so the whole graph of a large cluster
  is analysed in seconds (docs/benchmarks.md).

The analyzer :func:`facts` gives workloads ``input.facts.rbac`` (what the ServiceAccount whose token
their pods mount may do) and bindings the escalation paths whose first step they grant; the Rego rules
STK-RBAC-030/031 decide what to report. A workload whose manifest names no namespace (a scan of an
install applied with ``kubectl apply -n NS``) is judged in "default"; when no binding names its
account there, the namespaces where the gate's own bindings name an account of that name and no
scanned object is in are assumed (``assumedNamespaces``): it is bound, and with one such namespace its
account is that namespace's. Paths are not followed through Secrets (legacy token Secrets
are not indexed) or through exec into running pods (pods are not indexed).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import heapq
import weakref
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from stockade.policies.facts.inventory import RUNS, TOKEN_SECRETS, Inventory
from stockade.policies.facts.rbac_bootstrap import BOOTSTRAP_CLUSTER_ROLES
from stockade.policies.facts.rbac_bootstrap_system import system_objects
from stockade.policies.facts.serviceaccounts import facts as serviceaccount_facts
from stockade.policies.facts.serviceaccounts import secret_references
from stockade.policies.kinds.workloads import pod_template
from stockade.policies.model import LATEST_MINOR, OLDEST_MINOR

RBAC_GROUP = "rbac.authorization.k8s.io"
ROLE_KINDS = ("Role", "ClusterRole")
BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")
RBAC_KINDS = ROLE_KINDS + BINDING_KINDS
#: From this Kubernetes minor, get on pods/exec|attach|portforward no longer opens a session (a
#: WebSocket upgrade needs create too: AuthorizePodWebsocketUpgradeCreatePermission, on by default).
WEBSOCKET_CREATE_MINOR = 35

#: Longest chain followed; rules report chains up to rbac.max_path_length (≤ this).
MAX_PATH_LENGTH = 4

#: Built-in cluster-scoped resources (group, resource): a RoleBinding never grants them.
CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset(
    {
        ("", "namespaces"),
        ("", "nodes"),
        ("", "persistentvolumes"),
        ("", "componentstatuses"),
        ("", "users"),
        ("", "groups"),
        ("authentication.k8s.io", "uids"),
        ("authentication.k8s.io", "userextras"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        (RBAC_GROUP, "clusterroles"),
        (RBAC_GROUP, "clusterrolebindings"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("apiregistration.k8s.io", "apiservices"),
        ("certificates.k8s.io", "certificatesigningrequests"),
        ("certificates.k8s.io", "signers"),
        ("certificates.k8s.io", "clustertrustbundles"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "volumeattachments"),
        ("scheduling.k8s.io", "priorityclasses"),
        ("node.k8s.io", "runtimeclasses"),
        ("networking.k8s.io", "ingressclasses"),
        ("networking.k8s.io", "ipaddresses"),
        ("networking.k8s.io", "servicecidrs"),
        ("flowcontrol.apiserver.k8s.io", "flowschemas"),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
        ("policy", "podsecuritypolicies"),
    }
)

#: The core group's resources (k8s.io/api core/v1), plus the identities impersonation names.
CORE_RESOURCES = frozenset(
    {
        "bindings",
        "componentstatuses",
        "configmaps",
        "endpoints",
        "events",
        "limitranges",
        "namespaces",
        "nodes",
        "persistentvolumeclaims",
        "persistentvolumes",
        "pods",
        "podtemplates",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "serviceaccounts",
        "services",
        "users",
        "groups",
    }
)

#: API group of built-in resources, so `who-can create deployments` needs no `.apps` suffix.
KNOWN_GROUPS: dict[str, str] = {
    "deployments": "apps",
    "statefulsets": "apps",
    "daemonsets": "apps",
    "replicasets": "apps",
    "controllerrevisions": "apps",
    "jobs": "batch",
    "cronjobs": "batch",
    "roles": RBAC_GROUP,
    "rolebindings": RBAC_GROUP,
    "clusterroles": RBAC_GROUP,
    "clusterrolebindings": RBAC_GROUP,
    "networkpolicies": "networking.k8s.io",
    "ingresses": "networking.k8s.io",
    "ingressclasses": "networking.k8s.io",
    "validatingwebhookconfigurations": "admissionregistration.k8s.io",
    "mutatingwebhookconfigurations": "admissionregistration.k8s.io",
    "certificatesigningrequests": "certificates.k8s.io",
    "signers": "certificates.k8s.io",
    "uids": "authentication.k8s.io",
    "userextras": "authentication.k8s.io",
    "tokenreviews": "authentication.k8s.io",
    "subjectaccessreviews": "authorization.k8s.io",
    "customresourcedefinitions": "apiextensions.k8s.io",
    "storageclasses": "storage.k8s.io",
    "runtimeclasses": "node.k8s.io",
    "priorityclasses": "scheduling.k8s.io",
    "poddisruptionbudgets": "policy",
    "horizontalpodautoscalers": "autoscaling",
    "leases": "coordination.k8s.io",
}

WORKLOAD_RESOURCES: tuple[tuple[str, str], ...] = (
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("apps", "replicasets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
)
#: Workloads whose pod template the API server does not let an update change (a Job's spec.template
#: is immutable but for a suspended Job's scheduling directives, which name no account, image or
#: volume: batch validation, KEP-2926): only their create runs pods (Kueue's controller updates Jobs,
#: said to "run pods as any ServiceAccount" by a critical STK-RBAC-031)
TEMPLATE_FIXED: frozenset[tuple[str, str]] = frozenset({("batch", "jobs")})


def _pod_writes(group: str, resource: str) -> str:
    """The verbs on a workload resource that decide the pods it runs (:data:`TEMPLATE_FIXED`)."""
    return "create" if (group, resource) in TEMPLATE_FIXED else "create update patch"


@dataclass(frozen=True, slots=True)
class Perm:
    """One permission of the catalogue: verbs on group/resource[/subresource]; sub "*" = any."""

    verbs: tuple[str, ...]
    group: str
    resource: str
    sub: str = ""

    def display(self, verb: str) -> str:
        res = f"{self.resource}/{self.sub}" if self.sub else self.resource
        return f"{verb} {res}.{self.group}" if self.group else f"{verb} {res}"


def _p(verbs: str, group: str, *resources: str) -> tuple[Perm, ...]:
    out = []
    for res in resources:
        resource, _, sub = res.partition("/")
        out.append(Perm(tuple(verbs.split()), group, resource, sub))
    return tuple(out)


#: The escalation-capable permissions (kubernetes.io "RBAC good practices"); mirrors `catalogue` in
#: policies/rego/lib/rbac.rego (tests/policies/test_rbac_rules.py checks they agree).
RISKY: dict[str, tuple[Perm, ...]] = {
    "STK-RBAC-002": _p("get list watch", "", "secrets"),
    "STK-RBAC-003": tuple(p for g, r in WORKLOAD_RESOURCES for p in _p(_pod_writes(g, r), g, r)),
    "STK-RBAC-004": _p("create", "", "persistentvolumes"),
    "STK-RBAC-005": _p("get create", "", "nodes/proxy"),
    "STK-RBAC-006": _p("escalate bind", RBAC_GROUP, "roles", "clusterroles"),
    "STK-RBAC-007": _p("impersonate", "", "users", "groups", "serviceaccounts")
    + _p("impersonate", "authentication.k8s.io", "uids", "userextras/*"),
    "STK-RBAC-008": _p("update patch", "certificates.k8s.io", "certificatesigningrequests/approval")
    + _p("approve", "certificates.k8s.io", "signers"),
    "STK-RBAC-009": _p("create", "", "serviceaccounts/token"),
    "STK-RBAC-010": _p(
        "create update patch delete deletecollection",
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    ),
    "STK-RBAC-011": _p("patch update", "", "namespaces"),
    "STK-RBAC-012": _p("get create", "", "pods/exec", "pods/attach", "pods/portforward"),
    "STK-RBAC-013": _p("update patch", "", "pods/ephemeralcontainers"),
    "STK-RBAC-014": _p("create", "", "secrets"),
    "STK-RBAC-015": _p("update patch", "", "nodes", "nodes/status", "pods/status", "services/status"),
}


#: what a rule that only publishes information may do
_READ_VERBS = frozenset({"get", "list", "watch"})


def public_information(rule: PolicyRule) -> bool:
    """A rule that only reads objects it names (not Secrets) or non-resource URLs: what a role made
    for everyone publishes (the bootstrap system:public-info-viewer's /version and /healthz, Kubeflow
    Pipelines' kubeflow-pipelines-public ConfigMap holding the version). No wildcard verb, resource
    or name."""
    if not rule.verbs or not rule.verbs <= _READ_VERBS:
        return False
    if rule.non_resource_urls:
        return not rule.resources and "*" not in rule.non_resource_urls
    return (
        bool(rule.resources)
        and bool(rule.resource_names)
        and not rule.resources & {"*", "secrets"}
        and not any(r.startswith("*/") or r.startswith("secrets/") for r in rule.resources)
        and "*" not in rule.api_groups
    )


def cluster_scoped(group: str, resource: str, verb: str = "") -> bool:
    """Whether a request has no namespace, so that no RoleBinding can grant it. `bind` on a
    ClusterRole is the exception: it is checked in the namespace of the RoleBinding being written."""
    if verb == "bind" and (group, resource) == (RBAC_GROUP, "clusterroles"):
        return False
    return (group, resource) in CLUSTER_SCOPED


# ---- rules ---------------------------------------------------------------------------------------


def _strings(value: Any) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return frozenset(str(v) for v in value if isinstance(v, str))


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """One entry of a role's `rules`, decided exactly as the RBAC authorizer decides it."""

    verbs: frozenset[str]
    api_groups: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    resource_names: frozenset[str] = frozenset()
    non_resource_urls: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, raw: Any) -> PolicyRule | None:
        if not isinstance(raw, Mapping):
            return None
        return cls(
            _strings(raw.get("verbs")),
            _strings(raw.get("apiGroups")),
            _strings(raw.get("resources")),
            _strings(raw.get("resourceNames")),
            _strings(raw.get("nonResourceURLs")),
        )

    def verb_matches(self, verb: str) -> bool:
        return "*" in self.verbs or verb in self.verbs

    def resource_matches(self, group: str, resource: str, sub: str = "") -> bool:
        """APIGroupMatches + ResourceMatches; `sub == "*"` asks whether *some* subresource matches."""
        if not ("*" in self.api_groups or group in self.api_groups):
            return False
        if "*" in self.resources:
            return True
        if sub == "*":
            return any(r.startswith((f"{resource}/", "*/")) for r in self.resources)
        if (f"{resource}/{sub}" if sub else resource) in self.resources:
            return True
        return bool(sub) and f"*/{sub}" in self.resources

    def allows(self, verb: str, group: str, resource: str, sub: str = "", name: str = "") -> bool:
        """A resource request for one object (`name`) or a collection (`name == ""`)."""
        if not self.verb_matches(verb) or not self.resource_matches(group, resource, sub):
            return False
        return not self.resource_names or name in self.resource_names

    def allows_some_name(self, verb: str, group: str, resource: str, sub: str = "") -> bool:
        """Whether the rule grants the request for at least one name: a create of a collection has
        none, so a rule with resourceNames never grants it; subresources always name their object."""
        if not self.verb_matches(verb) or not self.resource_matches(group, resource, sub):
            return False
        return not self.resource_names or verb != "create" or bool(sub)

    def allows_url(self, verb: str, path: str) -> bool:
        if not self.verb_matches(verb):
            return False
        for url in self.non_resource_urls:
            if url == "*" or url == path or (url.endswith("*") and path.startswith(url[:-1])):
                return True
        return False

    def as_json(self) -> dict[str, list[str]]:
        out = {"verbs": sorted(self.verbs)}
        if self.non_resource_urls:
            out["nonResourceURLs"] = sorted(self.non_resource_urls)
        if self.api_groups or self.resources:
            out["apiGroups"] = sorted(self.api_groups)
            out["resources"] = sorted(self.resources)
        if self.resource_names:
            out["resourceNames"] = sorted(self.resource_names)
        return out


ANY_RULE = PolicyRule(frozenset("*"), frozenset("*"), frozenset("*"), frozenset(), frozenset("*"))

# ---- subjects and bindings -----------------------------------------------------------------------

SA_USER_PREFIX = "system:serviceaccount:"


class Subject(NamedTuple):
    """A tuple: subjects, and the nodes holding them, are set and dict keys millions of times in a
    search, and a tuple's hash and comparison run in C."""

    kind: str  # User | Group | ServiceAccount
    name: str
    namespace: str = ""  # ServiceAccounts only

    def __str__(self) -> str:
        if self.kind == "ServiceAccount":
            return f"ServiceAccount {self.namespace}/{self.name}"
        return f"{self.kind} {self.name}"

    @classmethod
    def parse(cls, text: str) -> Subject:
        """`User:alice`, `Group:devs`, `ServiceAccount:ns/name` (or `sa:ns/name`), or a ServiceAccount's
        user name `system:serviceaccount:ns:name`."""
        text = text.strip()
        if text.startswith(SA_USER_PREFIX):
            ns, _, name = text[len(SA_USER_PREFIX) :].partition(":")
            if ns and name:
                return cls("ServiceAccount", name, ns)
        kind, sep, rest = text.partition(":")
        kinds = {"user": "User", "group": "Group", "serviceaccount": "ServiceAccount", "sa": "ServiceAccount"}
        if sep and kind.lower() in kinds and rest:
            k = kinds[kind.lower()]
            if k == "ServiceAccount":
                ns, slash, name = rest.partition("/")
                if not slash or not ns or not name:
                    raise ValueError(f"ServiceAccount subject must be NAMESPACE/NAME, got {rest!r}")
                return cls(k, name, ns)
            return cls(k, rest)
        raise ValueError(f"subject must be User:NAME, Group:NAME or ServiceAccount:NS/NAME, got {text!r}")

    def identities(self) -> tuple[Subject, ...]:
        """Every subject a binding may name to grant this one something (appliesToUser)."""
        if self.kind == "ServiceAccount":
            return (
                self,
                Subject("User", f"{SA_USER_PREFIX}{self.namespace}:{self.name}"),
                Subject("Group", "system:serviceaccounts"),
                Subject("Group", f"system:serviceaccounts:{self.namespace}"),
                Subject("Group", "system:authenticated"),
            )
        if self.kind == "User":
            if self.name.startswith(SA_USER_PREFIX):
                return Subject.parse(self.name).identities()
            group = "system:unauthenticated" if self.name == "system:anonymous" else "system:authenticated"
            return (self, Subject("Group", group))
        return (self,)

    def as_json(self) -> dict[str, str]:
        out = {"kind": self.kind, "name": self.name}
        if self.namespace:
            out["namespace"] = self.namespace
        return out


@dataclass(frozen=True, slots=True)
class Binding:
    kind: str  # RoleBinding | ClusterRoleBinding
    name: str
    namespace: str  # "" for a ClusterRoleBinding
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    @property
    def scope(self) -> str | None:
        """The namespace a RoleBinding grants in; None (everywhere) for a ClusterRoleBinding."""
        return self.namespace if self.kind == "RoleBinding" else None

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    @property
    def role(self) -> str:
        where = f"{self.namespace}/" if self.role_kind == "Role" else ""
        return f"{self.role_kind} {where}{self.role_name}"

    @classmethod
    def parse(cls, obj: Mapping[str, Any]) -> Binding | None:
        kind = str(obj.get("kind") or "")
        md = _metadata(obj)
        ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), Mapping) else {}
        if kind not in BINDING_KINDS or not md or not ref:
            return None
        # a RoleBinding a manifest writes without a namespace is where kubectl apply puts it, as the
        # workloads of that manifest are judged ("default"; --namespace writes it): in "" its
        # ServiceAccount subjects were accounts of a namespace named "", which no workload runs in
        namespace = str(md.get("namespace") or "default") if kind == "RoleBinding" else ""
        role_kind = str(ref.get("kind") or "")
        if role_kind not in ROLE_KINDS or (kind == "ClusterRoleBinding" and role_kind == "Role"):
            return None
        subjects = []
        for s in obj.get("subjects") or ():
            if not isinstance(s, Mapping) or not s.get("name"):
                continue
            skind = str(s.get("kind") or "")
            if skind == "ServiceAccount":
                # appliesToUser: a ServiceAccount subject without a namespace is in the binding's.
                subjects.append(Subject(skind, str(s["name"]), str(s.get("namespace") or namespace)))
            elif skind in ("User", "Group"):
                subjects.append(Subject(skind, str(s["name"])))
        return cls(
            kind, str(md.get("name") or ""), namespace, role_kind, str(ref.get("name") or ""), tuple(subjects)
        )


@dataclass(frozen=True, slots=True)
class Grant:
    """A subject holds `rules` through `binding` (naming `via`, itself or one of its groups)."""

    via: Subject
    binding: Binding
    rules: tuple[PolicyRule, ...]
    role_found: bool

    @property
    def scope(self) -> str | None:
        return self.binding.scope

    def as_json(self) -> dict[str, Any]:
        return {
            "via": str(self.via),
            "binding": str(self.binding),
            "role": self.binding.role,
            "roleFound": self.role_found,
            "scope": self.scope_text,
        }

    @property
    def scope_text(self) -> str:
        return f"namespace {self.scope}" if self.scope is not None else "cluster-wide"


@dataclass(frozen=True, slots=True)
class Risky:
    """An escalation-capable permission a subject holds: catalogue id, permission, scope, and how."""

    id: str
    permission: str
    scope: str | None  # namespace, or None cluster-wide
    grant: Grant = field(compare=False)

    def key(self) -> tuple[str, str, str | None]:
        return (self.id, self.permission, self.scope)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "permission": self.permission, **self.grant.as_json()}


# ---- label selectors (aggregation) ---------------------------------------------------------------


def selector_matches(selector: Any, labels: Mapping[str, Any]) -> bool:
    """metav1.LabelSelector semantics; an empty selector matches everything."""
    if not isinstance(selector, Mapping):
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        if not isinstance(expr, Mapping):
            return False
        key, op = str(expr.get("key") or ""), expr.get("operator")
        values = expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else {}


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    labels = md.get("labels") if isinstance(md, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _rules(obj: Mapping[str, Any]) -> tuple[PolicyRule, ...]:
    return tuple(r for r in (PolicyRule.parse(x) for x in obj.get("rules") or ()) if r is not None)


# ---- escalation paths ----------------------------------------------------------------------------


Key = tuple[str, str, str | None]  # (catalogue id, permission, namespace or None for cluster-wide)
#: Permissions grouped by (catalogue id, permission) -> scopes (namespaces, None = cluster-wide): the
#: ServiceAccounts of every namespace hold thousands of keys, but only a few dozen groups.
Keys = Mapping[tuple[str, str], frozenset[str | None]]
#: one permission of Keys: (catalogue id, permission, scope); sets of them compare in C
Triple = tuple[str, str, str | None]


class Node(NamedTuple):
    """Where a step leads: an identity, the ServiceAccounts of a namespace (or of every namespace),
    any permission (in a namespace or cluster-wide), or a role the subject can bind. A tuple, like
    Subject, for hashing in C."""

    kind: str  # subject | namespace | all | running | tokens | anything | role
    subject: Subject | None = None
    scope: str | None = None
    role: tuple[str, str] | None = None

    def __str__(self) -> str:
        if self.subject is not None:
            return str(self.subject)
        if self.kind == "namespace":
            return f"the ServiceAccounts of namespace {self.scope}"
        if self.kind == "all":
            return "the ServiceAccounts of every namespace"
        if self.kind in ("running", "tokens"):
            where = f"namespace {self.scope}" if self.scope is not None else "every namespace"
            if self.kind == "tokens":
                return f"the ServiceAccounts with a legacy token Secret in {where}"
            return f"the ServiceAccounts of the pods running in {where}"
        if self.role is not None:
            return f"{self.role[0]} {self.role[1]} " + _scope_text(self.scope)
        return "any permission " + _scope_text(self.scope)

    @property
    def identity(self) -> bool:
        return self.kind in ("subject", "namespace", "all", "running", "tokens")


@dataclass(frozen=True, slots=True)
class Step:
    actor: Node
    action: str  # e.g. "can create pods in namespace ml"
    grant: Grant
    target: Node

    def text(self) -> str:
        so = "so it acts as" if self.target.identity else "so it holds"
        via = f"{self.grant.binding} -> {self.grant.binding.role}"
        return f"{self.actor} {self.action} ({via}), {so} {self.target}"


@dataclass(frozen=True, slots=True)
class Path:
    start: Subject
    steps: tuple[Step, ...]
    gains: tuple[str, ...]  # "STK-RBAC-002 get secrets (cluster-wide)", ... or "every permission ..."
    holders: tuple[str, ...] = ()  # for a group of ServiceAccounts: those that hold the gains

    @property
    def target(self) -> Node:
        return self.steps[-1].target

    @property
    def target_text(self) -> str:
        if not self.holders:
            return str(self.target)
        named, more = self.holders, ""
        if self.holders[-1].startswith("(and "):
            named, more = self.holders[:-1], " " + self.holders[-1]
        return ", ".join(named) + more

    def as_json(self) -> dict[str, Any]:
        return {
            "subject": str(self.start),
            "target": self.target_text,
            "length": len(self.steps),
            "steps": [s.text() for s in self.steps],
            "bindings": [str(s.grant.binding) for s in self.steps],
            "gains": list(self.gains),
        }


def _scope_text(scope: str | None) -> str:
    return f"in namespace {scope}" if scope is not None else "cluster-wide"


# ---- the graph -----------------------------------------------------------------------------------

_CACHE: weakref.WeakKeyDictionary[Inventory, tuple[tuple[int, int], RBACGraph]] = weakref.WeakKeyDictionary()


class RBACGraph:
    """Roles, bindings and subjects of one cluster (or one scanned set), indexed for queries.

    Build it with :meth:`of` (cached per inventory until an RBAC object is added or removed) or
    :meth:`build` / :meth:`from_objects`. Building only indexes; permissions, risky sets and
    escalation paths are computed on demand and memoized per subject.
    """

    def __init__(
        self,
        objects: Iterable[Mapping[str, Any]],
        running: Mapping[str, frozenset[str]] | None = None,
        token_secrets: Mapping[tuple[str, str], str] | None = None,
        minor: int = OLDEST_MINOR,
    ) -> None:
        """`running`: namespace -> the ServiceAccounts its pods run as (the scanned workloads, or a
        cluster's pods); `token_secrets`: (namespace, Secret) -> the ServiceAccount of each legacy
        token Secret seen (Inventory.running_accounts / token_secrets); `minor`: the Kubernetes 1.x
        version the objects are for (Inventory.kubernetes_minor), where authorization differs."""
        self.minor = minor
        self.running: dict[str, frozenset[str]] = {ns: a for ns, a in (running or {}).items() if a}
        self.token_secrets: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for (ns, secret), account in sorted((token_secrets or {}).items()):
            self.token_secrets[ns].append((secret, account))
        self.roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = {}
        self._cluster_roles: dict[str, Mapping[str, Any]] = {}
        self.bindings: list[Binding] = []
        for obj in objects:
            self._add(obj)
        # Every cluster has the API server's bootstrap policy (cluster-admin, admin/edit/view, the
        # system: roles and bindings, one per controller): where the gate's objects do not define an
        # object of the same kind and name, the API server's own definition applies (it recreates a
        # deleted one at start). They are part of every path, never a start of one (`own_subjects`).
        own = {b.key for b in self.bindings}
        self.own_subjects = frozenset(s for b in self.bindings for s in b.subjects)
        first_bootstrap = len(self.bindings)
        for bootstrap in BOOTSTRAP_CLUSTER_ROLES:
            self._cluster_roles.setdefault(str(bootstrap["metadata"]["name"]), bootstrap)
        for obj in system_objects(min(max(minor, OLDEST_MINOR), LATEST_MINOR)):
            md = obj["metadata"]
            kind = obj["kind"]
            if kind == "ClusterRole":
                self._cluster_roles.setdefault(md["name"], obj)
            elif kind == "Role":
                self.roles.setdefault((md["namespace"], md["name"]), _rules(obj))
            elif (kind, md.get("namespace", ""), md["name"]) not in own:
                self._add(obj)
        #: bindings of the bootstrap policy the gate's objects did not define
        self.bootstrap_keys = frozenset(b.key for b in self.bindings[first_bootstrap:])
        self.cluster_roles: dict[str, tuple[PolicyRule, ...]] = {}
        for name in self._cluster_roles:
            self._resolve(name, set())
        self.by_subject: dict[Subject, list[Binding]] = defaultdict(list)
        self.cluster_bindings: list[Binding] = []
        self.namespace_bindings: dict[str, list[Binding]] = defaultdict(list)
        # ServiceAccounts named by bindings, per namespace: the identities a pod in it can run as
        # (others hold only what their groups hold, which the namespace's "default" account stands for).
        self.service_accounts: dict[str, set[Subject]] = defaultdict(set)
        for b in self.bindings:
            (
                self.cluster_bindings
                if b.kind == "ClusterRoleBinding"
                else self.namespace_bindings[b.namespace]
            ).append(b)
            for s in b.subjects:
                self.by_subject[s].append(b)
                if s.kind == "ServiceAccount":
                    self.service_accounts[s.namespace].add(s)
                elif s.kind == "Group" and s.name.startswith("system:serviceaccounts:"):
                    ns = s.name[len("system:serviceaccounts:") :]
                    self.service_accounts[ns].add(Subject("ServiceAccount", "default", ns))
        # Every namespace has its `default` ServiceAccount, which a pod runs as unless it names another,
        # and which holds what system:serviceaccounts[:<ns>] and system:authenticated hold.
        known = set(self.namespace_bindings) | {ns for ns, _ in self.roles} | set(self.service_accounts)
        # the accounts pods run as, and those legacy token Secrets hold, are identities too
        for ns, accounts in self.running.items():
            self.service_accounts[ns].update(Subject("ServiceAccount", a, ns) for a in accounts)
        for ns, secrets in self.token_secrets.items():
            self.service_accounts[ns].update(Subject("ServiceAccount", a, ns) for _, a in secrets)
        known |= set(self.running) | set(self.token_secrets)
        for ns in known:
            if ns:
                self.service_accounts[ns].add(Subject("ServiceAccount", "default", ns))
        self._grants: dict[Subject, tuple[Grant, ...]] = {}
        self._risky: dict[Subject, tuple[Risky, ...]] = {}
        self._edges: dict[Node, tuple[Step, ...]] = {}
        self._keys: dict[Node, Keys] = {}
        self._closure_key_sets: dict[Node, Keys] = {}
        self._useful_cache: dict[tuple[Node, int], tuple[tuple[Node, tuple[Step, ...]], ...]] = {}
        self._interned: dict[Node, Node] = {}
        self._holder_lists: dict[tuple[Node, frozenset[tuple[str, str]], str], tuple[str, ...] | None] = {}
        self._triples: dict[Node, frozenset[Triple]] = {}
        self._paths: dict[Subject, tuple[Path, ...]] = {}
        self._members: dict[Node, Mapping[tuple[str, str], frozenset[str]]] = {}

    def _add(self, obj: Mapping[str, Any]) -> None:
        kind = obj.get("kind")
        md = _metadata(obj)
        name = str(md.get("name") or "")
        if kind == "Role":
            self.roles[(str(md.get("namespace") or "default"), name)] = _rules(obj)  # as a RoleBinding's
        elif kind == "ClusterRole":
            self._cluster_roles[name] = obj
        elif kind in BINDING_KINDS:
            b = Binding.parse(obj)
            if b is not None:
                self.bindings.append(b)

    # -- construction ------------------------------------------------------------------------------

    @classmethod
    def from_objects(cls, objects: Iterable[Mapping[str, Any]]) -> RBACGraph:
        """The graph of a set of objects: RBAC objects, and the workloads, pods and legacy token
        Secrets among them (whose accounts paths through running pods and Secrets reach)."""
        inventory = Inventory()
        for obj in objects:
            inventory.add(obj)
        return cls.build(inventory)

    @classmethod
    def build(cls, inventory: Inventory) -> RBACGraph:
        return cls(
            (o for kind in RBAC_KINDS for o in inventory.of_kind(kind)),
            inventory.running_accounts(),
            inventory.token_secrets(),
            inventory.kubernetes_minor,
        )

    @classmethod
    def of(cls, inventory: Inventory) -> RBACGraph:
        """The graph of an inventory, built once and rebuilt only after an RBAC object changed, an
        account started or stopped running somewhere, or a token Secret came or went."""
        version = (
            sum(inventory.versions.get(k, 0) for k in (*RBAC_KINDS, RUNS, TOKEN_SECRETS)),
            inventory.kubernetes_minor,
        )
        cached = _CACHE.get(inventory)
        if cached is not None and cached[0] == version:
            return cached[1]
        graph = cls.build(inventory)
        _CACHE[inventory] = (version, graph)
        return graph

    def _resolve(self, name: str, visiting: set[str]) -> tuple[PolicyRule, ...]:
        """A ClusterRole's rules; an aggregated one's are the union of the roles its selectors match
        (what the aggregation controller writes into it), followed transitively, cycles cut."""
        done = self.cluster_roles.get(name)
        if done is not None:
            return done
        obj = self._cluster_roles.get(name)
        if obj is None:
            return ()
        own = _rules(obj)
        agg = obj.get("aggregationRule")
        selectors = agg.get("clusterRoleSelectors") if isinstance(agg, Mapping) else None
        if not selectors:
            self.cluster_roles[name] = own
            return own
        visiting = visiting | {name}
        rules = dict.fromkeys(own)
        for other, other_obj in self._cluster_roles.items():
            if other in visiting or not any(selector_matches(s, _labels(other_obj)) for s in selectors):
                continue
            rules.update(dict.fromkeys(self._resolve(other, visiting)))
        resolved = tuple(rules)
        self.cluster_roles[name] = resolved
        return resolved

    def role_rules(self, binding: Binding) -> tuple[tuple[PolicyRule, ...], bool]:
        if binding.role_kind == "Role":
            found = self.roles.get((binding.namespace, binding.role_name))
        else:
            found = self.cluster_roles.get(binding.role_name)
        return (found, True) if found is not None else ((), False)

    # -- effective permissions ---------------------------------------------------------------------

    def grants_of(self, subject: Subject) -> tuple[Grant, ...]:
        """Every binding that grants the subject something, through itself or one of its groups."""
        done = self._grants.get(subject)
        if done is not None:
            return done
        out = []
        for ident in subject.identities():
            for b in self.by_subject.get(ident, ()):
                rules, found = self.role_rules(b)
                out.append(Grant(ident, b, rules, found))
        grants = tuple(out)
        self._grants[subject] = grants
        return grants

    def subjects(self) -> list[Subject]:
        """The subjects the gate's own bindings name (not those only the bootstrap policy names)."""
        return sorted(self.own_subjects)

    def who_can(
        self,
        verb: str,
        group: str,
        resource: str,
        sub: str = "",
        namespace: str | None = None,
        name: str = "",
    ) -> list[tuple[Subject, Grant]]:
        """Subjects the bindings name that may make this request, with the grant that allows it.

        Bindings of the Kubernetes bootstrap policy that the gate's objects do not define (the
        controllers', system:masters') do not count: a question about manifests is answered about
        the manifests' subjects. A live cluster's bindings are all its own.

        `namespace` None asks about a cluster-wide request (all namespaces, or a cluster-scoped
        resource), which only ClusterRoleBindings grant. A create of a top-level resource carries no
        name (the object does not exist yet), so `name` does not apply to it: rules with
        resourceNames never grant it.
        """
        if verb == "create" and not sub:
            name = ""
        candidates: list[Binding] = list(self.cluster_bindings)
        if namespace is not None and not cluster_scoped(group, resource, verb):
            candidates += self.namespace_bindings.get(namespace, ())
        return self._who(candidates, lambda r: r.allows(verb, group, resource, sub, name))

    def allowing(
        self,
        subject: Subject,
        groups: Iterable[str],
        verb: str,
        *,
        group: str = "",
        resource: str = "",
        sub: str = "",
        namespace: str = "",
        name: str = "",
        path: str = "",
    ) -> Binding | None:
        """The binding that lets `subject` (with the authenticator's extra `groups`) make this request,
        as the RBAC authorizer decides it (bootstrap policy included), or None. A resource request
        without a namespace, or on a cluster-scoped resource, is granted by ClusterRoleBindings only;
        a non-resource `path` likewise."""
        identities = dict.fromkeys((*subject.identities(), *(Subject("Group", g) for g in groups)))
        for ident in identities:
            for b in self.by_subject.get(ident, ()):
                if b.scope is not None and (path or not namespace or b.scope != namespace):
                    continue
                if b.scope is not None and cluster_scoped(group, resource, verb):
                    continue
                rules, _ = self.role_rules(b)
                if path:
                    if any(r.allows_url(verb, path) for r in rules):
                        return b
                elif any(r.allows(verb, group, resource, sub, name) for r in rules):
                    return b
        return None

    def who_can_url(self, verb: str, path: str) -> list[tuple[Subject, Grant]]:
        """Non-resource URLs (/metrics, /healthz ...): only ClusterRoleBindings grant them."""
        return self._who(self.cluster_bindings, lambda r: r.allows_url(verb, path))

    def _who(self, bindings: Iterable[Binding], allows: Any) -> list[tuple[Subject, Grant]]:
        memo: dict[tuple[str, str, str], tuple[bool, tuple[PolicyRule, ...], bool]] = {}
        out: list[tuple[Subject, Grant]] = []
        for b in bindings:
            if b.key in self.bootstrap_keys:  # the inputs' own subjects only (who_can)
                continue
            key = (b.role_kind, b.namespace if b.role_kind == "Role" else "", b.role_name)
            hit = memo.get(key)
            if hit is None:
                rules, found = self.role_rules(b)
                hit = (any(allows(r) for r in rules), rules, found)
                memo[key] = hit
            if hit[0]:
                out.extend((s, Grant(s, b, hit[1], hit[2])) for s in b.subjects)
        return sorted(out, key=lambda sg: (sg[0], str(sg[1].binding)))

    # -- escalation-capable permissions ------------------------------------------------------------

    def risky(self, subject: Subject) -> tuple[Risky, ...]:
        done = self._risky.get(subject)
        if done is None:
            done = self._risky[subject] = risky_of(self.grants_of(subject), self.minor)
        return done

    # -- escalation paths --------------------------------------------------------------------------

    def _service_accounts(self, scope: str | None, names: frozenset[str]) -> Iterator[Subject]:
        """Named ServiceAccounts in a namespace (or in every namespace the graph knows)."""
        namespaces: Iterable[str] = [scope] if scope is not None else sorted(self.service_accounts)
        for ns in namespaces:
            for n in sorted(names):
                yield Subject("ServiceAccount", n, ns)

    def _members_of(self, namespace: str | None) -> set[Subject]:
        """The ServiceAccounts of a namespace: those bindings name, and always `default`."""
        ns = namespace or ""
        return self.service_accounts.get(ns) or {Subject("ServiceAccount", "default", ns)}

    def _parts(self, node: Node) -> list[Node] | None:
        """The nodes an aggregate node stands for, in order: the accounts of a namespace, of the pods
        running in one (or anywhere), or with a legacy token Secret in one (or anywhere); the
        namespaces, for every account. None for other nodes."""
        if node.kind == "namespace":
            accounts: Iterable[Subject] = self._members_of(node.scope)
        elif node.kind == "all":
            return [Node("namespace", scope=ns) for ns in sorted(self.service_accounts)]
        elif node.kind in ("running", "tokens"):
            by_ns = (
                self.running
                if node.kind == "running"
                else {ns: [a for _, a in secrets] for ns, secrets in self.token_secrets.items()}
            )
            namespaces = [node.scope] if node.scope is not None else sorted(by_ns)
            accounts = {Subject("ServiceAccount", a, ns) for ns in namespaces for a in by_ns.get(ns, ())}
        else:
            return None
        return [Node("subject", sa) for sa in sorted(accounts)]

    def _running(self, scope: str | None) -> Node | None:
        """The accounts of the pods running in a namespace (None: anywhere), when any are known."""
        if scope is None:
            return Node("running") if self.running else None
        return Node("running", scope=scope) if self.running.get(scope) else None

    def _accounts(self, scope: str | None) -> Node | None:
        """Every ServiceAccount of a namespace (None: of every namespace), as one node."""
        if scope is None:
            return Node("all") if self.service_accounts else None
        return Node("namespace", scope=scope)

    def _token_readers(self, rule: PolicyRule, pv: Pivots, scope: str | None) -> Iterator[tuple[str, Node]]:
        """Edges to the accounts whose legacy token Secrets a rule reads: one node for every such
        Secret in reach (a cluster-wide reader: one edge, not one per Secret), or each named one."""
        if pv.reads_any_secret:
            if scope is None or self.token_secrets.get(scope):
                yield f"can read the Secrets {_scope_text(scope)}", Node("tokens", scope=scope)
            return
        for ns in [scope] if scope is not None else sorted(self.token_secrets):
            for secret, account in self.token_secrets.get(ns, ()):
                if rule.allows("get", "", "secrets", name=secret):
                    target = Node("subject", Subject("ServiceAccount", account, ns))
                    yield f"can read the token Secret {secret} in namespace {ns}", target

    def _steps(self, actor: Node, grants: Iterable[Grant]) -> tuple[Step, ...]:
        """The "can act as" edges a set of grants gives `actor`."""
        out: dict[tuple[Node, str], Step] = {}

        def add(action: str, grant: Grant, target: Node | None) -> None:
            if target is not None and target != actor:
                # one object per node: the searches' set and dict lookups then compare identities
                target = self._interned.setdefault(target, target)
                out.setdefault((target, action), Step(actor, action, grant, target))

        grants = tuple(grants)
        # where the actor can read Secrets (any grant: creating a token Secret and reading it back
        # may come from two bindings)
        reads_secrets = {g.scope for g in grants for r in g.rules if rule_pivots(r).reads_secrets}
        for g in grants:
            scope, where = g.scope, _scope_text(g.scope)
            pivots = [(rule, rule_pivots(rule)) for rule in g.rules]
            for rule, pv in pivots:
                if (runner := pod_runner(rule)) is not None:
                    add(f"can {runner} {where}", g, self._accounts(scope))
                if pv.execs or (pv.execs_by_get and self.minor < WEBSOCKET_CREATE_MINOR):
                    add(f"can {pod_intrusion(rule)} {where}", g, self._running(scope))
                if scope is None and pv.proxies_nodes:
                    action = "can run commands in any pod through the kubelet (nodes/proxy)"
                    add(action, g, self._running(None))
                if pv.creates_secrets and (None in reads_secrets or scope in reads_secrets):
                    add(
                        f"can create a token Secret for any ServiceAccount {where} and read it",
                        g,
                        self._accounts(scope),
                    )
                if pv.reads_secrets and self.token_secrets:
                    for action, target in self._token_readers(rule, pv, scope):
                        add(action, g, target)
                for allowed, what in (
                    (pv.mints_tokens, "can mint tokens for"),
                    (pv.impersonates_sa, "can impersonate"),
                ):
                    if not allowed:
                        continue
                    if not rule.resource_names:
                        add(f"{what} any ServiceAccount {where}", g, self._accounts(scope))
                    for sa in self._service_accounts(scope, rule.resource_names):
                        add(f"{what} ServiceAccount {sa.name} {where}", g, Node("subject", sa))
                if scope is None:
                    for kind, resource, allowed in (
                        ("User", "users", pv.impersonates_users),
                        ("Group", "groups", pv.impersonates_groups),
                    ):
                        if not allowed:
                            continue
                        if rule.resource_names:
                            for n in sorted(rule.resource_names):
                                add(f"can impersonate {resource}", g, Node("subject", Subject(kind, n)))
                        else:
                            add(f"can impersonate any {kind.lower()}", g, Node("anything"))
                for i, role_res in enumerate(("roles", "clusterroles")):
                    # A RoleBinding may bind a ClusterRole inside its namespace (bind on clusterroles is
                    # checked at the namespace, and rolebindings are what it creates); ClusterRoles
                    # themselves are cluster-scoped, so escalating them needs a ClusterRoleBinding.
                    escalate_ok = scope is None or role_res == "roles"
                    if escalate_ok and pv.escalates[i] and any(p.writes_roles[i] for _, p in pivots):
                        add(f"can escalate {role_res} {where}", g, Node("anything", scope=scope))
                    creates = 0 if scope is not None else i  # rolebindings, or clusterrolebindings
                    if pv.binds[i] and any(p.creates_bindings[creates] for _, p in pivots):
                        if not rule.resource_names:
                            add(f"can bind any {role_res[:-1]} {where}", g, Node("anything", scope=scope))
                        else:
                            kind = "ClusterRole" if role_res == "clusterroles" else "Role"
                            for n in sorted(rule.resource_names):
                                add(
                                    f"can bind {kind} {n} {where}",
                                    g,
                                    Node("role", scope=scope, role=(kind, n)),
                                )
        return tuple(out.values())

    def edges(self, node: Node) -> tuple[Step, ...]:
        """The steps out of a node (memoized): an aggregate node has its accounts' steps."""
        done = self._edges.get(node)
        if done is not None:
            return done
        parts = self._parts(node)
        if node.subject is not None:
            steps = self._steps(node, self.grants_of(node.subject))
        elif parts is not None:
            merged: dict[tuple[Node, str], Step] = {}
            for part in parts:
                for st in self.edges(part):
                    if st.target != node:
                        merged.setdefault((st.target, st.action), st)
            steps = tuple(merged.values())
        else:
            steps = ()
        self._edges[node] = steps
        return steps

    def keys_of(self, node: Node) -> Keys:
        """The escalation-capable permissions reaching `node` gives (memoized)."""
        done = self._keys.get(node)
        if done is not None:
            return done
        parts = self._parts(node)
        if node.subject is not None:
            keys = _group(r.key() for r in self.risky(node.subject))
        elif parts is not None:
            keys = _merge(self.keys_of(part) for part in parts)
        else:
            rules: tuple[PolicyRule, ...]
            if node.kind == "anything":
                kind, name, rules = "ClusterRole", "*", (ANY_RULE,)
            else:
                assert node.role is not None
                kind, name = node.role
                found = (
                    self.roles.get((node.scope or "", name))
                    if kind == "Role"
                    else self.cluster_roles.get(name)
                )
                rules = found or ()
            scope_kind = "RoleBinding" if node.scope is not None else "ClusterRoleBinding"
            b = Binding(scope_kind, "(new)", node.scope or "", kind, name, ())
            bound = [Grant(Subject("User", "(bound)"), b, rules, True)]
            keys = _group(r.key() for r in risky_of(bound, self.minor))
        self._keys[node] = keys
        return keys

    def _useful(
        self, node: Node, depth: int = MAX_PATH_LENGTH - 1
    ) -> tuple[tuple[Node, tuple[Step, ...]], ...]:
        """The nodes reachable from `node` in at most `depth` steps, shortest first (breadth-first
        order), with their chain of steps, less those that cannot add a permission to a search that
        has reached `node`: one whose permissions are all held by `node` or by a node listed before it.

        A search takes candidates shortest first, and in this order among equal lengths, so when it
        comes to a dropped node everything the node holds is covered already: dropping it changes no
        path. For the same reason the list is built from the children's lists (each one step
        longer) instead of a walk over everything reachable: a node a child dropped is covered
        whenever the walk would reach it through that child. Memoized per (node, depth); in a dense
        graph (exec in every namespace, token Secrets read everywhere) the lists stay a few long."""
        done = self._useful_cache.get((node, depth))
        if done is not None:
            return done
        edges = self.edges(node)
        candidates: list[tuple[int, Node, tuple[Step, ...]]] = [(1, st.target, (st,)) for st in edges]
        if depth > 1:
            for st in edges:
                candidates += [
                    (1 + len(chain), n, (st, *chain)) for n, chain in self._useful(st.target, depth - 1)
                ]
            candidates.sort(key=lambda c: c[0])
        held = set(self.triples_of(node))
        wide = {(rid, perm) for rid, perm, scope in held if scope is None}  # cluster-wide covers all
        seen = {node}
        out = []
        for _, n, chain in candidates:
            if n in seen:
                continue
            seen.add(n)
            new = self.triples_of(n) - held
            if new and (
                not wide
                or (
                    not self.keys_of(n).keys() <= wide  # some permission of n is not held cluster-wide
                    and any(scope is None or (rid, perm) not in wide for rid, perm, scope in new)
                )
            ):
                out.append((n, chain))
                held |= new
                wide.update((rid, perm) for rid, perm, scope in new if scope is None)
        result = tuple(out)
        self._useful_cache[(node, depth)] = result
        if depth == MAX_PATH_LENGTH - 1:
            # what everything in reach holds: the dropped nodes added nothing to it
            self._closure_key_sets[node] = _merge([self.keys_of(node), *(self.keys_of(n) for n, _ in out)])
        return result

    def triples_of(self, node: Node) -> frozenset[Triple]:
        """keys_of as a set of (id, permission, scope), for set arithmetic in C."""
        done = self._triples.get(node)
        if done is None:
            done = frozenset(
                (k[0], k[1], scope) for k, scopes in self.keys_of(node).items() for scope in scopes
            )
            self._triples[node] = done
        return done

    def _closure_keys(self, node: Node) -> Keys:
        done = self._closure_key_sets.get(node)
        if done is None:
            self._useful(node)
            done = self._closure_key_sets[node]
        return done

    def escalations_from(self, start: Subject, first: Iterable[Grant] | None = None) -> tuple[Path, ...]:
        """Escalation paths of `start`, shortest first: chains of steps to a node whose permissions
        include escalation-capable ones that neither `start` nor a shorter path already gives.

        `first` restricts the first step to those grants (a binding being admitted, which the
        inventory may not hold yet); their permissions count as the start's own.
        """
        if first is None and start in self._paths:
            return self._paths[start]
        with _paused_gc():
            return self._search(start, first)

    def _search(self, start: Subject, first: Iterable[Grant] | None) -> tuple[Path, ...]:
        me = Node("subject", start)
        covered: dict[tuple[str, str], set[str | None]] = {}
        _cover(covered, self.keys_of(me))
        if first is None:
            direct = self.edges(me)
        else:
            first = tuple(first)
            _cover(covered, _group(r.key() for r in risky_of(first, self.minor)))
            direct = self._steps(me, first)
        candidates: list[tuple[int, Node, tuple[Step, ...]]] = [(1, st.target, (st,)) for st in direct]
        for st in direct:
            candidates += [(1 + len(chain), n, (st, *chain)) for n, chain in self._useful(st.target)]
        candidates.sort(key=lambda c: c[0])
        # what each direct target leads to (one entry per target)
        reachable = [self._closure_keys(t) for t in dict.fromkeys(st.target for st in direct)]
        still = 0  # reachable[:still] are covered
        paths: list[Path] = []
        seen = {me}
        for _, node, chain in candidates:
            if node in seen:
                continue
            seen.add(node)
            uncovered = _uncovered(self.keys_of(node), covered)
            if not uncovered:
                continue
            holders = self._holders(node, uncovered, exclude=str(me))
            if holders is None:
                # a group whose only member holding these is the start itself (permissions of its
                # other bindings, when `first` is one binding): no escalation, and not a target
                continue
            new = _describe(uncovered)
            _cover(covered, uncovered)  # the same as covering all of the node's keys
            gains = (f"every permission {_scope_text(node.scope)}",) if node.kind == "anything" else new
            paths.append(Path(start, chain, gains, holders))
            # nothing further down can add a permission: stop (what is covered stays covered, so
            # the closures checked already are never checked again)
            while still < len(reachable) and not _any_new(reachable[still], covered):
                still += 1
            if still == len(reachable):
                break
        result = tuple(paths)
        if first is None:
            self._paths[start] = result
        return result

    def _holders(self, node: Node, new: Keys, exclude: str = "") -> tuple[str, ...] | None:
        """Which members of a group node hold the permissions it adds (at most 5 named, then how
        many more), ``exclude`` (the path's start) left out; () for a node that is no group, None
        for a group whose only member holding them is ``exclude``."""
        index = self._members.get(node)
        if index is None:
            members = self._parts(node)
            if members is None:
                return ()
            by_key: dict[tuple[str, str], set[str]] = defaultdict(set)
            for m in members:
                for k in self.keys_of(m):
                    by_key[k].add(str(m))
            index = self._members[node] = {k: frozenset(v) for k, v in by_key.items()}
        key = (node, frozenset(new), exclude)
        if key in self._holder_lists:
            return self._holder_lists[key]
        holding = set().union(*(index.get(k, ()) for k in new))
        found = holding - {exclude}
        first = heapq.nsmallest(5, found)
        done: tuple[str, ...] | None = tuple(first) + (
            (f"(and {len(found) - 5} more)",) if len(found) > 5 else ()
        )
        if not found and exclude in holding:
            done = None  # the start alone holds them
        self._holder_lists[key] = done
        return done

    def escalations_via(self, binding: Binding) -> list[tuple[int, Path]]:
        """Paths whose first step is granted by `binding`, per subject index of the binding."""
        rules, found = self.role_rules(binding)
        out = []
        for i, s in enumerate(binding.subjects):
            grant = Grant(s, binding, rules, found)
            for path in self.escalations_from(s, first=(grant,)):
                out.append((i, path))
        return out

    def all_escalations(self) -> list[Path]:
        """The paths of every subject the gate's own bindings name (the bootstrap policy's subjects,
        the controllers and system: users, are steps of paths, not findings of their own)."""
        with _paused_gc():
            return [p for s in sorted(self.own_subjects) for p in self.escalations_from(s)]


@functools.lru_cache(maxsize=65536)
def pod_runner(rule: PolicyRule) -> str | None:
    """How a rule runs pods as any account of its scope, as an escalation step says it, or None
    where it does not (cached like :func:`rule_pivots`): "create pods", else the controller it creates
    (a collection create: never with names) or points at another account by an update ("create
    deployments.apps, and so pods"): a step that named pods for a role holding only get on them was
    rejected by the reviewer who checked it."""
    if rule.allows("create", "", "pods"):
        return "create pods"
    for verbs in (("create",), ("update", "patch")):
        for group, resource in WORKLOAD_RESOURCES:
            if resource == "pods" or verbs[0] not in _pod_writes(group, resource):
                continue
            for verb in verbs:
                allowed = (
                    rule.allows(verb, group, resource)
                    if verb == "create"
                    else rule.allows_some_name(verb, group, resource)
                )
                if allowed:
                    return f"{verb} {resource}{'.' + group if group else ''}, and so pods,"
    return None


@functools.lru_cache(maxsize=65536)
def pod_intrusion(rule: PolicyRule) -> str:
    """How a rule whose pivots say ``execs`` (or ``execs_by_get``) runs code in pods already
    running, as a step says it: commands (exec, attach), ephemeral containers, or a new image (an
    update of the pod: gpu-operator's patch pods was "can run commands in the pods")."""
    if any(rule.allows_some_name(v, "", "pods", s) for v in ("create", "get") for s in ("exec", "attach")):
        return "run commands in the pods"
    if any(rule.allows_some_name(v, "", "pods", "ephemeralcontainers") for v in ("update", "patch")):
        return "add ephemeral containers to the pods"
    return "change the image of the pods"


class Pivots(NamedTuple):
    """What a rule offers for escalation, per (roles, clusterroles) / (rolebindings, clusterrolebindings)."""

    execs: bool  # runs code in the pods already there: exec, attach, ephemeral containers, patch pods
    execs_by_get: bool  # get on pods/exec or attach: a session before Kubernetes 1.35 (WebSocket)
    proxies_nodes: bool  # nodes/proxy: the kubelet API of every node, so exec in every pod
    creates_secrets: bool
    reads_secrets: bool
    reads_any_secret: bool  # get without resourceNames, list or watch
    mints_tokens: bool
    impersonates_sa: bool
    impersonates_users: bool
    impersonates_groups: bool
    escalates: tuple[bool, bool]
    writes_roles: tuple[bool, bool]
    binds: tuple[bool, bool]
    creates_bindings: tuple[bool, bool]


@functools.lru_cache(maxsize=65536)
def rule_pivots(rule: PolicyRule) -> Pivots:
    """Cached like rule_risks. Running pods as any account (creating pods or controllers, pointing
    a controller at another account) is :func:`pod_runner`'s."""
    roles = ("roles", "clusterroles")

    def writes(resource: str) -> bool:
        return any(rule.allows_some_name(v, RBAC_GROUP, resource) for v in ("create", "update", "patch"))

    execs = (
        any(rule.allows_some_name("create", "", "pods", s) for s in ("exec", "attach"))
        or any(rule.allows_some_name(v, "", "pods", "ephemeralcontainers") for v in ("update", "patch"))
        or any(rule.allows_some_name(v, "", "pods") for v in ("update", "patch"))
    )
    return Pivots(
        execs=execs,
        execs_by_get=any(rule.allows_some_name("get", "", "pods", s) for s in ("exec", "attach")),
        proxies_nodes=any(rule.allows_some_name(v, "", "nodes", "proxy") for v in ("get", "create")),
        creates_secrets=rule.allows("create", "", "secrets"),
        reads_secrets=any(rule.allows_some_name(v, "", "secrets") for v in ("get", "list", "watch")),
        reads_any_secret=any(rule.allows(v, "", "secrets") for v in ("get", "list", "watch")),
        mints_tokens=rule.allows_some_name("create", "", "serviceaccounts", "token"),
        impersonates_sa=rule.allows_some_name("impersonate", "", "serviceaccounts"),
        impersonates_users=rule.allows_some_name("impersonate", "", "users"),
        impersonates_groups=rule.allows_some_name("impersonate", "", "groups"),
        escalates=(
            rule.allows_some_name("escalate", RBAC_GROUP, roles[0]),
            rule.allows_some_name("escalate", RBAC_GROUP, roles[1]),
        ),
        writes_roles=(writes(roles[0]), writes(roles[1])),
        binds=(
            rule.allows_some_name("bind", RBAC_GROUP, roles[0]),
            rule.allows_some_name("bind", RBAC_GROUP, roles[1]),
        ),
        creates_bindings=(
            rule.allows("create", RBAC_GROUP, "rolebindings"),
            rule.allows("create", RBAC_GROUP, "clusterrolebindings"),
        ),
    )


@functools.lru_cache(maxsize=65536)
def rule_risks(rule: PolicyRule) -> tuple[tuple[str, str, bool], ...]:
    """(catalogue id, permission, cluster-scoped?) of every catalogue permission a rule grants.
    Cached: real clusters repeat the same rules across thousands of roles."""
    out = []
    for rid, perms in RISKY.items():
        for perm in perms:
            for verb in perm.verbs:
                if rule.allows_some_name(verb, perm.group, perm.resource, perm.sub):
                    out.append((rid, perm.display(verb), cluster_scoped(perm.group, perm.resource, verb)))
    return tuple(out)


def risky_of(grants: Iterable[Grant], minor: int = OLDEST_MINOR) -> tuple[Risky, ...]:
    """The catalogue permissions the grants give (one entry per id, permission and scope); a
    RoleBinding never gives the cluster-scoped ones. From Kubernetes 1.35 (`minor`) `get` on
    pods/exec, attach and portforward opens nothing (create is required), as STK-RBAC-012 says."""
    found: dict[tuple[str, str, str | None], Risky] = {}
    for g in grants:
        for rule in g.rules:
            for rid, perm, cluster in rule_risks(rule):
                if cluster and g.scope is not None:
                    continue
                r = Risky(rid, perm, g.scope, g)
                found.setdefault(r.key(), r)
    # Approving a CSR takes both update on certificatesigningrequests/approval and approve on the
    # signer: either alone approves nothing (STK-RBAC-008 says the same of one role).
    csr = [r.permission for r in found.values() if r.id == "STK-RBAC-008"]
    if not (
        any("certificatesigningrequests/approval" in p for p in csr) and any(" signers" in p for p in csr)
    ):
        found = {k: r for k, r in found.items() if r.id != "STK-RBAC-008"}
    if minor >= WEBSOCKET_CREATE_MINOR:
        found = {
            k: r for k, r in found.items() if not (r.id == "STK-RBAC-012" and r.permission.startswith("get "))
        }
    return tuple(sorted(found.values(), key=lambda r: (r.id, r.permission, r.scope or "")))


@contextlib.contextmanager
def _paused_gc() -> Iterator[None]:
    """No cyclic garbage collection during a search: it allocates millions of short-lived tuples and
    no reference cycles (reference counting frees them all), and on a large graph the collector's
    passes over the graph's long-lived objects were a quarter of the search time (bench/rbac.py)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _group(keys: Iterable[Key]) -> Keys:
    out: dict[tuple[str, str], set[str | None]] = defaultdict(set)
    for rid, perm, scope in keys:
        out[(rid, perm)].add(scope)
    return {k: frozenset(v) for k, v in out.items()}


def _merge(many: Iterable[Keys]) -> Keys:
    out: dict[tuple[str, str], set[str | None]] = defaultdict(set)
    for keys in many:
        for k, scopes in keys.items():
            out[k].update(scopes)
    return {k: frozenset(v) for k, v in out.items()}


def _cover(covered: dict[tuple[str, str], set[str | None]], keys: Keys) -> None:
    for k, scopes in keys.items():
        covered.setdefault(k, set()).update(scopes)


def _uncovered(keys: Keys, covered: Mapping[tuple[str, str], set[str | None]]) -> Keys:
    """Per (id, permission), the scopes of `keys` that `covered` lacks; cluster-wide covers all.
    (A loop, not a generator: it runs for every candidate node of every search.)"""
    out: dict[tuple[str, str], frozenset[str | None]] = {}
    get = covered.get
    for k, scopes in keys.items():
        have = get(k)
        if have is None:
            out[k] = scopes
        elif None not in have:
            new = scopes - have
            if new:
                out[k] = new
    return out


def _any_new(keys: Keys, covered: Mapping[tuple[str, str], set[str | None]]) -> bool:
    get = covered.get
    for k, scopes in keys.items():
        have = get(k)
        if have is None or (None not in have and not scopes <= have):
            return True
    return False


def _describe(keys: Keys) -> tuple[str, ...]:
    """One line per permission: its scope, or how many namespaces."""
    out = []
    for (rid, perm), scopes in keys.items():
        if None in scopes:
            where = "cluster-wide"
        elif len(scopes) == 1:
            where = f"in namespace {next(iter(scopes))}"
        else:
            names = sorted(str(s) for s in scopes)
            more = f", and {len(names) - 3} more" if len(names) > 3 else ""
            where = f"in {len(names)} namespaces: {', '.join(names[:3])}{more}"
        out.append(f"{rid} {perm} ({where})")
    return tuple(sorted(out))


# ---- the analyzer --------------------------------------------------------------------------------


def facts(
    obj: Mapping[str, Any], inventory: Inventory, pod: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`input.facts.rbac` for workloads (their ServiceAccount's risky permissions and escalation
    paths) and bindings (the escalation paths whose first step they grant)."""
    kind = obj.get("kind")
    if kind in BINDING_KINDS:
        binding = Binding.parse(obj)
        if binding is None:
            return {}
        graph = RBACGraph.of(inventory)
        rules, found = graph.role_rules(binding)
        role = {"kind": binding.role_kind, "name": binding.role_name, "found": found}
        if found and rules and all(public_information(r) for r in rules):
            role["publicInformation"] = True
        out: dict[str, Any] = {"role": role, "inventoryComplete": inventory.complete}
        via = graph.escalations_via(binding) if binding.subjects else []
        if via:
            out["escalations"] = [{"subjectIndex": i, **p.as_json()} for i, p in via]
        return {"rbac": out}
    pod = pod_template(obj) if pod is None else pod
    if pod is None or not any(inventory.versions.get(k) for k in BINDING_KINDS):
        return {}
    sa_facts = serviceaccount_facts(obj, inventory, pod).get("serviceAccount")
    md = _metadata(obj)
    if not sa_facts:
        return {}
    # no namespace: where kubectl apply puts it (a scan says so once, and --namespace sets it)
    namespace = str(md.get("namespace") or "default")
    sa = Subject("ServiceAccount", str(sa_facts["name"]), namespace)
    graph = RBACGraph.of(inventory)
    assumed: list[str] = []
    if not md.get("namespace") and sa.name and not _names(graph, sa):
        # A manifest set without namespaces is applied with `kubectl apply -n NS` (argo-rollouts'
        # install.yaml): its bindings name the account in NS, which nothing in the scan is in. Those
        # namespaces are where the workload is assumed to be; one of them is the account's namespace.
        assumed = assumed_namespaces(graph, inventory, sa.name)
        if len(assumed) == 1:
            namespace = assumed[0]
            sa = Subject("ServiceAccount", sa.name, namespace)
    risky = graph.risky(sa)
    paths = graph.escalations_from(sa)
    mounted: list[dict[str, Any]] = []
    for path, secret in secret_references(pod.get("spec")):
        account = inventory.token_account(namespace, secret)
        if account is None or any(m["secret"] == secret for m in mounted):
            continue
        holder = Subject("ServiceAccount", account, namespace)
        held, further = graph.risky(holder), graph.escalations_from(holder)
        if held or further:
            mounted.append(
                {
                    "secret": secret,
                    "path": path,
                    "serviceAccount": f"{namespace}/{account}",
                    "risky": [r.as_json() for r in held],
                    "escalations": [p.as_json() for p in further],
                }
            )
    # bound: a binding names this account itself (not a group of accounts): the workload is an API
    # client by design, which STK-SA-001 reads
    bound = _names(graph, sa) or bool(assumed)
    where: dict[str, Any] = {"assumedNamespaces": assumed} if assumed else {}
    if not risky and not paths and not mounted:
        return (
            {"rbac": {"serviceAccount": f"{sa.namespace}/{sa.name}", "bound": True, **where}} if bound else {}
        )
    out = {
        "bound": bound,
        **where,
        "serviceAccount": f"{sa.namespace}/{sa.name}",
        "tokenMounted": bool(sa_facts["tokenMounted"]),
        "risky": [r.as_json() for r in risky],
        "escalations": [p.as_json() for p in paths],
    }
    if mounted:
        out["tokenSecrets"] = mounted
    return {"rbac": out}


def _names(graph: RBACGraph, sa: Subject) -> bool:
    """Whether a binding names the ServiceAccount itself (as a ServiceAccount or as its user name)."""
    return bool(
        graph.by_subject.get(sa)
        or graph.by_subject.get(Subject("User", f"{SA_USER_PREFIX}{sa.namespace}:{sa.name}"))
    )


_DEFINED: weakref.WeakKeyDictionary[Inventory, tuple[int, frozenset[str]]] = weakref.WeakKeyDictionary()


def defined_namespaces(inventory: Inventory) -> frozenset[str]:
    """The namespaces the inventory's objects are in (a Namespace object alone does not count: an
    install applied with `kubectl apply -n NS` may create NS and name it nowhere else)."""
    version = inventory.version
    cached = _DEFINED.get(inventory)
    if cached is not None and cached[0] == version:
        return cached[1]
    names = {str(md["namespace"]) for obj in inventory.objects() if (md := _metadata(obj)).get("namespace")}
    # workloads and Pods are kept as the accounts they run as, token Secrets as the account they hold
    names.update(inventory.running_accounts(), (ns for ns, _ in inventory.token_secrets()))
    names.discard("")
    _DEFINED[inventory] = (version, frozenset(names))
    return frozenset(names)


def assumed_namespaces(graph: RBACGraph, inventory: Inventory, account: str) -> list[str]:
    """For a workload whose manifest names no namespace: the namespaces in which the gate's own
    bindings (not the API server's bootstrap policy) name a ServiceAccount called `account`, among the
    namespaces no object of the inventory is in. Sorted; [] when there are none."""
    defined = defined_namespaces(inventory)
    found: set[str] = set()
    for s in graph.own_subjects:
        if s.kind == "ServiceAccount" and s.name == account:
            ns = s.namespace
        elif s.kind == "User" and s.name.startswith(SA_USER_PREFIX):
            ns, _, name = s.name[len(SA_USER_PREFIX) :].partition(":")
            if name != account:
                continue
        else:
            continue
        if ns and ns != "default" and ns not in defined:
            found.add(ns)
    return sorted(found)
