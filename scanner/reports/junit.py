"""JUnit XML: findings as failed tests, for CI systems that only understand test reports.

GitLab, Jenkins, Azure DevOps and most CI dashboards show JUnit results natively, so this is the cheapest
way to get findings in front of people there. Layout follows checkov and kubescape: one ``testsuite``
per rule, one ``testcase`` per object that violates it (its findings folded into one ``failure``, since
most consumers keep only the first failure of a test case). A rule nothing violated is one passing test
case, so the rule still shows up as checked. Waived findings are ``skipped`` (with the waiver), input
errors and coverage gaps are ``error`` test cases in a suite of their own. Notes (a rule that could not
decide on this input, a control not configured) are ``skipped`` test cases of a ``stockade notes`` suite:
skipped is what GitLab, Jenkins and Azure DevOps show with its message without failing the run, where a
``<system-out>`` or ``<properties>`` entry is kept but rarely displayed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence

from stockade.policies.model import Finding, ResourceRef, Rule, format_path
from stockade.scanner.reports.base import Report, until
from stockade.scanner.reports.names import shown, shown_at, text
from stockade.scanner.result import Result

#: characters XML 1.0 cannot carry at all, even escaped; messages quoting input may contain them
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
INPUT_SUITE = "stockade input"
NOTES_SUITE = "stockade notes"


class JunitReport(Report):
    """``<testsuites>`` with per-rule suites; counts on every suite and on the root."""

    name = "junit"
    suffix = ".xml"
    shows_version = False

    def render(self, result: Result, *, color: bool = False) -> str:
        root = ET.Element("testsuites", name="stockade")
        by_rule: dict[str, list[Finding]] = defaultdict(list)
        for finding in result.sorted_findings():
            by_rule[finding.rule.id].append(finding)
        rules = dict(result.rules)
        for findings in by_rule.values():
            rules.setdefault(findings[0].rule.id, findings[0].rule)
        for rule_id in sorted(rules):
            _rule_suite(root, rules[rule_id], by_rule.get(rule_id, []))
        if result.errors or result.gaps:
            _input_suite(root, result)
        if result.notes:
            _notes_suite(root, result)
        _count(root, root.findall("testsuite"))
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


REPORT = JunitReport()


def _rule_suite(root: ET.Element, rule: Rule, findings: list[Finding]) -> None:
    suite = ET.SubElement(root, "testsuite", name=_clean(f"{rule.id} {rule.title}"))
    classname = f"stockade.{rule.area}.{rule.id}"
    if not findings:
        ET.SubElement(suite, "testcase", name="no violations", classname=classname)
    by_resource: dict[ResourceRef, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_resource[finding.resource].append(finding)
    for ref, group in by_resource.items():
        case = ET.SubElement(suite, "testcase", name=_clean(_resource(ref)), classname=classname)
        first = group[0]
        if first.file:
            case.set("file", shown(first.file))
            if first.line:
                case.set("line", str(first.line))
        active = [f for f in group if f.exception is None]
        if active:
            strongest = max(active, key=lambda f: f.action.rank)
            failure = ET.SubElement(
                case,
                "failure",
                message=_clean("; ".join(f.message for f in active)),
                type=strongest.action.value,
            )
            failure.text = _clean(_body(rule, group))
        else:
            waivers = sorted({f.exception.name for f in group if f.exception is not None})
            skipped = ET.SubElement(case, "skipped", message=_clean(f"waived by {', '.join(waivers)}"))
            skipped.text = _clean(_body(rule, group))
    _count(suite, suite.findall("testcase"))


def _input_suite(root: ET.Element, result: Result) -> None:
    suite = ET.SubElement(root, "testsuite", name=INPUT_SUITE)
    for error in result.errors:
        case = ET.SubElement(
            suite, "testcase", name=_clean(shown_at(error.file, error.line)), classname="stockade.input"
        )
        case.set("file", shown(error.file))
        if error.line:
            case.set("line", str(error.line))
        ET.SubElement(case, "error", message=_clean(error.message), type="InputError").text = _clean(
            f"{shown_at(error.file, error.line)}: {error.message}"
        )
    for gap in result.gaps:
        case = ET.SubElement(suite, "testcase", name=_clean(gap.scope), classname="stockade.coverage")
        ET.SubElement(case, "error", message=_clean(gap.message), type="CoverageGap").text = _clean(
            f"not examined: {gap.scope}: {gap.message}"
        )
    _count(suite, suite.findall("testcase"))


def _notes_suite(root: ET.Element, result: Result) -> None:
    suite = ET.SubElement(root, "testsuite", name=NOTES_SUITE)
    for note in result.notes:
        name = f"{note.rule} not evaluated" if note.rule else "stockade"
        case = ET.SubElement(suite, "testcase", name=_clean(name), classname="stockade.note")
        ET.SubElement(case, "skipped", message=_clean(note.message))  # the text once, where CI shows it
    _count(suite, suite.findall("testcase"))


def _count(element: ET.Element, parts: Sequence[ET.Element]) -> None:
    """Set tests/failures/errors/skipped from test cases (or, on the root, from suites)."""
    if element.tag == "testsuites":
        totals = {
            k: sum(int(p.get(k, "0")) for p in parts) for k in ("tests", "failures", "errors", "skipped")
        }
    else:
        totals = {
            "tests": len(parts),
            "failures": sum(p.find("failure") is not None for p in parts),
            "errors": sum(p.find("error") is not None for p in parts),
            "skipped": sum(p.find("skipped") is not None for p in parts),
        }
    for key, value in totals.items():
        element.set(key, str(value))
    element.set("time", "0")


def _body(rule: Rule, findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        state = f"waived by {f.exception.name}{until(f.exception.expires)}" if f.exception else f.action.value
        where = " ".join(p for p in (shown_at(f.file, f.line), format_path(f.path)) if p)
        lines.append(f"[{state}] {where}: {f.message}" if where else f"[{state}] {f.message}")
    lines.append(f"severity: {rule.severity.label}")
    lines.append(f"remediation: {rule.remediation}")
    return "\n".join(lines)


def _resource(ref: ResourceRef) -> str:
    return f"{ref.cluster}/{ref.display()}" if ref.cluster else ref.display()


def _clean(value: str) -> str:
    """Text quoting the input: what XML 1.0 cannot carry replaced, lone surrogates escaped."""
    return _INVALID_XML.sub("\ufffd", text(value))
