"""`stockade egress reach`: what each workload can reach, computed over all its network policies.

The objects come from manifests (PATH…) or from a live cluster (`--context`), listed through the
audit's :class:`~stockade.scanner.sources.cluster.ClusterReader` (pages of 500, rate limited,
retried). From a cluster, a workload is its top-level controller: pods, ReplicaSets and Jobs that a
listed controller owns are dropped, so a Deployment is one workload, not its ReplicaSets and pods.
A policy kind whose CRD is not installed (404) has no policies; any other failure stops the command,
since a missing policy would change the answer.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.table import Table
from rich.text import Text

from stockade.cli.errors import fail
from stockade.cli.loading import read_objects
from stockade.policies.facts.netpol.calico import SelectorError
from stockade.policies.facts.netpol.reach import PodsDiffer, Reachability
from stockade.policies.kinds.api import KINDS, object_kind
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS
from stockade.scanner.reports.layout import table_text
from stockade.scanner.sources.cluster import HTTP_NOT_FOUND, ClusterReader, ListError

app = typer.Typer(
    rich_markup_mode=None,
    help="Egress: reachability of workloads under their network policies.",
    no_args_is_help=True,
)


class ReachFormat(enum.StrEnum):
    table = "table"
    json = "json"
    connlist = "connlist"


def _objects(paths: list[str], exclude: list[str]) -> list[dict[str, Any]]:
    """Every object read; unreadable input stops the command (a missing policy changes the answer),
    and so does finding no object at all."""
    return [dict(o) for o in read_objects(paths, exclude)]


#: what reachability reads from a cluster: namespaces, workloads and every policy API it understands
CLUSTER_KINDS = (
    "Namespace",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicationController",
    "CronJob",
    "ReplicaSet",
    "Job",
    "Pod",
    "NetworkPolicy",
    "AdminNetworkPolicy",
    "BaselineAdminNetworkPolicy",
    "CiliumNetworkPolicy",
    "CiliumClusterwideNetworkPolicy",
    "NetworkPolicy.projectcalico.org",
    "GlobalNetworkPolicy",
    "Tier",
    # custom workload kinds whose pods run (a CRD that is not installed answers 404)
    *(info.kind for info in DEFAULT_WORKLOADS.custom if info.runs_pods),
    # KubeVirt's virtual machines (their virt-launcher pods stand for them)
    "VirtualMachine",
    "VirtualMachineInstanceReplicaSet",
    "VirtualMachinePool",
    "VirtualMachineInstance",
)
_VM_OWNERS = frozenset({"VirtualMachine", "VirtualMachineInstanceReplicaSet", "VirtualMachinePool"})
_CUSTOM_OWNERS = frozenset(object_kind(info) for info in DEFAULT_WORKLOADS.custom if info.runs_pods)
#: kind -> the controllers whose objects of that kind are not workloads of their own: a custom
#: workload (RayCluster, JobSet, Rollout) stands for its pods, Jobs and ReplicaSets
_OWNED_BY = {
    "Pod": frozenset(
        {"ReplicaSet", "Job", "StatefulSet", "DaemonSet", "ReplicationController", "VirtualMachineInstance"}
    )
    | _CUSTOM_OWNERS,
    "VirtualMachineInstance": _VM_OWNERS,
    "VirtualMachine": frozenset({"VirtualMachinePool"}),
    "ReplicaSet": frozenset({"Deployment"}) | _CUSTOM_OWNERS,
    "Job": frozenset({"CronJob"}) | _CUSTOM_OWNERS,
}


def _top_level(obj: dict[str, Any]) -> bool:
    """False for an object a listed controller owns (its controller stands for it)."""
    owners = _OWNED_BY.get(str(obj.get("kind")))
    if owners is None:
        return True
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return not any(isinstance(r, dict) and r.get("controller") and r.get("kind") in owners for r in refs)


def _cluster_objects(context: str | None, kubeconfig: str | None) -> list[dict[str, Any]]:
    from kubernetes.config import ConfigException

    try:
        reader = ClusterReader.from_kubeconfig(kubeconfig, context)
    except (ConfigException, OSError) as exc:
        fail(f"kubeconfig: {exc}")
    objects: list[dict[str, Any]] = []
    with reader:
        for kind in CLUSTER_KINDS:
            info = KINDS[kind]
            kept: list[dict[str, Any]] = []
            try:
                for page in reader.pages(info, on_restart=kept.clear):
                    kept.extend(o for o in page if _top_level(o))
            except ListError as exc:
                if info.custom and exc.status == HTTP_NOT_FOUND:
                    continue  # the CRD is not installed: no policies of that kind
                fail(f"listing {info.plural}.{info.group or 'core'}: {exc}")
            objects.extend(kept)
    return objects


@app.command("reach")
def reach(
    paths: Annotated[
        list[str] | None, typer.Argument(help="Manifests: files, directories, `-` for stdin.")
    ] = None,
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
    context: Annotated[
        str | None, typer.Option("--context", help="Read a live cluster (this kubeconfig context).")
    ] = None,
    kubeconfig: Annotated[str | None, typer.Option("--kubeconfig", help="kubeconfig for --context.")] = None,
) -> None:
    """For each workload, every peer it can open a connection to (workloads, IP blocks) and the ports.

    A connection is allowed when the source's egress and the destination's ingress both allow it,
    over every policy read: NetworkPolicy, AdminNetworkPolicy / BaselineAdminNetworkPolicy, Cilium
    and Calico policies. `--format connlist` prints np-guard/netpol-analyzer's
    `src => dst : conn` lines (with ingress from outside the cluster too, unless --workload is given).
    """
    if bool(paths) == (context is not None):
        fail("give manifests (PATH…) or --context, one of the two")
    objects = (
        _cluster_objects(context, kubeconfig) if context is not None else _objects(paths or [], exclude or [])
    )
    try:
        analysis = Reachability(objects)
    except (SelectorError, PodsDiffer) as exc:
        fail(str(exc))
    sources = sorted(analysis.workloads, key=lambda w: w.key)
    if workload is not None:
        namespace, sep, name = workload.partition("/")
        if not sep or not namespace or not name:
            fail(f"--workload {workload!r}: expected NAMESPACE/NAME")
        sources = analysis.find(namespace, name)
        if not sources:
            where = "cluster" if context else "manifests read"
            fail(f"--workload {workload!r}: no such workload in the {where}")
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
        name = rep[
            "workload"
        ]  # names hold brackets (`[Deployment]`, `workerGroupSpecs[gpu]`): Text, never markup
        if not rep["destinations"]:
            table.add_row(Text(name), Text(isolation), Text("(nothing)"), Text(""))
        for i, dest in enumerate(rep["destinations"]):
            peer = ", ".join(dest["cidrs"]) if dest["type"] == "ipBlock" else dest["peer"]
            table.add_row(
                Text(name if i == 0 else ""),
                Text(isolation if i == 0 else ""),
                Text(peer),
                Text(dest["conn"]),
            )
    # Never truncate a workload name or a port list: a report is read by people and by grep alike.
    for col in table.columns:
        col.overflow = "fold"
    return table_text(table, key=2)
