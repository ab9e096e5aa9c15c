"""ARM templates read as Azure Resource Manager deploys them (issue 38).

Real parts only: the fixtures under tests/scanner/arm/ are trimmed copies of Azure quickstart
templates (provenance and licence beside them), scanned through the whole `stockade scan` pipeline
with the real policy library; the expression evaluator is checked against the values the ARM
template language reference gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from stockade.policies.config.settings import load_config
from stockade.policies.evaluate import Evaluator
from stockade.policies.model import UNKNOWN_PREFIX
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.arm import Scope, concrete
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_config(ROOT / "examples" / "stockade.yaml")


def _scan(*paths: Path | str) -> Result:
    files = FileSource([str(p) for p in paths])
    return run_scan(files, [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t")


def test_bicep_and_terraform_in_a_directory_are_counted_with_what_to_scan_instead(tmp_path: Path) -> None:
    (tmp_path / "sc.yaml").write_text(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: blob}\n"
        "provisioner: blob.csi.azure.com\n"
    )
    for name in ("main.bicep", "main.bicepparam", "main.tf", "prod.tfvars", "terragrunt.hcl"):
        (tmp_path / name).write_text("x = 1\n")
    result = _scan(tmp_path)
    assert result.errors == [] and result.files == 1 and result.resources == 1
    reasons = {Path(s.file).name: s.reason for s in result.skipped}
    assert set(reasons) == {"main.bicep", "main.bicepparam", "main.tf", "prod.tfvars", "terragrunt.hcl"}
    assert all(r.startswith("unsupported input: ") for r in reasons.values())
    assert "az bicep build" in reasons["main.bicep"]
    assert "terraform show -json" in reasons["main.tf"]
    # named explicitly, the same file stays an error (a pre-commit hook must not pass it silently)
    (error,) = _scan(tmp_path / "main.bicep").errors
    assert "az bicep build" in error.message


ARM = Path(__file__).resolve().parent / "arm"


#: the AKS baseline controls (Defender, encryption at host, KMS, run command, image cleaner), which no
#: fixture here sets: left out of the verdicts these tests are about (tests/policies/test_azure_private_ai.py)
AKS_BASELINE = frozenset({"STK-AZ-030", "STK-AZ-031", "STK-AZ-032", "STK-AZ-033", "STK-AZ-034"})


def _verdicts(result: Result) -> set[tuple[str, str]]:
    return {(f.rule.id, f.resource.name) for f in result.findings if f.rule.id not in AKS_BASELINE}


def test_parameters_file_beside_the_template_gives_the_values_and_is_not_judged() -> None:
    """aks-vmss-systemassigned-identity: dnsPrefix has no default, the parameters file names the cluster."""
    result = _scan(ARM / "aks-vmss")
    assert result.errors == [] and result.resources == 1
    (skipped,) = result.skipped
    assert skipped.file.endswith("azuredeploy.parameters.json") and "azuredeploy.json" in skipped.reason
    assert {name for _, name in _verdicts(result)} == {"GEN-UNIQUE"}  # the file's value, not the default
    assert {rule for rule, _ in _verdicts(result)} == {
        "STK-AZ-010",  # no private cluster, no authorized ranges
        "STK-AZ-011",  # local accounts not disabled
        "STK-AZ-012",  # no aadProfile
        "STK-AZ-013",
        "STK-AZ-014",
        "STK-AZ-015",
    }
    # the template alone, named without its directory's parameters file being there, uses defaults
    alone = _scan(ARM / "aks-vmss" / "azuredeploy.parameters.json")
    assert alone.resources == 0 and alone.errors == [] and len(alone.skipped) == 1


def test_a_cluster_inside_a_bicep_module_is_judged_with_its_if_and_copy_values() -> None:
    """Before: the cluster inside the inline deployment was never read (1 resource: the storage
    account whose condition is false, 5 wrong findings); the linked deployment passed silently."""
    result = _scan(ARM / "aks-module")
    assert result.resources == 1  # only the cluster: the storage account's condition is false
    assert _verdicts(result) == {
        ("STK-AZ-010", "aks101cluster-vmss"),
        ("STK-AZ-013", "aks101cluster-vmss"),
        ("STK-AZ-014", "aks101cluster-vmss"),
        ("STK-AZ-015", "aks101cluster-vmss"),
        ("STK-AZ-016", "aks101cluster-vmss"),  # pool2 of the copy loop: an A100 with public node IPs
    }
    (gpu,) = [f for f in result.findings if f.rule.id == "STK-AZ-016"]
    assert gpu.details == {"pool": "pool2", "vmSize": "Standard_NC24ads_A100_v4"}
    # a finding inside the nested template points into the cluster there (the pool comes from a
    # property copy loop, so at the cluster's properties)
    lines = (ARM / "aks-module" / "main.json").read_text().splitlines()
    cluster = next(i for i, t in enumerate(lines, 1) if "Microsoft.ContainerService/managedClusters" in t)
    assert gpu.line is not None and gpu.line > cluster and lines[gpu.line - 1].strip() == '"properties": {'
    (linked,) = result.errors
    assert "linked template https://example.com/templates/network.json not read" in linked.message
    assert linked.line is not None and '"name": "network"' in lines[linked.line + 2]  # the resource's "{"


def test_module_parameters_decide_the_cluster(tmp_path: Path) -> None:
    """With enableAAD false the same module has no aadProfile (if() takes the other branch) and the
    storage account is deployed."""
    template = orjson.loads((ARM / "aks-module" / "main.json").read_bytes())
    template["parameters"]["enableAAD"]["defaultValue"] = False
    template["parameters"]["agentCount"]["defaultValue"] = 2
    path = tmp_path / "main.json"
    path.write_bytes(orjson.dumps(template, option=orjson.OPT_INDENT_2))
    rules = {rule for rule, _ in _verdicts(_scan(path))}
    assert {"STK-AZ-011", "STK-AZ-012", "STK-AZ-001"} <= rules
    assert "STK-AZ-016" not in rules  # two pools: no GPU pool
    # the parameters file beside it wins over the defaults
    (tmp_path / "main.parameters.json").write_bytes(
        orjson.dumps(
            {
                "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
                "parameters": {"enableAAD": {"value": True}, "agentCount": {"value": 3}},
            }
        )
    )
    with_file = _scan(tmp_path)
    assert {rule for rule, _ in _verdicts(with_file)} == {
        "STK-AZ-010",
        "STK-AZ-013",
        "STK-AZ-014",
        "STK-AZ-015",
        "STK-AZ-016",
    }
    assert [Path(s.file).name for s in with_file.skipped] == ["main.parameters.json"]


def test_zone_names_built_with_environment_are_found_and_linked(tmp_path: Path) -> None:
    """blob-storage-private-endpoint: the privatelink zones are concat('privatelink', '.blob.',
    environment().suffixes.storage). With a cluster in that VNet, STK-AZ-006 now judges them: found
    and linked, so no finding (before, the zone names stayed expression text: "no private DNS zone")."""
    result = _scan(ARM / "blob-private-endpoint")
    assert result.errors == []
    names = {name for _, name in _verdicts(result)}
    assert all(n.startswith(("adlsuniquestring-", "bootuniquestring-")) for n in names)
    # the blob account's endpoint (resourceId of the account named by a parameter default) is Approved
    assert ("STK-AZ-005", next(n for n in names if n.startswith("boot"))) not in _verdicts(result)

    template = orjson.loads((ARM / "blob-private-endpoint" / "azuredeploy.json").read_bytes())
    template["resources"].append(
        {
            "type": "Microsoft.ContainerService/managedClusters",
            "name": "aks",
            "properties": {"agentPoolProfiles": [{"name": "sys", "vnetSubnetID": "[variables('subnetId')]"}]},
        }
    )
    path = tmp_path / "azuredeploy.json"
    path.write_bytes(orjson.dumps(template, option=orjson.OPT_INDENT_2))
    with_cluster = _scan(path)
    assert "STK-AZ-006" not in {rule for rule, _ in _verdicts(with_cluster)}
    # and without the blob zone's link, it is reported
    template["resources"] = [
        r for r in template["resources"] if "blobPrivateDnsZoneName'), '/link_to_" not in str(r.get("name"))
    ]
    path.write_bytes(orjson.dumps(template, option=orjson.OPT_INDENT_2))
    unlinked = [f for f in _scan(path).findings if f.rule.id == "STK-AZ-006"]
    assert len(unlinked) == 2  # both accounts need blob (the configured sub-resource)
    assert {f.details["zone"] for f in unlinked} == {"privatelink.blob.core.windows.net"}


def _template(resources: list[dict[str, Any]], **extra: Any) -> bytes:
    return orjson.dumps(
        {
            "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
            "contentVersion": "1.0.0.0",
            **extra,
            "resources": resources,
        },
        option=orjson.OPT_INDENT_2,
    )


UNKNOWN = "set by an expression stockade cannot evaluate"


def _output_of(deployment: str, output: str) -> str:
    """An expression only the deployment decides: another deployment's output."""
    return f"reference(resourceId('Microsoft.Resources/deployments', '{deployment}')).outputs.{output}.value"


