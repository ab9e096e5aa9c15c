package stockade.azure.storage_tls_test

import data.stockade.azure.storage_tls as rule
import rego.v1

sa(props) := {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": props}}

test_tls12_allowed if {
	count(rule.deny) == 0 with input as sa({"minimumTlsVersion": "TLS1_2"})
	count(rule.deny) == 0 with input as sa({"minimumTlsVersion": "TLS1_3"})
}

# Azure Storage has refused TLS 1.0 and 1.1 on every account since 3 February 2026: unset is TLS 1.2
test_unset_is_not_reported if {
	count(rule.deny) == 0 with input as sa({})
	count(rule.deny) == 0 with input as sa({"minimumTlsVersion": null})
}

test_an_older_setting_is_reported_as_a_setting if {
	some v in rule.deny with input as sa({"minimumTlsVersion": "TLS1_0"})
	v.details.minimumTlsVersion == "TLS1_0"
	startswith(v.msg, "storage account sets minimumTlsVersion TLS1_0, not TLS1_2: Azure Storage has refused")
	count(rule.deny) == 1 with input as sa({"minimumTlsVersion": "TLS1_1"})
}

test_an_unknown_setting_is_the_worst_case_and_says_so if {
	some v in rule.deny with input as sa({"minimumTlsVersion": "[unknown: set by an expression stockade cannot evaluate: parameters('tls'): no defaultValue and no value in a parameters file]"})
	contains(v.msg, "sets minimumTlsVersion (set by an expression stockade cannot evaluate: parameters('tls')")
}
