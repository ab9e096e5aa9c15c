"""Per-template evaluation cost of the real gatekeeper-library, beside the built-in library's.

For each gator suite of `../shared/corpora/gatekeeper-library/library` (each template with its
first test's constraint), every case object is evaluated `--repeat` times through stockade's
Gatekeeper engine (regorus' interpreter, the rewritten text: policies/runtimes/rego_rewrite.py); the median
µs per object is reported per template. The same objects then go through the built-in library
(the compiled VM, 82+ rules, one aggregating query per object) for comparison.

    .venv/bin/python bench/gatekeeper.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.frameworks.common import read_documents
from stockade.policies.frameworks.verify import _engine
from stockade.policies.model import Resource

LIBRARY = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "gatekeeper-library" / "library"


def objects_of(suite: Path) -> tuple[Any, list[dict[str, Any]]]:
    docs = read_documents(suite)
    test = next(t for d in docs for t in d.get("tests") or [])
    engine, _ = _engine(suite.parent, test)
    objs = []
    for t in (t for d in docs for t in d.get("tests") or []):
        for case in t.get("cases") or []:
            objs.extend(read_documents(suite.parent / str(case.get("object") or "")))
    return engine, [o for o in objs if isinstance(o, dict)]


def median_us(fn: Any, items: list[Any], repeat: int) -> float:
    per_item = []
    for item in items:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn(item)
            times.append(time.perf_counter() - t)
        per_item.append(statistics.median(times))
    return statistics.median(per_item) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    if not LIBRARY.is_dir():
        print(f"no gatekeeper-library at {LIBRARY}", file=sys.stderr)
        return 2
    rows = []
    all_objects: list[dict[str, Any]] = []
    for suite in sorted(LIBRARY.rglob("suite.yaml")):
        engine, objs = objects_of(suite)
        if not objs:
            continue
        all_objects.extend(objs)

        def gk(obj: dict[str, Any], engine: Any = engine) -> None:
            md = obj.get("metadata") or {}
            engine.evaluate(
                {"object": obj, "operation": "CREATE", "namespace": namespace_info(None, md.get("namespace"))}
            )

        rows.append((str(suite.parent.relative_to(LIBRARY)), len(objs), median_us(gk, objs, args.repeat)))
    builtin = Evaluator.default()
    stk = median_us(lambda o: builtin.evaluate(Resource(o)), all_objects, args.repeat)
    rows.sort(key=lambda r: -r[2])
    command = " ".join(sys.argv)
    print(f"command: {command}; {len(rows)} templates, {len(all_objects)} objects, {args.repeat} runs each\n")
    print("| template | objects | median µs / object |")
    print("|---|---:|---:|")
    for name, n, us in rows:
        print(f"| {name} | {n} | {us:,.0f} |")
    costs = [us for _, _, us in rows]
    print(
        f"\nGatekeeper templates: median {statistics.median(costs):,.0f} µs, "
        f"max {max(costs):,.0f} µs per object for one template; the built-in library (every rule, "
        f"one query) on the same {len(all_objects)} objects: median {stk:,.0f} µs per object."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
