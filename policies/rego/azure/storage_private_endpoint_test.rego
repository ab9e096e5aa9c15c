package stockade.azure.storage_private_endpoint_test

import data.stockade.azure.storage_private_endpoint as rule
import rego.v1

sa(kind, props, endpoints) := {
	"object": {"type": "Microsoft.Storage/storageAccounts", "kind": kind, "properties": props},
	"facts": {"storage": {"privateEndpoints": endpoints}},
}

test_approved_blob_allowed if {
	count(rule.deny) == 0 with input as sa("StorageV2", {}, {"blob": ["Approved"]})
}

test_missing_blob_denied if {
	some v in rule.deny with input as sa("StorageV2", {}, {})
	v.details == {"subresource": "blob", "statuses": []}
	contains(v.msg, "for blob (none)")
}

test_pending_denied if {
	some v in rule.deny with input as sa("StorageV2", {}, {"blob": ["Pending"]})
	contains(v.msg, "(Pending)")
}

test_hns_needs_dfs if {
	some v in rule.deny with input as sa("StorageV2", {"isHnsEnabled": true}, {"blob": ["Approved"]})
	v.details.subresource == "dfs"
}

test_used_subresources_need_approval if {
	some v in rule.deny with input as sa("StorageV2", {}, {"blob": ["Approved"], "file": ["Rejected"]})
	v.details.subresource == "file"
}

test_file_storage_needs_file if {
	count(rule.deny) == 0 with input as sa("FileStorage", {}, {"file": ["Approved"]})
	some v in rule.deny with input as sa("FileStorage", {}, {})
	v.details.subresource == "file"
}

test_configured_subresources if {
	count(rule.deny) == 2 with input as sa("StorageV2", {}, {}) with data.stockade.config.storage.required_subresources as ["blob", "queue"]
}

test_unread_endpoints_not_none if {
	inp := object.union(sa("StorageV2", {}, {}), {"facts": {"storage": {"endpointsUnknown": "the loop at line 9"}}})
	some v in rule.deny with input as inp
	v.msg == "storage account has no Approved private endpoint for blob (none read; not judged: the loop at line 9)"
}
