package stockade.azure.acr_admin_user_test

import data.stockade.azure.acr_admin_user as rule
import rego.v1

acr(props) := {"object": {"type": "Microsoft.ContainerRegistry/registries", "name": "acr", "properties": props}}

test_disabled_allowed if {
	count(rule.deny) == 0 with input as acr({"adminUserEnabled": false})
	count(rule.deny) == 0 with input as acr({})
}

test_enabled_denied if {
	some v in rule.deny with input as acr({"adminUserEnabled": true})
	v.path == ["properties", "adminUserEnabled"]
}

test_unknown_is_the_worst_case_and_says_why if {
	some v in rule.deny with input as acr({"adminUserEnabled": "[unknown: set by an expression stockade cannot evaluate: reference()]"})
	contains(v.msg, "reference()")
}
