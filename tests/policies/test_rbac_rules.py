"""The RBAC rules (STK-RBAC-*) through the public pipeline, and the two catalogues agreeing.

The escalation-capable permissions are written twice on purpose: in Rego (policies/rego/lib/rbac.rego,
for the per-object rules every gate runs without a graph) and in Python (policies/facts/rbac.py RISKY,
for the graph's attribution). `test_catalogues_agree` grants each permission of each entry alone and
checks that both name exactly that entry, so the two cannot drift apart.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.engines.library import load_library
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.facts.rbac import RISKY, RBACGraph, Subject
from stockade.policies.model import Operation, Resource

RBAC = "rbac.authorization.k8s.io/v1"


@cache
def evaluator(config: str = "") -> Evaluator:
    return Evaluator.default(parse_config(config))


def rbac_ids(obj: dict[str, Any], config: str = "", objects: tuple[dict[str, Any], ...] = ()) -> list[str]:
    """Rule ids (STK-RBAC-*) one object gets, with facts from `objects` (the rest of the cluster)."""
    source = InventoryFacts(inventory_of(objects))
    res = Resource(obj)
    findings = evaluator(config).evaluate(
        res, operation=Operation.SCAN, namespace=source.namespace(res.namespace), facts=source.facts(obj)
    )
    return sorted(f.rule.id for f in findings if f.rule.id.startswith("STK-RBAC"))


def cluster_role(name: str, *rules: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, **({"labels": labels} if labels else {})}
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": md, "rules": list(rules)}


def binding(kind: str, name: str, role: str, *subjects: dict[str, Any], ns: str = "ml") -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if kind == "RoleBinding":
        md["namespace"] = ns
    return {
        "apiVersion": RBAC,
        "kind": kind,
        "metadata": md,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": list(subjects),
    }


def test_every_catalogue_entry_is_a_rule() -> None:
    lib = load_library()
    ids = {rid for rid in lib.rules if rid.startswith("STK-RBAC-")}
    assert set(RISKY) <= ids
    assert ids == set(RISKY) | {
        "STK-RBAC-001",
        "STK-RBAC-020",
        "STK-RBAC-021",
        "STK-RBAC-030",
        "STK-RBAC-031",
        "STK-RBAC-032",
    }
    for rid in RISKY:
        assert set(lib.rules[rid].kinds) == {"Role", "ClusterRole"}


CASES = [
    (
        rid,
        verb,
        perm.group,
        f"{perm.resource}/{'scopes' if perm.sub == '*' else perm.sub}" if perm.sub else perm.resource,
    )
    for rid, perms in RISKY.items()
    for perm in perms
    for verb in perm.verbs
]


@pytest.mark.parametrize(
    ("rid", "verb", "group", "resource"), CASES, ids=[f"{c[0]}:{c[1]}:{c[3]}" for c in CASES]
)
def test_catalogues_agree(rid: str, verb: str, group: str, resource: str) -> None:
    rule = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
    role = cluster_role("r", rule)
    if rid == "STK-RBAC-008":  # CSR approval takes both permissions: alone, neither catalogue reports it
        assert rbac_ids(role) == []
        graph = RBACGraph.from_objects(
            [role, binding("ClusterRoleBinding", "b", "r", {"kind": "User", "name": "u"})]
        )
        assert graph.risky(Subject("User", "u")) == ()
        other = (
            {"apiGroups": [group], "resources": ["signers"], "verbs": ["approve"]}
            if resource != "signers"
            else {
                "apiGroups": [group],
                "resources": ["certificatesigningrequests/approval"],
                "verbs": ["update"],
            }
        )
        role = cluster_role("r", rule, other)
        assert rbac_ids(role) == [rid, rid]
        graph = RBACGraph.from_objects(
            [role, binding("ClusterRoleBinding", "b", "r", {"kind": "User", "name": "u"})]
        )
        assert {r.id for r in graph.risky(Subject("User", "u"))} == {rid}
        return
    assert rbac_ids(role) == [rid]
    graph = RBACGraph.from_objects(
        [role, binding("ClusterRoleBinding", "b", "r", {"kind": "User", "name": "u"})]
    )
    assert {r.id for r in graph.risky(Subject("User", "u"))} == {rid}


def test_wildcard_role_triggers_every_catalogue_rule_and_the_wildcard_rule() -> None:
    ids = rbac_ids(cluster_role("god", {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}))
    assert ids == sorted(["STK-RBAC-001"] * 3 + list(RISKY))


def test_bootstrap_objects_only_with_include_system_rbac() -> None:
    """Bootstrap objects carry kubernetes.io/bootstrapping: rbac-defaults. A `system:` name without
    the label is anyone's object (issue 19: `system:backdoor` granting cluster-admin to
    system:authenticated used to report nothing)."""
    role = cluster_role(
        "system:controller:x", {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
    )
    labelled = cluster_role(
        "admin",
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
        labels={"kubernetes.io/bootstrapping": "rbac-defaults"},
    )
    assert rbac_ids(labelled) == []
    assert rbac_ids(role) == ["STK-RBAC-002"]  # a system: name alone exempts nothing
    include = "scope: {include_system_rbac: true}"
    assert rbac_ids(role, include) == rbac_ids(labelled, include) == ["STK-RBAC-002"]
    backdoor = binding(
        "ClusterRoleBinding",
        "system:backdoor",
        "cluster-admin",
        {"kind": "Group", "name": "system:authenticated"},
    )
    found = rbac_ids(backdoor)
    assert "STK-RBAC-020" in found and any(i != "STK-RBAC-020" for i in found), found


def test_kube_system_rbac_is_in_scope_unless_named_for_rbac() -> None:
    """`scope.excluded_namespaces` (kube-system by default) does not hide Roles and RoleBindings:
    only `scope.rbac_excluded_namespaces` does."""
    rb = binding("RoleBinding", "ops", "edit", {"kind": "Group", "name": "system:authenticated"})
    rb["metadata"]["namespace"] = "kube-system"
    assert rbac_ids(rb)
    assert rbac_ids(rb, "scope: {rbac_excluded_namespaces: [kube-system]}") == []


def test_privileged_bindings_and_break_glass_config() -> None:
    crb = binding(
        "ClusterRoleBinding",
        "ops",
        "cluster-admin",
        {"kind": "Group", "name": "oncall"},
        {"kind": "User", "name": "alice"},
    )
    assert rbac_ids(crb) == ["STK-RBAC-020", "STK-RBAC-020"]
    glass = "rbac: {break_glass_subjects: [{kind: Group, name: oncall}]}"
    assert rbac_ids(crb, glass) == ["STK-RBAC-020"]
    both = "rbac: {break_glass_subjects: [{kind: Group, name: oncall}, {kind: User, name: 'ali*'}]}"
    assert rbac_ids(crb, both) == []
    assert rbac_ids(crb, "rbac: {privileged_roles: [admin]}") == []


def test_break_glass_config_is_validated() -> None:
    from stockade.policies.config.settings import ConfigError

    with pytest.raises(ConfigError, match=r"rbac\.break_glass_subjects\.0\.kind"):
        parse_config("rbac: {break_glass_subjects: [{kind: Robot, name: x}]}")
    with pytest.raises(ConfigError, match="unknown key"):
        parse_config("rbac: {break_glass: []}")


def test_public_groups() -> None:
    crb = binding("ClusterRoleBinding", "b", "view", {"kind": "Group", "name": "system:authenticated"})
    assert rbac_ids(crb) == ["STK-RBAC-021"]


# ---- graph rules through the pipeline --------------------------------------------------------------


SECRET_READER = cluster_role(
    "secret-reader", {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}
)
DEPLOYER = cluster_role(
    "deployer", {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]}
)
SYNC_BINDING = binding(
    "ClusterRoleBinding",
    "sync",
    "secret-reader",
    {"kind": "ServiceAccount", "name": "sync", "namespace": "ml"},
)
DEVS_BINDING = binding("RoleBinding", "devs", "deployer", {"kind": "Group", "name": "ml-devs"})
CLUSTER = (SECRET_READER, DEPLOYER, SYNC_BINDING, DEVS_BINDING)


def workload(sa: str, automount: bool | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"serviceAccountName": sa, "containers": [{"name": "c", "image": "x"}]}
    if automount is not None:
        spec["automountServiceAccountToken"] = automount
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ml"},
        "spec": {"template": {"spec": spec}},
    }


def test_workload_attribution() -> None:
    assert rbac_ids(workload("sync"), objects=CLUSTER) == ["STK-RBAC-030"]
    assert rbac_ids(workload("sync", automount=False), objects=CLUSTER) == []
    assert rbac_ids(workload("other"), objects=CLUSTER) == []
    assert rbac_ids(workload("sync")) == []  # no graph, nothing to attribute


def test_escalation_path_on_the_binding_same_in_scan_and_admission() -> None:
    """Scan sees the binding in the inventory; admission sees it before the cache does."""
    scan = rbac_ids(DEVS_BINDING, objects=CLUSTER)
    admission = rbac_ids(DEVS_BINDING, objects=(SECRET_READER, DEPLOYER, SYNC_BINDING))
    assert scan == admission == ["STK-RBAC-031"]
    assert rbac_ids(DEVS_BINDING, objects=(DEPLOYER,)) == []  # nothing more privileged to reach


def test_escalation_path_length_is_configurable() -> None:
    tokens = cluster_role(
        "tokens", {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}
    )
    ci = binding(
        "RoleBinding", "ci", "tokens", {"kind": "ServiceAccount", "name": "ci", "namespace": "dev"}, ns="ops"
    )
    devs = binding("RoleBinding", "devs", "deployer", {"kind": "Group", "name": "devs"}, ns="dev")
    root = binding(
        "ClusterRoleBinding",
        "root",
        "secret-reader",
        {"kind": "ServiceAccount", "name": "root", "namespace": "ops"},
    )
    cluster = (tokens, DEPLOYER, SECRET_READER, ci, devs, root)
    # one finding for the subject (issue 37), naming both identities it reaches: ci, then ops/root
    assert rbac_ids(devs, objects=cluster) == ["STK-RBAC-031"]
    assert rbac_ids(devs, "rbac: {max_path_length: 1}", objects=cluster) == ["STK-RBAC-031"]


def test_a_namespaced_role_never_grants_cluster_scoped_resources() -> None:
    """Issue 19: a Role listing nodes/proxy or persistentvolumes got critical findings, but a
    RoleBinding can never grant a cluster-scoped resource. (A Role may still patch its own namespace
    and bind ClusterRoles in it, so those stay.)"""
    rules = (
        {"apiGroups": [""], "resources": ["nodes/proxy", "persistentvolumes"], "verbs": ["get", "create"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]},
    )
    role = {
        "apiVersion": RBAC,
        "kind": "Role",
        "metadata": {"name": "r", "namespace": "ml"},
        "rules": list(rules),
    }
    assert rbac_ids(role) == ["STK-RBAC-011"]
    assert set(rbac_ids(cluster_role("r", *rules))) >= {"STK-RBAC-004", "STK-RBAC-005", "STK-RBAC-011"}


def test_scan_finds_the_path_through_built_in_roles(tmp_path: Any) -> None:
    """Issue 19's first example, as a user scans it: two bindings, no role definitions."""
    import json

    import yaml
    from typer.testing import CliRunner

    from stockade.cli.main import app

    docs = [
        binding("RoleBinding", "mallory-edits", "edit", {"kind": "User", "name": "mallory"}, ns="team-b"),
        binding(
            "ClusterRoleBinding",
            "deployer-admin",
            "cluster-admin",
            {"kind": "ServiceAccount", "name": "deployer", "namespace": "team-b"},
        ),
    ]
    path = tmp_path / "rbac.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["scan", str(path), "-f", "json"])
    assert result.exit_code == 1, result.output
    found = {(f["rule"]["id"], f["resource"]["name"]) for f in json.loads(result.stdout)["findings"]}
    assert ("STK-RBAC-031", "mallory-edits") in found


