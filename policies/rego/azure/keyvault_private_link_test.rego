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

# a template's copy loop that may create the vault's endpoints was not read: never "(none)"
test_unread_endpoints_not_none if {
	inp := {
		"object": {"type": "Microsoft.KeyVault/vaults", "name": "x", "properties": {}},
		"facts": {"privateLink": {"statuses": ["Pending"], "endpointsUnknown": "the loop at line 9"}},
	}
	some v in rule.deny with input as inp
	v.msg == "key vault has no Approved private endpoint (Pending read; not judged: the loop at line 9)"
	some w in rule.deny with input as object.union(inp, {"facts": {"privateLink": {"statuses": []}}})
	w.msg == "key vault has no Approved private endpoint (none read; not judged: the loop at line 9)"
	count(rule.deny) == 0 with input as object.union(inp, {"facts": {"privateLink": {"statuses": ["Approved"]}}})
}
