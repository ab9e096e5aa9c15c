"""Private-link storage (STK-STO-*) and workload identity (STK-ID-*) through the public pipeline.

The Rego unit tests pin each rule down; these check what a user sees: the same verdicts for the same
objects whatever gate builds the input (facts from the inventory, config from stockade.yaml), case-
insensitive CSI parameter keys, and Secret findings that name the key and never the value.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Finding, Operation, Resource

CONFIG = parse_config("storage:\n  approved_accounts: [stmlprod*]\n")
SECRET_VALUE = "c3VwZXItc2VjcmV0LWFjY291bnQta2V5"


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(CONFIG)


def _findings(evaluator: Evaluator, obj: dict[str, Any], *others: dict[str, Any]) -> list[Finding]:
    source = InventoryFacts(inventory_of([obj, *others], complete=True))
    resource = Resource(obj)
    return evaluator.evaluate(
        resource,
        operation=Operation.SCAN,
        namespace=source.namespace(resource.namespace),
        facts=source.facts(obj),
    )


def _ids(findings: list[Finding]) -> set[str]:
    return {f.rule.id for f in findings if f.rule.id.startswith(("STK-STO", "STK-ID"))}


def _sc(provisioner: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "sc"},
        "provisioner": provisioner,
        "parameters": params,
    }


GOOD_PARAMS = {
    "storageAccount": "stmlprodeastus",
    "networkEndpointType": "privateEndpoint",
    "storeAccountKey": "false",
}


@pytest.mark.parametrize("provisioner", ["blob.csi.azure.com", "file.csi.azure.com"])
def test_compliant_storage_class_is_clean(evaluator: Evaluator, provisioner: str) -> None:
    assert _ids(_findings(evaluator, _sc(provisioner, GOOD_PARAMS))) == set()
    shouting = {k.upper(): v.upper() if k != "storageAccount" else v for k, v in GOOD_PARAMS.items()}
    assert _ids(_findings(evaluator, _sc(provisioner, shouting))) == set()


def test_each_storage_class_control(evaluator: Evaluator) -> None:
    def without(key: str) -> dict[str, Any]:
        return {k: v for k, v in GOOD_PARAMS.items() if k != key}

    assert _ids(_findings(evaluator, _sc("blob.csi.azure.com", without("networkEndpointType")))) == {
        "STK-STO-001"
    }
    assert _ids(_findings(evaluator, _sc("blob.csi.azure.com", without("storageAccount")))) == {"STK-STO-002"}
    no_key = without("storeAccountKey")
    assert _ids(_findings(evaluator, _sc("blob.csi.azure.com", no_key))) == {"STK-STO-003"}
    other = {**GOOD_PARAMS, "storageAccount": "stpersonal"}
    (finding,) = _findings(evaluator, _sc("file.csi.azure.com", other))
    assert finding.rule.id == "STK-STO-002" and finding.path == ("parameters", "storageAccount")
    assert _ids(_findings(evaluator, _sc("disk.csi.azure.com", {}))) == set()


def test_nothing_is_approved_by_default() -> None:
    findings = _findings(Evaluator.default(), _sc("blob.csi.azure.com", GOOD_PARAMS))
    assert _ids(findings) == {"STK-STO-002"}


def test_persistent_volume_account(evaluator: Evaluator) -> None:
    def pv(csi: dict[str, Any]) -> dict[str, Any]:
        md = {"name": "pv"}
        return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": {"csi": csi}}

    good = {"driver": "blob.csi.azure.com", "volumeHandle": "rg#stmlprod01#data#uuid"}
    assert _ids(_findings(evaluator, pv(good))) == set()
    bad = {**good, "volumeAttributes": {"StorageAccount": "stelsewhere"}}
    (finding,) = _findings(evaluator, pv(bad))
    assert finding.path == ("spec", "csi", "volumeAttributes", "StorageAccount")
    assert finding.details["account"] == "stelsewhere"


def test_secret_findings_name_the_key_never_the_value(evaluator: Evaluator) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "storage", "namespace": "apps"},
        "data": {"azurestorageaccountname": "c3Q=", "AzureStorageAccountKey": SECRET_VALUE},
    }
    (finding,) = _findings(evaluator, secret)
    assert finding.rule.id == "STK-STO-004"
    assert finding.path == ("data", "AzureStorageAccountKey")
    text = orjson.dumps([finding.message, finding.details, list(finding.path)]).decode()
    assert "AzureStorageAccountKey" in text and SECRET_VALUE not in text
    audited = {**secret, "dataKeys": ["AzureStorageAccountKey"]}
    del audited["data"]
    (from_audit,) = _findings(evaluator, audited)
    assert (from_audit.rule.id, from_audit.path) == ("STK-STO-004", ("dataKeys",))


def _job(labels: dict[str, str], sa: str = "trainer") -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ml"},
        "spec": {"template": {"metadata": {"labels": labels}, "spec": {"serviceAccountName": sa}}},
    }


def _sa(annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "trainer", "namespace": "ml", "annotations": annotations},
    }


USE = {"azure.workload.identity/use": "true"}
CLIENT_ID = {"azure.workload.identity/client-id": "6f1c2a9e-3b7d-4c1e-9a55-0d2b7f4e8c11"}


def test_workload_identity_both_sides(evaluator: Evaluator) -> None:
    assert _ids(_findings(evaluator, _job(USE), _sa(CLIENT_ID))) == set()
    assert _ids(_findings(evaluator, _job({}), _sa({}))) == set()
    assert _ids(_findings(evaluator, _job(USE), _sa({}))) == {"STK-ID-001"}
    assert _ids(_findings(evaluator, _job({}), _sa(CLIENT_ID))) == {"STK-ID-002"}
    # a complete inventory without the ServiceAccount: missing, reported (the Namespace keeps the
    # inventory non-empty: InventoryFacts treats an empty inventory as none at all)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    missing = [f for f in _findings(evaluator, _job(USE), namespace) if f.rule.id == "STK-ID-001"]
    assert len(missing) == 1 and "does not exist" in missing[0].message


def test_unknown_service_account_is_not_reported_in_a_partial_scan(evaluator: Evaluator) -> None:
    job = _job(USE)
    source = InventoryFacts(inventory_of([job], complete=False))
    findings = evaluator.evaluate(Resource(job), facts=source.facts(job))
    assert _ids(findings) == set()
