"""`stockade audit` of a simulated 7,500-node, 150,000-pod cluster: wall time, peak RSS, API requests.

The cluster is served by the fake API server of the bundled fleet (examples/fleet/apiserver.py) in
this process, on 127.0.0.1; pods are a virtual collection made page by page, so the server holds
only the controllers. `stockade audit` runs as a child process through a generated kubeconfig, so
its peak RSS (`getrusage(RUSAGE_CHILDREN)`) is the auditor's alone. API requests are counted by the
server.

The population: workloads from bench/scan.py's generator (Deployments, StatefulSets, Jobs,
CronJobs, bare Pods over 8 namespaces, 40 % of them breaking one or two controls), scaled so
controllers run `--pods` pods in all, plus `--daemonsets` DaemonSets with a pod on every node,
Namespaces, ServiceAccounts, and RBAC objects and NetworkPolicies (listed when a rule or an
analyzer reads them).

    .venv/bin/python bench/audit.py [--nodes 7500] [--pods 150000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "examples" / "fleet"))

from scan import BENCH_CONFIG, NAMESPACES, make_workload  # noqa: E402

fake: ModuleType = importlib.import_module("apiserver")  # the fleet's fake API server


def build_cluster(nodes: int, pods: int, daemonsets: int, seed: int) -> tuple[Any, dict[str, int]]:
    rng = random.Random(seed)
    name = "sim-7500"
    node_names = [f"gpu-node-{i:05d}" for i in range(nodes)]
    objects: list[dict[str, Any]] = []
    for ns in NAMESPACES:
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {}}})
        objects.append(
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": ns}}
        )
    # DaemonSets: node agents with one pod per node
    for i in range(daemonsets):
        w = make_workload(rng, 900_000 + i)
        template = w["spec"]["template"] if "template" in w["spec"] else {"metadata": {}, "spec": w["spec"]}
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": f"node-agent-{i}", "namespace": "monitoring", "labels": {}},
                "spec": {"selector": {"matchLabels": {"app": f"node-agent-{i}"}}, "template": template},
            }
        )
    remaining = pods - daemonsets * nodes
    index = 0
    while remaining > 0:
        w = make_workload(rng, index)
        index += 1
        kind, spec = w["kind"], w.get("spec") or {}
        if kind in ("Deployment", "StatefulSet"):
            spec["replicas"] = min(remaining, rng.choice((2, 4, 8, 16, 32, 64)))
            remaining -= spec["replicas"]
        elif kind == "Job":
            n = min(remaining, rng.choice((1, 8, 16, 32)))
            spec["parallelism"] = spec["completions"] = n
            remaining -= n
        elif kind == "Pod":
            remaining -= 1
        objects.append(w)
    for i in range(2000):  # RBAC and NetworkPolicies: listed when the library reads them
        ns = NAMESPACES[i % len(NAMESPACES)]
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": f"role-{i}", "namespace": ns},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
            }
        )
        objects.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": f"binding-{i}", "namespace": ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"role-{i}"},
                "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}],
            }
        )
        if i < 500:
            objects.append(
                {
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "NetworkPolicy",
                    "metadata": {"name": f"np-{i}", "namespace": ns},
                    "spec": {"podSelector": {}, "policyTypes": ["Egress"]},
                }
            )
    cluster = fake.FakeCluster.from_objects(name, objects, nodes=0, simulate=False)
    with_ids = [o for path in cluster.collections.values() for o in path]  # type: ignore[union-attr]
    replicasets, plans = fake.plan_controllers(with_ids, name, node_names)
    cluster.collections[fake.KIND_PATH["ReplicaSet"]] = replicasets
    cluster.collections[fake.KIND_PATH["Node"]] = [
        fake._with_identity({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}}, name)
        for n in node_names
    ]
    total, generate = fake.virtual_pods(plans, name, node_names)
    bare = cluster.collections.pop(fake.KIND_PATH["Pod"], [])
    n_bare = len(bare)  # type: ignore[arg-type]

    def all_pods(start: int, stop: int) -> list[dict[str, Any]]:
        out = [bare[i] for i in range(start, min(stop, n_bare))]  # type: ignore[index]
        if stop > n_bare:
            out += generate(max(0, start - n_bare), stop - n_bare)
        return out

    cluster.collections[fake.KIND_PATH["Pod"]] = (total + n_bare, all_pods)
    counts = {
        "nodes": nodes,
        "pods": total + n_bare,
        "controllers": len(plans),
        "replicasets": len(replicasets),
        "objects": sum(len(c) if isinstance(c, list) else c[0] for c in cluster.collections.values()),
    }
    return cluster, counts


def _size(collection: Any) -> int:
    return len(collection) if isinstance(collection, list) else int(collection[0])


@dataclass
class Run:
    seconds: float
    peak_kib: int
    auditor_cpu: float  # user + system seconds of the `stockade audit` process
    server_cpu: float  # of this process while it ran: the fake API server's threads
    doc: dict[str, Any]


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_once(
    kubeconfig: Path, config: Path, out: Path, stockade: list[str] | None = None, profile: Path | None = None
) -> Run:
    server = _cpu(resource.RUSAGE_SELF)
    start = time.perf_counter()
    command = stockade or [
        sys.executable,
        *(("-m", "cProfile", "-o", str(profile)) if profile else ()),
        *("-m", "stockade.cli.main"),
    ]
    proc = subprocess.Popen(
        [
            *command,
            *("audit", "--kubeconfig", str(kubeconfig)),
            *("--config", str(config), "--format", "json", "--output", str(out)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    # this child's own CPU and peak RSS (os.wait4), whatever other children ran before
    _, status, usage = os.wait4(proc.pid, 0)
    returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    auditor_cpu = usage.ru_utime + usage.ru_stime
    server_cpu = _cpu(resource.RUSAGE_SELF) - server
    if returncode not in (0, 1):
        raise SystemExit(f"audit failed ({returncode}): {err.decode(errors='replace')[-2000:]}")
    peak_kib = usage.ru_maxrss
    return Run(seconds, peak_kib, auditor_cpu, server_cpu, orjson.loads(out.read_bytes()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=7500)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--daemonsets", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--baseline",
        help="another build's `stockade` executable, run in alternation after each run of this one",
    )
    parser.add_argument("--profile", type=Path, help="cProfile the (first) audit into this file")
    args = parser.parse_args(argv)

    cluster, counts = build_cluster(args.nodes, args.pods, args.daemonsets, args.seed)
    print(f"simulated cluster: {counts}", flush=True)
    with tempfile.TemporaryDirectory() as tmp, fake.ServedCluster(cluster, encoder=orjson.dumps) as served:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(fake.kubeconfig({cluster.name: served.url})))
        config = Path(tmp) / "stockade.yaml"
        config.write_text(BENCH_CONFIG)
        rows = []
        base_rows: list[Run] = []
        for i in range(args.repeat):
            cluster.requests.clear()
            run = run_once(
                kubeconfig, config, Path(tmp) / "audit.json", profile=args.profile if i == 0 else None
            )
            requests = len(cluster.requests)
            stats = run.doc["clusters"][0]
            floor = sum(
                max(1, -(-_size(cluster.collections.get(path, [])) // 500))
                for path in {p for p, _, _ in cluster.requests}
            )
            stats["pages_floor"] = floor
            rows.append((run.seconds, run.peak_kib, requests, stats, len(run.doc["findings"]), run))
            print(
                f"run {i + 1}: {run.seconds:.1f} s, auditor CPU {run.auditor_cpu:.1f} s, server CPU "
                f"{run.server_cpu:.1f} s, peak RSS {run.peak_kib / 1024:.0f} MiB, {requests} API requests "
                f"({stats['objects']} objects listed, {stats['evaluated']} evaluated), "
                f"{len(run.doc['findings'])} findings",
                flush=True,
            )
            if args.baseline:
                base = run_once(kubeconfig, config, Path(tmp) / "base.json", stockade=[args.baseline])
                base_rows.append(base)
                print(
                    f"  baseline: {base.seconds:.1f} s, auditor CPU {base.auditor_cpu:.1f} s, server CPU "
                    f"{base.server_cpu:.1f} s, peak RSS {base.peak_kib / 1024:.0f} MiB, "
                    f"{len(base.doc['findings'])} findings",
                    flush=True,
                )
    seconds = statistics.median(r[0] for r in rows)
    peak = max(r[1] for r in rows) / 1024
    auditor = statistics.median(r[5].auditor_cpu for r in rows)
    server = statistics.median(r[5].server_cpu for r in rows)
    print(f"\nmedians: wall {seconds:.1f} s, auditor CPU {auditor:.1f} s, server CPU {server:.1f} s")
    if base_rows:
        print(
            f"baseline medians: wall {statistics.median(b.seconds for b in base_rows):.1f} s, auditor CPU "
            f"{statistics.median(b.auditor_cpu for b in base_rows):.1f} s, server CPU "
            f"{statistics.median(b.server_cpu for b in base_rows):.1f} s"
        )
    requests = rows[-1][2]
    objects = rows[-1][3]["objects"]
    print()
    print(
        f"| nodes | pods | objects listed | evaluated | wall time (median of {args.repeat}) "
        "| peak RSS | API requests | objects per request |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {counts['nodes']:,} | {counts['pods']:,} | {objects:,} | {rows[-1][3]['evaluated']:,} "
        f"| {seconds:.1f} s | {peak:.0f} MiB | {requests} | {objects / requests:.0f} |"
    )
    floor = rows[-1][3]["pages_floor"]
    print(f"pages of 500 needed (one request per kind at least): {floor}; requests made: {requests}")
    targets = [
        ("wall time <= 60 s", seconds <= 60),
        ("peak RSS <= 1 GiB", peak <= 1024),
        ("<= 1 list request per 500 objects (per kind)", requests <= floor),
    ]
    for what, ok in targets:
        print(f"target {what}: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
