"""terraform plans feed the private-AI and AKS baseline rules (STK-AZ-018..034) as ARM templates do.

The fixtures in tests/scanner/tfplan are shaped like `terraform show -json PLAN` output (planned
values, resource changes with ``after_unknown``, configuration references) for azurerm 4; tests edit
them into the azurerm 3 spellings and into values known only after apply. Each plan goes through the
whole `stockade scan` pipeline (file reader, facts, the embedded Rego engine); nothing leaves the
machine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from stockade.policies.config.settings import load_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import Resource
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource, parse_text

ROOT = Path(__file__).resolve().parents[2]
PLANS = Path(__file__).resolve().parent / "tfplan"
CONFIG = load_config(ROOT / "examples" / "stockade.yaml")

BASELINE = {"STK-AZ-030", "STK-AZ-031", "STK-AZ-032", "STK-AZ-033", "STK-AZ-034"}
PRIVATE_AI = {f"STK-AZ-0{n}" for n in range(18, 30)}

Plan = dict[str, Any]


def _scan(path: Path) -> Result:
    return run_scan(FileSource([str(path)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t")


def _edited(tmp_path: Path, fixture: str, edit: Callable[[Plan], None]) -> Result:
    plan = orjson.loads((PLANS / fixture).read_bytes())
    edit(plan)
    path = tmp_path / fixture
    path.write_bytes(orjson.dumps(plan, option=orjson.OPT_INDENT_2))
    return _scan(path)


def _values(plan: Plan, address: str) -> dict[str, Any]:
    (res,) = [r for r in plan["planned_values"]["root_module"]["resources"] if r["address"] == address]
    values: dict[str, Any] = res["values"]
    return values


def _unknown(plan: Plan, address: str) -> dict[str, Any]:
    (change,) = [c for c in plan["resource_changes"] if c["address"] == address]
    unknown: dict[str, Any] = change["change"]["after_unknown"]
    return unknown


def _drop(plan: Plan, address: str) -> None:
    """Take a resource out of the plan (planned values, changes, configuration)."""
    root = plan["planned_values"]["root_module"]
    root["resources"] = [r for r in root["resources"] if r["address"] != address]
    plan["resource_changes"] = [c for c in plan["resource_changes"] if c["address"] != address]
    config = plan["configuration"]["root_module"]
    config["resources"] = [r for r in config["resources"] if r["address"] != address]


def _verdicts(result: Result, rules: set[str]) -> set[tuple[str, str]]:
    assert result.errors == []
    return {(f.rule.id, f.resource.name) for f in result.findings if f.rule.id in rules}


def _line(result: Result, rule: str, name: str, fixture: Path) -> str:
    (finding,) = [f for f in result.findings if f.rule.id == rule and f.resource.name == name]
    assert finding.line is not None
    return fixture.read_text().splitlines()[finding.line - 1].strip()


CLUSTER = "azurerm_kubernetes_cluster.ai"
POOL = "azurerm_kubernetes_cluster_node_pool.gpu"


# --- the AKS baseline controls ----------------------------------------------------------------------


def test_hardened_planned_cluster_passes_every_baseline_control() -> None:
    """Defender, KMS with a private key vault, run command off, Image Cleaner, encryption at host on
    the default pool and the separate GPU pool: none of STK-AZ-030..034."""
    assert _verdicts(_scan(PLANS / "aks-hardened.tfplan.json"), BASELINE) == set()


def test_default_planned_cluster_fails_each_baseline_control() -> None:
    fixture = PLANS / "aks-default.tfplan.json"
    result = _scan(fixture)
    assert _verdicts(result, BASELINE) == {
        ("STK-AZ-030", "aks-ai-westeu"),
        ("STK-AZ-031", "aks-ai-westeu"),
        ("STK-AZ-031", "aks-ai-westeu/gpua100"),
        ("STK-AZ-032", "aks-ai-westeu"),
        ("STK-AZ-033", "aks-ai-westeu"),
        ("STK-AZ-034", "aks-ai-westeu"),
    }
    # each finding points at the attribute it comes from
    assert _line(result, "STK-AZ-030", "aks-ai-westeu", fixture) == '"microsoft_defender": [],'
    assert _line(result, "STK-AZ-031", "aks-ai-westeu", fixture) == '"host_encryption_enabled": false,'
    assert (
        _line(result, "STK-AZ-031", "aks-ai-westeu/gpua100", fixture) == '"host_encryption_enabled": false,'
    )
    assert _line(result, "STK-AZ-032", "aks-ai-westeu", fixture) == '"key_management_service": [],'
    # run_command_enabled true (the provider's default) is disableRunCommand false
    assert _line(result, "STK-AZ-033", "aks-ai-westeu", fixture) == '"run_command_enabled": true,'
    assert _line(result, "STK-AZ-034", "aks-ai-westeu", fixture) == '"image_cleaner_enabled": false,'


def test_azurerm_3_host_encryption_name(tmp_path: Path) -> None:
    def rename(value: bool) -> Callable[[Plan], None]:
        def edit(plan: Plan) -> None:
            for pool in (_values(plan, CLUSTER)["default_node_pool"][0], _values(plan, POOL)):
                del pool["host_encryption_enabled"]
                pool["enable_host_encryption"] = value

        return edit

    assert _verdicts(_edited(tmp_path, "aks-hardened.tfplan.json", rename(True)), BASELINE) == set()
    assert _verdicts(_edited(tmp_path, "aks-hardened.tfplan.json", rename(False)), BASELINE) == {
        ("STK-AZ-031", "aks-ai-westeu"),
        ("STK-AZ-031", "aks-ai-westeu/gpua100"),
    }


def test_kms_key_vault_reached_publicly(tmp_path: Path) -> None:
    def network_access(value: str | None) -> Callable[[Plan], None]:
        def edit(plan: Plan) -> None:
            _values(plan, CLUSTER)["key_management_service"][0]["key_vault_network_access"] = value

        return edit

    for value in ("Public", None):  # None: the provider's (and the API's) default, Public
        result = _edited(tmp_path, "aks-hardened.tfplan.json", network_access(value))
        (finding,) = [f for f in result.findings if f.rule.id in BASELINE]
        assert finding.rule.id == "STK-AZ-032"
        assert finding.details == {"keyVaultNetworkAccess": "Public"}


def test_cluster_settings_known_only_after_apply_are_the_worst_case(tmp_path: Path) -> None:
    """A value terraform reports in after_unknown is left out of planned_values: read as absent,
    an unknown run_command_enabled would still fail, but an unknown Defender block or host encryption
    on a hardened plan must fail too, never pass for want of a value."""

    def edit(plan: Plan) -> None:
        cluster, unknown = _values(plan, CLUSTER), _unknown(plan, CLUSTER)
        del cluster["microsoft_defender"]  # a dynamic block over a value known after apply
        unknown["microsoft_defender"] = True
        del cluster["run_command_enabled"]
        unknown["run_command_enabled"] = True
        del cluster["default_node_pool"][0]["host_encryption_enabled"]
        unknown["default_node_pool"][0]["host_encryption_enabled"] = True
        del _values(plan, POOL)["host_encryption_enabled"]
        _unknown(plan, POOL)["host_encryption_enabled"] = True

    result = _edited(tmp_path, "aks-hardened.tfplan.json", edit)
    assert _verdicts(result, BASELINE) == {
        ("STK-AZ-030", "aks-ai-westeu"),
        ("STK-AZ-031", "aks-ai-westeu"),
        ("STK-AZ-031", "aks-ai-westeu/gpua100"),
        ("STK-AZ-033", "aks-ai-westeu"),
    }
    (cluster,) = [r for r in _resources(tmp_path / "aks-hardened.tfplan.json") if r.name == "aks-ai-westeu"]
    props = cluster.obj["properties"]
    assert props["apiServerAccessProfile"]["disableRunCommand"] == (
        "[unknown: set by an expression stockade cannot evaluate: "
        "azurerm_kubernetes_cluster.ai.run_command_enabled is known only after apply]"
    )
    assert "default_node_pool[0].host_encryption_enabled is known only after apply" in str(
        props["agentPoolProfiles"][0]["enableEncryptionAtHost"]
    )


def _resources(path: Path) -> list[Resource]:
    return [r for r in parse_text(path.read_text(), path.name, json_file=True) if isinstance(r, Resource)]


# --- Key Vault, ACR, ML workspaces, Azure OpenAI -----------------------------------------------------

VAULT = "azurerm_key_vault.ai"
REGISTRY = "azurerm_container_registry.ai"
WORKSPACE = "azurerm_machine_learning_workspace.ai"
OPENAI = "azurerm_cognitive_account.openai"
SUBNET_ID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/apps"


def test_private_ai_resources_hardened_pass() -> None:
    """Public access off, firewalls deny with no rules, no admin user or anonymous pull, approved-
    outbound managed network, keys off, and a private endpoint to each (targets known after apply,
    found through the configuration references)."""
    assert _verdicts(_scan(PLANS / "private-ai-hardened.tfplan.json"), PRIVATE_AI) == set()


def test_private_ai_resources_public_fail() -> None:
    fixture = PLANS / "private-ai-public.tfplan.json"
    result = _scan(fixture)
    assert _verdicts(result, PRIVATE_AI) == {
        ("STK-AZ-018", "kv-ai-westeu"),
        ("STK-AZ-019", "kv-ai-westeu"),
        ("STK-AZ-020", "craiwesteu"),
        ("STK-AZ-021", "craiwesteu"),
        ("STK-AZ-022", "craiwesteu"),
        ("STK-AZ-023", "craiwesteu"),
        ("STK-AZ-024", "mlw-ai-westeu"),
        ("STK-AZ-025", "mlw-ai-westeu"),
        ("STK-AZ-026", "mlw-ai-westeu"),
        ("STK-AZ-027", "oai-ai-westeu"),
        ("STK-AZ-028", "oai-ai-westeu"),
        ("STK-AZ-029", "oai-ai-westeu"),
    }
    assert _line(result, "STK-AZ-018", "kv-ai-westeu", fixture) == '"public_network_access_enabled": true,'
    assert _line(result, "STK-AZ-022", "craiwesteu", fixture) == '"admin_enabled": true,'
    assert _line(result, "STK-AZ-023", "craiwesteu", fixture) == '"anonymous_pull_enabled": true,'
    assert (
        _line(result, "STK-AZ-025", "mlw-ai-westeu", fixture) == '"isolation_mode": "AllowInternetOutbound"'
    )
    assert _line(result, "STK-AZ-028", "oai-ai-westeu", fixture) == '"local_auth_enabled": true,'
    (openai,) = [f for f in result.findings if f.rule.id == "STK-AZ-027"]
    assert openai.details == {"publicNetworkAccess": "Enabled", "defaultAction": "Allow"}


def test_private_endpoint_to_the_key_vault_resolves(tmp_path: Path) -> None:
    """STK-AZ-019 passes through the endpoint's reference (the vault's id is known only after
    apply), through a known vault id, and fails once the endpoint is gone."""
    assert "STK-AZ-019" not in {f.rule.id for f in _scan(PLANS / "private-ai-hardened.tfplan.json").findings}

    def known_id(plan: Plan) -> None:
        vault_id = (
            "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-ai-prod-westeu"
            "/providers/Microsoft.KeyVault/vaults/kv-ai-westeu"
        )
        _values(plan, VAULT)["id"] = vault_id
        endpoint = _values(plan, "azurerm_private_endpoint.kv_ai")
        endpoint["private_service_connection"][0]["private_connection_resource_id"] = vault_id
        for res in plan["configuration"]["root_module"]["resources"]:
            if res["address"] == "azurerm_private_endpoint.kv_ai":
                res["expressions"].pop("private_service_connection")

    assert _verdicts(_edited(tmp_path, "private-ai-hardened.tfplan.json", known_id), PRIVATE_AI) == set()

    def no_endpoint(plan: Plan) -> None:
        _drop(plan, "azurerm_private_endpoint.kv_ai")

    result = _edited(tmp_path, "private-ai-hardened.tfplan.json", no_endpoint)
    assert _verdicts(result, PRIVATE_AI) == {("STK-AZ-019", "kv-ai-westeu")}


def test_firewall_rules_keep_a_resource_public(tmp_path: Path) -> None:
    """Public access on, default action Deny, but IP rules: reachable from those addresses."""

    def edit(plan: Plan) -> None:
        vault, registry, openai = _values(plan, VAULT), _values(plan, REGISTRY), _values(plan, OPENAI)
        for values in (vault, registry, openai):
            values["public_network_access_enabled"] = True
        vault["network_acls"][0]["ip_rules"] = ["203.0.113.0/24"]
        registry["network_rule_set"][0]["ip_rule"] = [{"action": "Allow", "ip_range": "198.51.100.7/32"}]
        openai["network_acls"][0]["virtual_network_rules"] = [{"subnet_id": SUBNET_ID}]

    result = _edited(tmp_path, "private-ai-hardened.tfplan.json", edit)
    found = {f.rule.id: f for f in result.findings if f.rule.id in PRIVATE_AI}
    assert set(found) == {"STK-AZ-018", "STK-AZ-020", "STK-AZ-027"}
    assert all(f.details == {"rules": 1} for f in found.values())


def test_private_ai_settings_known_only_after_apply_are_the_worst_case(tmp_path: Path) -> None:
    """Attributes in after_unknown are left out of planned_values; read as absent, admin_enabled
    (default false) would pass. They carry the unknown marker instead: an unknown public access with
    an unknown IP rule list is not a closed firewall, an unknown isolation mode or local auth fails."""

    def edit(plan: Plan) -> None:
        registry = _values(plan, REGISTRY)
        del registry["admin_enabled"]
        _unknown(plan, REGISTRY)["admin_enabled"] = True
        vault = _values(plan, VAULT)
        del vault["public_network_access_enabled"]
        del vault["network_acls"][0]["ip_rules"]
        _unknown(plan, VAULT).update(
            {"public_network_access_enabled": True, "network_acls": [{"ip_rules": True}]}
        )
        workspace = _values(plan, WORKSPACE)
        del workspace["managed_network"]
        _unknown(plan, WORKSPACE)["managed_network"] = True
        openai = _values(plan, OPENAI)
        del openai["local_auth_enabled"]
        _unknown(plan, OPENAI)["local_auth_enabled"] = True

    result = _edited(tmp_path, "private-ai-hardened.tfplan.json", edit)
    # STK-AZ-022 itself passes an unknown adminUserEnabled (it fails only `true`, in templates too):
    # the plan's side, the marker, is checked below
    assert _verdicts(result, PRIVATE_AI - {"STK-AZ-022"}) == {
        ("STK-AZ-018", "kv-ai-westeu"),
        ("STK-AZ-025", "mlw-ai-westeu"),
        ("STK-AZ-028", "oai-ai-westeu"),
    }
    (registry,) = [
        r for r in _resources(tmp_path / "private-ai-hardened.tfplan.json") if r.name == "craiwesteu"
    ]
    assert registry.obj["properties"]["adminUserEnabled"] == (
        "[unknown: set by an expression stockade cannot evaluate: "
        "azurerm_container_registry.ai.admin_enabled is known only after apply]"
    )
    (workspace,) = [f for f in result.findings if f.rule.id == "STK-AZ-025"]
    assert (
        "azurerm_machine_learning_workspace.ai.managed_network[0].isolation_mode is known only after apply"
        in (workspace.message)
    )


def test_azurerm_4_ai_services_and_ai_foundry(tmp_path: Path) -> None:
    """azurerm_ai_services (an AIServices account) and azurerm_ai_foundry (a hub workspace) spell
    public access as an Enabled/Disabled string and local auth as local_authentication_enabled."""

    def edit(hardened: bool) -> Callable[[Plan], None]:
        def apply(plan: Plan) -> None:
            text = orjson.dumps(plan).decode()
            text = text.replace('"azurerm_cognitive_account', '"azurerm_ai_services')
            text = text.replace('"azurerm_machine_learning_workspace', '"azurerm_ai_foundry')
            renamed = orjson.loads(text)
            plan.clear()
            plan.update(renamed)
            for address in ("azurerm_ai_services.openai", "azurerm_ai_foundry.ai"):
                values = _values(plan, address)
                del values["public_network_access_enabled"]
                values["public_network_access"] = "Disabled" if hardened else "Enabled"
            services = _values(plan, "azurerm_ai_services.openai")
            services["local_authentication_enabled"] = services.pop("local_auth_enabled")

        return apply

    hardened = _edited(tmp_path, "private-ai-hardened.tfplan.json", edit(True))
    assert _verdicts(hardened, PRIVATE_AI) == set()
    kinds = {r.name: r.obj.get("kind") for r in _resources(tmp_path / "private-ai-hardened.tfplan.json")}
    assert (kinds["oai-ai-westeu"], kinds["mlw-ai-westeu"]) == ("AIServices", "Hub")

    public = _edited(tmp_path, "private-ai-hardened.tfplan.json", edit(False))
    assert _verdicts(public, PRIVATE_AI) == {("STK-AZ-024", "mlw-ai-westeu")}  # the account's firewall denies
