package stockade.azure.aks_local_accounts_test

import data.stockade.azure.aks_local_accounts as rule
import rego.v1

aks(props) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": props}}

test_disabled_allowed if {
	count(rule.deny) == 0 with input as aks({"disableLocalAccounts": true})
}

test_enabled_denied if {
	count(rule.deny) == 1 with input as aks({})
	count(rule.deny) == 1 with input as aks({"disableLocalAccounts": false})
}
