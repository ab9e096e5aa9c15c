"""Engine error messages carry rule, position and the kind of problem, never the input's values."""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade.policies.config.settings import Config
from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import load_library
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Origin, Resource
from stockade.policies.runtimes.errors import redact_values

SECRET = "AZURE_CLIENT_SECRET=c2VjcmV0LXZhbHVl"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            't.rego:4:30: `add` expects numeric argument. Got `"' + SECRET + '"` instead',
            "t.rego:4:30: `add` expects numeric argument. Got a string instead",
        ),
        (
            "t.rego:3:53: `count` requires array/object/set/string argument. Got `5`.",
            "t.rego:3:53: `count` requires array/object/set/string argument. Got a number.",
        ),
        ('x: Got `{"a": [1]}` and `[1, 2]`', "x: Got an object and an array"),
        ("`data.stockade.x` is undefined", "`data.stockade.x` is undefined"),
    ],
)
def test_quoted_values_become_their_types(line: str, expected: str) -> None:
    assert redact_values(line) == expected


RULE = """# METADATA
# title: Breaks on strings
# custom:
#   id: TST-ERR-001
#   severity: low
#   action: deny
#   kinds: [ConfigMap]
package stockade.test.err

import rego.v1

deny contains {"msg": "x", "path": []} if {
    some k, v in input.object.data
    v + 1 > 0
}
"""


def test_a_rule_error_names_the_rule_and_position_not_the_value(tmp_path: Path) -> None:
    """On the interpreter (Gatekeeper templates and the VM's fallback), a builtin's type error is an
    error that quotes the value. (The compiled VM answers undefined, as OPA does without
    strict-builtin-errors.)"""
    (tmp_path / "err.rego").write_text(RULE)
    evaluator = Evaluator(EmbeddedEngine(load_library([tmp_path]), {}, None, vm=False), Config())
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n"},
        "data": {"k": SECRET},
    }
    with pytest.raises(RuleEvaluationError) as caught:
        evaluator.evaluate(Resource(cm, Origin()))
    message = str(caught.value)
    assert "TST-ERR-001" in message and "err.rego:" in message and "a string" in message
    assert SECRET not in message and "c2VjcmV0" not in message
