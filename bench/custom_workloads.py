"""Cost of workloads inside custom resources (issue 16): pod evaluations per object, and scan throughput.

1. A RayCluster with N worker groups (N = 1, 2, 4, 8, 16) is N+1 pod specs, so it should cost about
   N+1 evaluations of one pod. For each N this times `Evaluator.violations` on the RayCluster and on
   a Pod holding the same pod spec, side by side in one run (median of --repeat rounds, each round
   timing both), and prints the ratio next to N+1 and the number of engine calls made.
2. The corpus (`../shared/corpora/ai_workloads.jsonl`, when present): every sample is written to a
   temporary directory and scanned with the scan pipeline (`run_scan`, one worker); objects per
   second, median of --repeat runs.

    .venv/bin/python bench/custom_workloads.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from stockade.policies.config.settings import Config
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Resource
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "ai_workloads.jsonl"

POD_SPEC: dict[str, Any] = {
    "serviceAccountName": "ray",
    "containers": [
        {
            "name": "ray",
            "image": "rayproject/ray:2.9.0-gpu",
            "resources": {"limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 1}},
            "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False},
            "ports": [{"containerPort": 6379, "name": "gcs"}],
        }
    ],
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
}


def ray_cluster(groups: int) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "ray"}}, "spec": POD_SPEC}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "llm", "namespace": "ml"},
        "spec": {
            "headGroupSpec": {"template": copy.deepcopy(template)},
            "workerGroupSpecs": [
                {"groupName": f"g{i}", "replicas": 4, "template": copy.deepcopy(template)}
                for i in range(groups)
            ],
        },
    }


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", "labels": {"app": "ray"}},
        "spec": copy.deepcopy(POD_SPEC),
    }


class Counting:
    """Wraps an engine to count evaluate() calls."""

    def __init__(self, engine: Any) -> None:
        self.engine, self.calls = engine, 0

    def evaluate(self, kind: str, inp: Any, **options: Any) -> Any:
        self.calls += options.get("library", True)  # pod evaluations (not the constraints-only call)
        return self.engine.evaluate(kind, inp, **options)


def per_object(evaluator: Evaluator, obj: dict[str, Any], loops: int) -> float:
    resource = Resource(obj)
    started = time.perf_counter()
    for _ in range(loops):
        evaluator.violations(resource)
    return (time.perf_counter() - started) / loops


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--loops", type=int, default=50)
    args = parser.parse_args()
    evaluator = Evaluator.default(Config())
    print("RayCluster with N worker groups vs one Pod of the same spec (µs per object, median)")
    print(f"{'N':>3} {'pod specs':>9} {'engine calls':>12} {'RayCluster':>11} {'Pod':>8} {'ratio':>6}")
    for groups in (1, 2, 4, 8, 16):
        obj = ray_cluster(groups)
        counting = Counting(evaluator.engine)
        real = evaluator.engine
        evaluator.engine = counting  # type: ignore[assignment]
        evaluator.violations(Resource(obj))
        evaluator.engine = real
        rc, single = [], []
        for _ in range(args.repeat):
            rc.append(per_object(evaluator, obj, args.loops))
            single.append(per_object(evaluator, pod(), args.loops))
        a, b = statistics.median(rc), statistics.median(single)
        print(
            f"{groups:>3} {groups + 1:>9} {counting.calls:>12} {a * 1e6:>11.0f} {b * 1e6:>8.0f} {a / b:>6.2f}"
        )
    if not CORPUS.exists():
        print(f"corpus not found ({CORPUS}): scan throughput not measured")
        return
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        for n, row in enumerate(rows):
            (Path(tmp) / f"r{n:03d}.yaml").write_text(yaml.safe_dump_all(row["objects"]))
        objects = sum(len(r["objects"]) for r in rows)
        pod_specs = sum(len(r["pod_specs"]) for r in rows)
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            result = run_scan(
                FileSource([tmp]), [], evaluator, ScanOptions(evaluator.config), version="bench"
            )
            times.append(time.perf_counter() - started)
        t = statistics.median(times)
        print(
            f"corpus scan: {len(rows)} files, {objects} objects, {pod_specs}+ pod specs, "
            f"{len(result.findings)} findings, {len(result.errors)} errors: median {t * 1e3:.0f} ms, "
            f"{objects / t:.0f} objects/s (one worker)"
        )


if __name__ == "__main__":
    main()
