package stockade.azure.aks_api_server_test

import data.stockade.azure.aks_api_server as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": props}}

test_private_or_ranges_allowed if {
	count(rule.deny) == 0 with input as aks({"apiServerAccessProfile": {"enablePrivateCluster": true}})
	count(rule.deny) == 0 with input as aks({"apiServerAccessProfile": {"authorizedIPRanges": ["203.0.113.0/24"]}})
}

test_public_denied if {
	count(rule.deny) == 1 with input as aks({})
	denied := rule.deny with input as aks({"apiServerAccessProfile": {"authorizedIPRanges": ["0.0.0.0/0"]}})
	some v in denied
	v.path == ["properties", "apiServerAccessProfile", "authorizedIPRanges", 0]
}
