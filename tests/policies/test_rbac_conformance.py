"""Conformance of the RBAC rules with Polaris' RBAC checks and Kyverno's `other/restrict-*` RBAC policies.

The corpora (``../shared/corpora/polaris.jsonl`` and ``kyverno_policies.jsonl``, see their README) hold
the peers' test cases: RBAC objects, the peer rule, and whether it fails them. Each peer rule that
decides the same control as stockade rules is mapped to them (``POLARIS`` / ``KYVERNO``). Every object
of a row is evaluated through the public pipeline (facts from the row's objects, the whole "cluster" of
the case) with the default configuration, and the row counts as flagged when a mapped rule fires on an
object the peer judges: the roles for role checks; for binding checks, the binding and the role it
refers to (Polaris decides a binding by its role; rows carry unrelated "not-used" roles that it ignores).

Where stockade decides a row differently on purpose, the row is listed in ``DELIBERATE`` with the
reason, and the test asserts stockade's own verdict. Peer RBAC-area rules that stockade does not decide
as RBAC rules are in ``NOT_COMPARED``, with the reason. ``test_summary`` prints the counts.

The corpora are not part of the repository; the module skips when they are absent.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Operation, Resource

CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "corpora"
POLARIS_CORPUS = CORPORA / "polaris.jsonl"
KYVERNO_CORPUS = CORPORA / "kyverno_policies.jsonl"

pytestmark = pytest.mark.skipif(
    not (POLARIS_CORPUS.exists() and KYVERNO_CORPUS.exists()),
    reason=f"conformance corpora not found in {CORPORA}",
)

ROLE_KINDS = {"Role", "ClusterRole"}
BINDING_KINDS = {"RoleBinding", "ClusterRoleBinding"}


@dataclass(frozen=True)
class Peer:
    """The stockade rules deciding a peer rule's control; `field` narrows STK-RBAC-001 to one field."""

    rules: tuple[str, ...]
    judges: str  # "roles" or "bindings": which objects of the row the peer decides
    field: str | None = None


EXEC = ("STK-RBAC-012",)
ADMIN = ("STK-RBAC-001", "STK-RBAC-020")

POLARIS: dict[str, Peer] = {
    "clusterrolePodExecAttach": Peer(EXEC, "roles"),
    "rolePodExecAttach": Peer(EXEC, "roles"),
    "clusterrolebindingPodExecAttach": Peer(EXEC, "bindings"),
    "rolebindingClusterRolePodExecAttach": Peer(EXEC, "bindings"),
    "rolebindingRolePodExecAttach": Peer(EXEC, "bindings"),
    "clusterrolebindingClusterAdmin": Peer(ADMIN, "bindings"),
    "rolebindingClusterAdminClusterRole": Peer(ADMIN, "bindings"),
    "rolebindingClusterAdminRole": Peer(ADMIN, "bindings"),
}

KYVERNO: dict[str, Peer] = {
    "restrict-binding-clusteradmin": Peer(("STK-RBAC-020",), "bindings"),
    "restrict-binding-system-groups": Peer(("STK-RBAC-021",), "bindings"),
    "restrict-clusterrole-csr": Peer(("STK-RBAC-008",), "roles"),
    "restrict-clusterrole-mutating-validating-admission-webhooks": Peer(("STK-RBAC-010",), "roles"),
    "restrict-clusterrole-nodesproxy": Peer(("STK-RBAC-005",), "roles"),
    "restrict-escalation-verbs-roles": Peer(("STK-RBAC-006",), "roles"),
    "restrict-secret-role-verbs": Peer(("STK-RBAC-002",), "roles"),
    "restrict-wildcard-resources": Peer(("STK-RBAC-001",), "roles", field="resources"),
    "restrict-wildcard-verbs": Peer(("STK-RBAC-001",), "roles", field="verbs"),
}

