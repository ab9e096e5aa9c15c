"""The token rewrites that make regorus answer Gatekeeper's v0 Rego as OPA does
(policies/runtimes/rego_rewrite.py).

The oracle is OPA's own engine (opa-golib-python-bindings, which reads Rego v1 only): each case is a
v0 module as templates write it, the same rules in v1 for OPA, and inputs. regorus on the rewritten
v0 text must answer what OPA answers; regorus on the text as written is pinned where it differs, so
an upgrade that fixes regorus shows.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest
import regorus

from stockade.policies.runtimes.rego_rewrite import COMPAT_MODULE, rewrite, uses_compat

UNDEFINED = "<undefined>"
ERROR = "<error>"


def regorus_answers(text: str, inputs: list[dict[str, Any]]) -> list[Any]:
    engine = regorus.Engine()
    engine.set_rego_v0(True)
    if uses_compat(text):
        engine.add_policy("compat.rego", COMPAT_MODULE)
    try:
        engine.add_policy("t.rego", text)
    except Exception:  # regorus refuses the module
        return [ERROR] * len(inputs)
    out = []
    for inp in inputs:
        engine.set_input_json(json.dumps(inp))
        try:
            value = json.loads(engine.eval_rule_as_json("data.t.r"))
        except Exception:
            value = ERROR
        out.append(UNDEFINED if value == "<undefined>" else value)
    return out


def opa_answers(text: str, inputs: list[dict[str, Any]]) -> list[Any]:
    from opa_bindings.engine import OpaEngine, OpaUndefinedError

    engine = OpaEngine()
    engine.add_policy("t.rego", text)
    out = []
    for inp in inputs:
        try:
            value = engine.eval_document("t.r", inp)
        except OpaUndefinedError:
            value = UNDEFINED
        out.append(sorted(value) if isinstance(value, list) else value)
    return out


def _sorted(values: list[Any]) -> list[Any]:
    return [sorted(v) if isinstance(v, list) else v for v in values]


CASES: dict[str, tuple[str, str, list[dict[str, Any]], list[Any] | None]] = {
    # name: (v0 as templates write it, v1 for OPA, inputs, regorus on the v0 text as written)
    "not X == L[_]": (
        "package t\nr {\n  not input.x == input.l[_]\n}\n",
        # OPA v1 refuses the wildcard inside `not`; v0 reads it as "no element equals", said so here
        "package t\nr if {\n  not member(input.x, input.l)\n}\nmember(x, l) if {\n  x == l[_]\n}\n",
        [{"x": "a", "l": []}, {"x": "a", "l": ["b", "a"]}, {"x": "a", "l": ["b"]}],
        [UNDEFINED, True, True],
    ),
    "two lines are two expressions (K8sPSPSeccomp)": (
        'package t\nr {\n  allowed(input.p, input.a)\n}\nallowed(p, a) {\n  not startswith(p, "localhost/")\n'
        "  p == a[_]\n}\n",
        "package t\nr if {\n  allowed(input.p, input.a)\n}\n"
        'allowed(p, a) if {\n  not startswith(p, "localhost/")\n  p == a[_]\n}\n',
        [{"p": "x", "a": ["x"]}, {"p": "y", "a": ["x"]}, {"p": "localhost/y", "a": ["localhost/y"]}],
        None,
    ),
    "a line that starts with ( (K8sHorizontalPodAutoscaler)": (
        "package t\nr {\n  input.a\n  (input.b - 1) >= 1\n}\n",
        "package t\nr if {\n  input.a\n  (input.b - 1) >= 1\n}\n",
        [{"a": 1, "b": 3}, {"a": 1, "b": 1}, {"b": 3}],
        [ERROR, ERROR, ERROR],
    ),
    "incremental rule bodies (K8sNoUpdateServiceAccount)": (
        'package t\nr[m] {\n  input.a == 1\n  m := "a"\n} {\n  input.b == 1\n  m := "b"\n}\n',
        'package t\nr contains m if {\n  input.a == 1\n  m := "a"\n}\n'
        'r contains m if {\n  input.b == 1\n  m := "b"\n}\n',
        [{"a": 1, "b": 1}, {"a": 1}, {"b": 1}, {}],
        [ERROR] * 4,
    ),
    "not f(x, an undefined argument) (K8sPSPAllowedUsers)": (
        "package t\nr {\n  not f(input.x, input.params.missing)\n}\nf(a, b) {\n  a == b\n}\n",
        "package t\nr if {\n  not f(input.x, input.params.missing)\n}\nf(a, b) if {\n  a == b\n}\n",
        [{"x": 1}, {"x": 1, "params": {"missing": 1}}, {"x": 1, "params": {"missing": 2}}],
        [True, UNDEFINED, True],
    ),
    "sprintf with fewer arguments than verbs": (
        'package t\nr = s {\n  s := sprintf("%v and %v, %d%%", [input.x])\n}\n',
        'package t\nr := s if {\n  s := sprintf("%v and %v, %d%%", [input.x])\n}\n',
        [{"x": 1}, {"x": "a"}],
        [ERROR, ERROR],
    ),
    "sprintf with more arguments than verbs": (
        'package t\nr = s {\n  s := sprintf("%v and", [input.x, input.y, 2.5, "z"])\n}\n',
        'package t\nr := s if {\n  s := sprintf("%v and", [input.x, input.y, 2.5, "z"])\n}\n',
        [{"x": 1, "y": 7}, {"x": "a", "y": "b"}],
        [ERROR, ERROR],
    ),
    "re_match": (
        'package t\nr {\n  re_match("^a+$", input.s)\n}\n',
        'package t\nr if {\n  regex.match("^a+$", input.s)\n}\n',
        [{"s": "aaa"}, {"s": "ab"}],
        None,
    ),
    "any and all": (
        "package t\nr = [x, y] {\n  x := any(input.l)\n  y := all(input.l)\n}\n",
        "package t\nr := [x, y] if {\n  x := count([1 | input.l[_] == true]) > 0\n"
        "  y := count([1 | input.l[_] != true]) == 0\n}\n",
        [{"l": [False, True]}, {"l": [True, True]}, {"l": []}, {"l": [False]}],
        None,
    ),
}

needs_opa = pytest.mark.skipif(
    importlib.util.find_spec("opa_bindings") is None, reason="opa-golib-python-bindings is not installed"
)


@needs_opa
@pytest.mark.parametrize("case", sorted(CASES))
def test_regorus_on_the_rewrite_answers_as_opa(case: str) -> None:
    v0, v1, inputs, as_written = CASES[case]
    expected = opa_answers(v1, inputs)
    assert _sorted(regorus_answers(rewrite(v0), inputs)) == expected, rewrite(v0)
    if as_written is not None:  # the difference, pinned
        assert regorus_answers(v0, inputs) == as_written


def test_strings_and_comments_are_never_rewritten() -> None:
    text = (
        'package t\nr {\n  x := "not a == b[_]" # not a == b[_]\n  y := `re_match(1)`\n'
        '  z := "sprintf(\\"%v %v\\", [1])"\n}\n'
    )
    assert rewrite(text) == text


def test_the_rewrite_is_idempotent_on_library_shapes() -> None:
    text = "package t\nr[m] {\n  not input.x == input.l[_]\n  m := 1\n} {\n  m := 2\n}\n"
    once = rewrite(text)
    assert rewrite(once) == once


def test_a_builtin_type_error_is_undefined_as_in_gatekeeper() -> None:
    """Gatekeeper evaluates with OPA's strict-builtin-errors off (frameworks' rego driver sets no
    StrictBuiltinErrors): a builtin called with an argument of the wrong type makes the expression
    undefined. The OPA bindings used as the oracle above evaluate strictly, so the answers here are
    OPA's documented non-strict ones; the library's own unit test (K8sPSPProcMount with a null
    parameter, tests/policies/test_gatekeeper_library.py) is the real-input check."""
    v0 = (
        'package t\nr = [a, c, j] {\n  not startswith(input.s, "a")\n'
        '  a := object.get(input.p, "k", "d")\n  c := count(input.c)\n  j := concat(",", input.j)\n'
        '  not re_match("^a", input.s)\n  not lower(input.s) == "a"\n}\n'
    )
    ok = {"s": "b", "p": {"k": 1}, "c": [1], "j": ["x", "y"]}
    cases = [
        (ok, [1, 1, "x,y"]),
        ({**ok, "s": 1}, [1, 1, "x,y"]),  # every `not` of a type error is true
        ({**ok, "s": "a"}, UNDEFINED),
        ({**ok, "p": None}, UNDEFINED),  # object.get(null, ...)
        ({**ok, "p": {}}, ["d", 1, "x,y"]),
        ({**ok, "c": None}, UNDEFINED),  # count(null)
        ({**ok, "c": "abc"}, [1, 3, "x,y"]),
        ({**ok, "j": ["x", 1]}, UNDEFINED),  # concat of a non-string
        ({**ok, "j": []}, [1, 1, ""]),
    ]
    assert regorus_answers(rewrite(v0), [c for c, _ in cases]) == [e for _, e in cases]
    # regorus on the text as written raises instead (pinned, so an upgrade that changes it shows)
    assert regorus_answers(v0, [{**ok, "p": None}, {**ok, "c": None}]) == [ERROR, ERROR]
