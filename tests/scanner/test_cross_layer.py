"""Cross-layer findings (issue 38): an ARM template or terraform plan scanned with the manifests of
its cluster, through the whole `stockade scan` command.

The template is the real Azure quickstart AKS cluster of tests/scanner/arm/aks-vmss (provenance
there): no networkProfile (no network policy engine), no OIDC issuer or workload identity, one
Standard_D2s_v3 pool. The manifests are a namespace whose egress is denied by default, a workload
that uses workload identity, a Kata runtime class and a GPU.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app

ARM = Path(__file__).resolve().parent / "arm"
QUICKSTART = ARM / "aks-vmss"
XLAYER = frozenset({"STK-AZ-035", "STK-AZ-036", "STK-AZ-037", "STK-AZ-038"})

MANIFESTS = """\
apiVersion: v1
kind: Namespace
metadata: {name: train}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny-egress, namespace: train}
spec:
  podSelector: {}
  policyTypes: [Egress]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: trainer
  namespace: train
  annotations: {azure.workload.identity/client-id: 00000000-0000-0000-0000-000000000001}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: train}
spec:
  selector: {matchLabels: {app: trainer}}
  template:
    metadata:
      labels: {app: trainer, azure.workload.identity/use: "true"}
    spec:
      serviceAccountName: trainer
      runtimeClassName: kata-vm-isolation
      containers:
      - name: main
        image: myacr.azurecr.io/trainer:1.0
        resources:
          limits: {nvidia.com/gpu: 1, memory: 1Gi, cpu: 1}
          requests: {nvidia.com/gpu: 1, memory: 1Gi, cpu: 1}
