"""Benchmark the RBAC graph (policies/facts/rbac.py) at the size of a large multi-tenant cluster.

Generates 10,000 roles (9,000 namespaced Roles over 250 namespaces, 1,000 ClusterRoles of which 20
aggregate others), 20,000 bindings (RoleBindings and ClusterRoleBindings to Users, Groups and
ServiceAccounts) and 5,000 ServiceAccounts (20 per namespace, each with a Deployment running as it,
and one legacy token Secret per namespace), with a realistic share of
escalation-capable rules (secrets readers, deployers, exec, token minting, a few binders and
impersonators), plus planted escalation chains whose answers are known. Then times:

  build        RBACGraph.build(inventory): indexing, aggregation
  who-can      a batch of who-can queries (namespaced and cluster-wide)
  escalations  every escalation path of every subject the bindings name (all_escalations)
  facts        input.facts for every binding (escalations_via) and one workload per ServiceAccount

Not part of the test suite (tests/policies/test_rbac_graph.py runs the same generator for
correctness only). Results: docs/benchmarks.md.

    .venv/bin/python bench/rbac.py [--roles 10000] [--bindings 20000] [--service-accounts 5000]
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from typing import Any

GROUP = "rbac.authorization.k8s.io"
RBAC = f"{GROUP}/v1"
NAMESPACES = 250
AGGREGATED = 20

# (weight, rule): most rules are read-only; some are escalation-capable.
RULES: list[tuple[int, dict[str, Any]]] = [
    (40, {"apiGroups": [""], "resources": ["pods", "services", "configmaps"], "verbs": ["get", "list"]}),
    (15, {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets"], "verbs": ["get", "list"]}),
    (10, {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get", "list", "delete"]}),
    (8, {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}),
    (6, {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create", "update", "patch"]}),
    (4, {"apiGroups": [""], "resources": ["pods/exec", "pods/log"], "verbs": ["create", "get"]}),
    (3, {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["settings"]}),
    (2, {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}),
    (2, {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}),
    (1, {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]}),
]
RARE: list[dict[str, Any]] = [
    {"apiGroups": [GROUP], "resources": ["clusterroles"], "verbs": ["bind", "escalate"]},
    {"apiGroups": [GROUP], "resources": ["clusterrolebindings", "rolebindings"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["users", "groups"], "verbs": ["impersonate"]},
    {"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]},
]


def _rules(rng: random.Random) -> list[dict[str, Any]]:
    weights = [w for w, _ in RULES]
    picked = rng.choices([r for _, r in RULES], weights=weights, k=rng.randint(1, 4))
    if rng.random() < 0.004:
        picked.append(rng.choice(RARE))
    return [dict(r) for r in picked]


def _ref(kind: str, name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}


def generate(
    roles: int = 10_000, bindings: int = 20_000, service_accounts: int = 5_000, seed: int = 7
) -> list[dict[str, Any]]:
    """The objects of one synthetic cluster, plus the planted chains `planted()` describes."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    namespaces = [f"team-{i:03d}" for i in range(NAMESPACES)]
    per_ns = max(1, service_accounts // NAMESPACES)
    for ns in namespaces:
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for j in range(per_ns):
            md = {"name": f"sa-{j:02d}", "namespace": ns}
            out.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": md})
            # a workload runs as each account (paths through exec, attach, nodes/proxy reach it)
            spec = {"serviceAccountName": md["name"], "containers": [{"name": "app", "image": "app:1"}]}
            out.append(
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": f"app-{j:02d}", "namespace": ns},
                    "spec": {"template": {"spec": spec}},
                }
            )
        # one legacy token Secret per namespace (reading it acts as sa-00)
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "kubernetes.io/service-account-token",
                "metadata": {
                    "name": "sa-00-token",
                    "namespace": ns,
                    "annotations": {"kubernetes.io/service-account.name": "sa-00"},
                },
            }
        )
    n_cluster = roles // 10
    cluster_roles = [f"cr-{i:04d}" for i in range(n_cluster)]
    for i, name in enumerate(cluster_roles):
        obj: dict[str, Any] = {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}}
        if i < AGGREGATED:
            label = f"example.com/aggregate-to-{i}"
            obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]}
            obj["rules"] = []
        else:
            obj["rules"] = _rules(rng)
            if rng.random() < 0.1:
                obj["metadata"]["labels"] = {f"example.com/aggregate-to-{rng.randrange(AGGREGATED)}": "true"}
        out.append(obj)
    ns_roles: dict[str, list[str]] = {ns: [] for ns in namespaces}
    for i in range(roles - n_cluster):
        ns = namespaces[i % NAMESPACES]
        name = f"role-{i:05d}"
        ns_roles[ns].append(name)
        md = {"name": name, "namespace": ns}
        out.append({"apiVersion": RBAC, "kind": "Role", "metadata": md, "rules": _rules(rng)})
    n_crb = bindings // 13
    for i in range(bindings):
        if i < n_crb:
            subject = _subject(rng, namespaces, per_ns, cluster_wide=True)
            out.append(
                {
                    "apiVersion": RBAC,
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": f"crb-{i:05d}"},
                    "roleRef": _ref("ClusterRole", rng.choice(cluster_roles[AGGREGATED:])),
                    "subjects": [subject],
                }
            )
            continue
        ns = namespaces[i % NAMESPACES]
        ref = (
            _ref("Role", rng.choice(ns_roles[ns]))
            if rng.random() < 0.7 or not cluster_roles
            else _ref("ClusterRole", rng.choice(cluster_roles))
        )
        subjects = [_subject(rng, [ns], per_ns, cluster_wide=False) for _ in range(rng.randint(1, 2))]
        out.append(
            {
                "apiVersion": RBAC,
                "kind": "RoleBinding",
                "metadata": {"name": f"rb-{i:05d}", "namespace": ns},
                "roleRef": ref,
                "subjects": subjects,
            }
        )
    out.extend(planted())
    return out


