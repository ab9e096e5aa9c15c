"""Side by side: the escalation search of the working tree against that of a git revision, on
bench/rbac.py's generated cluster, in one process, alternating the order of the two per round.

Only the CPU time of `all_escalations()` is compared (the graph is built anew for each run, outside
the timing), and the two must find the same paths (their JSON is compared once).

    .venv/bin/python bench/rbac_compare.py --ref HEAD [--repeat 7]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def _load(ref: str, folder: Path) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{ref}:policies/facts/rbac.py"], cwd=HERE.parent, check=True, capture_output=True
    ).stdout
    file = folder / "rbac_ref.py"
    file.write_bytes(source)
    name = "stockade.policies.facts._rbac_ref"  # inside the package: its relative imports resolve
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _digest(paths: list) -> str:  # type: ignore[type-arg]
    text = json.dumps([p.as_json() for p in paths], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    import rbac as bench  # bench/rbac.py: the generator

    import stockade.policies.facts  # noqa: F401  (the package first: no import cycle)
    import stockade.policies.facts.rbac as work

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    objects = bench.generate()
    with tempfile.TemporaryDirectory() as tmp:
        ref = _load(args.ref, Path(tmp))
        runs: dict[str, list[float]] = {args.ref: [], "working tree": []}
        digests: dict[str, str] = {}
        for i in range(args.repeat):
            order = [(args.ref, ref), ("working tree", work)]
            for label, module in order if i % 2 == 0 else order[::-1]:
                graph = module.RBACGraph.from_objects(objects)
                gc.collect()
                t0 = time.process_time()
                paths = graph.all_escalations()
                runs[label].append(time.process_time() - t0)
                digests.setdefault(label, _digest(paths))
                del graph, paths
    for label, values in runs.items():
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"{label:14} median {statistics.median(values):.3f} s CPU  runs: {each}")
    ratio = statistics.median(runs[args.ref]) / statistics.median(runs["working tree"])
    same = len(set(digests.values())) == 1
    print(f"{args.ref} / working tree: {ratio:.2f}x; same paths: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
