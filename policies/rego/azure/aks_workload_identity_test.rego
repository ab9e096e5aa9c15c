package stockade.azure.aks_workload_identity_test

import data.stockade.azure.aks_workload_identity as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": props}}

test_enabled_allowed if {
	count(rule.deny) == 0 with input as aks({"oidcIssuerProfile": {"enabled": true}, "securityProfile": {"workloadIdentity": {"enabled": true}}})
}

test_missing_denied if {
	denied := rule.deny with input as aks({"oidcIssuerProfile": {"enabled": true}})
	some v in denied
	count(v.details.missing) == 1
	count(rule.deny) == 1 with input as aks({})
}
