"""`stockade scan PATH…`: the CI gate."""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stockade.cli.errors import EXIT_CLEAN, EXIT_USAGE, EXIT_VIOLATIONS, fail
from stockade.cli.loading import EngineName, EngineOption, OpaUrlOption, load_evaluator, remote_url

if TYPE_CHECKING:  # the pipeline is imported when a scan runs, not for `scan --help`
    from stockade.scanner.result import Result
    from stockade.scanner.sources.base import Item


class Format(enum.StrEnum):
    """The report formats (kept equal to scanner.reports.FORMATS by a test)."""

    table = "table"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    markdown = "markdown"
    html = "html"


class FailOn(enum.StrEnum):
    deny = "deny"
    warn = "warn"
    never = "never"


def exit_code(result: Result, fail_on: FailOn) -> int:
    from stockade.policies.model import Action

    if result.errors:
        return EXIT_USAGE
    failing = {FailOn.deny: {Action.DENY}, FailOn.warn: {Action.DENY, Action.WARN}, FailOn.never: set()}[
        fail_on
    ]
    return EXIT_VIOLATIONS if any(f.action in failing for f in result.active) else EXIT_CLEAN


def scan(
    paths: Annotated[list[str] | None, typer.Argument(help="Files or directories; `-` reads stdin.")] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="Report format.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="stockade.yaml")] = None,
    policy_dir: Annotated[list[Path] | None, typer.Option("--policy-dir", help="Extra Rego rules.")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Lowest action that fails.")] = FailOn.deny,
    include: Annotated[list[str] | None, typer.Option("--include", help="Glob of files to read.")] = None,
    exclude: Annotated[
        list[str] | None, typer.Option("--exclude", help="Glob of files/dirs to skip.")
    ] = None,
    kustomize: Annotated[list[str] | None, typer.Option("--kustomize", help="Render DIR first.")] = None,
    helm: Annotated[list[str] | None, typer.Option("--helm", help="Render CHART with helm template.")] = None,
    values: Annotated[list[str] | None, typer.Option("--values", help="Values file for --helm.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Evaluation processes.")] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster", help="The target cluster's name: its sandbox profile, overrides, exceptions."
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            "-n",
            help="Namespace of namespaced objects that name none (as kubectl apply -n would place them).",
        ),
    ] = None,
    engine: EngineOption = EngineName.embedded,
    opa_url: OpaUrlOption = None,
    allow_empty: Annotated[
        bool,
        typer.Option("--allow-empty", help="Exit 0 when the paths hold no Kubernetes object (else exit 2)."),
    ] = False,
) -> None:
    """Scan Kubernetes manifests (YAML/JSON, Helm and Kustomize output) against the policy library.

    Helm charts found in the paths (a Chart.yaml) are rendered with `helm template`; files holding no
    Kubernetes object are skipped and counted. Finding no object at all is an error (a mistyped path
    in CI must not pass) unless --allow-empty is given."""
    if not paths and not kustomize and not helm:
        fail("nothing to scan: give a PATH, `-` for stdin, --kustomize DIR or --helm CHART")
    if values and not helm:
        fail("--values needs --helm")
    from stockade.policies.model import InputError
    from stockade.scanner.reports import get_report
    from stockade.scanner.reports.base import count
    from stockade.scanner.scan import ScanOptions, default_workers, run_scan
    from stockade.scanner.sources.files import FileSource
    from stockade.scanner.sources.render import HelmSource, KustomizeSource

    remote = remote_url(engine, opa_url)
    evaluator, cfg = load_evaluator(config, policy_dir or [], remote)
    if remote is not None:
        workers = 1  # the server evaluates; worker processes would run the embedded engine
    files = FileSource(paths or [], include or (), exclude or ())
    others: list[Iterable[Item]] = [KustomizeSource(d) for d in kustomize or ()]
    others += [HelmSource(c, tuple(values or ())) for c in helm or ()]
    from stockade.cli.main import tool_version

    options = ScanOptions(
        cfg,
        tuple(policy_dir or ()),
        workers if workers is not None else default_workers(),
        cluster,
        namespace,
    )
    result = _with_progress(
        lambda progress: run_scan(
            files, others, evaluator, options, version=tool_version(), progress=progress
        )
    )
    if not allow_empty and not result.errors and result.objects_read == 0:
        where = f"{count(result.files, 'file')} read, {len(result.skipped)} without Kubernetes objects"
        result.errors.append(
            InputError(
                " ".join(paths or kustomize or helm or []),
                f"no Kubernetes object found ({where}); --allow-empty accepts that",
            )
        )
    if result.namespaceless:
        first = result.namespaceless[0]
        typer.echo(
            f"stockade: note: {count(len(result.namespaceless), 'namespaced object')} "
            f"{'names' if len(result.namespaceless) == 1 else 'name'} no namespace "
            f"(first: {first}); judged as in namespace default, where kubectl apply would put them; "
            "give --namespace NS for the namespace they are deployed to",
            err=True,
        )
    fmt = format.value
    report = get_report(fmt)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(report.render(result), encoding="utf-8")
        _summary_line(result)
    else:
        text = report.render(result, color=fmt == "table" and sys.stdout.isatty())
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    raise typer.Exit(exit_code(result, fail_on))


def _summary_line(result: Result) -> None:
    s = result.summary()
    by_action = s["by_action"]
    assert isinstance(by_action, dict)
    typer.echo(
        f"stockade: {s['resources']} resources, {s['findings']} findings "
        f"({by_action['deny']} deny, {by_action['warn']} warn, {by_action['audit']} audit), "
        f"{s['waived']} waived, {s['errors']} errors",
        err=True,
    )
    for err in result.errors:
        typer.echo(f"stockade: {err}", err=True)


def _with_progress(run: Callable[[Callable[[int], None] | None], Result]) -> Result:
    """A progress bar on a terminal (it appears only once evaluation is long); quiet in CI and pipes."""
    if not sys.stderr.isatty():
        return run(None)
    from rich.progress import Progress

    # refreshed by the scan's own progress, never by a thread of its own: the scan forks worker
    # processes, and a thread writing to the terminal during a fork could leave them a held lock
    with Progress(transient=True, auto_refresh=False) as bar:
        task = bar.add_task("evaluating", total=None)

        def advance(n: int) -> None:
            bar.advance(task, n)
            bar.refresh()

        return run(advance)
