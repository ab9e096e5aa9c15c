"""`stockade scan PATH…`: the CI gate."""

# No `from __future__ import annotations` here: typer reads the options from the command's
# annotations, and string annotations are evaluated (compiled) twice per option at every start,
# 3 ms of a one-file scan; names imported for type checking only are quoted instead.
import enum
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stockade.cli.collector import resume_collector
from stockade.cli.errors import EXIT_CLEAN, EXIT_USAGE, EXIT_VIOLATIONS, did_you_mean, fail
from stockade.cli.loading import EngineName, EngineOption, OpaUrlOption, load_evaluator, remote_url
from stockade.cli.output import emit

if TYPE_CHECKING:  # the pipeline is imported when a scan runs, not for `scan --help`
    from stockade.policies.config.settings import Config
    from stockade.policies.evaluate import Evaluator
    from stockade.scanner.baseline import BaselineMatcher
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


class FailSeverity(enum.StrEnum):
    """The severities of policies.model.Severity (kept equal by a test), lowest first."""

    info = "info"
    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"


def exit_code(result: "Result", fail_on: FailOn, fail_on_severity: FailSeverity = FailSeverity.info) -> int:
    """2 for input errors; 1 when an active finding's action is at or above `fail_on` *and* its rule's
    severity at or above `fail_on_severity`; else 0."""
    from stockade.policies.model import Action, Severity

    if result.errors:
        return EXIT_USAGE
    failing = {FailOn.deny: {Action.DENY}, FailOn.warn: {Action.DENY, Action.WARN}, FailOn.never: set()}[
        fail_on
    ]
    lowest = Severity.parse(fail_on_severity.value)
    hit = any(f.action in failing and f.rule.severity >= lowest for f in result.active)
    return EXIT_VIOLATIONS if hit else EXIT_CLEAN


