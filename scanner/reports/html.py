"""HTML: one self-contained page to attach to a CI run or mail to a team that owns the findings.

Self-contained on purpose: inline CSS, no scripts, no fonts or images from elsewhere, and a
Content-Security-Policy that forbids loading anything, so the file opens offline, from an artifact
store or a mail client, and cannot phone home. Autoescaping is on for every value, because messages,
names and paths come from the scanned input. The page is shaped here in Python (groups, counts) so the
template only lays it out.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from stockade.policies.model import Finding, InputError, Rule, Severity, format_path
from stockade.scanner.reports.base import Report, until
from stockade.scanner.reports.fleet import fleet_view
from stockade.scanner.reports.names import shown, shown_at, shown_or_none
from stockade.scanner.reports.names import text as utf8
from stockade.scanner.result import Result

TEMPLATES = Path(__file__).with_name("templates")
TEMPLATE = "report.html.j2"


@dataclass(slots=True)
class Row:
    """One finding as the page shows it."""

    severity: str
    action: str
    rule_id: str
    rule_title: str
    location: str
    path: str
    message: str
    waiver: str | None


@dataclass(slots=True)
class Group:
    """The findings of one object."""

    resource: str
    kind: str
    cluster: str | None
    worst: str
    rows: list[Row] = field(default_factory=list)
    replicas: int | None = None  # audit: pods of the workload the findings were found on
    file: str | None = None  # scans: the file the object is in (same-named objects of two files differ)


class HtmlReport(Report):
    """Summary cards, notes, findings grouped by object, violated rules, exceptions, input errors,
    gaps."""

    name = "html"
    suffix = ".html"

    def render(self, result: Result, *, color: bool = False) -> str:
        findings = result.sorted_findings()
        active = [f for f in findings if f.exception is None]
        rules: dict[str, Rule] = {f.rule.id: f.rule for f in findings}
        page = _template().render(
            version=result.tool_version,
            summary=result.summary(),
            severities=[s.label for s in sorted(Severity, reverse=True)],
            groups=_groups(findings),
            active=len(active),
            rules=sorted(rules.values(), key=lambda r: (-r.severity, r.id)),
            exceptions=result.exceptions,
            # file names by the file-name rule (:mod:`.names`), then escaped like all text
            errors=[InputError(shown(e.file), e.message, e.line) for e in result.errors],
            gaps=result.gaps,
            notes=result.notes,
            fleet=fleet_view(result),
        )
        return utf8(page)


REPORT = HtmlReport()


@functools.cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(TEMPLATE)


def _groups(findings: list[Finding]) -> list[Group]:
    """Findings by object (and file: two files may hold objects of the same name), objects in report
    order (file, line); the worst severity first in each."""
    groups: dict[tuple[str | None, str | None, str], Group] = {}
    for f in findings:
        ref = f.resource
        key = (ref.cluster, f.file, ref.display())
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(
                ref.display(), ref.kind, ref.cluster, f.rule.severity.label, file=shown_or_none(f.file)
            )
        if f.replicas:
            group.replicas = max(group.replicas or 0, f.replicas)
        group.rows.append(
            Row(
                severity=f.rule.severity.label,
                action=f.action.value,
                rule_id=f.rule.id,
                rule_title=f.rule.title,
                location=shown_at(f.file, f.line),
                path=format_path(f.path),
                message=f.message,
                waiver=None
                if f.exception is None
                else f"waived by {f.exception.name} ({f.exception.owner}){until(f.exception.expires)}: "
                f"{f.exception.reason}",
            )
        )
    order = {s.label: s for s in Severity}
    for group in groups.values():
        group.rows.sort(key=lambda r: (r.waiver is not None, -order[r.severity]))
        active = [r for r in group.rows if r.waiver is None] or group.rows
        group.worst = max(order[r.severity] for r in active).label
    return list(groups.values())
