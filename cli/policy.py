"""`stockade policy list|explain|test` and `stockade init`: the catalogue and the starter config."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.table import Table
from rich.text import Text

from stockade.cli.errors import EXIT_VIOLATIONS, did_you_mean, fail, name_key, resolve, writing
from stockade.policies.config.settings import STARTER_CONFIG
from stockade.policies.engines.library import Library, PolicyError, load_library
from stockade.policies.engines.testing import run_tests
from stockade.policies.kinds.api import object_kind
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS, WORKLOAD_ALIAS
from stockade.policies.model import Rule
from stockade.scanner.reports.layout import print_table

app = typer.Typer(
    rich_markup_mode=None,
    help="The policy library: catalogue, explanations, Rego unit tests.",
    no_args_is_help=True,
)

PolicyDirs = Annotated[list[Path] | None, typer.Option("--policy-dir", help="Extra Rego rules.")]


class ListFormat(enum.StrEnum):
    table = "table"
    json = "json"


def _library(policy_dirs: list[Path] | None, *, bundled: bool = True) -> Library:
    try:
        return load_library(policy_dirs or [], bundled=bundled)
    except PolicyError as exc:
        fail(str(exc))


def _rule_json(rule: Rule) -> dict[str, object]:
    return {
        "id": rule.id,
        "title": rule.title,
        "area": rule.area,
        "severity": rule.severity.label,
        "action": rule.action.value,
        "kinds": list(rule.kinds),
        "frameworks": list(rule.frameworks),
        "description": rule.description,
        "remediation": rule.remediation,
        "file": rule.file,
    }


def in_framework(rules: list[Rule], typed: str) -> list[Rule]:
    """The rules evidencing the framework `typed` names (`nsa-cisa`, `CIS-K8s`: the names `audit
    --framework` accepts, through the same mapping of METADATA tags to controls), or carrying that
    METADATA tag (`rbac-good-practices`, `CIS-5.1.6`); any spelling of either. Exit 2 for a name that
    is neither, with the closest names."""
    from stockade.policies.compliance import FRAMEWORKS, controls

    tags = sorted({tag for r in rules for tag in r.frameworks})
    name = resolve("framework", typed, [*FRAMEWORKS, *tags], see=" (see `stockade policy list`)")
    if name in FRAMEWORKS:
        return [r for r in rules if controls(r, name)]
    return [r for r in rules if any(name_key(t) == name_key(name) for t in r.frameworks)]


@app.command("list")
def list_rules(
    policy_dir: PolicyDirs = None,
    area: Annotated[
        str | None, typer.Option("--area", help="Only this area (pod, rbac, egress...; any case, plural).")
    ] = None,
    framework: Annotated[
        str | None,
        typer.Option(
            "--framework",
            help="Only rules mapped to this: a framework of `audit --framework` (nsa-cisa, cis-k8s, "
            "cis-aks, pss-baseline, pss-restricted) or a METADATA tag; any case.",
        ),
    ] = None,
    format: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table,
) -> None:
    """List the rules of the library (from their METADATA)."""
    rules = sorted(_library(policy_dir).rules.values(), key=lambda r: r.id)
    if area is not None:
        chosen = resolve("area", area, {r.area for r in rules})
        rules = [r for r in rules if r.area == chosen]
    if framework is not None:
        rules = in_framework(rules, framework)
    if format is ListFormat.json:
        sys.stdout.write(
            orjson.dumps([_rule_json(r) for r in rules], option=orjson.OPT_INDENT_2).decode() + "\n"
        )
        return
    table = Table(title=f"stockade policy library ({len(rules)} rules)")
    for col in ("ID", "Area", "Severity", "Action", "Title", "Frameworks"):
        table.add_column(col)
    for r in rules:
        cells = (r.id, r.area, r.severity.label, r.action.value, r.title, ", ".join(r.frameworks))
        table.add_row(*(Text(c) for c in cells))
    print_table(table, key=4)


@app.command("explain")
def explain(
    rule_id: Annotated[str, typer.Argument(help="Rule id, e.g. STK-POD-003.")], policy_dir: PolicyDirs = None
) -> None:
    """Show what a rule checks, why, and how to fix a violation."""
    rules = _library(policy_dir).rules
    rule = rules.get(rule_id) or rules.get(rule_id.strip().upper())
    if rule is None:
        fail(f"no rule {rule_id!r}{did_you_mean(rule_id, rules)} (see `stockade policy list`)")
    typer.echo(f"{rule.id}  {rule.title}")
    typer.echo(f"  area:        {rule.area}")
    typer.echo(f"  severity:    {rule.severity.label}")
    typer.echo(f"  action:      {rule.action.value} (default; stockade.yaml rules/overrides can change it)")
    typer.echo(f"  kinds:       {', '.join(k for k in rule.kinds if k != WORKLOAD_ALIAS)}")
    if WORKLOAD_ALIAS in rule.kinds:
        typer.echo(
            "  also:        every pod spec of these custom resources (stockade.yaml `workloads:` adds more):"
        )
        for line in _custom_kind_lines():
            typer.echo(f"               {line}")
    typer.echo(f"  frameworks:  {', '.join(rule.frameworks) or '-'}")
    if rule.triggers:
        # what the rule reads before it can report (METADATA custom.triggers; engines/library.Lean)
        typer.echo(f"  judged on:   objects that write {' or '.join(rule.triggers)} (no other can break it)")
    typer.echo(f"  source:      {rule.file} ({rule.package})")
    typer.echo("")
    typer.echo(rule.description)
    if rule.remediation:
        typer.echo("")
        typer.echo(f"Remediation: {rule.remediation}")


def _custom_kind_lines() -> list[str]:
    by_group: dict[str, list[str]] = {}
    for info in DEFAULT_WORKLOADS.custom:
        by_group.setdefault(info.group, []).append(object_kind(info))
    return [f"{group}: {', '.join(kinds)}" for group, kinds in sorted(by_group.items())]


@app.command("kinds")
def kinds(format: Annotated[ListFormat, typer.Option("--format", "-f")] = ListFormat.table) -> None:
    """The workload kinds the pod rules judge: built-in kinds and custom resources, with the paths of
    their pod specs (declare others in stockade.yaml `workloads:`)."""
    rows: list[dict[str, Any]] = [
        {
            "apiVersion": f"{i.group}/{i.version}" if i.group else i.version,
            "kind": object_kind(i),
            "podSpecs": [f"{p.text() or '(the object itself)'} ({p.form})" for p in i.pods],
            "namespaced": i.namespaced,
            "highRisk": i.high_risk,
        }
        for i in DEFAULT_WORKLOADS.infos
    ]
    if format is ListFormat.json:
        sys.stdout.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    for row in rows:
        typer.echo(f"{row['kind']} ({row['apiVersion']})")
        for path in row["podSpecs"]:
            typer.echo(f"    {path}")


@app.command("test")
def test(
    dirs: Annotated[
        list[Path] | None, typer.Argument(help="Rego dirs (default: the bundled library).")
    ] = None,
    run: Annotated[str, typer.Option("--run", "-r", help="Only tests matching this glob.")] = "*",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print every test.")] = False,
    coverage: Annotated[bool, typer.Option("--coverage", help="Per-file coverage.")] = False,
) -> None:
    """Run the Rego unit tests (`test_*` rules), like `opa test`."""
    library = _library(dirs, bundled=not dirs)
    try:
        report = run_tests(library, run=run)
    except PolicyError as exc:
        fail(str(exc))
    for case in report.cases:
        if verbose or case.outcome != "pass":
            detail = f": {case.message}" if case.message else ""
            typer.echo(
                f"{case.outcome.upper()}: {case.package}.{case.name} ({case.seconds * 1e3:.1f} ms){detail}"
            )
    if coverage:
        for f in report.coverage:
            typer.echo(f"coverage {f.percent:6.1f}%  {f.path}")
        typer.echo(f"coverage {report.total_coverage:6.1f}%  total")
    passed = len(report.cases) - len(report.failed)
    typer.echo("-" * 60)
    typer.echo(f"{passed} passed, {len(report.failed)} failed")
    if not report.cases:
        fail("no tests found")
    if report.failed:
        raise typer.Exit(EXIT_VIOLATIONS)


@app.command("bundle")
def bundle(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the .tar.gz.")],
    config: Annotated[Path | None, typer.Option("--config", "-c", help="stockade.yaml")] = None,
    policy_dir: Annotated[
        list[Path] | None, typer.Option("--policy-dir", help="Extra Rego rules and Gatekeeper templates.")
    ] = None,
) -> None:
    """Write an OPA bundle of the active library and config (serve it, then `scan --engine opa`)."""
    from stockade.cli.loading import load_evaluator
    from stockade.cli.main import tool_version
    from stockade.policies.engines.bundle import build_bundle

    evaluator, cfg = load_evaluator(config, policy_dir or [])
    enabled = set(getattr(evaluator.engine, "enabled", evaluator.rules))
    data = build_bundle(evaluator.engine.library, cfg.rule_data(), tool_version(), enabled)
    with writing(output):
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_bytes(data)
    typer.echo(f"stockade: wrote {output} ({len(data)} bytes, {len(enabled)} rules)", err=True)


@app.command("verify")
def verify(
    suites: Annotated[
        list[Path],
        typer.Argument(
            help="gator Suite files (kind: Suite), or Kyverno CLI Test files for ValidatingAdmissionPolicies."
        ),
    ],
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print every case.")] = False,
) -> None:
    """Run Gatekeeper `gator verify` suites against their ConstraintTemplates and constraints, and
    ValidatingAdmissionPolicy tests in Kyverno's CLI format (`kind: Test`, cli.kyverno.io)."""
    from stockade.policies.frameworks.common import GatekeeperError, read_documents
    from stockade.policies.frameworks.verify import run_suite
    from stockade.policies.frameworks.verify_vap import is_kyverno_test, run_kyverno_test

    def run_any(path: Path) -> Any:
        return run_kyverno_test(path) if is_kyverno_test(read_documents(path)) else run_suite(path)

    passed = failed = 0
    errors = 0
    for suite in suites:
        try:
            for r in run_any(suite):
                if r.ok:
                    passed += 1
                else:
                    failed += 1
                if verbose or not r.ok:
                    detail = f": {r.reason}" if r.reason else ""
                    typer.echo(f"{'PASS' if r.ok else 'FAIL'}: {r.suite} {r.test}/{r.case}{detail}")
        except GatekeeperError as exc:
            errors += 1
            typer.echo(f"stockade: error: {exc}", err=True)
    typer.echo("-" * 60)
    typer.echo(f"{passed} passed, {failed} failed")
    if errors:
        raise typer.Exit(2)
    if failed:
        raise typer.Exit(EXIT_VIOLATIONS)


