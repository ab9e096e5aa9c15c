"""`stockade scan` of Azure IaC: ARM templates, Resource Graph exports and terraform plans.

The fixtures in examples/azure are scanned through the whole scan pipeline (the same one as for
manifests); each finding must name the right rule, resource and line. Cross-resource facts (private
endpoints, DNS zone links, the route to the firewall) are computed from the resources of the same
file, ids known only after apply are followed through the plan's configuration references, and
template expressions that the file decides are evaluated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from stockade.policies.config.settings import load_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import InputError, Resource
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource, parse_text
from stockade.scanner.sources.iac import detect

ROOT = Path(__file__).resolve().parents[2]
AZURE = ROOT / "examples" / "azure"
CONFIG = load_config(ROOT / "examples" / "stockade.yaml")


def _scan(*names: str, workers: int = 1) -> Result:
    files = FileSource([str(AZURE / n) for n in names])
    return run_scan(files, [], Evaluator.default(CONFIG), ScanOptions(CONFIG, workers=workers), version="t")


#: the AKS baseline controls (Defender, encryption at host, KMS, run command, Image Cleaner), which the
#: example clusters do not set; they have their own tests (tests/policies/test_azure_private_ai.py)
AKS_BASELINE = frozenset({"STK-AZ-030", "STK-AZ-031", "STK-AZ-032", "STK-AZ-033", "STK-AZ-034"})


def _findings(result: Result) -> list[Any]:
    return [f for f in result.findings if f.rule.id not in AKS_BASELINE]


def _verdicts(result: Result) -> set[tuple[str, str, int | None]]:
    return {(f.rule.id, f.resource.name, f.line) for f in _findings(result)}


def test_arm_template() -> None:
    result = _scan("aks-storage-template.json")
    assert result.errors == []
    assert _verdicts(result) == {
        # allowSharedKeyAccess is "[parameters('allowSharedKey')]", whose default is true
        ("STK-AZ-003", "stmlprodeastus", 23),
        # hierarchical namespace: dfs is in use, and has neither an endpoint nor a linked zone
        ("STK-AZ-005", "stmlprodeastus", 20),
        ("STK-AZ-006", "stmlprodeastus", 20),
        # the route goes to the firewall named through a variable; one of its rules allows "*"
        ("STK-AZ-015", "aks-prod-eastus", 142),
        ("STK-AZ-016", "aks-prod-eastus", 156),
    }
    (wildcard,) = [f for f in result.findings if f.rule.id == "STK-AZ-015"]
    assert wildcard.details == {"firewall": "fw-hub-eastus", "rule": "aks-egress/debug-anything"}
    (gpu,) = [f for f in result.findings if f.rule.id == "STK-AZ-016"]
    assert gpu.path == ("properties", "agentPoolProfiles", 1, "enableNodePublicIP")
    assert gpu.file == str(AZURE / "aks-storage-template.json")
    # blob has an approved endpoint (resourceId(...) resolved) and a zone linked to the AKS VNet
    assert not any(f.details.get("subresource") == "blob" for f in result.findings)


def test_resource_graph_export() -> None:
    result = _scan("resource-graph-export.json")
    assert _verdicts(result) == {
        ("STK-AZ-001", "stmlprodscratch", 55),
        ("STK-AZ-003", "stmlprodscratch", 57),  # allowSharedKeyAccess null counts as allowed
        ("STK-AZ-005", "stmlprodscratch", 64),  # its only endpoint connection is Pending
        ("STK-AZ-015", "aks-prod-eastus", 193),
    }
    (pending,) = [f for f in result.findings if f.rule.id == "STK-AZ-005"]
    assert pending.details == {"subresource": "blob", "statuses": ["Pending"]}
    assert {f.resource.kind for f in result.findings} == {
        "Microsoft.Storage/storageAccounts",
        "Microsoft.ContainerService/managedClusters",
    }


def test_terraform_plan_points_at_the_attribute() -> None:
    result = _scan("ml-platform.tfplan.json")
    lines = (AZURE / "ml-platform.tfplan.json").read_text().splitlines()

    def line_of(rule: str, before: int = 0) -> str:
        (f,) = [f for f in result.findings if f.rule.id == rule]
        assert f.line is not None
        return lines[f.line - 1 - before].strip()

    assert {f.rule.id for f in result.findings} - AKS_BASELINE == {
        "STK-AZ-001",
        "STK-AZ-004",
        "STK-AZ-010",
        "STK-AZ-011",
        "STK-AZ-013",
        "STK-AZ-014",
        "STK-AZ-015",
        "STK-AZ-016",
    }
    assert line_of("STK-AZ-004").startswith('"min_tls_version"')
    assert line_of("STK-AZ-001", before=1).startswith('"network_rules"')  # the network_rules block
    assert line_of("STK-AZ-011").startswith('"local_account_disabled"')
    assert '"network_policy": null' in line_of("STK-AZ-014")
    assert line_of("STK-AZ-016").startswith('"node_public_ip_enabled"')
    (pool,) = [f for f in result.findings if f.rule.id == "STK-AZ-016"]
    # the node pool's cluster comes from the configuration reference (its id is unknown until apply)
    assert pool.resource.name == "aks-ml-westus3/gpuh100"
    # the endpoint's target is unknown until apply too: found through its reference, so blob is covered
    assert "STK-AZ-005" not in {f.rule.id for f in result.findings}


def test_parallel_scan_decides_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    import stockade.scanner.scan as scan_module

    monkeypatch.setattr(scan_module, "PARALLEL_FILES", 1)
    monkeypatch.setattr(scan_module, "PARALLEL_OBJECTS", 1)
    names = ("aks-storage-template.json", "resource-graph-export.json", "ml-platform.tfplan.json")
    serial = _scan(*names)
    parallel = _scan(*names, workers=2)
    assert {(f.rule.id, f.resource.name, f.file) for f in parallel.findings} == {
        (f.rule.id, f.resource.name, f.file) for f in serial.findings
    }


def test_kubernetes_json_is_not_mistaken_for_azure() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls", "metadata": {"name": "s"}}
    (item,) = list(parse_text(orjson.dumps(secret).decode(), "s.json", json_file=True))
    assert isinstance(item, Resource) and item.kind == "Secret" and item.name == "s"
    assert detect([secret]) is None
    assert detect({"items": []}) is None


def test_lower_case_types_are_made_canonical_and_tags_are_labels() -> None:
    export = [
        {
            "id": "/subscriptions/s/x",
            "type": "MICROSOFT.STORAGE/STORAGEACCOUNTS",
            "name": "st",
            "tags": {"a": "b"},
            "properties": {},
        }
    ]
    (item,) = list(parse_text(orjson.dumps(export).decode(), "e.json", json_file=True))
    assert isinstance(item, Resource)
    assert (item.kind, item.name, dict(item.labels), item.namespace) == (
        "Microsoft.Storage/storageAccounts",
        "st",
        {"a": "b"},
        None,
    )
    assert item.origin.azure_id == "/subscriptions/s/x"


def test_terraform_plan_egress_through_the_firewall(tmp_path: Path) -> None:
    """Route table association, a next hop known only after apply, and the firewall policy's rules."""
    result = _scan("aks-egress.tfplan.json")
    (finding,) = _findings(result)
    assert finding.rule.id == "STK-AZ-015" and finding.resource.name == "aks-ml-westeu"
    assert finding.details == {
        "firewall": "fw-hub-westeu",
        "rule": "fwpol-hub-westeu/aks-egress/allow-ml/pip-anything",
    }

    plan = orjson.loads((AZURE / "aks-egress.tfplan.json").read_bytes())
    resources = plan["planned_values"]["root_module"]["resources"]
    (group,) = [r for r in resources if r["type"] == "azurerm_firewall_policy_rule_collection_group"]
    group["values"]["application_rule_collection"][0]["rule"].pop()  # drop the "*" rule
    allowlist = tmp_path / "allowlist.json"
    allowlist.write_bytes(orjson.dumps(plan))
    assert _findings(_scan_path(allowlist)) == []

    (table,) = [r for r in resources if r["type"] == "azurerm_route_table"]
    table["values"]["route"][0]["next_hop_in_ip_address"] = "10.30.255.4"  # an NVA, not the firewall
    nva = tmp_path / "nva.json"
    nva.write_bytes(orjson.dumps(plan))
    (other,) = _findings(_scan_path(nva))
    assert "not an Azure Firewall" in other.message


