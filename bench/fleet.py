"""`stockade audit` of a fleet: N simulated clusters of bench/audit.py's size, in one command.

Each cluster is bench/audit.py's simulated 7,500-node, 150,000-pod cluster, served by the bundled fake
API server (examples/fleet/apiserver.py) on its own loopback port, in this process (one simulated
cluster served N times under N context names: the auditor lists and evaluates each as a cluster of
its own). `stockade audit --all-contexts` runs as a child process; its wall time, CPU and peak RSS
are its own (`os.wait4` on that child), the servers' CPU is this process's over the run.

    .venv/bin/python bench/fleet.py [--clusters 10] [--nodes 7500] [--pods 150000] [--parallel N]
    .venv/bin/python bench/fleet.py --clusters 1 2 5 10     # does peak memory grow with the fleet?

Prints, per fleet size, a line `fleet: N clusters, W s, peak RSS M MiB` (and the CPU split).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import audit as single  # noqa: E402  (bench/audit.py: the simulated cluster and its config)

fake = single.fake


def run(command: list[str]) -> tuple[float, float, int, int]:
    """(wall s, child CPU s, child peak RSS KiB, exit code) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"audit failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clusters", type=int, nargs="+", default=[10], help="fleet sizes to audit (10)")
    parser.add_argument("--nodes", type=int, default=7500)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--daemonsets", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--parallel", type=int, help="stockade audit --parallel (default: its own)")
    parser.add_argument("--stockade", help="the stockade executable (default: this Python's module)")
    args = parser.parse_args(argv)

    cluster, counts = single.build_cluster(args.nodes, args.pods, args.daemonsets, args.seed)
    print(f"one simulated cluster: {counts}", flush=True)
    most = max(args.clusters)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        servers = [
            stack.enter_context(fake.ServedCluster(cluster, encoder=orjson.dumps)) for _ in range(most)
        ]
        config = Path(tmp) / "stockade.yaml"
        config.write_text(single.BENCH_CONFIG)
        for n in sorted(args.clusters):
            names = {f"gpu-{i:02d}": servers[i].url for i in range(n)}
            kubeconfig = Path(tmp) / f"kubeconfig-{n}"
            kubeconfig.write_text(yaml.safe_dump(fake.kubeconfig(names)))
            stockade = [args.stockade] if args.stockade else [sys.executable, "-m", "stockade.cli.main"]
            command = [
                *stockade,
                *("audit", "--kubeconfig", str(kubeconfig), "--all-contexts", "--config", str(config)),
                *("--format", "json", "--output", str(Path(tmp) / f"fleet-{n}.json")),
                *(("--parallel", str(args.parallel)) if args.parallel else ()),
            ]
            cluster.requests.clear()
            server_before = resource.getrusage(resource.RUSAGE_SELF)
            seconds, cpu, peak_kib, _ = run(command)
            server_after = resource.getrusage(resource.RUSAGE_SELF)
            server_cpu = (server_after.ru_utime - server_before.ru_utime) + (
                server_after.ru_stime - server_before.ru_stime
            )
            doc = orjson.loads((Path(tmp) / f"fleet-{n}.json").read_bytes())
            audited = sum(1 for c in doc["clusters"] if c.get("reachable"))
            print(
                f"fleet: {n} clusters, {seconds:.0f} s, peak RSS {peak_kib / 1024:.0f} MiB "
                f"(auditor CPU {cpu:.0f} s, servers' CPU {server_cpu:.0f} s; {audited} audited, "
                f"{len(doc['findings'])} findings, {len(cluster.requests)} API requests)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
