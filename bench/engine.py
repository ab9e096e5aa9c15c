"""Per-object evaluation cost of the embedded engine: regorus' compiled VM vs its interpreter.

Both run the whole bundled library on the same realistic inputs (the objects of examples/manifests,
repeated), side by side in one process, and the medians of several rounds are printed together
with their ratio. The verdicts are compared too: a difference is an error, not a speed-up.

    .venv/bin/python bench/engine.py [--rounds 7] [--copies 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import orjson

from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.evaluate import Evaluator
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.model import Resource
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--copies", type=int, default=50, help="times each example object is evaluated per round")
    args = ap.parse_args()

    ev = Evaluator.default()
    engine = ev.engine
    assert isinstance(engine, EmbeddedEngine) and engine.uses_vm, engine.vm_error
    resources = [r for r in FileSource([str(ROOT / "examples" / "manifests")]) if isinstance(r, Resource)]
    inventory = inventory_of(r.obj for r in resources)
    jobs = []
    for r in resources:
        rules = engine.rules_for(r.kind)
        if rules:
            inp = ev.build_input(r, facts=facts_for(r.obj, inventory))
            agg = r.kind if r.kind in engine.kinds() else "*"
            jobs.append((r.kind, agg, rules, inp, orjson.dumps(inp).decode()))
    jobs = jobs * args.copies

    def vm() -> None:
        for kind, _, _, inp, _ in jobs:
            engine.evaluate(kind, inp)

    def interpreter() -> None:
        for _, agg, rules, _, text in jobs:
            engine.evaluate_interpreted(agg, rules, text)

    for kind, agg, rules, inp, text in jobs[: len(jobs) // args.copies]:
        a = sorted(orjson.dumps([v.rule.id, v.msg, v.path]) for v in engine.evaluate(kind, inp))
        interpreted = engine.evaluate_interpreted(agg, rules, text)
        b = sorted(orjson.dumps([v.rule.id, v.msg, v.path]) for v in interpreted)
        assert a == b, f"VM and interpreter disagree on a {kind}"

    times: dict[str, list[float]] = {"vm": [], "interpreter": []}
    for _ in range(args.rounds):
        for name, fn in (("vm", vm), ("interpreter", interpreter)):
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) / len(jobs) * 1e6)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{len(engine.library.rules)} rules, {len(jobs)} evaluations per round, {args.rounds} rounds")
    print("| engine | median µs / object |")
    print("|---|---|")
    for name, value in med.items():
        print(f"| {name} | {value:.0f} |")
    print(f"interpreter / vm = {med['interpreter'] / med['vm']:.2f}x")


if __name__ == "__main__":
    main()
