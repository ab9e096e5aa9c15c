"""Federated identity credentials and role assignments read from a terraform plan (issue 38).

The fixture (tests/scanner/tfplan/identities.tfplan.json) is shaped like `terraform show -json PLAN`
for azurerm: a storage account, a user-assigned identity, two federated credentials whose issuer is a
cluster's `oidc_issuer_url` (known only after apply) and two storage data-plane role assignments, one
at a subscription and one on the account (a reference, resolved to the planned account).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource

PLAN = Path(__file__).resolve().parent / "tfplan" / "identities.tfplan.json"


def _scan(path: Path) -> Result:
    config = parse_config("{}")
    return run_scan(FileSource([str(path)]), [], Evaluator.default(config), ScanOptions(config), version="t")


def _found(result: Result, rule: str) -> dict[str, int | None]:
    return {f.resource.name: f.line for f in result.findings if f.rule.id == rule}


def test_federated_credentials_and_role_assignments_are_judged_from_a_plan() -> None:
    result = _scan(PLAN)
    assert result.errors == []
    # the default ServiceAccount's credential, named under its identity as ARM names it, at its line
    assert _found(result, "STK-AZ-040") == {"id-trainer/fic-default": 17}
    # an issuer known only after apply (the cluster's oidc_issuer_url) is not judged
    assert _found(result, "STK-AZ-039") == {}
    # Storage Blob Data Owner at a subscription; the reader on the account itself is fine
    assert _found(result, "STK-AZ-041") == {"azurerm_role_assignment.blob_owner_subscription": 24}
    (owner,) = [f for f in result.findings if f.rule.id == "STK-AZ-041"]
    assert "known only after apply" in owner.message  # the principal, from the identity


def test_a_role_on_a_resource_group_is_a_finding(tmp_path: Path) -> None:
    plan = orjson.loads(PLAN.read_bytes())
    for res in plan["planned_values"]["root_module"]["resources"]:
        if res["address"] == "azurerm_role_assignment.blob_reader_account":
            res["values"]["scope"] = (
                "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-ai"
            )
    path = tmp_path / "plan.json"
    path.write_bytes(orjson.dumps(plan))
    found = _found(_scan(path), "STK-AZ-041")
    assert set(found) == {
        "azurerm_role_assignment.blob_owner_subscription",
        "azurerm_role_assignment.blob_reader_account",
    }
