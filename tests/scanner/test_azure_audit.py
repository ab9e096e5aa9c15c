"""`stockade audit --azure-subscription`: the real Azure SDK clients against ARM-shaped fixtures.

The management clients (storage, network, private DNS, container service) run unmodified; only
their azure-core transport is replaced by :class:`FakeArm`, which serves the resources of
examples/azure/resource-graph-export.json the way ARM does: ``{"value": [...], "nextLink": ...}``
pages, a 429 with ``Retry-After`` before the first page of storage accounts, a 403 for firewalls,
a 404 for route tables (provider not registered). The credential is a static test token. Nothing
is sent anywhere: the transport never opens a socket.
"""

from __future__ import annotations

import importlib
import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest
import requests
import yaml
from azure.core.credentials import AccessToken
from azure.core.exceptions import ClientAuthenticationError
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest._requests_basic import RestRequestsTransportResponse
from typer.testing import CliRunner

from stockade.cli.main import app
from stockade.policies.config.settings import load_config
from stockade.policies.evaluate import Evaluator
from stockade.scanner import azure_audit
from stockade.scanner.azure_audit import NOT_APPLICABLE, context_servers, run_azure_stage
from stockade.scanner.reports import get_report
from stockade.scanner.reports.fleet import fleet_view
from stockade.scanner.result import ClusterStats, Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.azure import AzureAuthError, AzureReader, check_credential, make_credential
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "examples" / "azure" / "resource-graph-export.json"
CONFIG = load_config(ROOT / "examples" / "stockade.yaml")
SUB = "3f2a9c71-5d4e-4b8a-9e61-2c7d0f1a8b35"
AKS_HOST = "aks-prod-eastus-7h2k9x.privatelink.eastus.azmk8s.io"
#: the AKS baseline controls, which the example cluster does not set (tests/policies/test_azure_private_ai.py)
_AKS_BASELINE = frozenset({"STK-AZ-030", "STK-AZ-031", "STK-AZ-032", "STK-AZ-033", "STK-AZ-034"})
PAGE = 1  # one resource per page: every list with more than one resource pages through nextLink


class StaticCredential:
    """A TokenCredential with a fixed token (never a real one)."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **_: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken("test-token", 4_102_444_800)


class FailingCredential:
    def get_token(self, *scopes: str, **_: Any) -> AccessToken:
        raise ClientAuthenticationError("AADSTS700016: application not found in the directory")


class _InProcessTransport(HttpTransport):
    """An azure-core transport answered in this process (``send``): nothing to open or close."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass


class FakeArm(_InProcessTransport):
    """ARM list endpoints over the export's resources, with paging, throttling and errors."""

    def __init__(self, resources: list[dict[str, Any]], *, forbid_firewalls: bool = True) -> None:
        self.resources = resources
        self.requests: list[tuple[str, str]] = []
        self.throttled: set[str] = set()
        self.forbid_firewalls = forbid_firewalls

    def send(self, request: Any, **_: Any) -> Any:
        self.requests.append((request.method, request.url))
        url = urlsplit(request.url)
        path = url.path.lower()
        if request.method != "GET":
            return _response(request, 405, {"error": {"code": "MethodNotAllowed"}})
        if path.endswith("/microsoft.storage/storageaccounts") and path not in self.throttled:
            self.throttled.add(path)
            return _response(request, 429, {"error": {"code": "TooManyRequests"}}, {"Retry-After": "0"})
        if path.endswith("/azurefirewalls") and self.forbid_firewalls:
            return _response(request, 403, {"error": {"code": "AuthorizationFailed", "message": "no read"}})
        if path.endswith("/routetables"):
            return _response(request, 404, {"error": {"code": "SubscriptionNotFound"}})
        if path.endswith("/virtualnetworklinks"):
            zone = path.split("/privatednszones/")[1].split("/")[0]
            items = [
                r
                for r in self.resources
                if r["type"].endswith("virtualnetworklinks") and f"/{zone}/" in r["id"].lower()
            ]
        elif path.endswith("/federatedidentitycredentials"):
            identity = path.rsplit("/", 1)[0]
            items = [
                r
                for r in self.resources
                if r["id"].lower().startswith(identity + "/federatedidentitycredentials/")
            ]
        elif path.endswith("/blobservices/default/containers"):
            account = path.split("/blobservices/")[0]
            items = [
                r
                for r in self.resources
                if r["type"].lower().endswith("/containers") and r["id"].lower().startswith(account + "/")
            ]
        else:
            kind = "/".join(path.split("/providers/")[-1].split("/")[:2])
            items = [r for r in self.resources if r["type"].lower() == kind]
        subscription = path.split("/subscriptions/")[1].split("/")[0]
        items = [r for r in items if r["id"].lower().startswith(f"/subscriptions/{subscription}/")]
        start = int(parse_qs(url.query).get("skip", ["0"])[0])
        body: dict[str, Any] = {"value": items[start : start + PAGE]}
        if start + PAGE < len(items):
            body["nextLink"] = (
                f"https://management.azure.com{url.path}?api-version=2024-01-01&skip={start + PAGE}"
            )
        return _response(request, 200, body)


