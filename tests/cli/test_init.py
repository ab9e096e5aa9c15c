"""`stockade init` in a repository: images.allowed_registries lists the registries its manifests use.

The real CLI (typer's CliRunner) in a temporary repository (the test changes into it); the config it
writes is loaded by the real config loader and used by a real scan.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.cli.policy import starter_config
from stockade.policies.config.settings import STARTER_CONFIG, load_config, parse_config

runner = CliRunner()

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers: [{name: init, image: "busybox:1.36"}]
      containers:
        - {name: app, image: "ghcr.io/acme/web:1.2"}
        - {name: filled-later, image: "{{ .Values.image }}"}
"""
CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: "GHCR.io/acme/report@sha256:%s"}]
""" % ("a" * 64)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "deploy" / "jobs").mkdir(parents=True)
    (root / "deploy" / "web.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    (root / "deploy" / "jobs" / "report.yaml").write_text(CRONJOB, encoding="utf-8")
    (root / "values.yaml").write_text("image: {repository: quay.io/not/a/manifest}\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def test_init_lists_the_registries_the_repository_uses(repo: Path) -> None:
    result = runner.invoke(app, ["init"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "wrote stockade.yaml: images.allowed_registries lists the 2 registries the 2 workloads under . "
        "pull from: docker.io, ghcr.io; review them"
    )
    config = load_config(repo / "stockade.yaml")
    assert config.images.allowed_registries == ("docker.io/", "ghcr.io/")
    # the rest is the starter config
    assert config.model_dump(exclude={"images"}) == parse_config(STARTER_CONFIG).model_dump(
        exclude={"images"}
    )
    # a scan with it checks the registries: no registry note, nothing from these two reported
    scan = runner.invoke(app, ["scan", "deploy", "-f", "json", "-c", "stockade.yaml"])
    doc = json.loads(scan.stdout)
    assert "STK-IMG-001" not in {n["rule"] for n in doc["notes"]}
    assert not [f for f in doc["findings"] if f["rule"]["id"] == "STK-IMG-001"]


def test_init_with_no_image_leaves_the_list_empty_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cm.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}), encoding="utf-8"
    )
    # the output's directory is made, as `scan -o` makes it
    result = runner.invoke(app, ["init", "-o", "conf/stockade.yaml"])
    assert result.exit_code == 0, result.output
    assert "no image under . names a registry, so images.allowed_registries is empty" in result.stdout
    blocked = runner.invoke(app, ["init", "-o", "cm.yaml/stockade.yaml"])  # under a file: not writable
    assert blocked.exit_code == 2 and isinstance(blocked.exception, SystemExit), blocked.output
    assert "cm.yaml/stockade.yaml: cannot write: " in blocked.output and "Traceback" not in blocked.output
    text = (tmp_path / "conf" / "stockade.yaml").read_text(encoding="utf-8")
    assert "`stockade init` found no image here" in text
    assert load_config(tmp_path / "conf" / "stockade.yaml").images.allowed_registries == ()


def test_starter_config_quotes_every_registry() -> None:
    """A registry YAML would read as something else (an IPv6 host starts a flow sequence) stays a string."""
    config = parse_config(starter_config(["[::1]:5000", "docker.io", "localhost:5000"]))
    assert config.images.allowed_registries == ("[::1]:5000/", "docker.io/", "localhost:5000/")
    assert "every image is reported" not in starter_config([])  # the old meaning of an empty list
