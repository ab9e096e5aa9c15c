"""`expand_data_imports`: the VM's copy of each module has its `data` import aliases written in full.

The rewrite must never change what a module means: each case below is checked on the text, and the
whole library is checked by evaluating with the rewritten VM against the untouched interpreter
(test_vm_differential.py and the example scans); here, one module is also evaluated both ways.
"""

from __future__ import annotations

import json

import regorus

from stockade.policies.engines.library import load_library
from stockade.policies.runtimes.rego_imports import expand_data_imports

LIB = "package stockade.lib.pods\n\nimport rego.v1\n\ncontainers := [c | some c in input.cs]\n"


def test_aliases_become_full_references_and_import_lines_empty_lines() -> None:
    text = (
        "package p\n\nimport data.stockade.lib.pods\nimport rego.v1\n\n"
        "deny contains c.name if {\n\tsome c in pods.containers\n\tpods.limits[c.name] > 1\n}\n"
    )
    got = expand_data_imports(text)
    assert got == (
        "package p\n\n\nimport rego.v1\n\n"
        "deny contains c.name if {\n\tsome c in data.stockade.lib.pods.containers\n"
        "\tdata.stockade.lib.pods.limits[c.name] > 1\n}\n"
    )
    assert got.count("\n") == text.count("\n")  # line numbers are kept


def test_as_aliases_and_several_imports() -> None:
    text = "package p\nimport data.a.b as x\nimport data.c.d\nr := x.y + d.z\n"
    assert expand_data_imports(text) == "package p\n\n\nr := data.a.b.y + data.c.d.z\n"


def test_bare_or_shadowed_aliases_are_left_alone() -> None:
    for body in (
        "r := pods\n",  # used as a value
        "r if { some pods in input.x; pods.y }\n",  # shadowed by a local variable
        "f(pods) := pods.x\n",  # shadowed by a function argument
        "r if { pods := input.x; pods.y == 1 }\n",  # assigned
    ):
        text = f"package p\nimport data.lib.pods\n{body}"
        assert expand_data_imports(text) == text, body


def test_strings_comments_fields_and_other_imports_are_untouched() -> None:
    text = (
        "package p\nimport rego.v1\nimport future.keywords.in\nimport input.spec\nimport data.lib.pods\n"
        '# pods.x in a comment\nr := {"m": "pods.x", "raw": `pods.y`, "v": pods.v, "f": input.pods.w}\n'
    )
    assert expand_data_imports(text) == (
        "package p\nimport rego.v1\nimport future.keywords.in\nimport input.spec\n\n"
        '# pods.x in a comment\nr := {"m": "pods.x", "raw": `pods.y`, "v": data.lib.pods.v, '
        '"f": input.pods.w}\n'
    )


def test_module_without_data_imports_is_returned_as_is() -> None:
    text = "package p\nimport rego.v1\nr := 1\n"
    assert expand_data_imports(text) is text


def test_rewritten_module_evaluates_the_same() -> None:
    rule = (
        "package p\n\nimport data.stockade.lib.pods\nimport rego.v1\n\n"
        'deny contains c if {\n\tsome c in pods.containers\n\tc != "ok"\n}\n'
    )
    results = []
    for text in (rule, expand_data_imports(rule)):
        engine = regorus.Engine()
        engine.add_policy("lib.rego", LIB)
        engine.add_policy("p.rego", text)
        engine.set_input_json(json.dumps({"cs": ["ok", "bad", "worse"]}))
        results.append(json.loads(engine.eval_rule_as_json("data.p.deny")))
    assert results[0] == results[1] == ["bad", "worse"]


def test_every_bundled_module_still_compiles_after_the_rewrite() -> None:
    """Every module's rewritten text parses (the full library compiles in the engine tests)."""
    for module in load_library().policy_modules:
        engine = regorus.Engine()
        engine.add_policy(module.path, expand_data_imports(module.text))
