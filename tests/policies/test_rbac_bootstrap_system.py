"""The `system:` bootstrap RBAC objects (policies/facts/rbac_bootstrap_system.py) are well formed and say
what the API server's bootstrap policy says on the points that matter for privilege escalation.

Each spot check names the upstream fixture it was checked against
(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/ of kubernetes/kubernetes).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from stockade.policies.facts.rbac_bootstrap import BOOTSTRAP_LABEL, BOOTSTRAP_NAMES, RBAC
from stockade.policies.facts.rbac_bootstrap_system import SYSTEM_NAMES, system_objects

MINORS = range(30, 36)


def _get(minor: int, kind: str, name: str, namespace: str = "") -> dict[str, Any] | None:
    for o in system_objects(minor):
        meta = o["metadata"]
        if o["kind"] == kind and meta["name"] == name and meta.get("namespace", "") == namespace:
            return o
    return None


def _obj(minor: int, kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    o = _get(minor, kind, name, namespace)
    assert o is not None, f"1.{minor}: no {kind} {namespace}/{name}"
    return o


def _grants(role: dict[str, Any], group: str, resource: str, verb: str) -> bool:
    return any(
        group in r.get("apiGroups", ())
        and resource in r.get("resources", ())
        and (verb in r["verbs"] or "*" in r["verbs"])
        for r in role["rules"]
    )


# --- shape ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("minor", MINORS)
def test_objects_are_labelled_rbac_v1(minor: int) -> None:
    for o in system_objects(minor):
        assert o["apiVersion"] == RBAC
        assert o["kind"] in {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
        assert o["metadata"]["labels"] == BOOTSTRAP_LABEL
        namespaced = o["kind"] in {"Role", "RoleBinding"}
        assert ("namespace" in o["metadata"]) == namespaced
        if namespaced:
            assert o["metadata"]["namespace"] in {"kube-system", "kube-public"}


@pytest.mark.parametrize("minor", MINORS)
def test_names_unique_per_kind_and_namespace(minor: int) -> None:
    keys = Counter(
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in system_objects(minor)
    )
    assert [k for k, n in keys.items() if n > 1] == []


@pytest.mark.parametrize("minor", MINORS)
def test_every_binding_resolves(minor: int) -> None:
    objs = system_objects(minor)
    cluster_roles = {o["metadata"]["name"] for o in objs if o["kind"] == "ClusterRole"} | BOOTSTRAP_NAMES
    roles = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs if o["kind"] == "Role"}
    for b in objs:
        if b["kind"] not in {"ClusterRoleBinding", "RoleBinding"}:
            continue
        ref = b["roleRef"]
        assert ref["apiGroup"] == "rbac.authorization.k8s.io"
        if ref["kind"] == "ClusterRole":
            assert ref["name"] in cluster_roles, b["metadata"]
        else:
            assert b["kind"] == "RoleBinding"
            assert (b["metadata"]["namespace"], ref["name"]) in roles, b["metadata"]
        for s in b.get("subjects", []):
            assert s["kind"] in {"User", "Group", "ServiceAccount"}
            assert ("namespace" in s) == (s["kind"] == "ServiceAccount")


@pytest.mark.parametrize("minor", MINORS)
def test_rules_are_resource_or_url_rules(minor: int) -> None:
    for o in system_objects(minor):
        for r in o.get("rules", []):
            assert r["verbs"]
            if "nonResourceURLs" in r:
                assert "apiGroups" not in r and "resources" not in r
            else:
                assert r["apiGroups"] and r["resources"]


def test_no_role_of_rbac_bootstrap_repeated() -> None:
    assert not SYSTEM_NAMES & BOOTSTRAP_NAMES
    assert all(n.startswith("system:") for n in SYSTEM_NAMES)


def test_system_names_cover_every_minor() -> None:
    for minor in MINORS:
        names = {o["metadata"]["name"] for o in system_objects(minor) if o["kind"] == "ClusterRole"}
        assert names <= SYSTEM_NAMES
    assert "system:controller:service-cidrs-controller" in SYSTEM_NAMES


def test_cached_per_minor_and_out_of_range_refused() -> None:
    assert system_objects(33) is system_objects(33)
    assert system_objects(33) is not system_objects(34)
    with pytest.raises(ValueError):
        system_objects(29)
    with pytest.raises(ValueError):
        system_objects(36)


# --- facts that matter for escalation (checked against the fixtures read) --------------------------


@pytest.mark.parametrize("minor", MINORS)
def test_cluster_admin_bound_to_system_masters(minor: int) -> None:
    # cluster-role-bindings.yaml
    b = _obj(minor, "ClusterRoleBinding", "cluster-admin")
    assert b["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "cluster-admin",
    }
    assert b["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}
    ]


@pytest.mark.parametrize("minor", MINORS)
def test_basic_user_bound_to_authenticated_only(minor: int) -> None:
    # cluster-role-bindings.yaml: system:authenticated only (no longer system:unauthenticated)
    b = _obj(minor, "ClusterRoleBinding", "system:basic-user")
    assert [s["name"] for s in b["subjects"]] == ["system:authenticated"]
    viewer = _obj(minor, "ClusterRoleBinding", "system:public-info-viewer")
    assert {s["name"] for s in viewer["subjects"]} == {"system:authenticated", "system:unauthenticated"}


@pytest.mark.parametrize("minor", MINORS)
def test_system_node_binding_has_no_subjects(minor: int) -> None:
    # cluster-role-bindings.yaml: the system:node binding exists, with no subjects
    b = _obj(minor, "ClusterRoleBinding", "system:node")
    assert b["roleRef"]["name"] == "system:node"
    assert "subjects" not in b


@pytest.mark.parametrize("minor", MINORS)
def test_clusterrole_aggregation_controller_can_escalate(minor: int) -> None:
    # controller-roles.yaml
    role = _obj(minor, "ClusterRole", "system:controller:clusterrole-aggregation-controller")
    assert role["rules"] == [
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["escalate", "get", "list", "patch", "update", "watch"],
        }
    ]


@pytest.mark.parametrize("minor", MINORS)
def test_daemon_set_controller_creates_pods(minor: int) -> None:
    role = _obj(minor, "ClusterRole", "system:controller:daemon-set-controller")
    assert _grants(role, "", "pods", "create")
    assert _grants(role, "", "pods/binding", "create")
    assert _grants(role, "apps", "controllerrevisions", "create")


@pytest.mark.parametrize("minor", MINORS)
def test_garbage_collector_and_namespace_controller_have_wildcard_resources(minor: int) -> None:
    gc = _obj(minor, "ClusterRole", "system:controller:generic-garbage-collector")
    assert {
        "apiGroups": ["*"],
        "resources": ["*"],
        "verbs": ["delete", "get", "list", "patch", "update", "watch"],
    } in gc["rules"]
    ns = _obj(minor, "ClusterRole", "system:controller:namespace-controller")
    assert _grants(ns, "*", "*", "deletecollection")


@pytest.mark.parametrize("minor", MINORS)
def test_kube_controller_manager_lists_everything_and_mints_tokens(minor: int) -> None:
    role = _obj(minor, "ClusterRole", "system:kube-controller-manager")
    assert _grants(role, "*", "*", "list")
    assert _grants(role, "", "serviceaccounts/token", "create")
    assert not _grants(role, "*", "*", "get")


@pytest.mark.parametrize("minor", MINORS)
def test_controller_binding_is_the_controller_service_account(minor: int) -> None:
    # controller_policy.go addControllerRole: NewClusterBinding(name).SAs("kube-system", <controller>)
    objs = system_objects(minor)
    roles = [
        o
        for o in objs
        if o["kind"] == "ClusterRole" and o["metadata"]["name"].startswith("system:controller:")
    ]
    assert len(roles) >= 33
    for role in roles:
        name = role["metadata"]["name"]
        b = _obj(minor, "ClusterRoleBinding", name)
        assert b["roleRef"]["name"] == name
        assert b["subjects"] == [
            {
                "kind": "ServiceAccount",
                "name": name.removeprefix("system:controller:"),
                "namespace": "kube-system",
            }
        ]


@pytest.mark.parametrize("minor", MINORS)
def test_node_reads_secrets_and_creates_pods(minor: int) -> None:
    node = _obj(minor, "ClusterRole", "system:node")
    assert _grants(node, "", "secrets", "get")
    assert _grants(node, "", "pods", "create")
    assert _grants(node, "", "serviceaccounts/token", "create")


def test_namespace_roles_and_bindings() -> None:
    # namespace-roles.yaml / namespace-role-bindings.yaml
    cleaner = _obj(33, "Role", "system:controller:token-cleaner", "kube-system")
    assert _grants(cleaner, "", "secrets", "delete")
    reader = _obj(33, "RoleBinding", "system::extension-apiserver-authentication-reader", "kube-system")
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    assert {s["name"] for s in reader["subjects"]} == {
        "system:kube-controller-manager",
        "system:kube-scheduler",
    }
    signer = _obj(33, "RoleBinding", "system:controller:bootstrap-signer", "kube-public")
    assert signer["subjects"] == [
        {"kind": "ServiceAccount", "name": "bootstrap-signer", "namespace": "kube-system"}
    ]
    lock = _obj(30, "Role", "system::leader-locking-kube-scheduler", "kube-system")
    assert not _grants(lock, "coordination.k8s.io", "leasecandidates", "create")
    lock = _obj(31, "Role", "system::leader-locking-kube-scheduler", "kube-system")
    assert _grants(lock, "coordination.k8s.io", "leasecandidates", "create")


# --- version gating ------------------------------------------------------------------------------


def _has_controller(minor: int, name: str) -> bool:
    role = _get(minor, "ClusterRole", "system:controller:" + name)
    binding = _get(minor, "ClusterRoleBinding", "system:controller:" + name)
    assert (role is None) == (binding is None)
    return role is not None


@pytest.mark.parametrize(
    ("controller", "since"),
    [
        ("service-cidrs-controller", 33),  # MultiCIDRServiceAllocator GA, on in 1.33
        ("selinux-warning-controller", 33),  # SELinuxChangePolicy beta, on in 1.33
        ("resource-claim-controller", 34),  # DynamicResourceAllocation GA in 1.34
        ("volumeattributesclass-protection-controller", 34),  # VolumeAttributesClass GA in 1.34
    ],
)
def test_gated_controllers(controller: str, since: int) -> None:
    for minor in MINORS:
        assert _has_controller(minor, controller) == (minor >= since), (controller, minor)


@pytest.mark.parametrize(
    "controller",
    [
        "device-taint-eviction-controller",
        "podcertificaterequestcleaner",
        "kube-apiserver-serving-clustertrustbundle-publisher",
        "storage-version-garbage-collector",
        "storage-version-migrator-controller",
    ],
)
def test_controllers_behind_gates_off_by_default(controller: str) -> None:
    assert not any(_has_controller(minor, controller) for minor in MINORS)


def test_gated_cluster_role_rules() -> None:
    for minor in MINORS:
        scheduler = _obj(minor, "ClusterRole", "system:kube-scheduler")
        assert _grants(scheduler, "resource.k8s.io", "resourceclaims", "update") == (minor >= 34)
        node = _obj(minor, "ClusterRole", "system:node")
        assert _grants(node, "resource.k8s.io", "resourceclaims", "get") == (minor >= 34)
        kubelet_admin = _obj(minor, "ClusterRole", "system:kubelet-api-admin")
        assert _grants(kubelet_admin, "", "nodes/pods", "get") == (minor >= 33)
        assert _grants(kubelet_admin, "", "nodes/proxy", "create")
        proxier = _obj(minor, "ClusterRole", "system:node-proxier")
        assert _grants(proxier, "networking.k8s.io", "servicecidrs", "list") == (minor >= 33)
    assert _get(35, "ClusterRole", "system:cluster-trust-bundle-discovery") is None
