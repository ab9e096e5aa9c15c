"""rbac-police's attack catalogue as a checklist (issue 19).

PaloAltoNetworks/rbac-police ships one Rego policy per attack class (`lib/*.rego`). For each class
that applies to AKS or bare-metal Kubernetes, a minimal set of manifests an attacker could hold is
scanned with stockade's own library (the evaluator a scan, the webhook and an audit share), and the
test names what finds it: the per-role rule (STK-RBAC-0xx) and, where the class is a path to another
identity, STK-RBAC-031 on the binding that grants the first step.

Not applicable here: `eks_modify_aws_auth` (the aws-auth ConfigMap exists only on EKS) and
`providerIAM` (EKS/GKE ServiceAccount annotations; AKS workload identity is the STK-ID area).

Differences from rbac-police, deliberate: a namespaced Role never grants cluster-scoped resources
(rbac-police flags nodes/proxy, webhooks and node status in a RoleBinding too); `get` on pods/exec
counts before Kubernetes 1.35 (rbac-police requires create); resourceNames restrict everything but
create (rbac-police ignores them in most classes).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.facts.rbac import RBACGraph, Subject
from stockade.policies.model import Operation, Resource
from tests.workloads import token_secret

RBAC = "rbac.authorization.k8s.io/v1"
ATTACKER = {"kind": "User", "name": "mallory", "apiGroup": "rbac.authorization.k8s.io"}


@cache
def evaluator() -> Evaluator:
    return Evaluator.default(parse_config(""))


def findings(*objects: dict[str, Any]) -> set[tuple[str, str]]:
    """(rule id, object name) of every STK-RBAC finding over a set of objects, each with facts from all."""
    source = InventoryFacts(inventory_of(objects))
    out = set()
    for obj in objects:
        res = Resource(obj)
        for f in evaluator().evaluate(
            res, operation=Operation.SCAN, namespace=source.namespace(res.namespace), facts=source.facts(obj)
        ):
            if f.rule.id.startswith("STK-RBAC"):
                out.add((f.rule.id, str(obj["metadata"]["name"])))
    return out


def rule(verbs: str, resources: str, group: str = "", names: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiGroups": [group], "resources": resources.split(), "verbs": verbs.split()}
    if names:
        out["resourceNames"] = names.split()
    return out


def cluster_role(name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}, "rules": list(rules)}


def bind(name: str, role: str, subject: dict[str, Any], ns: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, **({"namespace": ns} if ns else {})}
    return {
        "apiVersion": RBAC,
        "kind": "RoleBinding" if ns else "ClusterRoleBinding",
        "metadata": md,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [subject],
    }


def sa(ns: str, name: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": name, "namespace": ns}


def workload(ns: str, name: str, account: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": account,
                    "automountServiceAccountToken": False,
                    "containers": [{"name": "c", "image": "registry.example/app@sha256:" + "0" * 64}],
                }
            }
        },
    }


# A powerful account in kube-system (bound to the built-in cluster-admin, which the scan knows
# without its definition), with a controller running as it: the target of most classes.
POWERFUL = bind("ops-admin", "cluster-admin", sa("kube-system", "ops"))
RUNNING = workload("kube-system", "ops-controller", "ops")


def attacker(role: str, *rules: dict[str, Any], ns: str | None = "kube-system") -> tuple[dict[str, Any], ...]:
    """A role with `rules`, bound to mallory in `ns` (None: cluster-wide)."""
    return (cluster_role(role, *rules), bind(f"mallory-{role}", role, ATTACKER, ns))


#: class -> (manifests, what stockade must report: (rule id, object name))
CLASSES: dict[str, tuple[tuple[dict[str, Any], ...], set[tuple[str, str]]]] = {
    "approve_csrs": (
        attacker(
            "csr-approver",
            rule("update", "certificatesigningrequests/approval", "certificates.k8s.io"),
            rule("approve", "signers", "certificates.k8s.io"),
            ns=None,
        ),
        {("STK-RBAC-008", "csr-approver")},
    ),
    "assign_sa": (
        (*attacker("deployer", rule("create", "deployments", "apps")), POWERFUL),
        {("STK-RBAC-003", "deployer"), ("STK-RBAC-031", "mallory-deployer")},
    ),
    "bind_roles": (
        attacker(
            "binder",
            rule("bind", "clusterroles", "rbac.authorization.k8s.io"),
            rule("create", "clusterrolebindings", "rbac.authorization.k8s.io"),
            ns=None,
        ),
        {("STK-RBAC-006", "binder"), ("STK-RBAC-031", "mallory-binder")},
    ),
    "cluster_admin": (
        attacker("everything", rule("*", "*", "*"), ns=None),
        {("STK-RBAC-001", "everything")},
    ),
    "control_webhooks": (
        attacker(
            "hooks", rule("patch", "mutatingwebhookconfigurations", "admissionregistration.k8s.io"), ns=None
        ),
        {("STK-RBAC-010", "hooks")},
    ),
    "escalate_roles": (
        attacker("escalator", rule("escalate update", "clusterroles", "rbac.authorization.k8s.io"), ns=None),
        {("STK-RBAC-006", "escalator"), ("STK-RBAC-031", "mallory-escalator")},
    ),
    "impersonate": (
        (*attacker("impersonator", rule("impersonate", "serviceaccounts")), POWERFUL),
        {("STK-RBAC-007", "impersonator"), ("STK-RBAC-031", "mallory-impersonator")},
    ),
    "issue_token_secrets": (
        (*attacker("secret-writer", rule("create get", "secrets")), POWERFUL),
        {
            ("STK-RBAC-014", "secret-writer"),
            ("STK-RBAC-002", "secret-writer"),
            ("STK-RBAC-031", "mallory-secret-writer"),
        },
    ),
    "list_secrets": (
        attacker("lister", rule("list", "secrets"), ns=None),
        {("STK-RBAC-002", "lister")},
    ),
    "modify_node_status": (
        attacker("node-status", rule("patch", "nodes/status"), ns=None),
        {("STK-RBAC-015", "node-status")},
    ),
    "modify_pod_status": (
        attacker("pod-status", rule("update", "pods/status"), ns="web"),
        {("STK-RBAC-015", "pod-status")},
    ),
    "modify_service_status_cve_2020_8554": (
        attacker("svc-status", rule("patch", "services/status"), ns="web"),
        {("STK-RBAC-015", "svc-status")},
    ),
    "modify_pods": (
        (*attacker("pod-patcher", rule("patch", "pods")), POWERFUL, RUNNING),
        {("STK-RBAC-003", "pod-patcher"), ("STK-RBAC-031", "mallory-pod-patcher")},
    ),
    "nodes_proxy": (
        (*attacker("kubelet-api", rule("create", "nodes/proxy"), ns=None), POWERFUL, RUNNING),
        {("STK-RBAC-005", "kubelet-api"), ("STK-RBAC-031", "mallory-kubelet-api")},
    ),
    "obtain_token_weak_ns": (
        (
            *attacker("tokens", rule("create", "serviceaccounts/token"), ns="team-a"),
            bind("team-a-bot", "edit", sa("team-a", "bot"), ns="team-a"),
        ),
        {("STK-RBAC-009", "tokens"), ("STK-RBAC-031", "mallory-tokens")},
    ),
    "pods_ephemeral_ctrs": (
        (*attacker("debugger", rule("patch", "pods/ephemeralcontainers")), POWERFUL, RUNNING),
        {("STK-RBAC-013", "debugger"), ("STK-RBAC-031", "mallory-debugger")},
    ),
    "pods_exec": (
        (*attacker("exec", rule("create", "pods/exec")), POWERFUL, RUNNING),
        {("STK-RBAC-012", "exec"), ("STK-RBAC-031", "mallory-exec")},
    ),
    "rce_weak_ns": (
        (
            *attacker("exec", rule("get", "pods/exec"), ns="team-a"),
            bind("team-a-bot", "edit", sa("team-a", "bot"), ns="team-a"),
            workload("team-a", "bot", "bot"),
        ),
        {("STK-RBAC-012", "exec"), ("STK-RBAC-031", "mallory-exec")},
    ),
    "retrieve_token_secrets": (
        (
            *attacker("reader", rule("get", "secrets", names="ops-token")),
            POWERFUL,
            token_secret("kube-system", "ops-token", "ops"),
        ),
        {("STK-RBAC-002", "reader"), ("STK-RBAC-031", "mallory-reader")},
    ),
    "steal_pods": (
        attacker("node-mover", rule("delete", "pods"), rule("patch", "nodes"), ns=None),
        {("STK-RBAC-015", "node-mover")},
    ),
    "token_request": (
        (*attacker("minter", rule("create", "serviceaccounts/token")), POWERFUL),
        {("STK-RBAC-009", "minter"), ("STK-RBAC-031", "mallory-minter")},
    ),
}


@pytest.mark.parametrize("attack", sorted(CLASSES))
def test_each_rbac_police_class_is_found(attack: str) -> None:
    objects, expected = CLASSES[attack]
    got = findings(*objects)
    assert expected <= got, f"{attack}: missing {sorted(expected - got)}; found {sorted(got)}"


def _moved(obj: dict[str, Any], ns: str) -> dict[str, Any]:
    """`obj` with the attacker's binding placed in namespace `ns` instead of kube-system."""
    if obj["metadata"]["name"].startswith("mallory-") and obj["metadata"].get("namespace") == "kube-system":
        return {**obj, "metadata": {**obj["metadata"], "namespace": ns}}
    return obj