def select_rules(
    config: "Config", rule_ids: Collection[str], only: Sequence[str], skip: Sequence[str]
) -> "Config":
    """`config` with the rules outside `--rule` patterns (when any is given) or inside `--skip-rule`
    patterns turned off, as `rules: {ID: {enabled: false}}` in stockade.yaml would (so worker
    processes, the OPA bundle filter and the report see the same rule set). Patterns are shell-style
    (`STK-RBAC-*`), matched without regard to case; one naming no rule is exit 2 with the closest ids,
    as the config's own rule ids are. A rule the config turns off stays off."""
    import fnmatch

    from stockade.policies.config.settings import RuleSetting

    ids = sorted(rule_ids)

    def matching(option: str, patterns: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for pattern in patterns:
            hits = {rid for rid in ids if fnmatch.fnmatchcase(rid.upper(), pattern.strip().upper())}
            if not hits:
                fail(f"{option}: {pattern!r} names no rule of the library{did_you_mean(pattern, ids)}")
            found |= hits
        return found

    keep = matching("--rule", only) if only else set(ids)
    keep -= matching("--skip-rule", skip)
    if not keep:
        fail("--rule/--skip-rule leave no rule to run")
    rules = dict(config.rules)
    for rid in ids:
        if rid not in keep:
            rules[rid] = (rules.get(rid) or RuleSetting()).model_copy(update={"enabled": False})
    return config.model_copy(update={"rules": rules})


def _evaluator(
    config_path: Path | None,
    policy_dirs: Sequence[Path],
    remote: str | None,
    only: Sequence[str],
    skip: Sequence[str],
) -> tuple["Evaluator", "Config"]:
    """The evaluator and config of the scan, with the rule selection of the command line applied to
    the config before the engine is built (the rules turned off are never evaluated)."""
    if not only and not skip:
        return load_evaluator(config_path, policy_dirs, remote)
    from stockade.policies.config.settings import ConfigError, load_config
    from stockade.policies.engines.library import PolicyError, load_library
    from stockade.policies.evaluate import Evaluator

    try:
        config = load_config(config_path)
        library = load_library(policy_dirs)
        config = select_rules(config, library.rules, only, skip)
        return Evaluator.default(config, policy_dirs, library=library, opa_url=remote), config
    except (ConfigError, PolicyError, ValueError) as exc:
        fail(str(exc))


def _named_files_only(paths: Sequence[str] | None, kustomize: object, helm: object) -> bool:
    """Whether the scan reads only files named one by one (a pre-commit hook, `git diff --name-only`):
    no directory, no stdin, nothing rendered."""
    return (
        bool(paths)
        and not kustomize
        and not helm
        and all(p != "-" and Path(p).is_file() for p in paths or ())
    )


def scan(
    paths: Annotated[list[str] | None, typer.Argument(help="Files or directories; `-` reads stdin.")] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="Report format.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here.")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="stockade.yaml")] = None,
    policy_dir: Annotated[list[Path] | None, typer.Option("--policy-dir", help="Extra Rego rules.")] = None,
    fail_on: Annotated[
        FailOn,
        typer.Option("--fail-on", help="Lowest action that fails (deny, or warn too; never: always exit 0)."),
    ] = FailOn.deny,
    fail_on_severity: Annotated[
        FailSeverity,
        typer.Option(
            "--fail-on-severity",
            help="Lowest rule severity that fails. Exit 1 needs a finding that passes both this and "
            "--fail-on (e.g. --fail-on warn --fail-on-severity high: warn or deny findings of high "
            "or critical rules).",
        ),
    ] = FailSeverity.info,
    rule: Annotated[
        list[str] | None,
        typer.Option("--rule", help="Run only these rules (repeatable; ids or patterns such as STK-RBAC-*)."),
    ] = None,
    skip_rule: Annotated[
        list[str] | None,
        typer.Option("--skip-rule", help="Do not run these rules (repeatable; ids or patterns)."),
    ] = None,
    include: Annotated[list[str] | None, typer.Option("--include", help="Glob of files to read.")] = None,
    exclude: Annotated[
        list[str] | None, typer.Option("--exclude", help="Glob of files/dirs to skip.")
    ] = None,
    kustomize: Annotated[list[str] | None, typer.Option("--kustomize", help="Render DIR first.")] = None,
    kubectl: Annotated[
        str | None,
        typer.Option("--kubectl", help="kubectl that renders kustomizations (default: kubectl on PATH)."),
    ] = None,
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
            help="Namespace of namespaced objects that name none (as kubectl apply -n would place them),"
            " and the release namespace of the charts rendered (as helm install -n).",
        ),
    ] = None,
    engine: EngineOption = EngineName.embedded,
    opa_url: OpaUrlOption = None,
    allow_empty: Annotated[
        bool,
        typer.Option(
            "--allow-empty",
            help="Exit 0 when a directory, stdin or a render holds no Kubernetes object (else exit 2).",
        ),
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Accept the findings this baseline file records (shown as waived by it); fail only on "
            "new ones, and list the entries no longer found.",
        ),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline",
            help="Record every finding no exception covers in this baseline file (and accept them in "
            "this run); not written when the scan has input errors.",
        ),
    ] = None,
) -> None:
    """Scan Kubernetes manifests (YAML/JSON, Helm and Kustomize output) against the policy library.

    Helm charts found in the paths (a Chart.yaml) are rendered with `helm template`, kustomizations
    no other kustomization of the scan builds on (each overlay) with `kubectl kustomize`; files holding no
    Kubernetes object are skipped and counted. Finding no object in a directory, stdin or a render is
    an error (a mistyped path in CI must not pass) unless --allow-empty is given; files named one by
    one that hold none (a pre-commit hook given ci.yml and package.json) pass with a note. Invalid
    YAML or an object the API server would refuse is exit 2 either way.

    --rule/--skip-rule select the rules before evaluation (as stockade.yaml `rules:` does).

    --write-baseline FILE records today's findings; later scans with --baseline FILE fail only on
    findings not in it (by rule, object and field: not by file or line)."""
    if not paths and not kustomize and not helm:
        fail("nothing to scan: give a PATH, `-` for stdin, --kustomize DIR or --helm CHART")
    if values and not helm:
        fail("--values needs --helm")
    from stockade.policies.model import InputError
    from stockade.scanner.reports import get_report
    from stockade.scanner.reports.base import count
    from stockade.scanner.scan import ScanOptions, default_workers, run_scan
    from stockade.scanner.sources.files import FileSource

    report = get_report(format.value)
    matcher = _baseline_matcher(baseline, write_baseline)
    remote = remote_url(engine, opa_url)
    evaluator, cfg = _evaluator(config, policy_dir or [], remote, rule or [], skip_rule or [])
    if remote is not None:
        workers = 1  # the server evaluates; worker processes would run the embedded engine
    files = FileSource(paths or [], include or (), exclude or (), kubectl=kubectl, namespace=namespace)
    others: list[Iterable[Item]] = []
    if kustomize or helm:  # the renderers, imported only when asked for (sources/roots.py)
        from stockade.scanner.sources.render import HelmSource, KustomizeSource

        others += [KustomizeSource(d, kubectl) for d in kustomize or ()]
        others += [HelmSource(c, tuple(values or ()), namespace=namespace) for c in helm or ()]
    from stockade.cli.main import tool_version

    options = ScanOptions(
        cfg,
        tuple(policy_dir or ()),
        workers if workers is not None else default_workers(),
        cluster,
        namespace,
        matcher,
    )
    # paused while the options were parsed and the pipeline loaded (cli.collector); run_scan unfreezes
    resume_collector(freeze=True)
    result = _with_progress(
        lambda progress: run_scan(
            files,
            others,
            evaluator,
            options,
            version=tool_version() if report.shows_version else "",
            progress=progress,
        )
    )
    if not result.errors and result.objects_read == 0 and _named_files_only(paths, kustomize, helm):
        typer.echo(
            f"stockade: note: no Kubernetes object in the {count(result.files, 'file')} named "
            "(not manifests); nothing to check",
            err=True,
        )
    elif not allow_empty and not result.errors and result.objects_read == 0:
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
    if result.out_of_scope:
        n = len(result.out_of_scope)
        was, them = ("was", "it") if n == 1 else ("were", "them")
        typer.echo(
            f"stockade: note: {count(n, 'object')} in namespaces scope.excluded_namespaces leaves out "
            f"{was} not judged (first: {result.out_of_scope[0]}); take the namespace out of that list "
            f"(stockade.yaml) to judge {them}",
            err=True,
        )
    if matcher is not None:
        _baseline_outcome(result, cfg, matcher, baseline, write_baseline)
    emit(report, result, output, terminal_colors=format == Format.table)
    if output is not None:
        _summary_line(result)
    raise typer.Exit(exit_code(result, fail_on, fail_on_severity))


