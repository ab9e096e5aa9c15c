package stockade.azure.storage_blob_public_access_test

import data.stockade.azure.storage_blob_public_access as rule
import rego.v1

sa(props) := {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": props}}

test_false_allowed if {
	count(rule.deny) == 0 with input as sa({"allowBlobPublicAccess": false})
}

test_true_and_unset_denied if {
	count(rule.deny) == 1 with input as sa({"allowBlobPublicAccess": true})
	count(rule.deny) == 1 with input as sa({"allowBlobPublicAccess": null})
	some v in rule.deny with input as sa({})
	v.path == ["properties", "allowBlobPublicAccess"]
}

api_sa(version, props) := {"object": {"type": "Microsoft.Storage/storageAccounts", "apiVersion": version, "properties": props}}

# Resource Manager creates an account with anonymous access disallowed from API version 2023-01-01
test_unset_follows_the_api_version if {
	count(rule.deny) == 0 with input as api_sa("2023-01-01", {})
	count(rule.deny) == 0 with input as api_sa("2025-06-01-preview", {"allowBlobPublicAccess": null})
	some v in rule.deny with input as api_sa("2022-09-01", {})
	v.msg == "storage account allows anonymous (public) blob access: allowBlobPublicAccess is not set (accounts created with API version 2022-09-01, before 2023-01-01, allow it)"
	count(rule.deny) == 1 with input as api_sa("2023-01-01", {"allowBlobPublicAccess": true})
	count(rule.deny) == 1 with input as api_sa("[unknown: set by an expression stockade cannot evaluate: x]", {})
}

test_messages_say_what_is_written if {
	some t in rule.deny with input as sa({"allowBlobPublicAccess": true})
	endswith(t.msg, "allowBlobPublicAccess is true")
	some u in rule.deny with input as sa({})
	endswith(u.msg, "allowBlobPublicAccess is not set (an account created before 2023 allows it)")
	some x in rule.deny with input as sa({"allowBlobPublicAccess": "[unknown: set by an expression stockade cannot evaluate: parameters('p'): no defaultValue and no value in a parameters file]"})
	contains(x.msg, "is not false (set by an expression stockade cannot evaluate: parameters('p')")
}