NOT_COMPARED: dict[str, str] = {
    "kyverno/restrict-automount-sa-token": "token automounting is STK-SA-001 (issue 3), compared in "
    "test_polaris_kubescape_conformance.py.",
    "kyverno/restrict-sa-automount-sa-token": "the ServiceAccount's own automount setting is a fact of "
    "STK-SA-001 (it decides on the effective setting of the pods), not a rule of its own.",
    "kyverno/restrict-service-account": "an allowlist of ServiceAccount names per workload is a site "
    "policy, not a least-privilege control; STK-SA-002 forbids the default ServiceAccount.",
    "kyverno/restrict-pod-controller-serviceaccount-updates": "an UPDATE-only rule on who may change a "
    "controller's serviceAccountName; stockade reports the permission (STK-RBAC-003) and the escalation "
    "path it opens (STK-RBAC-031) instead of the request.",
}


@dataclass(frozen=True)
class Deliberate:
    reason: str
    rows: tuple[str, ...]


DELIBERATE: tuple[Deliberate, ...] = (
    Deliberate(
        (
            "Polaris exempts objects by name (admin, cluster-admin, gce:*, and system:* names); stockade "
            "exempts bootstrap objects only by their kubernetes.io/bootstrapping: rbac-defaults label (the "
            "real defaults carry it; anyone may name a binding system:backdoor), so an unlabelled object "
            "that only borrows a default's name or prefix is judged like any other. Roles in kube-system "
            "are judged too (scope.rbac_excluded_namespaces, empty by default)."
        ),
        (
            "polaris/clusterrolePodExecAttach/success.system_prefix.yaml",
            "polaris/clusterrolebindingPodExecAttach/success.defaultclusterrolebinding_system-controller-generic-garbage-collector.yaml",
            "polaris/rolePodExecAttach/success.gce_calico_binding.yaml",
            "polaris/rolePodExecAttach/success.system_prefix_binding.yaml",
            "polaris/clusterrolePodExecAttach/success.defaultclusterrole_admin.yaml",
            "polaris/clusterrolePodExecAttach/success.defaultclusterrole_clusteradmin.yaml",
            "polaris/clusterrolePodExecAttach/success.gce_calico_clusterrole.yaml",
            "polaris/clusterrolebindingClusterAdmin/success.gce_calico_binding.yaml",
            "polaris/clusterrolebindingPodExecAttach/success.defaultclusterrolebinding_clusteradmin.yaml",
            "polaris/clusterrolebindingPodExecAttach/success.gce_calico_binding.yaml",
            "polaris/rolebindingClusterAdminClusterRole/success.gce_calico_binding.yaml",
            "polaris/rolebindingClusterAdminRole/success.gce_calico_binding.yaml",
            "polaris/rolebindingClusterRolePodExecAttach/success.gce_calico_binding.yaml",
            "polaris/rolebindingRolePodExecAttach/success.gce_calico_binding.yaml",
        ),
    ),
    Deliberate(
        (
            "Polaris' cluster-admin checks want `*` in verbs, resources and apiGroups together; STK- "
            "RBAC-001 reports a `*` in any one of them (each grants every present and future verb, resource "
            "or group)."
        ),
        (
            "polaris/clusterrolebindingClusterAdmin/success.explicit_apigroups.yaml",
            "polaris/clusterrolebindingClusterAdmin/success.explicit_resources.yaml",
            "polaris/clusterrolebindingClusterAdmin/success.explicit_verbs.yaml",
            "polaris/rolebindingClusterAdminClusterRole/success.explicit_apigroups.yaml",
            "polaris/rolebindingClusterAdminClusterRole/success.explicit_resources.yaml",
            "polaris/rolebindingClusterAdminClusterRole/success.explicit_verbs.yaml",
            "polaris/rolebindingClusterAdminRole/success.explicit_apigroups.yaml",
            "polaris/rolebindingClusterAdminRole/success.explicit_resources.yaml",
            "polaris/rolebindingClusterAdminRole/success.explicit_verbs.yaml",
        ),
    ),
    Deliberate(
        (
            "stockade decides permissions on the role object, whoever binds it (and however: a RoleBinding "
            "to a ClusterRole included); Polaris decides on the binding, and skips system:-named bindings "
            "or bindings of another Polaris check's shape, so the wildcard/exec role these rows bind is "
            "still reported by stockade."
        ),
        (
            "polaris/clusterrolebindingClusterAdmin/success.system_prefix_binding.yaml",
            "polaris/clusterrolebindingPodExecAttach/success.system_prefix_binding.yaml",
            "polaris/rolebindingClusterAdminClusterRole/success.system_prefix_binding.yaml",
            "polaris/rolebindingClusterAdminRole/success.system_prefix_binding.yaml",
            "polaris/rolebindingClusterRolePodExecAttach/success.system_prefix_binding.yaml",
            "polaris/rolebindingRolePodExecAttach/success.role_binding_cluster_role_binding.yaml",
            "polaris/rolebindingRolePodExecAttach/success.system_prefix_binding.yaml",
        ),
    ),
    Deliberate(
        (
            "The binding refers to a role that does not exist, which grants nothing; Polaris fails it "
            "because it cannot check it. (In an audit of a whole cluster, the graph lists such grants as "
            "roleFound: false.)"
        ),
        (
            "polaris/clusterrolebindingPodExecAttach/failure.binding_points_to_missing_ref.yaml",
            "polaris/rolebindingClusterRolePodExecAttach/failure.binding_points_to_missing_ref.yaml",
            "polaris/rolebindingRolePodExecAttach/failure.binding_points_to_missing_ref.yaml",
        ),
    ),
    Deliberate(
        (
            "The binding refers to a namespaced Role that is merely named cluster-admin, not the built-in "
            "ClusterRole; its permissions are judged on the Role (STK-RBAC-001..013)."
        ),
        (
            "kyverno/other/restrict-binding-clusteradmin/RoleBinding/_/badrb01",
            "kyverno/other/restrict-binding-clusteradmin/RoleBinding/_/badrb02",
            "kyverno-chainsaw/other/restrict-binding-clusteradmin/s1/rb-bad.yaml/0-RoleBinding-badrb01",
            "kyverno-chainsaw/other/restrict-binding-clusteradmin/s1/rb-bad.yaml/1-RoleBinding-badrb02",
        ),
    ),
    Deliberate(
        (
            "system:masters bypasses authorization altogether, so a binding to it grants nothing; STK- "
            "RBAC-021 covers the groups a binding really widens (system:anonymous, system:unauthenticated, "
            "system:authenticated)."
        ),
        (
            "kyverno/other/restrict-binding-system-groups/ClusterRoleBinding/_/badcrb03",
            "kyverno/other/restrict-binding-system-groups/RoleBinding/_/badrb03",
            "kyverno-chainsaw/other/restrict-binding-system-groups/s1/rb-bad.yaml/2-RoleBinding-badrb03",
            "kyverno-chainsaw/other/restrict-binding-system-groups/s1/crb-bad.yaml/2-ClusterRoleBinding-badcrb03",
        ),
    ),
    Deliberate(
        (
            "The rows grant certificatesigningrequests/approval and signers in the core API group ("
            "), "
            "where they do not exist; RBAC matches the group exactly, so the rule grants nothing in "
            "certificates.k8s.io."
        ),
        (
            "kyverno/other/restrict-clusterrole-csr/ClusterRole/_/violating-clusterrole",
            "kyverno-chainsaw/other/restrict-clusterrole-csr/s1/violating-clusterrole.yaml/0-ClusterRole-violating-clusterrole",
        ),
    ),
    Deliberate(
        (
            "impersonate on roles grants nothing (impersonation is checked on users, groups, "
            "serviceaccounts, uids and userextras); STK-RBAC-007 reports the impersonation that exists."
        ),
        ("kyverno/other/restrict-escalation-verbs-roles/Role/_/badrole01",),
    ),
)


