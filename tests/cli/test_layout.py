"""Output that fits: tables at any width (stacked when narrow, COLUMNS honoured when piped), help pages
with metavars instead of Python types, and commands imported only when run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.table import Table
from rich.text import Text

from stockade.cli import main as cli_main
from stockade.scanner.reports.layout import PLAIN_WIDTH, console, fit, fits, output_width, plain

REPO = Path(__file__).resolve().parents[2]
VIOLATIONS = REPO / "examples" / "manifests" / "violations"


def run(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command in a subprocess, its stdout a pipe (not a terminal)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run(
        [sys.executable, "-c", "from stockade.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _render(table: Table, width: int, key: int = 1) -> str:
    out = console(width=width)
    with out.capture() as capture:
        out.print(fit(table, width, key=key))
    return plain(capture.get())


def test_width_is_columns_then_terminal_then_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "83")
    assert output_width(terminal=False) == 83
    monkeypatch.setenv("COLUMNS", "5")
    assert output_width(terminal=False) == 40  # the narrowest anything is laid out at
    monkeypatch.delenv("COLUMNS")
    assert output_width(terminal=False) == PLAIN_WIDTH


def test_a_table_that_does_not_fit_is_stacked_without_losing_a_character() -> None:
    table = Table(title="t")
    for header in ("Location", "Severity", "Rule", "Finding"):
        table.add_column(header)
    message = "container app runs privileged: every device of the node and all capabilities " * 2
    table.add_row(
        Text("deploy/a-rather-long-file-name.yaml:12"), Text("high"), Text("STK-PSS-001"), Text(message)
    )
    assert fits(table, 200) and not fits(table, 60)
    narrow = _render(table, 60, key=3)
    assert "deploy/a-rather-long-file-name.yaml:12  high  STK-PSS-001" in narrow
    assert all(len(line) <= 60 for line in narrow.splitlines())
    assert " ".join(narrow.split()).count("every device of the node") == 2  # wrapped, not cut
    assert "…" not in narrow
    wide = _render(table, 200, key=3)
    assert "Location" in wide and "Finding" in wide  # a table with its header


def test_cells_are_data_not_markup() -> None:
    table = Table()
    table.add_column("Subject")
    table.add_column("Rules")
    table.add_row(Text("[red]User x[/red]"), Text("get pods\nlist pods"))
    assert "[red]User x[/red]" in _render(table, 20)
    assert "[red]User x[/red]" in _render(table, 200)


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_scan_table_fits_columns_when_piped(columns: int) -> None:
    done = run("scan", str(VIOLATIONS), columns=columns)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    # a word longer than the width (an image digest) is a line of its own, never split or cut
    assert lines and all(len(line) <= columns or len(line.split()) == 1 for line in lines), max(
        lines, key=len
    )
    assert "STK-POD" in done.stdout
    assert not any(line.endswith("…") for line in lines)  # wrapped or cut with a count, never clipped
    assert not any(line != line.rstrip() for line in lines)  # no padding for logs and grep


def test_scan_table_without_columns_is_plain_width(tmp_path: Path) -> None:
    # a registry allowlist that approves none of the examples' registries: STK-IMG-001 names each image
    config = tmp_path / "stockade.yaml"
    config.write_text("images: {allowed_registries: [registry.example.invalid/]}\n")
    done = run("scan", str(VIOLATIONS), "--config", str(config))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= PLAIN_WIDTH
    # the examples' messages name digest-pinned images (words of 100+ characters): no column of 160
    # has room for them beside the location, so the rows are stacked, the words whole
    digest = "myregistry.azurecr.io/platform/model-cache-warmer@sha256:" + "261780f386dbd0053bee17d5"
    assert digest in done.stdout and "Location" not in done.stdout
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
        "spec: {containers: [{name: app, image: nginx, securityContext: {privileged: true}}]}\n"
    )
    done = run("scan", str(pod))
    assert done.returncode == 1
    assert max(len(line) for line in done.stdout.splitlines()) <= PLAIN_WIDTH
    assert "Location" in done.stdout  # wide enough for the table form


@pytest.mark.parametrize(
    "args",
    [
        ("policy", "list"),
        ("rbac", "escalations", str(VIOLATIONS)),
        ("rbac", "who-can", "get", "secrets", str(VIOLATIONS)),
    ],
)
def test_other_tables_fit_80_columns(args: tuple[str, ...]) -> None:
    done = run(*args, columns=80)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert all(len(line) <= 80 for line in done.stdout.splitlines()), max(done.stdout.splitlines(), key=len)


def _commands() -> list[tuple[str, ...]]:
    import typer

    from stockade.cli.main import app

    root = typer.main.get_command(app)
    found: list[tuple[str, ...]] = [()]
    for name, command in getattr(root, "commands", {}).items():
        found.append((name,))
        found.extend((name, sub) for sub in getattr(command, "commands", {}))
    return found


def test_help_pages_name_values_not_python_types() -> None:
    for words in _commands():
        done = run(*words, "--help", columns=80)
        assert done.returncode == 0, (words, done.stderr)
        text = done.stdout
        for python_type in ("<list[", "<bool>", "<str>", "<int>", "<path>", "<float>"):
            assert python_type not in text, (words, python_type)
        assert all(len(line) <= 80 for line in text.splitlines()), words


def test_top_level_summaries_are_the_commands_own() -> None:
    """`stockade --help` lists commands without importing them: the summaries must not drift."""
    import importlib

    for name, command in cli_main.COMMANDS.items():
        target = getattr(importlib.import_module(command.module), command.attr)
        doc = target.info.help if command.group else target.__doc__
        first = " ".join(str(doc).strip().split("\n\n")[0].split())
        assert first == command.summary, name


def test_a_scan_imports_neither_the_kubernetes_client_nor_the_webhook(tmp_path: Path) -> None:
    """Nor, for a file that is no chart and no kustomization, the renderers (sources/roots.py), nor
    importlib.metadata (pydantic's plugin loader stands in: cli/plugins.py)."""
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\n")
    probe = (
        "import sys\nfrom stockade.cli.main import main\n"
        "try:\n    main(['scan', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('kubernetes', 'starlette', 'uvicorn', 'azure', 'cryptography',"
        " 'stockade.admission', 'stockade.scanner.audit', 'stockade.scanner.sources.render',"
        " 'stockade.scanner.sources.template_lines', 'importlib.metadata') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(manifest)], capture_output=True, text=True, timeout=300, check=False
    )
    assert "HEAVY []" in done.stdout, done.stdout + done.stderr
    helped = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom stockade.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
            "    pass\nprint('LOADED', sorted(m for m in sys.modules if m.startswith('stockade.cli.')))",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (
        "LOADED ['stockade.cli.collector', 'stockade.cli.helptext', 'stockade.cli.main', "
        "'stockade.cli.plugins']" in helped.stdout
    ), helped.stdout + helped.stderr


_ONE_FILE_PROBE = (
    "import sys\nfrom stockade.cli.main import main\n"
    "try:\n    main(['scan', *sys.argv[1:]])\nexcept SystemExit:\n    pass\n"
    "unused = ('multiprocessing', 'concurrent.futures.process', 'stockade.scanner.sources.iac',"
    " 'stockade.scanner.sources.arm', 'stockade.scanner.baseline', 'stockade.scanner.reports.json',"
    " 'stockade.policies.facts.rbac', 'stockade.policies.facts.exposure',"
    " 'stockade.policies.facts.netpol_use', 'stockade.policies.facts.netpol.k8s',"
    " 'stockade.policies.facts.netpol.calico', 'stockade.policies.facts.netpol.cilium')\n"
    "print('LOADED', sorted(m for m in unused if m in sys.modules))\n"
)


def _loaded_by_scan(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _ONE_FILE_PROBE, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return next(line for line in done.stdout.splitlines() if line.startswith("LOADED"))


def test_a_one_file_scan_imports_no_worker_pool_no_iac_reader_no_other_format(tmp_path: Path) -> None:
    """The pre-commit case imports what it uses: no process pool (one file is read and evaluated in
    this process), no ARM/terraform readers for a YAML file, no baseline, only the table report, and
    only the analyzers a Deployment without RoleBindings or network policies beside it needs."""
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: apps}\n"
        "spec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec:\n      containers:\n"
        "        - {name: web, image: 'nginx:1.27', securityContext: {privileged: true}}\n"
    )
    assert _loaded_by_scan(str(manifest), "--fail-on", "never") == "LOADED []"
    # the probe sees them when a scan needs them: a JSON file may be an ARM template, a JSON report
    template = tmp_path / "azuredeploy.json"
    template.write_text(
        '{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",'
        ' "contentVersion": "1.0.0.0", "resources": []}'
    )
    used = _loaded_by_scan(str(template), "--format", "json", "--allow-empty", "--fail-on", "never")
    assert "'stockade.scanner.sources.iac'" in used and "'stockade.scanner.reports.json'" in used, used
    # and the analyzers when their kinds are in the scan: a binding, a Service, network policies
    others = tmp_path / "others.yaml"
    others.write_text(
        manifest.read_text() + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
        "metadata: {name: b, namespace: apps}\n"
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\n"
        "subjects: [{kind: ServiceAccount, name: default, namespace: apps}]\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: apps}\n"
        "spec: {type: LoadBalancer, selector: {app: web}, ports: [{port: 80}]}\n"
        "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: n, namespace: apps}\n"
        "spec: {podSelector: {}, policyTypes: [Egress]}\n"
        "---\napiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: c, namespace: apps}\n"
        "spec: {endpointSelector: {}, egress: [{toEndpoints: [{}]}]}\n"
        "---\napiVersion: projectcalico.org/v3\nkind: NetworkPolicy\nmetadata: {name: p, namespace: apps}\n"
        "spec: {selector: all(), types: [Egress]}\n"
    )
    used = _loaded_by_scan(str(others), "--fail-on", "never")
    for module in ("rbac", "exposure", "netpol_use", "netpol.k8s", "netpol.calico", "netpol.cilium"):
        assert f"'stockade.policies.facts.{module}'" in used, (module, used)
