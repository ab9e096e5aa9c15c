package stockade.azure.acr_public_network_test

import data.stockade.azure.acr_public_network as rule
import rego.v1

res(props) := {"object": {"type": "Microsoft.ContainerRegistry/registries", "name": "x", "properties": props}}

test_disabled_allowed if {
	count(rule.deny) == 0 with input as res({"publicNetworkAccess": "Disabled"})
}

test_lower_case_disabled_allowed if {
	count(rule.deny) == 0 with input as res({"publicNetworkAccess": "disabled"})
}

test_deny_without_rules_allowed if {
	count(rule.deny) == 0 with input as res({"networkRuleSet": {"defaultAction": "Deny", "ipRules": []}})
}

test_unset_denied if {
	some v in rule.deny with input as res({})
	v.path == ["properties", "publicNetworkAccess"]
	v.details == {"publicNetworkAccess": "Enabled", "defaultAction": "Allow"}
}

test_enabled_allow_denied if {
	some v in rule.deny with input as res({"publicNetworkAccess": "Enabled", "networkRuleSet": {"defaultAction": "Allow"}})
	v.details.defaultAction == "Allow"
}

test_deny_with_ip_rules_denied if {
	some v in rule.deny with input as res({"publicNetworkAccess": "Enabled", "networkRuleSet": {"defaultAction": "Deny", "ipRules": [{"value": "203.0.113.7"}]}})
	v.path == ["properties", "networkRuleSet"]
	v.details.rules == 1
}
