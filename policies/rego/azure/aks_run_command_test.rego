package stockade.azure.aks_run_command_test

import data.stockade.azure.aks_run_command as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "name": "aks", "properties": props}}

test_disabled_allowed if {
	count(rule.deny) == 0 with input as aks({"apiServerAccessProfile": {"enablePrivateCluster": true, "disableRunCommand": true}})
}

test_unset_denied if {
	some v in rule.deny with input as aks({"apiServerAccessProfile": {"enablePrivateCluster": true}})
	v.path == ["properties", "apiServerAccessProfile", "disableRunCommand"]
}
