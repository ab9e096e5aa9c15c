package stockade.azure.aks_defender_test

import data.stockade.azure.aks_defender as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "name": "aks", "properties": props}}

test_enabled_allowed if {
	count(rule.deny) == 0 with input as aks({"securityProfile": {"defender": {"logAnalyticsWorkspaceResourceId": "/x", "securityMonitoring": {"enabled": true}}}})
}

test_unset_denied if {
	some v in rule.deny with input as aks({})
	v.path == ["properties", "securityProfile", "defender"]
}

test_disabled_denied if {
	count(rule.deny) == 1 with input as aks({"securityProfile": {"defender": {"securityMonitoring": {"enabled": false}}}})
}
