package stockade.azure.storage_public_network_test

import data.stockade.azure.storage_public_network as rule
import rego.v1

sa(props) := {"object": {"type": "Microsoft.Storage/storageAccounts", "name": "st", "properties": props}}

test_disabled_allowed if {
	count(rule.deny) == 0 with input as sa({"publicNetworkAccess": "Disabled"})
}

test_deny_without_rules_allowed if {
	count(rule.deny) == 0 with input as sa({"networkAcls": {"defaultAction": "Deny", "ipRules": [], "virtualNetworkRules": []}})
}

test_unset_denied if {
	some v in rule.deny with input as sa({})
	v.path == ["properties", "publicNetworkAccess"]
	v.details.publicNetworkAccess == "Enabled"
}

test_deny_with_ip_rules_denied if {
	some v in rule.deny with input as sa({"publicNetworkAccess": "Enabled", "networkAcls": {"defaultAction": "Deny", "ipRules": [{"value": "1.2.3.4"}]}})
	v.path == ["properties", "networkAcls"]
}

test_an_unset_field_is_said_to_be_unset if {
	some v in rule.deny with input as {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": {}}}
	v.msg == "storage account allows public network access (publicNetworkAccess not set (Enabled), networkAcls.defaultAction not set (Allow))"
	some w in rule.deny with input as {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": {"publicNetworkAccess": "Enabled", "networkAcls": {"defaultAction": "Allow"}}}}
	w.msg == "storage account allows public network access (publicNetworkAccess Enabled, networkAcls.defaultAction Allow)"
}
