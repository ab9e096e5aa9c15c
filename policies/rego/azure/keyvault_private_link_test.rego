package stockade.azure.keyvault_private_link_test

import data.stockade.azure.keyvault_private_link as rule
import rego.v1

res(statuses) := {
	"object": {"type": "Microsoft.KeyVault/vaults", "name": "x", "properties": {}},
	"facts": {"privateLink": {"statuses": statuses, "complete": false}},
}

test_approved_allowed if {
	count(rule.deny) == 0 with input as res(["Approved"])
	count(rule.deny) == 0 with input as res(["Pending", "Approved"])
}

test_none_denied if {
	some v in rule.deny with input as res([])
	v.path == ["properties", "privateEndpointConnections"]
	contains(v.msg, "(none)")
}

test_pending_denied if {
	some v in rule.deny with input as res(["Pending", "Rejected"])
	v.details.statuses == ["Pending", "Rejected"]
}

test_without_facts_denied if {
	count(rule.deny) == 1 with input as {"object": {"type": "Microsoft.KeyVault/vaults", "properties": {}}}
}
