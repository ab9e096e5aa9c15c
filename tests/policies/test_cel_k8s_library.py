"""Kubernetes' own CEL library tests, ported: the cases of semver_test.go, ip_test.go, cidr_test.go,
quantity_test.go, image_test.go (k8s.io/apiserver/pkg/cel/library) as data in
data/k8s_cel_library_cases.yaml, format_test.go's in data/k8s_cel_format_cases.yaml, and cel-go's
ext/comprehensions_test.go (two-variable comprehensions) in data/celgo_comprehension_cases.yaml and
ext/lists_test.go (the lists extension) in data/celgo_lists_cases.yaml, run
on stockade's environment (policies/runtimes/cel.py). An expected value must be that value; an expected
runtime error must be an error (never a value); an expected compile error must not compile. Where
stockade does not provide what a case uses, the case is in NOT_PROVIDED with the reason and must not
compile (so a policy using it is reported as not evaluated)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from stockade.policies.runtimes.cel import CelError, environment

CASES: list[dict[str, Any]] = [
    case
    for data in (
        "k8s_cel_library_cases.yaml",
        "k8s_cel_format_cases.yaml",
        "celgo_comprehension_cases.yaml",
        "celgo_lists_cases.yaml",
    )
    for case in yaml.safe_load((Path(__file__).parent / "data" / data).read_text(encoding="utf-8"))
]

#: (library, name) -> why stockade does not provide what the case uses: it must not compile (so a
#: policy using it is reported as not evaluated, never passed)
NOT_PROVIDED: dict[tuple[str, str], str] = {
    (
        "quantity",
        name,
    ): "mul/div/divInt are newer than the quantity library stockade follows (quantity.go without them)"
    for name in ("multiply", "divide_float_result", "divide_scaled", "integer_division")
}
#: (library, name) -> why stockade refuses at evaluation what cel-go refuses when compiling: still
#: never a value
AT_RUNTIME: dict[tuple[str, str], str] = {
    ("comprehensions", "TestTwoVarComprehensionsStaticErrors/21"): (
        "transformMapEntry's transform must give a map: the rewrite's helper takes a list of any values, "
        "so a list transform is an evaluation error here, a type error in cel-go"
    ),
}


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and math.isclose(float(got), float(want), rel_tol=1e-9)
    return bool(got == want and type(got) is type(want))


@pytest.mark.parametrize("case", CASES, ids=[f"{c['library']}-{c['name']}" for c in CASES])
def test_kubernetes_library_case(case: dict[str, Any]) -> None:
    env = environment()
    expr = case["expr"]
    outcome: Any
    try:
        outcome = env.evaluate(expr, env.activation({}))
    except CelError as exc:
        outcome = exc
    if (case["library"], case["name"]) in AT_RUNTIME:
        assert isinstance(outcome, CelError) or (outcome.error is not None and outcome.value is None)
        return
    if "compile_error" in case or (case["library"], case["name"]) in NOT_PROVIDED:
        assert isinstance(outcome, CelError), f"compiled: {expr}"
    elif "runtime_error" in case:
        assert not isinstance(outcome, CelError), f"does not compile: {outcome}"
        assert outcome.error is not None and outcome.value is None, f"{expr} gave {outcome.value!r}"
    else:
        assert not isinstance(outcome, CelError), f"does not compile: {outcome}"
        assert outcome.error is None, f"{expr}: {outcome.error}"
        assert _same(outcome.value, case["value"]), f"{expr}: {outcome.value!r} != {case['value']!r}"
