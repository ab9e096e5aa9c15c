"""Compare the RBAC search of two checkouts side by side, on bench/rbac.py's generated cluster.

    git worktree add /tmp/stockade-old <commit>
    .venv/bin/python bench/rbac_versions.py --old /tmp/stockade-old

Runs, one after the other in separate processes (process CPU seconds, median of --repeat):
the old checkout's code on the sparse cluster (no workloads, no token Secrets: what its benchmark
generated), this checkout's code on the same sparse cluster, and this checkout's code on the full
cluster. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGES = ("policies", "scanner", "admission", "webhooks", "cli")


def measure(code: str, sparse: bool, repeat: int) -> dict[str, float]:
    """In this process: import stockade from `code` (a checkout), time build and all_escalations."""
    if code != "installed":
        # the installed editable finder maps stockade.* to this checkout: drop it, map `code` instead
        sys.meta_path[:] = [m for m in sys.meta_path if "editable" not in repr(m)]
        root = Path(tempfile.mkdtemp()) / "stockade"
        root.mkdir()
        (root / "__init__.py").write_text("")
        for pkg in PACKAGES:
            (root / pkg).symlink_to(Path(code) / pkg)
        sys.path.insert(0, str(root.parent))
    sys.path.insert(0, str(HERE))
    import rbac

    from stockade.policies.facts import inventory_of
    from stockade.policies.facts.rbac import RBACGraph

    objects = rbac.generate()
    if sparse:
        objects = [o for o in objects if o["kind"] not in ("Deployment", "Secret")]
    runs = []
    for _ in range(repeat):
        inventory = inventory_of(objects)
        t0 = time.process_time()
        graph = RBACGraph.of(inventory)
        t1 = time.process_time()
        paths = len(graph.all_escalations())
        runs.append((t1 - t0, time.process_time() - t1, paths))
    build = statistics.median(r[0] for r in runs)
    search = statistics.median(r[1] for r in runs)
    return {"build": build, "escalations": search, "total": build + search, "paths": runs[0][2]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=False, help="an older checkout (git worktree) to compare with")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2, metavar=("CODE", "SPARSE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], args.child[1] == "1", args.repeat)))
        return 0
    rows = []
    if args.old:
        rows.append((f"{args.old} / sparse", args.old, "1"))
    rows += [("this checkout / sparse", "installed", "1"), ("this checkout / full", "installed", "0")]
    print("| code / cluster | build s | escalations s | total s | paths |\n|---|---:|---:|---:|---:|")
    for label, code, sparse in rows:
        out = subprocess.run(
            [sys.executable, __file__, "--repeat", str(args.repeat), "--child", code, sparse],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {label} | {r['build']:.2f} | {r['escalations']:.2f} | {r['total']:.2f} | {r['paths']:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
