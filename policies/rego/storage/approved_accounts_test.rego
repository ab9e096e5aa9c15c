package stockade.storage.approved_accounts_test

import data.stockade.storage.approved_accounts
import rego.v1

approved := ["stmlprod*", "stcheckpoints"]

deny(obj) := d if {
	d := approved_accounts.deny with input as {"object": obj}
		with data.stockade.config.storage.approved_accounts as approved
}

sc(params) := {"kind": "StorageClass", "provisioner": "blob.csi.azure.com", "parameters": params}

pv(csi) := {"kind": "PersistentVolume", "spec": {"csi": object.union({"driver": "file.csi.azure.com"}, csi)}}

test_approved_storage_class_allowed if {
	count(deny(sc({"storageAccount": "stmlprodeastus"}))) == 0
	count(deny(sc({"STORAGEACCOUNT": "stcheckpoints"}))) == 0
}

test_storage_class_without_account_denied if {
	some v in deny(sc({"skuName": "Premium_LRS"}))
	v.path == ["parameters"]
	contains(v.msg, "names no storageAccount")
}

test_storage_class_with_other_account_denied if {
	some v in deny(sc({"storageaccount": "stpersonal"}))
	v.path == ["parameters", "storageaccount"]
	v.details.account == "stpersonal"
}

test_nothing_approved_by_default if {
	count(approved_accounts.deny) == 1 with input as {"object": sc({"storageAccount": "stmlprodeastus"})}
}

test_pv_attribute_approved if {
	count(deny(pv({"volumeAttributes": {"storageAccount": "stcheckpoints"}}))) == 0
}

test_pv_attribute_denied if {
	some v in deny(pv({"volumeAttributes": {"storageaccount": "stother"}, "volumeHandle": "rg#stcheckpoints#share"}))
	v.path == ["spec", "csi", "volumeAttributes", "storageaccount"]
	v.details.account == "stother"
}

test_pv_volume_handle_used_when_no_attribute if {
	count(deny(pv({"volumeHandle": "rg-ml#stmlprod01#checkpoints#uuid"}))) == 0
	some v in deny(pv({"volumeHandle": "rg-ml#stpersonal#checkpoints"}))
	v.path == ["spec", "csi", "volumeHandle"]
}

test_pv_without_account_denied if {
	some v in deny(pv({"volumeHandle": "my-unique-volume-id", "volumeAttributes": {"shareName": "data"}}))
	v.path == ["spec", "csi"]
	contains(v.msg, "does not name its storage account")
}

test_other_drivers_ignored if {
	count(deny({"kind": "PersistentVolume", "spec": {"csi": {"driver": "disk.csi.azure.com"}}})) == 0
	count(deny({"kind": "PersistentVolume", "spec": {"nfs": {"server": "x"}}})) == 0
	count(deny({"kind": "StorageClass", "provisioner": "disk.csi.azure.com"})) == 0
}
