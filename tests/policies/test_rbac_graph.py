"""The RBAC graph decides every semantic point as the Kubernetes RBAC authorizer does.

Each test builds a tiny set of Roles and bindings and asks the graph (policies/facts/rbac.py) who may
make a request, what a subject holds, or where it can escalate. The points are those of POLICIES.md §2:
binding scope, wildcard and subresource matching, resourceNames, nonResourceURLs, aggregated
ClusterRoles, ServiceAccount group membership; then escalation paths, attribution facts and caching.
"""

from __future__ import annotations

from typing import Any

import pytest

from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.facts.rbac import MAX_PATH_LENGTH, Binding, Node, RBACGraph, Subject, cluster_scoped
from tests.workloads import token_secret

RBAC = "rbac.authorization.k8s.io/v1"


def cluster_role(
    name: str, *rules: dict[str, Any], labels: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if labels:
        md["labels"] = labels
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": md, "rules": list(rules), **extra}


def role(ns: str, name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC,
        "kind": "Role",
        "metadata": {"name": name, "namespace": ns},
        "rules": list(rules),
    }


def crb(name: str, role_name: str, *subjects: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
        "subjects": list(subjects),
    }


def rb(ns: str, name: str, role_kind: str, role_name: str, *subjects: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC,
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
        "subjects": list(subjects),
    }


def rule(verbs: str, resources: str, groups: str = "", names: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "verbs": verbs.split(),
        "resources": resources.split(),
        "apiGroups": [""] if groups == "" else groups.split(),
    }
    if names is not None:
        out["resourceNames"] = names.split()
    return out


def user(name: str) -> dict[str, str]:
    return {"kind": "User", "name": name, "apiGroup": "rbac.authorization.k8s.io"}


def group(name: str) -> dict[str, str]:
    return {"kind": "Group", "name": name, "apiGroup": "rbac.authorization.k8s.io"}


def sa(ns: str | None, name: str) -> dict[str, str]:
    out = {"kind": "ServiceAccount", "name": name}
    if ns is not None:
        out["namespace"] = ns
    return out


def own(graph: RBACGraph, grants: Any) -> tuple[Any, ...]:
    """The grants of the test's own bindings (not those of the Kubernetes bootstrap policy)."""
    return tuple(g for g in grants if g.binding.key not in graph.bootstrap_keys)


def who(graph: RBACGraph, *args: Any, **kwargs: Any) -> set[str]:
    return {str(s) for s, _ in graph.who_can(*args, **kwargs)}


ALICE = "User alice"


# ---- binding scope -------------------------------------------------------------------------------


def test_cluster_role_binding_grants_everywhere() -> None:
    g = RBACGraph.from_objects([cluster_role("r", rule("get", "pods")), crb("b", "r", user("alice"))])
    assert who(g, "get", "", "pods") == {ALICE}
    assert who(g, "get", "", "pods", namespace="any") == {ALICE}
    assert who(g, "list", "", "pods", namespace="any") == set()


def test_role_binding_grants_only_in_its_namespace() -> None:
    objs = [cluster_role("r", rule("get", "pods")), rb("team-a", "b", "ClusterRole", "r", user("alice"))]
    g = RBACGraph.from_objects(objs)
    assert who(g, "get", "", "pods", namespace="team-a") == {ALICE}
    assert who(g, "get", "", "pods", namespace="team-b") == set()
    assert who(g, "get", "", "pods") == set()  # cluster-wide: only ClusterRoleBindings


def test_role_binding_never_grants_cluster_scoped_resources_or_urls() -> None:
    r = cluster_role(
        "r", rule("get", "nodes persistentvolumes"), {"verbs": ["get"], "nonResourceURLs": ["*"]}
    )
    g = RBACGraph.from_objects([r, rb("team-a", "b", "ClusterRole", "r", user("alice"))])
    assert who(g, "get", "", "nodes", namespace="team-a") == set()
    assert who(g, "get", "", "persistentvolumes", namespace="team-a") == set()
    assert {str(s) for s, _ in g.who_can_url("get", "/metrics")} == set()
    g2 = RBACGraph.from_objects([r, crb("b", "r", user("alice"))])
    assert who(g2, "get", "", "nodes") == {ALICE}
    assert {str(s) for s, _ in g2.who_can_url("get", "/metrics")} == {ALICE}


def test_bind_on_cluster_roles_is_checked_in_the_role_binding_namespace() -> None:
    """Writing a RoleBinding to ClusterRole X in N checks `bind` on clusterroles/X in namespace N."""
    r = cluster_role("binder", rule("bind", "clusterroles", "rbac.authorization.k8s.io", names="view"))
    g = RBACGraph.from_objects([r, rb("team-a", "b", "ClusterRole", "binder", user("alice"))])
    assert who(g, "bind", "rbac.authorization.k8s.io", "clusterroles", namespace="team-a", name="view") == {
        ALICE
    }
    assert who(g, "bind", "rbac.authorization.k8s.io", "clusterroles", name="view") == set()
    assert who(g, "escalate", "rbac.authorization.k8s.io", "clusterroles", namespace="team-a") == set()
    assert [(x.id, x.scope) for x in g.risky(Subject("User", "alice"))] == [("STK-RBAC-006", "team-a")]


def test_role_binding_to_role_of_its_namespace_only() -> None:
    objs = [
        role("team-a", "r", rule("get", "pods")),
        rb("team-b", "b", "Role", "r", user("alice")),  # no Role team-b/r: grants nothing
        rb("team-a", "b", "Role", "r", user("bob")),
    ]
    g = RBACGraph.from_objects(objs)
    assert who(g, "get", "", "pods", namespace="team-b") == set()
    assert who(g, "get", "", "pods", namespace="team-a") == {"User bob"}
    grants = own(g, g.grants_of(Subject("User", "alice")))
    assert [gr.role_found for gr in grants] == [False]


def test_cluster_role_binding_to_a_role_is_ignored() -> None:
    bad = crb("b", "r", user("alice"))
    bad["roleRef"]["kind"] = "Role"
    g = RBACGraph.from_objects([role("", "r", rule("*", "*", "*")), bad])
    assert own(g, g.grants_of(Subject("User", "alice"))) == ()


# ---- matching ------------------------------------------------------------------------------------


def test_star_matches_subresources_but_a_resource_does_not() -> None:
    objs = [
        cluster_role("star", rule("get", "*")),
        cluster_role("pods", rule("get", "pods")),
        cluster_role("sub", rule("get", "*/exec")),
        cluster_role("podsstar", rule("get", "pods/*")),
        crb("b1", "star", user("star")),
        crb("b2", "pods", user("pods")),
        crb("b3", "sub", user("sub")),
        crb("b4", "podsstar", user("podsstar")),
    ]
    g = RBACGraph.from_objects(objs)
    assert who(g, "get", "", "pods", "exec") == {"User star", "User sub"}
    assert who(g, "get", "", "pods") == {"User star", "User pods"}
    assert who(g, "get", "", "nodes", "exec") == {"User star", "User sub"}
    # `pods/*` is not a pattern in RBAC: it matches only a subresource literally named "*".
    assert "User podsstar" not in who(g, "get", "", "pods", "log")


def test_verb_and_group_wildcards_and_group_mismatch() -> None:
    objs = [
        cluster_role("v", rule("*", "deployments", "apps")),
        cluster_role("g", rule("get", "deployments", "*")),
        cluster_role("core", rule("get", "deployments")),  # the core group has no deployments
        crb("b1", "v", user("v")),
        crb("b2", "g", user("g")),
        crb("b3", "core", user("core")),
    ]
    g = RBACGraph.from_objects(objs)
    assert who(g, "get", "apps", "deployments") == {"User v", "User g"}
    assert who(g, "delete", "apps", "deployments") == {"User v"}


def test_resource_names() -> None:
    objs = [
        cluster_role("named", rule("get create update", "secrets", names="db")),
        cluster_role("token", rule("create", "serviceaccounts/token", names="builder")),
        crb("b1", "named", user("alice")),
        crb("b2", "token", user("bob")),
    ]
    g = RBACGraph.from_objects(objs)
    assert who(g, "get", "", "secrets", name="db") == {ALICE}
    assert who(g, "get", "", "secrets", name="other") == set()
    assert who(g, "get", "", "secrets") == set()  # a collection has no name
    assert who(g, "update", "", "secrets", name="db") == {ALICE}
    assert who(g, "create", "", "secrets") == set()  # create of a collection never matches names
    # a subresource names its object: a token for "builder" is granted, for others not
    assert who(g, "create", "", "serviceaccounts", "token", name="builder") == {"User bob"}
    assert who(g, "create", "", "serviceaccounts", "token", name="x") == set()


def test_non_resource_urls() -> None:
    r = cluster_role("u", {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/metrics/*"]})
    g = RBACGraph.from_objects([r, crb("b", "u", user("alice"))])
    urls = {
        p: {str(s) for s, _ in g.who_can_url("get", p)} for p in ("/healthz", "/metrics/cadvisor", "/api")
    }
    assert urls == {"/healthz": {ALICE}, "/metrics/cadvisor": {ALICE}, "/api": set()}
    assert g.who_can_url("post", "/healthz") == []
    # a rule with nonResourceURLs grants no resources
    assert who(g, "get", "", "pods") == set()


# ---- aggregation ---------------------------------------------------------------------------------


def test_aggregated_cluster_roles_are_the_union_of_matching_roles() -> None:
    agg = {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-ops": "true"}}]}
    objs = [
        cluster_role("ops", aggregationRule=agg),
        cluster_role("a", rule("get", "pods"), labels={"rbac.example.com/aggregate-to-ops": "true"}),
        cluster_role("b", rule("list", "secrets"), labels={"rbac.example.com/aggregate-to-ops": "true"}),
        cluster_role("c", rule("delete", "pods"), labels={"other": "true"}),
        crb("b", "ops", user("alice")),
    ]
    g = RBACGraph.from_objects(objs)
    assert who(g, "get", "", "pods") == {ALICE}
    assert who(g, "list", "", "secrets") == {ALICE}
    assert who(g, "delete", "", "pods") == set()


def test_aggregation_match_expressions_transitive_and_cycles() -> None:
    sel_top = {
        "clusterRoleSelectors": [{"matchExpressions": [{"key": "tier", "operator": "In", "values": ["mid"]}]}]
    }
    sel_mid = {"clusterRoleSelectors": [{"matchExpressions": [{"key": "tier", "operator": "Exists"}]}]}
    objs = [
        cluster_role("top", aggregationRule=sel_top),
        cluster_role("mid", labels={"tier": "mid"}, aggregationRule=sel_mid),  # matches top too: a cycle
        cluster_role("leaf", rule("watch", "configmaps"), labels={"tier": "leaf"}),
        crb("b", "top", user("alice")),
    ]
    g = RBACGraph.from_objects(objs)
    assert who(g, "watch", "", "configmaps") == {ALICE}


# ---- subjects ------------------------------------------------------------------------------------


def test_service_account_groups_and_user_name() -> None:
    objs = [
        cluster_role("r1", rule("get", "pods")),
        cluster_role("r2", rule("get", "configmaps")),
        cluster_role("r3", rule("get", "services")),
        cluster_role("r4", rule("get", "endpoints")),
        crb("all-sas", "r1", group("system:serviceaccounts")),
        rb("ml", "ns-sas", "ClusterRole", "r2", group("system:serviceaccounts:ml")),
        crb("authn", "r3", group("system:authenticated")),
        crb("by-user-name", "r4", user("system:serviceaccount:ml:trainer")),
    ]
    g = RBACGraph.from_objects(objs)
    trainer = Subject("ServiceAccount", "trainer", "ml")
    bindings = {str(gr.binding) for gr in own(g, g.grants_of(trainer))}
    assert bindings == {
        "ClusterRoleBinding all-sas",
        "RoleBinding ml/ns-sas",
        "ClusterRoleBinding authn",
        "ClusterRoleBinding by-user-name",
    }
    other = Subject("ServiceAccount", "trainer", "other-ns")
    assert {str(gr.binding) for gr in own(g, g.grants_of(other))} == {
        "ClusterRoleBinding all-sas",
        "ClusterRoleBinding authn",
    }
    assert {str(gr.binding) for gr in own(g, g.grants_of(Subject("User", "alice")))} == {
        "ClusterRoleBinding authn"
    }
    # the anonymous user is unauthenticated, not authenticated: of the bootstrap policy it holds only
    # system:public-info-viewer (/healthz, /version ...)
    anonymous = g.grants_of(Subject("User", "system:anonymous"))
    assert own(g, anonymous) == ()
    assert {str(gr.binding) for gr in anonymous} == {"ClusterRoleBinding system:public-info-viewer"}
    # the ServiceAccount's user name is the ServiceAccount
    assert g.grants_of(Subject("User", "system:serviceaccount:ml:trainer")) == g.grants_of(trainer)


def test_service_account_subject_without_namespace_is_in_the_binding_namespace() -> None:
    g = RBACGraph.from_objects(
        [cluster_role("r", rule("get", "pods")), rb("ml", "b", "ClusterRole", "r", sa(None, "x"))]
    )
    assert who(g, "get", "", "pods", namespace="ml") == {"ServiceAccount ml/x"}


def test_subject_parsing() -> None:
    assert Subject.parse("sa:ml/x") == Subject("ServiceAccount", "x", "ml")
    assert Subject.parse("ServiceAccount:ml/x") == Subject("ServiceAccount", "x", "ml")
    assert Subject.parse("system:serviceaccount:ml:x") == Subject("ServiceAccount", "x", "ml")
    assert Subject.parse("User:alice@example.com") == Subject("User", "alice@example.com")
    assert Subject.parse("group:system:masters") == Subject("Group", "system:masters")
    for bad in ("alice", "sa:x", "Robot:x"):
        with pytest.raises(ValueError):
            Subject.parse(bad)


# ---- escalation-capable permissions --------------------------------------------------------------


def test_risky_permissions_respect_binding_scope() -> None:
    everything = cluster_role("everything", rule("*", "*", "*"))
    g = RBACGraph.from_objects([everything, rb("ml", "b", "ClusterRole", "everything", user("alice"))])
    ids = {r.id for r in g.risky(Subject("User", "alice"))}
    # cluster-scoped ones (PVs, nodes/proxy, CSR approval, webhooks, namespaces, users/groups) are not granted
    assert ids == {
        "STK-RBAC-002",
        "STK-RBAC-003",
        "STK-RBAC-006",
        "STK-RBAC-007",
        "STK-RBAC-009",
        "STK-RBAC-012",
        "STK-RBAC-013",
        "STK-RBAC-014",
        "STK-RBAC-015",  # pods/status, services/status (nodes are cluster-scoped)
    }
    assert {r.permission for r in g.risky(Subject("User", "alice")) if r.id == "STK-RBAC-015"} == {
        "patch pods/status",
        "update pods/status",
        "patch services/status",
        "update services/status",
    }
    assert {r.scope for r in g.risky(Subject("User", "alice"))} == {"ml"}
    g2 = RBACGraph.from_objects([everything, crb("b", "everything", user("alice"))])
    assert {r.id for r in g2.risky(Subject("User", "alice"))} == {f"STK-RBAC-{n:03d}" for n in range(2, 16)}


# ---- escalation paths ----------------------------------------------------------------------------


def _paths(g: RBACGraph, subject: Subject) -> dict[str, list[str]]:
    return {p.target_text: [s.action for s in p.steps] for p in g.escalations_from(subject)}


def test_pod_creation_reaches_more_privileged_service_accounts_of_the_namespace() -> None:
    objs = [
        cluster_role("deployer", rule("create", "deployments", "apps")),
        cluster_role("reader", rule("get list", "secrets")),
        rb("ml", "deployers", "ClusterRole", "deployer", group("ml-devs")),
        crb("sync", "reader", sa("ml", "sync")),
        crb("other-ns", "reader", sa("other", "sync")),
        rb("ml", "plain", "ClusterRole", "deployer", sa("ml", "builder")),  # holds nothing more
    ]
    g = RBACGraph.from_objects(objs)
    paths = g.escalations_from(Subject("Group", "ml-devs"))
    assert [p.target_text for p in paths] == ["ServiceAccount ml/sync"]
    assert paths[0].steps[0].action == "can create deployments.apps, and so pods, in namespace ml"
    assert paths[0].gains == (
        "STK-RBAC-002 get secrets (cluster-wide)",
        "STK-RBAC-002 list secrets (cluster-wide)",
    )
    assert "RoleBinding ml/deployers" in paths[0].steps[0].text()
    # a subject that already holds the target's permissions gains nothing from it
    assert g.escalations_from(Subject("ServiceAccount", "sync", "other")) == ()


def test_named_create_is_no_pod_creation_but_controller_update_is() -> None:
    objs = [
        cluster_role("named", rule("create", "pods", names="p")),
        cluster_role("patcher", rule("patch", "deployments", "apps", names="web")),
        cluster_role("reader", rule("get", "secrets")),
        rb("ml", "b1", "ClusterRole", "named", user("alice")),
        rb("ml", "b2", "ClusterRole", "patcher", user("bob")),
        rb("ml", "b3", "ClusterRole", "reader", sa("ml", "sync")),
    ]
    g = RBACGraph.from_objects(objs)
    assert _paths(g, Subject("User", "alice")) == {}
    assert _paths(g, Subject("User", "bob")) == {
        "ServiceAccount ml/sync": ["can patch deployments.apps, and so pods, in namespace ml"]
    }


def test_bind_and_escalate_lead_to_anything() -> None:
    objs = [
        cluster_role(
            "binder",
            rule("bind", "clusterroles", "rbac.authorization.k8s.io"),
            rule("create", "clusterrolebindings", "rbac.authorization.k8s.io"),
        ),
        cluster_role("escalator", rule("escalate update", "roles", "rbac.authorization.k8s.io")),
        cluster_role("bind-only", rule("bind", "clusterroles", "rbac.authorization.k8s.io")),
        cluster_role(
            "named-bind",
            rule("bind", "clusterroles", "rbac.authorization.k8s.io", names="secret-reader"),
            rule("create", "rolebindings", "rbac.authorization.k8s.io"),
        ),
        cluster_role("secret-reader", rule("get", "secrets")),
        crb("b1", "binder", user("alice")),
        rb("ml", "b2", "ClusterRole", "escalator", user("bob")),
        crb("b3", "bind-only", user("carol")),
        rb("ml", "b4", "ClusterRole", "named-bind", user("dave")),
    ]
    g = RBACGraph.from_objects(objs)
    alice = g.escalations_from(Subject("User", "alice"))
    assert [p.target_text for p in alice] == ["any permission cluster-wide"]
    assert alice[0].gains == ("every permission cluster-wide",)
    assert _paths(g, Subject("User", "bob")) == {
        "any permission in namespace ml": ["can escalate roles in namespace ml"]
    }
    assert _paths(g, Subject("User", "carol")) == {}  # bind without creating bindings leads nowhere
    dave = g.escalations_from(Subject("User", "dave"))
    assert [p.target_text for p in dave] == ["ClusterRole secret-reader in namespace ml"]
    assert dave[0].gains == ("STK-RBAC-002 get secrets (in namespace ml)",)


def test_impersonation_and_token_requests() -> None:
    objs = [
        cluster_role("imp-any", rule("impersonate", "users")),
        cluster_role("imp-named", rule("impersonate", "users", names="ops-admin")),
        cluster_role("imp-sa", rule("impersonate", "serviceaccounts", names="sync")),
        cluster_role("tokens", rule("create", "serviceaccounts/token", names="sync")),
        cluster_role("reader", rule("get", "secrets")),
        crb("b1", "imp-any", user("alice")),
        crb("b2", "imp-named", user("bob")),
        rb("ml", "b3", "ClusterRole", "imp-sa", user("carol")),
        rb("ml", "b4", "ClusterRole", "tokens", user("dave")),
        crb("b5", "reader", user("ops-admin")),
        crb("b6", "reader", sa("ml", "sync")),
        crb("b7", "reader", sa("ml", "other")),
    ]
    g = RBACGraph.from_objects(objs)
    assert _paths(g, Subject("User", "alice")) == {
        "any permission cluster-wide": ["can impersonate any user"]
    }
    assert _paths(g, Subject("User", "bob")) == {"User ops-admin": ["can impersonate users"]}
    assert _paths(g, Subject("User", "carol")) == {
        "ServiceAccount ml/sync": ["can impersonate ServiceAccount sync in namespace ml"]
    }
    assert _paths(g, Subject("User", "dave")) == {
        "ServiceAccount ml/sync": ["can mint tokens for ServiceAccount sync in namespace ml"]
    }


def test_multi_step_chain() -> None:
    objs = [
        cluster_role("deployer", rule("create", "pods")),
        cluster_role("tokens", rule("create", "serviceaccounts/token")),
        cluster_role("admin-ish", rule("*", "*", "*")),
        rb("dev", "devs", "ClusterRole", "deployer", group("devs")),
        rb("dev", "ci-tokens", "ClusterRole", "tokens", sa("dev", "ci")),  # ci mints tokens in ops
        rb("ops", "ci-in-ops", "ClusterRole", "tokens", sa("dev", "ci")),
        crb("root", "admin-ish", sa("ops", "root")),
    ]
    g = RBACGraph.from_objects(objs)
    paths = {p.target_text: p for p in g.escalations_from(Subject("Group", "devs"))}
    chain = paths["ServiceAccount ops/root"]
    assert [str(s.target) for s in chain.steps] == [
        "the ServiceAccounts of namespace dev",
        "the ServiceAccounts of namespace ops",
    ]
    assert len(chain.steps) == 2
    assert "STK-RBAC-005 get nodes/proxy (cluster-wide)" in chain.gains


def test_escalations_via_a_binding_not_yet_in_the_inventory() -> None:
    """Admission sees a new binding before the cache does: its own grant is the first step."""
    objs = [cluster_role("deployer", rule("create", "pods")), crb("sync", "deployer-less", sa("ml", "sync"))]
    objs.append(cluster_role("deployer-less", rule("get", "secrets")))
    g = RBACGraph.from_objects(objs)
    new = Binding.parse(rb("ml", "new", "ClusterRole", "deployer", user("x"), user("y")))
    assert new is not None
    via = g.escalations_via(new)
    assert [(i, p.target_text) for i, p in via] == [
        (0, "ServiceAccount ml/sync"),
        (1, "ServiceAccount ml/sync"),
    ]


# ---- facts and caching ---------------------------------------------------------------------------


def _workload(sa_name: str, automount: bool | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"serviceAccountName": sa_name, "containers": [{"name": "c", "image": "x"}]}
    if automount is not None:
        spec["automountServiceAccountToken"] = automount
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {"template": {"spec": spec}},
    }


def test_workload_facts_attribute_the_service_account_permissions() -> None:
    sa_obj = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "sync", "namespace": "ml"},
        "automountServiceAccountToken": False,
    }
    objs = [cluster_role("reader", rule("get", "secrets")), crb("b", "reader", sa("ml", "sync")), sa_obj]
    inv = inventory_of(objs)
    facts = facts_for(_workload("sync"), inv)["rbac"]
    assert facts["serviceAccount"] == "ml/sync"
    assert facts["tokenMounted"] is False  # the ServiceAccount's setting, the pod leaves it unset
    assert [r["id"] for r in facts["risky"]] == ["STK-RBAC-002"]
    assert facts_for(_workload("sync", automount=True), inv)["rbac"]["tokenMounted"] is True
    assert "rbac" not in facts_for(_workload("nobody"), inv)


def test_binding_facts_list_paths_with_subject_index() -> None:
    objs = [
        cluster_role("deployer", rule("create", "pods")),
        cluster_role("reader", rule("get", "secrets")),
        rb("ml", "devs", "ClusterRole", "deployer", user("nobody"), group("devs")),
        crb("sync", "reader", sa("ml", "sync")),
    ]
    inv = inventory_of(objs)
    facts = facts_for(objs[2], inv)["rbac"]["escalations"]
    assert [(p["subjectIndex"], p["subject"], p["target"], p["length"]) for p in facts] == [
        (0, "User nobody", "ServiceAccount ml/sync", 1),
        (1, "Group devs", "ServiceAccount ml/sync", 1),
    ]
    # no path: the binding's facts say only that its role exists (STK-RBAC-032 reads it)
    assert facts_for(objs[3], inv) == {
        "rbac": {"role": {"kind": "ClusterRole", "name": "reader", "found": True}, "inventoryComplete": False}
    }


def test_graph_is_built_once_per_inventory_version() -> None:
    objs = [cluster_role("reader", rule("get", "secrets")), crb("b", "reader", user("alice"))]
    inv = inventory_of(objs)
    first = RBACGraph.of(inv)
    assert RBACGraph.of(inv) is first
    inv.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
    assert RBACGraph.of(inv) is first  # not an RBAC kind
    inv.add(crb("b2", "reader", user("bob")))
    second = RBACGraph.of(inv)
    assert second is not first
    assert who(second, "get", "", "secrets") == {ALICE, "User bob"}
    inv.remove("ClusterRoleBinding", None, "b")
    assert who(RBACGraph.of(inv), "get", "", "secrets") == {"User bob"}


# ---- scale: the benchmark's cluster (10,000 roles, 20,000 bindings, 5,000 ServiceAccounts) --------------


def test_scale_who_can_and_escalations_are_complete_and_correct(load_module: Any) -> None:
    """Correctness only (timings are in docs/benchmarks.md): the indexed who-can agrees with a
    linear scan of every binding, and the whole escalation analysis finishes and finds the planted
    three-step chain."""
    bench = load_module("stockade_bench_rbac", "bench/rbac.py")
    objects = bench.generate()
    assert sum(o["kind"] in ("Role", "ClusterRole") for o in objects) >= 10_000
    assert sum(o["kind"] in ("RoleBinding", "ClusterRoleBinding") for o in objects) >= 20_000
    assert sum(o["kind"] == "ServiceAccount" for o in objects) == 5_000
    graph = RBACGraph.of(inventory_of(objects))
    for verb, grp, res, sub, ns in bench.QUERIES:
        expected = set()
        for b in graph.bindings:
            if b.key in graph.bootstrap_keys:
                continue
            if b.kind == "RoleBinding" and (ns is None or b.namespace != ns or cluster_scoped(grp, res)):
                continue
            rules, _ = graph.role_rules(b)
            if any(r.allows(verb, grp, res, sub) for r in rules):
                expected |= {(s, str(b)) for s in b.subjects}
        got = {(s, str(g.binding)) for s, g in graph.who_can(verb, grp, res, sub, ns)}
        assert got == expected, (verb, res, sub, ns)
    paths = graph.all_escalations()
    assert len(paths) > 1000
    for p in paths:
        assert 1 <= len(p.steps) <= MAX_PATH_LENGTH and p.gains
        assert p.steps[0].actor == Node("subject", p.start)
    devs = graph.escalations_from(Subject("Group", "planted-devs"))
    chain = [p for p in devs if p.target_text == "any permission cluster-wide"]
    assert len(chain) == 1
    assert [str(s.grant.binding) for s in chain[0].steps] == [
        "RoleBinding planted-a/planted-devs",
        "RoleBinding planted-b/planted-ci",
        "ClusterRoleBinding planted-root",
    ]


def test_built_in_roles_are_known_when_the_manifests_do_not_define_them() -> None:
    """Issue 19: "mallory may create pods in team-b, where team-b/deployer is cluster-admin" gave no
    path, because cluster-admin and edit were not in the scanned files. Every cluster has them (the
    API server's bootstrap policy), so the graph does too, unless the gate's objects define them."""
    objs = [
        rb("team-b", "mallory-edits", "ClusterRole", "edit", user("mallory")),
        crb("deployer-admin", "cluster-admin", sa("team-b", "deployer")),
    ]
    g = RBACGraph.from_objects(objs)
    paths = g.escalations_from(Subject("User", "mallory"))
    assert [p.target_text for p in paths] == ["ServiceAccount team-b/deployer"]
    # edit both creates pods and impersonates ServiceAccounts in team-b: either step is the path
    assert paths[0].steps[0].action in {
        "can create pods in namespace team-b",
        "can impersonate any ServiceAccount in namespace team-b",
    }
    assert who(g, "create", "", "pods", namespace="team-b") >= {"User mallory"}
    assert who(g, "get", "", "secrets", namespace="team-b") >= {"User mallory"}  # edit reads Secrets
    viewer = RBACGraph.from_objects([rb("team-b", "v", "ClusterRole", "view", user("val"))])
    assert who(viewer, "get", "", "pods", namespace="team-b") == {"User val"}
    assert "User val" not in who(viewer, "get", "", "secrets", namespace="team-b")  # view never does
    # a definition in the gate's objects wins (a live cluster's own, or a customised one)
    narrow = cluster_role("edit", rule("get", "configmaps"))
    g2 = RBACGraph.from_objects([narrow, *objs])
    assert g2.escalations_from(Subject("User", "mallory")) == ()


def test_groups_of_service_accounts_reach_through_each_namespace_default_account() -> None:
    """Issue 19: what system:serviceaccounts (or system:serviceaccounts:<ns>) holds was never reached
    through "create pods in N", because N's `default` ServiceAccount was in the graph only when a
    binding named it. A pod runs as `default` unless it names another."""
    objs = [
        cluster_role("pod-creator", rule("create", "pods")),
        cluster_role("secret-reader", rule("get list", "secrets")),
        rb("team-c", "m", "ClusterRole", "pod-creator", user("mallory")),
        crb("all-sas-read-secrets", "secret-reader", group("system:serviceaccounts:team-c")),
    ]
    g = RBACGraph.from_objects(objs)
    paths = g.escalations_from(Subject("User", "mallory"))
    assert [p.target_text for p in paths] == ["ServiceAccount team-c/default"]
    assert any("STK-RBAC-002" in gain for gain in paths[0].gains)
    # the same through system:serviceaccounts (every ServiceAccount of every namespace)
    objs[-1] = crb("all-sas-read-secrets", "secret-reader", group("system:serviceaccounts"))
    g = RBACGraph.from_objects(objs)
    assert [p.target_text for p in g.escalations_from(Subject("User", "mallory"))] == [
        "ServiceAccount team-c/default"
    ]


# ---- paths through running pods and Secrets (issue 19) ---------------------------------------------


def deployment(ns: str, name: str, account: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if account is not None:
        spec["serviceAccountName"] = account
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"template": {"spec": spec}},
    }


ADMIN_SA = [cluster_role("admin-ish", rule("*", "*", "*")), crb("ops", "admin-ish", sa("ml", "ops"))]


@pytest.mark.parametrize(
    ("permission", "action"),
    [
        (rule("create", "pods/exec"), "can run commands in the pods in namespace ml"),
        (rule("create", "pods/attach"), "can run commands in the pods in namespace ml"),
        (
            rule("patch", "pods/ephemeralcontainers"),
            "can add ephemeral containers to the pods in namespace ml",
        ),
        (rule("update", "pods"), "can change the image of the pods in namespace ml"),
    ],
)
def test_exec_attach_ephemeral_and_patch_pods_reach_the_accounts_of_the_running_workloads(
    permission: dict[str, Any], action: str
) -> None:
    objs = [
        *ADMIN_SA,
        cluster_role("r", permission),
        rb("ml", "m", "ClusterRole", "r", user("mallory")),
        deployment("ml", "controller", "ops"),
    ]
    paths = RBACGraph.from_objects(objs).escalations_from(Subject("User", "mallory"))
    assert [(p.steps[0].action, p.target_text) for p in paths] == [(action, "ServiceAccount ml/ops")]
    assert "STK-RBAC-002 get secrets (cluster-wide)" in paths[0].gains
    # no workload runs as ops: exec reaches nothing (the account is not running anywhere)
    idle = RBACGraph.from_objects([o for o in objs if o.get("kind") != "Deployment"])
    assert idle.escalations_from(Subject("User", "mallory")) == ()


def test_exec_in_another_namespace_or_through_a_role_scoped_elsewhere_reaches_nothing() -> None:
    objs = [
        *ADMIN_SA,
        cluster_role("r", rule("create", "pods/exec")),
        rb("web", "m", "ClusterRole", "r", user("mallory")),
        deployment("ml", "controller", "ops"),
    ]
    assert RBACGraph.from_objects(objs).escalations_from(Subject("User", "mallory")) == ()


def test_nodes_proxy_reaches_the_pods_of_every_node_and_only_cluster_wide() -> None:
    objs = [
        *ADMIN_SA,
        cluster_role("kubelet-api", rule("get", "nodes/proxy")),
        crb("m", "kubelet-api", user("mallory")),
        deployment("ml", "controller", "ops"),
    ]
    paths = RBACGraph.from_objects(objs).escalations_from(Subject("User", "mallory"))
    assert [(p.steps[0].action, p.target_text) for p in paths] == [
        ("can run commands in any pod through the kubelet (nodes/proxy)", "ServiceAccount ml/ops")
    ]
    # a RoleBinding cannot grant nodes/proxy (nodes are cluster-scoped)
    objs[3] = rb("ml", "m", "ClusterRole", "kubelet-api", user("mallory"))
    assert RBACGraph.from_objects(objs).escalations_from(Subject("User", "mallory")) == ()


def test_create_secrets_mints_a_token_for_any_account_of_the_namespace_when_it_can_be_read() -> None:
    objs = [
        *ADMIN_SA,
        cluster_role("creator", rule("create", "secrets")),
        cluster_role("reader", rule("get", "secrets")),
        rb("ml", "c", "ClusterRole", "creator", user("mallory")),
    ]
    # creating alone: the token controller fills the Secret, but mallory cannot read it back
    assert RBACGraph.from_objects(objs).escalations_from(Subject("User", "mallory")) == ()
    objs.append(rb("ml", "r", "ClusterRole", "reader", user("mallory")))  # another binding reads
    paths = RBACGraph.from_objects(objs).escalations_from(Subject("User", "mallory"))
    assert [(p.steps[0].action, p.target_text) for p in paths] == [
        (
            "can create a token Secret for any ServiceAccount in namespace ml and read it",
            "ServiceAccount ml/ops",
        )
    ]


def test_reading_a_legacy_token_secret_acts_as_its_account_and_names_count() -> None:
    objs = [
        *ADMIN_SA,
        cluster_role("one", rule("get", "secrets", names="ops-token")),
        cluster_role("other", rule("get", "secrets", names="unrelated")),
        rb("ml", "m", "ClusterRole", "one", user("mallory")),
        rb("ml", "e", "ClusterRole", "other", user("eve")),
        token_secret("ml", "ops-token", "ops"),
    ]
    g = RBACGraph.from_objects(objs)
    paths = g.escalations_from(Subject("User", "mallory"))
    assert [(p.steps[0].action, p.target_text) for p in paths] == [
        ("can read the token Secret ops-token in namespace ml", "ServiceAccount ml/ops")
    ]
    assert g.escalations_from(Subject("User", "eve")) == ()
    # list returns every Secret of the namespace, token included
    objs[5] = rb("ml", "e", "ClusterRole", "lister", user("eve"))
    objs.append(cluster_role("lister", rule("list", "secrets")))
    assert [p.target_text for p in RBACGraph.from_objects(objs).escalations_from(Subject("User", "eve"))] == [
        "ServiceAccount ml/ops"
    ]


def test_running_accounts_are_cached_per_inventory_and_pods_churn_without_rebuilds() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": "ml"},
        "spec": {"serviceAccountName": "ops", "containers": [{"name": "c"}]},
    }
    inv = inventory_of(
        [
            *ADMIN_SA,
            cluster_role("r", rule("create", "pods/exec")),
            rb("ml", "m", "ClusterRole", "r", user("mallory")),
        ]
    )
    assert RBACGraph.of(inv).escalations_from(Subject("User", "mallory")) == ()
    inv.add(pod)
    first = RBACGraph.of(inv)
    assert [p.target_text for p in first.escalations_from(Subject("User", "mallory"))] == [
        "ServiceAccount ml/ops"
    ]
    inv.add({**pod, "metadata": {"name": "p2", "namespace": "ml"}})  # one more pod of the same account
    assert RBACGraph.of(inv) is first
    inv.remove("Pod", "ml", "p1")
    assert RBACGraph.of(inv) is first  # p2 still runs as ops
    inv.remove("Pod", "ml", "p2")
    assert RBACGraph.of(inv).escalations_from(Subject("User", "mallory")) == ()


def test_get_on_pods_exec_opens_a_session_only_before_kubernetes_1_35() -> None:
    """rbac.kubernetes_version (Inventory.kubernetes_minor): from 1.35 a WebSocket exec/attach needs
    create as well as get (AuthorizePodWebsocketUpgradeCreatePermission, on by default)."""
    objs = [
        *ADMIN_SA,
        cluster_role("r", rule("get", "pods/exec")),
        rb("ml", "m", "ClusterRole", "r", user("mallory")),
        deployment("ml", "controller", "ops"),
    ]
    for minor, reached in ((34, ["ServiceAccount ml/ops"]), (35, [])):
        inv = inventory_of(objs)
        inv.kubernetes_minor = minor
        g = RBACGraph.of(inv)
        assert [p.target_text for p in g.escalations_from(Subject("User", "mallory"))] == reached
        held = {r.permission for r in g.risky(Subject("User", "mallory"))}
        assert held == ({"get pods/exec"} if minor < 35 else set())


def test_a_step_names_the_controller_it_writes() -> None:
    """KServe's manager role creates Deployments and only reads pods: its escalation step said "can
    create pods cluster-wide", a permission the ClusterRole does not hold."""
    from stockade.policies.facts.rbac import PolicyRule, pod_runner

    def rule(verbs: list[str], groups: list[str], resources: list[str]) -> PolicyRule:
        parsed = PolicyRule.parse({"verbs": verbs, "apiGroups": groups, "resources": resources})
        assert parsed is not None
        return parsed

    assert pod_runner(rule(["create"], [""], ["pods"])) == "create pods"
    assert (
        pod_runner(rule(["create", "get"], ["apps"], ["deployments"]))
        == "create deployments.apps, and so pods,"
    )
    assert pod_runner(rule(["patch"], ["apps"], ["daemonsets"])) == "patch daemonsets.apps, and so pods,"
    assert pod_runner(rule(["create"], ["batch"], ["jobs"])) == "create jobs.batch, and so pods,"
    # a Job's pod template is immutable: Kueue's update of Jobs runs no pod (its critical
    # STK-RBAC-031 said so); a CronJob's template is not
    assert pod_runner(rule(["get", "update", "patch"], ["batch"], ["jobs"])) is None
    assert pod_runner(rule(["update"], ["batch"], ["cronjobs"])) == "update cronjobs.batch, and so pods,"


def test_a_binding_never_lets_its_subject_escalate_to_itself() -> None:
    """gpu-operator's chart: the operator's account holds a ClusterRoleBinding (reads Secrets
    cluster-wide) and a RoleBinding (creates pods in its namespace, where its own pods run as it).
    The RoleBinding's path went "creates pods in default, so it acts as the accounts of default" to
    the operator's own account, credited with what its ClusterRoleBinding gives: it escalated to
    itself. The other accounts of the namespace are still targets, and a cut list of them reads as
    one target."""
    objs = [
        cluster_role("operator", rule("get list", "secrets")),
        crb("operator", "operator", sa("default", "gpu-operator")),
        cluster_role("creator", rule("create", "pods")),
        rb("default", "operator", "ClusterRole", "creator", sa("default", "gpu-operator")),
        deployment("default", "operator", "gpu-operator"),
    ]
    g = RBACGraph.from_objects(objs)
    binding = Binding.parse(objs[3])
    assert binding is not None
    assert g.escalations_via(binding) == []
    # with another account of the namespace holding more, that one is the target
    others = [
        *objs,
        cluster_role("nodes", rule("patch", "nodes")),
        *(crb(f"nfd-{i}", "nodes", sa("default", f"nfd-{i}")) for i in range(7)),
        *(deployment("default", f"nfd-{i}", f"nfd-{i}") for i in range(7)),
    ]
    (path,) = [p for _, p in RBACGraph.from_objects(others).escalations_via(binding)]
    assert "gpu-operator" not in path.target_text
    assert path.target_text.endswith(", ServiceAccount default/nfd-4 (and 2 more)")


def test_public_information_is_read_only_and_named_and_never_secrets() -> None:
    from stockade.policies.facts.rbac import PolicyRule, public_information

    def parsed(raw: dict[str, Any]) -> PolicyRule:
        out = PolicyRule.parse(raw)
        assert out is not None
        return out

    kfp = {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["kubeflow-pipelines-public"]}
    assert public_information(parsed({**kfp, "verbs": ["get", "list", "watch"]}))
    assert public_information(parsed({"nonResourceURLs": ["/version", "/healthz"], "verbs": ["get"]}))
    assert not public_information(parsed({**kfp, "verbs": ["get", "update"]}))
    assert not public_information(parsed({**kfp, "resourceNames": [], "verbs": ["get"]}))
    assert not public_information(parsed({**kfp, "resources": ["secrets"], "verbs": ["get"]}))
    assert not public_information(parsed({**kfp, "resources": ["*"], "verbs": ["get"]}))
    assert not public_information(parsed({**kfp, "verbs": ["*"]}))
    assert not public_information(parsed({"nonResourceURLs": ["*"], "verbs": ["get"]}))