"""


def _scan(*args: str | Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["scan", "-f", "json", *map(str, args)])
    assert result.exit_code in (0, 1), result.output
    return dict(json.loads(result.stdout))


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _xlayer(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["rule"]["id"]: f for f in doc["findings"] if f["rule"]["id"] in XLAYER}


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    folder = tmp_path / "k8s"
    folder.mkdir()
    (folder / "train.yaml").write_text(MANIFESTS)
    return folder


def _template(tmp_path: Path, name: str, pools: list[dict[str, Any]], **props: Any) -> Path:
    """The quickstart template with other node pools and properties, as a new file."""
    template = json.loads((QUICKSTART / "azuredeploy.json").read_text())
    cluster = template["resources"][0]
    cluster["properties"]["agentPoolProfiles"] = pools
    cluster["properties"].update(props)
    template["parameters"]["dnsPrefix"]["defaultValue"] = name
    template["parameters"]["aksClusterName"]["defaultValue"] = name
    folder = tmp_path / name
    folder.mkdir()
    (folder / "azuredeploy.json").write_text(json.dumps(template, indent=2))
    return folder


def test_quickstart_cluster_and_its_manifests(manifests: Path) -> None:
    doc = _scan(manifests, QUICKSTART)
    found = _xlayer(doc)
    assert set(found) == {"STK-AZ-035", "STK-AZ-036", "STK-AZ-037"}  # its one pool is not a GPU pool
    text = (manifests / "train.yaml").read_text()
    # the parameters file beside the template names the cluster GEN-UNIQUE
    netpol = found["STK-AZ-035"]
    assert netpol["message"].startswith(
        "NetworkPolicy default-deny-egress is not enforced: AKS cluster GEN-UNIQUE has "
        "properties.networkProfile.networkPolicy: none, so its Egress rules are enforced by nothing"
    )
    assert netpol["location"]["file"].endswith("train.yaml")
    assert netpol["location"]["line"] == _line(text, "policyTypes: [Egress]")
    identity = found["STK-AZ-036"]
    assert "properties.oidcIssuerProfile.enabled: false" in identity["message"]
    assert "properties.securityProfile.workloadIdentity.enabled: false" in identity["message"]
    assert identity["location"]["line"] == _line(text, "azure.workload.identity/use")
    sandbox = found["STK-AZ-037"]
    assert "agentpool (properties.agentPoolProfiles[0].workloadRuntime: OCIContainer)" in sandbox["message"]
    assert sandbox["location"]["line"] == _line(text, "runtimeClassName")
    # the cluster's own findings are those of the template scanned alone
    alone = _scan(QUICKSTART)
    ids = {f["rule"]["id"] for f in doc["findings"] if f["location"]["file"].endswith("azuredeploy.json")}
    assert ids == {f["rule"]["id"] for f in alone["findings"]}


def test_one_layer_alone_changes_nothing(manifests: Path) -> None:
    both = _scan(manifests, QUICKSTART)
    alone = _scan(manifests)
    assert _xlayer(alone) == {}
    keep = [
        (f["rule"]["id"], f["message"], f["location"]["line"])
        for f in both["findings"]
        if f["location"]["file"].endswith("train.yaml") and f["rule"]["id"] not in XLAYER
    ]
    assert sorted(keep) == sorted(
        (f["rule"]["id"], f["message"], f["location"]["line"]) for f in alone["findings"]
    )
    assert [n for n in alone["notes"] if "cross-layer" in n["message"]] == []


def test_a_cluster_ready_for_its_manifests_has_no_cross_layer_finding(
    manifests: Path, tmp_path: Path
) -> None:
    pools = [
        {"name": "system", "vmSize": "Standard_D4s_v5", "mode": "System"},
        {"name": "kata", "vmSize": "Standard_D8s_v5", "workloadRuntime": "KataVmIsolation"},
        {"name": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "enableNodePublicIP": False},
    ]
    ready = _template(
        tmp_path,
        "aks-ready",
        pools,
        networkProfile={"networkPlugin": "azure", "networkPolicy": "cilium", "networkDataplane": "cilium"},
        oidcIssuerProfile={"enabled": True},
        securityProfile={"workloadIdentity": {"enabled": True}},
    )
    assert _xlayer(_scan(manifests, ready)) == {}


def test_gpu_pool_with_public_node_ips_names_the_workloads_on_it(manifests: Path, tmp_path: Path) -> None:
    pools = [
        {"name": "system", "vmSize": "Standard_D4s_v5", "mode": "System"},
        {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "enableNodePublicIP": True},
    ]
    public = _template(tmp_path, "aks-public-gpu", pools)
    gpu = _xlayer(_scan(manifests, public))["STK-AZ-038"]
    assert gpu["message"] == (
        'the pod uses GPUs (container "main": nvidia.com/gpu) and can run on GPU node pool a100 '
        "(Standard_NC24ads_A100_v4, properties.agentPoolProfiles[1].enableNodePublicIP: true) of AKS "
        "cluster aks-public-gpu, whose nodes have public IPs"
    )
    text = (manifests / "train.yaml").read_text()
    assert gpu["location"]["line"] == _line(text, "limits: {nvidia.com/gpu")
    # pinned to another pool, the workload is not on the public one
    (manifests / "train.yaml").write_text(
        MANIFESTS.replace(
            "      serviceAccountName: trainer\n",
            "      serviceAccountName: trainer\n      nodeSelector: {agentpool: system}\n",
        )
    )
    assert "STK-AZ-038" not in _xlayer(_scan(manifests, public))


def test_several_clusters_need_azure_cluster(manifests: Path, tmp_path: Path) -> None:
    ready = _template(
        tmp_path,
        "aks-ready",
        [{"name": "kata", "vmSize": "Standard_D8s_v5", "workloadRuntime": "KataVmIsolation"}],
        networkProfile={"networkPolicy": "azure"},
        oidcIssuerProfile={"enabled": True},
        securityProfile={"workloadIdentity": {"enabled": True}},
    )
    doc = _scan(manifests, QUICKSTART, ready)
    assert _xlayer(doc) == {}
    (note,) = [n for n in doc["notes"] if "cross-layer" in n["message"]]
    assert note["message"] == (
        "cross-layer checks (STK-AZ-035..038) not evaluated for 4 Kubernetes objects: 2 AKS clusters "
        "read (GEN-UNIQUE, aks-ready) and the manifests name none: set azure.cluster in stockade.yaml "
        "(or --cluster NAME) to say which one they run on"
    )
    config = tmp_path / "stockade.yaml"
    config.write_text("azure:\n  cluster: gen-unique\n")
    chosen = _scan("--config", config, manifests, QUICKSTART, ready)
    assert set(_xlayer(chosen)) == {"STK-AZ-035", "STK-AZ-036", "STK-AZ-037"}
    assert all("AKS cluster GEN-UNIQUE" in f["message"] for f in _xlayer(chosen).values())
    assert [n for n in chosen["notes"] if "cross-layer" in n["message"]] == []
    # --cluster names the other one: nothing to report there
    assert _xlayer(_scan("--cluster", "aks-ready", manifests, QUICKSTART, ready)) == {}
    config.write_text("azure:\n  cluster: aks-missing\n")
    (note,) = [
        n
        for n in _scan("--config", config, manifests, QUICKSTART, ready)["notes"]
        if "cross-layer" in n["message"]
    ]
    assert (
        "azure.cluster 'aks-missing' names none of the AKS clusters read (GEN-UNIQUE, aks-ready)"
        in note["message"]
    )


def test_a_terraform_plan_joins_like_a_template(manifests: Path, tmp_path: Path) -> None:
    """examples/azure/aks-egress.tfplan.json: cilium, OIDC issuer and workload identity on, one
    system pool of OCIContainer nodes; its workload_runtime is read from the node pool."""
    plan = json.loads(
        (Path(__file__).resolve().parents[2] / "examples" / "azure" / "aks-egress.tfplan.json").read_text()
    )
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    found = _xlayer(_scan(manifests, tmp_path / "plan.json"))
    assert set(found) == {"STK-AZ-037"}
    assert (
        "no node pool of AKS cluster aks-ml-westeu has workloadRuntime KataVmIsolation or "
        "KataMshvVmIsolation (system (properties.agentPoolProfiles[0].workloadRuntime: OCIContainer))"
    ) in found["STK-AZ-037"]["message"]
    for module in [
        plan["planned_values"]["root_module"],
        *plan["planned_values"]["root_module"].get("child_modules", []),
    ]:
        for resource in module.get("resources", []):
            if resource["type"] == "azurerm_kubernetes_cluster":
                resource["values"]["default_node_pool"][0]["workload_runtime"] = "KataMshvVmIsolation"
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    assert _xlayer(_scan(manifests, tmp_path / "plan.json")) == {}


AKS_ISSUER = (
    "[reference(resourceId('Microsoft.ContainerService/managedClusters', 'aks')).oidcIssuerProfile.issuerURL]"
)
ROLE_ID = "[subscriptionResourceId('Microsoft.Authorization/roleDefinitions', variables('blobContributor'))]"
PRINCIPAL = (
    "[reference(resourceId('Microsoft.ManagedIdentity/userAssignedIdentities', 'id-trainer')).principalId]"
)
IDENTITY_TEMPLATE = {
    "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
    "contentVersion": "1.0.0.0",
    "parameters": {"account": {"type": "string", "defaultValue": "stmltrain"}},
    "variables": {"blobContributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe"},
    "resources": [
        {
            "type": "Microsoft.ManagedIdentity/userAssignedIdentities",
            "apiVersion": "2023-01-31",
            "name": "id-trainer",
            "location": "eastus",
            "resources": [
                {
                    "type": "federatedIdentityCredentials",
                    "apiVersion": "2023-01-31",
                    "name": "aks",
                    "properties": {
                        "issuer": AKS_ISSUER,
                        "subject": "system:serviceaccount:train:default",
                        "audiences": ["api://AzureADTokenExchange"],
                    },
                }
            ],
        },
        {
            "type": "Microsoft.Authorization/roleAssignments",
            "apiVersion": "2022-04-01",
            "name": "[guid(resourceGroup().id, variables('blobContributor'))]",
            "properties": {
                "roleDefinitionId": ROLE_ID,
                "principalId": PRINCIPAL,
            },
        },
        {
            "type": "Microsoft.Authorization/roleAssignments",
            "apiVersion": "2022-04-01",
            "name": "[guid(parameters('account'), variables('blobContributor'))]",
            "scope": "[format('Microsoft.Storage/storageAccounts/{0}', parameters('account'))]",
            "properties": {
                "roleDefinitionId": ROLE_ID,
                "principalId": "p",
            },
        },
    ],
}


def test_template_identities_and_role_assignments(tmp_path: Path) -> None:
    """A federated credential for a namespace's default account, and Storage Blob Data Contributor at
    the deployment's resource group (no scope) beside the same role on one account (scope set)."""
    path = tmp_path / "identity.json"
    path.write_text(json.dumps(IDENTITY_TEMPLATE, indent=2))
    doc = _scan(path)
    found = {(f["rule"]["id"], f["location"]["line"]) for f in doc["findings"]}
    text = path.read_text()
    assert ("STK-AZ-040", _line(text, '"subject"')) in found
    (scope,) = [f for f in doc["findings"] if f["rule"]["id"] == "STK-AZ-041"]
    assert scope["message"].startswith(
        "Storage Blob Data Contributor is granted at the scope of its deployment "
        "(a resource group or subscription"
    )
    # the issuer is only known after deployment, and no cluster was read: STK-AZ-039 cannot judge it
    assert not [f for f in doc["findings"] if f["rule"]["id"] == "STK-AZ-039"]
