"""A custom rule (`--policy-dir`) whose evaluation errors is an error in every gate, never a pass.

regorus' compiled VM evaluates a builtin's error (``to_number("x")``, an invalid regular expression) as
undefined, so a rule written ``to_number(input.object.data.k) > 5`` used to pass an object whose value
is not a number (issue 36). The rules of policy directories run on the interpreter, which raises.
Proven on a generated set: each builtin below, called with a bad value, in every position a rule body
can hold it (a comparison, an iteration, another call's argument, an assignment, a negation, a
rule's value, a helper function, a comprehension). Every generated rule must be reported as failed,
by name: the scan exits 2, the webhook denies (failurePolicy Fail), the evaluator raises.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from stockade.admission.app import WebhookState, create_app
from stockade.cli.main import app
from stockade.policies.config.settings import load_config
from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Origin, Resource
from tests.reviews import admission_review

#: builtin call templates on a bad value ({v} is input.object.data.s, the string "not-a-number")
CALLS = {
    "to_number": "to_number({v})",
    "regex_match": 'regex.match("[", {v})',
    "regex_split": 'regex.split("(", {v})',
    "sprintf": 'sprintf("%d", [{v}, {v}, {v}])',
    "json_unmarshal": "json.unmarshal({v})",
    "base64_decode": 'base64.decode(concat("", [{v}, "!"]))',
    "units_parse_bytes": "units.parse_bytes({v})",
    "units_parse": "units.parse({v})",
    "time_parse_rfc3339": "time.parse_rfc3339_ns({v})",
    "time_parse_duration": "time.parse_duration_ns({v})",
    "net_cidr_contains": 'net.cidr_contains({v}, "10.0.0.1")',
    "semver_compare": 'semver.compare({v}, "1.0.0")',
    "numbers_range": "numbers.range(1, {v})",
    "glob_match": 'glob.match("[", [], {v})',
    "yaml_unmarshal": 'yaml.unmarshal(concat("", ["{{", {v}]))',
    "trim_type": "trim({v}, 5)",
    "array_concat_type": "array.concat({v}, [1])",
}
#: where a call sits in a rule body ({c} is the call)
POSITIONS = {
    "comparison": "{c} == 5",
    "ordering": "{c} > 5",
    "iteration": "some x in [{c}]\n\tx",
    "argument": "count([{c}]) > 0",
    "assignment": "x := {c}\n\tx",
    "negation": "not {c}",
    "helper": "helper_{n}",
    "comprehension": "count([y | y := {c}]) == 1",
}
BAD = "input.object.data.s"


def _rule(index: int, call: str, position: str) -> tuple[str, str]:
    rid = f"GEN-{index:03d}"
    expr = CALLS[call].format(v=BAD)
    body = POSITIONS[position].format(c=expr, n=index)
    helper = f"\nhelper_{index} if {{\n\t{expr}\n}}\n" if position == "helper" else ""
    text = (
        f"# METADATA\n# title: {call} in {position}\n# custom:\n#   id: {rid}\n#   severity: low\n"
        f"#   kinds: [ConfigMap]\npackage generated.r{index}\n\nimport rego.v1\n{helper}\n"
        f'deny contains {{"msg": "never"}} if {{\n\t{body}\n}}\n'
    )
    return rid, text


CASES = list(itertools.product(sorted(CALLS), sorted(POSITIONS)))
OBJECT = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c", "namespace": "ml"},
    "data": {"s": "not-a-number"},
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("generated-rules")
    ids = []
    for index, (call, position) in enumerate(CASES):
        rid, text = _rule(index, call, position)
        (root / f"r{index:03d}.rego").write_text(text)
        ids.append(rid)
    return root, ids


def test_every_generated_rule_errors_by_name(generated: tuple[Path, list[str]]) -> None:
    root, ids = generated
    evaluator = Evaluator.default(load_config(None), [root])
    with pytest.raises(RuleEvaluationError) as raised:
        evaluator.evaluate(Resource(OBJECT, Origin(file="cm.yaml")))
    message = str(raised.value)
    missing = [
        f"{rid} ({c} in {p})" for rid, (c, p) in zip(ids, CASES, strict=True) if f"{rid}:" not in message
    ]
    assert not missing, f"{len(missing)} of {len(ids)} rules passed on an error: {missing}"


def test_a_good_value_still_decides(generated: tuple[Path, list[str]], tmp_path: Path) -> None:
    """The same custom rule decides normally where its builtins succeed (not every custom rule
    errors: the interpreter gives the VM's answers)."""
    rule = tmp_path / "k.rego"
    rule.write_text(
        "# METADATA\n# title: k\n# custom:\n#   id: CUSTOM-001\n#   severity: high\n#   kinds: [ConfigMap]\n"
        'package custom.k\n\nimport rego.v1\n\ndeny contains {"msg": "k too big"} if {\n'
        "\tto_number(input.object.data.k) > 5\n}\n"
    )
    evaluator = Evaluator.default(load_config(None), [tmp_path])
    big = {**OBJECT, "data": {"k": "7"}}
    small = {**OBJECT, "data": {"k": "3"}}
    assert [f.rule.id for f in evaluator.evaluate(Resource(big, Origin(file="a.yaml")))] == ["CUSTOM-001"]
    assert [f.rule.id for f in evaluator.evaluate(Resource(small, Origin(file="b.yaml")))] == []


def _custom(tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "k.rego").write_text(
        "# METADATA\n# title: k\n# custom:\n#   id: CUSTOM-001\n#   severity: high\n#   kinds: [ConfigMap]\n"
        'package custom.k\n\nimport rego.v1\n\ndeny contains {"msg": "k too big"} if {\n'
        "\tto_number(input.object.data.k) > 5\n}\n"
    )
    return rules


def test_scan_exits_2_naming_the_rule(tmp_path: Path) -> None:
    rules = _custom(tmp_path)
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ml}\ndata: {k: abc}\n"
    )
    result = CliRunner().invoke(app, ["scan", str(manifest), "--policy-dir", str(rules), "--no-config"])
    assert result.exit_code == 2, result.output
    assert "CUSTOM-001" in result.output and "could not parse string as number" in result.output