def _subject(rng: random.Random, namespaces: list[str], per_ns: int, *, cluster_wide: bool) -> dict[str, str]:
    r = rng.random()
    if r < 0.6:
        name = f"sa-{rng.randrange(per_ns):02d}"
        return {"kind": "ServiceAccount", "name": name, "namespace": rng.choice(namespaces)}
    if r < 0.85:
        return {
            "kind": "Group",
            "name": f"group-{rng.randrange(400 if cluster_wide else 100)}",
            "apiGroup": GROUP,
        }
    return {"kind": "User", "name": f"user-{rng.randrange(2000)}@example.com", "apiGroup": GROUP}


def planted() -> list[dict[str, Any]]:
    """A known two-step chain: Group planted-devs creates pods in planted-a, where ServiceAccount
    planted-a/ci mints tokens in planted-b, where ServiceAccount planted-b/root may bind any ClusterRole."""

    def role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
        return {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules}

    def binding(name: str, ns: str | None, role: str, subject: dict[str, str]) -> dict[str, Any]:
        kind = "RoleBinding" if ns else "ClusterRoleBinding"
        md = {"name": name, **({"namespace": ns} if ns else {})}
        return {
            "apiVersion": RBAC,
            "kind": kind,
            "metadata": md,
            "roleRef": _ref("ClusterRole", role),
            "subjects": [subject],
        }

    return [
        role("planted-deployer", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]),
        role(
            "planted-tokens",
            [{"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}],
        ),
        role("planted-binder", [RARE[0], RARE[1]]),
        binding("planted-devs", "planted-a", "planted-deployer", {"kind": "Group", "name": "planted-devs"}),
        binding(
            "planted-ci",
            "planted-b",
            "planted-tokens",
            {"kind": "ServiceAccount", "name": "ci", "namespace": "planted-a"},
        ),
        binding(
            "planted-root",
            None,
            "planted-binder",
            {"kind": "ServiceAccount", "name": "root", "namespace": "planted-b"},
        ),
    ]


QUERIES: list[tuple[str, str, str, str, str | None]] = [
    ("get", "", "secrets", "", "team-007"),
    ("list", "", "secrets", "", None),
    ("create", "", "pods", "", "team-100"),
    ("create", "", "pods", "exec", "team-200"),
    ("create", "apps", "deployments", "", None),
    ("create", "", "serviceaccounts", "token", "team-042"),
    ("bind", "rbac.authorization.k8s.io", "clusterroles", "", None),
    ("impersonate", "", "users", "", None),
    ("get", "", "nodes", "proxy", None),
    ("get", "", "configmaps", "", "team-150"),
]


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, ".")
    from stockade.policies.facts import facts_for, inventory_of
    from stockade.policies.facts.rbac import RBAC_KINDS, RBACGraph

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--roles", type=int, default=10_000)
    ap.add_argument("--bindings", type=int, default=20_000)
    ap.add_argument("--service-accounts", type=int, default=5_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    objects = generate(args.roles, args.bindings, args.service_accounts)
    kinds = {k: sum(1 for o in objects if o["kind"] == k) for k in (*RBAC_KINDS, "ServiceAccount")}
    print(f"python {platform.python_version()} {platform.machine()}; objects: {kinds}")
    times: dict[str, list[float]] = {"build": [], "who-can": [], "escalations": [], "facts": []}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    for _ in range(args.repeat):
        inventory = inventory_of(objects)
        c0, t0 = time.process_time(), time.perf_counter()
        graph = RBACGraph.of(inventory)  # what every gate calls: built once, cached on the inventory
        c1, t1 = time.process_time(), time.perf_counter()
        answers = [len(graph.who_can(v, g, r, s, ns)) for v, g, r, s, ns in QUERIES]
        c2, t2 = time.process_time(), time.perf_counter()
        paths = graph.all_escalations()
        c3, t3 = time.process_time(), time.perf_counter()
        # what the gates do: facts for every binding and one workload per ServiceAccount
        n_facts = 0
        for o in objects:
            if o["kind"] in ("RoleBinding", "ClusterRoleBinding"):
                n_facts += bool(facts_for(o, inventory))
            elif o["kind"] == "ServiceAccount":
                md = o["metadata"]
                pod = {
                    "kind": "Pod",
                    "metadata": {"name": "p", "namespace": md["namespace"]},
                    "spec": {"serviceAccountName": md["name"], "containers": []},
                }
                n_facts += bool(facts_for(pod, inventory))
        c4, t4 = time.process_time(), time.perf_counter()
        for key, dt, dc in zip(
            times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), (c1 - c0, c2 - c1, c3 - c2, c4 - c3), strict=True
        ):
            times[key].append(dt)
            cpu[key].append(dc)
    print(f"who-can answers (subjects per query): {answers}")
    print(f"escalation paths: {len(paths)} (from {len(graph.subjects())} subjects)")
    print(f"objects with rbac facts: {n_facts}")
    for key, values in times.items():
        runs = ", ".join(f"{v:.3f}" for v in values)
        wall, cpu_s = statistics.median(values), statistics.median(cpu[key])
        print(f"{key:12s} median {wall:7.3f} s wall, {cpu_s:7.3f} s CPU   runs: {runs}")
    for label, data in (("wall", times), ("CPU", cpu)):
        total = sum(statistics.median(data[k]) for k in ("build", "who-can", "escalations"))
        print(f"build + who-can + escalations: {total:.3f} s {label} (target <= 5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
