"""Report formats: each one parses as its format and carries the findings, errors, waivers and gaps."""

from __future__ import annotations

import datetime as dt
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stockade.policies.config.settings import ExceptionSpec
from stockade.policies.config.waivers import ExceptionStatus
from stockade.policies.model import (
    Action,
    ExceptionRef,
    Finding,
    InputError,
    ResourceRef,
    Rule,
    Severity,
)
from stockade.scanner.reports import FORMATS, get_report
from stockade.scanner.reports.schema import ReportDocument, json_schema
from stockade.scanner.result import CoverageGap, Note, Result

PRIVILEGED = Rule(
    id="STK-POD-003",
    title="Privileged containers",
    description="Privileged pods disable most security mechanisms.",
    area="pod",
    severity=Severity.CRITICAL,
    kinds=("Pod", "Deployment"),
    frameworks=("pss-baseline", "CIS-5.2.2"),
    remediation="Remove securityContext.privileged or set it to false.",
    package="data.stockade.pod.privileged",
    file="policies/rego/pod/privileged.rego",
)
HOST_PATH = Rule(
    id="STK-POD-005",
    title="hostPath volumes",
    description="hostPath volumes expose the node's filesystem.",
    area="pod",
    severity=Severity.HIGH,
    kinds=("Pod",),
    frameworks=("pss-baseline",),
    remediation="Use a PersistentVolumeClaim.",
    package="data.stockade.pod.host_path",
    file="policies/rego/pod/host_path.rego",
    action=Action.WARN,
)
EGRESS = Rule(
    id="STK-NET-001",
    title="Egress allowlist",
    description="Pods may only reach allowlisted destinations.",
    area="egress",
    severity=Severity.LOW,
    kinds=("Pod",),
    frameworks=(),
    remediation="Add a NetworkPolicy.",
    package="data.stockade.egress.allowlist",
    file="policies/rego/egress/allowlist.rego",
    action=Action.AUDIT,
)
WEB = ResourceRef("apps/v1", "Deployment", "default", "web")
TRAINER = ResourceRef("v1", "Pod", "gpu", "trainer-ü")
LIVE = ResourceRef("v1", "Pod", "ml", "notebook", cluster="aks-west")
PRIV_PATH = ("spec", "template", "spec", "containers", 0, "securityContext", "privileged")
HOSTILE = 'container "app|<script>alert(1)</script>" is privileged'
WAIVER = ExceptionRef("gpu-priv", "ml-team", "needs | NVIDIA <driver> access", "2030-01-01")


def make_result() -> Result:
    findings = [
        Finding(
            PRIVILEGED, Action.DENY, HOSTILE, WEB, "manifests/web.yaml", 14, PRIV_PATH, {"container": "app"}
        ),
        Finding(HOST_PATH, Action.WARN, "hostPath /var/run ✓ ünïcode", WEB, "manifests/web.yaml", None, ()),
        Finding(PRIVILEGED, Action.AUDIT, "live pod is privileged", LIVE, None, None, ("spec",)),
        Finding(
            PRIVILEGED,
            Action.DENY,
            "container trainer is privileged",
            TRAINER,
            "manifests/gpu.yaml",
            9,
            ("spec", "containers", 0, "securityContext", "privileged"),
            exception=WAIVER,
        ),
    ]
    return Result(
        tool_version="0.1.0",
        findings=findings,
        errors=[
            InputError("broken.yaml", "mapping values are not allowed here", 7),
            InputError("<stdin>", "not YAML\x01 at all"),
        ],
        rules={r.id: r for r in (PRIVILEGED, HOST_PATH, EGRESS)},
        exceptions=[
            ExceptionStatus(_spec("gpu-priv", dt.date(2030, 1, 1)), "active", 1),
            ExceptionStatus(_spec("legacy", dt.date(2020, 1, 1)), "expired", 0),
            ExceptionStatus(_spec("forgotten", dt.date(2031, 1, 1)), "unused", 0),
        ],
        gaps=[CoverageGap("aks-east", "cluster unreachable")],
        resources=12,
        files=3,
    )