def _scan_template(tmp_path: Path, resources: list[dict[str, Any]], **extra: Any) -> Result:
    """``resources`` written as a template's (``extra``: its parameters, variables…), scanned."""
    path = tmp_path / "t.json"
    path.write_bytes(_template(resources, **extra))
    return _scan(path)


def test_values_stockade_cannot_evaluate_are_the_worst_case_and_say_so(tmp_path: Path) -> None:
    ref = "[reference(resourceId('Microsoft.Resources/deployments', 'settings')).outputs.{0}.value]"
    result = _scan_template(
        tmp_path,
        [
            {
                "type": "Microsoft.Storage/storageAccounts",
                "name": "st",
                "properties": {
                    "publicNetworkAccess": "Disabled",
                    "allowBlobPublicAccess": ref.format("blob"),
                    "allowSharedKeyAccess": "[parameters('sharedKey')]",
                    "supportsHttpsTrafficOnly": ref.format("https"),
                    "isSftpEnabled": "[listKeys('x', '2021').sftp]",
                    "minimumTlsVersion": "TLS1_2",
                },
            },
            {
                "type": "Microsoft.Storage/storageAccounts/blobServices/containers",
                "name": "st/default/models",
                "properties": {"publicAccess": ref.format("access")},
            },
            {
                "type": "Microsoft.ContainerService/managedClusters",
                "name": "aks",
                "properties": {
                    "enableRBAC": True,
                    "disableLocalAccounts": ref.format("local"),
                    "aadProfile": {"managed": True, "enableAzureRBAC": ref.format("rbac")},
                    "apiServerAccessProfile": {"authorizedIPRanges": ref.format("ranges")},
                    "agentPoolProfiles": [
                        {"name": "gpu", "vmSize": "Standard_NC6", "enableNodePublicIP": ref.format("ip")}
                    ],
                },
            },
        ],
        parameters={"sharedKey": {"type": "bool"}},
    )
    by_rule = {f.rule.id: f for f in result.findings}
    for rule in ("STK-AZ-002", "STK-AZ-003", "STK-AZ-007", "STK-AZ-008", "STK-AZ-009"):
        assert UNKNOWN in by_rule[rule].message, rule
    for rule in ("STK-AZ-010", "STK-AZ-011", "STK-AZ-012", "STK-AZ-016"):
        assert UNKNOWN in by_rule[rule].message, rule
    assert "STK-AZ-001" not in by_rule and "STK-AZ-004" not in by_rule  # known, compliant values
    assert "parameters('sharedKey'): no defaultValue" in by_rule["STK-AZ-003"].message
    # never the expression text itself as a value
    assert not any("[reference(" in f.message or "[parameters(" in f.message for f in result.findings)