def init(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write.")] = Path("stockade.yaml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter stockade.yaml.

    Its images.allowed_registries lists the registries the manifests under the current directory
    already pull from (read as `stockade scan .` reads them; Docker Hub short names are docker.io), so
    STK-IMG-001 checks from the first scan; when they name none, the list is left empty (the rule then
    checks no registry) with a comment saying so."""
    if output.exists() and not force:
        fail(f"{output} exists (use --force to overwrite)")
    registries, workloads, unread = _repository_registries(Path("."))
    try:
        output.parent.mkdir(parents=True, exist_ok=True)  # as `scan -o` does
        output.write_text(starter_config(registries), encoding="utf-8")
    except OSError as exc:
        fail(f"{output}: cannot write: {exc.strerror or exc}")
    if registries:
        listed = ", ".join(registries)
        typer.echo(
            f"wrote {output}: images.allowed_registries lists the {len(registries)} "
            f"{'registry' if len(registries) == 1 else 'registries'} the {workloads} "
            f"workload{'s' if workloads != 1 else ''} under . pull from: {listed}; review them"
        )
    else:
        typer.echo(
            f"wrote {output}: no image under . names a registry, so images.allowed_registries is empty "
            "(STK-IMG-001 checks no registry until it lists some)"
        )
    if unread:
        typer.echo(
            f"stockade: note: {unread} input{'s' if unread != 1 else ''} under . could not be read "
            "(`stockade scan .` says why); their images are not listed",
            err=True,
        )


#: the starter config's registry block, replaced by what `init` found
_REGISTRY_BLOCK = "  allowed_registries: []\n  #  - myregistry.azurecr.io/\n  #  - mcr.microsoft.com/\n"


def _repository_registries(root: Path) -> tuple[list[str], int, int]:
    """(registries the workloads under `root` pull from, how many workloads, inputs that could not be
    read), with the scan's reader and the image rules' normalisation."""
    from stockade.policies.model import InputError, Resource
    from stockade.scanner.notes import workload_registries
    from stockade.scanner.sources.files import FileSource

    objects, unread = [], 0
    for item in FileSource([str(root)]):
        if isinstance(item, Resource):
            objects.append(item.obj)
        elif isinstance(item, InputError):
            unread += 1
    workloads, used = workload_registries(objects, DEFAULT_WORKLOADS)
    return sorted(used), workloads, unread


def starter_config(registries: list[str]) -> str:
    """The starter stockade.yaml, its images.allowed_registries holding `registries` (hosts)."""
    if registries:
        entries = "".join(f"    - {orjson.dumps(r + '/').decode()}\n" for r in registries)
        block = (
            "  # the registries the manifests here pull from when `stockade init` ran: keep the ones\n"
            "  # you trust, narrow them to a path (myregistry.azurecr.io/team/) where you can\n"
            f"  allowed_registries:\n{entries}"
        )
    else:
        block = (
            "  # `stockade init` found no image here: empty means STK-IMG-001 checks no registry (every\n"
            "  # scan says so once); list the registries you pull from, e.g.\n" + _REGISTRY_BLOCK
        )
    if _REGISTRY_BLOCK not in STARTER_CONFIG:  # the starter's layout changed: say so, never write half
        raise RuntimeError("the starter config has no allowed_registries block to fill")
    return STARTER_CONFIG.replace(_REGISTRY_BLOCK, block, 1)