def _spec(name: str, expires: dt.date) -> ExceptionSpec:
    return ExceptionSpec(
        name=name, rules=("STK-POD-003",), owner="ml-team", reason="GPU drivers", expires=expires
    )


def render(fmt: str, result: Result | None = None, *, color: bool = False) -> str:
    return get_report(fmt).render(result if result is not None else make_result(), color=color)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_renders_full_and_empty_results(fmt: str) -> None:
    report = get_report(fmt)
    assert report.name == fmt
    assert report.suffix.startswith(".")
    assert render(fmt).strip()
    assert render(fmt, Result(tool_version="0.1.0")).strip()


# --- json ---------------------------------------------------------------------------------------------


def test_json_matches_the_documented_schema() -> None:
    result = make_result()
    doc = json.loads(render("json", result))
    ReportDocument.model_validate(doc)
    assert set(doc) == {
        "schema_version",
        "tool",
        "findings",
        "errors",
        "skipped_files",
        "exceptions",
        "gaps",
        "notes",
        "clusters",
        "summary",
    }
    assert doc["schema_version"] == 1
    assert doc["tool"] == {"name": "stockade", "version": "0.1.0"}
    assert doc["summary"] == result.summary()
    first = doc["findings"][0]
    assert set(first) == {"rule", "action", "message", "resource", "location", "details", "exception", "pods"}
    assert set(first["rule"]) == {"id", "title", "area", "severity", "frameworks"}
    assert set(first["resource"]) == {"apiVersion", "kind", "namespace", "name", "cluster"}
    assert set(first["location"]) == {"file", "line", "path", "template"}
    assert doc["errors"][0] == {
        "file": "broken.yaml",
        "line": 7,
        "message": "mapping values are not allowed here",
    }
    assert doc["exceptions"][1] == {
        "name": "legacy",
        "owner": "ml-team",
        "reason": "GPU drivers",
        "expires": "2020-01-01",
        "status": "expired",
        "matched": 0,
    }
    assert doc["gaps"] == [{"scope": "aks-east", "message": "cluster unreachable"}]
    _conforms(doc, json_schema())


def test_json_findings_are_sorted_located_and_include_waived() -> None:
    result = make_result()
    text = render("json", result)
    doc = json.loads(text)
    expected = result.sorted_findings()
    assert [(f["rule"]["id"], f["message"]) for f in doc["findings"]] == [
        (f.rule.id, f.message) for f in expected
    ]
    by_message = {f["message"]: f for f in doc["findings"]}
    denied = by_message[HOSTILE]
    assert denied["location"] == {
        "file": "manifests/web.yaml",
        "line": 14,
        "path": "spec.template.spec.containers[0].securityContext.privileged",
        "template": None,
    }
    assert denied["rule"] == {
        "id": "STK-POD-003",
        "title": "Privileged containers",
        "area": "pod",
        "severity": "critical",
        "frameworks": ["pss-baseline", "CIS-5.2.2"],
    }
    assert denied["action"] == "deny"
    assert denied["details"] == {"container": "app"}
    assert denied["exception"] is None
    live = by_message["live pod is privileged"]
    assert live["location"] == {"file": None, "line": None, "path": "spec", "template": None}
    assert live["resource"]["cluster"] == "aks-west"
    assert by_message["hostPath /var/run ✓ ünïcode"]["location"]["path"] is None
    waived = by_message["container trainer is privileged"]
    assert waived["exception"] == {
        "name": "gpu-priv",
        "owner": "ml-team",
        "reason": "needs | NVIDIA <driver> access",
        "expires": "2030-01-01",
    }
    assert "trainer-ü" in text  # UTF-8, not \u escapes
    assert text.endswith("}\n") and '\n  "tool": {' in text  # indent 2


def test_json_schema_is_publishable() -> None:
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["required"]) == set(schema["properties"])
    assert schema["additionalProperties"] is False
    finding = schema["$defs"]["FindingInfo"]
    assert set(finding["required"]) == {
        "rule",
        "action",
        "message",
        "resource",
        "location",
        "details",
        "exception",
        "pods",
    }
    assert schema["$defs"]["ResourceInfo"]["properties"]["apiVersion"]["description"]
    json.dumps(schema)