def test_copy_loops_conditions_outer_scope_and_gaps(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(
        _template(
            [
                {
                    "type": "Microsoft.Storage/storageAccounts",
                    "name": "[format('st{0}{1}', variables('env'), copyIndex(1))]",
                    "copy": {"name": "accounts", "count": "[length(parameters('zones'))]"},
                    "condition": "[not(equals(copyIndex(), 1))]",
                    "properties": {
                        "publicNetworkAccess": (
                            "[if(equals(parameters('zones')[copyIndex()], 'public'), 'Enabled', 'Disabled')]"
                        ),
                        "allowBlobPublicAccess": False,
                        "allowSharedKeyAccess": False,
                        "minimumTlsVersion": "TLS1_2",
                    },
                },
                {
                    "type": "Microsoft.Resources/deployments",
                    "name": "outer",
                    "properties": {
                        "template": {
                            "resources": [
                                {
                                    "type": "Microsoft.Storage/storageAccounts",
                                    "name": "[concat('stouter', variables('env'))]",
                                    "properties": {"publicNetworkAccess": "[parameters('access')]"},
                                }
                            ]
                        }
                    },
                },
                {
                    "type": "Microsoft.Storage/storageAccounts",
                    "name": "stmany",
                    "copy": {"name": "many", "count": "[reference('x').count]"},
                },
            ],
            parameters={
                "zones": {"type": "array", "defaultValue": ["public", "private", "private"]},
                "access": {"type": "string", "defaultValue": "Enabled"},
            },
            variables={"env": "prod"},
        )
    )
    result = _scan(path)
    public = {name for rule, name in _verdicts(result) if rule == "STK-AZ-001"}
    assert public == {"stprod1", "stouterprod"}  # stprod2's condition is false; stprod3 is Disabled
    assert {name for _, name in _verdicts(result)} == {"stprod1", "stprod3", "stouterprod"}
    (gap,) = result.errors
    assert "copy count" in gap.message and UNKNOWN in gap.message and "reference('x')" in gap.message


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("[if(parameters('on'), 'a', 'b')]", "a"),
        ("[not(parameters('on'))]", False),
        ("[and(parameters('on'), equals(1, 1), not(empty('x')))]", True),
        ("[or(false, contains(createArray('a', 'b'), 'b'))]", True),
        ("[coalesce(json('null'), parameters('name'))]", "Cluster-1"),
        ("[toLower(concat(parameters('name'), '-', 'X'))]", "cluster-1-x"),
        ("[format('{0}.{1}', toUpper('a'), 7)]", "A.7"),
        ("[last(split(parameters('id'), '/'))]", "vnet"),
        ("[first(split(parameters('id'), '/'))]", ""),
        ("[length(parameters('zones'))]", 2),
        ("[substring('privatelink', 0, 7)]", "private"),
        ("[replace('a.b.c', '.', '-')]", "a-b-c"),
        ("[environment().suffixes.storage]", "core.windows.net"),
        ("[environment().name]", "AzureCloud"),
        ("[resourceGroup().location]", "resource-group-location"),
        ("[subscription().subscriptionId]", "00000000-0000-0000-0000-000000000000"),
        (
            "[resourceId('Microsoft.Network/virtualNetworks/subnets', 'v', 's')]",
            "/providers/Microsoft.Network/virtualNetworks/v/subnets/s",
        ),
        (
            "[subscriptionResourceId('Microsoft.Authorization/roleDefinitions', 'r')]",
            "/providers/Microsoft.Authorization/roleDefinitions/r",
        ),
        ("[string(parameters('zones'))]", '["1","2"]'),
        ("[int('42')]", 42),
        ("[bool('true')]", True),
        ("[json('{\"a\": [1, 2]}').a[1]]", 2),
        ("[createObject('k', createArray(1))['k'][0]]", 1),
        ("[union(createObject('a', 1), createObject('b', 2))]", {"a": 1, "b": 2}),
        ("[parameters('obj').Inner.X]", "y"),  # property names are case-insensitive
        ("[[literal]", "[literal]"),
        ("[concat('it''s')]", "it's"),
    ],
)
def test_expression_values(expression: str, value: Any) -> None:
    scope = Scope.of(
        {
            "parameters": {
                "on": {"type": "bool", "defaultValue": True},
                "name": {"type": "string", "defaultValue": "Cluster-1"},
                "id": {"type": "string", "defaultValue": "/providers/Microsoft.Network/virtualNetworks/vnet"},
                "zones": {"type": "array", "defaultValue": ["1", "2"]},
                "obj": {"type": "object", "defaultValue": {"inner": {"x": "y"}}},
            }
        }
    )
    assert concrete(scope.resolve(expression)) == value


def test_placeholders_are_deterministic_and_say_what_they_are() -> None:
    scope = Scope.of({})
    first = scope.resolve("[uniqueString(resourceGroup().id)]")
    assert first == scope.resolve("[uniqueString(resourceGroup().id)]") and first.startswith("uniquestring-")
    assert scope.resolve("[guid('a')]").startswith("guid-") and scope.resolve("[guid('a')]") != scope.resolve(
        "[guid('b')]"
    )
    for text in (
        "[reference('x').y]",
        "[listKeys('x', '1').keys[0].value]",
        "[utcNow()]",
        "[nosuch(1)]",
        "[concat('a', reference('x').y)]",
        "[if(reference('x').on, 'a', 'b')]",
    ):
        value = concrete(scope.resolve(text))
        assert isinstance(value, str) and value.startswith(UNKNOWN_PREFIX), text
    # if() on an unknown condition whose branches agree is known
    assert scope.resolve("[if(reference('x').on, 'Disabled', 'Disabled')]") == "Disabled"
    assert scope.resolve("[or(reference('x').on, true())]") is True