@dataclass(frozen=True)
class Row:
    id: str
    peer_rule: str
    peer: Peer
    objects: tuple[dict[str, Any], ...]
    deny: bool


def load() -> tuple[list[Row], Counter[str]]:
    rows: list[Row] = []
    skipped: Counter[str] = Counter()
    if not POLARIS_CORPUS.exists() or not KYVERNO_CORPUS.exists():
        return rows, skipped
    for line in POLARIS_CORPUS.read_text().splitlines():
        raw = json.loads(line)
        check = (raw.get("policy") or {}).get("polaris_check")
        if raw.get("rule_area") == "rbac" and check in POLARIS and raw["expect"] in ("allow", "deny"):
            rows.append(
                Row(
                    raw["id"],
                    f"polaris/{check}",
                    POLARIS[check],
                    tuple(raw["objects"]),
                    raw["expect"] == "deny",
                )
            )
    for line in KYVERNO_CORPUS.read_text().splitlines():
        raw = json.loads(line)
        paths = (raw.get("policy") or {}).get("paths") or [""]
        parts = paths[0].split("/")
        if len(parts) < 2 or parts[0] != "other" or not parts[1].startswith("restrict-"):
            continue
        name = parts[1]
        if name in KYVERNO and raw["expect"] in ("allow", "deny"):
            rows.append(
                Row(
                    raw["id"],
                    f"kyverno/{name}",
                    KYVERNO[name],
                    tuple(raw["objects"]),
                    raw["expect"] == "deny",
                )
            )
        elif f"kyverno/{name}" in NOT_COMPARED:
            skipped[f"kyverno/{name}"] += 1
    return rows, skipped


