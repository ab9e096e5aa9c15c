package stockade.azure.aks_network_policy_test

import data.stockade.azure.aks_network_policy as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": props}}

test_engine_allowed if {
	count(rule.deny) == 0 with input as aks({"networkProfile": {"networkPolicy": "cilium"}})
	count(rule.deny) == 0 with input as aks({"networkProfile": {"networkPolicy": "calico"}})
}

test_none_denied if {
	count(rule.deny) == 1 with input as aks({"networkProfile": {"networkPolicy": "none"}})
	count(rule.deny) == 1 with input as aks({})
}
