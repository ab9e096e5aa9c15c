"""Evaluation cost per object of the same control in CEL (a ValidatingAdmissionPolicy,
policies/frameworks/vap.py)
and in Rego (the library's STK-POD-003, privileged containers, on the compiled VM), side by side in one
run: each object is evaluated `--repeat` times by each engine, alternating, and the medians are reported
with their ratio.

The control: no container, init container or ephemeral container runs privileged. Objects: Pods with
1, 4 and 16 containers, half of them privileged.

    .venv/bin/python bench/cel_vs_rego.py [--repeat 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from stockade.policies.config.settings import parse_config
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import load_library
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Operation, Resource

VAP = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-privileged}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}
  validations:
  - expression: >-
      [object.spec.containers, object.spec.?initContainers.orValue([]),
       object.spec.?ephemeralContainers.orValue([])].all(cs, cs.all(c,
       !has(c.securityContext) || !has(c.securityContext.privileged) || !c.securityContext.privileged))
    message: privileged containers are not allowed
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-privileged}
spec: {policyName: no-privileged, validationActions: [Deny]}
"""


def pod(n: int) -> dict[str, Any]:
    containers = [
        {"name": f"c{i}", "image": "x", "securityContext": {"privileged": i % 2 == 0}} for i in range(n)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{n}", "namespace": "ml"},
        "spec": {"containers": containers},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "vap.yaml").write_text(VAP)
        library = load_library([Path(tmp)])
    config = parse_config("")
    evaluator = Evaluator.default(config, library=library)
    data = evaluator.engine._data  # the configuration the library's rules read
    rego = EmbeddedEngine(library, data, {"STK-POD-003"})
    cel = EmbeddedEngine(library, data, {"VAP-no-privileged-0"})
    print(f"{'containers':>10} {'Rego µs':>9} {'CEL µs':>9} {'CEL/Rego':>9}")
    for n in (1, 4, 16):
        obj = pod(n)
        inp = evaluator.build_input(Resource(obj), operation=Operation.CREATE)
        assert rego.evaluate("Pod", inp, constraints=False), "the Rego rule must fire"
        assert cel.evaluate("Pod", inp, library=False), "the VAP must fire"
        times: dict[str, list[float]] = {"rego": [], "cel": []}
        for i in range(args.repeat):
            order = (("rego", rego, {"constraints": False}), ("cel", cel, {"library": False}))
            for name, engine, kw in order if i % 2 else order[::-1]:
                t = time.perf_counter()
                engine.evaluate("Pod", inp, **kw)
                times[name].append(time.perf_counter() - t)
        r, c = (statistics.median(times[k]) * 1e6 for k in ("rego", "cel"))
        print(f"{n:>10} {r:>9.1f} {c:>9.1f} {c / r:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
