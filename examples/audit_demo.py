"""`make demo`, part 3: audit the bundled fleet, with no cluster and no cloud account.

Each "cluster" of examples/fleet/fleet.yaml is served by examples/fleet/apiserver.py on a loopback
port, and `stockade audit` runs against them through a generated kubeconfig exactly as it would
against AKS or a bare-metal cluster: paginated lists through the kubernetes client, pods folded
into their workloads, a coverage gap where the fixture forbids a kind, one fleet report.

    python examples/audit_demo.py [OUTPUT_DIR]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "fleet"))

from apiserver import ServedCluster, kubeconfig, load_fleet  # noqa: E402


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    served = [ServedCluster(c) for c in load_fleet(HERE / "fleet" / "fleet.yaml")]
    for s in served:
        s.__enter__()
    try:
        config = out / "kubeconfig"
        config.write_text(yaml.safe_dump(kubeconfig({s.cluster.name: s.url for s in served})))
        base = [sys.executable, "-m", "stockade.cli.main", "audit", "--kubeconfig", str(config)]
        base += ["--all-contexts", "--config", str(HERE / "stockade.yaml")]
        runs = [
            [],
            ["--format", "html", "--output", str(out / "audit.html")],
            ["--format", "json", "--output", str(out / "audit.json")],
            ["--format", "sarif", "--output", str(out / "audit.sarif")],
        ]
        # The fleet has violations on purpose (exit 1), and one cluster forbids a kind: a coverage
        # gap, which makes the audit exit 2 unless --no-fail-on-gaps (the first run shows it).
        expected = [2] + [1] * (len(runs) - 1)
        for extra, want in zip(runs, expected, strict=True):
            flags = [] if want == 2 else ["--no-fail-on-gaps"]
            code = subprocess.run([*base, *flags, *extra], check=False).returncode
            if code != want:
                print(f"audit_demo: expected exit code {want}, got {code}", file=sys.stderr)
                return 1
    finally:
        for s in served:
            s.__exit__()
    print(f"Audit reports: {out / 'audit.html'} {out / 'audit.json'} {out / 'audit.sarif'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".demo")))
