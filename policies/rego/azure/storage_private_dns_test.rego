package stockade.azure.storage_private_dns_test

import data.stockade.azure.storage_private_dns as rule
import rego.v1

vnet := "/subscriptions/s/resourcegroups/rg/providers/microsoft.network/virtualnetworks/vnet-aks"

sa(found, unlinked, complete) := {
	"object": {"type": "Microsoft.Storage/storageAccounts", "kind": "StorageV2", "properties": {}},
	"facts": {"storage": {
		"privateEndpoints": {"blob": ["Approved"]},
		"dnsZones": {"blob": {"zone": "privatelink.blob.core.windows.net", "found": found, "unlinkedVnets": unlinked}},
		"clusterVnets": [vnet],
		"complete": complete,
	}},
}

test_linked_zone_allowed if {
	count(rule.deny) == 0 with input as sa(true, [], true)
}

test_unlinked_zone_denied if {
	denied := rule.deny with input as sa(true, [vnet], false)
	some v in denied
	v.details.vnets == [vnet]
}

test_missing_zone_denied_when_complete if {
	some v in rule.deny with input as sa(false, [vnet], true)
	contains(v.msg, "no private DNS zone privatelink.blob.core.windows.net")
}

test_missing_zone_not_reported_from_partial_files if {
	count(rule.deny) == 0 with input as sa(false, [vnet], false)
}

test_no_cluster_vnet_known if {
	i := json.patch(sa(false, [], true), [{"op": "replace", "path": "/facts/storage/clusterVnets", "value": []}])
	count(rule.deny) == 0 with input as i
}
