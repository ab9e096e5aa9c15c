"""Markdown: a pull-request comment (GitHub/GitLab flavoured) summarising a scan.

Reviewers read it in a PR thread, so it leads with a one-line verdict, keeps the findings to one table,
and hides remediation text in ``<details>`` blocks. Everything that comes from the scanned input
(messages, names, file paths) is escaped: a manifest must not be able to inject markup, break the table
with a ``|`` or open an HTML tag in someone's review. The table is capped so a huge scan still fits in
a comment (GitHub rejects comments over 65,536 characters); the JSON or HTML report has everything.
"""

from __future__ import annotations

import html
import re
from collections import Counter

from stockade.policies.config.waivers import ExceptionStatus
from stockade.policies.model import Finding, Rule, Severity
from stockade.scanner.reports.base import Report, count
from stockade.scanner.reports.grouping import group
from stockade.scanner.reports.names import shown_at
from stockade.scanner.reports.names import text as utf8
from stockade.scanner.result import Result

#: findings shown in the table (and waived findings in theirs); the rest are counted
MAX_ROWS = 150
SEVERITY_ICON = {
    Severity.CRITICAL: "🟥",
    Severity.HIGH: "🟧",
    Severity.MEDIUM: "🟨",
    Severity.LOW: "🟦",
    Severity.INFO: "⬜",
}
# Markdown punctuation that can start markup; backslash-escaping any ASCII punctuation is always
# allowed (CommonMark), and `\<` keeps `<script>` from becoming an HTML tag.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#!])")


class MarkdownReport(Report):
    """Headline, notes, findings table, per-rule remediation, errors, waived findings, stale waivers,
    gaps."""

    name = "markdown"
    suffix = ".md"

    def render(self, result: Result, *, color: bool = False) -> str:
        findings = result.sorted_findings()
        active = [f for f in findings if f.exception is None]
        waived = [f for f in findings if f.exception is not None]
        parts = [_headline(result, active), _notes(result), _findings_table(active), _rules(active)]
        parts += [_errors(result), _waived(waived), _stale(result.exceptions), _gaps(result)]
        return utf8("\n\n".join(p for p in parts if p) + "\n")


REPORT = MarkdownReport()


def _headline(result: Result, active: list[Finding]) -> str:
    actions = Counter(f.action.value for f in active)
    deny, warn, audit = actions["deny"], actions["warn"], actions["audit"]
    if deny or result.errors:
        icon = "❌"
    elif active:
        icon = "⚠️"
    else:
        icon = "✅"
    what = f"{len(active)} finding{'s' if len(active) != 1 else ''}" if active else "no findings"
    head = f"### {icon} stockade: {what} ({deny} deny · {warn} warn · {audit} audit)"
    facts = [count(result.resources, "resource"), count(result.files, "file")]
    waived = len(result.findings) - len(active)
    if waived:
        facts.append(f"{waived} waived")
    if result.errors:
        facts.append(f"{len(result.errors)} input error{'s' if len(result.errors) != 1 else ''}")
    if result.gaps:
        facts.append(f"{len(result.gaps)} not examined")
    severities = Counter(f.rule.severity for f in active)
    by_severity = " · ".join(
        f"{SEVERITY_ICON[s]} {severities[s]} {s.label}"
        for s in sorted(Severity, reverse=True)
        if severities[s]
    )
    line = " · ".join(facts) + f" · stockade {_text(result.tool_version)}"
    return "\n\n".join(p for p in (head, line, by_severity) if p)


def _findings_table(active: list[Finding]) -> str:
    if not active:
        return ""
    rows = ["| Severity | Action | Rule | Resource | Location | Message |", "|---|---|---|---|---|---|"]
    groups = group(active)  # one row per problem; the JSON report keeps every finding
    for g in groups[:MAX_ROWS]:
        f = g.primary
        where = _code(shown_at(f.file, g.line), exact=True) if f.file else "—"
        rows.append(
            f"| {SEVERITY_ICON[g.severity]} {g.severity.label} | {g.action.value} "
            f"| {_code(g.rule_label())} {_text(f.rule.title)} | {_code(_resource(f))} "
            f"| {where} | {'<br>'.join(_text(t) for t in g.lines())} |"
        )
    return "\n".join(rows) + _more(len(groups), "rows")