@pytest.mark.parametrize(
    "attack", ["assign_sa", "pods_exec", "nodes_proxy", "retrieve_token_secrets", "impersonate"]
)
def test_without_the_powerful_target_there_is_no_path(attack: str) -> None:
    """The path findings come from the target: without it, only the per-role rule remains (in a
    namespace of the user's own; in kube-system the bootstrap controllers are targets, below)."""
    objects, _ = CLASSES[attack]
    got = findings(*(_moved(o, "tools") for o in objects if o is not POWERFUL))
    assert not {f for f in got if f[0] == "STK-RBAC-031"}, got


@pytest.mark.parametrize("attack", ["assign_sa", "impersonate"])
def test_kube_system_controllers_are_targets_without_any_manifest_of_theirs(attack: str) -> None:
    """Every cluster binds kube-system's controller accounts (system:controller:*) to their roles;
    clusterrole-aggregation-controller may escalate ClusterRoles, so running as it (or impersonating
    it) is cluster-admin. The manifests need not define any of it."""
    objects, _ = CLASSES[attack]
    got = findings(*(o for o in objects if o is not POWERFUL))
    assert (
        "STK-RBAC-031",
        f"mallory-{attack.replace('assign_sa', 'deployer').replace('impersonate', 'impersonator')}",
    ) in got, got
    graph = RBACGraph.from_objects([o for o in objects if o is not POWERFUL])
    paths = graph.escalations_from(Subject("User", "mallory", ""))
    assert any(
        "clusterrole-aggregation-controller" in " ".join(s.text() for s in p.steps) for p in paths
    ) or any("kube-system/clusterrole-aggregation-controller" in p.target_text for p in paths), [
        p.target_text for p in paths
    ]


