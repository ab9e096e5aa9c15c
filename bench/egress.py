"""Benchmark egress reachability: every allowed connection among N workloads under M NetworkPolicies.

Generates a seeded cluster: `--namespaces` namespaces (labelled by team and tier), `--workloads`
Deployments spread over them (each with an `app`, `tier` and `team` label and a named port), and
`--policies` NetworkPolicies: per namespace a default deny (Ingress and Egress) and a DNS allowance
to kube-system/kube-dns, then, to reach M, per-app policies mixing what real clusters write: pod
selectors in the namespace, namespaceSelector + podSelector peers across namespaces (by team label
or by name), ipBlock peers with `except` (storage subnets, a proxy), port ranges (`endPort`), named
ports, and some rules with an empty `to`/`from`. Then it times `Reachability(objects)` plus the full
connection list (what `stockade egress reach --format connlist` prints), median of `--repeat` runs.

Not part of the test suite; results in docs/benchmarks.md.

    .venv/bin/python bench/egress.py [--workloads 2000] [--policies 500] [--namespaces 40] [--repeat 3]
        [--open-share 0.5]   # namespaces without default deny: every pair of their pods is allowed
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from typing import Any

from stockade.policies.facts.netpol.reach import Reachability

TIERS = ("web", "api", "worker", "db", "cache")
TEAMS = ("research", "inference", "training", "platform")


def _deployment(ns: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app": labels["app"]}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "main", "image": "x", "ports": [{"name": "http", "containerPort": 8080}]}
                    ]
                },
            },
        },
    }


def _policy(ns: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def generate(
    workloads: int, policies: int, namespaces: int, seed: int, open_share: float = 0.0
) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    objs: list[dict[str, Any]] = []
    ns_names = [f"team-{i:02d}" for i in range(namespaces)]
    for i, ns in enumerate(ns_names):
        labels = {"team": TEAMS[i % len(TEAMS)], "env": "prod" if i % 3 else "dev"}
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}})
    objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
    objs.append(
        _deployment("kube-system", "coredns", {"app": "coredns", "k8s-app": "kube-dns", "tier": "dns"})
    )
    apps: list[tuple[str, str, str]] = []
    for i in range(workloads - 1):
        ns = ns_names[i % namespaces]
        app, tier = f"app-{i}", TIERS[rnd.randrange(len(TIERS))]
        apps.append((ns, app, tier))
        objs.append(_deployment(ns, app, {"app": app, "tier": tier, "team": TEAMS[i % len(TEAMS)]}))
    dns_peer = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
    }
    count = 0
    for ns in ns_names[round(open_share * namespaces) :]:  # the first ones stay open (no default deny)
        if count + 2 > policies:
            break
        objs.append(_policy(ns, "default-deny", {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}))
        objs.append(
            _policy(
                ns,
                "allow-dns",
                {
                    "podSelector": {},
                    "policyTypes": ["Egress"],
                    "egress": [{"to": [dns_peer], "ports": [{"protocol": "UDP", "port": 53}]}],
                },
            )
        )
        count += 2
    while count < policies:
        ns, app, tier = apps[rnd.randrange(len(apps))]
        kind = rnd.randrange(6)
        egress: list[dict[str, Any]] = []
        ingress: list[dict[str, Any]] = []
        if kind == 0:  # same-namespace tier to tier
            egress.append(
                {
                    "to": [{"podSelector": {"matchLabels": {"tier": rnd.choice(TIERS)}}}],
                    "ports": [{"port": 8080}],
                }
            )
        elif kind == 1:  # cross-namespace by team label
            egress.append(
                {
                    "to": [
                        {
                            "namespaceSelector": {"matchLabels": {"team": rnd.choice(TEAMS)}},
                            "podSelector": {
                                "matchExpressions": [
                                    {"key": "tier", "operator": "In", "values": ["api", "web"]}
                                ]
                            },
                        }
                    ],
                    "ports": [{"port": "http"}],
                }
            )
        elif kind == 2:  # storage subnet with a hole, port range
            egress.append(
                {
                    "to": [
                        {"ipBlock": {"cidr": f"10.{rnd.randrange(250)}.0.0/16", "except": ["10.0.0.0/24"]}}
                    ],
                    "ports": [{"protocol": "TCP", "port": 30000, "endPort": 32767}],
                }
            )
        elif kind == 3:  # ingress from a namespace by name
            ingress.append(
                {
                    "from": [
                        {
                            "namespaceSelector": {
                                "matchLabels": {"kubernetes.io/metadata.name": rnd.choice(ns_names)}
                            }
                        }
                    ],
                    "ports": [{"port": 8080}],
                }
            )
        elif kind == 4:  # ingress from anywhere on the named port
            ingress.append({"ports": [{"port": "http"}]})
        else:  # a proxy address on any port
            egress.append({"to": [{"ipBlock": {"cidr": f"192.168.{rnd.randrange(250)}.10/32"}}]})
        spec: dict[str, Any] = {"podSelector": {"matchLabels": {"app": app}}, "policyTypes": []}
        if egress:
            spec["policyTypes"].append("Egress")
            spec["egress"] = egress
        if ingress:
            spec["policyTypes"].append("Ingress")
            spec["ingress"] = ingress
        objs.append(_policy(ns, f"p-{count}", spec))
        count += 1
    return objs


def admin_policies() -> list[dict[str, Any]]:
    """A cluster-wide tier: DNS always allowed, the platform team passed to NetworkPolicies, and a
    baseline that denies egress between teams."""
    api = "policy.networking.k8s.io/v1alpha1"
    everyone = {"namespaces": {}}
    dns = {
        "pods": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    }
    out: list[dict[str, Any]] = [
        {
            "apiVersion": api,
            "kind": "AdminNetworkPolicy",
            "metadata": {"name": "allow-dns"},
            "spec": {
                "priority": 10,
                "subject": everyone,
                "egress": [
                    {
                        "name": "dns",
                        "action": "Allow",
                        "to": [dns],
                        "ports": [{"portNumber": {"protocol": "UDP", "port": 53}}],
                    }
                ],
            },
        },
        {
            "apiVersion": api,
            "kind": "AdminNetworkPolicy",
            "metadata": {"name": "platform-pass"},
            "spec": {
                "priority": 20,
                "subject": {"namespaces": {"matchLabels": {"team": "platform"}}},
                "egress": [{"name": "pass", "action": "Pass", "to": [{"namespaces": {}}]}],
            },
        },
    ]
    out.append(
        {
            "apiVersion": api,
            "kind": "BaselineAdminNetworkPolicy",
            "metadata": {"name": "default"},
            "spec": {
                "subject": everyone,
                "egress": [
                    {
                        "name": f"deny-{t}",
                        "action": "Deny",
                        "to": [{"namespaces": {"matchLabels": {"team": t}}}],
                    }
                    for t in TEAMS
                ],
            },
        }
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workloads", type=int, default=2000)
    parser.add_argument("--policies", type=int, default=500)
    parser.add_argument("--namespaces", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--admin", action="store_true", help="add AdminNetworkPolicies and a baseline")
    parser.add_argument(
        "--open-share", type=float, default=0.0, help="share of namespaces without default deny"
    )
    args = parser.parse_args()
    objs = generate(args.workloads, args.policies, args.namespaces, args.seed, args.open_share)
    if args.admin:
        objs.extend(admin_policies())
    n_pol = sum(1 for o in objs if o["kind"] == "NetworkPolicy")
    times, lines = [], 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        reach = Reachability(objs)
        lines = len(reach.connlist())
        times.append(time.perf_counter() - start)
    print(f"python {platform.python_version()} on {platform.machine()}, {args.repeat} runs")
    print(
        f"{len(reach.workloads)} workloads, {n_pol} NetworkPolicies, {args.namespaces} namespaces "
        f"({args.open_share:.0%} without default deny){', with admin tiers' if args.admin else ''}"
    )
    print(f"{lines} allowed connections (connlist lines)")
    print(f"reachability + connlist: median {statistics.median(times):.2f} s (min {min(times):.2f} s)")


if __name__ == "__main__":
    main()
