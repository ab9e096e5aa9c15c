"""The library under real OPA (its Go engine, through opa-golib-python-bindings) and under regorus.

Two checks, on the same modules (the bundle `stockade policy bundle` writes: the library, the
generated aggregating modules and the configuration as `data.stockade.config`):

1. every Rego unit test of the library (`_test.rego`, the rules' own inputs and expectations) passes
   under OPA as it does under regorus, so both engines give each rule's tests the same results;
2. the aggregated query the gates run (`data.stockade_agg.<kind>.results`) returns the same
   violations from OPA as from regorus' compiled VM for every example manifest, a set of generated
   pods (test_vm_differential's) and, when present, every object of the Kyverno pod-security corpus.

opa-golib-python-bindings is installed by `make install` (test extras only; it declares Python 3.12
but runs on 3.11). Where it is missing, these tests skip and say so.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from stockade.policies.config.settings import Config, load_config
from stockade.policies.engines.bundle import bundle_files
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import violations_of
from stockade.policies.engines.testing import run_tests
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.model import Resource
from stockade.scanner.sources.files import FileSource

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("opa_bindings") is None,
    reason="opa-golib-python-bindings is not installed (make install adds it)",
)

ROOT = Path(__file__).resolve().parents[2]


def _opa(evaluator: Evaluator, *, tests: bool = False) -> Any:
    from opa_bindings.engine import OpaEngine

    library = evaluator.engine.library
    engine = OpaEngine()
    for path, content in bundle_files(library, evaluator.config.rule_data()).items():
        if path.endswith(".rego"):
            engine.add_policy(path, content.decode())
    if tests:
        for module in library.test_modules:
            engine.add_policy(module.path, module.text)
    engine.add_data({"stockade": {"config": evaluator.config.rule_data()}})
    return engine


def test_every_rego_unit_test_passes_under_opa_as_under_regorus() -> None:
    from opa_bindings.engine import OpaUndefinedError

    evaluator = Evaluator.default(Config())
    library = evaluator.engine.library
    regorus_report = run_tests(library)
    regorus_passed = {f"{c.package}.{c.name}" for c in regorus_report.cases if c.outcome == "pass"}
    opa = _opa(evaluator, tests=True)
    opa_passed = set()
    total = 0
    for module in library.test_modules:
        # one query per test package (each distinct query is prepared on its own): a failing test
        # is undefined, so it is absent from the package's document
        try:
            document = opa.eval_document(module.package)
        except OpaUndefinedError:
            document = {}
        for name in module.test_names():
            total += 1
            if isinstance(document, dict) and document.get(name) is True:
                opa_passed.add(f"{module.package}.{name}")
    print(f"\nRego unit tests: {len(opa_passed)}/{total} pass under OPA, {len(regorus_passed)} under regorus")
    assert total >= 500
    assert opa_passed == regorus_passed


def _inputs(evaluator: Evaluator) -> list[tuple[str, dict[str, Any]]]:
    from tests.policies.test_vm_differential import corpus_objects, generated

    resources = [
        r
        for r in FileSource([str(ROOT / "examples" / "manifests")], exclude=["broken"])
        if isinstance(r, Resource)
    ]
    inventory = inventory_of(r.obj for r in resources)
    out = [(r.kind, evaluator.build_input(r, facts=facts_for(r.obj, inventory))) for r in resources]
    # generated pods at both levels; the corpus's objects at one level each, alternating (the
    # controls are per object: both levels for each would double the run time, not the coverage)
    levels = itertools.cycle(["baseline", "restricted"])
    cases = [(o, lv) for o in generated() for lv in ("baseline", "restricted")]
    cases += [(o, next(levels)) for o in corpus_objects()]
    for obj, level in cases:
        ns = namespace_info({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": level}}}, "n")
        resource = Resource(obj)
        out.append((resource.kind, evaluator.build_input(resource, namespace=ns)))
    return out


def test_aggregated_results_are_the_same_under_opa_and_the_regorus_vm() -> None:
    from opa_bindings.engine import OpaUndefinedError

    from stockade.policies.engines.library import agg_entry
    from tests.policies.test_vm_differential import canonical

    evaluator = Evaluator.default(load_config(ROOT / "examples" / "stockade.yaml"))
    engine = evaluator.engine
    assert isinstance(engine, EmbeddedEngine) and engine.uses_vm
    opa = _opa(evaluator)
    compared = fallback = 0
    for kind, inp in _inputs(evaluator):
        rules = engine.rules_for(kind)
        if not rules:
            continue
        agg = kind if kind in engine.kinds() else "*"
        text = orjson.dumps(inp).decode()
        # the engine's answer: the VM's, or the interpreter's where the VM gives none (counted)
        vm = engine.evaluate_compiled(agg, text)
        fallback += vm is None
        ours = vm if vm is not None else engine.evaluate(kind, inp)
        try:
            raw = opa.eval_document(agg_entry(agg).removeprefix("data."), json.loads(text))
        except OpaUndefinedError:
            raw = {}
        assert canonical(violations_of(engine.library.rules, raw or {})) == canonical(ours), (
            kind,
            (inp.get("object") or {}).get("metadata"),
        )
        compared += 1
    print(f"\nOPA vs regorus: {compared} aggregated evaluations identical ({fallback} by the interpreter)")
    assert compared >= 100
