package stockade.azure.aks_image_cleaner_test

import data.stockade.azure.aks_image_cleaner as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "name": "aks", "properties": props}}

test_enabled_allowed if {
	count(rule.deny) == 0 with input as aks({"securityProfile": {"imageCleaner": {"enabled": true, "intervalHours": 24}}})
}

test_unset_denied if {
	some v in rule.deny with input as aks({})
	v.path == ["properties", "securityProfile", "imageCleaner"]
}
