"""The slowest compiled-VM evaluation of an input up to 16 KiB: why the webhook may judge such inputs
on its event loop's thread (policies/engines/process.py, HERE_BYTES).

regorus' VM stops every evaluation at its instruction limit (25,000 instructions in the pinned
build) and raises; the webhook then sends the input to its engine process, killed on timeout. What
is bounded on the loop's thread is therefore one VM run, completed or stopped. This generates
adversarial pod specs that grow one or two lists at a time (containers, env vars with credential
names, ports, volumes and mounts, capabilities, tolerations, affinity terms, extended resources,
sysctls, args, projected tokens, labels, node selectors) until the engine input passes 16 KiB, and
reports the slowest runs, completed and stopped, with the number stopped at the limit.

    .venv/bin/python bench/vm_bound.py [--pairs 60] [--seed 1]
"""

from __future__ import annotations

import argparse
import copy
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson

from stockade.policies.config.settings import parse_config
from stockade.policies.engines.base import enabled_rules
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import agg_entry, load_library
from stockade.policies.engines.process import HERE_BYTES
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.model import Operation, Origin, Resource

IMAGE = "registry.example.com/ml/app:1"


def _c(i: int, **fields: Any) -> dict[str, Any]:
    return {"name": f"c{i}", "image": IMAGE, **fields}


def _one(**fields: Any) -> list[dict[str, Any]]:
    return [_c(0, **fields)]


GROWERS: dict[str, Callable[[int], dict[str, Any]]] = {
    "containers": lambda n: {"containers": [_c(i) for i in range(n)]},
    "env": lambda n: {"containers": _one(env=[{"name": f"E{i}", "value": "v"} for i in range(n)])},
    "credential env": lambda n: {
        "containers": _one(env=[{"name": f"E{i}_PASSWORD", "value": f"hunter2-{i}"} for i in range(n)])
    },
    "host ports": lambda n: {
        "containers": _one(ports=[{"containerPort": 1000 + i, "hostPort": 1000 + i} for i in range(n)])
    },
    "volumes and mounts": lambda n: {
        "containers": _one(volumeMounts=[{"name": f"v{i}", "mountPath": f"/m{i}"} for i in range(n)]),
        "volumes": [{"name": f"v{i}", "hostPath": {"path": f"/h{i}"}} for i in range(n)],
    },
    "capabilities": lambda n: {
        "containers": _one(
            securityContext={
                "capabilities": {"add": [f"X{i}" for i in range(n)], "drop": [f"D{i}" for i in range(n)]}
            }
        )
    },
    "tolerations": lambda n: {
        "containers": _one(),
        "tolerations": [{"key": f"k{i}", "operator": "Equal", "value": "v"} for i in range(n)],
    },
    "affinity terms": lambda n: {
        "containers": _one(),
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": f"k{i}", "operator": "In", "values": ["a", "b"]}]}
                        for i in range(n)
                    ]
                }
            }
        },
    },
    "extended resources": lambda n: {
        "containers": _one(
            resources={
                "limits": {f"ex{i}.io/gpu": "1" for i in range(n)},
                "requests": {f"ex{i}.io/gpu": "2" for i in range(n)},
            }
        )
    },
    "sysctls": lambda n: {
        "containers": _one(),
        "securityContext": {"sysctls": [{"name": f"net.x{i}", "value": "1"} for i in range(n)]},
    },
    "args": lambda n: {"containers": _one(args=[f"--x{i}=y" for i in range(n)])},
    "projected tokens": lambda n: {
        "containers": _one(),
        "volumes": [
            {"name": f"p{i}", "projected": {"sources": [{"serviceAccountToken": {"audience": f"a{i}"}}]}}
            for i in range(n)
        ],
    },
    "node selector": lambda n: {"containers": _one(), "nodeSelector": {f"k{i}": "v" for i in range(n)}},
}


class Runner:
    def __init__(self) -> None:
        config = parse_config("")
        library = load_library(())
        self.evaluator = Evaluator.default(config)
        engine = EmbeddedEngine(library, config.rule_data(), enabled_rules(config, library))
        self.vm, self.kinds = engine._vm, engine._vm_by_kind
        self.facts = InventoryFacts()
        self.completed: list[tuple[float, str, int]] = []
        self.stopped: list[tuple[float, str, int]] = []

    def text(self, spec: dict[str, Any]) -> tuple[str, str]:
        obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": spec}
        resource = Resource(obj, Origin())
        kind, inp = self.evaluator.inputs(resource, source=self.facts, operation=Operation.CREATE)[0]
        return kind, orjson.dumps(inp).decode()

    def run(self, what: str, spec: dict[str, Any]) -> int:
        """One VM run (the best of two, as the first touches cold caches); the input's size."""
        kind, text = self.text(spec)
        if len(text) > HERE_BYTES:
            return len(text)
        agg = kind if kind in self.kinds else "*"
        best, stopped = float("inf"), False
        for _ in range(2):
            self.vm.set_input_json(text)
            start = time.perf_counter()
            try:
                self.vm.execute_entry_point(agg_entry(agg))
            except RuntimeError:
                stopped = True
            best = min(best, time.perf_counter() - start)
        (self.stopped if stopped else self.completed).append((best, what, len(text)))
        return len(text)

    def grow(self, what: str, make: Callable[[int], dict[str, Any]]) -> None:
        n = 1
        while self.run(what, make(n)) <= HERE_BYTES:
            n = n * 3 // 2 + 1


def _merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(a)
    for key, value in b.items():
        if key == "containers":
            out["containers"][0] = {**out["containers"][0], **value[0]}
        elif isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = out[key] + value
        else:
            out[key] = value
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=60, help="random pairs of lists grown together (60)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    os.environ.setdefault("RUST_LIB_BACKTRACE", "0")  # as the CLI sets it: no backtrace per VM error
    runner = Runner()
    for what, make in GROWERS.items():
        runner.grow(what, make)
    rng = random.Random(args.seed)
    for _ in range(args.pairs):
        a, b = rng.sample(sorted(GROWERS), 2)
        runner.grow(f"{a} + {b}", lambda n, a=a, b=b: _merged(GROWERS[a](n), GROWERS[b](n)))
    done = sorted(runner.completed, reverse=True)
    stopped = sorted(runner.stopped, reverse=True)
    runs = len(done) + len(stopped)
    print(f"inputs up to {HERE_BYTES} bytes: {runs} VM runs, {len(stopped)} stopped at the limit")
    print(f"median completed run: {statistics.median(t for t, _, _ in done) * 1e3:.2f} ms")
    print("| run | what grew | input bytes | ms |")
    print("|---|---|---:|---:|")
    for label, rows in (("completed", done[:5]), ("stopped at the limit", stopped[:5])):
        for seconds, what, size in rows:
            print(f"| {label} | {what} | {size} | {seconds * 1e3:.2f} |")


if __name__ == "__main__":
    main()
