package stockade.azure.ml_managed_network_test

import data.stockade.azure.ml_managed_network as rule
import rego.v1

ws(props) := {"object": {"type": "Microsoft.MachineLearningServices/workspaces", "name": "mlw", "properties": props}}

test_approved_outbound_allowed if {
	count(rule.deny) == 0 with input as ws({"managedNetwork": {"isolationMode": "AllowOnlyApprovedOutbound"}})
}

test_unset_denied if {
	some v in rule.deny with input as ws({})
	v.details.isolationMode == "Disabled"
}

test_internet_outbound_denied if {
	some v in rule.deny with input as ws({"managedNetwork": {"isolationMode": "AllowInternetOutbound"}})
	v.path == ["properties", "managedNetwork", "isolationMode"]
}
