"""`stockade audit`: the live-cluster gate, across many kubeconfig contexts."""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from stockade.cli.errors import EXIT_USAGE, fail, resolve
from stockade.cli.loading import EngineName, EngineOption, OpaUrlOption, load_evaluator, remote_url
from stockade.cli.output import emit
from stockade.cli.scan import FailOn, Format, exit_code
from stockade.scanner.audit import (
    DEFAULT_PARALLEL,
    QuietProgress,
    Target,
    audit_cluster_roles,
    kinds_to_list,
    run_audit,
)
from stockade.scanner.azure_audit import evaluate_azure, list_azure
from stockade.scanner.reports import get_report
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, default_workers
from stockade.scanner.sources.cluster import DEFAULT_BURST, DEFAULT_QPS, ClusterReader, Deadlines

_DEADLINES = Deadlines()


class AzureAuth(enum.StrEnum):
    """`--auth`: where the Azure credential comes from."""

    cli = "cli"
    workload_identity = "workload-identity"
    default = "default"


def contexts_of(kubeconfig: Path | None) -> tuple[list[str], str | None]:
    """The context names of a kubeconfig, and its current context."""
    from kubernetes import config as k8s_config

    list_contexts: Any = k8s_config.list_kube_config_contexts  # untyped in some client versions
    try:
        contexts, current = list_contexts(config_file=str(kubeconfig) if kubeconfig else None)
    except Exception as exc:  # missing file, invalid YAML, no contexts
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        fail(f"{where}: cannot read kubeconfig: {str(exc).splitlines()[0] if str(exc) else exc}")
    return [c["name"] for c in contexts], (current or {}).get("name")


def _kubeconfig_exists() -> bool:
    """Whether the default kubeconfig ($KUBECONFIG's files, else ~/.kube/config) exists at all."""
    paths = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    return any(Path(p).expanduser().is_file() for p in paths or ["~/.kube/config"])


def _chosen_contexts(kubeconfig: Path | None, context: list[str] | None, all_contexts: bool) -> list[str]:
    names, current = contexts_of(kubeconfig)
    if all_contexts:
        return names
    if context:
        unknown = [c for c in context if c not in names]
        if unknown:
            fail(f"unknown context(s): {', '.join(unknown)} (known: {', '.join(names) or 'none'})")
        return list(dict.fromkeys(context))
    if current:
        return [current]
    fail("no --context given and the kubeconfig has no current context")


