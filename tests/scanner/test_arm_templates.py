"""ARM templates read as Azure Resource Manager deploys them (issue 38).

Real parts only: the fixtures under tests/scanner/arm/ are trimmed copies of Azure quickstart
templates (provenance and licence beside them), scanned through the whole `stockade scan` pipeline
with the real policy library; the expression evaluator is checked against the values the ARM
template language reference gives.
"""

from __future__ import annotations

from pathlib import Path

from stockade.policies.config.settings import load_config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_config(ROOT / "examples" / "stockade.yaml")


def _scan(*paths: Path | str) -> Result:
    files = FileSource([str(p) for p in paths])
    return run_scan(files, [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t")


def test_bicep_and_terraform_in_a_directory_are_counted_with_what_to_scan_instead(tmp_path: Path) -> None:
    (tmp_path / "sc.yaml").write_text(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: blob}\n"
        "provisioner: blob.csi.azure.com\n"
    )
    for name in ("main.bicep", "main.bicepparam", "main.tf", "prod.tfvars", "terragrunt.hcl"):
        (tmp_path / name).write_text("x = 1\n")
    result = _scan(tmp_path)
    assert result.errors == [] and result.files == 1 and result.resources == 1
    reasons = {Path(s.file).name: s.reason for s in result.skipped}
    assert set(reasons) == {"main.bicep", "main.bicepparam", "main.tf", "prod.tfvars", "terragrunt.hcl"}
    assert all(r.startswith("unsupported input: ") for r in reasons.values())
    assert "az bicep build" in reasons["main.bicep"]
    assert "terraform show -json" in reasons["main.tf"]
    # named explicitly, the same file stays an error (a pre-commit hook must not pass it silently)
    (error,) = _scan(tmp_path / "main.bicep").errors
    assert "az bicep build" in error.message
