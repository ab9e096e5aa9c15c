"""`stockade report merge`: one fleet report from per-cluster JSON reports.

The in-cluster audits of a large fleet (docs/fleet.md, "Hundreds of clusters") each write one JSON
report. This reads them (files, or directories of `*.json`), merges them without evaluating anything
again (:mod:`stockade.scanner.reports.merge`) and writes any report format: the HTML fleet page,
SARIF, one JSON document. Exit codes are the audit's: 2 when a file is not a report, when a cluster
is in two files, when a cluster could not be audited or (by default) had coverage gaps; 1 when a
finding fails `--fail-on`; else 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stockade.cli.audit import audit_exit_code, print_summary
from stockade.cli.errors import fail
from stockade.cli.main import tool_version
from stockade.cli.output import emit
from stockade.cli.scan import FailOn, Format
from stockade.policies.engines.library import load_library
from stockade.scanner.reports import get_report
from stockade.scanner.reports.merge import merge as merge_reports

app = typer.Typer(
    rich_markup_mode=None,
    help="Reports: merge per-cluster JSON reports into one fleet report.",
    no_args_is_help=True,
)


def _files(paths: list[Path]) -> list[Path]:
    """The files named, and each directory's `*.json` files (sorted, not recursive)."""
    out: list[Path] = []
    for path in paths:
        out.extend(sorted(p for p in path.glob("*.json") if p.is_file()) if path.is_dir() else [path])
    return out


@app.command("merge")
def merge(
    reports: Annotated[
        list[Path],
        typer.Argument(help="JSON reports (stockade audit --format json), or directories of them."),
    ],
    format: Annotated[Format, typer.Option("--format", "-f", help="Report format.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Lowest action that fails.")] = FailOn.deny,
    fail_on_gaps: Annotated[
        bool,
        typer.Option(
            "--fail-on-gaps/--no-fail-on-gaps",
            help="Exit 2 when a merged audit could not read everything (a coverage gap).",
        ),
    ] = True,
) -> None:
    """Merge JSON reports (one per cluster, from in-cluster audits) into one report of any format."""
    files = _files(reports)
    if not files:
        fail("no JSON report found in " + ", ".join(str(p) for p in reports))
    result = merge_reports(files, load_library().rules, tool_version())
    emit(get_report(format.value), result, output, terminal_colors=format == Format.table)
    print_summary(result)
    raise typer.Exit(audit_exit_code(result, fail_on, fail_on_gaps))
