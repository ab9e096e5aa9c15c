package stockade.azure.storage_tls_test

import data.stockade.azure.storage_tls as rule
import rego.v1

sa(props) := {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": props}}

test_tls12_allowed if {
	count(rule.deny) == 0 with input as sa({"minimumTlsVersion": "TLS1_2"})
}

test_old_or_unset_denied if {
	count(rule.deny) == 1 with input as sa({"minimumTlsVersion": "TLS1_1"})
	some v in rule.deny with input as sa({})
	v.details.minimumTlsVersion == "TLS1_0"
}
