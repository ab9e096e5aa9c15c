"""SARIF 2.1.0: findings as static-analysis results, for GitHub code scanning and other SARIF viewers.

Written for GitHub's ingestion rules: rules carry ``security-severity`` and the ``security`` tag (so
alerts are ranked critical/high/medium/low like other security tools), file locations are POSIX paths
relative to the checkout (``%SRCROOT%``) so alerts land on the right line, and every result has a
``partialFingerprints`` entry that does not depend on line numbers, so re-running after unrelated edits
updates the same alerts instead of opening new ones. Waived findings are kept, with an external
suppression, so the waiver is visible where the alert would be.

Findings on objects that do not come from a file (live clusters in audits, stdin) have only a logical
location. That is valid SARIF, but GitHub rejects a whole upload containing such a result, so upload
SARIF from file scans (or `--helm`/`--kustomize`, which name their files), not from audits or stdin.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

from stockade.policies.config.waivers import ExceptionStatus
from stockade.policies.model import Action, Finding, Rule, Severity, format_path
from stockade.scanner.reports.base import Report
from stockade.scanner.reports.json import dumps
from stockade.scanner.reports.names import shown, uri_path
from stockade.scanner.result import Note, Result

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: where a SARIF viewer links the tool's name (placeholder until the project has a public home)
#: key of our entry in partialFingerprints (SARIF recommends a versioned name)
FINGERPRINT_KEY = "stockadeFinding/v1"
SRCROOT = "%SRCROOT%"
#: what the file source calls standard input (no file, so no physical location)
STDIN_NAME = "<stdin>"

LEVEL = {Action.DENY: "error", Action.WARN: "warning", Action.AUDIT: "note"}
#: GitHub maps >= 9.0 to critical, >= 7.0 high, >= 4.0 medium, > 0 low
SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "3.0",
    Severity.INFO: "1.0",
}

JSON = dict[str, Any]


class SarifReport(Report):
    """One SARIF run: the rule catalogue, one result per finding, input errors as notifications."""

    name = "sarif"
    suffix = ".sarif"

    def render(self, result: Result, *, color: bool = False) -> str:
        paths = _Paths(Path.cwd())
        rules = _catalogue(result)
        index = {rule.id: i for i, rule in enumerate(rules)}
        run: JSON = {
            "tool": {
                "driver": {
                    "name": "stockade",
                    "version": result.tool_version,
                    "rules": [_descriptor(rule) for rule in rules],
                }
            },
            "invocations": [_invocation(result, paths, index)],
            "results": [_result(f, index[f.rule.id], paths) for f in result.sorted_findings()],
        }
        document = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
        return dumps(document)


REPORT = SarifReport()


def fingerprint(finding: Finding, uri: str | None = None) -> str:
    """Identity of a finding across runs: rule, object, field and file, but not the line.

    The file (as its SARIF uri) is part of it because the same object name often appears in several
    files (base and overlays); the line is not, so edits elsewhere in the file keep the alert.
    """
    ref = finding.resource
    parts = (
        finding.rule.id,
        ref.cluster or "",
        ref.kind,
        ref.namespace or "",
        ref.name,
        format_path(finding.path),
        uri or "",
    )
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _catalogue(result: Result) -> list[Rule]:
    """The active rules plus any rule a finding names that is not among them, sorted by id."""
    rules = dict(result.rules)
    for finding in result.findings:
        rules.setdefault(finding.rule.id, finding.rule)
    return [rules[rule_id] for rule_id in sorted(rules)]


def _descriptor(rule: Rule) -> JSON:
    frameworks = ", ".join(rule.frameworks) or "none"
    markdown = (
        f"**{rule.title}**\n\n{rule.description}\n\n**Remediation:** {rule.remediation}\n\n"
        f"**Severity:** {rule.severity.label} · **Default action:** {rule.action.value} · "
        f"**Frameworks:** {frameworks}"
    )
    return {
        "id": rule.id,
        "name": _pascal(rule.title) or rule.id,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.description or rule.title},
        "help": {"text": f"Remediation: {rule.remediation}", "markdown": markdown},
        "defaultConfiguration": {"level": LEVEL[rule.action]},
        "properties": {
            # unique (SARIF 2.1.0 makes `tags` a set): an area may also be a framework name (egress)
            "tags": list(dict.fromkeys(["security", rule.area, *rule.frameworks])),
            "security-severity": SECURITY_SEVERITY[rule.severity],
            # rules read declared fields: no heuristics, so no false positives by construction
            "precision": "very-high",
        },
    }


def _result(finding: Finding, rule_index: int, paths: _Paths) -> JSON:
    ref = finding.resource
    artifact = paths.artifact(finding.file)
    location: JSON = {}
    if artifact is not None:
        location["physicalLocation"] = _physical(artifact, finding.line)
    qualified = f"{ref.cluster}/{ref.display()}" if ref.cluster else ref.display()
    location["logicalLocations"] = [
        {
            "name": ref.name,
            "fullyQualifiedName": qualified,
            "kind": "resource",
            "properties": {
                key: value
                for key, value in (
                    ("apiVersion", ref.api_version),
                    ("kind", ref.kind),
                    ("namespace", ref.namespace),
                    ("cluster", ref.cluster),
                )
                if value
            },
        }
    ]
    out: JSON = {
        "ruleId": finding.rule.id,
        "ruleIndex": rule_index,
        "level": LEVEL[finding.action],
        "message": {"text": f"{finding.subject()}: {finding.message}"},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding, artifact["uri"] if artifact else None)},
        "properties": {
            "action": finding.action.value,
            "severity": finding.rule.severity.label,
            "path": format_path(finding.path),
            "details": dict(finding.details),
        },
    }
    if finding.exception is not None:
        waiver = finding.exception
        out["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": waiver.reason,
                "properties": {"exception": waiver.name, "owner": waiver.owner, "expires": waiver.expires},
            }
        ]
    return out


def _invocation(result: Result, paths: _Paths, rule_index: dict[str, int]) -> JSON:
    """Input errors and coverage gaps are execution problems; stale waivers and notes (a rule that
    could not decide on this input, a control not configured) are configuration ones."""
    execution: list[JSON] = []
    for error in result.errors:
        note: JSON = {"level": "error", "message": {"text": error.message}}
        artifact = paths.artifact(error.file)
        if artifact is not None:
            note["locations"] = [{"physicalLocation": _physical(artifact, error.line)}]
        else:
            note["message"]["text"] = f"{shown(error.file)}: {error.message}"
        execution.append(note)
    for gap in result.gaps:
        execution.append(
            {"level": "warning", "message": {"text": f"not examined: {gap.scope}: {gap.message}"}}
        )
    configuration = [_stale(s) for s in result.exceptions if s.status != "active"]
    configuration += [_note(n, rule_index) for n in result.notes]
    invocation: JSON = {
        # input errors mean part of the input was not evaluated, as the CLI's exit code also says
        "executionSuccessful": not result.errors,
        "toolExecutionNotifications": execution,
    }
    if configuration:
        invocation["toolConfigurationNotifications"] = configuration
    return invocation


def _stale(status: ExceptionStatus) -> JSON:
    spec = status.spec
    why = f"expired on {spec.expires.isoformat()}" if status.status == "expired" else "matched no finding"
    return {"level": "warning", "message": {"text": f"exception {spec.name!r} (owner {spec.owner}) {why}"}}


def _note(note: Note, rule_index: dict[str, int]) -> JSON:
    """A note as a configuration notification of level note; the rule it is about is its
    `associatedRule` (SARIF 2.1.0 3.58.5: `descriptor` would name a notification descriptor)."""
    out: JSON = {"level": "note", "message": {"text": note.message}}
    if note.rule is not None:
        ref: JSON = {"id": note.rule}
        if note.rule in rule_index:
            ref["index"] = rule_index[note.rule]
        out["associatedRule"] = ref
    if note.count is not None:
        out["properties"] = {"count": note.count}
    return out


def _physical(artifact: JSON, line: int | None) -> JSON:
    physical: JSON = {"artifactLocation": artifact}
    if line:
        physical["region"] = {"startLine": line}
    return physical


class _Paths:
    """Turns the file names sources report into SARIF artifact locations."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def artifact(self, file: str | None) -> JSON | None:
        """`{"uri", "uriBaseId"}` relative to the working directory when possible, else a file: URI. Both
        percent-encode the bytes of the path (RFC 3986), so any name, UTF-8 or not, is a valid URI
        reference that decodes to exactly those bytes.

        None for inputs that are not files (stdin is named `<stdin>`), which get no physical location;
        a file whose name merely starts with `<` is a file.
        """
        if not file or file == STDIN_NAME:
            return None
        path = Path(file)
        if not path.is_absolute():
            path = self.cwd / path
        path = Path(os.path.normpath(path))
        try:
            relative = path.relative_to(self.cwd)
        except ValueError:
            return {"uri": path.as_uri()}
        return {"uri": uri_path(relative.as_posix()), "uriBaseId": SRCROOT}


def _pascal(title: str) -> str:
    """SARIF wants rule names as identifiers: "Privileged containers" -> "PrivilegedContainers"."""
    return "".join(word[:1].upper() + word[1:] for word in re.findall(r"[A-Za-z0-9]+", title))
