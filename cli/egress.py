"""`stockade egress reach`: what each workload can reach, computed over all its network policies."""

from __future__ import annotations

import enum
import shutil
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.table import Table

from stockade.cli.errors import fail
from stockade.policies.facts.netpol.calico import SelectorError
from stockade.policies.facts.netpol.reach import Reachability
from stockade.policies.model import InputError
from stockade.scanner.sources.files import FileSource

app = typer.Typer(
    help="Egress: reachability of workloads under their network policies.", no_args_is_help=True
)


class ReachFormat(enum.StrEnum):
    table = "table"
    json = "json"
    connlist = "connlist"


def _objects(paths: list[str], exclude: list[str]) -> list[dict[str, Any]]:
    """Every object read; unreadable input stops the command (a missing policy changes the answer)."""
    objects: list[dict[str, Any]] = []
    for item in FileSource(paths, exclude=exclude):
        if isinstance(item, InputError):
            fail(str(item))
        objects.append(item.obj)
    return objects


@app.command("reach")
def reach(
    paths: Annotated[list[str], typer.Argument(help="Manifests: files, directories, `-` for stdin.")],
    workload: Annotated[
        str | None, typer.Option("--workload", help="Only this workload, as NAMESPACE/NAME.")
    ] = None,
    format: Annotated[ReachFormat, typer.Option("--format", "-f")] = ReachFormat.table,
    exclude: Annotated[
        list[str] | None, typer.Option("--exclude", help="Skip matching paths (glob).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """For each workload, every peer it can open a connection to (workloads, IP blocks) and the ports.

    A connection is allowed when the source's egress and the destination's ingress both allow it,
    over every policy read: NetworkPolicy, AdminNetworkPolicy / BaselineAdminNetworkPolicy, Cilium
    and Calico policies. `--format connlist` prints np-guard/netpol-analyzer's
    `src => dst : conn` lines (with ingress from outside the cluster too, unless --workload is given).
    """
    try:
        analysis = Reachability(_objects(paths, exclude or []))
    except SelectorError as exc:
        fail(str(exc))
    sources = sorted(analysis.workloads, key=lambda w: w.key)
    if workload is not None:
        namespace, sep, name = workload.partition("/")
        if not sep or not namespace or not name:
            fail(f"--workload {workload!r}: expected NAMESPACE/NAME")
        sources = analysis.find(namespace, name)
        if not sources:
            fail(f"--workload {workload!r}: no such workload in the manifests read")
    if format is ReachFormat.connlist:
        if workload is None:
            lines = analysis.connlist()
        else:
            lines = sorted(c.line() for c in analysis.connections(sources))
        text = "".join(f"{line}\n" for line in lines)
    elif format is ReachFormat.json:
        doc = {"version": 1, "workloads": [analysis.report(w) for w in sources]}
        text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
    else:
        text = _table([analysis.report(w) for w in sources])
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


def _table(reports: list[dict[str, Any]]) -> str:
    table = Table(show_lines=False)
    for column in ("workload", "egress", "can reach", "connections"):
        table.add_column(column)
    for rep in reports:
        isolation = "isolated" if rep["egressIsolated"] else "NOT isolated"
        if rep["hostNetwork"]:
            isolation += ", hostNetwork"
        if not rep["destinations"]:
            table.add_row(rep["workload"], isolation, "(nothing)", "")
        for i, dest in enumerate(rep["destinations"]):
            peer = ", ".join(dest["cidrs"]) if dest["type"] == "ipBlock" else dest["peer"]
            table.add_row(rep["workload"] if i == 0 else "", isolation if i == 0 else "", peer, dest["conn"])
    # Never truncate a workload name or a port list: a report is read by people and by grep alike.
    for col in table.columns:
        col.overflow = "fold"
    console = Console(width=max(120, shutil.get_terminal_size((160, 24)).columns), force_terminal=False)
    with console.capture() as capture:
        console.print(table)
    return capture.get()