def test_a_pod_reading_a_legacy_token_secret_holds_its_account() -> None:
    """STK-RBAC-030: a pod whose own account holds nothing, with automount off, that mounts the token
    Secret of ml/ops (cluster-admin). The finding names the Secret, never its data."""
    pod_spec = {
        "serviceAccountName": "default",
        "automountServiceAccountToken": False,
        "containers": [{"name": "c", "image": "x"}],
        "volumes": [{"name": "t", "secret": {"secretName": "ops-token"}}],
    }
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": pod_spec}
    secret = token_secret("ml", "ops-token", "ops")
    secret["data"] = {"token": "Y2FuYXJ5LXRva2VuLXZhbHVl"}  # canary
    admin = bind("ml-ops-admin", "cluster-admin", sa("ml", "ops"))
    source = InventoryFacts(inventory_of((admin, secret, pod)))
    res = Resource(pod)
    found = [
        f
        for f in evaluator().evaluate(
            res, operation=Operation.SCAN, namespace=source.namespace("ml"), facts=source.facts(pod)
        )
        if f.rule.id == "STK-RBAC-030"
    ]
    assert len(found) == 1
    assert 'legacy token Secret "ops-token" of ServiceAccount ml/ops' in found[0].message
    assert "Y2FuYXJ5" not in repr(found[0]) and "canary" not in repr(found[0])