def test_json_schema_is_documented_field_by_field() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "json-report.md").read_text(encoding="utf-8")
    schema = json_schema()
    for name, definition in [("report", schema), *schema["$defs"].items()]:
        for field in definition.get("properties", {}):
            assert f"`{field}`" in doc, f"{name}.{field} is not documented"


def _conforms(instance: Any, schema: dict[str, Any], node: dict[str, Any] | None = None) -> None:
    """A structural validator for the subset of JSON Schema pydantic emits (no jsonschema dependency)."""
    node = schema if node is None else node
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in node:
        errors = []
        for branch in node["anyOf"]:
            try:
                _conforms(instance, schema, branch)
                return
            except AssertionError as exc:
                errors.append(exc)
        raise AssertionError(f"{instance!r} matches no branch: {errors}")
    if "const" in node:
        assert instance == node["const"]
    if "enum" in node:
        assert instance in node["enum"]
    kind = node.get("type")
    if kind == "object":
        assert isinstance(instance, dict)
        if node.get("additionalProperties") is False:
            assert set(instance) <= set(node["properties"]), set(instance) - set(node["properties"])
        assert set(node.get("required", ())) <= set(instance)
        for key, sub in node.get("properties", {}).items():
            _conforms(instance[key], schema, sub)
    elif kind == "array":
        assert isinstance(instance, list)
        for item in instance:
            _conforms(item, schema, node.get("items", {}))
    elif kind is not None:
        types = {"string": str, "integer": int, "null": type(None), "boolean": bool}
        assert isinstance(instance, types[kind]), (instance, kind)


# --- sarif --------------------------------------------------------------------------------------------


def sarif(result: Result | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(render("sarif", result))
    return doc


def results_by_message(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["message"]["text"].split(": ", 1)[1]: r for r in doc["runs"][0]["results"]}


def test_sarif_has_the_required_2_1_0_structure() -> None:
    doc = sarif()
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "stockade" and driver["version"] == "0.1.0"
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == sorted(["STK-POD-003", "STK-POD-005", "STK-NET-001"])
    priv = driver["rules"][ids.index("STK-POD-003")]
    assert priv["name"] == "PrivilegedContainers"
    assert priv["shortDescription"]["text"] == "Privileged containers"
    assert priv["fullDescription"]["text"].startswith("Privileged pods")
    assert "Remove securityContext.privileged" in priv["help"]["text"]
    assert "**Remediation:**" in priv["help"]["markdown"]
    assert priv["defaultConfiguration"]["level"] == "error"
    assert priv["properties"]["security-severity"] == "9.5"
    assert priv["properties"]["precision"] == "very-high"
    assert {"security", "pod", "pss-baseline", "CIS-5.2.2"} <= set(priv["properties"]["tags"])
    severities = {rule["id"]: rule["properties"]["security-severity"] for rule in driver["rules"]}
    assert severities == {"STK-POD-003": "9.5", "STK-POD-005": "8.0", "STK-NET-001": "3.0"}
    for res in run["results"]:
        assert {"ruleId", "ruleIndex", "level", "message", "locations", "partialFingerprints"} <= set(res)
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]