def test_an_unknown_member_leaves_the_rest_of_what_is_built_known() -> None:
    """What Bicep compiles a cluster's conditional properties to (AKS-Construction's samples): one
    ``union(createObject(…))`` expression for the whole ``properties``, a subnet id inside it read
    from another deployment's outputs. Only that member is unknown; functions that read a value
    holding it (``string``, ``equals``, ``concat`` of strings) answer unknown."""
    scope = Scope.of({"parameters": {"vnet": {"type": "bool", "defaultValue": True}}})
    subnet = _output_of("net", "subnet")
    props = scope.resolve(
        "[union(createObject('disableLocalAccounts', true(), 'agentPoolProfiles', concat(array(createObject("
        f"'name', 'sys', 'vnetSubnetID', if(not(empty(if(parameters('vnet'), {subnet}, ''))), 'set', null())"
        "))), 'networkProfile', createObject('networkPolicy', 'azure')), "
        "if(parameters('vnet'), createObject('oidcIssuerProfile', createObject('enabled', true())), "
        "createObject()))]"
    )
    value = concrete(props)
    assert value["disableLocalAccounts"] is True and value["networkProfile"] == {"networkPolicy": "azure"}
    assert value["oidcIssuerProfile"] == {"enabled": True}
    pool = value["agentPoolProfiles"][0]
    assert pool["name"] == "sys" and pool["vnetSubnetID"].startswith(UNKNOWN_PREFIX)
    assert len(value["agentPoolProfiles"]) == 1
    for text in (
        f"[string(createObject('a', {subnet}))]",
        f"[equals(createArray({subnet}), createArray('x'))]",
        f"[concat('id: ', createObject('a', {subnet}))]",
        f"[createObject({subnet}, 1)]",  # an unknown key: the whole object
        f"[union(createObject('a', 1), if(equals({subnet}, 'x'), createObject('b', 2), createObject()))]",
    ):
        assert concrete(scope.resolve(text)).startswith(UNKNOWN_PREFIX), text


def test_a_cluster_whose_properties_hold_one_unknown_member_is_judged(tmp_path: Path) -> None:
    subnet = _output_of("net", "subnet")
    result = _scan_template(
        tmp_path,
        [
            {
                "type": "Microsoft.ContainerService/managedClusters",
                "name": "aks",
                "properties": (
                    "[union(createObject('enableRBAC', true(), 'disableLocalAccounts', false(), "
                    "'networkProfile', createObject('networkPolicy', ''), 'agentPoolProfiles', "
                    f"createArray(createObject('name', 'sys', 'vnetSubnetID', {subnet}))), "
                    "createObject())]"
                ),
            }
        ],
    )
    assert not result.errors, result.errors
    by_rule = {f.rule.id: f for f in result.findings}
    assert "local accounts are enabled" in by_rule["STK-AZ-011"].message
    assert 'networkPolicy: "")' in by_rule["STK-AZ-014"].message


def test_a_parameter_the_template_does_not_declare_is_an_error_where_the_deployment_reads_it(
    tmp_path: Path,
) -> None:
    """AKS-Construction's compiled samples pass `parameters('ebpfDataplane')` to a module template
    that no longer declares it: Resource Manager rejects the deployment. The cluster is still judged
    (the value unknown), and the error names the reference; a reference only in a branch the
    deployment may not take (an `if` on a value only the deployment knows) is not one."""
    cluster = {
        "type": "Microsoft.ContainerService/managedClusters",
        "name": "aks",
        "properties": {
            "disableLocalAccounts": True,
            "networkProfile": {
                "networkPolicy": "azure",
                "ebpfDataplane": (
                    "[if(equals(parameters('plugin'), 'azure'), parameters('ebpfDataplane'), '')]"
                ),
                "podCidr": "[if(reference('x').on, parameters('maybe'), variables('alsoMaybe'))]",
            },
            "dnsPrefix": "[variables('prefix')]",
        },
    }
    module = {
        "type": "Microsoft.Resources/deployments",
        "name": "aksconstruction",
        "properties": {
            "expressionEvaluationOptions": {"scope": "inner"},
            "mode": "Incremental",
            "parameters": {"plugin": {"value": "azure"}},
            "template": {"parameters": {"plugin": {"type": "string"}}, "resources": [cluster]},
        },
    }
    path = tmp_path / "main.json"
    path.write_bytes(_template([module]))
    result = _scan(path)
    messages = sorted(e.message for e in result.errors)
    assert messages == [
        "parameters('ebpfDataplane'): the template of deployment aksconstruction declares no such parameter, "
        "so Resource Manager rejects the deployment; what it sets is judged as unknown",
        "variables('prefix'): the template of deployment aksconstruction declares no such variable, "
        "so Resource Manager rejects the deployment; what it sets is judged as unknown",
    ]
    assert {e.line for e in result.errors} == {path.read_text().splitlines().index("    {") + 1}
    assert "STK-AZ-011" not in {f.rule.id for f in result.findings}  # judged: local accounts disabled
    assert "STK-AZ-014" not in {f.rule.id for f in result.findings}


def _storage_template(name: str = "[parameters('accountName')]", **extra: Any) -> bytes:
    account = {
        "type": "Microsoft.Storage/storageAccounts",
        "apiVersion": "2022-09-01",
        "name": name,
        "properties": {"minimumTlsVersion": "TLS1_2"},
    }
    return _template([account], parameters={"accountName": {"type": "string"}}, **extra)


def _link(name: str, link: dict[str, Any], parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "Microsoft.Resources/deployments",
        "apiVersion": "2022-09-01",
        "name": name,
        "properties": {"mode": "Incremental", "templateLink": link, "parameters": parameters or {}},
    }


