package stockade.azure.storage_shared_key_test

import data.stockade.azure.storage_shared_key as rule
import rego.v1

sa(props) := {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": props}}

test_false_allowed if {
	count(rule.deny) == 0 with input as sa({"allowSharedKeyAccess": false})
}

test_null_means_on if {
	count(rule.deny) == 1 with input as sa({"allowSharedKeyAccess": null})
	count(rule.deny) == 1 with input as sa({})
	count(rule.deny) == 1 with input as sa({"allowSharedKeyAccess": true})
}
