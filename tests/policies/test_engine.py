"""The embedded engine: library loading, METADATA validation, per-kind evaluation, error isolation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stockade.policies.config.settings import Config
from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.engines.embedded import EmbeddedEngine
from stockade.policies.engines.library import BUNDLED_DIR, PolicyError, load_library
from stockade.policies.kinds.workloads import WORKLOAD_KINDS
from stockade.policies.model import Severity

RULE = """\
# METADATA
# title: {title}
# custom:
#   id: {id}
#   severity: {severity}
#   kinds: {kinds}
package {package}

import rego.v1

deny contains v if {{
\t{body}
\tv := {{"msg": "bad", "path": ["metadata", "name"]}}
}}
"""


def write_rule(
    tmp: Path,
    name: str,
    *,
    id: str = "STK-TST-001",
    kinds: str = '["ConfigMap"]',
    body: str = "input.object.data.bad",
    package: str | None = None,
    severity: str = "low",
) -> Path:
    path = tmp / f"{name}.rego"
    path.write_text(
        RULE.format(
            title=name,
            id=id,
            severity=severity,
            kinds=kinds,
            body=body,
            package=package or f"stockade.test.{name}",
        )
    )
    return path


def test_bundled_library_metadata_is_complete() -> None:
    lib = load_library()
    assert lib.rules, "the bundled library has rules"
    for rule in lib.rules.values():
        assert re.fullmatch(r"STK-[A-Z]+-\d{3}", rule.id), rule.id
        assert rule.title and rule.description and rule.remediation, rule.id
        assert rule.kinds and rule.frameworks, rule.id
        assert rule.file.startswith(str(BUNDLED_DIR))


def test_every_bundled_rule_has_a_test_module() -> None:
    lib = load_library()
    tested = {Path(m.path).name.removesuffix("_test.rego") for m in lib.test_modules}
    for rule in lib.rules.values():
        assert Path(rule.file).stem in tested, f"{rule.id} ({rule.file}) has no _test.rego"


def test_workload_alias_expands_to_every_workload_kind() -> None:
    rule = load_library().rules["STK-POD-003"]
    assert set(rule.kinds) == {*WORKLOAD_KINDS, "@workloads"}  # the alias stays: custom kinds use it


def test_only_rules_for_the_kind_are_evaluated(tmp_path: Path) -> None:
    write_rule(tmp_path, "cm")
    write_rule(tmp_path, "sec", id="STK-TST-002", kinds='["Secret"]', body="true")
    write_rule(tmp_path, "any", id="STK-TST-003", kinds='["*"]', body='input.object.metadata.name == "x"')
    lib = load_library([tmp_path], bundled=False)
    engine = EmbeddedEngine(lib, Config().rule_data())
    assert {r.id for r in engine.rules_for("ConfigMap")} == {"STK-TST-001", "STK-TST-003"}
    assert {r.id for r in engine.rules_for("Widget")} == {"STK-TST-003"}
    out = engine.evaluate("ConfigMap", {"object": {"metadata": {"name": "x"}, "data": {"bad": True}}})
    assert sorted(v.rule.id for v in out) == ["STK-TST-001", "STK-TST-003"]
    assert out[0].path == ("metadata", "name")
    assert engine.evaluate("Widget", {"object": {"metadata": {"name": "y"}}}) == []


def test_disabled_rules_are_not_evaluated(tmp_path: Path) -> None:
    write_rule(tmp_path, "cm", body="true")
    lib = load_library([tmp_path], bundled=False)
    engine = EmbeddedEngine(lib, {}, enabled=[])
    assert engine.evaluate("ConfigMap", {"object": {}}) == []


def test_clone_gives_the_same_verdicts(tmp_path: Path) -> None:
    write_rule(tmp_path, "cm")
    engine = EmbeddedEngine(load_library([tmp_path], bundled=False), {})
    clone = engine.clone()
    inp = {"object": {"data": {"bad": True}}}
    assert [v.msg for v in clone.evaluate("ConfigMap", inp)] == [
        v.msg for v in engine.evaluate("ConfigMap", inp)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# METADATA\n# title: x\n# custom:\n#   severity: low\n#   kinds: [Pod]\n"
            "package p\nimport rego.v1\ndeny contains 1 if false\n",
            r"x\.rego:1: METADATA custom\.id is required",
        ),
        (
            "package p\nimport rego.v1\ndeny contains 1 if false\n",
            r"x\.rego:1: package p defines deny but has no METADATA",
        ),
        (
            "# METADATA\n# custom:\n#   id: STK-X-001\n#   severity: extreme\n#   kinds: [Pod]\npackage p\n"
            "deny contains 1 if false\n",
            r"x\.rego:1: unknown severity 'extreme'",
        ),
        ("# METADATA\n# custom: [\npackage p\n", r"x\.rego: METADATA at line 1 is not valid YAML"),
        ("import rego.v1\n", r"x\.rego:1: no package declaration"),
    ],
)
def test_metadata_errors_name_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "x.rego").write_text(text)
    with pytest.raises(PolicyError, match=expected):
        load_library([tmp_path], bundled=False)


def test_rego_syntax_error_names_file_and_position(tmp_path: Path) -> None:
    write_rule(tmp_path, "broken", body="input.object[")
    with pytest.raises(PolicyError, match=r"broken\.rego:\d+:\d+: ") as info:
        EmbeddedEngine(load_library([tmp_path], bundled=False), {})
    assert "\n" not in str(info.value) and "backtrace" not in str(info.value)


def test_duplicate_rule_id_is_an_error(tmp_path: Path) -> None:
    write_rule(tmp_path, "a")
    write_rule(tmp_path, "b")
    with pytest.raises(PolicyError, match="rule id STK-TST-001 is already defined"):
        load_library([tmp_path], bundled=False)


def test_a_failing_rule_is_named_and_does_not_hide_the_cause(tmp_path: Path) -> None:
    conflict = tmp_path / "conflict.rego"
    conflict.write_text(
        "# METADATA\n# title: c\n# custom:\n#   id: STK-TST-009\n#   severity: low\n#   kinds: [ConfigMap]\n"
        "package stockade.test.conflict\nimport rego.v1\nx := 1 if input.a\nx := 2 if input.a\n"
        'deny contains {"msg": sprintf("%v", [x])} if true\n'
    )
    write_rule(tmp_path, "ok", body="true")
    engine = EmbeddedEngine(load_library([tmp_path], bundled=False), {})
    with pytest.raises(RuleEvaluationError, match=r"^STK-TST-009: .*conflict") as info:
        engine.evaluate("ConfigMap", {"a": True, "object": {}})
    assert "\n" not in str(info.value)
    # Without the conflict the same engine evaluates normally.
    assert {v.rule.id for v in engine.evaluate("ConfigMap", {"a": False, "object": {}})} == {"STK-TST-001"}


def test_severity_is_parsed() -> None:
    assert Severity.parse("HIGH") is Severity.HIGH
    with pytest.raises(ValueError, match="unknown severity"):
        Severity.parse("urgent")
