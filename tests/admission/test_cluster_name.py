"""A gate that knows its cluster's name decides as the audit of that cluster does.

Per-cluster settings (the sandbox profile through `sandbox.clusters`, `overrides` and exceptions that
name clusters) match on the audit's context name. `stockade scan --cluster NAME` and
`stockade webhook serve --cluster NAME` give the scan and the webhook that name, so the three gates
agree; without it both fall back to the settings for "no cluster". No server is started here: the
webhook's decision function and the CLI's scan are the code under test (the TLS path is covered in
test_webhook.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from stockade.admission.decide import evaluate
from stockade.admission.review import AdmissionReview
from stockade.cli.main import app
from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Resource
from stockade.scanner.scan import ScanOptions, scan
from stockade.webhooks.manifests import Options, render
from tests.reviews import admission_review

CONFIG = """
sandbox:
  clusters:
    - clusters: ["aks-*"]
      profile: aks
overrides:
  - rules: ["STK-POD-003"]
    clusters: ["aks-*"]
    action: warn
"""

NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "eval", "labels": {"stockade.io/sandbox": "required"}},
}
# A high-risk pod (sandbox namespace) in gVisor, privileged: gVisor is a bare-metal sandbox only, and
# STK-POD-003 (privileged) is turned down to `warn` on AKS clusters by the override.
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "probe", "namespace": "eval"},
    "spec": {
        "runtimeClassName": "gvisor",
        "containers": [
            {
                "name": "c",
                "image": "registry.example/eval@sha256:" + "a" * 64,
                "securityContext": {"privileged": True},
            }
        ],
    },
}


def _webhook(cluster: str | None) -> set[tuple[str, str]]:
    evaluator = Evaluator.default(parse_config(CONFIG))
    facts = InventoryFacts(inventory_of([NAMESPACE]))
    facts.inventory.cluster = cluster
    body = admission_review(POD, "eval")
    request = AdmissionReview.model_validate(body).request
    return {(f.rule.id, f.action.value) for f in evaluate(request, evaluator, facts, cluster)}


def _scan(cluster: str | None) -> set[tuple[str, str]]:
    config = parse_config(CONFIG)
    resources = [Resource(NAMESPACE), Resource(POD)]
    result = scan(resources, Evaluator.default(config), ScanOptions(config, cluster=cluster), version="t")
    assert all(f.resource.cluster == cluster for f in result.findings)
    return {(f.rule.id, f.action.value) for f in result.findings if f.resource.kind == "Pod"}


@pytest.mark.parametrize("cluster", [None, "gpu-bm-1", "aks-prod-eastus"])
def test_scan_and_webhook_agree_for_each_cluster(cluster: str | None) -> None:
    scanned, admitted = _scan(cluster), _webhook(cluster)
    assert scanned == admitted
    on_aks = cluster is not None and cluster.startswith("aks-")
    # the sandbox profile follows the name: gVisor is not a sandbox on AKS
    assert ("STK-RT-001" in {r for r, _ in scanned}) is on_aks
    # and so do overrides naming clusters
    assert ("STK-POD-003", "warn" if on_aks else "deny") in scanned


def test_scan_cli_cluster_option(tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump_all([NAMESPACE, POD]))
    config = tmp_path / "stockade.yaml"
    config.write_text(CONFIG)
    runner = CliRunner()
    args = ["scan", str(manifest), "--config", str(config), "--format", "json"]
    plain = runner.invoke(app, args)
    aks = runner.invoke(app, [*args, "--cluster", "aks-prod-eastus"])
    assert plain.exit_code == aks.exit_code == 1, (plain.output, aks.output)
    assert "STK-RT-001" not in plain.stdout and "STK-RT-001" in aks.stdout
    assert '"cluster":"aks-prod-eastus"' in aks.stdout.replace(" ", "")


def test_manifests_pass_the_cluster_name_to_the_server() -> None:
    def args(options: Options) -> list[str]:
        (deployment,) = [o for o in render(options, ["Pod"]) if o["kind"] == "Deployment"]
        return list(deployment["spec"]["template"]["spec"]["containers"][0]["args"])

    base = Options(cert_manager=True)
    assert "--cluster" not in args(base)
    named = args(Options(cert_manager=True, cluster="aks-prod-eastus"))
    assert named[named.index("--cluster") + 1] == "aks-prod-eastus"
