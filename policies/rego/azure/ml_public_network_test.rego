package stockade.azure.ml_public_network_test

import data.stockade.azure.ml_public_network as rule
import rego.v1

ws(props) := {"object": {"type": "Microsoft.MachineLearningServices/workspaces", "name": "mlw", "properties": props}}

test_disabled_allowed if {
	count(rule.deny) == 0 with input as ws({"publicNetworkAccess": "Disabled"})
}

test_unset_denied if {
	some v in rule.deny with input as ws({})
	v.details.publicNetworkAccess == "Enabled"
}

test_enabled_denied if {
	some v in rule.deny with input as ws({"publicNetworkAccess": "Enabled"})
	v.path == ["properties", "publicNetworkAccess"]
}

test_a_hub_project_is_judged_through_its_hub if {
	count(rule.deny) == 0 with input as {"object": {"type": "Microsoft.MachineLearningServices/workspaces", "kind": "Project", "properties": {"hubResourceId": "/x"}}}
	count(rule.deny) == 1 with input as {"object": {"type": "Microsoft.MachineLearningServices/workspaces", "kind": "Hub", "properties": {}}}
}