@pytest.mark.parametrize("fail_open", [False, True])
def test_the_webhook_denies_under_fail_and_says_why(tmp_path: Path, fail_open: bool) -> None:
    """The webhook's answer when a rule errors follows its failure mode: denied (the default, as the
    ValidatingWebhookConfiguration's failurePolicy Fail), or allowed with a warning when configured
    to fail open."""
    rules = _custom(tmp_path)
    config = tmp_path / "stockade.yaml"
    config.write_text(f"admission: {{failure_mode: {'open' if fail_open else 'closed'}}}\n")
    state = WebhookState(config=load_config(config), config_path=config, policy_dirs=(rules,))
    obj = {**OBJECT, "data": {"k": "abc"}}
    with TestClient(create_app(state)) as client:
        resp = client.post("/validate", json=admission_review(obj, namespace="ml")).json()["response"]
    text = str(resp.get("status", {}).get("message", "")) + " ".join(resp.get("warnings") or [])
    assert "CUSTOM-001" in text
    assert resp["allowed"] is fail_open


def test_the_audit_reports_the_object_as_not_evaluated(tmp_path: Path) -> None:
    """The audit (the real kubernetes client against the fleet's fake API server) reports the object
    whose rule errored as an error naming the rule, which fails the audit (exit 2), never as clean."""
    from tests.fleet import audit_objects

    evaluator = Evaluator.default(load_config(None), [_custom(tmp_path)])
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    result = audit_objects([namespace, {**OBJECT, "data": {"k": "abc"}}], evaluator)
    assert [f for f in result.findings if f.rule.id == "CUSTOM-001"] == []
    (error,) = [e for e in result.errors if "CUSTOM-001" in e.message]
    assert "ConfigMap" in error.file and "could not parse string as number" in error.message