def _rules(active: list[Finding]) -> str:
    """One collapsed block per violated rule: what it checks and how to fix it."""
    counts = Counter(f.rule.id for f in active)
    rules: dict[str, Rule] = {f.rule.id: f.rule for f in active}
    blocks = []
    for rule in sorted(rules.values(), key=lambda r: (-r.severity, r.id)):
        n = counts[rule.id]
        summary = (
            f"<code>{html.escape(rule.id)}</code> {html.escape(rule.title)} "
            f"({rule.severity.label}, {n} finding{'s' if n != 1 else ''})"
        )
        body = [f"<details><summary>{summary}</summary>", "", _text(rule.description)]
        body += ["", f"**Remediation:** {_text(rule.remediation)}"]
        if rule.frameworks:
            body += ["", "**Frameworks:** " + ", ".join(_code(fw) for fw in rule.frameworks)]
        body += ["", "</details>"]
        blocks.append("\n".join(body))
    return "#### How to fix\n\n" + "\n\n".join(blocks) if blocks else ""


def _notes(result: Result) -> str:
    """What could not be evaluated and controls not configured, under the headline they qualify."""
    if not result.notes:
        return ""
    return "#### Notes\n\n" + "\n".join(f"- {_text(n.message)}" for n in result.notes)


def _errors(result: Result) -> str:
    if not result.errors:
        return ""
    lines = [
        f"- {_code(shown_at(e.file, e.line), table=False, exact=True)}: {_text(e.message)}"
        for e in result.errors
    ]
    return "#### Input errors\n\nThese inputs were not evaluated:\n\n" + "\n".join(lines)


def _waived(waived: list[Finding]) -> str:
    if not waived:
        return ""
    rows = [
        f"<details><summary>Waived findings ({len(waived)})</summary>",
        "",
        "| Rule | Resource | Location | Exception | Owner | Expires | Reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for f, w in [(f, f.exception) for f in waived[:MAX_ROWS] if f.exception is not None]:
        rows.append(
            f"| {_code(f.rule.id)} | {_code(_resource(f))} | {_location(f)} "
            f"| {_code(w.name)} | {_text(w.owner)} | {w.expires or '—'} | {_text(w.reason)} |"
        )
    return "\n".join(rows) + _more(len(waived), "waived findings") + "\n\n</details>"


def _stale(statuses: list[ExceptionStatus]) -> str:
    """Expired and unused waivers, so they get renewed or deleted rather than forgotten."""
    stale = [s for s in statuses if s.status != "active"]
    if not stale:
        return ""
    lines = [
        f"- {_code(s.spec.name, table=False)} ({_text(s.spec.owner)}): "
        + (f"expired on {s.spec.expires.isoformat()}" if s.status == "expired" else "matched nothing")
        for s in stale
    ]
    return "#### Exceptions to review\n\n" + "\n".join(lines)


def _gaps(result: Result) -> str:
    if not result.gaps:
        return ""
    lines = [f"- {_code(g.scope, table=False)}: {_text(g.message)}" for g in result.gaps]
    return "#### Not examined\n\n" + "\n".join(lines)


def _more(total: int, what: str) -> str:
    hidden = total - MAX_ROWS
    return f"\n\n_… and {hidden} more {what}; see the JSON or HTML report._" if hidden > 0 else ""


def _resource(f: Finding) -> str:
    ref = f.resource
    return f"{ref.cluster}/{f.subject()}" if ref.cluster else f.subject()


def _location(f: Finding) -> str:
    return _code(shown_at(f.file, f.line), exact=True) if f.file else "—"


def _text(text: str) -> str:
    """Plain text safe in a table cell or a paragraph: markup escaped, one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _code(text: str, *, table: bool = True, exact: bool = False) -> str:
    """A code span that survives any content: the fence outgrows backtick runs in the text.

    Inside tables GFM splits cells before parsing code spans, so `|` must be escaped there too (GFM
    takes `\\|` back to `|`, and `\\\\|` to `\\|`). Whitespace is folded to single spaces unless
    `exact` (file names, which keep every character: the code span shows its content as is).
    """
    if not exact:
        text = " ".join(text.split())
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    # CommonMark strips one space from each side of a span that starts and ends with one: pad it so
    # that what it strips is the padding
    spaced = text.startswith(" ") and text.endswith(" ") and text.strip(" ")
    pad = " " if text.startswith("`") or text.endswith("`") or spaced else ""
    return f"{fence}{pad}{text}{pad}{fence}"