def test_linked_templates_beside_the_template_are_read_with_the_parameters_passed(tmp_path: Path) -> None:
    """Microsoft's linked-template samples (relativePath, and the quickstarts' `_artifactsLocation`
    built from `deployment().properties.templateLink.uri`) were 12 input errors of
    azure-docs-json-samples, their storage accounts unjudged: read now as Resource Manager reads them
    when the parent is deployed from where it sits, in their own scope with the parameters passed;
    findings point at the linked file. A link back, a missing file and a URL elsewhere are gaps."""
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "storage.json").write_bytes(_storage_template())
    (tmp_path / "nested" / "loop.json").write_bytes(
        _template([_link("again", {"relativePath": "../main.json"})])
    )
    artifacts = {
        "_artifactsLocation": {
            "type": "string",
            "defaultValue": "[deployment().properties.templateLink.uri]",
        },
        "_artifactsLocationSasToken": {"type": "securestring", "defaultValue": ""},
    }
    main = tmp_path / "main.json"
    main.write_bytes(
        _template(
            [
                _link(
                    "byPath", {"relativePath": "nested/storage.json"}, {"accountName": {"value": "stpath"}}
                ),
                _link(
                    "byUri",
                    {
                        "uri": "[uri(parameters('_artifactsLocation'), concat('nested/storage.json', "
                        "parameters('_artifactsLocationSasToken')))]"
                    },
                    {"accountName": {"value": "sturi"}},
                ),
                _link("loop", {"relativePath": "nested/loop.json"}),
                _link("missing", {"relativePath": "nested/nothing.json"}),
                _link("remote", {"uri": "https://example.com/t.json"}),
            ],
            parameters=artifacts,
        )
    )
    result = run_scan(
        FileSource([str(main)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t"
    )
    storage = str(tmp_path / "nested" / "storage.json")
    lines = (tmp_path / "nested" / "storage.json").read_text().splitlines()
    public = [f for f in result.findings if f.rule.id == "STK-AZ-001"]
    assert sorted(f.resource.name for f in public) == ["stpath", "sturi"]
    assert {f.file for f in public} == {storage}
    assert all(f.line and '"properties"' in lines[f.line - 1] for f in public)  # where it would be set
    errors = sorted(e.message for e in result.errors)
    assert len(errors) == 3, errors
    assert "deployment again: linked template" in errors[0] and "links back" in errors[0]
    assert errors[1].startswith("deployment missing: linked template") and "no such file" in errors[1]
    assert errors[2].startswith("deployment remote: linked template https://example.com/t.json not read")


def test_resources_whose_names_only_the_deployment_decides_are_not_the_same_object(tmp_path: Path) -> None:
    """Two templates' storage accounts named by a parameter with no value were "the same object and
    findings in …": what only the deployment decides is no known identity. One row still, saying so."""
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_bytes(_storage_template())
    from typer.testing import CliRunner

    from stockade.cli.main import app

    out = CliRunner().invoke(
        app, ["scan", str(tmp_path / "a.json"), str(tmp_path / "b.json")], env={"COLUMNS": "250"}
    )
    assert "the same name and findings" not in out.output
    assert "the same findings on resources the deployment names, in" in out.output


def test_linked_template_reads_are_bounded(tmp_path: Path) -> None:
    """A copy loop of 300 deployments linking one file is read 256 times, then said once."""
    (tmp_path / "storage.json").write_bytes(_storage_template())
    loop = _link(
        "many", {"relativePath": "storage.json"}, {"accountName": {"value": "[concat('st', copyIndex())]"}}
    )
    main = tmp_path / "main.json"
    main.write_bytes(_template([{**loop, "copy": {"name": "n", "count": 300}}]))
    result = run_scan(
        FileSource([str(main)]), [], Evaluator.default(CONFIG), ScanOptions(CONFIG), version="t"
    )
    assert len({f.resource.name for f in result.findings}) == 256
    (error,) = result.errors
    assert error.message == "deployment many: more than 256 linked templates; the rest not read"


def test_the_instances_of_a_copy_loop_are_one_row_naming_the_others(tmp_path: Path) -> None:
    """azure-docs-json-samples' copy loops were one row per instance and rule (12 rows of noise: one
    fix at the declaration clears them all); JSON keeps every finding."""
    from typer.testing import CliRunner

    from stockade.cli.main import app

    account = {
        "type": "Microsoft.Storage/storageAccounts",
        "apiVersion": "2022-09-01",
        "name": "[concat('st', copyIndex())]",
        "copy": {"name": "accounts", "count": 3},
        "properties": {"minimumTlsVersion": "TLS1_2"},
    }
    path = tmp_path / "t.json"
    path.write_bytes(_template([account]))
    out = CliRunner().invoke(app, ["scan", str(path)], env={"COLUMNS": "250"})
    rows = [line for line in out.output.splitlines() if "STK-AZ-001" in line]
    assert len(rows) == 1 and "storageAccounts/st0" in rows[0], out.output
    assert "the same for Microsoft.Storage/storageAccounts/st1" in out.output
    assert "storageAccounts/st2" in out.output
    data = orjson.loads(CliRunner().invoke(app, ["scan", str(path), "-f", "json"]).output)
    assert len([f for f in data["findings"] if f["rule"]["id"] == "STK-AZ-001"]) == 3


def test_a_lookup_by_the_deployment_region_says_so() -> None:
    """AKS-Construction names its cluster `variables('shortLocationNames')[parameters('location')]`,
    the location defaulting to the resource group's: only the deployment knows it, and the name
    said "no such property or index", as if the template were wrong."""
    scope = Scope.of(
        {
            "parameters": {"location": {"type": "string", "defaultValue": "[resourceGroup().location]"}},
            "variables": {"short": {"westeurope": "weu"}},
        }
    )
    name = concrete(scope.resolve("[format('aks-{0}', variables('short')[parameters('location')])]"))
    assert name.endswith(
        "variables('short')[parameters('location')]: depends on the region the template is deployed to]"
    )
    assert concrete(scope.resolve("[variables('short')['eastus']]")).endswith("no such property or index]")


_DOGS = [
    {"name": "Evie", "age": 5, "interests": ["Ball", "Frisbee"]},
    {"name": "Casper", "age": 3, "interests": ["Other dogs"]},
    {"name": "Indy", "age": 2, "interests": ["Butter"]},
    {"name": "Kira", "age": 8, "interests": ["Rubs"]},
]


@pytest.mark.parametrize(
    ("expression", "value"),
    [  # the ARM template function reference's examples for its lambda functions
        (
            "[filter(variables('dogs'), lambda('dog', greaterOrEquals(lambdaVariables('dog').age, 5)))]",
            [_DOGS[0], _DOGS[3]],
        ),
        (
            "[map(variables('dogs'), lambda('dog', lambdaVariables('dog').name))]",
            ["Evie", "Casper", "Indy", "Kira"],
        ),
        (
            "[map(variables('dogs'), lambda('dog', 'i', "
            "concat(string(lambdaVariables('i')), lambdaVariables('dog').name)))]",
            ["0Evie", "1Casper", "2Indy", "3Kira"],
        ),
        (
            "[reduce(variables('ages'), 0, "
            "lambda('cur', 'next', add(lambdaVariables('cur'), lambdaVariables('next'))))]",
            18,
        ),
        (
            "[map(sort(variables('dogs'), "
            "lambda('a', 'b', less(lambdaVariables('a').age, lambdaVariables('b').age))), "
            "lambda('d', lambdaVariables('d').name))]",
            ["Indy", "Casper", "Evie", "Kira"],
        ),
        (
            "[toObject(variables('dogs'), lambda('entry', lambdaVariables('entry').name), "
            "lambda('entry', lambdaVariables('entry').age))]",
            {"Evie": 5, "Casper": 3, "Indy": 2, "Kira": 8},
        ),
        (
            "[mapValues(createObject('a', 1, 'b', 2), lambda('v', mul(lambdaVariables('v'), 10)))]",
            {"a": 10, "b": 20},
        ),
        (
            "[groupBy(createArray('foo', 'bar', 'baz'), lambda('x', substring(lambdaVariables('x'), 0, 1)))]",
            {"f": ["foo"], "b": ["bar", "baz"]},
        ),
        (  # a lambda inside a lambda: each reads its own variable
            "[length(filter(variables('dogs'), lambda('d', greater(length(filter("
            "lambdaVariables('d').interests, "
            "lambda('i', startsWith(lambdaVariables('i'), 'B')))), 0))))]",
            2,
        ),
        ("[items(createObject('b', 1, 'a', 2))]", [{"key": "a", "value": 2}, {"key": "b", "value": 1}]),
        ("[length(items(createObject('b', 1, 'a', 2)))]", 2),
        ("[objectKeys(createObject('b', 1, 'a', 2))]", ["b", "a"]),
        ("[tryGet(createObject('a', createObject('b', 1)), 'a', 'b')]", 1),
        ("[tryGet(createObject('a', 1), 'nope')]", None),
        ("[join(createArray('a', 'b'), ',')]", "a,b"),
        ("[flatten(createArray(createArray(1), createArray(2, 3)))]", [1, 2, 3]),
        ("[shallowMerge(createArray(createObject('a', 1), createObject('b', 2)))]", {"a": 1, "b": 2}),
    ],
)
def test_lambda_functions(expression: str, value: Any) -> None:
    """Lambdas are what Bicep's map()/filter() and the verified modules compile to; Azure Landing
    Zones' eslzArm.json counts its copy loops with items() and lambdas (5 loops were unjudged)."""
    scope = Scope.of({"variables": {"dogs": _DOGS, "ages": [5, 3, 2, 8]}})
    assert concrete(scope.resolve(expression)) == value


def test_lambdas_over_what_only_the_deployment_knows() -> None:
    scope = Scope.of({})
    ref = "reference('x').outputs.v.value"
    for text in (
        f"[filter(createArray(1, {ref}), lambda('i', equals(lambdaVariables('i'), 1)))]",
        f"[sort(createArray(2, {ref}), lambda('a', 'b', less(lambdaVariables('a'), lambdaVariables('b'))))]",
        f"[map({ref}, lambda('i', 1))]",
        "[lambdaVariables('nowhere')]",
        "[map(createArray(1), 'not a lambda')]",
        f"[shallowMerge(createArray({ref}, createObject('a', 1)))]",  # crashed the scan
        f"[flatten(createArray({ref}))]",
        f"[tryGet({ref}, 'a')]",
    ):
        assert str(concrete(scope.resolve(text))).startswith(UNKNOWN_PREFIX), text
    mapped = concrete(
        scope.resolve(
            f"[map(createArray(1, 2), lambda('i', createObject('n', lambdaVariables('i'), 'id', {ref})))]"
        )
    )
    assert [m["n"] for m in mapped] == [1, 2] and mapped[0]["id"].startswith(UNKNOWN_PREFIX)


def test_a_deployment_whose_template_another_resource_holds_says_which(tmp_path: Path) -> None:
    """Azure Landing Zones deploy a policy definition's remediation template:
    `"template": "[reference(…).policyRule.then.details.deployment.properties.template]"` was
    "no inline template"."""
    deployment = {
        "type": "Microsoft.Resources/deployments",
        "name": "invoke",
        "properties": {
            "mode": "Incremental",
            "template": "[reference(variables('definition'), '2018-05-01').policyRule.then.details.template]",
        },
    }
    path = tmp_path / "t.json"
    path.write_bytes(
        _template(
            [deployment],
            parameters={"prefix": {"type": "string"}},
            variables={"definition": "[concat('/x/', parameters('prefix'))]"},
        )
    )
    (error,) = _scan(path).errors
    assert error.message == (
        "deployment invoke: its template is set by an expression stockade cannot evaluate: "
        "reference(parameters('prefix'), '2018-05-01').policyRule.then.details.template; not judged"
    )


def test_a_nullable_parameter_not_given_is_null() -> None:
    """Azure Verified Modules declare optional parameters `"nullable": true` with no default (Bicep's
    `param x array?`): null, not unknown. Every copy loop over one (private endpoints, role
    assignments) was an input error, its resources unjudged."""
    scope = Scope.of(
        {"parameters": {"endpoints": {"type": "array", "nullable": True}, "name": {"type": "string"}}}
    )
    assert scope.resolve("[length(coalesce(parameters('endpoints'), createArray()))]") == 0
    assert scope.resolve("[parameters('endpoints')]") is None
    assert concrete(scope.resolve("[parameters('name')]")).startswith(UNKNOWN_PREFIX)


def test_a_reader_fault_on_one_file_is_said_and_the_others_are_read(tmp_path: Path, monkeypatch: Any) -> None:
    """A fault in a reader (an ARM function meeting a value it did not expect crashed the whole scan
    with a traceback on Azure Verified Modules' storage account) is one file's input error."""
    from stockade.scanner.sources import files

    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    good.write_bytes(_storage_template(name="st"))
    bad.write_bytes(_storage_template(name="bad"))
    real = files.parse_text

    def parse(text: str, name: str, **kw: Any) -> Any:
        if name.endswith("b.json"):
            raise AttributeError("'Unknown' object has no attribute 'items'")
        return real(text, name, **kw)

    monkeypatch.setattr(files, "parse_text", parse)
    result = _scan(good, bad)
    assert {f.resource.name for f in result.findings} == {"st"}
    (error,) = result.errors
    assert error.message == "stockade could not read it (AttributeError); please report this file"


def test_what_no_rule_reads_is_no_gap(tmp_path: Path) -> None:
    """Azure Verified Modules' data collection rules and Sentinel connectors take their whole
    properties from a required parameter: no rule reads those types, so that is nothing unjudged."""
    rule = {
        "type": "Microsoft.Insights/dataCollectionRules",
        "name": "dcr",
        "properties": "[parameters('p')]",
    }
    account = {"type": "Microsoft.Storage/storageAccounts", "name": "st", "properties": "[parameters('p')]"}
    path = tmp_path / "t.json"
    path.write_bytes(_template([rule, account], parameters={"p": {"type": "object"}}))
    (error,) = _scan(path).errors
    assert error.message.startswith("Microsoft.Storage/storageAccounts st: properties [unknown:")


def test_module_parameters_as_resource_manager_binds_them() -> None:
    """Azure Verified Modules' patterns (avm/ptn: 129 input errors -> 17): a parameter typed by a
    nullable user-defined type (`"$ref": "#/definitions/roleAssignmentType"`) not given is null; a
    null given for a parameter with a default is the default; a `{"value": …}` an expression gives
    that only the deployment knows is unknown with its reason."""
    scope = Scope.of(
        {
            "definitions": {
                "roles": {"type": "array", "nullable": True},
                "alias": {"$ref": "#/definitions/roles"},
            },
            "parameters": {
                "roleAssignments": {"$ref": "#/definitions/alias", "metadata": {"description": "Optional."}},
                "tables": {"type": "array", "defaultValue": ["t"]},
                "required": {"$ref": "#/definitions/missing"},
            },
        },
        {"tables": None},
    )
    assert scope.resolve("[length(coalesce(parameters('roleAssignments'), createArray()))]") == 0
    assert scope.resolve("[parameters('tables')]") == ["t"]
    assert concrete(scope.resolve("[parameters('required')]")).startswith(UNKNOWN_PREFIX)
    from stockade.scanner.sources.iac import _parameter_values

    (value,) = _parameter_values({"p": Scope.of({}).resolve("[reference('x').y]")}, "deployment d").values()
    assert value.text == "parameters('p') in deployment d: reference('x').y"


_VAULT_ID = "[resourceId('Microsoft.KeyVault/vaults', parameters('name'))]"
_BLOB_CONTRIBUTOR = "/providers/Microsoft.Authorization/roleDefinitions/ba92f5b4-2d11-453d-a403-e96b0029c9fe"


def test_what_refers_to_a_resource_only_the_deployment_names_is_known_to(tmp_path: Path) -> None:
    """Azure Verified Modules' patterns (review of avm/ptn): a key vault named by a required parameter
    and its private endpoint targeting `resourceId(…, parameters('name'))` was "no Approved private
    endpoint (none)"; a role assignment scoped `format('Microsoft.Storage/storageAccounts/{0}', …)`
    was "granted at a scope set by an expression, so it reaches every account in it"; an AKS
    Automatic cluster was judged as a Base one; `contains()` of an object with an unknown value
    was unknown. Each now as Resource Manager and AKS have it."""
    vault = {
        "type": "Microsoft.KeyVault/vaults",
        "name": "[parameters('name')]",
        "properties": {
            "publicNetworkAccess": "Disabled",
            "tenantId": "t",
            "sku": {"name": "standard", "family": "A"},
        },
    }
    endpoint = {
        "type": "Microsoft.Network/privateEndpoints",
        "name": "pe",
        "properties": {
            "privateLinkServiceConnections": [
                {
                    "name": "c",
                    "properties": {
                        "privateLinkServiceId": _VAULT_ID,
                        "groupIds": ["vault"],
                        "privateLinkServiceConnectionState": {"status": "Approved"},
                    },
                }
            ]
        },
    }
    grant = {
        "type": "Microsoft.Authorization/roleAssignments",
        "name": "g",
        "scope": "[format('Microsoft.Storage/storageAccounts/{0}', parameters('name'))]",
        "properties": {
            "roleDefinitionId": _BLOB_CONTRIBUTOR,
            "principalId": "p",
        },
    }
    automatic = {
        "type": "Microsoft.ContainerService/managedClusters",
        "name": "auto",
        "sku": {"name": "Automatic", "tier": "Standard"},
        "condition": "[contains(createObject('a', reference('x').y), 'a')]",
        "properties": {"agentPoolProfiles": [{"name": "system", "mode": "System"}]},
    }
    path = tmp_path / "t.json"
    path.write_bytes(_template([vault, endpoint, grant, automatic], parameters={"name": {"type": "string"}}))
    result = _scan(path)
    rules = {(f.resource.kind.split("/")[-1], f.rule.id) for f in result.findings}
    assert ("vaults", "STK-AZ-019") not in rules and ("vaults", "STK-AZ-018") not in rules
    assert ("roleAssignments", "STK-AZ-041") not in rules
    auto = {rule for kind, rule in rules if kind == "managedClusters"}
    assert auto and not auto & {"STK-AZ-011", "STK-AZ-012", "STK-AZ-013", "STK-AZ-014", "STK-AZ-034"}, auto
    assert "STK-AZ-010" in auto  # its API server is still public


def test_a_template_built_to_never_finish_stops_unknown(tmp_path: Path) -> None:
    """A hostile template (one scanned in CI from an untrusted pull request): a copy count of 10^8,
    range() of 2*10^8 integers, lambdas over ranges of ranges (10^8 applications, 5.7 GB), a
    padLeft to a billion characters. Resource Manager refuses past 800 copies and 10,000 integers;
    a template's function calls are bounded (arm.EVALUATIONS, shared with its nested templates).
    Each is a gap or an unknown value, at the cost of the file's length."""

    account = {
        "type": "Microsoft.Storage/storageAccounts",
        "name": "st",
        "properties": {
            "x": "[map(range(0, 10000), lambda('i', map(range(0, 10000), lambda('j', 1))))]",
            "y": "[length(range(0, 200000000))]",
            "z": "[padLeft('a', 1000000000, 'x')]",
        },
    }
    copies = {**account, "name": "[concat('st', copyIndex())]", "copy": {"name": "c", "count": 100000000}}
    result = _scan_template(tmp_path, [account, copies])
    (error,) = result.errors
    assert error.message.endswith("copy count 100000000 is past Resource Manager's 800; not judged")
    (found,) = {f.resource.name for f in result.findings}
    assert found == "st"
    scope = Scope.of({})
    for text in ("[range(0, 10001)]", "[padLeft('a', 10001)]"):
        assert concrete(scope.resolve(text)).startswith(UNKNOWN_PREFIX), text
    assert len(scope.resolve("[range(0, 10000)]")) == 10000
    spent = Scope.of({})  # 10^6 applications: the budget runs out half way, the rest is unknown
    value = spent.resolve("[map(range(0, 1000), lambda('i', map(range(0, 1000), lambda('j', 1))))]")
    assert spent.budget[0] < 0 and value[0] == [1] * 1000
    assert str(concrete(value[-1])).startswith(UNKNOWN_PREFIX)


def _endpoint_loop(target: str, group: str, count: str) -> dict[str, Any]:
    """A deployment looping over private endpoints for ``target`` (Verified Modules' shape: a nested
    template holding the privateEndpoints resource, one deployment per endpoint)."""
    return {
        "type": "Microsoft.Resources/deployments",
        "apiVersion": "2022-09-01",
        "name": "[format('pe-{0}', copyIndex())]",
        "copy": {"name": "endpoints", "count": count},
        "properties": {
            "mode": "Incremental",
            "template": orjson.loads(
                _template(
                    [
                        {
                            "type": "Microsoft.Network/privateEndpoints",
                            "name": "[format('pe-{0}', copyIndex())]",
                            "properties": {
                                "privateLinkServiceConnections": [
                                    {
                                        "name": "c",
                                        "properties": {"privateLinkServiceId": target, "groupIds": [group]},
                                    }
                                ]
                            },
                        }
                    ]
                )
            ),
        },
    }


def test_private_endpoints_of_a_loop_stockade_cannot_count_are_not_none(tmp_path: Path) -> None:
    """Azure Verified Modules' ai-platform/baseline: its storage account's private endpoints are a
    copy loop over a parameter holding `reference('virtualNetwork').outputs…` (a subnet only the
    deployment knows). The loop is a gap (reported at its line), and the account was "no Approved
    private endpoint for blob (none)": a wrong fact, since the deployment creates them. Now its
    message says none was read and which loop was not; a registry in the same template, whose
    endpoints no unread loop may create, is still "(none)"."""
    account = {
        "type": "Microsoft.Storage/storageAccounts",
        "apiVersion": "2023-05-01",
        "name": "acct",
        "kind": "StorageV2",
        "sku": {"name": "Standard_LRS"},
        "properties": {"publicNetworkAccess": "Disabled"},
    }
    registry = {
        "type": "Microsoft.ContainerRegistry/registries",
        "name": "reg",
        "sku": {"name": "Premium"},
        "properties": {"publicNetworkAccess": "Disabled"},
    }
    loop = _endpoint_loop(
        "[resourceId('Microsoft.Storage/storageAccounts', 'acct')]",
        "blob",
        f"[length({_output_of('vnet', 'subnets')})]",
    )
    result = _scan_template(tmp_path, [account, registry, loop])
    assert any("copy count" in e.message and e.line for e in result.errors), result.errors
    messages = {f.rule.id: f.message for f in result.findings if "private endpoint" in f.message}
    blob = messages["STK-AZ-005"]
    assert "(none)" not in blob and "none read; not judged: the private endpoints" in blob, blob
    assert "loop at line" in blob
    assert messages["STK-AZ-021"] == "container registry has no Approved private endpoint (none)"
    # the same loop with a count the template decides: its endpoint is read, and Approved by default
    counted = _scan_template(tmp_path, [account, registry, {**loop, "copy": {"name": "e", "count": 1}}])
    assert not counted.errors
    assert not [f for f in counted.findings if f.rule.id == "STK-AZ-005"]