def _response(request: Any, status: int, body: Any, headers: dict[str, str] | None = None) -> Any:
    raw = requests.Response()
    raw.status_code = status
    raw.reason = {
        200: "OK",
        401: "Unauthorized",
        403: "Forbidden",
        404: "Not Found",
        405: "Method Not Allowed",
        429: "Too Many",
    }[status]
    raw.headers.update({"Content-Type": "application/json", **(headers or {})})
    raw._content = json.dumps(body).encode()
    raw._content_consumed = True
    raw.raw = io.BytesIO(raw._content)
    raw.url = request.url
    return RestRequestsTransportResponse(request=request, internal_response=raw)


def _resources() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = orjson.loads(EXPORT.read_bytes())["data"]
    return data


def _kubeconfig(tmp_path: Path, servers: dict[str, str]) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": s}} for n, s in servers.items()],
        "users": [{"name": "u", "user": {"token": "x"}}],
        "contexts": [{"name": n, "context": {"cluster": n, "user": "u"}} for n in servers],
        "current-context": next(iter(servers)),
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture()
def arm() -> FakeArm:
    return FakeArm(_resources())


def _stage(
    arm: FakeArm, tmp_path: Path, credential: Any = None, subscriptions: tuple[str, ...] = (SUB,)
) -> Result:
    result = Result(tool_version="t")
    result.clusters = [ClusterStats("aks-prod-eastus"), ClusterStats("gpu-bm-1")]
    kubeconfig = _kubeconfig(
        tmp_path, {"aks-prod-eastus": f"https://{AKS_HOST}:443", "gpu-bm-1": "https://10.40.0.10:6443"}
    )
    run_azure_stage(
        result,
        Evaluator.default(CONFIG),
        list(subscriptions),
        contexts=["aks-prod-eastus", "gpu-bm-1"],
        kubeconfig=kubeconfig,
        credential=credential or StaticCredential(),
        transport=arm,
        retry_backoff_factor=0.0,
    )
    return result


