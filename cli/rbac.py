"""`stockade rbac who-can|explain|escalations`: queries of the RBAC graph (policies/facts/rbac.py).

The graph is read from manifests (PATH…, with the file source every command uses) or from a live
cluster (`--context`): the four RBAC kinds only, through the audit's
:class:`~stockade.scanner.sources.cluster.ClusterReader` (raw JSON in pages of 500, the client-side
rate limit, retries on 429/5xx), so a query never loads the API server more than an audit does.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

import orjson
import typer
from rich.table import Table
from rich.text import Text

from stockade.cli.errors import fail
from stockade.cli.loading import read_objects
from stockade.policies.facts.rbac import CORE_RESOURCES, KNOWN_GROUPS, Grant, PolicyRule, RBACGraph, Subject
from stockade.policies.kinds.api import KINDS
from stockade.scanner.reports.layout import console, print_table, print_text
from stockade.scanner.sources.cluster import ClusterReader, ListError

app = typer.Typer(
    rich_markup_mode=None,
    help="RBAC least privilege: who can do what, what a subject may do, escalation paths.",
    no_args_is_help=True,
)

#: the RBAC kinds read from a cluster
CLUSTER_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


class OutFormat(enum.StrEnum):
    table = "table"
    json = "json"


Paths = Annotated[list[str] | None, typer.Argument(help="Manifest files or directories; `-` reads stdin.")]
Context = Annotated[
    str | None, typer.Option("--context", help="Read RBAC objects from this kubeconfig context.")
]
Kubeconfig = Annotated[str | None, typer.Option("--kubeconfig", help="kubeconfig file for --context.")]
Format = Annotated[OutFormat, typer.Option("--format", "-f", help="Output format.")]
Exclude = Annotated[list[str] | None, typer.Option("--exclude", help="Glob of files/dirs to skip.")]


# ---- reading ------------------------------------------------------------------------------------------


def _file_objects(paths: list[str], exclude: list[str]) -> Iterator[Mapping[str, Any]]:
    yield from read_objects(paths, exclude)


def cluster_objects(context: str | None, kubeconfig: str | None = None) -> Iterator[Mapping[str, Any]]:
    """Roles, ClusterRoles and their bindings of a cluster, page by page; any failure is one line."""
    from kubernetes.config import ConfigException

    try:
        reader = ClusterReader.from_kubeconfig(kubeconfig, context)
    except (ConfigException, OSError) as exc:
        fail(f"kubeconfig: {exc}")
    with reader:
        for kind in CLUSTER_KINDS:
            info = KINDS[kind]
            try:
                for page in reader.pages(info):
                    yield from page
            except ListError as exc:
                fail(f"listing {info.plural}: HTTP {exc}" if exc.status else f"listing {info.plural}: {exc}")
        # the accounts pods run as, for paths through exec, attach and nodes/proxy: optional, but a
        # failure is said, never silent (the paths are then not followed)
        info = KINDS["Pod"]
        try:
            for page in reader.pages(info):
                yield from page
        except ListError as exc:
            typer.echo(
                f"stockade: warning: listing pods: {exc}; paths through running pods are not followed",
                err=True,
            )


def _graph(
    paths: list[str] | None, context: str | None, kubeconfig: str | None, exclude: list[str] | None = None
) -> RBACGraph:
    if paths and context is not None:
        fail("give manifest PATH… or --context, not both")
    if not paths and context is None:
        fail("give manifest PATH… or --context")
    objects = (
        cluster_objects(context, kubeconfig)
        if context is not None
        else _file_objects(paths or [], exclude or [])
    )
    return RBACGraph.from_objects(objects)


# ---- output -------------------------------------------------------------------------------------------


def _emit(data: object) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


def _row(table: Table, *cells: str) -> None:
    """Names (users, groups) are data, never rich markup."""
    table.add_row(*(Text(c) for c in cells))


def _rule_text(rule: PolicyRule) -> str:
    verbs = ",".join(sorted(rule.verbs))
    if rule.non_resource_urls:
        return f"{verbs} {','.join(sorted(rule.non_resource_urls))}"
    groups = ",".join(g or "core" for g in sorted(rule.api_groups))
    names = f" names={','.join(sorted(rule.resource_names))}" if rule.resource_names else ""
    return f"{verbs} {','.join(sorted(rule.resources))} [{groups}]{names}"


def _grant_json(grant: Grant, graph: RBACGraph) -> dict[str, Any]:
    """`bootstrap`: a binding of the Kubernetes bootstrap policy the inputs did not define."""
    bootstrap = grant.binding.key in graph.bootstrap_keys
    return {**grant.as_json(), "rules": [r.as_json() for r in grant.rules], "bootstrap": bootstrap}


def _plural(name: str, group: str | None) -> str:
    """kubectl's singular and kind spellings (`pod`, `Pod`, `deployment`) as the plural RBAC uses;
    anything else as given."""
    for info in KINDS.values():
        if name.lower() in (info.kind.lower(), info.plural) and (group is None or group == info.group):
            return info.plural
    return name


def parse_resource(resource: str, subresource: str | None, api_group: str | None) -> tuple[str, str, str]:
    """kubectl's spelling: `pods`, `pod`, `pods/exec`, `deployments.apps`; bare built-ins get their
    group. A resource that is neither core, nor a built-in of another group, nor a custom kind stockade
    knows must name its group: assuming the core group would answer about a resource that does not
    exist (nobody, a silent "nobody can")."""
    res, _, sub = resource.partition("/")
    res, dot, group = res.partition(".")
    res = _plural(res, group if dot else api_group)
    if not dot and api_group is None:
        custom = {info.plural: info.group for info in KINDS.values() if info.custom}
        if res in KNOWN_GROUPS:
            group = KNOWN_GROUPS[res]
        elif res in CORE_RESOURCES or res == "*":
            group = ""
        elif res in custom:
            group = custom[res]
        else:
            fail(
                f"RESOURCE {resource!r}: not a core or built-in resource stockade knows; "
                f"give its group ({res}.GROUP or --api-group GROUP, '' for core)"
            )
    elif not dot:
        group = api_group or ""
    if subresource:
        sub = subresource
    if not res:
        fail(f"RESOURCE {resource!r}: no resource name")
    return group, res, sub


# ---- commands ---------------------------------------------------------------------------------------


@app.command("who-can")
def who_can(
    verb: Annotated[str, typer.Argument(help="get, list, create, impersonate, bind, ...")],
    resource: Annotated[
        str, typer.Argument(help="pods, pods/exec, deployments.apps, or a non-resource URL such as /metrics.")
    ],
    paths: Paths = None,
    subresource: Annotated[str | None, typer.Option("--subresource", help="e.g. exec, token.")] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="Request in this namespace (default: cluster-wide)."),
    ] = None,
    name: Annotated[str, typer.Option("--name", help="A named object (for resourceNames rules).")] = "",
    api_group: Annotated[str | None, typer.Option("--api-group", help="API group of RESOURCE.")] = None,
    context: Context = None,
    kubeconfig: Kubeconfig = None,
    exclude: Exclude = None,
    format: Format = OutFormat.table,
) -> None:
    """Subjects that may make a request, with the binding and role that allow it.

    Without -n the request is cluster-wide (all namespaces, or a cluster-scoped resource), which
    only ClusterRoleBindings grant; with -n, RoleBindings of that namespace count too.
    """
    graph = _graph(paths, context, kubeconfig, exclude)
    if resource.startswith("/"):
        found = graph.who_can_url(verb, resource)
        request: dict[str, Any] = {"verb": verb, "nonResourceURL": resource}
    else:
        group, res, sub = parse_resource(resource, subresource, api_group)
        if name and verb == "create" and not sub:
            # kubectl auth can-i says nothing here either; say why the name is not used
            typer.echo(f"stockade: note: a create carries no name, so --name {name} does not apply", err=True)
        found = graph.who_can(verb, group, res, sub, namespace, name)
        request = {"verb": verb, "apiGroup": group, "resource": res, "subresource": sub, "name": name}
        request["namespace"] = namespace
    if format is OutFormat.json:
        _emit({"request": request, "subjects": [{"subject": s.as_json(), **g.as_json()} for s, g in found]})
        return
    where = f"in namespace {namespace}" if namespace else "cluster-wide"
    title = f"who can {verb} {resource}" + (f"/{subresource}" if subresource else "") + f" {where}"
    table = Table(title=f"{title} ({len(found)})")
    for col in ("Subject", "Binding", "Role", "Scope"):
        table.add_column(col)
    for s, g in found:
        _row(table, str(s), str(g.binding), g.binding.role, g.scope_text)
    print_table(table)


@app.command("explain")
def explain(
    subject: Annotated[
        str,
        typer.Argument(
            help="User:NAME, Group:NAME, ServiceAccount:NS/NAME or system:serviceaccount:NS:NAME."
        ),
    ],
    paths: Paths = None,
    context: Context = None,
    kubeconfig: Kubeconfig = None,
    exclude: Exclude = None,
    format: Format = OutFormat.table,
) -> None:
    """Every permission of a subject, the binding and role that grant it, and where it leads."""
    try:
        who = Subject.parse(subject)
    except ValueError as exc:
        fail(str(exc))
    graph = _graph(paths, context, kubeconfig, exclude)
    grants = graph.grants_of(who)
    risky = graph.risky(who)
    escalations = graph.escalations_from(who)
    if format is OutFormat.json:
        _emit(
            {
                "subject": who.as_json(),
                "identities": [str(i) for i in who.identities()],
                "grants": [_grant_json(g, graph) for g in grants],
                "risky": [r.as_json() for r in risky],
                "escalations": [p.as_json() for p in escalations],
            }
        )
        return
    out = console()
    implicit = [g for g in grants if g.binding.key in graph.bootstrap_keys]
    own = [g for g in grants if g.binding.key not in graph.bootstrap_keys]
    identities = ", ".join(str(i) for i in who.identities())
    table = Table(title=f"{who}: {len(own)} bindings (as {identities})")
    for col in ("Via", "Binding", "Role", "Scope", "Rules"):
        table.add_column(col)
    for g in own:
        rules = "\n".join(_rule_text(r) for r in g.rules) or ("(role not found)" if not g.role_found else "")
        _row(table, str(g.via), str(g.binding), g.binding.role, g.scope_text, rules)
    print_table(table, out=out)
    if implicit:
        names = ", ".join(sorted({g.binding.name for g in implicit}))
        bootstrap = f"and {len(implicit)} of the Kubernetes bootstrap policy (-f json lists them)"
        print_text(out, Text(f"{bootstrap}: {names}"))
    if risky:
        rt = Table(title="escalation-capable permissions")
        for col in ("Rule", "Permission", "Scope", "Binding", "Role"):
            rt.add_column(col)
        for r in risky:
            _row(rt, r.id, r.permission, r.grant.scope_text, str(r.grant.binding), r.grant.binding.role)
        print_table(rt, key=2, out=out)
    for p in escalations:  # wrapped at spaces: a resource or subject name is never split
        steps = "; then ".join(s.text() for s in p.steps)
        print_text(out, Text(f"escalation to {p.target_text}: {steps}"))
        print_text(out, Text(f"gains: {', '.join(p.gains)}"), indent=2)


@app.command("escalations")
def escalations(
    paths: Paths = None,
    context: Context = None,
    kubeconfig: Kubeconfig = None,
    exclude: Exclude = None,
    format: Format = OutFormat.table,
) -> None:
    """Every escalation path of every subject the bindings name, shortest first."""
    graph = _graph(paths, context, kubeconfig, exclude)
    found = graph.all_escalations()
    if format is OutFormat.json:
        _emit([p.as_json() for p in found])
        return
    table = Table(title=f"escalation paths ({len(found)})")
    for col in ("Subject", "Escalates to", "Steps", "Gains"):
        table.add_column(col)
    for p in found:
        _row(table, str(p.start), p.target_text, "\n".join(s.text() for s in p.steps), "\n".join(p.gains))
    print_table(table, key=2)