def test_sarif_results_locations_levels_and_suppressions() -> None:
    by_message = results_by_message(sarif())
    denied = by_message[HOSTILE]
    assert denied["level"] == "error"
    (location,) = denied["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "manifests/web.yaml", "uriBaseId": "%SRCROOT%"}
    assert physical["region"]["startLine"] == 14
    (logical,) = location["logicalLocations"]
    assert logical["fullyQualifiedName"] == "Deployment/default/web" and logical["name"] == "web"
    assert "suppressions" not in denied

    warned = by_message["hostPath /var/run ✓ ünïcode"]
    assert warned["level"] == "warning"
    assert "region" not in warned["locations"][0]["physicalLocation"]  # line unknown

    live = by_message["live pod is privileged"]
    assert live["level"] == "note"
    assert "physicalLocation" not in live["locations"][0]
    assert live["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "aks-west/Pod/ml/notebook"

    waived = by_message["container trainer is privileged"]
    assert waived["suppressions"] == [
        {
            "kind": "external",
            "status": "accepted",
            "justification": "needs | NVIDIA <driver> access",
            "properties": {"exception": "gpu-priv", "owner": "ml-team", "expires": "2030-01-01"},
        }
    ]


def test_sarif_fingerprints_are_stable_and_distinguish_paths_and_files() -> None:
    result = make_result()
    first = [r["partialFingerprints"] for r in sarif(result)["runs"][0]["results"]]
    assert first == [r["partialFingerprints"] for r in sarif(result)["runs"][0]["results"]]
    assert len({next(iter(fp.values())) for fp in first}) == len(first)

    base = result.findings[0]
    moved = Result("0.1.0", findings=[replace(base, line=40, message="reworded")])
    other_path = Result("0.1.0", findings=[replace(base, path=(*PRIV_PATH[:4], 1, *PRIV_PATH[5:]))])
    other_file = Result("0.1.0", findings=[replace(base, file="overlays/prod/web.yaml")])

    def fingerprint(r: Result) -> str:
        return str(next(iter(sarif(r)["runs"][0]["results"][0]["partialFingerprints"].values())))

    original = fingerprint(Result("0.1.0", findings=[base]))
    assert fingerprint(moved) == original  # a line shift or new wording keeps the alert
    assert fingerprint(other_path) != original
    assert fingerprint(other_file) != original


def test_sarif_paths_are_posix_and_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    base = make_result().findings[0]
    files = {
        "inside": str(tmp_path / "k8s" / "app deploy.yaml"),
        "dotted": "./k8s/../k8s/web.yaml",
        "outside": "/elsewhere/web.yaml",
        "parent": "../sibling/web.yaml",
    }
    findings = [replace(base, file=file, message=name) for name, file in files.items()]
    by_message = results_by_message(sarif(Result("0.1.0", findings=findings)))
    uri = {name: by_message[name]["locations"][0]["physicalLocation"]["artifactLocation"] for name in files}
    assert uri["inside"] == {"uri": "k8s/app%20deploy.yaml", "uriBaseId": "%SRCROOT%"}
    assert uri["dotted"] == {"uri": "k8s/web.yaml", "uriBaseId": "%SRCROOT%"}
    assert uri["outside"] == {"uri": "file:///elsewhere/web.yaml"}
    assert uri["parent"] == {"uri": (tmp_path.parent / "sibling" / "web.yaml").as_uri()}


def test_sarif_invocation_reports_input_errors_gaps_and_stale_exceptions() -> None:
    (invocation,) = sarif()["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    broken = notes[0]
    assert broken["level"] == "error"
    assert broken["message"]["text"] == "mapping values are not allowed here"
    location = broken["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "broken.yaml"
    assert location["region"]["startLine"] == 7
    stdin = notes[1]
    assert "locations" not in stdin and stdin["message"]["text"].startswith("<stdin>: ")
    assert notes[2]["level"] == "warning" and "aks-east" in notes[2]["message"]["text"]
    stale = [n["message"]["text"] for n in invocation["toolConfigurationNotifications"]]
    assert len(stale) == 2 and "'legacy'" in stale[0] and "'forgotten'" in stale[1]

    (clean,) = sarif(Result("0.1.0"))["runs"][0]["invocations"]
    assert clean == {"executionSuccessful": True, "toolExecutionNotifications": []}


# --- junit --------------------------------------------------------------------------------------------


def test_junit_parses_and_counts_match() -> None:
    text = render("junit")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {
        "STK-NET-001 Egress allowlist",
        "STK-POD-003 Privileged containers",
        "STK-POD-005 hostPath volumes",
        "stockade input",
    }
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests", "")) == len(cases)
        for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            assert int(suite.get(attr, "")) == sum(c.find(tag) is not None for c in cases)
    for attr in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(attr, "")) == sum(int(s.get(attr, "")) for s in root.findall("testsuite"))
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "8",
        "3",
        "3",
        "1",
    )

    priv = suites["STK-POD-003 Privileged containers"]
    web = next(c for c in priv.findall("testcase") if c.get("name") == "Deployment/default/web")
    failure = web.find("failure")
    assert failure is not None
    assert failure.get("message") == HOSTILE and failure.get("type") == "deny"
    assert (web.get("file"), web.get("line")) == ("manifests/web.yaml", "14")
    assert "manifests/web.yaml:14 spec.template.spec.containers[0].securityContext.privileged" in (
        failure.text or ""
    )
    trainer = next(c for c in priv.findall("testcase") if c.get("name") == "Pod/gpu/trainer-ü")
    skipped = trainer.find("skipped")
    assert skipped is not None and skipped.get("message") == "waived by gpu-priv"
    assert trainer.find("failure") is None

    egress = suites["STK-NET-001 Egress allowlist"].findall("testcase")
    assert len(egress) == 1 and len(list(egress[0])) == 0  # no violations: one passing case

    inputs = suites["stockade input"].findall("testcase")
    errors = [c.find("error") for c in inputs]
    assert [e.get("type") for e in errors if e is not None] == ["InputError", "InputError", "CoverageGap"]
    assert (
        errors[1] is not None and errors[1].get("message") == "not YAML\ufffd at all"
    )  # control char replaced


def test_junit_folds_several_findings_of_one_object_into_one_case() -> None:
    base = make_result().findings[0]
    second = replace(base, message="container sidecar is privileged", action=Action.WARN, line=30)
    root = ET.fromstring(render("junit", Result("0.1.0", findings=[base, second])))
    (suite,) = root.findall("testsuite")
    (case,) = suite.findall("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "deny"  # the strongest action of the object's findings
    assert failure.get("message") == f"{HOSTILE}; container sidecar is privileged"
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")


# --- markdown -----------------------------------------------------------------------------------------


def _cells(row: str) -> list[str]:
    """Split a GFM table row on unescaped pipes, as GitHub does."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_markdown_headline_table_and_escaping() -> None:
    text = render("markdown")
    lines = text.splitlines()
    assert lines[0] == "### ❌ stockade: 3 findings (1 deny · 1 warn · 1 audit)"
    assert "12 resources · 3 files · 1 waived · 2 input errors · 1 not examined" in text
    header = next(line for line in lines if line.startswith("| Severity"))
    row = next(line for line in lines if "alert(1)" in line)
    assert len(_cells(row)) == len(_cells(header)) == 6
    cells = dict(zip(_cells(header), _cells(row), strict=True))
    assert cells["Location"] == "`manifests/web.yaml:14`"
    assert cells["Rule"] == "`STK-POD-003 +1` Privileged containers"  # one row per problem of the object
    assert cells["Message"].startswith(
        r'container "app\|\<script\>alert(1)\</script\>" is privileged<br>also '
    )
    assert "<script>" not in text
    assert "<details><summary><code>STK-POD-003</code> Privileged containers (critical, 2 findings)" in text
    assert "**Remediation:** Remove securityContext.privileged or set it to false." in text
    assert "- `broken.yaml:7`: mapping values are not allowed here" in text
    waived = next(line for line in lines if line.startswith("| `STK-POD-003` | `Pod/gpu/trainer-ü`"))
    assert len(_cells(waived)) == 7 and r"needs \| NVIDIA \<driver\> access" in waived
    assert "expired on 2020-01-01" in text and "matched nothing" in text
    assert "- `aks-east`: cluster unreachable" in text


def test_markdown_clean_run_and_long_runs() -> None:
    assert render("markdown", Result("0.1.0", resources=4)).startswith(
        "### ✅ stockade: no findings (0 deny · 0 warn · 0 audit)"
    )
    from stockade.scanner.reports.markdown import MAX_ROWS

    base = make_result().findings[1]
    many = Result(
        "0.1.0",
        findings=[
            replace(base, line=i + 1, resource=replace(base.resource, name=f"w{i}"))
            for i in range(MAX_ROWS + 5)
        ],
    )
    text = render("markdown", many)
    assert text.startswith("### ⚠️ stockade:")  # only warnings
    assert sum(line.startswith("| 🟧 high |") for line in text.splitlines()) == MAX_ROWS
    assert "and 5 more rows" in text


def test_markdown_code_spans_survive_backticks_and_pipes() -> None:
    base = make_result().findings[0]
    odd = Result("0.1.0", findings=[replace(base, file="we`ird|dir/a.yaml", line=2)])
    row = next(line for line in render("markdown", odd).splitlines() if "we`ird" in line)
    assert "`` we`ird\\|dir/a.yaml:2 ``" not in row  # no padding needed: text does not start with a backtick
    assert "``we`ird\\|dir/a.yaml:2``" in row
    assert len(_cells(row)) == 6


# --- table --------------------------------------------------------------------------------------------


def test_table_plain_has_no_ansi_and_lists_everything() -> None:
    text = render("table")
    assert "\x1b" not in text
    for needle in ("STK-POD-003", "STK-POD-005", "manifests/web.yaml:14", "Deployment/default/web", "waived"):
        assert needle in text
    assert "3 findings (1 deny, 1 warn, 1 audit; 2 critical, 1 high) in 12 resources from 3 files" in text
    assert "broken.yaml:7: mapping values are not allowed here" in text
    assert "exception 'legacy' (ml-team) expired on 2020-01-01" in text
    assert "not examined: aks-east: cluster unreachable" in text


def test_table_colour_only_when_asked_and_markup_is_literal() -> None:
    base = make_result().findings[0]
    result = Result("0.1.0", findings=[replace(base, message="[red]not markup[/red]")])
    assert "\x1b[" in render("table", result, color=True)
    plain = render("table", result)
    assert "[red]not markup[/red]" in plain
    assert render("table", Result("0.1.0", resources=2)).strip() == "No findings in 2 resources"


# --- html ---------------------------------------------------------------------------------------------


def test_html_is_self_contained_escaped_and_summarised() -> None:
    text = render("html")
    assert text.startswith("<!DOCTYPE html>")
    assert "<script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert not re.search(r"""(src|href)\s*=|@import|url\(""", text)  # nothing loaded from elsewhere
    cards = dict(
        (label, int(n))
        for n, label in re.findall(r'<span class="n">(\d+)</span><span class="l">([^<]+)', text)
    )
    assert cards == {
        "resources": 12,
        "files": 3,
        "findings": 3,
        "deny": 1,
        "warn": 1,
        "audit": 1,
        "waived": 1,
        "input errors": 2,
        "critical": 2,
        "high": 1,
        "medium": 0,
        "low": 0,
        "info": 0,
    }
    assert "<code>manifests/web.yaml:14</code>" in text
    assert '<tr class="waived">' in text and "waived by gpu-priv (ml-team) until 2030-01-01" in text
    for status in ("active", "expired", "unused"):
        assert f'<td class="status {status}">{status}</td>' in text
    assert "<code>broken.yaml:7</code>: mapping values are not allowed here" in text
    assert "<code>&lt;stdin&gt;</code>" in text
    assert "<code>aks-east</code>: cluster unreachable" in text
    assert "trainer-ü" in text


def test_sarif_rule_tags_are_unique_for_every_rule_of_the_library() -> None:
    """SARIF 2.1.0 makes `properties.tags` a set (uniqueItems): nine STK-NET rules repeated `egress`
    (their area and a framework), which schema validation rejects (issue 22)."""
    from stockade.policies.engines.library import load_library
    from stockade.scanner.reports import sarif as sarif_module

    for rule in load_library().rules.values():
        tags = sarif_module._descriptor(rule)["properties"]["tags"]
        assert len(tags) == len(set(tags)), (rule.id, tags)


def test_counts_are_singular_for_one() -> None:
    """Issue 22: "1 files", "(1 pods)"."""
    from stockade.scanner.reports.base import count

    assert [count(1, "file"), count(2, "file"), count(0, "pod"), count(1, "pod")] == [
        "1 file",
        "2 files",
        "0 pods",
        "1 pod",
    ]
    assert count(1, "policy", "policies") == "1 policy" and count(3, "policy", "policies") == "3 policies"


# --- notes --------------------------------------------------------------------------------------------

EGRESS_NOTE = Note(
    "STK-NET-001",
    "STK-NET-001 could not evaluate 3 workloads in namespaces shop, web|<b>: scan them with their namespace",
    3,
)
RUN_NOTE = Note(None, "a note about the whole run")


def noted(result: Result | None = None) -> Result:
    result = result if result is not None else make_result()
    result.notes = [EGRESS_NOTE, RUN_NOTE]
    return result


def _note_shown(fmt: str) -> str:
    """The egress note's message as each format writes it (escaped where the format escapes)."""
    message = EGRESS_NOTE.message
    if fmt == "markdown":
        return message.replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")
    if fmt == "html":
        return message.replace("<", "&lt;").replace(">", "&gt;")
    if fmt == "junit":
        return message.replace("<", "&lt;").replace(">", "&gt;")
    return message


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("empty", [False, True], ids=["full", "empty"])
def test_every_format_shows_each_note_exactly_once(fmt: str, empty: bool) -> None:
    """A note is said once per run, in every format, whether or not there are findings."""
    text = render(fmt, noted(Result("0.1.0", resources=4) if empty else None))
    assert text.count(_note_shown(fmt)) == 1, text
    assert text.count(RUN_NOTE.message) == 1


def test_notes_never_change_the_exit_code() -> None:
    from stockade.cli.scan import FailOn, exit_code

    assert exit_code(noted(Result("0.1.0", resources=4)), FailOn.warn) == 0


def test_table_prints_notes_after_the_summary() -> None:
    lines = render("table", noted(Result("0.1.0", resources=4))).splitlines()
    assert lines[0] == "No findings in 4 resources"
    assert lines[1].startswith("note: STK-NET-001 could not evaluate 3 workloads")
    assert lines[-1] == "note: a note about the whole run"


def test_json_notes_are_in_the_schema() -> None:
    doc = json.loads(render("json", noted()))
    ReportDocument.model_validate(doc)
    assert doc["notes"] == [
        {"rule": "STK-NET-001", "message": EGRESS_NOTE.message, "count": 3},
        {"rule": None, "message": "a note about the whole run", "count": None},
    ]
    _conforms(doc, json_schema())
    assert json.loads(render("json", Result("0.1.0")))["notes"] == []


def test_sarif_notes_are_configuration_notifications_of_their_rule() -> None:
    """SARIF 2.1.0 3.20.22 / 3.58: a note is a toolConfigurationNotification of level `note`; the rule
    it concerns is its `associatedRule` (id and index into the driver's rules)."""
    (run,) = sarif(noted())["runs"]
    ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    (invocation,) = run["invocations"]
    notes = [n for n in invocation["toolConfigurationNotifications"] if n["level"] == "note"]
    assert notes == [
        {
            "level": "note",
            "message": {"text": EGRESS_NOTE.message},
            "associatedRule": {"id": "STK-NET-001", "index": ids.index("STK-NET-001")},
            "properties": {"count": 3},
        },
        {"level": "note", "message": {"text": "a note about the whole run"}},
    ]
    assert invocation["executionSuccessful"] is False  # the input errors of make_result, not the notes
    (clean,) = sarif(noted(Result("0.1.0")))["runs"][0]["invocations"]
    assert clean["executionSuccessful"] is True
    assert all(r["level"] != "note" for r in run["results"] if r["ruleId"] == "STK-NET-001")


def test_junit_notes_are_skipped_cases_of_their_own_suite() -> None:
    root = ET.fromstring(render("junit", noted()))
    (suite,) = [s for s in root.findall("testsuite") if s.get("name") == "stockade notes"]
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["STK-NET-001 not evaluated", "stockade"]
    skipped = [c.find("skipped") for c in cases]
    assert [s.get("message") for s in skipped if s is not None] == [EGRESS_NOTE.message, RUN_NOTE.message]
    assert (suite.get("tests"), suite.get("skipped"), suite.get("failures"), suite.get("errors")) == (
        "2",
        "2",
        "0",
        "0",
    )
    assert (root.get("tests"), root.get("skipped"), root.get("failures")) == ("10", "3", "3")


def test_markdown_and_html_have_a_notes_section() -> None:
    markdown = render("markdown", noted())
    assert markdown.count("#### Notes") == 1
    assert markdown.index("#### Notes") < markdown.index("| Severity |")  # under the headline
    html_text = render("html", noted())
    assert html_text.count("<h2>Notes</h2>") == 1
    assert "web|&lt;b&gt;" in html_text and "<b>" not in html_text
    assert "#### Notes" not in render("markdown") and "<h2>Notes</h2>" not in render("html")