def test_live_audit_decides_as_the_offline_scan_of_the_same_resources(arm: FakeArm, tmp_path: Path) -> None:
    live = _stage(arm, tmp_path)
    offline = run_scan(
        FileSource([str(EXPORT)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t"
    )
    assert live.errors == []
    assert {(f.rule.id, f.resource.kind, f.resource.name) for f in live.findings} == {
        (f.rule.id, f.resource.kind, f.resource.name) for f in offline.findings
    }
    # the AKS cluster's findings carry the kubeconfig context whose API server is its private FQDN
    (aks,) = [
        f
        for f in live.findings
        if f.resource.kind.endswith("managedClusters") and f.rule.id not in _AKS_BASELINE
    ]
    assert aks.resource.cluster == "aks-prod-eastus"
    assert {f.resource.cluster for f in live.findings if "storageAccounts" in f.resource.kind} == {None}


def test_blob_containers_and_storage_sync_services_are_listed(tmp_path: Path) -> None:
    """STK-AZ-009 and STK-AZ-017 decide live resources too: each account's containers are listed (one
    call per account with a blob service), and the subscription's Storage Sync Services."""
    resources = _resources()
    (account, *_) = [r for r in resources if r["type"].endswith("storageaccounts")]
    base = f"/subscriptions/{SUB}/resourceGroups/rg-ml-prod-eastus/providers"
    resources += [
        {
            "id": f"{account['id']}/blobServices/default/containers/{name}",
            "name": name,
            "type": "Microsoft.Storage/storageAccounts/blobServices/containers",
            "properties": {"publicAccess": access},
        }
        for name, access in (("datasets", "Container"), ("checkpoints", "None"))
    ]
    resources += [
        {
            "id": f"{base}/Microsoft.StorageSync/storageSyncServices/{name}",
            "name": name,
            "type": "Microsoft.StorageSync/storageSyncServices",
            "location": "eastus",
            "properties": {"incomingTrafficPolicy": policy},
        }
        for name, policy in (("sync-open", "AllowAllTraffic"), ("sync-private", "AllowVirtualNetworksOnly"))
    ]
    arm = FakeArm(resources)
    live = _stage(arm, tmp_path)
    assert live.errors == []
    container_lists = {urlsplit(u).path for _, u in arm.requests if "/containers" in u}
    assert len(container_lists) == 2  # one list per StorageV2 account (its pages aside)
    found = {(f.rule.id, f.resource.name) for f in live.findings}
    assert ("STK-AZ-009", "datasets") in found and ("STK-AZ-017", "sync-open") in found
    assert not {n for r, n in found if r in ("STK-AZ-009", "STK-AZ-017")} & {"checkpoints", "sync-private"}
    # the same verdicts as an offline scan of the same resources (a Resource Graph export)
    export = tmp_path / "export.json"
    export.write_bytes(orjson.dumps({"data": resources}))
    offline = run_scan(
        FileSource([str(export)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t"
    )
    assert found == {(f.rule.id, f.resource.name) for f in offline.findings}


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def _sdk_21_shape(obj: Any) -> Any:
    """What ``as_dict()`` of azure-mgmt-storage 21.1.0's msrest models returns for a REST object:
    snake_case attribute names, ``properties`` flattened into the object."""
    if isinstance(obj, list):
        return [_sdk_21_shape(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    flat = {**{k: v for k, v in obj.items() if k != "properties"}, **(obj.get("properties") or {})}
    return {_snake(k): _sdk_21_shape(v) for k, v in flat.items()}


def _sdk_models() -> list[type]:
    """The model base classes of the installed management SDKs (msrest or typespec generation)."""
    for package in ("storage", "network", "privatedns", "containerservice", "storagesync"):
        importlib.import_module(f"azure.mgmt.{package}.models")
    found: list[type] = []
    for name, module in list(sys.modules.items()):
        if re.fullmatch(r"azure\.mgmt\.\w+\.(_utils\.)?(model_base|serialization|_serialization)", name):
            model = getattr(module, "Model", None)
            if isinstance(model, type) and hasattr(model, "as_dict"):
                found.append(model)
    return found


@pytest.mark.parametrize("as_dict", ["snake_case", "raises"])
def test_verdicts_do_not_depend_on_the_sdk_model_shape(
    as_dict: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: the live path reads the REST JSON, not the SDK's models. With every management SDK
    model's ``as_dict()`` made to behave as azure-mgmt-storage 21.1.0's (snake_case keys, no
    ``properties``), or to raise, a hardened account with SFTP on and a public container is judged
    exactly as an offline scan of the same REST JSON: SFTP and the container found, nothing else."""
    models = _sdk_models()
    assert models  # the installed SDKs' model bases are patched, whichever generation they are
    for model in models:

        def fake(self: Any, *args: Any, _rest: Any = model.as_dict, **kwargs: Any) -> Any:
            if as_dict == "raises":
                raise AssertionError("the live path called an SDK model's as_dict()")
            return _sdk_21_shape(_rest(self, *args, **kwargs))

        monkeypatch.setattr(model, "as_dict", fake)
    resources = _resources()
    account = next(r for r in resources if r["name"] == "stmlprodeastus")
    account["properties"]["isSftpEnabled"] = True
    resources.append(
        {
            "id": f"{account['id']}/blobServices/default/containers/public-data",
            "name": "public-data",
            "type": "Microsoft.Storage/storageAccounts/blobServices/containers",
            "properties": {"publicAccess": "Blob"},
        }
    )
    live = _stage(FakeArm(resources, forbid_firewalls=False), tmp_path)
    assert live.errors == [] and live.gaps == []
    found = {(f.rule.id, f.resource.name) for f in live.findings}
    export = tmp_path / "export.json"
    export.write_bytes(orjson.dumps({"data": resources}))
    offline = run_scan(
        FileSource([str(export)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t"
    )
    assert found == {(f.rule.id, f.resource.name) for f in offline.findings}
    assert ("STK-AZ-008", "stmlprodeastus") in found and ("STK-AZ-009", "public-data") in found
    # the hardened account raises SFTP and nothing else (no false public-access, TLS or shared-key finding)
    assert {r for r, n in found if n == "stmlprodeastus"} == {"STK-AZ-008"}


def test_paging_throttling_and_list_errors(arm: FakeArm, tmp_path: Path) -> None:
    result = _stage(arm, tmp_path)
    urls = [u for _, u in arm.requests]
    storage = [u for u in urls if "storageAccounts" in u and "/containers" not in u]
    assert len(storage) == 3  # 429, then page 1, then the nextLink page
    assert any("skip=1" in u for u in storage)
    assert [g.scope for g in result.gaps] == [f"azure/{SUB}/Microsoft.Network/azureFirewalls"]
    assert "forbidden" in result.gaps[0].message and "403" in result.gaps[0].message
    # a 404 (route tables: provider not registered) is absence, not a gap


def test_only_list_operations_are_called(arm: FakeArm, tmp_path: Path) -> None:
    _stage(arm, tmp_path)
    assert {m for m, _ in arm.requests} == {"GET"}
    lowered = " ".join(u.lower() for _, u in arm.requests)
    for forbidden in ("listkeys", "regeneratekey", "listaccountsas", "listservicesas", "listclusteradmin"):
        assert forbidden not in lowered


def test_bare_metal_context_is_not_applicable(arm: FakeArm, tmp_path: Path) -> None:
    result = _stage(arm, tmp_path)
    extras = {c.name: c.extras.get("azure") for c in result.clusters}
    assert extras == {"aks-prod-eastus": "audited", "gpu-bm-1": NOT_APPLICABLE}
    assert not any(f.resource.cluster == "gpu-bm-1" for f in result.findings)
    # every report says so: JSON per cluster, the HTML fleet table, and the azure area is not scored
    result.rules = dict(Evaluator.default(CONFIG).rules)  # as run_audit fills them
    doc = orjson.loads(get_report("json").render(result))
    assert {c["name"]: c["azure"] for c in doc["clusters"]} == extras
    view = fleet_view(result)
    assert view is not None and view.azure
    areas = {c.name: c.areas["azure"] for c in view.clusters}
    assert areas["gpu-bm-1"] is None and areas["aks-prod-eastus"] is not None
    html = get_report("html").render(result)
    assert (
        "Azure side" in html and ">not applicable</span>" in html and "no AKS cluster of the audited" in html
    )


def test_without_azure_subscription_the_azure_area_is_not_scored() -> None:
    result = Result(tool_version="t")
    result.clusters = [ClusterStats("gpu-bm-1")]
    result.rules = dict(Evaluator.default(CONFIG).rules)
    view = fleet_view(result)
    assert view is not None and not view.azure
    assert view.clusters[0].areas["azure"] is None and view.clusters[0].score == 100
    assert "Azure side" not in get_report("html").render(result)
    assert orjson.loads(get_report("json").render(result))["clusters"][0]["azure"] is None


def test_no_credential_skips_the_azure_checks_with_one_message(arm: FakeArm, tmp_path: Path) -> None:
    result = _stage(arm, tmp_path, credential=FailingCredential())
    assert arm.requests == []
    (error,) = result.errors
    assert "no Azure credential" in error.message and "az login" in error.message
    assert [(g.scope, "skipped" in g.message) for g in result.gaps] == [(f"azure/{SUB}", True)]
    assert result.findings == []


def test_hub_subscription_facts_reach_the_spoke(tmp_path: Path) -> None:
    """Private DNS zones in a hub subscription count for the spoke's storage accounts."""
    hub = "9d0c5b1a-7e2f-4c3d-8a9b-0e1f2a3b4c5d"
    resources = _resources()
    for r in resources:
        if "privatednszones" in r["type"]:
            r["id"] = r["id"].replace(SUB, hub)
    spoke_only = _stage(FakeArm(resources, forbid_firewalls=False), tmp_path)
    assert spoke_only.gaps == []  # everything listed: a zone that was not found does not exist
    missing = [f for f in spoke_only.findings if f.rule.id == "STK-AZ-006"]
    assert {(f.resource.name, f.details["zone"]) for f in missing} == {
        ("stmlprodeastus", "privatelink.blob.core.windows.net"),
        ("stmlprodscratch", "privatelink.blob.core.windows.net"),
    }
    both = _stage(FakeArm(resources, forbid_firewalls=False), tmp_path, subscriptions=(SUB, hub))
    assert [f for f in both.findings if f.rule.id == "STK-AZ-006"] == []


def test_real_credentials_fail_with_an_actionable_message(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(AzureAuthError, match=r"azure\.workload\.identity/client-id"):
        check_credential(make_credential("workload-identity"), "workload-identity")
    monkeypatch.setenv("PATH", str(Path(__file__).parent))  # no `az` on the PATH: nothing is run
    with pytest.raises(AzureAuthError, match="az login"):
        check_credential(make_credential("cli"), "cli")


def _one_clean_line(message: str) -> None:
    assert "\n" not in message and "Attempted credentials" not in message
    assert "http" not in message  # no troubleshooting link, and none cut in the middle


def _nothing_logged(capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    assert capsys.readouterr().err == ""  # azure-identity's multi-line warnings are silenced
    assert not [r for r in caplog.records if r.name.startswith(("azure.identity", "msal"))]


def test_workload_identity_without_its_environment_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    for var in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_SECRET"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(AzureAuthError) as caught:
        check_credential(make_credential("workload-identity"), "workload-identity")
    message = str(caught.value)
    _one_clean_line(message)
    assert (
        "WorkloadIdentityCredential: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE not set"
        in (message)
    )
    assert "azure.workload.identity/use" in message
    _nothing_logged(capsys, caplog)


def test_workload_identity_token_file_missing_names_the_file(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The real WorkloadIdentityCredential: the token file is read before any request is made."""
    missing = tmp_path / "azure-identity-token"
    monkeypatch.setenv("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000001")
    monkeypatch.setenv("AZURE_CLIENT_ID", "00000000-0000-0000-0000-000000000002")
    monkeypatch.setenv("AZURE_FEDERATED_TOKEN_FILE", str(missing))
    with pytest.raises(AzureAuthError) as caught:
        check_credential(make_credential("workload-identity"), "workload-identity")
    message = str(caught.value)
    assert "\n" not in message
    assert f"cannot read the federated token file {missing} (AZURE_FEDERATED_TOKEN_FILE)" in message
    assert "No such file" in message and 'azure.workload.identity/use: "true"' in message
    assert "set AZURE_CLIENT_ID" not in message  # they are set: the cause is the file
    _nothing_logged(capsys, caplog)


class FakeTokenEndpoint(_InProcessTransport):
    """login.microsoftonline.com as MSAL sees it: discovery documents, and a token endpoint that rejects
    the client secret (AADSTS7000215) with Microsoft Entra ID's trace trailer."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def send(self, request: Any, **_: Any) -> Any:
        self.requests.append((request.method, request.url))
        url = urlsplit(request.url)
        tenant = url.path.strip("/").split("/")[0]
        base = f"https://login.microsoftonline.com/{tenant}"
        if "discovery/instance" in url.path:
            return _response(
                request,
                200,
                {
                    "tenant_discovery_endpoint": f"{base}/v2.0/.well-known/openid-configuration",
                    "metadata": [],
                },
            )
        if url.path.endswith("openid-configuration"):
            return _response(
                request,
                200,
                {
                    "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                    "token_endpoint": f"{base}/oauth2/v2.0/token",
                    "issuer": f"{base}/v2.0",
                },
            )
        return _response(
            request,
            401,
            {
                "error": "invalid_client",
                "error_description": "AADSTS7000215: Invalid client secret provided. Ensure the secret being "
                "sent in the request is the client secret value, not the client secret ID. Trace ID: "
                "5f1c Correlation ID: 9a2e Timestamp: 2025-01-01 00:00:00Z",
                "error_codes": [7000215],
            },
        )


def test_a_rejected_client_secret_names_the_credential_and_the_secret(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """DefaultAzureCredential with a service principal in the environment (the real credential chain
    and MSAL, the token endpoint faked through the azure-core transport): the line names
    EnvironmentCredential and AADSTS7000215, never the secret, and does not advise setting variables
    that are set."""
    from azure.identity import DefaultAzureCredential

    secret = "s3cr3t-v4lue-never-printed"
    monkeypatch.setenv("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000001")
    monkeypatch.setenv("AZURE_CLIENT_ID", "00000000-0000-0000-0000-000000000002")
    monkeypatch.setenv("AZURE_CLIENT_SECRET", secret)
    monkeypatch.setenv("HOME", str(tmp_path))
    endpoint = FakeTokenEndpoint()
    credential = DefaultAzureCredential(exclude_interactive_browser_credential=True, transport=endpoint)
    with pytest.raises(AzureAuthError) as caught:
        check_credential(credential, "default")
    message = str(caught.value)
    _one_clean_line(message)
    assert any(m == "POST" and u.endswith("/oauth2/v2.0/token") for m, u in endpoint.requests)
    assert "EnvironmentCredential" in message and "AADSTS7000215: Invalid client secret provided" in message
    assert secret not in message and "Trace ID" not in message
    assert "check AZURE_CLIENT_SECRET" in message and "or set AZURE_" not in message
    _nothing_logged(capsys, caplog)


def test_default_chain_unavailable_advises_only_unset_variables(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """AZURE_CLIENT_ID/AZURE_TENANT_ID set, the secret not: the advice names the secret only."""
    from azure.identity import DefaultAzureCredential

    monkeypatch.setenv("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000001")
    monkeypatch.setenv("AZURE_CLIENT_ID", "00000000-0000-0000-0000-000000000002")
    for var in ("AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_CERTIFICATE_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no az, pwsh or azd: nothing is run
    credential = DefaultAzureCredential(
        exclude_interactive_browser_credential=True, exclude_managed_identity_credential=True
    )
    with pytest.raises(AzureAuthError) as caught:
        check_credential(credential, "default")
    message = str(caught.value)
    _one_clean_line(message)
    assert "EnvironmentCredential: AZURE_CLIENT_SECRET (or AZURE_CLIENT_CERTIFICATE_PATH) not set" in message
    assert "WorkloadIdentityCredential: AZURE_FEDERATED_TOKEN_FILE not set" in message
    assert "or set AZURE_CLIENT_SECRET (a service principal)" in message
    assert "AZURE_CLIENT_ID" not in message.split("To fix:")[1]
    _nothing_logged(capsys, caplog)


def test_context_servers_reads_the_kubeconfig(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, {"a": "https://A.example:443", "b": "http://127.0.0.1:8080"})
    assert context_servers(path, ["a", "b", "c"]) == {"a": "a.example", "b": "127.0.0.1", "c": ""}


# --- the command, with the bundled fleet ---------------------------------------------------------

sys.path.insert(0, str(ROOT / "examples" / "fleet"))
fake: ModuleType = importlib.import_module("apiserver")


@pytest.fixture()
def fleet(tmp_path: Path) -> Iterator[Path]:
    served = [fake.ServedCluster(c) for c in fake.load_fleet(ROOT / "examples/fleet/fleet.yaml")]
    for s in served:
        s.__enter__()
    urls = {s.cluster.name: s.url for s in served}
    # the AKS context reaches its fake API server as "localhost", which the fixture cluster's FQDN names
    urls["aks-prod-eastus"] = urls["aks-prod-eastus"].replace("127.0.0.1", "localhost")
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(fake.kubeconfig(urls)))
    yield path
    for s in served:
        s.__exit__()


def _serve_arm(monkeypatch: pytest.MonkeyPatch, resources: list[dict[str, Any]]) -> None:
    """The audit's Azure SDK clients read `resources` through the in-process ARM transport, with a
    static credential."""
    arm = FakeArm(resources)
    monkeypatch.setattr(azure_audit, "make_credential", lambda auth: StaticCredential())
    monkeypatch.setattr(
        azure_audit,
        "AzureReader",
        lambda sub, cred, **kw: AzureReader(sub, cred, transport=arm, retry_backoff_factor=0.0, **kw),
    )


def test_cli_reports_cluster_and_cloud_findings_together(
    fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resources = _resources()
    for r in resources:
        if r["type"].endswith("managedclusters"):
            r["properties"]["privateFQDN"] = "localhost"
    _serve_arm(monkeypatch, resources)
    out = tmp_path / "audit.json"
    args = [
        "audit",
        "--kubeconfig",
        str(fleet),
        "--all-contexts",
        "--config",
        str(ROOT / "examples/stockade.yaml"),
    ]
    args += ["--no-fail-on-gaps"]  # the fixture fleet forbids one kind (a gap); findings matter here
    result = CliRunner().invoke(
        app, [*args, "--azure-subscription", SUB, "--auth", "workload-identity", "-f", "json", "-o", str(out)]
    )
    assert result.exit_code == 1, result.output
    doc = orjson.loads(out.read_bytes())
    aks = {f["rule"]["id"] for f in doc["findings"] if f["resource"]["cluster"] == "aks-prod-eastus"}
    assert "STK-AZ-015" in aks and "STK-POD-003" in aks  # cloud and in-cluster, one cluster
    assert not any(
        f["rule"]["id"].startswith("STK-AZ")
        for f in doc["findings"]
        if f["resource"]["cluster"] == "gpu-bm-1"
    )
    assert f"gpu-bm-1: {NOT_APPLICABLE}" in result.output


def test_cli_without_credential_exits_2(fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_credential(auth: str) -> Any:
        raise AzureAuthError(f"no Azure credential (--auth {auth}): x. To fix: run `az login`")

    monkeypatch.setattr(azure_audit, "make_credential", no_credential)
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "--kubeconfig",
            str(fleet),
            "--context",
            "gpu-bm-1",
            "--azure-subscription",
            SUB,
            "-f",
            "json",
        ],
    )
    assert result.exit_code == 2
    assert "run `az login`" in result.output
    gap = f"gap: azure/{SUB}: Azure checks skipped: no credential (see the error above)"
    assert gap in result.output
    # the gap points at the error above it: the error is printed first
    assert result.output.rindex("no Azure credential (--auth cli)") < result.output.index(gap)


def test_rules_about_a_kind_that_could_not_be_listed_are_not_scored() -> None:
    """Issue 20: a forbidden kind's rules are n/a in the scores, never passed."""
    from stockade.scanner.result import CoverageGap

    result = Result(tool_version="t")
    result.clusters = [ClusterStats("c1")]
    result.rules = dict(Evaluator.default(CONFIG).rules)
    full = fleet_view(result)
    assert full is not None and full.clusters[0].areas["rbac"] == 100
    result.gaps = [
        CoverageGap(f"c1/{kind}", "403 forbidden")
        for kind in ("ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding")
    ]
    view = fleet_view(result)
    assert view is not None
    rbac_rules = [r for r in result.rules.values() if r.area == "rbac"]
    readable = [
        r
        for r in rbac_rules
        if not {"ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"} & set(r.kinds)
    ]
    assert view.clusters[0].areas["rbac"] == (100 if readable else None)
    assert "n/a" in get_report("html").render(result) or readable


def test_key_vaults_registries_ml_workspaces_and_ai_accounts_are_listed(tmp_path: Path) -> None:
    """STK-AZ-018…029 decide live resources too: the four types are listed through their REST list
    operation (api-versions pinned in REST_LISTS) on the same credential, retry policy and transport
    as the management clients, with nextLink paging; the verdicts equal an offline scan of the same
    resources as a Resource Graph export."""
    from stockade.scanner.sources.azure import REST_LISTS

    fixture = ROOT / "tests" / "policies" / "data" / "azure" / "private-ai-export.json"
    text = fixture.read_text().replace("5b1d7f0e-2c4a-4e8b-9d3f-7a6c0e1b2d48", SUB)
    kinds = {
        "microsoft.keyvault/vaults",
        "microsoft.containerregistry/registries",
        "microsoft.machinelearningservices/workspaces",
        "microsoft.cognitiveservices/accounts",
        "microsoft.network/privateendpoints",
    }
    added = [r for r in orjson.loads(text)["data"] if r["type"] in kinds]
    resources = _resources() + added
    arm = FakeArm(resources)
    live = _stage(arm, tmp_path)
    assert live.errors == [] and [g.scope for g in live.gaps] == [
        f"azure/{SUB}/Microsoft.Network/azureFirewalls"
    ]
    ai_kinds = [k for k in REST_LISTS if k.lower() in {r["type"] for r in added}]
    assert len(ai_kinds) == 5  # the four AI-side types and the private endpoints
    for kind in ai_kinds:
        version = REST_LISTS[kind]
        lists = [
            u
            for _, u in arm.requests
            if f"/providers/{kind}?" in u or f"/providers/{kind}".lower() in u.lower()
        ]
        assert any(f"api-version={version}" in u for u in lists), kind
        assert any("skip=1" in u for u in lists), kind  # two resources of each type: the nextLink page
    assert all(u.startswith("https://management.azure.com/") for _, u in arm.requests)
    found = {(f.rule.id, f.resource.name) for f in live.findings}
    assert {("STK-AZ-018", "kv-ai-open"), ("STK-AZ-021", "acraiopen"), ("STK-AZ-026", "mlw-ai-open")} <= found
    assert ("STK-AZ-028", "oai-ai-open") in found
    assert not {n for _, n in found} & {"kv-ai-private", "acraiprivate", "mlw-ai-private", "oai-ai-private"}
    export = tmp_path / "export.json"
    export.write_bytes(orjson.dumps({"data": resources}))
    offline = run_scan(
        FileSource([str(export)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t"
    )
    assert found == {(f.rule.id, f.resource.name) for f in offline.findings}


def test_an_azure_only_audit_needs_no_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`audit --azure-subscription X` with no kubeconfig anywhere audits Azure alone (issue 38); the
    real Azure SDK clients against the ARM-shaped fixtures, through an azure-core transport."""
    _serve_arm(monkeypatch, _resources())
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    out = tmp_path / "audit.json"
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "--no-config",
            "--no-fail-on-gaps",
            "--azure-subscription",
            SUB,
            "-f",
            "json",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "auditing the Azure subscriptions only" in result.output
    doc = orjson.loads(out.read_bytes())
    assert any(f["rule"]["id"].startswith("STK-AZ") for f in doc["findings"])
    # asked for a context, the missing kubeconfig is still an error
    missing = CliRunner().invoke(app, ["audit", "--context", "x", "--azure-subscription", SUB])
    assert missing.exit_code == 2 and "kubeconfig" in missing.output


#: the cross-layer rules: an AKS context's Kubernetes objects judged against its managed cluster
XLAYER = frozenset({"STK-AZ-035", "STK-AZ-036", "STK-AZ-037", "STK-AZ-038"})
AKS_MANIFESTS = [ROOT / "examples/manifests" / d for d in ("cluster", "compliant", "violations", "waived")]


def _unready_cluster() -> list[dict[str, Any]]:
    """The export with its AKS cluster serving "localhost" (the fake API server of aks-prod-eastus),
    without a network policy engine, OIDC issuer or workload identity, and an A100 pool with public IPs."""
    resources = _resources()
    for r in resources:
        if r["type"].endswith("managedclusters"):
            props = r["properties"]
            props["privateFQDN"] = "localhost"
            props["networkProfile"]["networkPolicy"] = "none"
            props["oidcIssuerProfile"] = {"enabled": False}
            props["securityProfile"] = {"workloadIdentity": {"enabled": False}}
            props["agentPoolProfiles"][1]["enableNodePublicIP"] = True
    return resources


def _xlayer(findings: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (f["rule"]["id"], f["resource"]["kind"], f["resource"]["name"])
        for f in findings
        if f["rule"]["id"] in XLAYER
    }


def test_cli_joins_each_aks_context_to_its_cluster(
    fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: the audit lists Azure first, the AKS context's objects are judged against the
    managed cluster whose FQDN serves its API server, the bare-metal context's are not; and the verdicts
    are those of `stockade scan` given the same manifests and the same cluster."""
    resources = _unready_cluster()
    _serve_arm(monkeypatch, resources)
    out = tmp_path / "audit.json"
    args = ["audit", "--kubeconfig", str(fleet), "--all-contexts", "--no-fail-on-gaps"]
    args += ["--config", str(ROOT / "examples/stockade.yaml"), "--azure-subscription", SUB]
    result = CliRunner().invoke(app, [*args, "-f", "json", "-o", str(out)])
    assert result.exit_code == 1, result.output
    doc = orjson.loads(out.read_bytes())
    by_cluster: dict[str, list[dict[str, Any]]] = {}
    for f in doc["findings"]:
        by_cluster.setdefault(f["resource"]["cluster"], []).append(f)
    assert _xlayer(by_cluster["gpu-bm-1"]) == set()  # bare metal: no managed cluster under it
    audited = _xlayer(by_cluster["aks-prod-eastus"])
    assert {rule for rule, _, _ in audited} == XLAYER
    messages = {f["message"] for f in by_cluster["aks-prod-eastus"] if f["rule"]["id"] in XLAYER}
    assert any("properties.networkProfile.networkPolicy: none" in m for m in messages)
    assert any("properties.oidcIssuerProfile.enabled: false" in m for m in messages)
    assert any("properties.agentPoolProfiles[1].enableNodePublicIP: true" in m for m in messages)
    # the same verdicts from the CI gate: the cluster's manifests scanned with the cluster's JSON
    cluster = [r for r in resources if r["type"].endswith("managedclusters")]
    export = tmp_path / "aks.json"
    export.write_text(json.dumps({"data": cluster}))
    scanned = run_scan(
        FileSource([*map(str, AKS_MANIFESTS), str(export)]),
        [],
        Evaluator.default(CONFIG),
        ScanOptions(CONFIG),
        version="t",
    )
    scan_doc = orjson.loads(get_report("json").render(scanned))
    assert _xlayer(scan_doc["findings"]) == audited


def test_cli_ready_cluster_has_no_cross_layer_finding_but_gvisor(
    fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The export's own cluster (cilium, OIDC issuer and workload identity on, private GPU pool) runs
    what its manifests ask, except gVisor, which AKS does not have: only STK-AZ-037, on the
    gVisor workloads."""
    resources = _resources()
    for r in resources:
        if r["type"].endswith("managedclusters"):
            r["properties"]["privateFQDN"] = "localhost"
    _serve_arm(monkeypatch, resources)
    out = tmp_path / "audit.json"
    args = ["audit", "--kubeconfig", str(fleet), "--context", "aks-prod-eastus", "--no-fail-on-gaps"]
    args += ["--config", str(ROOT / "examples/stockade.yaml"), "--azure-subscription", SUB]
    result = CliRunner().invoke(app, [*args, "-f", "json", "-o", str(out)])
    assert result.exit_code == 1, result.output
    found = [f for f in orjson.loads(out.read_bytes())["findings"] if f["rule"]["id"] in XLAYER]
    assert found and {f["rule"]["id"] for f in found} == {"STK-AZ-037"}
    assert all("runtimeClassName gvisor" in f["message"] for f in found)


RG = f"/subscriptions/{SUB}/resourceGroups/rg-ml-prod-eastus"
IDENTITY = f"{RG}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-trainer"
BLOB_CONTRIBUTOR = "ba92f5b4-2d11-453d-a403-e96b0029c9fe"


def _identity_layer() -> list[dict[str, Any]]:
    """A managed identity with three federated credentials (the cluster's issuer for one account; an
    issuer of no cluster listed; the default account) and two Storage Blob Data Contributor
    assignments (the resource group; one account), as ARM lists them."""
    issuer = "https://eastus.oic.prod-aks.azure.com/tenant/uid/"

    def fic(name: str, issuer: str, subject: str) -> dict[str, Any]:
        return {
            "id": f"{IDENTITY}/federatedIdentityCredentials/{name}",
            "name": name,
            "type": "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
            "properties": {"issuer": issuer, "subject": subject, "audiences": ["api://AzureADTokenExchange"]},
        }

    def assignment(name: str, scope: str) -> dict[str, Any]:
        return {
            "id": f"{scope}/providers/Microsoft.Authorization/roleAssignments/{name}",
            "name": name,
            "type": "Microsoft.Authorization/roleAssignments",
            "properties": {
                "roleDefinitionId": (
                    f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/{BLOB_CONTRIBUTOR}"
                ),
                "principalId": "11111111-2222-3333-4444-555555555555",
                "principalType": "ServicePrincipal",
                "scope": scope,
            },
        }

    account = f"{RG}/providers/Microsoft.Storage/storageAccounts/stmlprodeastus"
    return [
        {
            "id": IDENTITY,
            "name": "id-trainer",
            "type": "Microsoft.ManagedIdentity/userAssignedIdentities",
            "properties": {},
        },
        fic("trainer", issuer, "system:serviceaccount:train:trainer"),
        fic(
            "old-cluster",
            "https://westeurope.oic.prod-aks.azure.com/tenant/gone/",
            "system:serviceaccount:train:trainer",
        ),
        fic("ns-default", issuer, "system:serviceaccount:train:default"),
        assignment("00000000-0000-0000-0000-00000000000a", RG),
        assignment("00000000-0000-0000-0000-00000000000b", account),
    ]


def test_federated_credentials_and_storage_data_roles_are_listed_and_judged(tmp_path: Path) -> None:
    """Issue 38: user-assigned identities, their federated credentials (one list per identity) and the
    subscription's role assignments are read live; the verdicts equal the offline scan's."""
    resources = _resources() + _identity_layer()
    arm = FakeArm(resources)
    result = _stage(arm, tmp_path)
    paths = {urlsplit(u).path.lower() for _, u in arm.requests}
    assert f"{IDENTITY.lower()}/federatedidentitycredentials" in paths
    assert f"/subscriptions/{SUB}/providers/microsoft.authorization/roleassignments" in paths
    found = {
        (f.rule.id, f.resource.name)
        for f in result.findings
        if f.rule.id in ("STK-AZ-039", "STK-AZ-040", "STK-AZ-041")
    }
    assert found == {
        ("STK-AZ-039", "old-cluster"),
        ("STK-AZ-040", "ns-default"),
        ("STK-AZ-041", "00000000-0000-0000-0000-00000000000a"),
    }
    (scope,) = [f for f in result.findings if f.rule.id == "STK-AZ-041"]
    assert scope.message.startswith(f"Storage Blob Data Contributor is granted at a resource group ({RG})")
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"data": resources}))
    offline = run_scan(
        FileSource([str(export)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t"
    )
    assert {
        (f.rule.id, f.resource.name)
        for f in offline.findings
        if f.rule.id in ("STK-AZ-039", "STK-AZ-040", "STK-AZ-041")
    } == found
