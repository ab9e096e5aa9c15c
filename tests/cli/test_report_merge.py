"""`stockade report merge`: per-cluster JSON reports make the report one `audit --all-contexts` makes.

The bundled fixture fleet (examples/fleet/fleet.yaml: two clusters, one with a forbidden kind) is
served by the fake API server (examples/fleet/apiserver.py) on loopback and read through the real
`kubernetes` client: once audited context by context into one JSON file each (what the in-cluster
CronJobs of docs/fleet.md write), once with --all-contexts. The merge of the first must say what the
second says.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from tests.fleet import fake

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "examples" / "fleet" / "fleet.yaml"
CONFIG = ROOT / "examples" / "stockade.yaml"
CLUSTERS = ("aks-prod-eastus", "gpu-bm-1")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(folder of one JSON report per cluster, the --all-contexts JSON report)."""
    tmp = tmp_path_factory.mktemp("merge")
    served = [fake.ServedCluster(c) for c in fake.load_fleet(FLEET)]
    for s in served:
        s.__enter__()
    try:
        kubeconfig = tmp / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(fake.kubeconfig({s.cluster.name: s.url for s in served})))
        base = ["audit", "--kubeconfig", str(kubeconfig), "--config", str(CONFIG), "--format", "json"]
        folder = tmp / "clusters"
        for name in CLUSTERS:
            run = CliRunner().invoke(
                app, [*base, "--context", name, "--output", str(folder / f"{name}.json")]
            )
            assert run.exit_code in (1, 2), run.output
        whole = tmp / "fleet.json"
        run = CliRunner().invoke(app, [*base, "--all-contexts", "--output", str(whole)])
        assert run.exit_code == 2, run.output  # gpu-bm-1 may not list ClusterRoleBindings: a gap
        yield folder, orjson.loads(whole.read_bytes())
    finally:
        for s in served:
            s.__exit__()


def _same_run(doc: dict[str, Any]) -> dict[str, Any]:
    """What two runs over the same clusters must agree on (not timings, not the notes' wording)."""
    clusters = [{k: v for k, v in c.items() if k not in ("seconds", "requests")} for c in doc["clusters"]]
    return {**doc, "clusters": clusters, "notes": None, "tool": None}


def test_merged_per_cluster_reports_equal_the_fleet_audit(
    reports: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    folder, whole = reports
    out = tmp_path / "merged.json"
    run = CliRunner().invoke(app, ["report", "merge", str(folder), "--format", "json", "--output", str(out)])
    assert run.exit_code == 2, run.output  # the audit's exit code: the gap makes it incomplete
    assert "audit incomplete: 1 coverage gap(s)" in run.output
    merged = orjson.loads(out.read_bytes())
    assert _same_run(merged) == _same_run(whole)
    assert {f["resource"]["cluster"] for f in merged["findings"]} == set(CLUSTERS)
    assert any(f["exception"] for f in merged["findings"])  # waived findings keep their waiver
    assert {n["rule"] for n in merged["notes"]} == {n["rule"] for n in whole["notes"]}
    # a gap is not failed on when asked not to: then the findings decide (exit 1)
    lenient = CliRunner().invoke(app, ["report", "merge", str(folder), "--no-fail-on-gaps", "-f", "json"])
    assert lenient.exit_code == 1, lenient.output
    assert orjson.loads(lenient.stdout)["findings"] == merged["findings"]


def test_the_fleet_page_and_sarif_from_merged_reports(
    reports: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    folder, _ = reports
    page = tmp_path / "fleet.html"
    run = CliRunner().invoke(app, ["report", "merge", str(folder), "-f", "html", "-o", str(page)])
    assert run.exit_code == 2, run.output
    html = page.read_text(encoding="utf-8")
    assert all(name in html for name in CLUSTERS)
    sarif = CliRunner().invoke(app, ["report", "merge", *sorted(map(str, folder.iterdir())), "-f", "sarif"])
    rules = orjson.loads(sarif.stdout)["runs"][0]["tool"]["driver"]["rules"]
    # rules of the bundled library keep their help text (the report itself carries only the title)
    privileged = next(r for r in rules if r["id"] == "STK-POD-003")
    assert privileged["help"]["text"]


def test_a_bad_file_is_one_line_and_the_others_are_merged(
    reports: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    folder, _ = reports
    good = sorted(folder.iterdir())
    not_json = tmp_path / "truncated.json"
    not_json.write_text('{"schema_version": 1, "findings": [')
    not_report = tmp_path / "other.json"
    not_report.write_text('{"apiVersion": "v1", "kind": "List", "items": []}')
    run = CliRunner().invoke(
        app, ["report", "merge", *map(str, good), str(not_json), str(not_report), str(good[0]), "-f", "json"]
    )
    assert run.exit_code == 2
    errors = [line for line in run.stderr.splitlines() if "json:" in line and "stockade:" in line]
    assert any(f"{not_json}: not JSON" in line for line in errors), run.stderr
    assert any(f"{not_report}: not a stockade JSON report" in line for line in errors), run.stderr
    assert any(f"cluster {CLUSTERS[0]} is already in {good[0]}" in line for line in errors), run.stderr
    assert "Traceback" not in run.output
    merged = orjson.loads(run.stdout)
    assert {f["resource"]["cluster"] for f in merged["findings"]} == set(CLUSTERS)
    (tmp_path / "empty").mkdir()
    nothing = CliRunner().invoke(app, ["report", "merge", str(tmp_path / "empty")])
    assert nothing.exit_code == 2 and "no JSON report found" in nothing.output
    missing = CliRunner().invoke(app, ["report", "merge", str(tmp_path / "gone.json")])
    assert missing.exit_code == 2 and f"{tmp_path / 'gone.json'}: cannot read" in missing.output