ROWS, NOT_COMPARED_ROWS = load()
DELIBERATE_BY_ROW = {row_id: d for d in DELIBERATE for row_id in d.rows}


@cache
def evaluator() -> Evaluator:
    return Evaluator.default()


def judged(row: Row) -> list[Mapping[str, Any]]:
    """The objects the peer decides: roles, or bindings and the roles they refer to."""
    if row.peer.judges == "roles":
        return [o for o in row.objects if o.get("kind") in ROLE_KINDS]
    out: list[Mapping[str, Any]] = []
    for b in (o for o in row.objects if o.get("kind") in BINDING_KINDS):
        out.append(b)
        ref = b.get("roleRef") or {}
        ns = (b.get("metadata") or {}).get("namespace")
        for o in row.objects:
            md = o.get("metadata") or {}
            same = o.get("kind") == ref.get("kind") and md.get("name") == ref.get("name")
            if same and (o.get("kind") == "ClusterRole" or md.get("namespace") == ns):
                out.append(o)
    return out


def flagged(row: Row) -> bool:
    source = InventoryFacts(inventory_of(row.objects))
    for obj in judged(row):
        res = Resource(dict(obj))
        findings = evaluator().evaluate(
            res, operation=Operation.SCAN, namespace=source.namespace(res.namespace), facts=source.facts(obj)
        )
        for f in findings:
            if f.rule.id in row.peer.rules and (
                row.peer.field is None or f.details.get("field") == row.peer.field
            ):
                return True
    return False


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_row(row: Row) -> None:
    got = flagged(row)
    deliberate = DELIBERATE_BY_ROW.get(row.id)
    if deliberate is not None:
        assert got != row.deny, f"listed as a deliberate difference but agrees: {deliberate.reason}"
    else:
        assert got == row.deny, f"{row.peer_rule} expects {'deny' if row.deny else 'allow'}"


def test_deliberate_rows_exist() -> None:
    ids = {r.id for r in ROWS}
    assert [rid for rid in DELIBERATE_BY_ROW if rid not in ids] == []


def test_summary(capsys: pytest.CaptureFixture[str]) -> None:
    per_rule: Counter[str] = Counter(r.peer_rule for r in ROWS)
    differ = Counter(r.peer_rule for r in ROWS if r.id in DELIBERATE_BY_ROW)
    with capsys.disabled():
        print(
            f"\nRBAC conformance: {len(ROWS)} rows compared, {len(DELIBERATE_BY_ROW)} deliberate differences"
        )
        for rule, n in sorted(per_rule.items()):
            print(f"  {rule}: {n} rows, {n - differ[rule]} agree, {differ[rule]} deliberate")
        for rule, n in sorted(NOT_COMPARED_ROWS.items()):
            print(f"  {rule}: {n} rows not compared ({NOT_COMPARED[rule][:60]}...)")
    assert len(ROWS) >= 150
