"""`pods.zero_quantity` (policies/rego/lib/pods.rego), the test that decides whether a container's GPU
request counts, against Kubernetes' own reading of a quantity: zero when the quantity parses and its
value is 0 ("0", "0Gi", "-0.0", "0e5"), not zero for any other value, and not zero for text that is
not a quantity (it parses to nothing, so the request is kept and judged).

The rule decides most quantities from their first significant digit, before the regular expression
and `units.parse`; each case below is asked of regorus' interpreter and of its compiled VM, and held
to the answer of the full parse (`quantity(q) == 0`) as well as to the Python oracle here.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import orjson
import pytest
import regorus

from stockade.policies.engines.library import load_library
from stockade.policies.runtimes.rego_imports import expand_data_imports

# k8s.io/apimachinery resource.Quantity's grammar (the library's `quantity` pattern)
_QUANTITY = re.compile(
    r"[+-]?(?P<m>[0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)

CASES: list[Any] = [
    # zero ("0." too for Kubernetes, which regorus' units.parse does not read: left out, as the
    # library reads it the same way with or without the shortcut)
    "0",
    "00",
    ".0",
    "0.0",
    "+0",
    "-0",
    "-0.0",
    "0m",
    "0Gi",
    "0Ki",
    "0e5",
    "0E-3",
    "000.000Mi",
    0,
    0.0,
    None,
    "",
    # not zero
    "1",
    "8",
    "16Gi",
    "0.5",
    ".5",
    "+1",
    "-1",
    "1e3",
    "1e-3",
    "0001",
    "0.0001",
    "500m",
    "1Ki",
    1,
    2.5,
    # not quantities: no value, so not zero
    "bad",
    "1x",
    "--1",
    "0x1",
    "0..1",
    "0.0.1",
    "Gi",
    "+",
    ".",
    "e5",
    "0 ",
    " 0",
    "\uff11",  # a full-width digit one
    "0Gi ",
    # not strings or numbers
    True,
    [],
    {},
]


def oracle_zero(q: Any) -> bool:
    if q is None or q == "":
        return True
    if isinstance(q, bool):
        return False
    if isinstance(q, int | float):
        return q == 0
    if not isinstance(q, str):
        return False
    match = _QUANTITY.fullmatch(q)
    return match is not None and Decimal(match["m"]) == 0


FAST = "data.stockade.lib.pods.zero_quantity(q)"
FULL = "data.stockade.lib.pods.quantity(q) == 0"


def _modules() -> list[tuple[str, str]]:
    return [(m.path, m.text) for m in load_library().policy_modules]


def _interpreter(cases: list[Any], expr: str) -> list[bool]:
    engine: Any = regorus.Engine()
    for path, text in _modules():
        engine.add_policy(path, text)
    engine.add_data_json(json.dumps({"stockade": {"config": {}}}))
    out = []
    for q in cases:
        engine.set_input_json(json.dumps({"q": q}))
        found = engine.eval_query(f"x := count({{1 | q := input.q; {expr}}})")["result"][0]["bindings"]["x"]
        out.append(found == 1)
    return out


def _vm(cases: list[Any], expr: str) -> list[bool]:
    probe = f"package probe\n\nimport rego.v1\n\nzero if {{\n\tq := input.q\n\t{expr}\n}}\n"
    modules = [(p, expand_data_imports(t)) for p, t in _modules()] + [("probe.rego", probe)]
    program = regorus.Program.compile_from_modules("{}", modules, ["data.probe.zero"])
    vm = regorus.Rvm()
    vm.load_program(program)
    vm.set_data_json(json.dumps({"stockade": {"config": {}}}))
    out = []
    for q in cases:
        vm.set_input_json(json.dumps({"q": q}))
        out.append(orjson.loads(vm.execute_entry_point("data.probe.zero")) is True)
    return out


@pytest.mark.parametrize("evaluate", [_interpreter, _vm], ids=["interpreter", "vm"])
def test_zero_quantity_as_kubernetes_reads_it(evaluate: Any) -> None:
    expected = [oracle_zero(q) for q in CASES]
    assert evaluate(CASES, FAST) == expected
    # and the shortcut answers as the full parse does, on every case that is not null or ""
    parsed = [q for q in CASES if q not in (None, "")]
    assert evaluate(parsed, FAST) == evaluate(parsed, FULL)