def _scan_path(path: Path) -> Result:
    return run_scan(FileSource([str(path)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t")


def test_exceptions_apply_to_azure_resources_by_kind_name_and_tags() -> None:
    from stockade.policies.config.settings import parse_config

    config = parse_config(
        """
exceptions:
  - name: scratch-account-migration
    rules: [STK-AZ-00*]
    match: {kinds: [Microsoft.Storage/storageAccounts], names: [stmlprodscratch]}
    owner: data-platform@example.com
    reason: moving to the private account (DATA-311)
    expires: 2099-01-01
  - name: prod-clusters-egress
    rules: [STK-AZ-015]
    match: {labels: {env: prod}}
    owner: platform@example.com
    reason: firewall rollout (NET-77)
    expires: 2099-01-01
"""
    )
    files = FileSource([str(AZURE / "resource-graph-export.json")])
    result = run_scan(files, [], Evaluator.default(config), ScanOptions(config), version="t")
    waived = {f.rule.id for f in result.findings if f.waived}
    assert waived == {"STK-AZ-001", "STK-AZ-003", "STK-AZ-005", "STK-AZ-015"}  # the AKS cluster's tags
    assert all(f.waived for f in _findings(result))


def test_an_export_without_properties_is_an_input_error() -> None:
    listed = [
        {"id": "/subscriptions/s/rg/x/st1", "type": "Microsoft.Storage/storageAccounts", "name": "st1"},
        {"id": "/subscriptions/s/rg/x/zone", "type": "Microsoft.Network/privateDnsZones", "name": "z"},
    ]
    text = orjson.dumps(listed, option=orjson.OPT_INDENT_2).decode()
    error, zone = list(parse_text(text, "list.json", json_file=True))
    assert not isinstance(error, Resource) and error.line == 2
    assert "az graph query" in error.message and isinstance(zone, Resource)


def test_an_export_of_private_ai_resources_without_properties_is_an_input_error() -> None:
    """Key Vaults, registries, ML workspaces and AI accounts are judged too: `az resource list`
    output (no properties) would read as every setting left public."""
    kinds = (
        "Microsoft.KeyVault/vaults",
        "Microsoft.ContainerRegistry/registries",
        "Microsoft.MachineLearningServices/workspaces",
        "Microsoft.CognitiveServices/accounts",
    )
    listed = [{"id": f"/subscriptions/s/rg/x/r{i}", "type": k, "name": f"r{i}"} for i, k in enumerate(kinds)]
    items = list(parse_text(orjson.dumps(listed).decode(), "list.json", json_file=True))
    assert len(items) == 4 and not any(isinstance(i, Resource) for i in items)
    assert all("az graph query" in i.message for i in items)


def test_terraform_plan_cluster_baseline(tmp_path: Path) -> None:
    """The example plan's cluster sets none of the AKS baseline controls; set (host encryption in
    azurerm 3's spelling on the default pool, azurerm 4's on the GPU pool), they pass."""
    result = _scan("ml-platform.tfplan.json")
    baseline = {(f.rule.id, f.resource.name) for f in result.findings if f.rule.id in AKS_BASELINE}
    assert baseline == {
        ("STK-AZ-030", "aks-ml-westus3"),
        ("STK-AZ-031", "aks-ml-westus3"),
        ("STK-AZ-031", "aks-ml-westus3/gpuh100"),
        ("STK-AZ-032", "aks-ml-westus3"),
        ("STK-AZ-033", "aks-ml-westus3"),
        ("STK-AZ-034", "aks-ml-westus3"),
    }

    def harden(resources: list[dict[str, Any]], _: Any) -> None:
        (cluster,) = [r["values"] for r in resources if r["type"] == "azurerm_kubernetes_cluster"]
        (pool,) = [r["values"] for r in resources if r["type"] == "azurerm_kubernetes_cluster_node_pool"]
        cluster.update(
            {
                "microsoft_defender": [{"log_analytics_workspace_id": "/subscriptions/s/law"}],
                "key_management_service": [{"key_vault_key_id": "k", "key_vault_network_access": "Private"}],
                "run_command_enabled": False,
                "image_cleaner_enabled": True,
            }
        )
        cluster["default_node_pool"][0]["enable_host_encryption"] = True  # azurerm 3
        pool["host_encryption_enabled"] = True

    assert not [f for f in _plan_with(tmp_path, harden).findings if f.rule.id in AKS_BASELINE]


def _plan_with(tmp_path: Path, edit: Any) -> Result:
    plan = orjson.loads((AZURE / "ml-platform.tfplan.json").read_bytes())
    edit(plan["planned_values"]["root_module"]["resources"], plan)
    path = tmp_path / "edited.tfplan.json"
    path.write_bytes(orjson.dumps(plan, option=orjson.OPT_INDENT_2))
    return _scan_path(path)


def _account(resources: list[dict[str, Any]]) -> dict[str, Any]:
    (account,) = [r for r in resources if r["type"] == "azurerm_storage_account"]
    return account


def test_terraform_https_and_sftp_attributes(tmp_path: Path) -> None:
    def edit(resources: list[dict[str, Any]], _: Any) -> None:
        _account(resources)["values"].update({"https_traffic_only_enabled": False, "sftp_enabled": True})

    found = {f.rule.id: f for f in _plan_with(tmp_path, edit).findings}
    assert {"STK-AZ-007", "STK-AZ-008"} <= set(found)

    # azurerm 3's name for the same attribute
    def old(resources: list[dict[str, Any]], _: Any) -> None:
        _account(resources)["values"]["enable_https_traffic_only"] = False

    assert "STK-AZ-007" in {f.rule.id for f in _plan_with(tmp_path, old).findings}


def test_terraform_separate_network_rules_resource_replaces_the_accounts(tmp_path: Path) -> None:
    """azurerm_storage_account_network_rules: a plan that sets Deny there is not reported as Allow."""

    def open_account(resources: list[dict[str, Any]], _: Any) -> None:
        values = _account(resources)["values"]
        values["public_network_access_enabled"] = True
        values.pop("network_rules")

    assert "STK-AZ-001" in {f.rule.id for f in _plan_with(tmp_path, open_account).findings}

    def with_rules(resources: list[dict[str, Any]], plan: Any) -> None:
        open_account(resources, plan)
        resources.append(
            {
                "address": "azurerm_storage_account_network_rules.checkpoints",
                "mode": "managed",
                "type": "azurerm_storage_account_network_rules",
                "name": "checkpoints",
                "values": {"default_action": "Deny", "ip_rules": [], "virtual_network_subnet_ids": []},
            }
        )
        plan["configuration"]["root_module"]["resources"].append(
            {
                "address": "azurerm_storage_account_network_rules.checkpoints",
                "type": "azurerm_storage_account_network_rules",
                "expressions": {
                    "storage_account_id": {
                        "references": [
                            "azurerm_storage_account.checkpoints.id",
                            "azurerm_storage_account.checkpoints",
                        ]
                    }
                },
            }
        )

    assert "STK-AZ-001" not in {f.rule.id for f in _plan_with(tmp_path, with_rules).findings}


def test_terraform_public_container(tmp_path: Path) -> None:
    def edit(resources: list[dict[str, Any]], _: Any) -> None:
        resources.append(
            {
                "address": "azurerm_storage_container.models",
                "mode": "managed",
                "type": "azurerm_storage_container",
                "name": "models",
                "values": {
                    "name": "models",
                    "storage_account_name": "stcheckpointseastus",
                    "container_access_type": "blob",
                },
            }
        )

    (finding,) = [f for f in _plan_with(tmp_path, edit).findings if f.rule.id == "STK-AZ-009"]
    assert finding.resource.name == "stcheckpointseastus/default/models"
    assert finding.details == {"publicAccess": "Blob"}


def test_terraform_storage_sync_traffic_policy(tmp_path: Path) -> None:
    def sync(policy: str | None) -> Any:
        def edit(resources: list[dict[str, Any]], _: Any) -> None:
            values: dict[str, Any] = {"name": "sync-ml", "resource_group_name": "rg", "location": "eastus"}
            if policy is not None:
                values["incoming_traffic_policy"] = policy
            resources.append(
                {
                    "address": "azurerm_storage_sync.ml",
                    "mode": "managed",
                    "type": "azurerm_storage_sync",
                    "name": "ml",
                    "values": values,
                }
            )

        return edit

    def found(policy: str | None) -> list[Any]:
        return [f for f in _plan_with(tmp_path, sync(policy)).findings if f.rule.id == "STK-AZ-017"]

    assert [f.resource.name for f in found(None)] == ["sync-ml"]  # the default is AllowAllTraffic
    assert len(found("AllowAllTraffic")) == 1
    assert found("AllowVirtualNetworksOnly") == []


def _commented(text: str) -> str:
    """The template with comments as people write them, no line added or removed: a `//` after every
    line that ends a value or opens an object, and a `/* */` block inside a line."""
    out = []
    for i, line in enumerate(text.splitlines()):
        if line.rstrip().endswith((",", "{", "[")):
            line += f'  // note {i}: a URL https://example.com/x and a "quote"'
        elif '"location"' in line:
            line = line.replace('"location"', '/* where */ "location"', 1)
        out.append(line)
    return "\n".join(out) + "\n"


def _verdicts_of(path: Path) -> set[tuple[str, str, int | None]]:
    result = _scan_path(path)
    assert result.errors == []
    return _verdicts(result)


def test_a_template_with_comments_is_read_as_resource_manager_reads_it(tmp_path: Path) -> None:
    """ARM templates (and their parameters files) may hold // and /* */ comments; such a template was
    "not JSON" and skipped, so its resources passed unjudged. Read with the comments blanked, it gives
    the findings of the same template without them, at the same lines."""
    original = (AZURE / "aks-storage-template.json").read_text()
    commented = _commented(original)
    assert commented.count("//") > 40 and commented.count("/*") >= 1
    (tmp_path / "azuredeploy.json").write_text(commented)
    expected = _verdicts(_scan("aks-storage-template.json"))
    assert expected and _verdicts_of(tmp_path / "azuredeploy.json") == expected
    # a parameters file beside it, with comments too, is read: allowSharedKey false clears STK-AZ-003
    (tmp_path / "azuredeploy.parameters.json").write_text(
        "{\n  // the production values\n"
        '  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",\n'
        '  "contentVersion": "1.0.0.0",\n'
        '  "parameters": { "allowSharedKey": { "value": false } /* no shared keys */ }\n}\n'
    )
    assert _verdicts_of(tmp_path / "azuredeploy.json") == {v for v in expected if v[0] != "STK-AZ-003"}


def test_a_kubernetes_manifest_with_comments_stays_invalid_json() -> None:
    """kubectl refuses comments in JSON: only Azure templates and parameters files may hold them."""
    text = '{\n  "apiVersion": "v1", // a pod\n  "kind": "Pod",\n  "metadata": {"name": "p"}\n}\n'
    (item,) = list(parse_text(text, "pod.json", json_file=True))
    assert isinstance(item, InputError) and item.line == 2 and "invalid JSON" in item.message


def test_a_template_with_strings_that_span_lines_is_read_as_resource_manager_reads_it(tmp_path: Path) -> None:
    """Resource Manager accepts a string written over several lines (the template syntax reference's
    "multi-line strings"; every deployment script sample writes its scriptContent so). Such a template
    was "invalid JSON" (8 of azure-docs-json-samples' templates): read now with the line breaks kept
    in the value, and the findings after the string at their own lines."""
    original = (AZURE / "aks-storage-template.json").read_text()
    script = (
        '{"type": "Microsoft.Resources/deploymentScripts", "apiVersion": "2020-10-01", "name": "s",\n'
        ' "kind": "AzureCLI", "properties": {"scriptContent": "\n  echo one\n\techo \\"two\\"\n",\n'
        '  "retentionInterval": "P1D"}},\n'
    )
    text = original.replace('\n  "resources": [', '\n  "resources": [\n' + script, 1)
    assert text != original
    (tmp_path / "azuredeploy.json").write_text(text)
    shift = text.count("\n") - original.count("\n")  # 7: the script's lines, 3 of them inside its string
    moved = {
        (rule, name, line + shift if line else line)
        for rule, name, line in _verdicts(_scan("aks-storage-template.json"))
    }
    assert moved and _verdicts_of(tmp_path / "azuredeploy.json") == moved
    (item,) = [
        r
        for r in parse_text(text, "t.json", json_file=True)
        if isinstance(r, Resource) and r.kind == "Microsoft.Resources/deploymentScripts"
    ]
    assert item.obj["properties"]["scriptContent"] == '\n  echo one\n\techo "two"\n'
    # a Kubernetes manifest may not: kubectl refuses it
    (error,) = list(
        parse_text(
            '{"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "x\ny"}}', "c.json", json_file=True
        )
    )
    assert isinstance(error, InputError) and "invalid JSON" in error.message


@pytest.mark.parametrize(
    "text",
    [
        "/*" * 200_000,
        '"\\"' * 200_000,
        "/" * 400_000,
        '"' + "a" * 400_000,
        '{"a": 1} /' + "* x" * 100_000,
        '"\\' * 200_000 + "\x01",  # unterminated strings holding a control character
        '"\n' * 200_000,
    ],
)
def test_comment_blanking_is_one_pass_on_hostile_text(text: str) -> None:
    """Every step of the blanking moves forward: a file of many unterminated `/*` or escapes ends (a
    regular expression retried at each start would take quadratic time); none of them is a template."""
    from stockade.scanner.sources.iac import arm_json

    assert arm_json(text) is None


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    """A template saved with a UTF-8 byte order mark (azure-docs-json-samples' management-group
    deployment) was "not JSON" and skipped, its storage account unjudged; Resource Manager and
    kubectl read past the mark. Findings keep their lines."""
    original = (AZURE / "aks-storage-template.json").read_text()
    (tmp_path / "azuredeploy.json").write_text("\ufeff" + original, encoding="utf-8")
    expected = _verdicts(_scan("aks-storage-template.json"))
    assert expected and _verdicts_of(tmp_path / "azuredeploy.json") == expected
    pod = '\ufeff{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}'
    (item,) = list(parse_text(pod, "p.json", json_file=True))
    assert isinstance(item, Resource) and item.name == "p"
