"""Table: the terminal report `stockade scan` prints by default.

Meant for a person at a terminal or reading a CI log: one table grouped by file (by cluster for audits),
with ``file:line`` locations an editor or terminal can jump to, then a one-line summary and the input
errors in the compiler-style ``file:line: message`` form. Colour only when asked for, so logs and files
never get escape codes; every cell is a plain ``Text``, so rich markup in a message (``[red]``) is shown
as typed rather than interpreted.
"""

from __future__ import annotations

from collections import Counter
from io import StringIO

from rich import box
from rich.table import Table
from rich.text import Text

from stockade.policies.model import Action, Finding, Severity
from stockade.scanner.reports.base import Report, count
from stockade.scanner.reports.grouping import Group, group
from stockade.scanner.reports.layout import console, fit, output_width, plain, print_text
from stockade.scanner.reports.names import shown_at
from stockade.scanner.reports.names import text as utf8
from stockade.scanner.result import Result

SEVERITY_STYLE = {
    Severity.CRITICAL: "bold red",
    Severity.HIGH: "red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
    Severity.INFO: "dim",
}
ACTION_STYLE = {Action.DENY: "bold red", Action.WARN: "yellow", Action.AUDIT: "blue"}


class TableReport(Report):
    """Findings table, summary line and notes, then input errors, stale exceptions and coverage gaps."""

    name = "table"
    suffix = ".txt"
    shows_version = False

    def render(self, result: Result, *, color: bool = False) -> str:
        out = StringIO()
        # a terminal's width when printing to one, else COLUMNS or 160; stacked rows when narrow
        out_console = console(out, width=output_width(terminal=color), color=color)
        groups = group(result.sorted_findings())
        if groups:
            out_console.print(fit(_table(groups), out_console.width, key=4), crop=False)
        print_text(out_console, _summary(result, len(groups)))
        for note in result.notes:  # what was not evaluated, right under the verdict it qualifies
            print_text(out_console, Text(f"note: {note.message}", style="cyan"))
        if result.framework:
            out_console.print(_controls(result))
        for error in result.errors:  # a path is never split across lines
            where = shown_at(error.file, error.line)
            print_text(out_console, Text(f"{where}: {error.message}", style="red"))
        for status in result.exceptions:
            if status.status != "active":
                spec = status.spec
                why = (
                    f"expired on {spec.expires.isoformat()}"
                    if status.status == "expired"
                    else "matched nothing"
                )
                print_text(out_console, Text(f"exception {spec.name!r} ({spec.owner}) {why}", style="yellow"))
        for gap in result.gaps:
            print_text(out_console, Text(f"not examined: {gap.scope}: {gap.message}", style="yellow"))
        return utf8(out.getvalue() if color else plain(out.getvalue()))


REPORT = TableReport()


def _group(f: Finding) -> str:
    """Rows are grouped by file; live objects (audits) by cluster."""
    return f.file or f.resource.cluster or ""


def _table(groups: list[Group]) -> Table:
    """Location first and unwrapped (so `file:line` stays clickable; one too long for the width stacks
    the rows instead), the object and message last, wrapped at spaces only; one row per problem
    (:mod:`~stockade.scanner.reports.grouping`), its folded rules listed.

    File names are shown by the file-name rule (:mod:`~stockade.scanner.reports.names`), so no name can
    add a line or a control character."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("Location", no_wrap=True)
    table.add_column("Severity", no_wrap=True)
    table.add_column("Action", no_wrap=True)
    table.add_column("Rule", no_wrap=True)
    table.add_column("Finding", ratio=1)
    for i, g in enumerate(groups):
        f = g.primary
        last_of_group = i + 1 == len(groups) or _group(groups[i + 1].primary) != _group(f)
        ref = f.resource
        finding = Text(f.subject(), style="bold")
        finding.append("\n")
        if f.exception is None:
            action = Text(g.action.value, style=ACTION_STYLE[g.action])
            finding.append(g.message())
        else:
            action = Text("waived", style="dim")
            finding.append(f"{g.message()} (waived by {f.exception.name}, {f.exception.owner})", style="dim")
        if f.file is None and ref.cluster is not None:  # audits: where it runs, not a file
            location = ref.cluster + (f" ({count(f.replicas, 'pod')})" if f.replicas else "")
        else:
            location = shown_at(f.file, g.line) or "-"
        table.add_row(
            Text(location),
            Text(g.severity.label, style=SEVERITY_STYLE[g.severity]),
            action,
            Text(g.rule_label()),
            finding,
            end_section=last_of_group,
        )
    return table


def _summary(result: Result, rows: int) -> Text:
    """The one-line verdict; `rows`: how many rows the findings were shown as."""
    active = result.active
    actions = Counter(f.action for f in active)
    scope = count(result.resources, "resource") + (
        f" from {count(result.files, 'file')}" if result.files else ""
    )
    if result.skipped:
        scope += f" ({len(result.skipped)} skipped: nothing to judge in them)"
    if active:
        severities = Counter(f.rule.severity for f in active)
        by_severity = ", ".join(
            f"{severities[s]} {s.label}" for s in sorted(Severity, reverse=True) if severities[s]
        )
        line = (
            f"{len(active)} finding{'s' if len(active) != 1 else ''} "
            f"({actions[Action.DENY]} deny, {actions[Action.WARN]} warn, {actions[Action.AUDIT]} audit; "
            f"{by_severity}) in {scope}"
        )
        if rows != len(result.findings):
            line += f", shown as {count(rows, 'row')}"
    else:
        line = f"No findings in {scope}"
    waived = len(result.findings) - len(active)
    if waived:
        line += f", {waived} waived"
    if result.errors:
        line += f", {len(result.errors)} input error{'s' if len(result.errors) != 1 else ''}"
    if actions[Action.DENY] or result.errors:
        style = "bold red"
    elif active:
        style = "bold yellow"
    else:
        style = "bold green"
    return Text(line, style=style)


def _controls(result: Result) -> Table:
    """Per-control pass/fail of `--framework` (audits)."""
    from stockade.policies.compliance import control_results, get_framework

    framework = get_framework(result.framework or "")
    table = Table(title=framework.title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in ("Control", "Result", "Rules", "Findings", "Waived"):
        table.add_column(column, no_wrap=column != "Rules")
    for c in control_results(result.rules, result.findings, framework.name):
        style = "bold red" if c.status == "fail" else "green"
        table.add_row(
            c.control, Text(c.status, style=style), ", ".join(c.rules), str(c.findings), str(c.waived)
        )
    return table