def _baseline_matcher(baseline: Path | None, write_baseline: Path | None) -> "BaselineMatcher | None":
    """What --baseline/--write-baseline need during the scan; an unreadable or invalid baseline is
    exit 2 before anything is scanned."""
    if baseline is None and write_baseline is None:
        return None
    from stockade.scanner.baseline import BaselineError, BaselineMatcher, load

    entries = None
    if baseline is not None:
        try:
            entries = load(baseline)
        except BaselineError as exc:
            fail(str(exc))
    source = str(write_baseline if write_baseline is not None else baseline)
    return BaselineMatcher(entries, source, accept_all=write_baseline is not None)


def _baseline_outcome(
    result: "Result",
    config: "Config",
    matcher: "BaselineMatcher",
    baseline: Path | None,
    write_baseline: Path | None,
) -> None:
    """On stderr: how many findings the baseline accepted, how many are new, and the entries no finding
    matched any more (of the rules that ran); then write the new baseline, unless input errors left
    some manifest unchecked."""
    from stockade.scanner.baseline import dumps

    if baseline is not None:
        ran = {rid for rid in result.rules if (s := config.rules.get(rid)) is None or s.enabled}
        fixed = matcher.fixed(ran)
        accepted = matcher.baselined - matcher.new if write_baseline else matcher.baselined
        typer.echo(
            f"stockade: baseline {baseline}: {accepted} "
            f"baselined, {matcher.new} new, "
            f"{len(fixed)} no longer found"
            + (f" (fixed, or not scanned): refresh with --write-baseline {baseline}" if fixed else ""),
            err=True,
        )
        for entry in fixed:
            typer.echo(f"stockade:   no longer found: {entry.display()}", err=True)
    if write_baseline is None:
        return
    if result.errors:
        typer.echo(f"stockade: baseline {write_baseline} not written: the scan had input errors", err=True)
        return
    try:
        write_baseline.parent.mkdir(parents=True, exist_ok=True)
        write_baseline.write_text(dumps(matcher.seen), encoding="utf-8")
    except OSError as exc:
        fail(f"{write_baseline}: cannot write baseline: {exc.strerror or exc}")
    typer.echo(f"stockade: wrote baseline {write_baseline}: {matcher.baselined} findings", err=True)


def _summary_line(result: "Result") -> None:
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


def _with_progress(run: Callable[[Callable[[int], None] | None], "Result"]) -> "Result":
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
