"""STK-AZ-018…034 through `stockade scan`: Key Vaults, container registries, Azure ML workspaces and
Azure AI services accounts (public network access, private link, local credentials), and the AKS
baseline controls (Defender, encryption at host, KMS, run command, Image Cleaner).

The fixtures in tests/policies/data/azure hold one open and one private resource of each type, an
open and a hardened AKS cluster and a separate GPU agent pool, as an ARM template and as a Resource
Graph export (lower-cased types, own private endpoint connections with their approval state). Each
file is scanned by the real scan pipeline; every finding must name the right rule, resource and line,
and the private resources none. The Rego unit tests of the new rules run through the embedded engine.
"""

from __future__ import annotations

from pathlib import Path

from stockade.policies.config.settings import load_config
from stockade.policies.engines.testing import run_tests
from stockade.policies.evaluate import Evaluator
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data" / "azure"
CONFIG = load_config(ROOT / "examples" / "stockade.yaml")
NEW_RULES = {f"STK-AZ-0{n}" for n in range(18, 35)}

#: what every input kind must report: (rule, resource name)
EXPECTED = {
    ("STK-AZ-018", "kv-ai-open"),
    ("STK-AZ-019", "kv-ai-open"),
    ("STK-AZ-020", "acraiopen"),
    ("STK-AZ-021", "acraiopen"),
    ("STK-AZ-022", "acraiopen"),
    ("STK-AZ-023", "acraiopen"),
    ("STK-AZ-024", "mlw-ai-open"),
    ("STK-AZ-025", "mlw-ai-open"),
    ("STK-AZ-026", "mlw-ai-open"),
    ("STK-AZ-027", "oai-ai-open"),
    ("STK-AZ-028", "oai-ai-open"),
    ("STK-AZ-029", "oai-ai-open"),
    ("STK-AZ-030", "aks-ai-open"),
    ("STK-AZ-031", "aks-ai-open"),
    ("STK-AZ-032", "aks-ai-open"),
    ("STK-AZ-033", "aks-ai-open"),
    ("STK-AZ-034", "aks-ai-open"),
}


def _scan(path: Path) -> Result:
    return run_scan(FileSource([str(path)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t")


def _new(result: Result) -> set[tuple[str, str, int | None]]:
    return {(f.rule.id, f.resource.name, f.line) for f in result.findings if f.rule.id in NEW_RULES}


def test_rego_unit_tests_of_the_new_rules_pass() -> None:
    report = run_tests(Evaluator.default(CONFIG).engine.library, run="stockade.azure.*")
    packages = {
        c.package.removesuffix("_test") for c in report.cases if c.package.startswith("stockade.azure.")
    }
    failed = [f"{c.package}.{c.name}: {c.message}" for c in report.cases if c.outcome != "pass"]
    assert failed == []
    for rule in (
        "keyvault_public_network",
        "keyvault_private_link",
        "acr_public_network",
        "acr_private_link",
        "acr_admin_user",
        "acr_anonymous_pull",
        "ml_public_network",
        "ml_managed_network",
        "ml_private_link",
        "ai_public_network",
        "ai_local_auth",
        "ai_private_link",
        "aks_defender",
        "aks_encryption_at_host",
        "aks_kms",
        "aks_run_command",
        "aks_image_cleaner",
    ):
        names = [c.name for c in report.cases if c.package == f"stockade.azure.{rule}_test"]
        assert f"stockade.azure.{rule}" in packages
        assert any("allowed" in n for n in names) and any("denied" in n for n in names), rule


def test_arm_template() -> None:
    result = _scan(DATA / "private-ai-template.json")
    assert result.errors == []
    found = _new(result)
    assert {(r, n) for r, n, _ in found} == EXPECTED | {("STK-AZ-031", "aks-ai-hardened/gpu")}
    assert {
        ("STK-AZ-018", "kv-ai-open", 20),
        ("STK-AZ-022", "acraiopen", 77),  # "[parameters('acrAdmin')]", default true
        ("STK-AZ-023", "acraiopen", 78),
        ("STK-AZ-027", "oai-ai-open", 169),  # networkAcls: Deny, but with an IP rule
        ("STK-AZ-031", "aks-ai-open", 222),  # agentPoolProfiles[0]
        ("STK-AZ-031", "aks-ai-hardened/gpu", 291),
    } <= found
    # the private ones' endpoints are declared beside them (resourceId(...) resolved): no finding
    assert not {n for _, n, _ in found} & {
        "kv-ai-private",
        "acraiprivate",
        "mlw-ai-private",
        "oai-ai-private",
    }
    assert not {r for r, n, _ in found if n == "aks-ai-hardened"}
    (pool,) = [f for f in result.findings if f.rule.id == "STK-AZ-031" and f.resource.name.endswith("/gpu")]
    assert pool.path == ("properties", "enableEncryptionAtHost")
    assert pool.resource.kind == "Microsoft.ContainerService/managedClusters/agentPools"


def test_resource_graph_export() -> None:
    result = _scan(DATA / "private-ai-export.json")
    assert result.errors == []
    found = _new(result)
    assert {(r, n) for r, n, _ in found} == EXPECTED | {("STK-AZ-031", "gpu")}
    # lower-cased types are made canonical, so the rules' kinds match them
    assert {f.resource.kind for f in result.findings if f.rule.id in NEW_RULES} == {
        "Microsoft.KeyVault/vaults",
        "Microsoft.ContainerRegistry/registries",
        "Microsoft.MachineLearningServices/workspaces",
        "Microsoft.CognitiveServices/accounts",
        "Microsoft.ContainerService/managedClusters",
        "Microsoft.ContainerService/managedClusters/agentPools",
    }
    # the open registry's only connection is Pending: its own list carries the approval state
    (pending,) = [f for f in result.findings if f.rule.id == "STK-AZ-021"]
    assert pending.details == {"groupId": "registry", "statuses": ["Pending"]}
    assert pending.line == 101


def test_kms_with_a_public_key_vault_is_reported(tmp_path: Path) -> None:
    import orjson

    doc = orjson.loads((DATA / "private-ai-export.json").read_bytes())
    (hardened,) = [r for r in doc["data"] if r["name"] == "aks-ai-hardened"]
    hardened["properties"]["securityProfile"]["azureKeyVaultKms"]["keyVaultNetworkAccess"] = "Public"
    path = tmp_path / "export.json"
    path.write_bytes(orjson.dumps(doc))
    (kms,) = [
        f for f in _scan(path).findings if f.rule.id == "STK-AZ-032" and f.resource.name == "aks-ai-hardened"
    ]
    assert kms.details == {"keyVaultNetworkAccess": "Public"}
    assert kms.path == ("properties", "securityProfile", "azureKeyVaultKms", "keyVaultNetworkAccess")
