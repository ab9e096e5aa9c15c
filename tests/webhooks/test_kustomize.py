"""The committed kustomize base (`webhooks/deploy/`) is what the code renders, and kustomize builds it.

Regenerating into a temporary directory and comparing file by file catches a base that was edited by
hand or not regenerated after a change (a new rule kind, a new watched kind, a new version). When
`kubectl` is on PATH, `kubectl kustomize` must build the base into the same objects.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.engines.library import load_library
from stockade.webhooks.manifests import Options, covered_kinds, kustomize_files, render, split_registration

BASE = Path(__file__).resolve().parents[2] / "webhooks" / "deploy"
REGENERATE = "stockade webhook manifests --cert-manager --kustomize-dir webhooks/deploy"


def rendered() -> list[dict[str, Any]]:
    return render(Options(cert_manager=True), covered_kinds(load_library()))


def test_committed_base_is_what_the_code_renders(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["webhook", "manifests", "--cert-manager", "--kustomize-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    fresh = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in tmp_path.rglob("*.yaml")}
    committed = {p.relative_to(BASE).as_posix(): p.read_text() for p in BASE.rglob("*.yaml")}
    assert sorted(committed) == sorted(fresh), f"webhooks/deploy is out of date: run `{REGENERATE}`"
    for name, text in fresh.items():
        assert committed[name] == text, f"webhooks/deploy/{name} is out of date: run `{REGENERATE}`"
    base, registration = split_registration(rendered())
    assert set(fresh) == set(kustomize_files(base)) | {
        f"registration/{n}" for n in kustomize_files(registration)
    }


def test_regenerating_removes_stale_generated_files(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["webhook", "manifests", "--cert-manager", "--kustomize-dir", str(tmp_path)]
    assert runner.invoke(app, args).exit_code == 0
    stale = tmp_path / "configmap-old.yaml"
    stale.write_text((tmp_path / "configmap-stockade-webhook-config.yaml").read_text())
    mine = tmp_path / "patch.yaml"
    mine.write_text("# a user's own file\n")
    assert runner.invoke(app, args).exit_code == 0
    assert not stale.exists() and mine.exists()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_kustomize_builds_the_same_objects() -> None:
    built = {}
    for directory in (BASE, BASE / "registration"):  # the registration is applied once ready
        out = subprocess.run(
            ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        part = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(out)}
        assert ("ValidatingWebhookConfiguration" in {k for k, _ in part}) == (directory != BASE)
        built.update(part)
    expected = {(o["kind"], o["metadata"]["name"]): o for o in rendered()}
    assert built == expected
