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
