"""The SARIF report against the official SARIF 2.1.0 schema and Microsoft's SARIF validator.

Oracles, installed by `make tools` (npm `@microsoft/sarif-multitool-linux`, pinned, into
`.tools/bin/sarif/`): the `Sarif.Multitool validate` command (the schema plus the specification's
rules) and the `sarif-2.1.0.json` schema its package carries, checked here with `jsonschema`. Both
skip where the tool is not installed (npm missing, or not Linux x86_64).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app

REPO = Path(__file__).resolve().parents[2]
TOOL_DIR = REPO / ".tools" / "bin" / "sarif"
MULTITOOL = TOOL_DIR / "Sarif.Multitool"
SCHEMA = TOOL_DIR / "sarif-2.1.0.json"
#: warnings the validator may give: no informationUri, since the project has no public address yet
ALLOWED = {"SARIF2005"}

runner = CliRunner()

KUSTOMIZATION = "resources: [pod.yaml]\nnamespace: overlay-ns\n"
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: bad}
spec:
  containers:
    - name: app
      image: nginx
      securityContext: {privileged: true}
"""


def _sarif(tmp_path: Path) -> Path:
    """A SARIF report with every rule kind the examples trip, plus a kustomize overlay's findings."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "pod.yaml").write_text(POD)
    (overlay / "kustomization.yaml").write_text(KUSTOMIZATION)
    out = tmp_path / "report.sarif"
    args = ["scan", str(REPO / "examples" / "manifests"), "-f", "sarif", "-o", str(out)]
    if shutil.which("kubectl"):
        args += ["--kustomize", str(overlay)]
    result = runner.invoke(app, args)
    assert result.exit_code in (1, 2), result.stderr  # violations (and the examples' broken file)
    return out


@pytest.mark.skipif(not SCHEMA.is_file(), reason="SARIF schema not installed (make tools)")
def test_sarif_report_validates_against_the_official_schema(tmp_path: Path) -> None:
    import jsonschema

    document = json.loads(_sarif(tmp_path).read_text())
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:10]]
    assert document["runs"][0]["results"]


@pytest.mark.skipif(not MULTITOOL.is_file(), reason="SARIF Multitool not installed (make tools)")
def test_sarif_report_passes_microsofts_validator(tmp_path: Path) -> None:
    report = _sarif(tmp_path)
    log = tmp_path / "validation.sarif"
    done = subprocess.run(
        [str(MULTITOOL), "validate", str(report), "--output", str(log)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert log.is_file(), done.stdout + done.stderr
    results = json.loads(log.read_text())["runs"][0].get("results", [])
    found = {(r.get("level", "warning"), r["ruleId"]) for r in results}
    assert not {f for f in found if f[1] not in ALLOWED}, found
