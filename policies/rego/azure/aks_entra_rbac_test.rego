package stockade.azure.aks_entra_rbac_test

import data.stockade.azure.aks_entra_rbac as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": props}}

test_entra_rbac_allowed if {
	count(rule.deny) == 0 with input as aks({"enableRBAC": true, "aadProfile": {"managed": true, "enableAzureRBAC": true}})
}

test_missing_denied if {
	denied := rule.deny with input as aks({"aadProfile": {"managed": true}})
	some v in denied
	v.details.missing == ["Azure RBAC (aadProfile.enableAzureRBAC)"]
	count(rule.deny) == 1 with input as aks({})
}