def audit(
    context: Annotated[
        list[str] | None, typer.Option("--context", help="kubeconfig context (repeat).")
    ] = None,
    all_contexts: Annotated[bool, typer.Option("--all-contexts", help="Every context.")] = False,
    kubeconfig: Annotated[Path | None, typer.Option("--kubeconfig", help="kubeconfig file.")] = None,
    in_cluster: Annotated[
        str | None,
        typer.Option(
            "--in-cluster",
            metavar="NAME",
            help="Audit the cluster this pod runs in (its ServiceAccount), named NAME in reports.",
        ),
    ] = None,
    push_metrics: Annotated[
        str | None,
        typer.Option(
            "--push-metrics", metavar="URL", help="Push finding counts to this Prometheus Pushgateway."
        ),
    ] = None,
    metrics_file: Annotated[
        Path | None,
        typer.Option(
            "--metrics-file",
            metavar="FILE",
            help="Write finding counts for node_exporter's textfile collector.",
        ),
    ] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="Report format.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="stockade.yaml")] = None,
    policy_dir: Annotated[list[Path] | None, typer.Option("--policy-dir", help="Extra Rego rules.")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Lowest action that fails.")] = FailOn.deny,
    fail_on_gaps: Annotated[
        bool,
        typer.Option(
            "--fail-on-gaps/--no-fail-on-gaps",
            help="Exit 2 when anything could not be read (a coverage gap): the audit is incomplete.",
        ),
    ] = True,
    framework: Annotated[
        str | None, typer.Option("--framework", help="Only this framework's rules, with per-control results.")
    ] = None,
    write_policy_reports: Annotated[
        bool, typer.Option("--write-policy-reports", help="Write PolicyReport objects back to each cluster.")
    ] = False,
    qps: Annotated[float, typer.Option("--qps", help="API requests per second per cluster.")] = DEFAULT_QPS,
    burst: Annotated[int, typer.Option("--burst", help="API request burst per cluster.")] = DEFAULT_BURST,
    answer_timeout: Annotated[
        float,
        typer.Option(
            "--answer-timeout",
            metavar="SECONDS",
            help="A cluster that has not answered at all within this is unreachable.",
        ),
    ] = _DEADLINES.answer,
    kind_timeout: Annotated[
        float,
        typer.Option(
            "--kind-timeout", metavar="SECONDS", help="One kind's list (all pages, retries); then a gap."
        ),
    ] = _DEADLINES.kind,
    cluster_timeout: Annotated[
        float,
        typer.Option(
            "--cluster-timeout",
            metavar="SECONDS",
            help="All of one cluster's lists; what is not listed by then is a gap.",
        ),
    ] = _DEADLINES.cluster,
    workers: Annotated[int | None, typer.Option("--workers", help="Evaluation processes.")] = None,
    parallel: Annotated[
        int,
        typer.Option(
            "--parallel",
            min=1,
            metavar="N",
            help="Clusters held at once (listing or being evaluated); memory grows with it, not with "
            "the number of clusters. A 150,000-pod cluster takes about 0.4 GiB.",
        ),
    ] = DEFAULT_PARALLEL,
    engine: EngineOption = EngineName.embedded,
    opa_url: OpaUrlOption = None,
    print_rbac: Annotated[
        bool, typer.Option("--print-rbac", help="Print the least ClusterRoles the audit needs, and exit.")
    ] = False,
    azure_subscription: Annotated[
        list[str] | None,
        typer.Option(
            "--azure-subscription", help="Also audit this Azure subscription's storage and AKS (repeat)."
        ),
    ] = None,
    auth: Annotated[
        AzureAuth,
        typer.Option("--auth", help="Azure credential: az login, workload identity, or the default chain."),
    ] = AzureAuth.cli,
) -> None:
    """Audit live clusters (kubeconfig contexts) against the policy library: one report for the fleet."""
    if qps <= 0 or burst < 1:
        fail("--qps must be > 0 and --burst >= 1")
    if not min(answer_timeout, kind_timeout, cluster_timeout) > 0:
        fail("--answer-timeout, --kind-timeout and --cluster-timeout must be > 0 seconds")
    deadlines = Deadlines(answer=answer_timeout, kind=kind_timeout, cluster=cluster_timeout)
    if print_rbac:
        import yaml

        evaluator, _ = load_evaluator(config, policy_dir or [])
        roles = audit_cluster_roles(kinds_to_list(evaluator))
        typer.echo(yaml.safe_dump_all(roles, sort_keys=False), nl=False)
        raise typer.Exit(0)
    if in_cluster is not None:
        if context or all_contexts or kubeconfig or azure_subscription:
            fail(
                "--in-cluster audits this cluster only: drop --context, --all-contexts, --kubeconfig"
                " and --azure-subscription"
            )
        chosen = [in_cluster]
    elif azure_subscription and not (context or all_contexts or kubeconfig) and not _kubeconfig_exists():
        # An Azure-only audit: no kubeconfig to read, and none asked for (issue 38)
        typer.echo("stockade: no kubeconfig: auditing the Azure subscriptions only", err=True)
        chosen = []
    else:
        chosen = _chosen_contexts(kubeconfig, context, all_contexts)
    remote = remote_url(engine, opa_url)
    if remote is not None and framework is not None:
        fail("--framework is not available with --engine opa")
    evaluator, cfg = load_evaluator(config, policy_dir or [], remote)
    if workers is not None and workers < 1:
        fail("--workers must be >= 1")
    if remote is not None:
        workers = 1  # the server evaluates; worker processes would run the embedded engine
    options = ScanOptions(cfg, tuple(policy_dir or ()), workers if workers is not None else default_workers())
    if framework is not None:
        from stockade.policies.compliance import FRAMEWORKS, FrameworkError, restrict_to_framework

        # any spelling (NSA_CISA, cis-K8s), and "did you mean" otherwise, as `policy list --framework`
        framework = resolve("framework", framework, FRAMEWORKS)
        try:
            evaluator = restrict_to_framework(evaluator, framework)
        except FrameworkError as exc:
            fail(str(exc))
    config_file = str(kubeconfig) if kubeconfig else None
    clients: dict[str, Any] = {}
    if in_cluster is not None:
        targets = [Target(in_cluster, lambda: _in_cluster_reader(in_cluster, qps, burst, deadlines, clients))]
    else:
        targets = [
            Target(
                name,
                lambda n=name: ClusterReader.from_kubeconfig(  # type: ignore[misc]
                    config_file, n, qps=qps, burst=burst, deadlines=deadlines
                ),
            )
            for name in chosen
        ]
    from stockade.cli.main import tool_version

    writer = None
    if write_policy_reports:
        from stockade.scanner.policyreports import PolicyReportWriter

        writer = PolicyReportWriter(config_file, clients)

    def notify(line: str) -> None:
        typer.echo(f"stockade: {line}", err=True)

    # Azure is listed first: each AKS context's inventory then holds its managed cluster, for the
    # cross-layer rules (STK-AZ-035..038); the Azure resources are evaluated after the clusters
    listing = list_azure(
        azure_subscription or [], auth=auth.value, contexts=chosen, kubeconfig=kubeconfig, notify=notify
    )
    with _progress() as progress:
        result = run_audit(
            targets,
            evaluator,
            version=tool_version(),
            progress=progress,
            on_snapshot=writer.write if writer is not None else None,
            options=options,
            cluster_layer=listing.cluster_layer,
            max_parallel=parallel,
        )
    if azure_subscription:
        evaluate_azure(result, evaluator, listing, contexts=chosen, notify=notify)
    if framework is not None:
        result.framework = framework
    emit(get_report(format.value), result, output, terminal_colors=format == Format.table)
    print_summary(result)
    if writer is not None:
        for line in writer.messages:
            typer.echo(f"stockade: {line}", err=True)
    _export_metrics(result, push_metrics, metrics_file)
    raise typer.Exit(audit_exit_code(result, fail_on, fail_on_gaps))


def audit_exit_code(result: Result, fail_on: FailOn, fail_on_gaps: bool) -> int:
    """The audit's exit code: a scan's (exit_code), but 2 when a cluster could not be audited, or
    (with `fail_on_gaps`) when anything could not be read."""
    code = exit_code(result, fail_on)
    if any(not c.reachable for c in result.clusters):
        return EXIT_USAGE
    if result.gaps and fail_on_gaps:
        # An incomplete audit is not a verdict: what could not be read may hold the violations.
        typer.echo(
            f"stockade: audit incomplete: {len(result.gaps)} coverage gap(s); exit 2 "
            "(--no-fail-on-gaps reports them without failing)",
            err=True,
        )
        return EXIT_USAGE
    return code


def _in_cluster_reader(
    name: str, qps: float, burst: int, deadlines: Deadlines, clients: dict[str, Any]
) -> ClusterReader:
    # not in a pod (no token, no KUBERNETES_SERVICE_HOST): the audit reports the cluster as not audited
    reader = ClusterReader.in_cluster(name, qps=qps, burst=burst, deadlines=deadlines)
    clients[name] = reader.api_client  # the PolicyReports go back through the same identity
    return reader


def _export_metrics(result: Result, push_metrics: str | None, metrics_file: Path | None) -> None:
    from stockade.scanner import metrics

    if push_metrics:
        for line in metrics.push(result, push_metrics):
            typer.echo(f"stockade: {line}", err=True)
    if metrics_file is not None:
        try:
            metrics.write_textfile(result, metrics_file)
        except OSError as exc:
            typer.echo(f"stockade: {metrics_file}: metrics not written: {exc.strerror or exc}", err=True)


def print_summary(result: Result) -> None:
    """The audit's one-line summary on stderr, then each input error and coverage gap."""
    s = result.summary()
    by_action = s["by_action"]
    assert isinstance(by_action, dict)
    audited = sum(1 for c in result.clusters if c.reachable)
    typer.echo(
        f"stockade: {audited}/{len(result.clusters)} clusters, {s['resources']} workloads and objects, "
        f"{s['findings']} findings ({by_action['deny']} deny, {by_action['warn']} warn, "
        f"{by_action['audit']} audit), {s['waived']} waived, {len(result.gaps)} coverage gaps",
        err=True,
    )
    # the errors first: a gap may be their consequence ("Azure checks skipped: ... see the error above")
    for err in result.errors:
        typer.echo(f"stockade: {err}", err=True)
    for gap in result.gaps:
        typer.echo(f"stockade: gap: {gap.scope}: {gap.message}", err=True)


class _RichProgress:
    """One line per cluster: objects listed, evaluated, findings (stderr, terminals only)."""

    def __init__(self, console: Any = None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("{task.fields[cluster]:<24}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            transient=False,
            console=console,
        )
        self.tasks: dict[str, Any] = {}
        self.listed_total: dict[str, int] = {}

    def _task(self, cluster: str) -> Any:
        if cluster not in self.tasks:
            self.tasks[cluster] = self.bar.add_task("listing", total=None, cluster=cluster)
        return self.tasks[cluster]

    def listed(self, cluster: str, kind: str, objects: int) -> None:
        total = self.listed_total[cluster] = self.listed_total.get(cluster, 0) + objects
        self.bar.update(self._task(cluster), description=f"listed {total:,} objects ({kind})")

    def evaluating(self, cluster: str, total: int) -> None:
        self.bar.update(self._task(cluster), total=total, completed=0, description="evaluating")

    def evaluated(self, cluster: str, done: int, findings: int) -> None:
        self.bar.update(self._task(cluster), completed=done, description=f"{findings:,} findings")

    def finished(self, cluster: str, ok: bool, message: str) -> None:
        task = self._task(cluster)
        if not ok:
            self.bar.update(task, total=1, completed=0, description=f"[red]not audited: {message}")

    def __enter__(self) -> _RichProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)


def _progress() -> _RichProgress | QuietProgress:
    """A live display on a terminal; nothing in CI or when stderr is redirected."""
    if sys.stderr.isatty() and not os.environ.get("CI"):
        return _RichProgress()
    return QuietProgress()
