"""Marginal cost of each rule group inside the aggregated evaluation (where to optimise first).

Per-rule timings in isolation mislead: rules share helpers (`pods.containers`, `images.sources`)
that one aggregated query computes once. This evaluates every example object with all rules, then
with one group switched off at a time, side by side in one process, and prints the difference of
the medians: what that group really adds per object.

    .venv/bin/python bench/rules.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from stockade.policies.config.settings import RuleSetting, load_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.model import Resource
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {
    "Pod Security Standards": ("STK-POD-0", "STK-POD-1"),
    "images": ("STK-IMG-",),
    "GPU": ("STK-GPU-",),
    "resources": ("STK-RES-",),
    "ServiceAccounts": ("STK-SA-",),
    "host path targets": ("STK-POD-2",),
    "egress": ("STK-NET-",),
    "sandbox runtime classes": ("STK-RT-",),
    "storage": ("STK-STO-",),
    "workload identity": ("STK-ID-",),
    "RBAC": ("STK-RBAC-",),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    config = load_config(ROOT / "examples" / "stockade.yaml")
    resources = [
        r
        for r in FileSource([str(ROOT / "examples" / "manifests")], exclude=["broken"])
        if isinstance(r, Resource)
    ]
    inventory = inventory_of(r.obj for r in resources)

    def per_object_us(ev: Evaluator) -> float:
        inputs = [
            (r.kind, ev.build_input(r, facts=facts_for(r.obj, inventory)))
            for r in resources
            if ev.engine.rules_for(r.kind)  # type: ignore[attr-defined]
        ]
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for _ in range(20):
                for kind, inp in inputs:
                    ev.engine.evaluate(kind, inp)
            times.append((time.perf_counter() - start) / (20 * len(inputs)) * 1e6)
        return statistics.median(times)

    full_ev = Evaluator.default(config)
    full = per_object_us(full_ev)
    print(f"all {len(full_ev.rules)} rules: {full:.0f} µs per object (median of {args.rounds} rounds)")
    print("| rule group | rules | marginal µs / object |")
    print("|---|---:|---:|")
    for name, prefixes in GROUPS.items():
        off = {rid: RuleSetting(enabled=False) for rid in full_ev.rules if rid.startswith(prefixes)}
        without = per_object_us(
            Evaluator.default(config.model_copy(update={"rules": {**config.rules, **off}}))
        )
        print(f"| {name} | {len(off)} | {full - without:.0f} |")


if __name__ == "__main__":
    main()