def test_a_binding_to_a_role_that_does_not_exist() -> None:
    """Issue 19: silent before. A finding where the gate sees the whole cluster (audit, synced
    webhook: a complete inventory), a note (action audit) in a scan of some files; built-in roles
    and roles in the inventory resolve."""
    from stockade.policies.model import Action

    dangling = binding("RoleBinding", "dangling", "gone", {"kind": "User", "name": "alice"})
    to_view = binding("RoleBinding", "viewers", "view", {"kind": "User", "name": "alice"})

    def decided(obj: dict[str, Any], complete: bool) -> list[tuple[str, Action]]:
        inv = inventory_of((SECRET_READER,), complete=complete)
        source = InventoryFacts(inv)
        res = Resource(obj)
        found = evaluator().evaluate(
            res, operation=Operation.SCAN, namespace=source.namespace(res.namespace), facts=source.facts(obj)
        )
        return [(f.rule.id, f.action) for f in found if f.rule.id == "STK-RBAC-032"]

    assert decided(dangling, complete=True) == [("STK-RBAC-032", Action.DENY)]
    assert decided(dangling, complete=False) == [("STK-RBAC-032", Action.AUDIT)]
    assert decided(to_view, complete=True) == []
    reader = binding("RoleBinding", "r", "secret-reader", {"kind": "User", "name": "alice"})
    assert decided(reader, complete=True) == []


def test_kubernetes_version_decides_whether_get_opens_an_exec_session() -> None:
    role = cluster_role("r", {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get"]})
    assert rbac_ids(role, 'rbac: {kubernetes_version: "1.34"}') == ["STK-RBAC-012"]
    assert rbac_ids(role, 'rbac: {kubernetes_version: "1.35"}') == []
    assert rbac_ids(role) == ["STK-RBAC-012"]  # unset: any supported version, so get counts
    for bad in ("1.29", "2.0", "latest", "1.30"):
        if bad == "1.30":
            assert parse_config(f'rbac: {{kubernetes_version: "{bad}"}}').rbac.kubernetes_minor == 30
            continue
        with pytest.raises(Exception, match=r"stockade knows Kubernetes 1\.30 to 1\.35"):
            parse_config(f'rbac: {{kubernetes_version: "{bad}"}}')
    with pytest.raises(Exception, match="write the version quoted"):
        parse_config("rbac: {kubernetes_version: 1.30}")
